//! Facts first: one typed [`StepFacts`] per step, read off the trace in a single forward
//! pass, so a sentence renders what the step recorded instead of searching earlier events.
//!
//! The lock's value and the fencing token are two things. `SET key val NX PX ttl` stores a
//! random owner value (a UUID in production); compare-and-delete and the ownership check of
//! an extend compare that value, never the token. The token comes from a counter (or from
//! nowhere, with Redlock). Only with [`TokenSource::RandomValue`] is the value also the token.

use super::*;

/// One lease as the words name it: whose, its lock value and its token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseFacts {
    pub owner: String,
    /// The random owner value the client SET (`"rnd-A"`, `"rnd-A2"` for A's second grant),
    /// or the value itself where the value is the token (uuid-token).
    pub value: String,
    /// The lease's fencing token; `None` where the lease has none of its own (a separate
    /// counter hands the token out later, not with the lease).
    pub token: Option<Fence>,
}

/// What one step is about, as data.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StepFacts {
    /// Who acted (`None` for the setup step and the lock server's own events).
    pub actor: Option<String>,
    /// The lease the step acts on or names (granted, released, extended, read, deleted,
    /// expired), if any.
    pub lease: Option<LeaseFacts>,
    /// The actor's own current lease, where the step names another's (a release that finds
    /// someone else's value, a GET that sees another owner).
    pub own: Option<LeaseFacts>,
    /// The highest token storage had accepted before this step.
    pub storage_seen: Option<Fence>,
    /// Why a lease ended at this step.
    pub lease_ended: Option<ExpiryCause>,
    /// Who believes they hold the lock after this step.
    pub believers: Vec<String>,
    /// The latest grant before this step: to whom, with which token.
    pub prior_grant: Option<(String, Fence)>,
    /// Whether a handoff barrier was accepted before this step.
    pub barrier_set: bool,
    /// Whether this step's outside call was made before (the same call, a second time).
    pub side_effect_again: bool,
    /// Whose lease or transaction ended last before this step (by release or expiry).
    pub last_ended: Option<String>,
    /// How many writes had reached storage before this step (a prefix of [`Facts::writes`]).
    pub writes_before: usize,
    /// Each client's history before this step, in the scenario's actor order.
    pub clients: Vec<ClientFacts>,
}

/// What one client's history amounts to before a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClientFacts {
    /// When it was last granted the lock.
    pub granted_at: Option<Millis>,
    /// When its lease last began or was renewed, on the lock server's clock.
    pub renewed_at: Option<Millis>,
    /// The renewal it sent and still waits on: when it was sent, and when its client's
    /// timeout gives up on it (`None`: no timeout).
    pub renewal_waiting: Option<(Millis, Option<Millis>)>,
    /// When the server last terminated its session (an idle timeout).
    pub session_ended_at: Option<Millis>,
    /// When it last started waiting in the lock's queue since its last grant.
    pub waiting_since: Option<Millis>,
    /// Whether it ever waited in the lock's queue.
    pub has_waited: bool,
    /// Whether it is frozen in a pause.
    pub paused: bool,
    /// Whether a write of its own was accepted since its last grant.
    pub wrote_since_grant: bool,
}

/// The facts of a whole trace: one [`StepFacts`] per step (index 0 is the setup, `i + 1` is
/// event `i`) and the writes that reached storage, in order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Facts {
    pub steps: Vec<StepFacts>,
    /// The indices of the events where a write reached storage (accepted or refused).
    pub writes: Vec<usize>,
}

/// The lock value a client SETs for its `nth` grant (0-based).
fn owner_value(sc: &Scenario, owner: &str, nth: usize, fence: Fence) -> String {
    match (sc.lock.token_source(), nth) {
        (TokenSource::RandomValue, _) => fence.to_string(),
        (_, 0) => format!("rnd-{owner}"),
        (_, n) => format!("rnd-{owner}{}", n + 1),
    }
}

/// The facts of `t`, read off in one forward pass.
pub fn facts(t: &Trace) -> Facts {
    let sc = &t.scenario;
    let mut grants: Vec<(String, usize)> = Vec::new();
    let mut current: Vec<LeaseFacts> = Vec::new();
    let mut seen: Option<Fence> = None;
    let mut clients = vec![ClientFacts::default(); sc.actors.len()];
    let mut prior_grant: Option<(String, Fence)> = None;
    let mut barrier_set = false;
    let mut calls: Vec<&str> = Vec::new();
    let mut last_ended: Option<String> = None;
    let mut writes = Vec::new();
    let mut out = vec![StepFacts {
        believers: t.initial.believers.clone(),
        clients: clients.clone(),
        ..StepFacts::default()
    }];
    let own_token =
        |fence: Fence| (sc.lock.token_source() != TokenSource::SeparateCounter).then_some(fence);
    let slot = |name: &str| sc.actors.iter().position(|a| a.name == name);
    for (i, e) in t.events.iter().enumerate() {
        let actor = e.actor.clone();
        let name = actor.clone().unwrap_or_default();
        let find = |current: &[LeaseFacts], owner: &str| {
            current.iter().find(|l| l.owner == owner).cloned()
        };
        let mut f = StepFacts {
            actor: actor.clone(),
            storage_seen: seen,
            believers: e.snapshot.believers.clone(),
            prior_grant: prior_grant.clone(),
            barrier_set,
            last_ended: last_ended.clone(),
            writes_before: writes.len(),
            clients: clients.clone(),
            ..StepFacts::default()
        };
        match &e.kind {
            EventKind::Acquired { fence, .. } => {
                let nth = match grants.iter_mut().find(|(o, _)| *o == name) {
                    Some((_, n)) => {
                        *n += 1;
                        *n - 1
                    }
                    None => {
                        grants.push((name.clone(), 1));
                        0
                    }
                };
                let lease = LeaseFacts {
                    owner: name.clone(),
                    value: owner_value(sc, &name, nth, *fence),
                    token: own_token(*fence),
                };
                current.retain(|l| l.owner != name);
                current.push(lease.clone());
                f.lease = Some(lease);
            }
            EventKind::Released { .. } | EventKind::Extended { .. } => {
                f.lease = find(&current, &name);
            }
            EventKind::ReleaseNoop {
                reason: NoopReason::OtherHolder { owner, .. },
                ..
            }
            | EventKind::LockValueRead {
                owner: Some(owner), ..
            }
            | EventKind::DeletedOthersLease { owner, .. } => {
                f.lease = find(&current, owner);
                f.own = find(&current, &name);
            }
            EventKind::ReleaseNoop { .. } | EventKind::LockValueRead { .. } => {
                f.own = find(&current, &name);
            }
            EventKind::LeaseExpired { owner, cause, .. } => {
                f.lease = find(&current, owner);
                f.lease_ended = Some(*cause);
            }
            EventKind::SideEffect { what, .. } => {
                f.side_effect_again = calls.contains(&what.as_str());
                calls.push(what);
            }
            _ => {}
        }
        if let EventKind::WriteApplied {
            result: Ok(_),
            fence: Some(w),
            ..
        } = &e.kind
        {
            seen = seen.max(Some(*w));
        }
        if matches!(e.kind, EventKind::WriteApplied { .. }) {
            writes.push(i);
        }
        match &e.kind {
            EventKind::Acquired { fence, .. } => prior_grant = Some((name.clone(), *fence)),
            EventKind::BarrierSet { result: Ok(()), .. } => barrier_set = true,
            EventKind::Released { .. } if actor.is_some() => last_ended = actor.clone(),
            EventKind::LeaseExpired { owner, .. } => last_ended = Some(owner.clone()),
            _ => {}
        }
        if let EventKind::LeaseExpired {
            owner,
            cause: ExpiryCause::IdleTimeout,
            ..
        } = &e.kind
        {
            if let Some(c) = slot(owner).and_then(|k| clients.get_mut(k)) {
                c.session_ended_at = Some(e.at);
            }
        }
        if let Some(c) = slot(&name).and_then(|k| clients.get_mut(k)) {
            c.learn(e);
        }
        out.push(f);
    }
    Facts { steps: out, writes }
}

impl ClientFacts {
    /// What event `e`, this client's own, adds to its history.
    fn learn(&mut self, e: &TraceEvent) {
        match &e.kind {
            EventKind::Acquired { .. } => {
                self.granted_at = Some(e.at);
                self.renewed_at = Some(e.at);
                self.waiting_since = None;
                self.wrote_since_grant = false;
            }
            EventKind::Extended { .. } => self.renewed_at = Some(e.at),
            EventKind::LockUnanswered {
                command: LockCommand::Renew,
                timeout_at,
            } => self.renewal_waiting = Some((e.at, *timeout_at)),
            EventKind::LockTimedOut {
                command: LockCommand::Renew,
                ..
            } => self.renewal_waiting = None,
            EventKind::LockWait { .. } => {
                self.waiting_since = Some(e.at);
                self.has_waited = true;
            }
            EventKind::PauseStarted { .. } => self.paused = true,
            EventKind::PauseEnded { .. } => self.paused = false,
            EventKind::WriteApplied { result: Ok(_), .. } => self.wrote_since_grant = true,
            _ => {}
        }
    }
}

/// A lease named by both its fields: "value rnd-A, token 33"; "value rnd-A" where the lease
/// has no token of its own; "value 842162, also its token" where the value is the token.
pub fn lease_fields(sc: &Scenario, l: &LeaseFacts) -> String {
    match (sc.lock.token_source(), l.token) {
        (TokenSource::RandomValue, _) => format!("value {}, also its token", l.value),
        (_, Some(tok)) => format!("value {}, token {tok}", l.value),
        (_, None) => format!("value {}", l.value),
    }
}

/// " (token 33)" after a lease's name, or nothing where the lease has no token of its own
/// (a separate counter: the lease's number is not its token).
pub fn lease_token(sc: &Scenario, fence: Fence) -> String {
    match sc.lock.token_source() {
        TokenSource::SeparateCounter => String::new(),
        _ => format!(" (token {fence})"),
    }
}
