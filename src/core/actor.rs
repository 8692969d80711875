//! The engine's side of a client: [`SimBackend`] answers the core's client steps
//! ([`super::client`]) from the simulated lock and ledger, and the engine drives them here
//! (a step, a timeout on an unanswered lock command, a row lock handed over, a write
//! arriving at storage). The replay drives the same steps against real servers.

use std::convert::Infallible;

use super::client::{
    self, Acquired, Backend, ClientState, HeldBy, KeyValue, Next, Release, RowGrant, Wake,
};
use super::clock::{Millis, SplitMix64};
use super::lease::{Fence, Lease};
use super::ledger::{WriteError, WriteRequest};
use super::locks::RowAnswer;
use super::queue::{Class, Pending};
use super::record::Seen;
use super::scenario::{random_token, TokenSource};
use super::sim::Sim;
use super::trace::{self, EventKind, Grant, Lane, NoopReason, ProviderOutcome};

/// Runs `actor`'s current step of its script.
pub(super) fn step(sim: &mut Sim<'_>, actor: usize) {
    if sim.actors[actor].done {
        return; // stopped while this step was queued (a watchdog's timeout cancelled it)
    }
    let (sc, now) = (sim.sc, sim.now());
    let next = client::step(&mut SimBackend { sim, actor }, sc, actor, now);
    sim.follow(actor, next.unwrap_or_else(|e| match e {}));
}

/// One of `actor`'s timers may be due: the client fires it, and says what follows.
pub(super) fn wake(sim: &mut Sim<'_>, actor: usize) {
    let (sc, now, running) = (sim.sc, sim.now(), !sim.actors[actor].done);
    let next = client::handle_timeout(&mut SimBackend { sim, actor }, sc, actor, now, running);
    if let Some(next) = next {
        sim.follow(actor, next);
    }
}

/// Row lock: the holder's transaction ended; the lock goes to the first waiter.
pub(super) fn row_handoff(sim: &mut Sim<'_>) {
    sim.row_handoff();
}

/// `actor`'s write, sent at `sent_at`, reaches storage. `grant` is the sender's own grant as
/// it sent the write.
pub(super) fn deliver(
    sim: &mut Sim<'_>,
    actor: usize,
    request: WriteRequest,
    sent_at: Millis,
    grant: Option<usize>,
) {
    sim.apply(actor, request, sent_at, grant);
}

/// One client's view of the simulated world.
struct SimBackend<'s, 'a> {
    sim: &'s mut Sim<'a>,
    actor: usize,
}

impl SimBackend<'_, '_> {
    fn name(&self) -> &str {
        self.sim.name(self.actor)
    }

    /// A live lease on the key, as this client's GET or DEL finds it.
    fn key_value(&self, live: Option<Lease>) -> KeyValue<Fence> {
        match live {
            None => KeyValue::Empty,
            Some(Lease { owner, fence, .. }) if owner == self.name() => {
                KeyValue::Own { owner, fence }
            }
            Some(Lease { owner, fence, .. }) => KeyValue::Others { owner, fence },
        }
    }
}

impl Backend for SimBackend<'_, '_> {
    type Error = Infallible;
    /// The simulated lock and ledger are the simulator's own books: it knows every fact.
    type Told<T> = T;

    fn state(&mut self) -> &mut ClientState {
        &mut self.sim.actors[self.actor].client
    }

    fn say(&mut self, _at: Millis, kind: EventKind) {
        self.sim.say(self.actor, kind);
    }

    fn say_told<T>(
        &mut self,
        at: Millis,
        told: T,
        event: impl FnOnce(T) -> EventKind,
        _seen: Seen,
    ) {
        self.say(at, event(told));
    }

    fn say_storage(&mut self, _at: Millis, kind: EventKind) {
        self.sim.emit(Some(self.actor), Lane::Storage, kind);
    }

    fn with_rng<T>(&mut self, f: impl FnOnce(&mut SplitMix64) -> T) -> T {
        f(&mut self.sim.rng)
    }

    fn acquire(&mut self, now: Millis) -> Result<Acquired<HeldBy>, Infallible> {
        let sc = self.sim.sc;
        let name = self.name().to_owned();
        // The random SET value of this client's next grant, if that is the token.
        let value = (sc.lock.token_source() == TokenSource::RandomValue).then(|| {
            let nth = self.sim.grants.iter().filter(|g| g.owner == name).count();
            Fence(random_token(sc.seed, self.actor, nth))
        });
        let reach = self.sim.reach(self.actor);
        let lock = &mut self.sim.lock;
        let (answer, nodes) = lock.acquire(now, &sc.resource, &name, sc.lease_ttl, &reach, value);
        Ok((answer.into(), nodes))
    }

    fn granted(&mut self, fence: Fence, expires_at: Millis) {
        let owner = self.name().to_owned();
        self.sim.grants.push(Grant { owner, fence });
        if expires_at != Millis::MAX {
            self.sim
                .push(expires_at, Class::Expiry, Pending::Expiry { fence });
        }
    }

    fn take_token(&mut self, _now: Millis) -> Result<Fence, Infallible> {
        let fence = Fence(self.sim.counter);
        self.sim.counter += 1;
        Ok(fence)
    }

    fn is_held(&mut self, now: Millis) -> Result<bool, Infallible> {
        Ok(self
            .sim
            .lock
            .is_held(now, &self.sim.sc.resource, self.name()))
    }

    fn extend(&mut self, now: Millis) -> Result<Option<(Millis, Vec<usize>)>, Infallible> {
        let sc = self.sim.sc;
        let reach = self.sim.reach(self.actor);
        let name = self.name().to_owned();
        let lock = &mut self.sim.lock;
        let (Ok(expires_at), nodes) = lock.extend(now, &sc.resource, &name, sc.lease_ttl, &reach)
        else {
            return Ok(None);
        };
        // The lease it extended: its newest grant (a separate counter's token is not its number).
        let grant = self.sim.grants.iter().rev().find(|g| g.owner == name);
        if let Some(fence) = grant.map(|g| g.fence) {
            self.sim
                .push(expires_at, Class::Expiry, Pending::Expiry { fence });
        }
        Ok(Some((expires_at, nodes)))
    }

    fn release(&mut self, now: Millis) -> Result<Release<NoopReason>, Infallible> {
        let res = &self.sim.sc.resource;
        let name = self.name().to_owned();
        let reach = self.sim.reach(self.actor);
        let (released, deleted) = self.sim.lock.release(now, res, &name, &reach);
        Ok(released.map_err(|_| {
            let own = self.sim.actors[self.actor].client.fence;
            let lost = |f| self.sim.lost.iter().any(|l| l.fence == f);
            let reason = NoopReason::of(self.sim.lock.holder(now, res), own, lost);
            (reason, deleted)
        }))
    }

    fn read_lock(&mut self, now: Millis) -> Result<KeyValue<Fence>, Infallible> {
        let live = self.sim.lock.holder(now, &self.sim.sc.resource);
        Ok(self.key_value(live))
    }

    fn delete(&mut self, now: Millis) -> Result<KeyValue<Fence>, Infallible> {
        let res = &self.sim.sc.resource;
        let live = self.sim.lock.holder(now, res);
        let reach = self.sim.reach(self.actor);
        self.sim.lock.delete(now, res, &reach);
        Ok(self.key_value(live))
    }

    fn lease_ended_at(&self) -> Option<Millis> {
        trace::lease_ended_at(&self.sim.events, self.name())
    }

    fn timer_set(&mut self, at: Millis) {
        let actor = self.actor;
        self.sim.push(at, Class::Step, Pending::Wake { actor });
    }

    fn lock_row(&mut self, now: Millis) -> Result<RowGrant, Infallible> {
        if self.sim.actors[self.actor].session_gone {
            return Ok(RowGrant::Lost);
        }
        let name = self.name().to_owned();
        Ok(match self.sim.lock.row().map(|r| r.lock(now, &name)) {
            Some(RowAnswer::Locked(lease)) => RowGrant::Locked {
                fence: lease.fence,
                expires_at: lease.expires_at,
                at: now,
            },
            Some(RowAnswer::Waits { holder }) => RowGrant::Waits { holder },
            None => RowGrant::Lost, // no row lock to take
        })
    }

    fn commit(&mut self, _now: Millis) -> Result<Option<Fence>, Infallible> {
        if self.sim.actors[self.actor].session_gone {
            return Ok(None);
        }
        // COMMIT ends the transaction holding the row: the lease it ends is the client's.
        let ended = self.sim.lock.row().and_then(|r| r.end());
        Ok(ended.map(|lease| lease.fence))
    }

    fn hand_over(&mut self, _now: Millis) {
        self.sim.row_handoff();
    }

    fn send(&mut self, request: WriteRequest, now: Millis) -> Result<Next, Infallible> {
        Ok(self.sim.send(self.actor, request, now))
    }

    fn barrier(&mut self, fence: Fence, now: Millis) -> Result<Result<(), WriteError>, Infallible> {
        Ok(self.sim.ledger.barrier(now, &self.sim.sc.resource, fence))
    }

    fn job_done(&mut self, _now: Millis) -> Result<Option<bool>, Infallible> {
        // Its JobChecked restarts a row lock's idle clock (`Sim::emit`).
        if self.sim.sc.lock.row().is_some() && self.sim.actors[self.actor].session_gone {
            return Ok(None);
        }
        Ok(Some(self.sim.ledger.any_accepted(&self.sim.sc.resource)))
    }

    fn provider_call(
        &mut self,
        _what: &str,
        idempotency_key: &str,
        _now: Millis,
    ) -> Result<ProviderOutcome, Infallible> {
        // Only after an accepted claim: the actor's last claim row decides.
        let name = self.name().to_owned();
        let claimed = self
            .sim
            .ledger
            .log()
            .iter()
            .rev()
            .find(|w| w.request.writer == name && w.request.publish.is_some())
            .is_some_and(|w| w.accepted());
        let keys = &mut self.sim.provider_keys;
        Ok(if !claimed {
            ProviderOutcome::NotCalled
        } else if keys.iter().any(|k| k == idempotency_key) {
            ProviderOutcome::Deduped
        } else {
            keys.push(idempotency_key.to_owned());
            ProviderOutcome::Charged
        })
    }

    fn side_effect(
        &mut self,
        _what: &str,
        _lease_live: bool,
        _now: Millis,
    ) -> Result<(), Infallible> {
        Ok(()) // nothing can refuse it
    }
}

impl Sim<'_> {
    /// What the client's step left to do, in the queue's terms.
    fn follow(&mut self, actor: usize, next: Next) {
        let len = self.sc.actors[actor].script.len();
        match self.actors[actor].client.follow(next, len) {
            Wake::At(t) => self.schedule_step(actor, t),
            Wake::Arrives(t) => self.push(t, Class::Step, Pending::Step { actor }),
            // The request timeout, already queued, says so and resumes it.
            Wake::Timeout(_) | Wake::Outside => {}
            Wake::Finished | Wake::Stopped => self.actors[actor].done = true,
        }
    }

    /// Stops an actor for good: it no longer believes it holds anything.
    fn cancel(&mut self, actor: usize) {
        self.actors[actor].client.cancel();
        self.actors[actor].done = true;
    }

    /// Row lock or fair queue: the holder's transaction or lease has ended; the first
    /// waiter gets the lock and carries on with the step after its acquire.
    fn row_handoff(&mut self) {
        let now = self.now();
        let (key, ttl) = (&self.sc.resource, self.sc.lease_ttl);
        let Some(lease) = self.lock.grant_next(now, key, ttl) else {
            return;
        };
        let Some(actor) = self.sc.actor_index(&lease.owner) else {
            return;
        };
        let mut b = SimBackend { sim: self, actor };
        client::granted(
            &mut b,
            now,
            lease.fence,
            lease.expires_at,
            Vec::new(),
            false,
        );
        self.follow(actor, Next::At(now));
    }

    /// Sends a write to storage: applied at once, or delivered after the actor's network
    /// delay. The actor carries on when the reply is back, or when its request timeout
    /// fires first (the timeout resumes it).
    fn send(&mut self, actor: usize, request: WriteRequest, now: Millis) -> Next {
        let delay = self.sc.actors[actor].network_delay;
        let grant = self.own_grant(actor, request.fence);
        if delay == 0 {
            self.apply(actor, request, now, grant);
            return if self.actors[actor].done {
                Next::Stop // its session was gone: the FATAL stopped it
            } else {
                Next::At(now)
            };
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
            // The client's timer gives up then; it sets it on this answer.
            Some(t) if t < delay => {
                Next::AfterTimeout(self.after_pauses(actor, now.saturating_add(t)))
            }
            _ => Next::At(arrives_at),
        }
    }

    /// The lease `actor` writes a token under, by its place among every grant: the
    /// client's own last grant ([`ClientState::grant`]). None for a write with no token.
    fn own_grant(&self, actor: usize, fence: Option<Fence>) -> Option<usize> {
        let name = &self.sc.actors[actor].name;
        let nth = fence.and(self.actors[actor].client.grant())?;
        trace::nth_grant(&self.grants, name, nth)
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
        // The sequencer check, if storage makes it: one call to the lock service asking
        // whether the lease this write was sent under is still the live one.
        let live = self.lock.holder(now, &self.sc.resource);
        let own = grant.and_then(|i| self.grants.get(i).map(|g| (i, g)));
        let newest = self.grants.len().checked_sub(1);
        let sequencer = || match (own, &live) {
            (Some((i, g)), Some(l))
                if Some(i) == newest && l.owner == g.owner && l.fence == g.fence =>
            {
                Ok(())
            }
            _ => Err(live.as_ref().map(|l| l.fence)),
        };
        let gone = self.sc.lock.row().is_some() && self.actors[actor].session_gone;
        let result = if gone {
            // Its transaction was rolled back with its session: the UPDATE never runs, and
            // the client, seeing the FATAL, stops.
            self.cancel(actor);
            Err(self
                .ledger
                .refuse(now, request, WriteError::SessionTerminated))
        } else {
            self.ledger.debit_checked(now, request, sequencer)
        };
        if result.is_ok() {
            self.highest_accepted = self.highest_accepted.max(fence);
        }
        let superseded_by = grant
            .and_then(|i| trace::superseded(&self.grants, i))
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
