//! A trace recorded on real servers, in the same schema as the engine's. The replay harness
//! observes what each client did and what each server answered (a grant and its PX, a
//! storage reply, a GET); [`recorded`] turns those observations into a [`Trace`], filling in
//! what no client saw: the state of the world after each event, a lease's expiry at the end
//! of the TTL it was granted with, and the facts the verdicts are read from. It derives them
//! by the core's own lease, Redlock and storage rules, which it calls rather than restates;
//! what a client or storage's reply knows (a release's token, a stale token's mark, the grant
//! a write was sent under, the Redlock nodes an extend moved, whether the client believes it
//! holds the lock) it takes.

mod seen;

pub use seen::{observations_of, Refusal, Seen};

use super::audit;
use super::clock::Millis;
use super::lease::{self, Fence, Lease};
use super::ledger::{Account, Commits, WriteError, WriteRecord, WriteRequest};
use super::redlock;
use super::scenario::{ReleaseMode, Scenario};
use super::trace::{
    self, Awareness, EventKind, ExpiryCause, Grant, Lane, NoopReason, Recording, Shortened,
    Snapshot, Trace, TraceEvent,
};

/// One thing a client saw, or the harness did (a pause, a failover, a clock step), at
/// scenario time `at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    pub at: Millis,
    /// The actor's index in the scenario; `None` for the harness's own faults.
    pub actor: Option<usize>,
    pub seen: Seen,
    /// For a write that reached storage: the request as sent (its row in the write log).
    pub request: Option<WriteRequest>,
    /// For a write with a token: which of its writer's grants it was sent under (0: its
    /// first), as the writer knew ([`ClientState::grant`](super::client::ClientState::grant)).
    pub grant: Option<usize>,
    /// Whether the client that saw it believed right after that it held the lock, as its own
    /// state says; `None` where no client's state was at hand (the harness's doing, a reply
    /// that came in on a thread of its own).
    pub believes: Option<bool>,
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
    /// The last lease that ran out rather than being released: with a lock-delay it keeps
    /// the lock from everyone for that long after.
    lapsed: Option<Lease>,
    /// Grants in order.
    grants: Vec<Grant>,
    /// Whether each client believes it holds the lock, as it last said.
    believes: Vec<bool>,
    paused: Vec<bool>,
    account: Account,
    /// The account after each commit storage acknowledged (an accepted write, by its row in
    /// `writes`, or a barrier): a storage failover rolls back through these, as the
    /// ledger's does.
    commits: Commits<Account>,
    highest_accepted: Option<Fence>,
    events: Vec<TraceEvent>,
    writes: Vec<WriteRecord>,
}

impl World<'_> {
    /// The live leases, oldest first: the last is the holder (Redlock: the newest client
    /// holding a majority), the others hold a majority at the same time.
    fn live(&self, at: Millis) -> Vec<Lease> {
        (self.leases.iter())
            .filter(|l| l.is_live(at))
            .cloned()
            .collect()
    }

    /// The live lease, as the lock service answers who holds it.
    fn holder(&self, at: Millis) -> Option<Lease> {
        self.live(at).pop()
    }

    /// The token of `owner`'s newest grant: the lease its value in the lock key stands for.
    fn grant_of(&self, owner: &str) -> Option<Fence> {
        (self.grants.iter().rev()).find_map(|g| (g.owner == owner).then_some(g.fence))
    }

    fn snapshot(&self, at: Millis) -> Snapshot {
        let live = |l: &&Lease| l.is_live(at);
        let mut leases = self.live(at);
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
        let i = self.index(owner);
        i.map_or(Awareness::Knows, |i| {
            Awareness::of(self.believes[i], self.paused[i])
        })
    }

    /// Ends every lease whose TTL ran out by `now`, in the order they ran out.
    fn expire_until(&mut self, now: Millis) {
        loop {
            let due = |ls: &[Lease]| {
                ls.iter()
                    .enumerate()
                    .filter(|(_, l)| !l.is_live(now))
                    .min_by_key(|(_, l)| l.expires_at)
                    .map(|(i, l)| (i, l.expires_at))
            };
            // The live lease due first (a lost one only if it is due strictly earlier).
            let (lease, at, cause) = match (due(&self.leases), due(&self.lost)) {
                (Some((i, a)), lost) if lost.is_none_or(|(_, b)| a <= b) => {
                    let l = self.take(i);
                    let row = self.sc.lock.row().is_some();
                    let jumped = trace::cut_short_by_a_jump(&self.events, l.fence);
                    let cause = ExpiryCause::of(row, jumped);
                    (l, a, cause)
                }
                (_, Some((j, b))) => (self.lost.remove(j), b, ExpiryCause::LostInFailover),
                (_, None) => return,
            };
            if cause != ExpiryCause::LostInFailover {
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

    /// Row lock: a statement of `owner`'s transaction finished at `at` (which ones: core's
    /// rule, [`EventKind::restarts_idle_clock`]), so its session's idle clock starts again
    /// (the server's timer, which no client sees: derived here).
    fn touch(&mut self, at: Millis, owner: &str) {
        let deadline = lease::idle_deadline(self.sc.idle_timeout(), at);
        if let Some(l) = self
            .leases
            .iter_mut()
            .rfind(|l| l.owner == owner && l.is_live(at))
        {
            l.expires_at = deadline;
        }
    }

    fn remove_lease(&mut self, owner: &str) -> Option<Lease> {
        let i = self.leases.iter().rposition(|l| l.owner == owner)?;
        Some(self.take(i))
    }

    /// Lease `i` was extended to `until`. Under Redlock only the keys on `nodes` (those that
    /// took it) moved, and the lease lives while a majority of its keys do.
    fn extended(&mut self, i: usize, until: Millis, nodes: &[usize]) {
        for k in self.keys[i].iter_mut().filter(|k| nodes.contains(&k.0)) {
            k.1 = until;
        }
        self.leases[i].expires_at = self.quorum_expiry(i).unwrap_or(until);
    }

    /// Redlock: when lease `i` ends, by Redlock's own majority rule over its keys' expiries.
    fn quorum_expiry(&self, i: usize) -> Option<Millis> {
        let nodes = self.sc.lock.redlock()?.nodes;
        redlock::majority_ends(nodes, self.keys[i].iter().map(|(_, e)| *e))
    }

    /// Folds one observation in. An observation no grant can explain (a DEL of a lease never
    /// granted, a refusal with no lease ever there) is an error: the fold has no true value
    /// to put in its event.
    fn observe(&mut self, o: Observation) -> Result<(), String> {
        let (at, believes) = (o.at, o.believes);
        self.expire_until(at);
        let me = o.actor;
        let lane = match o.seen {
            Seen::WriteApplied { .. } | Seen::BarrierSet { .. } | Seen::StorageFailover { .. } => {
                Lane::Storage
            }
            _ => me.map_or(Lane::Lease, Lane::Actor),
        };
        let kind = match (o.seen, me.and_then(|i| self.sc.actors.get(i))) {
            (Seen::Failover { lost, next_fence }, _) => self.failover(lost, next_fence),
            (Seen::StorageFailover { lag, lost }, _) => self.storage_failover(lag, &lost),
            (Seen::LockClockJumped { by }, _) => EventKind::LockClockJumped {
                by,
                shortened: self.clock_jumped(at, by),
            },
            (seen, None) => return Err(format!("t={at}: {seen:?}, seen by no client")),
            (Seen::Event(kind), Some(a)) => {
                let name = a.name.clone();
                self.saw_in_full(me, &name, kind)
            }
            (
                Seen::WriteApplied {
                    fence,
                    amount,
                    sent_at,
                    result,
                    publish,
                },
                Some(a),
            ) => {
                let (w, name) = ((fence, amount, sent_at, result, publish), a.name.clone());
                self.write_applied(at, &name, w, (o.request, o.grant))
            }
            (seen, Some(a)) => {
                let name = a.name.clone();
                self.lock_seen(at, me, &name, seen)
                    .map_err(|e| format!("t={at}: {name} {e}"))?
            }
        };
        if let Some((i, b)) = me.zip(believes) {
            self.believes[i] = b;
        }
        let sc = self.sc;
        let name = me.and_then(|i| sc.actors.get(i)).map(|a| &a.name);
        if let Some(name) = name.filter(|_| kind.restarts_idle_clock(&sc.lock)) {
            self.touch(at, name);
        }
        self.push(at, me, lane, kind);
        Ok(())
    }

    /// An event seen in full: what it changes in the world the fold keeps.
    fn saw_in_full(&mut self, me: Option<usize>, name: &str, kind: EventKind) -> EventKind {
        match &kind {
            EventKind::Acquired {
                fence,
                expires_at,
                nodes,
                ..
            } => {
                self.lapsed = None;
                self.keys
                    .push(nodes.iter().map(|n| (*n, *expires_at)).collect());
                let (owner, fence) = (name.to_owned(), *fence);
                let expires_at = *expires_at;
                self.leases.push(Lease {
                    owner: owner.clone(),
                    fence,
                    expires_at,
                });
                self.grants.push(Grant { owner, fence });
            }
            // The client's own lease, as it knows it: the fold lets it go.
            EventKind::Released { .. } => {
                self.remove_lease(name);
            }
            EventKind::PauseStarted { .. } => {
                if let Some(x) = me.and_then(|i| self.paused.get_mut(i)) {
                    *x = true;
                }
            }
            EventKind::Extended {
                expires_at, nodes, ..
            } => {
                // The fence is the actor's token, which a separate counter makes not the lease's.
                if let Some(i) = self.leases.iter().rposition(|l| l.owner == name) {
                    self.extended(i, *expires_at, nodes);
                }
            }
            _ => {}
        }
        kind
    }

    /// A client's lock event with fields no client sees: the event, with them derived.
    fn lock_seen(
        &mut self,
        at: Millis,
        me: Option<usize>,
        name: &str,
        seen: Seen,
    ) -> Result<EventKind, String> {
        Ok(match seen {
            Seen::AcquireRefused { retry_in, nodes } => {
                let (holder, until) = self.refused_by(at)?;
                EventKind::AcquireRefused {
                    holder,
                    until,
                    retry_in,
                    nodes,
                }
            }
            Seen::LockWait => {
                // The transaction it waits behind: the live one, or one whose end the
                // server has not acted on yet.
                let holder = self.holder(at).or_else(|| self.lapsed.clone());
                let holder = holder.ok_or("waited for a row that no transaction held")?;
                EventKind::LockWait {
                    holder: holder.owner,
                }
            }
            Seen::PauseEnded => {
                if let Some(x) = me.and_then(|i| self.paused.get_mut(i)) {
                    *x = false;
                }
                let believes = me.is_some_and(|i| self.believes[i]);
                let held = self.live(at).iter().any(|l| l.owner == name);
                EventKind::pause_ended(believes, held)
            }
            Seen::ReleaseNoop { deleted } => {
                let lost = |f| self.lost.iter().any(|l| l.fence == f);
                let reason = NoopReason::of(self.holder(at), self.grant_of(name), lost);
                EventKind::ReleaseNoop {
                    via: ReleaseMode::CompareAndDelete,
                    reason,
                    deleted,
                }
            }
            Seen::LockValueRead { owner } => {
                let fence = self.grant_of(&owner);
                let fence = fence.ok_or(format!(
                    "read {owner}'s value, a lease that was never granted"
                ))?;
                EventKind::LockValueRead {
                    owner: Some(owner),
                    fence: Some(fence),
                }
            }
            Seen::DeletedOthersLease { owner } => {
                let fence = self.grant_of(&owner);
                let fence =
                    fence.ok_or(format!("deleted {owner}'s lease, which was never granted"))?;
                self.remove_lease(&owner);
                EventKind::DeletedOthersLease { owner, fence }
            }
            Seen::ExtendFailed { watchdog } => EventKind::ExtendFailed {
                watchdog,
                lease_ended_at: trace::lease_ended_at(&self.events, name),
            },
            Seen::LockTimedOut {
                command,
                sent_at,
                cancelled,
                wrote_at,
            } => EventKind::LockTimedOut {
                command,
                sent_at,
                cancelled,
                wrote_at,
                lease_ended_at: trace::lease_ended_at(&self.events, name),
            },
            Seen::BarrierSet { fence, result } => {
                if result.is_ok() {
                    self.account.raise_mark(self.sc.policy, Some(fence));
                    (self.commits).commit(at, None, self.account.clone());
                }
                let result = result.map_err(WriteError::from);
                EventKind::BarrierSet { fence, result }
            }
            Seen::Event(_)
            | Seen::WriteApplied { .. }
            | Seen::Failover { .. }
            | Seen::StorageFailover { .. }
            | Seen::LockClockJumped { .. } => unreachable!("handled by observe"),
        })
    }

    /// Who a refused acquire met, and until when: the live lease (Redlock: core's answer
    /// for the majority), a lapsed lease's lock-delay, or a lapsed lease whose key the
    /// server still held past its TTL (etcd revokes a lease on its own schedule), until
    /// a time no reply says.
    fn refused_by(&self, at: Millis) -> Result<(String, Option<Millis>), String> {
        if self.sc.lock.redlock().is_some() {
            let (holder, until) = redlock::refused_by(self.holder(at), at);
            return Ok((holder, Some(until)));
        }
        let (live, lapsed) = (self.holder(at), self.lapsed.as_ref());
        let delay = self.sc.lock.lock_delay();
        if let Some((holder, until)) = lease::kept_by(live.as_ref(), lapsed, delay, at) {
            return Ok((holder, Some(until)));
        }
        // The server kept a lapsed lease past its TTL: until a time no reply says.
        let lapsed = lapsed.ok_or("was refused the lock while no lease was there")?;
        Ok((lapsed.owner.clone(), None))
    }

    /// The leases the promoted replica lacked (by their owners), and whether the counter
    /// rolled back.
    fn failover(&mut self, owners: Vec<String>, next_fence: Fence) -> EventKind {
        let lost: Vec<Lease> = (owners.iter())
            .filter_map(|owner| self.remove_lease(owner))
            .collect();
        if !lost.is_empty() {
            self.lapsed = None;
        }
        self.lost.extend(lost.iter().cloned());
        let granted = self.grants.iter().map(|g| g.fence);
        let rolled_back = trace::rolled_back(self.sc.lock.token_source(), next_fence, granted);
        EventKind::Failover {
            lost,
            next_fence,
            rolled_back,
        }
    }

    /// Storage's standby was promoted without the acknowledged writes `lost` (writer, token):
    /// their records are the newest accepted ones of each, and storage rolls back by core's
    /// rule ([`Commits::roll_back`]) to before the first of them.
    fn storage_failover(&mut self, lag: Millis, lost: &[(String, Option<Fence>)]) -> EventKind {
        let mut rows: Vec<usize> = Vec::new();
        for (writer, fence) in lost {
            let newest = (0..self.writes.len()).rev().find(|i| {
                let w = &self.writes[*i];
                let (who, f) = (&w.request.writer, w.request.fence);
                w.accepted() && who == writer && f == *fence && !rows.contains(i)
            });
            rows.extend(newest);
        }
        rows.sort_unstable();
        let first = self.commits.first_of(&rows);
        if let (Some(account), _) = self.commits.roll_back(first) {
            self.account = account.clone();
        }
        let lost = rows.iter().map(|i| self.writes[*i].clone()).collect();
        EventKind::StorageFailover { lag, lost }
    }

    /// One lock node's clock steps `by`: its keys' PX runs out `by` sooner (a row lock's
    /// idle timeout is not on it: core's rule). Under Redlock a lease lives on while a
    /// majority of its keys do. What it cut short, by core's rule.
    fn clock_jumped(&mut self, at: Millis, by: Millis) -> Option<Shortened> {
        let node = self.sc.jumping_node();
        let holder = self.leases.iter().rposition(|l| l.is_live(at));
        let before = holder.map(|i| self.leases[i].clone());
        let moved = trace::ends_by_lock_clock(&self.sc.lock);
        for i in 0..self.leases.len() {
            if !moved || !self.leases[i].is_live(at) {
                continue;
            }
            let ends_at = if self.sc.lock.redlock().is_some() {
                for k in self.keys[i].iter_mut().filter(|k| k.0 == node) {
                    k.1 = lease::jumped(k.1, at, by);
                }
                self.quorum_expiry(i).unwrap_or(at)
            } else {
                lease::jumped(self.leases[i].expires_at, at, by)
            };
            self.leases[i].expires_at = ends_at;
        }
        Shortened::of(before, |_| holder.map_or(at, |i| self.leases[i].expires_at))
    }

    /// Storage's reply to a write: the write, with the grant that superseded the lease it
    /// was sent under (`grant`, the writer's own count) and the high-water mark it met; the
    /// account and the write log as storage left them.
    fn write_applied(
        &mut self,
        at: Millis,
        name: &str,
        (fence, amount, sent_at, result, publish): SeenWrite,
        (request, grant): (Option<WriteRequest>, Option<usize>),
    ) -> EventKind {
        let own = grant.and_then(|n| trace::nth_grant(&self.grants, name, n));
        let superseded_by = own
            .and_then(|i| trace::superseded(&self.grants, i))
            .cloned();
        let highest_accepted = self.highest_accepted;
        // A publish leaves the balance be.
        let result = match result {
            Ok(balance) => Ok(balance.unwrap_or(self.account.balance)),
            Err(r) => Err(r.into()),
        };
        if let Ok(balance) = result {
            self.highest_accepted = self.highest_accepted.max(fence);
            (self.account).accept(self.sc.policy, fence, balance, publish.as_ref());
            let row = request.is_some().then_some(self.writes.len());
            (self.commits).commit(at, row, self.account.clone());
        }
        if let Some(request) = request {
            self.writes.push(WriteRecord {
                at,
                request,
                result: result.clone().map(|_| ()),
                balance_after: self.account.balance,
            });
        }
        EventKind::WriteApplied {
            fence,
            amount,
            sent_at,
            result,
            superseded_by,
            highest_accepted,
            publish,
        }
    }
}

/// A write as storage's reply shows it: its token, amount, when it was sent, the reply, and
/// the result it publishes.
type SeenWrite = (
    Option<Fence>,
    i64,
    Millis,
    Result<Option<i64>, Refusal>,
    Option<String>,
);

/// The order of kinds of event within one instant, as the engine's queue has it: a clock
/// step, then expiries (the fold's), a failover, pause ends and starts, delayed packets
/// landing, and the actors' own steps last.
fn rank(o: &Observation) -> u8 {
    match &o.seen {
        Seen::LockClockJumped { .. } => 0,
        Seen::Failover { .. } | Seen::StorageFailover { .. } => 2,
        Seen::PauseEnded => 3,
        Seen::Event(EventKind::PauseStarted { .. }) => 4,
        Seen::WriteApplied { sent_at, .. } if *sent_at < o.at => 5,
        _ => 6,
    }
}

/// The trace of a recorded run. `account` is what storage holds at the end (read back from
/// it, so the summary's balance is the server's, not the fold's). An error names an
/// observation no grant explains, which the fold cannot turn into an event.
pub fn recorded(
    sc: &Scenario,
    mut observations: Vec<Observation>,
    account: Account,
    recording: Recording,
) -> Result<Trace, String> {
    // Stable: observations of one instant and kind keep the order they happened in.
    observations.sort_by_key(|o| (o.at, rank(o)));
    let n = sc.actors.len();
    let opening = Account {
        balance: sc.initial_balance,
        ..Account::default()
    };
    let mut commits = Commits::default();
    commits.commit(0, None, opening.clone());
    let mut w = World {
        sc,
        leases: Vec::new(),
        keys: Vec::new(),
        lost: Vec::new(),
        lapsed: None,
        grants: Vec::new(),
        believes: vec![false; n],
        paused: vec![false; n],
        account: opening,
        commits,
        highest_accepted: None,
        events: Vec::new(),
        writes: Vec::new(),
    };
    let initial = w.snapshot(0);
    for o in observations {
        w.observe(o)?;
    }
    w.expire_until(sc.horizon);
    let summary = audit::summarize(sc, &w.events, &w.writes, &account);
    Ok(Trace {
        scenario: sc.clone(),
        initial,
        events: w.events,
        writes: w.writes,
        summary,
        recorded: Some(recording),
    })
}
