//! A trace recorded on real servers, in the same schema as the engine's. The replay harness
//! observes what each client did and what each server answered (a grant and its PX, a
//! storage reply, a GET); [`recorded`] turns those observations into a [`Trace`], filling in
//! what no client saw: the state of the world after each event, a lease's expiry at the end
//! of the TTL it was granted with, and the facts the verdicts are read from.

use super::audit;
use super::clock::Millis;
use super::lease::{Fence, Lease};
use super::ledger::{Account, FencingPolicy, WriteError, WriteRecord, WriteRequest};
use super::scenario::{ReleaseMode, Scenario, TokenSource};
use super::trace::{
    Awareness, EventKind, ExpiryCause, Grant, Lane, LockCommand, NoopReason, Recording, Shortened,
    Snapshot, Trace, TraceEvent,
};

/// One thing a client saw, or the harness did (a pause, a failover, a clock step), at
/// scenario time `at`. Fields no client can see (a refusal's holder, a noop's reason, a
/// write's `superseded_by` and `highest_accepted`, …) are filled in by [`recorded`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    pub at: Millis,
    /// The actor's index in the scenario; `None` for the harness's own faults.
    pub actor: Option<usize>,
    pub kind: EventKind,
    /// For a write that reached storage: the request as sent (its row in the write log).
    pub request: Option<WriteRequest>,
}

/// What the fold knows of the world between two observations.
struct World<'a> {
    sc: &'a Scenario,
    /// Live leases on the lock service, oldest first (two only when it granted twice).
    leases: Vec<Lease>,
    /// Redlock: for each lease, its key's expiry on each node that answered OK (a lease
    /// lives while a majority of its keys do).
    keys: Vec<Vec<(usize, Millis)>>,
    /// Leases a failed primary lost, still within their TTL.
    lost: Vec<Lease>,
    jumped: Vec<Fence>,
    /// The last lease that ran out rather than being released: with a lock-delay it keeps
    /// the lock from everyone for that long after.
    lapsed: Option<Lease>,
    /// Grants in order, with when they were made.
    grants: Vec<(Millis, Grant)>,
    believes: Vec<bool>,
    paused: Vec<bool>,
    /// When each actor's own lease ended, if it did.
    ended: Vec<Option<Millis>>,
    account: Account,
    highest_accepted: Option<Fence>,
    events: Vec<TraceEvent>,
    writes: Vec<WriteRecord>,
}

impl World<'_> {
    fn snapshot(&self, at: Millis) -> Snapshot {
        let live = |l: &&Lease| l.is_live(at);
        let mut leases: Vec<Lease> = self.leases.iter().filter(live).cloned().collect();
        Snapshot {
            at,
            holder: leases.pop(),
            balance: self.account.balance,
            last_fence: self.account.last_fence,
            last_write_fence: self.account.last_write_fence,
            result: self.account.result.clone(),
            believers: self
                .sc
                .actors
                .iter()
                .zip(&self.believes)
                .filter(|(_, b)| **b)
                .map(|(a, _)| a.name.clone())
                .collect(),
            lost_leases: self.lost.iter().filter(live).cloned().collect(),
            other_holders: leases,
        }
    }

    fn push(&mut self, at: Millis, actor: Option<usize>, lane: Lane, kind: EventKind) {
        let snapshot = self.snapshot(at);
        self.events.push(TraceEvent {
            at,
            actor: actor
                .and_then(|i| self.sc.actors.get(i))
                .map(|a| a.name.clone()),
            lane,
            kind,
            snapshot,
        });
    }

    fn index(&self, name: &str) -> Option<usize> {
        self.sc.actors.iter().position(|a| a.name == name)
    }

    fn awareness(&self, owner: &str) -> Awareness {
        match self.index(owner) {
            Some(i) if self.believes[i] && self.paused[i] => Awareness::Paused,
            Some(i) if self.believes[i] => Awareness::Unaware,
            _ => Awareness::Knows,
        }
    }

    /// Ends every lease whose TTL ran out by `now`, in the order they ran out.
    fn expire_until(&mut self, now: Millis) {
        loop {
            let due = |ls: &[Lease]| {
                ls.iter()
                    .enumerate()
                    .filter(|(_, l)| l.expires_at <= now)
                    .min_by_key(|(_, l)| l.expires_at)
                    .map(|(i, l)| (i, l.expires_at))
            };
            // The live lease due first (a lost one only if it is due strictly earlier).
            let (lease, at, cause) = match (due(&self.leases), due(&self.lost)) {
                (Some((i, a)), lost) if lost.is_none_or(|(_, b)| a <= b) => {
                    let l = self.take(i);
                    let cause = if self.sc.lock.row().is_some() {
                        ExpiryCause::IdleTimeout
                    } else if self.jumped.contains(&l.fence) {
                        ExpiryCause::ClockJump
                    } else {
                        ExpiryCause::Ttl
                    };
                    (l, a, cause)
                }
                (_, Some((j, b))) => (self.lost.remove(j), b, ExpiryCause::LostInFailover),
                (_, None) => return,
            };
            if cause != ExpiryCause::LostInFailover {
                if let Some(i) = self.index(&lease.owner) {
                    self.ended[i] = Some(at);
                }
                self.lapsed = Some(Lease {
                    expires_at: at,
                    ..lease.clone()
                });
            }
            let owner_knew = self.awareness(&lease.owner);
            let kind = EventKind::LeaseExpired {
                owner: lease.owner,
                fence: lease.fence,
                cause,
                owner_knew,
            };
            self.push(at, None, Lane::Lease, kind);
        }
    }

    fn take(&mut self, i: usize) -> Lease {
        self.keys.remove(i);
        self.leases.remove(i)
    }

    /// Row lock: a statement of `owner`'s transaction finished at `at`, so its session's idle
    /// clock starts again (the server's timer, which no client sees: derived here).
    fn touch(&mut self, at: Millis, owner: &str) {
        let Some(ttl) = self.sc.idle_timeout() else {
            return;
        };
        if let Some(l) = self
            .leases
            .iter_mut()
            .rfind(|l| l.owner == owner && l.is_live(at))
        {
            l.expires_at = at.saturating_add(ttl);
        }
    }

    fn remove_lease(&mut self, owner: &str) -> Option<Lease> {
        let i = self.leases.iter().rposition(|l| l.owner == owner)?;
        Some(self.take(i))
    }

    /// Redlock: when lease `i` ends, the majority-th latest of its keys' expiries.
    fn quorum_expiry(&self, i: usize) -> Option<Millis> {
        let majority = self.sc.lock.redlock()?.nodes / 2 + 1;
        let mut ends: Vec<Millis> = self.keys[i].iter().map(|(_, e)| *e).collect();
        ends.sort_unstable_by(|a, b| b.cmp(a));
        ends.get(majority - 1).copied()
    }

    fn observe(&mut self, o: Observation) {
        let at = o.at;
        self.expire_until(at);
        let me = o.actor;
        let name = me
            .and_then(|i| self.sc.actors.get(i))
            .map(|a| a.name.clone())
            .unwrap_or_default();
        let mut lane = me.map_or(Lane::Lease, Lane::Actor);
        let mut kind = o.kind;
        let set = |v: &mut Vec<bool>, i: Option<usize>, b: bool| {
            if let Some(x) = i.and_then(|i| v.get_mut(i)) {
                *x = b;
            }
        };
        match &mut kind {
            EventKind::Acquired {
                fence,
                expires_at,
                nodes,
                ..
            } => {
                self.lapsed = None;
                self.keys
                    .push(nodes.iter().map(|n| (*n, *expires_at)).collect());
                self.leases.push(Lease {
                    owner: name.clone(),
                    fence: *fence,
                    expires_at: *expires_at,
                });
                self.grants.push((
                    at,
                    Grant {
                        owner: name.clone(),
                        fence: *fence,
                    },
                ));
                set(&mut self.believes, me, true);
                if let Some(i) = me {
                    self.ended[i] = None;
                }
            }
            EventKind::AcquireRefused { holder, until, .. } if holder.is_empty() => {
                if let Some(l) = self.leases.iter().find(|l| l.is_live(at)) {
                    holder.clone_from(&l.owner);
                    *until = l.expires_at;
                } else if let Some(l) = self
                    .lapsed
                    .as_ref()
                    .filter(|_| self.sc.lock.redlock().is_none())
                {
                    let delay_ends = l.expires_at.saturating_add(self.sc.lock.lock_delay());
                    if at < delay_ends {
                        holder.clone_from(&l.owner);
                        *until = delay_ends;
                    }
                }
            }
            EventKind::LockWait { holder } if holder.is_empty() => {
                if let Some(l) = self.leases.iter().find(|l| l.is_live(at)) {
                    holder.clone_from(&l.owner);
                }
            }
            EventKind::JobChecked { .. } if self.sc.lock.row().is_some() => self.touch(at, &name),
            EventKind::ConnectionLost => set(&mut self.believes, me, false),
            EventKind::PauseStarted { .. } => set(&mut self.paused, me, true),
            EventKind::PauseEnded { lease_gone } => {
                set(&mut self.paused, me, false);
                let believes = me.is_some_and(|i| self.believes[i]);
                *lease_gone = believes && !self.leases.iter().any(|l| l.owner == name);
            }
            EventKind::GaveUp | EventKind::ReleaseNoop { .. } | EventKind::Released { .. } => {
                set(&mut self.believes, me, false);
                match &mut kind {
                    EventKind::Released { fence, .. } => {
                        if let Some(l) = self.remove_lease(&name) {
                            *fence = l.fence;
                        }
                    }
                    EventKind::ReleaseNoop { reason, via, .. } => {
                        *reason = match self.leases.iter().find(|l| l.is_live(at)) {
                            Some(l) if *via == ReleaseMode::CompareAndDelete => {
                                NoopReason::OtherHolder {
                                    owner: l.owner.clone(),
                                    fence: l.fence,
                                }
                            }
                            _ if self.grants.iter().all(|(_, g)| g.owner != name) => {
                                NoopReason::NeverHeld
                            }
                            _ if self.lost.iter().any(|l| l.owner == name) => NoopReason::Lost,
                            _ => NoopReason::Expired,
                        };
                    }
                    _ => {}
                }
            }
            EventKind::LockValueRead { owner, fence } => {
                *fence = owner
                    .as_ref()
                    .and_then(|w| self.leases.iter().find(|l| l.owner == *w))
                    .map(|l| l.fence);
                if owner.as_deref() != Some(name.as_str()) {
                    set(&mut self.believes, me, false);
                }
            }
            EventKind::DeletedOthersLease { owner, fence } => {
                set(&mut self.believes, me, false);
                if let Some(l) = self.remove_lease(owner) {
                    *fence = l.fence;
                    if let Some(i) = self.index(owner) {
                        self.ended[i] = Some(at);
                    }
                }
            }
            EventKind::Extended {
                fence, expires_at, ..
            } => {
                let _ = fence; // the actor's token, which a separate counter makes not the lease's
                if let Some(i) = self.leases.iter().rposition(|l| l.owner == name) {
                    self.leases[i].expires_at = *expires_at;
                    for k in &mut self.keys[i] {
                        k.1 = *expires_at;
                    }
                }
            }
            EventKind::ExtendFailed { lease_ended_at, .. } => {
                set(&mut self.believes, me, false);
                *lease_ended_at = me.and_then(|i| self.ended[i]);
            }
            EventKind::LockTimedOut {
                command,
                cancelled,
                lease_ended_at,
                ..
            } => {
                if *cancelled || *command == LockCommand::Release {
                    set(&mut self.believes, me, false);
                }
                *lease_ended_at = me.and_then(|i| self.ended[i]);
            }
            EventKind::Failover {
                lost,
                next_fence,
                rolled_back,
            } => {
                // Which live keys the promoted replica lacked is seen (a GET on each side
                // before the promotion), by owner; the leases themselves are the fold's.
                let owners: Vec<String> = lost.drain(..).map(|l| l.owner).collect();
                for owner in owners {
                    if let Some(l) = self.remove_lease(&owner) {
                        lost.push(l);
                    }
                }
                if !lost.is_empty() {
                    self.lapsed = None;
                }
                for l in lost.iter() {
                    if let Some(i) = self.index(&l.owner) {
                        self.ended[i] = Some(at);
                    }
                }
                self.lost.extend(lost.iter().cloned());
                // Random values have no counter to roll back (nor an order to go back in).
                *rolled_back = self.sc.lock.token_source() != TokenSource::RandomValue
                    && self.grants.iter().any(|(_, g)| *next_fence <= g.fence);
            }
            EventKind::LockClockJumped { by, shortened } => {
                // One lock node's clock steps: its keys' PX runs out `by` sooner. Under
                // Redlock a lease lives on while a majority of its keys do.
                let node = self.sc.jumping_node();
                let holder = self.leases.iter().rposition(|l| l.is_live(at));
                for i in 0..self.leases.len() {
                    if !self.leases[i].is_live(at) {
                        continue;
                    }
                    let ends_at = if self.sc.lock.redlock().is_some() {
                        for k in self.keys[i].iter_mut().filter(|k| k.0 == node) {
                            k.1 = k.1.saturating_sub(*by).max(at);
                        }
                        self.quorum_expiry(i).unwrap_or(at)
                    } else {
                        self.leases[i].expires_at.saturating_sub(*by).max(at)
                    };
                    let l = &mut self.leases[i];
                    if ends_at != l.expires_at && Some(i) == holder {
                        *shortened = Some(Shortened {
                            owner: l.owner.clone(),
                            fence: l.fence,
                            granted_until: l.expires_at,
                            ends_at,
                        });
                        self.jumped.push(l.fence);
                    }
                    l.expires_at = ends_at;
                }
            }
            EventKind::WriteApplied {
                fence,
                sent_at,
                result,
                superseded_by,
                highest_accepted,
                publish,
                ..
            } => {
                lane = Lane::Storage;
                let own = fence.and(
                    self.grants
                        .iter()
                        .rposition(|(t, g)| g.owner == name && *t <= *sent_at),
                );
                *superseded_by = own
                    .and_then(|i| self.grants.get(i + 1..))
                    .and_then(|later| later.last())
                    .map(|(_, g)| g.clone());
                *highest_accepted = self.highest_accepted;
                match result {
                    Err(WriteError::StaleFence { last, .. }) => {
                        *last = self.account.last_fence.unwrap_or(Fence(0));
                    }
                    // What the lock service answered the sequencer check with: the live lease.
                    Err(WriteError::StaleSequencer { live, .. }) => {
                        *live = self.leases.iter().rfind(|l| l.is_live(at)).map(|l| l.fence);
                    }
                    _ => {}
                }
                if let (Ok(balance), Some(_)) = (&mut *result, publish.as_ref()) {
                    *balance = self.account.balance; // a publish leaves the balance be
                }
                if self.sc.lock.row().is_some() {
                    match result {
                        Ok(_) => self.touch(at, &name),
                        // The client got the FATAL: it stops believing, and stops.
                        Err(_) => set(&mut self.believes, me, false),
                    }
                }
                if let Ok(balance) = result {
                    self.highest_accepted = self.highest_accepted.max(*fence);
                    self.account.balance = *balance;
                    self.account.last_write_fence = *fence;
                    if self.sc.policy != FencingPolicy::Off {
                        self.account.last_fence = self.account.last_fence.max(*fence);
                    }
                    if publish.is_some() {
                        self.account.result.clone_from(publish);
                    }
                }
                if let Some(request) = o.request {
                    self.writes.push(WriteRecord {
                        at,
                        request,
                        result: result.clone().map(|_| ()),
                        balance_after: self.account.balance,
                    });
                }
            }
            EventKind::BarrierSet { fence, result } => {
                lane = Lane::Storage;
                if result.is_ok() && self.sc.policy != FencingPolicy::Off {
                    self.account.last_fence = self.account.last_fence.max(Some(*fence));
                }
            }
            _ => {}
        }
        self.push(at, me, lane, kind);
    }
}

/// The order of kinds of event within one instant, as the engine's queue has it: a clock
/// step, then expiries (the fold's), a failover, pause ends and starts, delayed packets
/// landing, and the actors' own steps last.
fn rank(o: &Observation) -> u8 {
    match &o.kind {
        EventKind::LockClockJumped { .. } => 0,
        EventKind::Failover { .. } => 2,
        EventKind::PauseEnded { .. } => 3,
        EventKind::PauseStarted { .. } => 4,
        EventKind::WriteApplied { sent_at, .. } if *sent_at < o.at => 5,
        _ => 6,
    }
}

/// The trace of a recorded run. `account` is what storage holds at the end (read back from
/// it, so the summary's balance is the server's, not the fold's).
pub fn recorded(
    sc: &Scenario,
    mut observations: Vec<Observation>,
    account: Account,
    recording: Recording,
) -> Trace {
    // Stable: observations of one instant and kind keep the order they happened in.
    observations.sort_by_key(|o| (o.at, rank(o)));
    let n = sc.actors.len();
    let mut w = World {
        sc,
        leases: Vec::new(),
        keys: Vec::new(),
        lost: Vec::new(),
        jumped: Vec::new(),
        lapsed: None,
        grants: Vec::new(),
        believes: vec![false; n],
        paused: vec![false; n],
        ended: vec![None; n],
        account: Account {
            balance: sc.initial_balance,
            ..Account::default()
        },
        highest_accepted: None,
        events: Vec::new(),
        writes: Vec::new(),
    };
    let initial = w.snapshot(0);
    for o in observations {
        w.observe(o);
    }
    w.expire_until(sc.horizon);
    let summary = audit::summarize(sc, &w.events, &w.writes, &account);
    Trace {
        scenario: sc.clone(),
        initial,
        events: w.events,
        writes: w.writes,
        summary,
        recorded: Some(recording),
    }
}

/// What a client could have seen of an engine run: its events without the fields
/// [`recorded`] fills in, and without the engine's own expiries (the fold derives them).
/// Used to check the fold against the engine, which must agree on every deck run.
pub fn observations_of(trace: &Trace) -> Vec<Observation> {
    let mut writes = trace.writes.iter();
    trace
        .events
        .iter()
        .filter_map(|e| {
            let mut kind = e.kind.clone();
            match &mut kind {
                EventKind::LeaseExpired { .. } => return None,
                EventKind::AcquireRefused { holder, until, .. } => {
                    holder.clear();
                    *until = 0;
                }
                EventKind::LockWait { holder } => holder.clear(),
                EventKind::PauseEnded { lease_gone } => *lease_gone = false,
                EventKind::ReleaseNoop { reason, .. } => *reason = NoopReason::NeverHeld,
                EventKind::LockValueRead { fence, .. } => *fence = None,
                EventKind::DeletedOthersLease { fence, .. } | EventKind::Released { fence, .. } => {
                    *fence = Fence(0)
                }
                EventKind::ExtendFailed { lease_ended_at, .. }
                | EventKind::LockTimedOut { lease_ended_at, .. } => *lease_ended_at = None,
                EventKind::Failover {
                    lost, rolled_back, ..
                } => {
                    for l in lost.iter_mut() {
                        l.fence = Fence(0);
                        l.expires_at = 0;
                    }
                    *rolled_back = false;
                }
                EventKind::LockClockJumped { shortened, .. } => *shortened = None,
                EventKind::WriteApplied {
                    superseded_by,
                    highest_accepted,
                    result,
                    publish,
                    ..
                } => {
                    *superseded_by = None;
                    *highest_accepted = None;
                    match result {
                        Err(WriteError::StaleFence { last, .. }) => *last = Fence(0),
                        Err(WriteError::StaleSequencer { live, .. }) => *live = None,
                        Ok(balance) if publish.is_some() => *balance = -1,
                        _ => {}
                    }
                }
                _ => {}
            }
            let request = matches!(kind, EventKind::WriteApplied { .. })
                .then(|| writes.next().map(|w| w.request.clone()))
                .flatten();
            Some(Observation {
                at: e.at,
                actor: e
                    .actor
                    .as_deref()
                    .and_then(|a| trace.scenario.actor_index(a)),
                kind,
                request,
            })
        })
        .collect()
}
