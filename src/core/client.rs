//! One client's steps, written once: a script step becomes commands to a [`Backend`] (the
//! lock, the storage, the outside world, the client's clock) and a [`Next`] that says when
//! the client acts again. The engine drives it against the simulated lock and ledger
//! ([`super::actor`]); the replay drives the same steps against real servers, so what the
//! servers answer is checked against what the core predicts, not against a second copy of
//! the client.
//!
//! What the client saw is said through [`Backend::say`]; facts no client sees (a refusal's
//! holder, a noop's reason) come in the backend's answers only as far as it can tell them
//! ([`Backend::Told`]): the simulator's books do, real servers do not, and there the fold
//! ([`super::record`]) fills them in.

use super::clock::{Millis, SplitMix64};
use super::fault::can_reach;
use super::lease::{renewal_interval, Fence};
use super::ledger::{WriteError, WriteRequest};
use super::record::Seen;
use super::scenario::{
    client_elapsed, Actor, ReleaseMode, Scenario, Step, COUNTER_GAP, GET_DEL_GAP,
};
use super::trace::{EventKind, LockCommand, NoopReason, ProviderOutcome, SkipReason};

mod answer;
mod release;
mod timer;
mod watchdog;

pub use answer::{Acquired, Answer, HeldBy, KeyValue, Release};
use release::release;
pub use timer::{handle_timeout, Timer, Waiting};
use timer::{set_timer, unanswered};
use watchdog::{extend_failed, work_renewing};

/// Where one client is in its script and what it believes.
#[derive(Debug, Clone, Default)]
pub struct ClientState {
    pub pc: usize,
    pub fence: Option<Fence>,
    pub believes: bool,
    /// The last write sent, for `Step::Retry`.
    pub last_write: Option<WriteRequest>,
    /// GET-then-DEL: the GET saw our own value and the DEL is still to come.
    pub del_pending: bool,
    /// Separate counter: the SET answered OK and the INCR is still to come.
    pub token_pending: bool,
    /// `Step::WorkRenewing`: when the work ends, and when the watchdog renews next.
    pub work_until: Option<Millis>,
    pub renew_due: Option<Millis>,
    /// When the lease was last granted or renewed (its local deadline counts from here).
    pub lease_from: Option<Millis>,
    /// `Step::WorkRenewing`: when the watchdog sent a renewal that has had no reply yet (a
    /// partition dropped it); it sends no other until it gives up on this one.
    pub renew_sent: Option<Millis>,
    /// When the client last sent a write to storage.
    pub wrote_at: Option<Millis>,
    /// When the client sent the lock command now travelling to a lock service a round trip
    /// away ([`Scenario::lock_rtt`]), or waiting in its queue; it runs there on arrival.
    pub lock_sent: Option<Millis>,
    /// The client's own timers, set as it sends and fired by [`handle_timeout`]: a driver
    /// asks [`ClientState::poll_wake`] when to wake it (quinn-proto's `poll_timeout`).
    pub timers: Vec<Timer>,
    /// How many grants the client has had.
    pub grants: usize,
}

impl ClientState {
    /// The grant a write it sends now goes under: its last (0: its first; see
    /// [`super::trace::nth_grant`]). The client knows this though no token says it: a
    /// separate counter's token is not the lease's number.
    pub fn grant(&self) -> Option<usize> {
        self.grants.checked_sub(1)
    }

    /// The client stops for good: it no longer believes it holds anything.
    pub fn cancel(&mut self) {
        self.believes = false;
        self.work_until = None;
        self.renew_due = None;
    }

    /// Moves the client's place in its script (`len` steps) as a step's `next` says, and
    /// says when it wakes: its driver (the simulator's queue, the replay's thread) only
    /// sleeps until then and steps it.
    pub fn follow(&mut self, next: Next, len: usize) -> Wake {
        let wake = match next {
            Next::At(t) => Wake::At(t),
            Next::AfterTimeout(t) => Wake::Timeout(t),
            Next::Again(t) => return Wake::At(t),
            Next::Arrives(t) => return Wake::Arrives(t),
            Next::Goto(pc, t) => {
                self.pc = pc;
                return Wake::At(t);
            }
            Next::Wait => return Wake::Outside,
            Next::Stop => return Wake::Stopped,
        };
        self.pc += 1;
        match self.pc >= len {
            true => Wake::Finished,
            false => wake,
        }
    }
}

/// When a client runs its next step ([`ClientState::follow`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// At this time.
    At(Millis),
    /// When its request timeout gave up on a write, at this time: its timer fires then
    /// ([`handle_timeout`]) and resumes it.
    Timeout(Millis),
    /// At this time, when its lock command reaches the lock service: a pause of the client
    /// does not hold it back.
    Arrives(Millis),
    /// When something else wakes it: a reply, a lock command's timeout, a queue's grant.
    Outside,
    /// Never: its script is over.
    Finished,
    /// Never: it stopped (gave up, self-cancelled, lost its connection).
    Stopped,
}

/// What a step leaves to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// The next step, at this time.
    At(Millis),
    /// The same step again at this time (a refused acquire, the DEL half, a renewal).
    Again(Millis),
    /// The same step's lock command reaches the lock service at this time and runs there: a
    /// pause of the client that sent it does not hold it back.
    Arrives(Millis),
    /// Step number `pc` at this time (a job found done skips to its release).
    Goto(usize, Millis),
    /// The next step, after the client's request timeout gave up on a write at this time.
    AfterTimeout(Millis),
    /// The same step, resumed by something else: a row lock handed over, or the client's
    /// own timer on a lock command that got no reply ([`handle_timeout`]).
    Wait,
    /// The client stops (gave up, self-cancelled, lost its connection, or its script ended).
    Stop,
}

/// The answer to a row lock's `SELECT … FOR UPDATE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowGrant {
    /// The transaction holds the row from `at` (later than asked if it waited, as the
    /// backend has said), its session's idle timeout ending it at `expires_at`
    /// (`Millis::MAX`: none).
    Locked {
        fence: Fence,
        expires_at: Millis,
        at: Millis,
    },
    /// It waits behind `holder`'s transaction (a hand-over resumes it).
    Waits { holder: String },
    /// The session is gone.
    Lost,
}

/// The world one client acts on. The engine's is the simulated lock and ledger; the replay's
/// sends the same commands to real servers and reports their answers.
pub trait Backend {
    /// An infrastructure failure (the simulation has none).
    type Error;
    /// A fact no client sees (who keeps the lock from it, why a release deleted nothing,
    /// another client's token in the key), as this backend's answers tell it: the
    /// simulator's books tell it (`T`); a real server's answer does not (`()`), and the fold
    /// derives it from the recording ([`super::record`]).
    type Told<T>;

    /// The client's own state (kept by the backend, so what it records sees it as it is).
    fn state(&mut self) -> &mut ClientState;
    /// Records what the client saw at `at` on its own lane.
    fn say(&mut self, at: Millis, kind: EventKind);
    /// Records at `at` what the client saw of an answer with a fact no client sees: the
    /// event in full (`event`) where the backend told the fact, else only `seen`.
    fn say_told<T>(
        &mut self,
        at: Millis,
        told: Self::Told<T>,
        event: impl FnOnce(T) -> EventKind,
        seen: Seen,
    );
    /// Records what storage did on the client's behalf at `at` (a barrier).
    fn say_storage(&mut self, at: Millis, kind: EventKind);
    /// A line of evidence about how it happened (the replay's; the engine keeps none).
    fn note(&mut self, _what: impl FnOnce() -> String) {}
    /// The seeded randomness the scenario gives its clients (watchdog jitter, resume races).
    fn with_rng<T>(&mut self, f: impl FnOnce(&mut SplitMix64) -> T) -> T;

    /// Takes the lease (NX PX, or Redlock's majority, or etcd's create-if-absent).
    fn acquire(&mut self, now: Millis) -> Result<Acquired<Self::Told<HeldBy>>, Self::Error>;
    /// The grant was made: the lock's books take note (the engine queues its expiry).
    fn granted(&mut self, _fence: Fence, _expires_at: Millis) {}
    /// The separate counter's INCR.
    fn take_token(&mut self, now: Millis) -> Result<Fence, Self::Error>;
    fn is_held(&mut self, now: Millis) -> Result<bool, Self::Error>;
    /// The ownership-checked extend; the lease's new expiry and, under Redlock, the nodes
    /// that took it; `None` if it is not ours.
    fn extend(&mut self, now: Millis) -> Result<Option<(Millis, Vec<usize>)>, Self::Error>;
    /// The compare-and-delete.
    fn release(&mut self, now: Millis) -> Result<Release<Self::Told<NoopReason>>, Self::Error>;
    /// The GET of GET-then-DEL.
    fn read_lock(&mut self, now: Millis) -> Result<KeyValue<Self::Told<Fence>>, Self::Error>;
    /// The unconditional DEL: the live lease it deleted, if any.
    fn delete(&mut self, now: Millis) -> Result<KeyValue<Self::Told<Fence>>, Self::Error>;
    /// When the client's own lease ended, if that is known (the engine's books).
    fn lease_ended_at(&self) -> Option<Millis> {
        None
    }
    /// A lock command got no reply; the client's timer gives up on it at `at` (the replay
    /// sends it for real, and it must get no answer before then).
    fn unanswered(&mut self, _command: LockCommand, _sent_at: Millis, _at: Millis) {}
    /// The client set a timer that fires at `at` (the engine queues a wake for it).
    fn timer_set(&mut self, _at: Millis) {}

    /// Row lock: `BEGIN; SELECT … FOR UPDATE`.
    fn lock_row(&mut self, now: Millis) -> Result<RowGrant, Self::Error>;
    /// Row lock: `COMMIT`; the lease's token, `None` if the session is gone.
    fn commit(&mut self, now: Millis) -> Result<Option<Fence>, Self::Error>;
    /// Row lock: the transaction ended; the first waiter gets the row.
    fn hand_over(&mut self, _now: Millis) {}

    /// Sends a write; when the client carries on (a reply, a timeout, or a lost session).
    fn send(&mut self, request: WriteRequest, now: Millis) -> Result<Next, Self::Error>;
    fn barrier(&mut self, fence: Fence, now: Millis)
        -> Result<Result<(), WriteError>, Self::Error>;
    /// Whether the job is done (`None`: the session is gone).
    fn job_done(&mut self, now: Millis) -> Result<Option<bool>, Self::Error>;
    /// The outside provider's call (made only after an accepted claim).
    fn provider_call(
        &mut self,
        what: &str,
        idempotency_key: &str,
        now: Millis,
    ) -> Result<ProviderOutcome, Self::Error>;
    /// A call to the outside system that never sees a token.
    fn side_effect(&mut self, what: &str, lease_live: bool, now: Millis)
        -> Result<(), Self::Error>;
}

/// `t`, or when the actor's pause ends if it is stalled then: a paused client does not act.
pub fn after_pauses(actor: &Actor, t: Millis) -> Millis {
    let mut at = t;
    while let Some(p) = actor.pauses.iter().find(|p| p.contains(at)) {
        at = p.end();
    }
    at
}

/// Runs client `me`'s current step at `now`.
pub fn step<B: Backend>(
    b: &mut B,
    sc: &Scenario,
    me: usize,
    now: Millis,
) -> Result<Next, B::Error> {
    let Some(step) = sc.actors[me].script.get(b.state().pc).cloned() else {
        return Ok(Next::Stop);
    };
    if sc.lock.row().is_some() {
        if let Some(next) = row_step(b, &step, now)? {
            return Ok(next);
        }
    }
    // A partition drops what is sent during it; a command already on its way arrives.
    if !can_reach(&sc.faults, me, now) && b.state().lock_sent.is_none() {
        if let Some(command) = LockCommand::sent_by(&step) {
            unanswered(b, sc, me, command, now);
            return Ok(Next::Wait);
        }
    }
    if let Some(next) = behind_herd(b, sc, &step, now) {
        return Ok(next);
    }
    let command = LockCommand::sent_by(&step).is_some();
    if command && sc.lock_rtt > 0 && b.state().lock_sent.is_none() {
        b.state().lock_sent = Some(now);
        return Ok(Next::Arrives(now.saturating_add(request_half(sc.lock_rtt))));
    }
    let next = match step {
        Step::Acquire { .. } if b.state().token_pending => {
            // The INCR on the separate counter: a token for whoever asks, held or not.
            let fence = b.take_token(now)?;
            let st = b.state();
            st.token_pending = false;
            st.fence = Some(fence);
            b.say(now, EventKind::TokenTaken { fence });
            Next::At(now)
        }
        Step::Acquire { retry_every } => acquire(b, sc, now, retry_every)?,
        Step::Work { ms } => Next::At(now.saturating_add(ms)),
        Step::CheckHeld => {
            let held = b.is_held(now)?;
            b.say(now, EventKind::Checked { held });
            if held {
                Next::At(now)
            } else {
                give_up(b, now)
            }
        }
        Step::CheckDeadline => {
            // The client's own clock, `client_drift` per mille slow: no server sees it.
            let since = now.saturating_sub(b.state().lease_from.unwrap_or(now));
            let local = client_elapsed(since, sc.client_drift);
            let deadline = sc.lease_ttl.saturating_sub(sc.deadline_margin);
            let ok = local < deadline;
            let kind = EventKind::DeadlineChecked {
                local,
                deadline,
                ok,
            };
            b.say(now, kind);
            if ok {
                Next::At(now)
            } else {
                give_up(b, now)
            }
        }
        Step::CheckDone => check_done(b, sc, me, now)?,
        Step::Debit {
            amount,
            idempotency_key,
        } => write(b, sc, me, now, amount, idempotency_key, None)?,
        // A claim row is the same conditional write as a publish, made before an outside call.
        Step::Publish { result } | Step::Claim { what: result } => {
            write(b, sc, me, now, 0, None, Some(result))?
        }
        Step::ProviderCall {
            what,
            idempotency_key,
        } => {
            let lease_live = b.is_held(now)?;
            let outcome = b.provider_call(&what, &idempotency_key, now)?;
            let kind = EventKind::ProviderCall {
                what,
                idempotency_key,
                outcome,
                lease_live,
            };
            b.say(now, kind);
            if outcome == ProviderOutcome::NotCalled {
                give_up(b, now)
            } else {
                Next::At(now)
            }
        }
        Step::Retry => match b.state().last_write.clone() {
            None => {
                let reason = SkipReason::NothingToRetry;
                b.say(now, EventKind::WriteSkipped { reason });
                Next::At(now)
            }
            Some(request) => {
                let kind = EventKind::Retried {
                    fence: request.fence,
                    amount: request.amount,
                    idempotency_key: request.idempotency_key.clone(),
                };
                b.say(now, kind);
                send(b, sc, me, request, now)?
            }
        },
        // Ownership-checked: only a client granted the lease (so holding its token) sees
        // its extend succeed.
        Step::Extend => match b.extend(now)?.zip(b.state().fence) {
            Some(((expires_at, nodes), fence)) => {
                let st = b.state();
                st.lease_from = Some(st.lock_sent.unwrap_or(now));
                let kind = EventKind::Extended {
                    fence,
                    expires_at,
                    watchdog: None,
                    nodes,
                };
                b.say(now, kind);
                Next::At(now)
            }
            None => extend_failed(b, now, false),
        },
        Step::WorkRenewing { ms } => work_renewing(b, sc, me, now, ms)?,
        Step::Barrier if sc.skip_barrier => Next::At(now),
        Step::Barrier => match b.state().fence {
            None => {
                let reason = SkipReason::NoToken;
                b.say(now, EventKind::WriteSkipped { reason });
                Next::At(now)
            }
            Some(fence) => {
                let result = b.barrier(fence, now)?;
                let refused = result.is_err();
                b.say_storage(now, EventKind::BarrierSet { fence, result });
                if refused {
                    give_up(b, now)
                } else {
                    Next::At(now)
                }
            }
        },
        Step::SideEffect { what } => {
            let lease_live = b.is_held(now)?;
            b.side_effect(&what, lease_live, now)?;
            b.say(now, EventKind::SideEffect { what, lease_live });
            Next::At(now)
        }
        Step::Release => {
            let next = release(b, sc, now)?;
            if sc.lock.queue() {
                b.hand_over(now);
            }
            next
        }
    };
    if b.state().lock_sent.take().is_none() {
        return Ok(next);
    }
    Ok(after_reply(next, sc.lock_rtt - request_half(sc.lock_rtt)))
}

/// A lock command that reaches a lock service still answering its fleet's renewals
/// ([`super::scenario::Herd`]) waits behind them: the client says so, and the command runs
/// there when the service gets to it. `None`: no herd, no command, or no backlog.
fn behind_herd<B: Backend>(b: &mut B, sc: &Scenario, step: &Step, now: Millis) -> Option<Next> {
    let herd = sc.lock.herd()?;
    let st = b.state();
    if st.lock_sent.is_some() {
        return None; // it is being served now
    }
    let command = match step {
        // The watchdog's renewal, while the work goes on beside it.
        Step::WorkRenewing { .. } => {
            let renewing = st.renew_due.is_some_and(|d| d <= now);
            (renewing && st.work_until.is_some_and(|u| u > now)).then_some(LockCommand::Renew)?
        }
        step => LockCommand::sent_by(step)?,
    };
    let served_at = herd.served_at(sc.lease_ttl, now);
    if served_at <= now {
        return None;
    }
    st.lock_sent = Some(now);
    let ahead = herd.ahead(sc.lease_ttl, now);
    let kind = EventKind::LockQueued {
        command,
        ahead,
        served_at,
    };
    b.say(now, kind);
    Some(Next::Arrives(served_at))
}

/// How long a lock command takes to reach a lock service `rtt` away: half the round trip
/// (the reply takes the rest).
pub fn request_half(rtt: Millis) -> Millis {
    rtt / 2
}

/// A lock command's reply reaches the client `half` after the lock service ran it: the
/// client's next step (or its retry, whose timer starts then) waits for it.
fn after_reply(next: Next, half: Millis) -> Next {
    match next {
        Next::At(t) => Next::At(t.saturating_add(half)),
        Next::Again(t) => Next::Again(t.saturating_add(half)),
        other => other,
    }
}

/// The client gives up: it stops, and says so.
fn give_up<B: Backend>(b: &mut B, now: Millis) -> Next {
    b.state().cancel();
    b.say(now, EventKind::GaveUp);
    Next::Stop
}

/// The lock answered OK at `at`: the client's lease starts, and it says so.
pub fn granted<B: Backend>(
    b: &mut B,
    at: Millis,
    fence: Fence,
    expires_at: Millis,
    nodes: Vec<usize>,
    token_later: bool,
) {
    let st = b.state();
    st.fence = Some(fence);
    st.believes = true;
    st.grants += 1;
    // Its validity counts from when it asked (Redlock's rule), not from the grant it
    // hears of later: an earlier end than the lock service's.
    st.lease_from = Some(st.lock_sent.unwrap_or(at));
    b.granted(fence, expires_at);
    let kind = EventKind::Acquired {
        fence,
        expires_at,
        nodes,
        token_later,
    };
    b.say(at, kind);
}

fn acquire<B: Backend>(
    b: &mut B,
    sc: &Scenario,
    now: Millis,
    retry_every: Millis,
) -> Result<Next, B::Error> {
    Ok(match b.acquire(now)? {
        (Answer::Granted { fence, expires_at }, nodes) => {
            let token_later =
                sc.lock.token_source() == super::scenario::TokenSource::SeparateCounter;
            granted(b, now, fence, expires_at, nodes, token_later);
            if token_later {
                // The lease is granted; its token is a second command away.
                let st = b.state();
                st.fence = None;
                st.token_pending = true;
                return Ok(Next::Again(now.saturating_add(COUNTER_GAP)));
            }
            Next::At(now)
        }
        (Answer::Refused(by), _) if sc.lock.queue() => {
            // In the queue: no polling; the lock is handed over in arrival order.
            let event = |by: HeldBy| EventKind::LockWait { holder: by.holder };
            b.say_told(now, by, event, Seen::LockWait);
            Next::Wait
        }
        (Answer::Refused(by), nodes) => {
            let retry_in = retry_every;
            let seen = Seen::AcquireRefused {
                retry_in,
                nodes: nodes.clone(),
            };
            let event = |by: HeldBy| EventKind::AcquireRefused {
                holder: by.holder,
                until: Some(by.until),
                retry_in,
                nodes,
            };
            b.say_told(now, by, event, seen);
            Next::Again(now.saturating_add(retry_every))
        }
    })
}

/// A statement step under a row lock (acquire, commit); `None` when it is an ordinary step.
fn row_step<B: Backend>(b: &mut B, step: &Step, now: Millis) -> Result<Option<Next>, B::Error> {
    Ok(Some(match step {
        Step::Acquire { .. } => match b.lock_row(now)? {
            RowGrant::Locked {
                fence,
                expires_at,
                at,
            } => {
                granted(b, at, fence, expires_at, Vec::new(), false);
                Next::At(at)
            }
            RowGrant::Waits { holder } => {
                b.say(now, EventKind::LockWait { holder });
                Next::Wait
            }
            RowGrant::Lost => connection_lost(b, now),
        },
        Step::Release => match b.commit(now)? {
            // COMMIT: the transaction's writes are durable and its row lock is released.
            Some(fence) => {
                b.state().believes = false;
                let via = ReleaseMode::CompareAndDelete;
                b.say(now, EventKind::Released { fence, via });
                b.hand_over(now);
                Next::At(now)
            }
            None => connection_lost(b, now),
        },
        _ => return Ok(None),
    }))
}

/// The server terminated the client's session: the statement fails and it stops.
fn connection_lost<B: Backend>(b: &mut B, now: Millis) -> Next {
    b.state().cancel();
    b.say(now, EventKind::ConnectionLost);
    Next::Stop
}

/// A job-status read: a job not done goes on; a done one skips to the client's release (or
/// stops if it has none).
fn check_done<B: Backend>(
    b: &mut B,
    sc: &Scenario,
    me: usize,
    now: Millis,
) -> Result<Next, B::Error> {
    let Some(done) = b.job_done(now)? else {
        return Ok(connection_lost(b, now));
    };
    b.say(now, EventKind::JobChecked { done });
    if !done {
        return Ok(Next::At(now));
    }
    let from = b.state().pc;
    Ok(
        match sc.actors[me].script[from..]
            .iter()
            .position(|s| *s == Step::Release)
        {
            Some(i) => Next::Goto(from + i, now),
            None => {
                b.state().cancel();
                Next::Stop
            }
        },
    )
}

/// A debit or a publish under the client's token (skipped without one).
fn write<B: Backend>(
    b: &mut B,
    sc: &Scenario,
    me: usize,
    now: Millis,
    amount: i64,
    idempotency_key: Option<String>,
    publish: Option<String>,
) -> Result<Next, B::Error> {
    let Some(fence) = b.state().fence else {
        let reason = SkipReason::NoToken;
        b.say(now, EventKind::WriteSkipped { reason });
        return Ok(Next::At(now));
    };
    // Under a row lock the UPDATE runs in the lock holder's transaction: no token.
    let request = WriteRequest {
        resource: sc.resource.clone(),
        writer: sc.actors[me].name.clone(),
        fence: sc.lock.row().is_none().then_some(fence),
        amount,
        idempotency_key,
        publish,
    };
    send(b, sc, me, request, now)
}

/// Sends a write; if the backend says the request timeout gives up before the reply, the
/// client sets its timer for then.
fn send<B: Backend>(
    b: &mut B,
    sc: &Scenario,
    me: usize,
    request: WriteRequest,
    now: Millis,
) -> Result<Next, B::Error> {
    let st = b.state();
    st.last_write = Some(request.clone());
    st.wrote_at = Some(now);
    let fence = request.fence;
    let next = b.send(request, now)?;
    if let Next::AfterTimeout(at) = next {
        let arrives_at = now.saturating_add(sc.actors[me].network_delay);
        let on = Waiting::WriteReply {
            fence,
            sent_at: now,
            arrives_at,
        };
        set_timer(b, at, on);
    }
    Ok(next)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The client's own state says where its script goes and when it wakes; a driver only
    /// sleeps until then.
    #[test]
    fn a_step_s_next_moves_the_script_and_says_when_to_wake() {
        let mut st = ClientState::default();
        assert_eq!(st.follow(Next::At(5), 3), Wake::At(5));
        assert_eq!(st.follow(Next::Again(9), 3), Wake::At(9));
        assert_eq!(st.pc, 1, "the same step again");
        assert_eq!(st.follow(Next::AfterTimeout(12), 3), Wake::Timeout(12));
        assert_eq!(
            st.follow(Next::At(20), 3),
            Wake::Finished,
            "after its last step"
        );
        assert_eq!(st.follow(Next::Goto(1, 25), 3), Wake::At(25));
        assert_eq!(st.pc, 1);
        assert_eq!(st.follow(Next::Wait, 3), Wake::Outside);
        assert_eq!(st.follow(Next::Stop, 3), Wake::Stopped);
        assert_eq!(st.pc, 1, "waiting or stopping moves nothing");
    }
}
