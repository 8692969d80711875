//! The deterministic scenario engine: a discrete-event simulation over an injected
//! clock. Events at the same instant are ordered by a fixed class and then by
//! insertion ([`super::queue`]), so one scenario always yields one trace. Stepping back in
//! the UI is indexing into that trace, never undoing.
//!
//! This is the run loop and the world's own events (an expiry, a pause); what each kind of
//! fault does to the world is in `strike.rs`, an actor's steps in [`super::actor`]. The
//! engine records facts only: what happened and the state it left. Verdicts are read off those facts by [`super::audit`],
//! and the words by [`super::story`].

use super::actor;
use super::audit;
use super::fault::Moment;
use super::lease::{Fence, Lease};
use super::queue::{Class, Pending};
use super::scenario::Scenario;
use super::sim::Sim;
use super::trace::{self, Awareness, EventKind, ExpiryCause, Lane, Trace};

mod strike;

/// Runs a scenario to its horizon. Pure: same scenario, same trace.
pub fn run(sc: &Scenario) -> Trace {
    let mut sim = Sim::new(sc);
    let initial = sim.snapshot();
    for f in &sc.faults {
        let class = match f.fault.moment() {
            Moment::BeforeExpiry => Class::FaultBeforeExpiry,
            Moment::AfterExpiry => Class::FaultAfterExpiry,
            // A window a client asks about (`fault::can_reach`), not an event.
            Moment::Window => continue,
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
            Pending::Fault(f) => self.strike(f),
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
                let held = self.lock.is_held(self.now(), &self.sc.resource, &name);
                let believes = self.actors[actor].client.believes;
                self.say(actor, EventKind::pause_ended(believes, held));
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

    /// What the owner of a lease knows as the server lets it go.
    fn awareness(&self, owner: &str) -> Awareness {
        let st = self.sc.actor_index(owner).map(|i| &self.actors[i]);
        st.map_or(Awareness::Knows, |st| {
            Awareness::of(st.client.believes, st.paused)
        })
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
        let jumped = trace::cut_short_by_a_jump(&self.events, fence);
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
