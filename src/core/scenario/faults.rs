//! The scenario's faults ([`Scenario::faults`]): the views the words and the JSON read
//! (when the lock server crashes, who is cut off), the edits that change them, and their
//! bounds.

use super::*;

impl Scenario {
    /// The lock server's failover or restart, if it has one: when, and the fault.
    pub fn crash(&self) -> Option<(Millis, Fault)> {
        self.faults
            .iter()
            .find(|f| f.fault.is_crash())
            .map(|f| (f.at, f.fault))
    }

    /// When the lock server fails over or restarts.
    pub fn failover_at(&self) -> Option<Millis> {
        self.crash().map(|(at, _)| at)
    }

    /// How far the promoted replica (or a restart's snapshot) lags: it has every write made
    /// at least this long before the crash. `None`: none of the run's.
    pub fn replication_lag(&self) -> Option<Millis> {
        self.crash().and_then(|(_, f)| f.lag())
    }

    /// Whether the crash is the lock's one Redis restarting, not a replica promoted.
    pub fn restart(&self) -> bool {
        matches!(self.crash(), Some((_, Fault::Restart { .. })))
    }

    /// Storage's failover to its asynchronous standby, if it has one: when, and the
    /// standby's lag.
    pub fn storage_crash(&self) -> Option<(Millis, Millis)> {
        self.faults.iter().find_map(|f| match f.fault {
            Fault::StorageFailover { lag } => Some((f.at, lag)),
            _ => None,
        })
    }

    /// The client cut off from the lock service, if one is.
    pub fn partitioned(&self) -> Option<Partition> {
        self.faults.iter().find_map(partition_of)
    }

    /// Whether the partition cuts the client's lock-service member off from the majority of a
    /// 3-member Raft cluster (a minority of one), not the client itself: the model is the same
    /// dropped commands; only the words differ.
    pub fn minority(&self) -> bool {
        self.faults.iter().any(|f| f.fault.minority())
    }

    /// The lock-node clock jumps: when, which node, by how much.
    pub fn clock_jumps(&self) -> impl Iterator<Item = (Millis, usize, Millis)> + '_ {
        self.faults.iter().filter_map(|f| match f.fault {
            Fault::ClockJump { node, by } => Some((f.at, node, by)),
            _ => None,
        })
    }

    /// The node whose clock jumps (every jump steps the same one; 0 with none).
    pub fn jumping_node(&self) -> usize {
        self.clock_jumps().next().map_or(0, |(_, node, _)| node)
    }

    /// Moves the failover or restart to `at`, or takes it away (`None`). With none, one is
    /// added: `like` (a restart, a lag) if given, else a replica promoted with none of the
    /// run's writes.
    pub fn set_crash_at(&mut self, at: Option<Millis>, like: Option<Fault>) {
        let crash = self.crash().map(|(_, f)| f).or(like);
        self.faults.retain(|f| !f.fault.is_crash());
        if let Some(at) = at {
            self.add_fault(at, crash.unwrap_or(Fault::Failover { lag: None }));
        }
    }

    /// The failover's (or restart's) lag; with neither, there is no replica to lag.
    pub fn set_crash_lag(&mut self, lag: Option<Millis>) {
        for f in self.faults.iter_mut().filter(|f| f.fault.is_crash()) {
            f.fault = f.fault.with_lag(lag);
        }
    }

    /// Client `actor` cut off from the lock service over `span` (`member`: its lock-service
    /// member cut off from the majority), in place of any client cut off before; or, with
    /// `None`, no longer cut off.
    pub fn set_partition(&mut self, actor: usize, span: Option<(Millis, Millis)>, member: bool) {
        let cut = |f: &FaultAt| partition_of(f).map(|p| p.actor);
        match span {
            Some((start, end)) => {
                self.faults.retain(|f| cut(f).is_none());
                let node = match member {
                    true => Node::MemberOf(actor),
                    false => Node::Client(actor),
                };
                let f = FaultAt::cut_from_lock(node, start, end);
                self.add_fault(f.at, f.fault);
            }
            None => self.faults.retain(|f| cut(f) != Some(actor)),
        }
    }

    /// Adds a fault, keeping the list in time order (after those at the same time).
    pub fn add_fault(&mut self, at: Millis, fault: Fault) {
        let i = self.faults.partition_point(|f| f.at <= at);
        self.faults.insert(i, FaultAt { at, fault });
    }

    /// The faults' bounds, and what the JSON and the replay hold: each number inside the
    /// range its kind's row declares ([`Range`](crate::core::fault::Range)), at most one of a
    /// kind that says so ([`Shape::once`](crate::core::fault::Shape::once): a failover or
    /// restart, a partition, a storage failover), a partition that cuts a client (or the
    /// member it talks to) off from the lock service, and clock jumps that all step one node
    /// of the lock.
    pub(super) fn validate_faults(&self) -> Result<(), ScenarioError> {
        in_range("faults", self.faults.len() as u64, 0, MAX_STEPS as u64)?;
        let nodes = self.lock.redlock().map_or(1, |r| r.nodes);
        let mut jumping = None;
        let mut once: Vec<&'static str> = Vec::new();
        for f in &self.faults {
            let shape = f.fault.shape();
            for v in shape.values(f) {
                if let (Some(r), Some(n)) = (v.range, v.value.ms()) {
                    in_range(r.what, n, r.least, r.most)?;
                }
            }
            if let Some(rule) = shape.once {
                if once.contains(&rule) {
                    return Err(ScenarioError::BadFault(rule));
                }
                once.push(rule);
            }
            match f.fault {
                Fault::ClockJump { node, .. } => {
                    in_range("redlock node", node as u64, 0, nodes as u64 - 1)?;
                    if *jumping.get_or_insert(node) != node {
                        return Err(ScenarioError::BadFault("clock jumps step one node"));
                    }
                }
                Fault::Partition { until, .. } => self.validate_partition(f, until)?,
                _ => {}
            }
        }
        Ok(())
    }

    /// A partition cuts one of the run's clients, or the member it talks to, off from the
    /// lock service, and ends after it starts.
    fn validate_partition(&self, f: &FaultAt, until: Millis) -> Result<(), ScenarioError> {
        let Some(p) = partition_of(f) else {
            return Err(ScenarioError::BadPartition(
                "must cut a client, or the member it talks to, off from the lock service"
                    .to_owned(),
            ));
        };
        if p.actor >= self.actors.len() {
            return Err(ScenarioError::BadPartition(format!(
                "names client {}, but there are only {}",
                p.actor + 1,
                self.actors.len()
            )));
        }
        if until <= f.at {
            return Err(ScenarioError::BadPartition(format!(
                "must end after it starts (from t={} to t={until})",
                f.at
            )));
        }
        Ok(())
    }
}

/// The client-to-lock-service partition `f` is, if it is one.
fn partition_of(f: &FaultAt) -> Option<Partition> {
    let Fault::Partition { a, b, until } = f.fault else {
        return None;
    };
    let (start, end) = (f.at, until);
    match (a, b) {
        (Node::Client(actor) | Node::MemberOf(actor), Node::LockService)
        | (Node::LockService, Node::Client(actor) | Node::MemberOf(actor)) => {
            Some(Partition { actor, start, end })
        }
        _ => None,
    }
}
