//! The deterministic scenario engine: a discrete-event simulation over an injected
//! clock. Events at the same instant are ordered by a fixed class and then by
//! insertion ([`super::queue`]), so one scenario always yields one trace. Stepping back in
//! the UI is indexing into that trace, never undoing.
//!
//! This is the run loop and the world's own events (a clock jump, a failover, an expiry,
//! a pause); an actor's steps are in [`super::actor`]. The engine records facts only: what
//! happened and the state it left. Verdicts are read off those facts by [`super::audit`],
//! and the words by [`super::story`].

use super::actor;
use super::audit;
use super::clock::Millis;
use super::fault::Fault;
use super::lease::{Fence, Lease};
use super::queue::{Class, Pending};
use super::scenario::{Scenario, TokenSource};
use super::sim::Sim;
use super::trace::{Awareness, EventKind, ExpiryCause, Lane, Shortened, Trace};

/// Runs a scenario to its horizon. Pure: same scenario, same trace.
pub fn run(sc: &Scenario) -> Trace {
    let mut sim = Sim::new(sc);
    let initial = sim.snapshot();
    for f in &sc.faults {
        let class = match f.fault {
            Fault::ClockJump { .. } => Class::ClockJump,
            Fault::Failover { .. } | Fault::Restart { .. } | Fault::StorageFailover { .. } => {
                Class::Failover
            }
            // A window a client asks about (`fault::can_reach`), not an event.
            Fault::Partition { .. } => continue,
        };
        sim.push(f.at, class, Pending::Fault(f.fault));
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
    while let Some((t, pending)) = sim.queue.pop() {
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
        recorded: None,
    }
}

impl Sim<'_> {
    fn handle(&mut self, pending: Pending) {
        match pending {
            Pending::Fault(Fault::ClockJump { node, by }) => self.clock_jump(node, by),
            Pending::Fault(f @ (Fault::Failover { .. } | Fault::Restart { .. })) => {
                self.failover(f.lag())
            }
            Pending::Fault(Fault::StorageFailover { lag }) => {
                let lost = self.ledger.fail_over(self.now(), lag);
                let kind = EventKind::StorageFailover { lag, lost };
                self.emit(None, Lane::Storage, kind);
            }
            Pending::Fault(Fault::Partition { .. }) => {}
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
                let lease_gone = self.actors[actor].client.believes
                    && !self.lock.is_held(self.now(), &self.sc.resource, &name);
                self.say(actor, EventKind::PauseEnded { lease_gone });
            }
            Pending::Delivery {
                actor,
                request,
                sent_at,
                grant,
            } => actor::deliver(self, actor, request, sent_at, grant),
            Pending::Step { actor } => actor::step(self, actor),
            Pending::Wake { actor } => actor::wake(self, actor),
        }
    }

    /// Lock node `node`'s clock steps forward: the live lease loses `by` ms of real time.
    fn clock_jump(&mut self, node: usize, by: Millis) {
        let now = self.now();
        let res = &self.sc.resource;
        let before = self.lock.holder(now, res);
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
    /// leader has them all. `lag`: the replica's (or the restart's snapshot's), `None` for
    /// one that has none of the run's writes.
    fn failover(&mut self, lag: Option<Millis>) {
        let now = self.now();
        let lost: Vec<Lease> = match self.sc.lock.token_source() {
            TokenSource::SameRedis => self.lock.failover(now, true, lag),
            TokenSource::SeparateCounter | TokenSource::RandomValue => {
                self.lock.failover(now, false, lag)
            }
            TokenSource::LockService | TokenSource::Counterfactual => Vec::new(),
        };
        self.lost.extend(lost.iter().cloned());
        let next_fence = match self.sc.lock.token_source() {
            TokenSource::SeparateCounter => Fence(self.counter),
            _ => self.lock.next_fence(),
        };
        let granted = self.grants.iter().map(|g| g.fence);
        let rolled_back =
            super::trace::rolled_back(self.sc.lock.token_source(), next_fence, granted);
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
            Some(st) if st.client.believes && st.paused => Awareness::Paused,
            Some(st) if st.client.believes => Awareness::Unaware,
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
        let cause = ExpiryCause::of(self.sc.lock.row().is_some(), jumped);
        let owner_knew = self.awareness(&owner);
        if cause == ExpiryCause::IdleTimeout {
            // PostgreSQL terminates the session: its transaction is rolled back, its row
            // lock released, and every statement it sends from now on fails.
            if let Some(i) = self.sc.actor_index(&owner) {
                self.actors[i].session_gone = true;
            }
            if let Some(r) = self.lock.row() {
                r.end();
            }
        }
        let kind = EventKind::LeaseExpired {
            owner,
            fence,
            cause,
            owner_knew,
        };
        self.emit(None, Lane::Lease, kind);
        if cause == ExpiryCause::IdleTimeout || self.sc.lock.queue() {
            actor::row_handoff(self);
        }
    }
}
