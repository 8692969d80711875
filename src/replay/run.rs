//! One replay run: the scenario's actors as real threads with real time against real
//! servers. Each actor runs the core's own client steps ([`client::step`]) on its thread; its
//! [`Client`] is the [`Backend`] that sends their commands to the servers and reports their
//! answers.
//!
//! Time: scenario time `t` (ms) happens at `t · scale` real ms after the run's start. Events
//! the core orders at one instant keep that order inside the instant's slot (`slot` real ms,
//! centred on `t · scale`, one slot per scenario grain): a lease expires at −½ slot (its PX is
//! set so), a clock step at −0.42, a failover at −0.36, a delayed packet lands at −0.3, and an
//! actor's step at −0.2 + 0.45 · (when it was scheduled / t), i.e. first-scheduled first, as
//! the core's queue does. The last step of a slot is still ¼ slot before the next expiry.

use std::sync::{Mutex, MutexGuard, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use fencing_lab::core::client::{
    self, after_pauses, Acquired, Answer, Backend, ClientState, KeyValue, Next, Release, RowGrant,
    Wake,
};
use fencing_lab::core::{
    random_token, EventKind, Fence, FencingPolicy, LockCommand, Millis, Observation,
    ProviderOutcome, Refusal, Scenario, Seen, SplitMix64, StorageCheck, TokenSource, WriteError,
    WriteRequest, IDLE_IN_TRANSACTION_TIMEOUT,
};

use super::lock::{owner_of, Lock, Service};
use super::observed::{observe, Observed, Shared};
use super::pg::{applied, reply_to, Arg, Config, Error, Pg, SqlState};

/// Where in its slot each kind of event happens, in slots from the slot's centre.
pub const AT_EXPIRY: f64 = -0.5;
pub const AT_CLOCK_STEP: f64 = -0.42;
pub const AT_FAILOVER: f64 = -0.36;
pub const AT_DELIVERY: f64 = -0.3;
/// Where in its slot the UPDATE after a SELECT runs (`StorageCheck::ReadThenWrite`): a
/// delivered write's, then a step's.
const UPDATE_DELIVERED: f64 = 0.25;
const UPDATE_STEP: f64 = 0.45;
const STEPS_FROM: f64 = -0.2;
const STEPS_SPAN: f64 = 0.45;

/// Where the run's timing and servers are, and what its threads share.
pub struct Env<'a> {
    pub scale: f64,
    pub slot: f64,
    pub service: &'a dyn Service,
    pub pg: Config,
    pub schema: String,
    pub shared: Shared,
    /// The scenario's seeded randomness, one stream for all clients, drawn in the core's order.
    pub rng: Mutex<SplitMix64>,
    /// Scenario time 0, set once every client has connected (see [`Env::begin`]).
    pub start: OnceLock<Instant>,
}

impl Env<'_> {
    /// Real ms since the start at which scenario time `t` happens, shifted by `frac` slots.
    pub fn real_ms(&self, t: Millis, frac: f64) -> f64 {
        t as f64 * self.scale + frac * self.slot
    }

    /// Real ms since scenario time 0, negative before it.
    pub fn elapsed_ms(&self) -> f64 {
        let (now, start) = (Instant::now(), self.start.get().copied());
        let start = start.unwrap_or(now);
        match now.checked_duration_since(start) {
            Some(d) => d.as_secs_f64() * 1000.0,
            None => -(start - now).as_secs_f64() * 1000.0,
        }
    }

    /// Starts scenario time a little from now, once every client has its connections open,
    /// so no connection set-up eats into the schedule (t=0's steps run up to half a slot
    /// early).
    pub fn begin(&self) {
        let lead = Duration::from_secs_f64((50.0 + self.slot / 2.0) / 1000.0);
        let _ = self.start.set(Instant::now() + lead);
    }

    /// Sleeps until scenario time `t` (+ `frac` slots); returns how late it woke (real ms).
    pub fn sleep_until(&self, t: Millis, frac: f64) -> f64 {
        let target = self.real_ms(t, frac);
        let now = self.elapsed_ms();
        if target > now {
            thread::sleep(Duration::from_secs_f64((target - now) / 1000.0));
        }
        (self.elapsed_ms() - target).max(0.0)
    }

    /// The PX (real ms) that makes a lease granted now expire at scenario time `until`,
    /// half a slot early, so it has expired before anyone acts at `until` (as in the core).
    fn px_until(&self, until: Millis) -> u64 {
        (self.real_ms(until, AT_EXPIRY) - self.elapsed_ms()).max(1.0) as u64
    }
}

/// Storage's reply to a write landing at `t`: one call to its `apply`, or, where it checks
/// the fence with a SELECT and then an UPDATE, the SELECT now and the UPDATE late in the
/// instant's slot, after every SELECT of the instant (a delivery's at −0.3, a step's at most
/// +0.25), in the core's order: a delivered write's UPDATE first, a step's after it.
fn store(
    (env, pg, sc): (&Env, &mut Pg, &Scenario),
    w: &WriteRequest,
    live: bool,
    (t, delivered): (Millis, bool),
) -> Result<String, String> {
    let policy = sc.policy.code();
    let reply = match sc.check {
        StorageCheck::ReadThenWrite => {
            let between = |read| {
                let (selected, who) = (env.elapsed_ms(), &w.writer);
                let late = env.sleep_until(
                    t,
                    if delivered {
                        UPDATE_DELIVERED
                    } else {
                        UPDATE_STEP
                    },
                );
                let updated = env.elapsed_ms();
                let line = format!("{who}'s SELECT read fence {read} at {selected:.1} real ms; its UPDATE ran at {updated:.1} real ms ({late:.1} ms late)");
                observe(&env.shared).notes.push(line);
            };
            pg.write_read_first(w, policy, between)
        }
        _ => pg.write(w, policy, live),
    };
    reply.map_err(|e| e.to_string())
}

/// One client's connections: to the lock service, to the storage.
pub struct Client<'s, 'e> {
    env: &'s Env<'s>,
    sc: &'s Scenario,
    idx: usize,
    name: String,
    lock: Box<dyn Lock + 's>,
    pg: Pg,
    /// The value this client SETs as the lock's value and checks on release, extend and
    /// is_held: its name, or under `TokenSource::RandomValue` its current random value.
    me: String,
    /// The number of the lease it was granted last (its token, or a separate counter's
    /// lease number, or the row lock's grant): what its release lets go of.
    lease: Option<Fence>,
    /// Where a delayed write's thread runs (the actor's thread joins it before it ends).
    scope: &'s thread::Scope<'s, 'e>,
    /// The client's own state, as the core's steps keep it.
    state: ClientState,
    /// Delayed writes in flight, each on a thread of its own.
    packets: Vec<Packet<'s>>,
}

type Packet<'s> = thread::ScopedJoinHandle<'s, Result<(), String>>;

impl<'s> Client<'s, '_> {
    /// Records what this client saw at scenario time `at`, and what it believes right after.
    fn saw(&self, at: Millis, seen: impl Into<Seen>) {
        (self.observed()).saw_believing(at, self.idx, seen, self.state.believes);
    }

    /// A line of evidence about what this client did at scenario time `at`.
    fn said(&self, at: Millis, what: impl std::fmt::Display) {
        let line = format!("{} at t={at}: {what}", self.name);
        self.observed().notes.push(line);
    }

    /// A grant the client took: its token is among the run's, its evidence in the notes.
    fn took(&mut self, at: Millis, how: &str, fence: Fence) {
        self.observed().tokens.push(fence.0);
        self.said(at, format!("{how}; lease {}", fence.0));
        self.lease = Some(fence);
    }

    fn late(&self, ms: f64) {
        let mut o = self.observed();
        o.max_late_ms = o.max_late_ms.max(ms);
    }

    fn observed(&self) -> MutexGuard<'_, Observed> {
        observe(&self.env.shared)
    }

    /// The key's value, as a GET read or a DEL deleted it: another's token is the fold's.
    fn lock_value(&self, value: Option<String>) -> Result<KeyValue<()>, String> {
        Ok(match value {
            None => KeyValue::Empty,
            Some(v) if v == self.me => KeyValue::Own {
                owner: self.name.clone(),
                fence: self.own_lease()?,
            },
            Some(v) => KeyValue::Others {
                owner: owner_of(self.sc, &v),
                fence: (),
            },
        })
    }

    /// The lease a release let go of: the client's own last one.
    fn own_lease(&self) -> Result<Fence, String> {
        (self.lease).ok_or_else(|| format!("{} was never granted a lease", self.name))
    }

    /// The separate counter's next token: a PostgreSQL sequence, in its own store.
    fn next_token(&mut self) -> Result<u64, String> {
        Ok(self.pg.value::<i64>("SELECT nextval('tokens')", &[])? as u64)
    }

    /// The next grant's lease number (a separate counter's SET and a row lock carry none):
    /// one more than the run's last.
    fn next_lease(&self) -> Fence {
        Fence(self.sc.first_fence + self.observed().tokens.len() as u64)
    }

    /// Sends a write: now, or after the actor's network delay (the packet in flight). As in
    /// the core, the client then waits for the reply, unless its request timeout is shorter
    /// than the delay: then it gives up and carries on with its script while the packet, on
    /// a thread of its own, is still delivered and executed later (its reply cannot come
    /// before the timeout: it lands a grain or more after it).
    fn send_write(&mut self, w: WriteRequest, now: Millis) -> Result<Next, String> {
        let (actor, idx) = (&self.sc.actors[self.idx], self.idx);
        let (delay, arrives) = (actor.network_delay, now + actor.network_delay);
        if delay == 0 {
            let live = sequencer_check(self, &w, now)?;
            let on = (self.env, &mut self.pg, self.sc);
            let reply = store(on, &w, live.is_none_or(|l| l == w.fence), (now, false))?;
            let me = (idx, &w, self.state.grant(), Some(self.state.believes));
            let seen = applied(me, (now, now), &reply, live.flatten())?;
            self.observed().events.push(seen);
            return Ok(Next::At(now));
        }
        let (fence, amount, arrives_at) = (w.fence, w.amount, arrives);
        let sent = EventKind::WriteSent {
            fence,
            amount,
            arrives_at,
        };
        self.saw(now, sent);
        // The client's timer gives up then (it sets it on this answer).
        let timeout =
            (actor.request_timeout.filter(|t| *t < delay)).map(|t| after_pauses(actor, now + t));
        if arrives > self.sc.horizon {
            // Never delivered within the horizon.
            return Ok(timeout.map_or(Next::Stop, Next::AfterTimeout));
        }
        let packet = self.packet(w, now, arrives);
        let Some(at) = timeout else {
            if self.state.poll_wake().is_some_and(|at| at < arrives) {
                // A lock timer (a keep-alive's lease deadline) fires before the write
                // lands: the client's own thread must be free for it, as clientv3's is.
                self.packets.push(packet);
                return Ok(Next::At(arrives));
            }
            packet.join().map_err(|_| "packet thread panicked")??;
            return Ok(Next::At(arrives));
        };
        self.packets.push(packet);
        Ok(Next::AfterTimeout(at))
    }

    /// A delayed write in flight, on a thread (and a session) of its own, landing at `arrives`.
    fn packet(&self, w: WriteRequest, now: Millis, arrives: Millis) -> Packet<'s> {
        let (env, sc, idx, grant) = (self.env, self.sc, self.idx, self.state.grant());
        self.scope.spawn(move || {
            let mut pg = Pg::connect(&env.pg, &env.schema)?;
            let late = env.sleep_until(arrives, AT_DELIVERY);
            let reply = store((env, &mut pg, sc), &w, true, (arrives, true))?;
            let mut o = observe(&env.shared);
            o.max_late_ms = o.max_late_ms.max(late);
            let seen = applied((idx, &w, grant, None), (now, arrives), &reply, None)?;
            o.events.push(seen);
            Ok(())
        })
    }

    /// Statements in this client's session: their answer, or `None` if the session is gone,
    /// which the server says with SQLSTATE 25P03 (its idle-in-transaction timeout ended it).
    /// Any other error is the harness's failure.
    fn in_session<T>(
        &mut self,
        now: Millis,
        what: &str,
        sql: impl FnOnce(&mut Pg) -> Result<T, Error>,
    ) -> Result<Option<T>, String> {
        let e = match sql(&mut self.pg) {
            Ok(answer) => return Ok(Some(answer)),
            Err(e) => e,
        };
        let ended = SqlState::IDLE_IN_TRANSACTION_SESSION_TIMEOUT;
        let Some(d) = e.as_db_error().filter(|d| *d.code() == ended) else {
            let why = IDLE_IN_TRANSACTION_TIMEOUT;
            return Err(format!("{}: {what} failed without {why}: {e}", self.name));
        };
        let (code, message) = (d.code().code(), d.message());
        let gone = format!("its {what} failed with SQLSTATE {code} “{message}”");
        self.said(now, format!("{gone}: its connection is gone"));
        Ok(None)
    }
}

impl Backend for Client<'_, '_> {
    type Error = String;
    /// A real server's answers do not tell these facts: the fold derives them.
    type Told<T> = ();

    fn state(&mut self) -> &mut ClientState {
        &mut self.state
    }

    fn say(&mut self, at: Millis, kind: EventKind) {
        // A COMMIT (a queue's release) comes first on the server: a waiter's SELECT … FOR
        // UPDATE (its watch) returns only after it, though the waiter's thread may have
        // recorded its grant a moment sooner.
        let handover = self.sc.lock.row().is_some() || self.sc.lock.queue();
        let commit = handover && matches!(kind, EventKind::Released { .. });
        let (me, believes, mut o) = (self.idx, self.state.believes, self.observed());
        o.saw_believing(at, me, kind, believes);
        let waiter = |p: &Observation| {
            let other = p.actor.is_some_and(|a| a != me);
            p.at == at && other && matches!(p.seen, Seen::Event(EventKind::Acquired { .. }))
        };
        if let Some(i) = o.events.iter().position(waiter).filter(|_| commit) {
            o.events[i..].rotate_right(1);
        }
    }

    fn say_told<T>(&mut self, at: Millis, _: (), _: impl FnOnce(T) -> EventKind, seen: Seen) {
        self.saw(at, seen);
    }

    fn say_storage(&mut self, at: Millis, kind: EventKind) {
        self.saw(at, kind);
    }

    fn note(&mut self, what: impl FnOnce() -> String) {
        self.observed().notes.push(what());
    }

    fn with_rng<T>(&mut self, f: impl FnOnce(&mut SplitMix64) -> T) -> T {
        f(&mut self.env.rng.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn acquire(&mut self, now: Millis) -> Result<Acquired<()>, String> {
        let (sc, source) = (self.sc, self.sc.lock.token_source());
        let expires_at = now + sc.lease_ttl;
        let value = match source {
            TokenSource::RandomValue => {
                random_token(sc.seed, self.idx, self.state.grants).to_string()
            }
            _ => self.name.clone(),
        };
        let px = self.env.px_until(expires_at);
        let answer = self.lock.acquire(&sc.resource, &value, px)?;
        if !answer.granted {
            if !answer.nodes.is_empty() || sc.lock.queue() {
                self.said(now, &answer.how);
            }
            // Who holds it and until when is the fold's, from the grants it has seen.
            return Ok((Answer::Refused(()), answer.nodes));
        }
        let token = answer.token.or(value.parse().ok());
        let fence = match source {
            // SET NX PX alone: the grant carries no token, only the lease's own number.
            TokenSource::SeparateCounter => self.next_lease(),
            TokenSource::Counterfactual => Fence(self.next_token()?),
            _ => Fence(token.ok_or("a grant without a token")?),
        };
        self.took(now, &answer.how, fence);
        self.me = value;
        Ok((Answer::Granted { fence, expires_at }, answer.nodes))
    }

    fn take_token(&mut self, _now: Millis) -> Result<Fence, String> {
        // The second round trip: INCR on the separate counter (a sequence in its own store,
        // so it survives a Redis failover), for whoever asks.
        self.next_token().map(Fence)
    }

    fn is_held(&mut self, _now: Millis) -> Result<bool, String> {
        self.lock.holds(&self.sc.resource, &self.me)
    }

    fn extend(&mut self, now: Millis) -> Result<Option<(Millis, Vec<usize>)>, String> {
        let until = now + self.sc.lease_ttl;
        let px = self.env.px_until(until);
        let extended = self.lock.extend(&self.sc.resource, &self.me, px)?;
        Ok(extended.then(|| (until, self.lock.extended_on())))
    }

    fn release(&mut self, _now: Millis) -> Result<Release<()>, String> {
        // A noop's reason is the fold's.
        match self.lock.release(&self.sc.resource, &self.me)? {
            Ok(()) => Ok(Ok(self.own_lease()?)),
            Err(deleted) => Ok(Err(((), deleted))),
        }
    }

    fn read_lock(&mut self, _now: Millis) -> Result<KeyValue<()>, String> {
        let value = self.lock.value(&self.sc.resource)?;
        self.lock_value(value)
    }

    fn delete(&mut self, _now: Millis) -> Result<KeyValue<()>, String> {
        let deleted = self.lock.delete(&self.sc.resource)?;
        let stranger = |o| format!("{}'s DEL deleted {o:?}, a value no client set", self.name);
        match self.lock_value(deleted)? {
            KeyValue::Others { owner, .. } if self.sc.actor_index(&owner).is_none() => {
                Err(stranger(owner))
            }
            value => Ok(value),
        }
    }

    /// Where the world cut the client's server off, the command is sent to it for real, and
    /// must get no answer before the client's timer.
    fn unanswered(&mut self, command: LockCommand, sent_at: Millis, at: Millis) {
        let wait = Duration::from_secs_f64((at - sent_at) as f64 * self.env.scale / 1000.0);
        let Some(send) = self.lock.unanswered(command, wait) else {
            return;
        };
        let (env, name) = (self.env, self.name.clone());
        self.packets.push(self.scope.spawn(move || {
            let line = format!("{name} at t={sent_at}: {}", send()?);
            observe(&env.shared).notes.push(line);
            Ok(())
        }));
    }

    /// `BEGIN; SELECT … FOR UPDATE`: it blocks while another transaction holds the row. One
    /// that found the row held waited, and holds it from when that transaction ended (its
    /// COMMIT, or its end by the server's idle timeout); it must not have returned sooner.
    fn lock_row(&mut self, now: Millis) -> Result<RowGrant, String> {
        let held_until = self.observed().row.filter(|until| *until > now);
        let res = &self.sc.resource;
        let sql = "SELECT balance FROM accounts WHERE id = $1 FOR UPDATE";
        let select = |pg: &mut Pg| pg.batch("BEGIN").and_then(|()| pg.call::<i64>(sql, &[res]));
        let Some(_) = self.in_session(now, "SELECT … FOR UPDATE", select)? else {
            return Ok(RowGrant::Lost);
        };
        let at = held_until.and(self.observed().row).unwrap_or(now);
        if self.env.elapsed_ms() < self.env.real_ms(at, AT_EXPIRY) {
            return Err(format!(
                "{}: SELECT … FOR UPDATE returned before t={at}, when the row was free",
                self.name
            ));
        }
        if at > now {
            // For whom it waited is the fold's.
            self.saw(now, Seen::LockWait);
            let real = self.env.elapsed_ms();
            self.said(now, format!("its SELECT … FOR UPDATE waited for the row, and returned at t={at} ({real:.0} real ms after the start)"));
        }
        let expires_at = self.sc.idle_timeout().map_or(Millis::MAX, |t| at + t);
        self.observed().row = Some(expires_at);
        let fence = self.next_lease();
        self.observed().tokens.push(fence.0);
        self.lease = Some(fence);
        Ok(RowGrant::Locked {
            fence,
            expires_at,
            at,
        })
    }

    fn commit(&mut self, now: Millis) -> Result<Option<Fence>, String> {
        // The row is free from now on; a waiter's SELECT returns after the COMMIT.
        self.observed().row = Some(now);
        let commit = |pg: &mut Pg| pg.batch("COMMIT");
        match self.in_session(now, "COMMIT", commit)? {
            Some(()) => self.own_lease().map(Some),
            None => Ok(None),
        }
    }

    fn send(&mut self, w: WriteRequest, now: Millis) -> Result<Next, String> {
        if self.sc.lock.row().is_none() {
            return self.send_write(w, now);
        }
        // Row lock: the UPDATE in the lock holder's transaction (no token: policy off). On a
        // session the server terminated it fails with 25P03, and the client stops.
        let update = |pg: &mut Pg| pg.write(&w, FencingPolicy::Off.code(), true);
        let reply = self.in_session(now, "UPDATE", update)?;
        let reply = reply.unwrap_or_else(|| "session_ended".to_owned());
        let ended = reply == "session_ended";
        if ended {
            self.state.cancel(); // it got the FATAL: it stops believing, and stops
        }
        let me = (self.idx, &w, self.state.grant(), Some(self.state.believes));
        let seen = applied(me, (now, now), &reply, None)?;
        self.observed().events.push(seen);
        Ok(if ended { Next::Stop } else { Next::At(now) })
    }

    /// The storage's `apply` with nothing to change but the high-water mark.
    fn barrier(&mut self, fence: Fence, _now: Millis) -> Result<Result<(), WriteError>, String> {
        let (sc, tok) = (self.sc, fence.0 as i64);
        let (policy, on_results) = (sc.policy.code(), sc.publishes());
        let args: [Arg; 5] = [&policy, &sc.resource, &self.name, &tok, &on_results];
        let sql = "SELECT apply('barrier', $1, $2, $3, $4, 0, NULL, NULL, true, $5)";
        let reply: String = self.pg.value(sql, &args)?;
        Ok(match reply_to((Some(fence), None), (true, None), &reply)? {
            Ok(_) => Ok(()),
            Err(Refusal::StaleFence { token, last }) => Err(WriteError::StaleFence { token, last }),
            Err(r) => return Err(format!("storage answered a barrier {r:?}")),
        })
    }

    fn job_done(&mut self, now: Millis) -> Result<Option<bool>, String> {
        // A plain read of the storage; under a row lock, inside the transaction that holds
        // the row, where a terminated session fails it.
        let res = &self.sc.resource;
        let sql = "SELECT EXISTS (SELECT 1 FROM write_log WHERE account = $1 AND kind IN ('debit', 'publish') AND result = 'ok')";
        self.in_session(now, "status read", |pg| pg.call(sql, &[res]))
    }

    fn provider_call(
        &mut self,
        what: &str,
        idempotency_key: &str,
        _now: Millis,
    ) -> Result<ProviderOutcome, String> {
        // The provider is a table that never sees a token; it dedupes on the key (its
        // primary key), and is called only if this client's last claim row was accepted.
        let args: [Arg; 3] = [&self.name, &idempotency_key, &what];
        // Its answer is the outcome's own name (`charged`, `deduped`, `not_called`).
        let outcome: String = self.pg.value("SELECT provider_call($1, $2, $3)", &args)?;
        serde_json::from_value(outcome.into()).map_err(|e| format!("provider: {e}"))
    }

    fn side_effect(&mut self, what: &str, lease_live: bool, _now: Millis) -> Result<(), String> {
        // The outside system is a table that never sees a token: nothing can refuse it.
        let sql =
            "INSERT INTO side_effects (actor, what, lease_live) VALUES ($1, $2, $3) RETURNING 0";
        let args: [Arg; 3] = [&self.name, &what, &lease_live];
        self.pg.value::<i32>(sql, &args).map(drop)
    }
}

/// Runs one actor's script on this thread.
pub fn act(mut c: Client) -> Result<(), String> {
    let c = &mut c;
    let (env, sc, idx) = (c.env, c.sc, c.idx);
    let actor = &sc.actors[idx];
    let (mut t, mut scheduled_at, mut running) = (actor.start_at, 0, true);
    while running && c.state.pc < actor.script.len() {
        // A lock command on its way runs at the lock service even if its sender is paused.
        let woke = match c.state.lock_sent {
            Some(_) => t,
            None => after_pauses(actor, t),
        };
        let paused = woke != t;
        t = woke;
        let next = match c.state.poll_wake() {
            // The client's timer (a dropped renewal, a write's reply) fires first.
            Some(at) if at <= t => fire_timer(c, true, &mut scheduled_at)?,
            _ if t > sc.horizon => break,
            _ => {
                let frac = STEPS_FROM + STEPS_SPAN * scheduled_at as f64 / t.max(1) as f64;
                c.late(env.sleep_until(t, frac));
                if paused
                    && sc.lock.token_source() == TokenSource::LockService
                    && c.state.fence.is_some()
                {
                    // Evidence that a lock service's lease is a lease too: did the key
                    // outlive the pause?
                    let v = c.lock.value(&sc.resource)?;
                    c.said(t, format!("woke after its pause; the lock key holds {v:?}"));
                }
                if let Some(sent) = c.state.lock_sent.filter(|_| sc.lock.herd().is_some()) {
                    // Evidence of the stand-in for the fleet: the command went out only now.
                    let why =
                        "the lock service's queue behind the fleet's renewals (no fleet runs here)";
                    c.said(
                        t,
                        format!("its lock command, due at t={sent}, held back until now: {why}"),
                    );
                }
                scheduled_at = t;
                match client::step(c, sc, idx, t)? {
                    Next::Wait if sc.lock.queue() => queue_turn(c, t, &mut scheduled_at)?,
                    // No reply: the client waits for its timer, doing nothing else (none:
                    // for ever).
                    Next::Wait => fire_timer(c, true, &mut scheduled_at)?,
                    next => next,
                }
            }
        };
        running = match c.state.follow(next, actor.script.len()) {
            Wake::At(n) | Wake::Timeout(n) | Wake::Arrives(n) => {
                t = n;
                true
            }
            // The job ran to its end: a timer may still be set (below).
            Wake::Finished => break,
            Wake::Outside | Wake::Stopped => false,
        };
    }
    // The job is over (or stopped) with timers still set: they fire later, with nothing
    // left to cancel, as the simulator's do, up to the horizon.
    while c.state.poll_wake().is_some_and(|at| at <= sc.horizon) {
        fire_timer(c, false, &mut scheduled_at)?;
    }
    for p in std::mem::take(&mut c.packets) {
        p.join().map_err(|_| "packet thread panicked")??;
    }
    Ok(())
}

/// The client's next timer: sleeps until it fires (if it is within the horizon) and lets
/// the core's client say what follows.
fn fire_timer(c: &mut Client, running: bool, fired_at: &mut Millis) -> Result<Next, String> {
    let timer = c.state.timers.iter().min_by_key(|t| t.at).copied();
    let Some(timer) = timer.filter(|t| t.at <= c.sc.horizon) else {
        return Ok(Next::Stop); // none, or never within the horizon: it waits for ever
    };
    let at = timer.at;
    *fired_at = at;
    let frac = STEPS_FROM + STEPS_SPAN * timer.sent_at() as f64 / at as f64;
    c.late(c.env.sleep_until(at, frac));
    let (sc, idx) = (c.sc, c.idx);
    Ok(client::handle_timeout(c, sc, idx, at, running).unwrap_or(Next::Stop))
}

/// Fair queue: blocks until the lock service hands the client, queued at `asked`, the lock
/// (its watch fired), and takes it at the scenario instant whose slot that was in (a lease
/// ends half a slot early, steps run up to a quarter slot late). A release is the last step
/// of its slot, so the watch it fires may land just past the slot: then the grant is the
/// release's instant (its thread records it after its delete's reply: given a moment).
fn queue_turn(c: &mut Client, asked: Millis, fired_at: &mut Millis) -> Result<Next, String> {
    let (env, sc) = (c.env, c.sc);
    let answer = c.lock.wait_turn(&sc.resource)?;
    let slots = env.elapsed_ms() / env.slot;
    thread::sleep(Duration::from_secs_f64(0.1 * env.slot / 1000.0));
    let grain = (env.slot / env.scale) as Millis;
    let at = ((slots - 0.25).ceil().max(0.0) as Millis) * grain;
    let before = at.saturating_sub(grain);
    let other = |e: &&Observation| e.at == before && e.actor != Some(c.idx);
    let released = (c.observed().events.iter().filter(other))
        .any(|e| matches!(e.seen, Seen::Event(EventKind::Released { .. })));
    let at = if released { before } else { at }.max(asked);
    let fence = Fence(answer.token.ok_or("a queue grant without a token")?);
    c.took(at, &answer.how, fence);
    *fired_at = at;
    client::granted(c, at, fence, at + sc.lease_ttl, Vec::new(), false);
    Ok(Next::At(at))
}

/// Opens one client's connections; its delayed writes will run on threads of `scope`.
pub fn connect<'s, 'e>(
    env: &'s Env<'s>,
    sc: &'s Scenario,
    idx: usize,
    scope: &'s thread::Scope<'s, 'e>,
) -> Result<Client<'s, 'e>, String> {
    let mut pg = Pg::connect(&env.pg, &env.schema)?;
    if let Some(ttl) = sc.idle_timeout().filter(|_| sc.lock.row().is_some()) {
        // The server's own timer, in real ms: the scenario's TTL at this run's scale.
        let ms = (ttl as f64 * env.scale).round() as u64;
        let set = format!("SET idle_in_transaction_session_timeout = {ms}");
        pg.batch(&set).map_err(|e| format!("postgres: {e}"))?;
    }
    let (lock, name) = (env.service.connect(sc, idx)?, sc.actors[idx].name.clone());
    Ok(Client {
        env,
        sc,
        idx,
        me: name.clone(),
        name,
        lock,
        pg,
        lease: None,
        scope,
        state: ClientState::default(),
        packets: Vec::new(),
    })
}

/// The sequencer check, made by the harness acting as the resource, just before the write
/// reaches PostgreSQL: the lock service's live lease (`None` inside: none is live), which
/// must be the write's token. Asked only with fencing on (`None`: not asked); PostgreSQL
/// still applies the fencing rule first.
fn sequencer_check(
    c: &mut Client,
    w: &WriteRequest,
    now: Millis,
) -> Result<Option<Option<Fence>>, String> {
    let sc = c.sc;
    let asked = sc.check == StorageCheck::Sequencer && sc.policy.checks_fence();
    let Some(Fence(token)) = w.fence.filter(|_| asked) else {
        return Ok(None);
    };
    let live = c.lock.live_token(&sc.resource)?;
    let (res, shown) = (&sc.resource, live.map_or("none".into(), |r| r.to_string()));
    let verdict = match live == Some(token) {
        true => "its lease is the live one",
        false => "not the live lease",
    };
    c.said(now, format!("the resource asked the lock service for {res}'s live lease: token {shown}, the write's token {token}: {verdict}"));
    Ok(Some(live.map(Fence)))
}
