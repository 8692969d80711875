//! The deterministic scenario engine: a discrete-event simulation over an injected
//! clock. Events at the same instant are ordered by a fixed class and then by
//! insertion, so one scenario always yields one trace. Stepping back in the UI is
//! indexing into that trace, never undoing.
//!
//! The engine records facts only: what happened and the state it left. Verdicts are read
//! off those facts by [`super::audit`], and the words by [`super::story`].

use std::collections::BTreeMap;

use super::audit;
use super::clock::{Clock, Millis, SplitMix64};
use super::lease::{renewal_interval, Acquire, Fence, Lease, LeaseLock, LockError};
use super::ledger::{Ledger, WriteRequest};
use super::redlock::Redlock;
use super::scenario::{ReleaseMode, Scenario, Step, TokenSource, COUNTER_GAP, GET_DEL_GAP};
use super::trace::{
    Awareness, EventKind, ExpiryCause, Grant, Lane, NoopReason, Shortened, SkipReason, Snapshot,
    Trace, TraceEvent,
};

/// Order of simultaneous events: the world changes (clock step, expiry, failover) before
/// anyone acts at that instant. A clock step comes first because it can expire a lease on
/// the spot; an expiry comes before a failover so a lease ending at that instant is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    ClockJump = 0,
    Expiry = 1,
    Failover = 2,
    PauseEnd = 3,
    PauseStart = 4,
    Delivery = 5,
    Step = 6,
}

#[derive(Debug, Clone)]
enum Pending {
    ClockJump {
        by: Millis,
    },
    Failover,
    Expiry {
        fence: Fence,
    },
    PauseStart {
        actor: usize,
        until: Millis,
    },
    PauseEnd {
        actor: usize,
    },
    Delivery {
        actor: usize,
        request: WriteRequest,
        sent_at: Millis,
        /// The sender's own grant (index in `Sim::grants`) when the write left it.
        grant: Option<usize>,
    },
    /// The client's request timeout fires; the actor then carries on with its script.
    Timeout {
        actor: usize,
        fence: Option<Fence>,
        sent_at: Millis,
        arrives_at: Millis,
    },
    Step {
        actor: usize,
    },
}

/// The lock service: one Redis (or one linearizable store), or Redlock over several nodes.
/// `reach` is the nodes the caller can reach; a single server ignores it.
#[derive(Debug, Clone)]
enum Locks {
    One(LeaseLock),
    Quorum(Redlock),
}

impl Locks {
    fn acquire(
        &mut self,
        now: Millis,
        key: &str,
        owner: &str,
        ttl: Millis,
        reach: &[usize],
    ) -> (Acquire, Vec<usize>) {
        match self {
            Locks::One(l) => (l.acquire(now, key, owner, ttl), Vec::new()),
            Locks::Quorum(r) => r.acquire(now, key, owner, ttl, reach),
        }
    }

    fn release(
        &mut self,
        now: Millis,
        key: &str,
        owner: &str,
        reach: &[usize],
    ) -> Result<Fence, LockError> {
        match self {
            Locks::One(l) => l.release(now, key, owner),
            Locks::Quorum(r) => r.release(now, key, owner, reach),
        }
    }

    fn delete(&mut self, key: &str, reach: &[usize]) {
        match self {
            Locks::One(l) => {
                l.delete(key);
            }
            Locks::Quorum(r) => r.delete(key, reach),
        }
    }

    fn extend(
        &mut self,
        now: Millis,
        key: &str,
        owner: &str,
        ttl: Millis,
        reach: &[usize],
    ) -> Result<Millis, LockError> {
        match self {
            Locks::One(l) => l.extend(now, key, owner, ttl),
            Locks::Quorum(r) => r.extend(now, key, owner, ttl, reach),
        }
    }

    fn is_held(&self, now: Millis, key: &str, owner: &str) -> bool {
        match self {
            Locks::One(l) => l.is_held(now, key, owner),
            Locks::Quorum(r) => r.is_held(now, key, owner),
        }
    }

    /// The live lease (Redlock: the newest client holding a majority).
    fn holder(&self, now: Millis, key: &str) -> Option<Lease> {
        match self {
            Locks::One(l) => l.holder(now, key).cloned(),
            Locks::Quorum(r) => r.holder(now, key),
        }
    }

    /// Redlock only: the other clients that hold a majority at the same time.
    fn others(&self, now: Millis, key: &str) -> Vec<Lease> {
        match self {
            Locks::One(_) => Vec::new(),
            Locks::Quorum(r) => {
                let mut all = r.holders(now, key);
                all.pop();
                all
            }
        }
    }

    /// The grant with token `fence` and when it ends (or ended), if the server still has it.
    fn lease(&self, key: &str, fence: Fence) -> Option<Lease> {
        match self {
            Locks::One(l) => l.entry(key).filter(|l| l.fence == fence).cloned(),
            Locks::Quorum(r) => r.lease(key, fence),
        }
    }

    fn clock_jump(&mut self, now: Millis, by: Millis, node: usize) {
        match self {
            Locks::One(l) => l.clock_jump(now, by),
            Locks::Quorum(r) => r.clock_jump(now, by, node),
        }
    }

    fn failover(&mut self, now: Millis, counter_lost: bool) -> Vec<Lease> {
        match self {
            Locks::One(l) => l.failover(now, counter_lost),
            Locks::Quorum(_) => Vec::new(),
        }
    }

    fn next_fence(&self) -> Fence {
        match self {
            Locks::One(l) => l.next_fence(),
            Locks::Quorum(r) => r.next_fence(),
        }
    }
}

#[derive(Debug, Clone, Default)]
struct ActorState {
    pc: usize,
    fence: Option<Fence>,
    believes: bool,
    done: bool,
    paused: bool,
    /// The last debit sent, for `Step::Retry`.
    last_write: Option<WriteRequest>,
    /// GET-then-DEL: the GET saw our own value and the DEL is still to come.
    del_pending: bool,
    /// Separate counter: the SET answered OK and the INCR is still to come.
    token_pending: bool,
    /// `Step::WorkRenewing`: when the work ends, and when the watchdog renews next.
    work_until: Option<Millis>,
    renew_due: Option<Millis>,
}

struct Sim<'a> {
    sc: &'a Scenario,
    clock: Clock,
    lock: Locks,
    ledger: Ledger,
    queue: BTreeMap<(Millis, Class, u64), Pending>,
    seq: u64,
    actors: Vec<ActorState>,
    events: Vec<TraceEvent>,
    /// Every grant so far, in order.
    grants: Vec<Grant>,
    /// The highest token of an accepted write so far, checked or not.
    highest_accepted: Option<Fence>,
    /// Leases whose expiry was already recorded: a lease expires once.
    expired: Vec<Fence>,
    /// The separate counter's next token ([`TokenSource::SeparateCounter`]).
    counter: u64,
    /// Renewal jitter and resume races, seeded by the scenario.
    rng: SplitMix64,
    /// Leases a failed primary lost, until their TTL runs out.
    lost: Vec<Lease>,
}

/// Runs a scenario to its horizon. Pure: same scenario, same trace.
pub fn run(sc: &Scenario) -> Trace {
    let mut ledger = Ledger::new(sc.policy);
    ledger.open(&sc.resource, sc.initial_balance);
    let mut sim = Sim {
        sc,
        clock: Clock::at(0),
        lock: match &sc.redlock {
            None => Locks::One(LeaseLock::new(sc.first_fence)),
            Some(r) => Locks::Quorum(Redlock::new(r.nodes, sc.first_fence)),
        },
        ledger,
        queue: BTreeMap::new(),
        seq: 0,
        actors: vec![ActorState::default(); sc.actors.len()],
        events: Vec::new(),
        grants: Vec::new(),
        highest_accepted: None,
        expired: Vec::new(),
        counter: sc.first_fence,
        rng: SplitMix64::new(sc.seed),
        lost: Vec::new(),
    };
    let initial = sim.snapshot();
    for j in &sc.lock_clock_jumps {
        sim.push(j.at, Class::ClockJump, Pending::ClockJump { by: j.by });
    }
    if let Some(t) = sc.failover_at {
        sim.push(t, Class::Failover, Pending::Failover);
    }
    for (i, a) in sc.actors.iter().enumerate() {
        for p in a.pauses.iter().filter(|p| p.duration > 0) {
            sim.push(
                p.start,
                Class::PauseStart,
                Pending::PauseStart {
                    actor: i,
                    until: p.end(),
                },
            );
        }
        if a.script.is_empty() {
            sim.actors[i].done = true;
        } else {
            sim.schedule_step(i, a.start_at);
        }
    }
    while let Some(((t, _, _), pending)) = sim.queue.pop_first() {
        if t > sc.horizon {
            break;
        }
        sim.clock.advance_to(t);
        sim.handle(pending);
    }
    let account = sim.ledger.account(&sc.resource);
    let writes = sim.ledger.log().to_vec();
    let summary = audit::summarize(sc, &sim.events, &writes, &account);
    Trace {
        scenario: sc.clone(),
        initial,
        events: sim.events,
        writes,
        summary,
    }
}

impl Sim<'_> {
    fn push(&mut self, t: Millis, class: Class, p: Pending) {
        self.seq += 1;
        self.queue.insert((t, class, self.seq), p);
    }

    /// `t`, or when the actor's pause ends if it is stalled then.
    fn after_pauses(&self, actor: usize, t: Millis) -> Millis {
        let pauses = &self.sc.actors[actor].pauses;
        let mut at = t;
        while let Some(p) = pauses.iter().find(|p| p.contains(at)) {
            at = p.end();
        }
        at
    }

    /// Schedules the actor's next step at `t`, or when its pause ends if it is stalled then.
    fn schedule_step(&mut self, actor: usize, t: Millis) {
        let at = self.after_pauses(actor, t);
        self.push(at, Class::Step, Pending::Step { actor });
    }

    /// `Step::WorkRenewing`: the watchdog's next renewal, or the end of the work if that
    /// comes first.
    fn schedule_renewal(&mut self, actor: usize, until: Millis) {
        let now = self.now();
        let due = now.saturating_add(renewal_interval(self.sc.lease_ttl, Some(&mut self.rng)));
        let st = &mut self.actors[actor];
        if due < until {
            st.renew_due = Some(due);
            self.schedule_step(actor, due);
        } else {
            st.renew_due = None;
            self.schedule_step(actor, until.max(now));
        }
    }

    fn now(&self) -> Millis {
        self.clock.now()
    }

    fn name(&self, actor: usize) -> &str {
        &self.sc.actors[actor].name
    }

    fn snapshot(&self) -> Snapshot {
        let now = self.now();
        let account = self.ledger.account(&self.sc.resource);
        Snapshot {
            at: now,
            holder: self.lock.holder(now, &self.sc.resource),
            balance: account.balance,
            last_fence: account.last_fence,
            last_write_fence: account.last_write_fence,
            result: account.result,
            believers: self
                .actors
                .iter()
                .zip(&self.sc.actors)
                .filter(|(s, _)| s.believes)
                .map(|(_, a)| a.name.clone())
                .collect(),
            lost_leases: self
                .lost
                .iter()
                .filter(|l| l.is_live(now))
                .cloned()
                .collect(),
            other_holders: self.lock.others(now, &self.sc.resource),
        }
    }

    /// The lock nodes `actor` can reach (every node of a single server).
    fn reach(&self, actor: usize) -> Vec<usize> {
        match &self.sc.redlock {
            None => Vec::new(),
            Some(r) => match r.reach.get(actor) {
                Some(nodes) if !nodes.is_empty() => nodes.clone(),
                _ => (0..r.nodes).collect(),
            },
        }
    }

    fn emit(&mut self, actor: Option<usize>, lane: Lane, kind: EventKind) {
        let snapshot = self.snapshot();
        self.events.push(TraceEvent {
            at: self.now(),
            actor: actor.map(|a| self.name(a).to_owned()),
            lane,
            kind,
            snapshot,
        });
    }

    /// Emits on the actor's own lane.
    fn say(&mut self, actor: usize, kind: EventKind) {
        self.emit(Some(actor), Lane::Actor(actor), kind);
    }

    fn handle(&mut self, pending: Pending) {
        match pending {
            Pending::ClockJump { by } => self.clock_jump(by),
            Pending::Failover => self.failover(),
            Pending::Expiry { fence } => self.expire(fence),
            Pending::PauseStart { actor, until } => {
                if self.actors[actor].done {
                    return;
                }
                self.push(until, Class::PauseEnd, Pending::PauseEnd { actor });
                if self.actors[actor].paused {
                    return; // overlapping pauses read as one long stall
                }
                self.actors[actor].paused = true;
                let cause = self.sc.actors[actor].pause_cause;
                self.say(actor, EventKind::PauseStarted { until, cause });
            }
            Pending::PauseEnd { actor } => {
                let still_paused = self.sc.actors[actor]
                    .pauses
                    .iter()
                    .any(|p| p.contains(self.now()));
                if !self.actors[actor].paused || still_paused {
                    return;
                }
                self.actors[actor].paused = false;
                let name = self.name(actor).to_owned();
                let lease_gone = self.actors[actor].believes
                    && !self.lock.is_held(self.now(), &self.sc.resource, &name);
                self.say(actor, EventKind::PauseEnded { lease_gone });
            }
            Pending::Delivery {
                actor,
                request,
                sent_at,
                grant,
            } => self.apply(actor, request, sent_at, grant),
            Pending::Timeout {
                actor,
                fence,
                sent_at,
                arrives_at,
            } => {
                let kind = EventKind::WriteTimedOut {
                    fence,
                    sent_at,
                    arrives_at,
                };
                self.say(actor, kind);
                if !self.actors[actor].done {
                    let now = self.now();
                    self.schedule_step(actor, now);
                }
            }
            Pending::Step { actor } => self.step(actor),
        }
    }

    /// The lock node's clock steps forward: the live lease loses `by` ms of real time.
    fn clock_jump(&mut self, by: Millis) {
        let now = self.now();
        let res = &self.sc.resource;
        let before = self.lock.holder(now, res);
        let node = self.sc.redlock.as_ref().map_or(0, |r| r.jumping_node);
        self.lock.clock_jump(now, by, node);
        let shortened = before.and_then(|old| {
            let ends_at = self
                .lock
                .lease(res, old.fence)
                .map_or(now, |l| l.expires_at);
            if ends_at == old.expires_at {
                return None; // the jump did not touch this lease (another Redlock node)
            }
            self.push(ends_at, Class::Expiry, Pending::Expiry { fence: old.fence });
            Some(Shortened {
                owner: old.owner,
                fence: old.fence,
                granted_until: old.expires_at,
                ends_at,
            })
        });
        self.emit(
            None,
            Lane::Lease,
            EventKind::LockClockJumped { by, shortened },
        );
    }

    /// The primary fails over. Off a single Redis with asynchronous replication, the
    /// promoted replica never got the newest lock keys; a linearizable lock service's new
    /// leader has them all.
    fn failover(&mut self) {
        let now = self.now();
        let lost: Vec<Lease> = match self.sc.token_source {
            TokenSource::SameRedis => self.lock.failover(now, true),
            TokenSource::SeparateCounter => self.lock.failover(now, false),
            TokenSource::LockService | TokenSource::Counterfactual => Vec::new(),
        };
        self.lost.extend(lost.iter().cloned());
        let next_fence = match self.sc.token_source {
            TokenSource::SeparateCounter => Fence(self.counter),
            _ => self.lock.next_fence(),
        };
        let rolled_back = self.grants.iter().any(|g| next_fence <= g.fence);
        let kind = EventKind::Failover {
            lost,
            next_fence,
            rolled_back,
        };
        self.emit(None, Lane::Lease, kind);
    }

    /// What the owner of a lease knows as the server lets it go.
    fn awareness(&self, owner: &str) -> Awareness {
        match self.sc.actor_index(owner).map(|i| &self.actors[i]) {
            Some(st) if st.believes && st.paused => Awareness::Paused,
            Some(st) if st.believes => Awareness::Unaware,
            _ => Awareness::Knows,
        }
    }

    fn expire(&mut self, fence: Fence) {
        let now = self.now();
        if let Some(i) = self
            .lost
            .iter()
            .position(|l| l.fence == fence && l.expires_at == now)
        {
            let Lease { owner, fence, .. } = self.lost.remove(i);
            let owner_knew = self.awareness(&owner);
            let kind = EventKind::LeaseExpired {
                owner,
                fence,
                cause: ExpiryCause::LostInFailover,
                owner_knew,
            };
            self.emit(None, Lane::Lease, kind);
            return;
        }
        let Some(lease) = self.lock.lease(&self.sc.resource, fence) else {
            return;
        };
        if lease.expires_at != now || self.expired.contains(&fence) {
            return; // released, extended, jumped or already expired
        }
        self.expired.push(fence);
        let owner = lease.owner.clone();
        let jumped = self.events.iter().any(|e| {
            matches!(&e.kind, EventKind::LockClockJumped { shortened: Some(s), .. } if s.fence == fence)
        });
        let cause = if jumped {
            ExpiryCause::ClockJump
        } else {
            ExpiryCause::Ttl
        };
        let owner_knew = self.awareness(&owner);
        let kind = EventKind::LeaseExpired {
            owner,
            fence,
            cause,
            owner_knew,
        };
        self.emit(None, Lane::Lease, kind);
    }

    /// Stops an actor for good: it no longer believes it holds anything.
    fn cancel(&mut self, actor: usize) {
        let st = &mut self.actors[actor];
        st.believes = false;
        st.done = true;
        st.work_until = None;
        st.renew_due = None;
    }

    /// When the actor's own lease ended, if the trace has recorded that.
    fn lease_ended_at(&self, actor: usize) -> Option<Millis> {
        let fence = self.actors[actor].fence?;
        self.events.iter().find_map(|e| match &e.kind {
            EventKind::LeaseExpired { fence: f, .. }
            | EventKind::DeletedOthersLease { fence: f, .. }
                if *f == fence =>
            {
                Some(e.at)
            }
            EventKind::Failover { lost, .. } if lost.iter().any(|l| l.fence == fence) => Some(e.at),
            _ => None,
        })
    }

    /// Extends `actor`'s lease by the TTL (ownership checked atomically by the lock) and
    /// queues the new expiry; `None` when the actor no longer holds it.
    fn renew(&mut self, actor: usize, now: Millis) -> Option<(Fence, Millis)> {
        let sc = self.sc;
        let reach = self.reach(actor);
        let expires_at = self
            .lock
            .extend(
                now,
                &sc.resource,
                &sc.actors[actor].name,
                sc.lease_ttl,
                &reach,
            )
            .ok()?;
        let fence = self.actors[actor].fence.unwrap_or(Fence(0));
        self.push(expires_at, Class::Expiry, Pending::Expiry { fence });
        Some((fence, expires_at))
    }

    fn step(&mut self, actor: usize) {
        let sc = self.sc;
        let a = &sc.actors[actor];
        let Some(step) = a.script.get(self.actors[actor].pc).cloned() else {
            self.actors[actor].done = true;
            return;
        };
        let now = self.now();
        let name = a.name.clone();
        let res = &sc.resource;
        let mut next = Some(now);
        match step {
            Step::Acquire { .. } if self.actors[actor].token_pending => {
                // The INCR on the separate counter: a token for whoever asks, held or not.
                let fence = Fence(self.counter);
                self.counter += 1;
                let st = &mut self.actors[actor];
                st.token_pending = false;
                st.fence = Some(fence);
                self.say(actor, EventKind::TokenTaken { fence });
            }
            Step::Acquire { retry_every } => {
                match self
                    .lock
                    .acquire(now, res, &name, sc.lease_ttl, &self.reach(actor))
                {
                    (Acquire::Acquired { fence, expires_at }, nodes) => {
                        let st = &mut self.actors[actor];
                        st.fence = Some(fence);
                        st.believes = true;
                        self.grants.push(Grant {
                            owner: name.clone(),
                            fence,
                        });
                        self.push(expires_at, Class::Expiry, Pending::Expiry { fence });
                        let token_later = sc.token_source == TokenSource::SeparateCounter;
                        let kind = EventKind::Acquired {
                            fence,
                            expires_at,
                            nodes,
                            token_later,
                        };
                        self.say(actor, kind);
                        if token_later {
                            // The lease is granted; its token is a second command away.
                            let st = &mut self.actors[actor];
                            st.fence = None;
                            st.token_pending = true;
                            self.schedule_step(actor, now.saturating_add(COUNTER_GAP));
                            return;
                        }
                    }
                    (Acquire::Held { holder, expires_at }, nodes) => {
                        let kind = EventKind::AcquireRefused {
                            holder,
                            until: expires_at,
                            retry_in: retry_every,
                            nodes,
                        };
                        self.say(actor, kind);
                        self.schedule_step(actor, now.saturating_add(retry_every));
                        return; // same step again later
                    }
                }
            }
            Step::Work { ms } => next = Some(now.saturating_add(ms)),
            Step::CheckHeld => {
                let held = self.lock.is_held(now, res, &name);
                self.say(actor, EventKind::Checked { held });
                if !held {
                    self.cancel(actor);
                    self.say(actor, EventKind::GaveUp);
                    return;
                }
            }
            Step::CheckDone => {
                let done = self.ledger.any_accepted(res);
                self.say(actor, EventKind::JobChecked { done });
                if done {
                    // Skip the job: go straight to the next release (or stop).
                    let from = self.actors[actor].pc;
                    match a.script[from..].iter().position(|s| *s == Step::Release) {
                        Some(i) => self.actors[actor].pc = from + i,
                        None => {
                            self.cancel(actor);
                            return;
                        }
                    }
                    self.schedule_step(actor, now);
                    return;
                }
            }
            Step::Debit {
                amount,
                idempotency_key,
            } => next = self.write_step(actor, amount, idempotency_key, None),
            Step::Publish { result } => next = self.write_step(actor, 0, None, Some(result)),
            Step::Retry => match self.actors[actor].last_write.clone() {
                None => {
                    let reason = SkipReason::NothingToRetry;
                    self.say(actor, EventKind::WriteSkipped { reason });
                }
                Some(request) => {
                    let kind = EventKind::Retried {
                        fence: request.fence,
                        amount: request.amount,
                        idempotency_key: request.idempotency_key.clone(),
                    };
                    self.say(actor, kind);
                    next = self.send(actor, request);
                }
            },
            Step::Extend => match self.renew(actor, now) {
                Some((fence, expires_at)) => {
                    let kind = EventKind::Extended {
                        fence,
                        expires_at,
                        watchdog: None,
                    };
                    self.say(actor, kind);
                }
                None => {
                    let lease_ended_at = self.lease_ended_at(actor);
                    self.cancel(actor);
                    let kind = EventKind::ExtendFailed {
                        watchdog: false,
                        lease_ended_at,
                    };
                    self.say(actor, kind);
                    return;
                }
            },
            Step::WorkRenewing { ms } => {
                let st = &self.actors[actor];
                let Some(until) = st.work_until else {
                    let until = now.saturating_add(ms);
                    self.actors[actor].work_until = Some(until);
                    self.schedule_renewal(actor, until);
                    return;
                };
                let mut renew = st.renew_due.is_some_and(|d| d <= now);
                if renew && until <= now {
                    // Woken with the work done and a renewal overdue: the worker thread and
                    // the watchdog race, and either may run first.
                    let worker_first = self.rng.next_u64() % 2 == 0;
                    self.say(actor, EventKind::ResumeRace { worker_first });
                    renew = !worker_first;
                }
                if renew {
                    match self.renew(actor, now) {
                        Some((fence, expires_at)) => {
                            self.schedule_renewal(actor, until);
                            let next_at = self.actors[actor].renew_due;
                            let kind = EventKind::Extended {
                                fence,
                                expires_at,
                                watchdog: Some(next_at),
                            };
                            self.say(actor, kind);
                        }
                        None => {
                            let lease_ended_at = self.lease_ended_at(actor);
                            self.cancel(actor);
                            let kind = EventKind::ExtendFailed {
                                watchdog: true,
                                lease_ended_at,
                            };
                            self.say(actor, kind);
                        }
                    }
                    return;
                }
                let st = &mut self.actors[actor];
                st.work_until = None;
                st.renew_due = None;
            }
            Step::Barrier if sc.skip_barrier => {}
            Step::Barrier => match self.actors[actor].fence {
                None => {
                    let reason = SkipReason::NoToken;
                    self.say(actor, EventKind::WriteSkipped { reason });
                }
                Some(fence) => {
                    let result = self.ledger.barrier(res, fence);
                    let refused = result.is_err();
                    self.emit(
                        Some(actor),
                        Lane::Storage,
                        EventKind::BarrierSet { fence, result },
                    );
                    if refused {
                        self.cancel(actor);
                        self.say(actor, EventKind::GaveUp);
                        return;
                    }
                }
            },
            Step::SideEffect { what } => {
                let lease_live = self.lock.is_held(now, res, &name);
                self.say(actor, EventKind::SideEffect { what, lease_live });
            }
            Step::Release => match sc.release {
                ReleaseMode::CompareAndDelete => self.release_cad(actor),
                ReleaseMode::GetThenDel if !self.actors[actor].del_pending => {
                    if self.get_before_del(actor) {
                        self.schedule_step(actor, now.saturating_add(GET_DEL_GAP));
                        return; // the DEL is the second half of this step
                    }
                }
                ReleaseMode::GetThenDel => self.unconditional_del(actor, ReleaseMode::GetThenDel),
                ReleaseMode::Del => self.unconditional_del(actor, ReleaseMode::Del),
            },
        }
        self.actors[actor].pc += 1;
        if self.actors[actor].pc >= a.script.len() {
            self.actors[actor].done = true;
        } else if let Some(t) = next {
            self.schedule_step(actor, t);
        }
    }

    /// A debit or a publish under the actor's token (skipped without one). Returns when the
    /// actor carries on, as [`Sim::send`] does.
    fn write_step(
        &mut self,
        actor: usize,
        amount: i64,
        idempotency_key: Option<String>,
        publish: Option<String>,
    ) -> Option<Millis> {
        let Some(fence) = self.actors[actor].fence else {
            let reason = SkipReason::NoToken;
            self.say(actor, EventKind::WriteSkipped { reason });
            return Some(self.now());
        };
        let request = WriteRequest {
            resource: self.sc.resource.clone(),
            writer: self.name(actor).to_owned(),
            fence: Some(fence),
            amount,
            idempotency_key,
            publish,
        };
        self.send(actor, request)
    }

    /// Sends a debit to storage: applied at once, or delivered after the actor's network
    /// delay. Returns when the actor carries on: when the reply is back, or `None` when its
    /// request timeout will fire first (the timeout resumes it).
    fn send(&mut self, actor: usize, request: WriteRequest) -> Option<Millis> {
        let now = self.now();
        self.actors[actor].last_write = Some(request.clone());
        let delay = self.sc.actors[actor].network_delay;
        let grant = self.own_grant(actor, request.fence);
        if delay == 0 {
            self.apply(actor, request, now, grant);
            return Some(now);
        }
        let arrives_at = now.saturating_add(delay);
        let fence = request.fence;
        let kind = EventKind::WriteSent {
            fence,
            amount: request.amount,
            arrives_at,
        };
        self.say(actor, kind);
        self.push(
            arrives_at,
            Class::Delivery,
            Pending::Delivery {
                actor,
                request,
                sent_at: now,
                grant,
            },
        );
        match self.sc.actors[actor].request_timeout {
            Some(t) if t < delay => {
                let at = self.after_pauses(actor, now.saturating_add(t));
                let timeout = Pending::Timeout {
                    actor,
                    fence,
                    sent_at: now,
                    arrives_at,
                };
                self.push(at, Class::Step, timeout);
                None
            }
            _ => Some(arrives_at),
        }
    }

    /// The Lua compare-and-delete: one atomic "delete if still mine".
    fn release_cad(&mut self, actor: usize) {
        let now = self.now();
        let res = &self.sc.resource;
        let name = self.name(actor).to_owned();
        self.actors[actor].believes = false;
        let via = ReleaseMode::CompareAndDelete;
        let reach = self.reach(actor);
        match self.lock.release(now, res, &name, &reach) {
            Ok(fence) => self.say(actor, EventKind::Released { fence, via }),
            Err(_) => {
                let reason = match (self.lock.holder(now, res), self.actors[actor].fence) {
                    (Some(l), _) => NoopReason::OtherHolder {
                        owner: l.owner,
                        fence: l.fence,
                    },
                    (None, Some(f)) if self.lost.iter().any(|l| l.fence == f) => NoopReason::Lost,
                    (None, Some(_)) => NoopReason::Expired,
                    (None, None) => NoopReason::NeverHeld,
                };
                self.say(actor, EventKind::ReleaseNoop { via, reason });
            }
        }
    }

    /// The GET of GET-then-DEL. True when it saw the actor's own value, so a DEL follows.
    fn get_before_del(&mut self, actor: usize) -> bool {
        let now = self.now();
        let name = self.name(actor).to_owned();
        let live = self.lock.holder(now, &self.sc.resource);
        let own = live.as_ref().is_some_and(|l| l.owner == name);
        let kind = EventKind::LockValueRead {
            owner: live.as_ref().map(|l| l.owner.clone()),
            fence: live.as_ref().map(|l| l.fence),
        };
        if own {
            self.actors[actor].del_pending = true;
        } else {
            self.actors[actor].believes = false;
        }
        self.say(actor, kind);
        own
    }

    /// The DEL of GET-then-DEL, or a plain DEL: it deletes whatever the key holds now.
    fn unconditional_del(&mut self, actor: usize, via: ReleaseMode) {
        let now = self.now();
        let res = &self.sc.resource;
        let name = self.name(actor).to_owned();
        let st = &mut self.actors[actor];
        st.del_pending = false;
        st.believes = false;
        let live = self.lock.holder(now, res);
        let reach = self.reach(actor);
        self.lock.delete(res, &reach);
        let kind = match live {
            Some(l) if l.owner == name => EventKind::Released {
                fence: l.fence,
                via,
            },
            Some(l) => EventKind::DeletedOthersLease {
                owner: l.owner,
                fence: l.fence,
            },
            None => EventKind::ReleaseNoop {
                via,
                reason: NoopReason::Expired,
            },
        };
        self.say(actor, kind);
    }

    /// The lease `actor` writes under: its newest grant so far. (Not found by token: a
    /// separate counter's token is not the lease's number, and a rolled-back counter can
    /// hand the same token out twice.)
    fn own_grant(&self, actor: usize, fence: Option<Fence>) -> Option<usize> {
        let name = &self.sc.actors[actor].name;
        fence.and(self.grants.iter().rposition(|g| g.owner == *name))
    }

    /// The write reaches storage. `grant` is the sender's own grant as it sent the write, so
    /// a later grant to the same owner with the same token still supersedes it.
    fn apply(
        &mut self,
        actor: usize,
        request: WriteRequest,
        sent_at: Millis,
        grant: Option<usize>,
    ) {
        let now = self.now();
        let fence = request.fence;
        let amount = request.amount;
        let publish = request.publish.clone();
        let highest_accepted = self.highest_accepted;
        let result = self.ledger.debit(now, request);
        if result.is_ok() {
            self.highest_accepted = self.highest_accepted.max(fence);
        }
        let superseded_by = grant
            .and_then(|i| self.grants.get(i + 1..))
            .and_then(|later| later.last())
            .cloned();
        let kind = EventKind::WriteApplied {
            fence,
            amount,
            sent_at,
            result,
            superseded_by,
            highest_accepted,
            publish,
        };
        self.emit(Some(actor), Lane::Storage, kind);
    }
}
