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

use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier, Mutex, MutexGuard, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use fencing_lab::core::client::{
    self, after_pauses, Backend, ClientState, LockValue, Next, Release, RowGrant,
};
use fencing_lab::core::{
    random_token, Acquire, EventKind, Fence, FencingPolicy, LockCommand, Millis, NoopReason,
    Observation, ProviderOutcome, Scenario, SplitMix64, StorageCheck, TokenSource, WriteError,
    WriteRequest, IDLE_IN_TRANSACTION_TIMEOUT,
};

use super::etcd::{Etcd, LockTxn};
use super::pg::{self, lit, opt_lit, Pg, PgAddr, SqlState};
use super::redis::{Redis, Reply, ReplyExt};

/// Where in its slot each kind of event happens, in slots from the slot's centre.
pub const AT_EXPIRY: f64 = -0.5;
pub const AT_CLOCK_STEP: f64 = -0.42;
pub const AT_FAILOVER: f64 = -0.36;
pub const AT_DELIVERY: f64 = -0.3;
const STEPS_FROM: f64 = -0.2;
const STEPS_SPAN: f64 = 0.45;

/// Who grants the lease, and so where the token comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockBackend {
    /// `SET key owner NX PX ttl` and `INCR fence:<key>` in one Lua script on one
    /// redis-server (`TokenSource::SameRedis`; the port can change at a failover).
    Redis,
    /// An etcd lease plus a create-if-absent transaction; the revision is the token
    /// (`TokenSource::LockService`).
    Etcd,
    /// Redlock over several redis-servers; the token is a separate counter's (a PostgreSQL
    /// sequence), Redlock itself mints none (`TokenSource::Counterfactual`).
    Redlock,
    /// No lock server: `SELECT … FOR UPDATE` on the account's row in the storage's own
    /// PostgreSQL, with `idle_in_transaction_session_timeout` (`Scenario::row_lock`). No token.
    RowLock,
}

/// Where the run's timing and servers are.
pub struct Env {
    pub scale: f64,
    pub slot: f64,
    pub lock: LockBackend,
    /// Port of the Redis that is the lock server right now.
    pub redis_port: Arc<AtomicU16>,
    /// The Redlock nodes' ports, by node number.
    pub nodes: Vec<u16>,
    pub etcd: Option<Etcd>,
    pub pg: PgAddr,
    pub schema: String,
    /// The file libfaketime reads the lock node's clock offset from (clock-jump runs).
    pub faketime: Option<std::path::PathBuf>,
    /// Scenario time 0, set once every thread has connected (see [`Env::ready`]).
    pub start: OnceLock<Instant>,
    /// Every actor thread and the world thread meet here before time starts.
    pub barrier: Barrier,
}

impl Env {
    /// Real ms since the start at which scenario time `t` happens, shifted by `frac` slots.
    pub fn real_ms(&self, t: Millis, frac: f64) -> f64 {
        t as f64 * self.scale + frac * self.slot
    }

    pub fn elapsed_ms(&self) -> f64 {
        signed_ms(self.start())
    }

    pub fn start(&self) -> Instant {
        self.start.get().copied().unwrap_or_else(Instant::now)
    }

    /// Waits until every thread has its connections open; then time starts a little later
    /// for all of them at once, so no connection set-up eats into the schedule.
    pub fn ready(&self) {
        if self.barrier.wait().is_leader() {
            let lead = 50.0 + self.slot / 2.0; // t=0's steps run up to half a slot early
            let _ = self
                .start
                .set(Instant::now() + Duration::from_secs_f64(lead / 1000.0));
        }
        self.barrier.wait();
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

/// Real ms since `start`, negative before it.
pub fn signed_ms(start: Instant) -> f64 {
    let now = Instant::now();
    match now.checked_duration_since(start) {
        Some(d) => d.as_secs_f64() * 1000.0,
        None => -(start - now).as_secs_f64() * 1000.0,
    }
}

/// What one run observed besides the storage's own tables.
#[derive(Debug, Default)]
pub struct Observed {
    /// Tokens granted, in grant order.
    pub tokens: Vec<u64>,
    /// Lines of evidence: failover, clock step, lease expiry seen on etcd, …
    pub notes: Vec<String>,
    /// Worst lateness of any action against its target time (real ms).
    pub max_late_ms: f64,
    /// What the clients saw and the harness did, in the order it happened: the recorded
    /// trace is folded from these ([`fencing_lab::core::recorded`]).
    pub events: Vec<Observation>,
    /// Leases granted so far (a separate counter's SET carries no number of its own).
    pub grants: u64,
}

impl Observed {
    pub fn saw(&mut self, at: Millis, actor: Option<usize>, kind: EventKind) {
        self.events.push(Observation {
            at,
            actor,
            kind,
            request: None,
        });
    }
}

/// A storage reply as the core's write result: `ok|balance`, `stale_fence|…`, … (The
/// high-water mark a stale token lost to is filled in by the fold.)
fn write_result(reply: &str, w: &WriteRequest) -> Result<Result<i64, WriteError>, String> {
    let mut f = reply.splitn(2, '|');
    let code = f.next().unwrap_or_default();
    let balance: i64 = f.next().and_then(|b| b.parse().ok()).unwrap_or(0);
    let token = w.fence.unwrap_or(Fence(0));
    Ok(match code {
        "ok" => Ok(balance),
        "stale_fence" => Err(WriteError::StaleFence {
            token,
            last: Fence(0),
        }),
        "missing_fence" => Err(WriteError::MissingFence),
        "stale_sequencer" => Err(WriteError::StaleSequencer { token, live: None }),
        "duplicate_intent" => Err(WriteError::DuplicateIntent {
            key: w.idempotency_key.clone().unwrap_or_default(),
            original_balance: balance,
        }),
        other => return Err(format!("storage answered {other:?}")),
    })
}

/// What storage did with a write, as an observation on the writer's behalf.
fn applied(
    idx: usize,
    w: &WriteRequest,
    sent_at: Millis,
    at: Millis,
    result: Result<i64, WriteError>,
) -> Observation {
    Observation {
        at,
        actor: Some(idx),
        kind: EventKind::WriteApplied {
            fence: w.fence,
            amount: w.amount,
            sent_at,
            result,
            superseded_by: None,
            highest_accepted: None,
            publish: w.publish.clone(),
        },
        request: Some(w.clone()),
    }
}

pub type Shared = Arc<Mutex<Observed>>;

/// What the run has observed so far, for one change (a thread that panicked holding it left
/// nothing half-written that matters here).
pub fn observe(shared: &Shared) -> MutexGuard<'_, Observed> {
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

const ACQUIRE_INCR: &str = "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return redis.call('INCR', KEYS[2]) end return false";
const RELEASE_CAD: &str =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";
const EXTEND_OWNED: &str = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0";

/// Key of the token counter next to the lock key.
pub fn fence_key(resource: &str) -> String {
    format!("fence:{resource}")
}

/// One client's connections: to the lock server (or the Redlock nodes it reaches), to etcd,
/// to the storage.
pub struct Client<'a> {
    env: &'a Env,
    sc: &'a Scenario,
    idx: usize,
    name: String,
    redis: Option<(u16, Redis)>,
    /// Redlock: a connection to each node this client reaches, by node number.
    nodes: Vec<(usize, Redis)>,
    pg: Pg,
    /// Row lock: a second session that watches this client's own in `pg_stat_activity`.
    observer: Option<Pg>,
    /// Row lock: this client's `application_name` (the run's schema and its name).
    app: String,
    /// The etcd lease of the lock we hold (etcd backend).
    lease: Option<i64>,
    /// The value this client SETs as the lock's value and checks on release, extend and
    /// is_held: its name, or under `TokenSource::RandomValue` its current random value.
    me: String,
    /// Grants this client has had (which random value it draws next).
    grants: usize,
    shared: Shared,
    /// The scenario's seeded randomness, one stream for all clients, drawn in the core's order.
    rng: &'a Mutex<SplitMix64>,
    /// The client's own state, as the core's steps keep it.
    state: ClientState,
    /// Delayed writes in flight, each on a thread of its own.
    packets: Vec<Packet>,
    /// A lock command with no reply: (the command, when it was sent, when the client's
    /// timeout gives up on it).
    timer: Option<(LockCommand, Millis, Millis)>,
}

impl Client<'_> {
    fn redis(&mut self) -> Result<&mut Redis, String> {
        let port = self.env.redis_port.load(Ordering::SeqCst);
        if self.redis.as_ref().is_none_or(|(p, _)| *p != port) {
            self.redis = Some((port, Redis::connect(port)?));
        }
        Ok(&mut self.redis.as_mut().ok_or("no redis")?.1)
    }

    fn etcd(&self) -> Result<Etcd, String> {
        self.env.etcd.clone().ok_or_else(|| "no etcd".to_owned())
    }

    fn eval(&mut self, script: &str, keys: &[&str], args: &[&str]) -> Result<Reply, String> {
        self.redis()?.eval(script, keys, args)
    }

    /// Redlock: nodes needed for the lock.
    fn majority(&self) -> usize {
        self.env.nodes.len() / 2 + 1
    }

    /// Takes the lease (until scenario time `now + ttl`) and a token; `None` if it is held.
    /// Under Redlock, also the nodes that answered OK.
    fn take_lease(&mut self, now: Millis) -> Result<(Option<u64>, Vec<usize>), String> {
        let sc = self.sc;
        let mut answered = Vec::new();
        let res = sc.resource.clone();
        let name = self.name.clone();
        let token = match self.env.lock {
            LockBackend::Redis if sc.token_source == TokenSource::RandomValue => {
                // The random value is the lock's value and the token: a plain SET NX PX,
                // no counter anywhere.
                let value = random_token(sc.seed, self.idx, self.grants).to_string();
                let px = self.env.px_until(now + sc.lease_ttl).to_string();
                if self
                    .redis()?
                    .cmd(&["SET", &res, &value, "NX", "PX", &px])?
                    .is_nil()
                {
                    None
                } else {
                    self.grants += 1;
                    self.record(format!(
                        "{name} at t={now}: SET {res} {value} NX PX {px} answered OK; the random value is its token"
                    ));
                    self.me = value.clone();
                    value.parse().ok()
                }
            }
            LockBackend::Redis => {
                let px = self.env.px_until(now + sc.lease_ttl).to_string();
                let r = self.eval(ACQUIRE_INCR, &[&res, &fence_key(&res)], &[&name, &px])?;
                let token = r.int().map(|t| t as u64);
                if let (Some(t), Some(_)) = (token, sc.failover_at) {
                    let port = self.env.redis_port.load(Ordering::SeqCst);
                    self.record(format!(
                        "{name} acquired at t={now} on :{port}; the acquire script's INCR gave token {t}"
                    ));
                }
                token
            }
            LockBackend::Redlock => {
                // SET NX PX on every node it reaches; a majority of OKs is the lock, otherwise
                // it deletes (compare-and-delete) the keys it did get.
                let px = self.env.px_until(now + sc.lease_ttl).to_string();
                let mut ok = Vec::new();
                for (n, r) in &mut self.nodes {
                    if !r.cmd(&["SET", &res, &name, "NX", "PX", &px])?.is_nil() {
                        ok.push(*n);
                    }
                }
                answered.clone_from(&ok);
                if ok.len() >= self.majority() {
                    let t = self.next_token()?;
                    self.record(format!(
                        "{name} at t={now}: Redlock SET NX PX answered OK on nodes {ok:?}, {} of {}: locked; the separate counter gives {t}",
                        ok.len(),
                        self.env.nodes.len()
                    ));
                    Some(t)
                } else {
                    for (n, r) in &mut self.nodes {
                        if ok.contains(n) {
                            r.eval(RELEASE_CAD, &[&res], &[&name])?;
                        }
                    }
                    self.record(format!(
                        "{name} at t={now}: Redlock SET NX PX answered OK on nodes {ok:?} only, {} of {}: no majority, deleted them again",
                        ok.len(),
                        self.env.nodes.len()
                    ));
                    None
                }
            }
            LockBackend::RowLock => {
                return Err("a row lock is taken by SELECT … FOR UPDATE".to_owned())
            }
            LockBackend::Etcd => {
                let etcd = self.etcd()?;
                let ttl_s = (sc.lease_ttl as f64 * self.env.scale / 1000.0).round() as u64;
                let lease = etcd.grant(ttl_s)?;
                match etcd.lock(&res, &name, lease)? {
                    LockTxn::Acquired { revision } => {
                        self.lease = Some(lease);
                        self.record(format!(
                            "{name} acquired at t={now}; etcd revision {revision} is its token"
                        ));
                        Some(revision)
                    }
                    LockTxn::Held => {
                        etcd.revoke(lease)?;
                        None
                    }
                }
            }
        };
        if let Some(t) = token {
            self.observed().tokens.push(t);
        }
        Ok((token, answered))
    }

    fn value(&mut self) -> Result<Option<String>, String> {
        let res = self.sc.resource.clone();
        match self.env.lock {
            LockBackend::Redis => Ok(self.redis()?.cmd(&["GET", &res])?.text()),
            LockBackend::Etcd => self.etcd()?.get(&res),
            LockBackend::Redlock => Err("GET on Redlock: not one value".to_owned()),
            LockBackend::RowLock => Err("GET on a row lock: there is no lock key".to_owned()),
        }
    }

    fn holds(&mut self) -> Result<bool, String> {
        if self.env.lock == LockBackend::Redlock {
            // Held while a majority of the nodes it reaches hold its value.
            let (res, name) = (self.sc.resource.clone(), self.name.clone());
            let mut mine = 0;
            for (_, r) in &mut self.nodes {
                mine += usize::from(r.cmd(&["GET", &res])?.text().as_deref() == Some(&name));
            }
            return Ok(mine >= self.majority());
        }
        Ok(self.value()?.as_deref() == Some(self.me.as_str()))
    }

    /// The ownership-checked extend script, to scenario time `now + ttl`.
    fn extend_lease(&mut self, now: Millis) -> Result<bool, String> {
        let res = self.sc.resource.clone();
        let name = self.me.clone();
        let px = self.env.px_until(now + self.sc.lease_ttl).to_string();
        if self.env.lock == LockBackend::Redlock {
            let mut ok = 0;
            for (_, r) in &mut self.nodes {
                ok += usize::from(r.eval(EXTEND_OWNED, &[&res], &[&name, &px])?.int() == Some(1));
            }
            return Ok(ok >= self.majority());
        }
        Ok(self.eval(EXTEND_OWNED, &[&res], &[&name, &px])?.int() == Some(1))
    }

    /// The compare-and-delete release: `Ok(Ok(()))` if it released our own lease, else
    /// `Ok(Err(nodes))` with the Redlock nodes where it still deleted a leftover key of ours.
    fn release_cad(&mut self) -> Result<Result<(), Vec<usize>>, String> {
        let res = self.sc.resource.clone();
        let name = self.me.clone();
        let released = |ok: bool| if ok { Ok(()) } else { Err(Vec::new()) };
        match self.env.lock {
            LockBackend::Redis => Ok(released(
                self.eval(RELEASE_CAD, &[&res], &[&name])?.int() == Some(1),
            )),
            LockBackend::Redlock => {
                // The script runs on every node it reaches; the lock was released only if
                // it still held it, i.e. a majority of its keys were there to delete.
                let mut deleted = Vec::new();
                for (n, r) in &mut self.nodes {
                    if r.eval(RELEASE_CAD, &[&res], &[&name])?.int() == Some(1) {
                        deleted.push(*n);
                    }
                }
                if deleted.len() >= self.majority() {
                    Ok(Ok(()))
                } else {
                    Ok(Err(deleted))
                }
            }
            LockBackend::RowLock => Err("a row lock is released by COMMIT".to_owned()),
            LockBackend::Etcd => {
                let etcd = self.etcd()?;
                let deleted = etcd.unlock(&res, &name)?;
                if let Some(l) = self.lease.take() {
                    etcd.revoke(l)?;
                }
                Ok(released(deleted))
            }
        }
    }

    /// The unconditional DEL of GET-then-DEL, as `GETDEL` so the log can say whose lease
    /// it deleted (same effect as `DEL`: no ownership check).
    fn del(&mut self) -> Result<Option<String>, String> {
        let res = self.sc.resource.clone();
        Ok(self.redis()?.cmd(&["GETDEL", &res])?.text())
    }

    /// Records what this client saw at scenario time `at`.
    fn saw(&self, at: Millis, kind: EventKind) {
        self.observed().saw(at, Some(self.idx), kind);
    }

    fn record(&self, s: String) {
        self.observed().notes.push(s);
    }

    fn late(&self, ms: f64) {
        let mut o = self.observed();
        o.max_late_ms = o.max_late_ms.max(ms);
    }
}

/// The statement that makes a write: the storage's `debit` or `publish` under `policy`.
/// `live`: the sequencer check's answer (the write's lease is the live one), or `None` when
/// the resource does not ask.
fn write_sql(policy: FencingPolicy, w: &WriteRequest, live: Option<bool>) -> String {
    let token = w
        .fence
        .map_or_else(|| "NULL".to_owned(), |t| t.0.to_string());
    let (policy, res, writer) = (lit(policy.code()), lit(&w.resource), lit(&w.writer));
    match &w.publish {
        Some(result) => format!(
            "SELECT publish({policy}, {res}, {writer}, {token}, {});",
            lit(result)
        ),
        None => format!(
            "SELECT debit({policy}, {res}, {writer}, {token}, {}, {}, {});",
            w.amount,
            opt_lit(w.idempotency_key.as_deref()),
            live.unwrap_or(true)
        ),
    }
}

/// The SQL to read whether the job is done: has any write landed?
fn job_done_sql(resource: &str) -> String {
    format!(
        "SELECT EXISTS (SELECT 1 FROM write_log WHERE account = {} AND kind IN ('debit', 'publish') AND result = 'ok');",
        lit(resource)
    )
}

type Packet = thread::JoinHandle<Result<(), String>>;

impl Client<'_> {
    fn observed(&self) -> MutexGuard<'_, Observed> {
        observe(&self.shared)
    }

    fn push(&self, o: Observation) {
        self.observed().events.push(o);
    }

    /// The separate counter's next token: a PostgreSQL sequence, in its own store.
    fn next_token(&mut self) -> Result<u64, String> {
        let t = self.pg.one("SELECT nextval('tokens');")?;
        t.parse().map_err(|_| format!("token sequence: {t}"))
    }

    /// The next grant's lease number (a separate counter's SET and a row lock carry none).
    fn next_lease(&self) -> Fence {
        let mut o = self.observed();
        o.grants += 1;
        Fence(self.sc.first_fence + o.grants - 1)
    }

    /// Sends a write: now, or after the actor's network delay on a thread of its own (the
    /// packet in flight). As in the core, the client then waits for the reply, unless its
    /// request timeout is shorter than the delay: then it waits that long, gives up and carries
    /// on with its script while the request is still delivered and executed later.
    fn send_write(&mut self, w: WriteRequest, now: Millis) -> Result<Next, String> {
        let actor = &self.sc.actors[self.idx];
        let delay = actor.network_delay;
        if delay == 0 {
            let live = sequencer_check(self, &w, now)?;
            let reply = self.pg.one(&write_sql(self.sc.policy, &w, live))?;
            let result = write_result(&reply, &w)?;
            self.push(applied(self.idx, &w, now, now, result));
            return Ok(Next::At(now));
        }
        let sql = write_sql(self.sc.policy, &w, None);
        let arrives = now + delay;
        let kind = EventKind::WriteSent {
            fence: w.fence,
            amount: w.amount,
            arrives_at: arrives,
        };
        self.saw(now, kind);
        let timeout = actor.request_timeout.filter(|t| *t < delay);
        if arrives > self.sc.horizon {
            // Never delivered within the horizon.
            return Ok(timeout.map_or(Next::Stop, |t| Next::AfterTimeout(now + t)));
        }
        let (addr, schema) = (self.env.pg.clone(), self.env.schema.clone());
        let target = self.env.real_ms(arrives, AT_DELIVERY);
        let start = self.env.start();
        let (shared, idx, sent) = (self.shared.clone(), self.idx, w.clone());
        let (tx, rx) = mpsc::channel();
        self.packets.push(thread::spawn(move || {
            let mut pg = Pg::connect(&addr, Some(&schema))?;
            let now_ms = signed_ms(start);
            if target > now_ms {
                thread::sleep(Duration::from_secs_f64((target - now_ms) / 1000.0));
            }
            let late = (signed_ms(start) - target).max(0.0);
            let reply = pg.one(&sql)?;
            let result = write_result(&reply, &sent)?;
            {
                let mut o = observe(&shared);
                o.max_late_ms = o.max_late_ms.max(late);
                o.events.push(applied(idx, &sent, now, arrives, result));
            }
            let _ = tx.send(reply); // the client may have stopped waiting
            Ok(())
        }));
        let Some(t) = timeout else {
            rx.recv()
                .map_err(|_| "the delayed write's thread failed".to_owned())?;
            return Ok(Next::At(arrives));
        };
        let deadline = self.env.real_ms(now + t, STEPS_FROM);
        let wait = (deadline - self.env.elapsed_ms()).max(0.0);
        match rx.recv_timeout(Duration::from_secs_f64(wait / 1000.0)) {
            Err(got) => {
                let kind = EventKind::WriteTimedOut {
                    fence: w.fence,
                    sent_at: now,
                    arrives_at: arrives,
                };
                self.saw(now + t, kind);
                if got == mpsc::RecvTimeoutError::Timeout {
                    self.record(format!(
                        "{} at t={}: no reply {t} ms after sending, the client gave up on its write (still in flight until t={arrives})",
                        self.name,
                        now + t
                    ));
                }
            }
            Ok(_) => self.record(format!(
                "{}: the reply came before its {t} ms timeout",
                self.name
            )),
        }
        Ok(Next::AfterTimeout(now + t))
    }

    /// Row lock: the UPDATE in the lock holder's transaction (no token: policy off). On a
    /// session the server terminated it fails with 25P03, and the client stops.
    fn send_in_transaction(&mut self, w: WriteRequest, now: Millis) -> Result<Next, String> {
        match self.pg.statement(&write_sql(FencingPolicy::Off, &w, None)) {
            Ok(rows) => {
                let result = write_result(&rows.concat(), &w)?;
                self.push(applied(self.idx, &w, now, now, result));
                Ok(Next::At(now))
            }
            Err(e) => {
                lost(self, now, "UPDATE", e)?;
                let result = Err(WriteError::SessionTerminated);
                self.push(applied(self.idx, &w, now, now, result));
                self.state.cancel();
                Ok(Next::Stop)
            }
        }
    }
}

impl Backend for Client<'_> {
    type Error = String;

    fn state(&mut self) -> &mut ClientState {
        &mut self.state
    }

    fn say(&mut self, at: Millis, kind: EventKind) {
        if self.env.lock == LockBackend::RowLock && matches!(kind, EventKind::Released { .. }) {
            // The COMMIT came first on the server: a waiter's SELECT … FOR UPDATE returns
            // only after it, though its thread may have recorded that a moment sooner.
            let mut o = self.observed();
            let waited = |o: &Observed, actor: Option<usize>| {
                o.events.iter().any(|p| {
                    p.actor == actor
                        && matches!(&p.kind, EventKind::LockWait { holder } if *holder == self.name)
                })
            };
            let first = o.events.iter().position(|p| {
                p.at == at
                    && p.actor != Some(self.idx)
                    && matches!(p.kind, EventKind::Acquired { .. })
                    && waited(&o, p.actor)
            });
            let seen = Observation {
                at,
                actor: Some(self.idx),
                kind,
                request: None,
            };
            match first {
                Some(i) => o.events.insert(i, seen),
                None => o.events.push(seen),
            }
            return;
        }
        self.saw(at, kind);
    }

    fn say_storage(&mut self, at: Millis, kind: EventKind) {
        self.saw(at, kind);
    }

    fn note(&mut self, what: impl FnOnce() -> String) {
        self.record(what());
    }

    fn with_rng<T>(&mut self, f: impl FnOnce(&mut SplitMix64) -> T) -> T {
        f(&mut self.rng.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn acquire(&mut self, now: Millis) -> Result<(Acquire, Vec<usize>), String> {
        let sc = self.sc;
        let expires_at = now + sc.lease_ttl;
        // Who holds it and until when: filled in by the fold from the grants it has seen.
        let held = Acquire::Held {
            holder: String::new(),
            expires_at: 0,
        };
        if sc.token_source == TokenSource::SeparateCounter {
            // SET NX PX alone: the grant carries no token, only the lease's own number.
            let (res, name) = (sc.resource.clone(), self.name.clone());
            let px = self.env.px_until(expires_at).to_string();
            let reply = self.redis()?.cmd(&["SET", &res, &name, "NX", "PX", &px])?;
            if reply.is_nil() {
                return Ok((held, Vec::new()));
            }
            let fence = self.next_lease();
            return Ok((Acquire::Acquired { fence, expires_at }, Vec::new()));
        }
        Ok(match self.take_lease(now)? {
            (Some(token), nodes) => {
                self.observed().grants += 1;
                let fence = Fence(token);
                (Acquire::Acquired { fence, expires_at }, nodes)
            }
            (None, nodes) => (held, nodes),
        })
    }

    fn take_token(&mut self, now: Millis) -> Result<Fence, String> {
        // The second round trip: INCR on the separate counter (a sequence in its own store,
        // so it survives a Redis failover), for whoever asks.
        let t = self.next_token()?;
        self.record(format!(
            "{} at t={now}: the separate counter gives {t}",
            self.name
        ));
        Ok(Fence(t))
    }

    fn is_held(&mut self, _now: Millis) -> Result<bool, String> {
        self.holds()
    }

    fn extend(&mut self, now: Millis) -> Result<Option<Millis>, String> {
        let extended = self.extend_lease(now)?;
        Ok(extended.then_some(now + self.sc.lease_ttl))
    }

    fn release(&mut self, _now: Millis) -> Result<Release, String> {
        // The lease's number and a noop's reason are filled in by the fold.
        Ok(self
            .release_cad()?
            .map(|()| Fence(0))
            .map_err(|deleted| (NoopReason::NeverHeld, deleted)))
    }

    fn read_lock(&mut self, _now: Millis) -> Result<LockValue, String> {
        let value = self.value()?;
        Ok(LockValue {
            mine: value.as_deref() == Some(self.me.as_str()),
            owner: value.map(|v| owner_of(self.sc, &v)),
            fence: None,
        })
    }

    fn delete(&mut self, now: Millis) -> Result<Option<LockValue>, String> {
        let Some(v) = self.del()? else {
            return Ok(None);
        };
        let mine = v == self.me;
        let owner = owner_of(self.sc, &v);
        if !mine {
            self.record(format!(
                "{} at t={now}: its unconditional DEL deleted {owner}'s live lease",
                self.name
            ));
        }
        Ok(Some(LockValue {
            owner: Some(owner),
            fence: None,
            mine,
        }))
    }

    fn expect_timeout(&mut self, command: LockCommand, sent_at: Millis, at: Millis) {
        if command == LockCommand::Renew {
            self.record(format!(
                "{} at t={sent_at}: cut off from Redis, its watchdog's renewal is never sent; the job works on",
                self.name
            ));
        }
        self.timer = Some((command, sent_at, at));
    }

    fn lock_row(&mut self, now: Millis) -> Result<RowGrant, String> {
        let (waited_for, reply) = lock_row(self, now)?;
        if let Err(e) = reply {
            lost(self, now, "SELECT … FOR UPDATE", e)?;
            return Ok(RowGrant::Lost);
        }
        let mut waited = waited_for.is_some();
        if !waited && scenario_now(self.env) > now {
            // It returned a grain or more later, though the watch saw no lock wait in time:
            // it waited all the same (the fold names the holder it waited behind).
            self.record(format!(
                "{} at t={now}: SELECT … FOR UPDATE returned late without a lock wait seen in pg_stat_activity",
                self.name
            ));
            let holder = String::new();
            self.saw(now, EventKind::LockWait { holder });
            waited = true;
        }
        let at = if waited {
            let at = scenario_now(self.env);
            self.record(format!(
                "{}: its SELECT … FOR UPDATE returned at t={at} ({:.0} real ms after the start)",
                self.name,
                self.env.elapsed_ms()
            ));
            at
        } else {
            now
        };
        Ok(RowGrant::Locked {
            fence: self.next_lease(),
            expires_at: self.sc.idle_timeout().map_or(Millis::MAX, |t| at + t),
            at,
        })
    }

    fn commit(&mut self, now: Millis) -> Result<Option<Fence>, String> {
        match self.pg.statement("COMMIT;") {
            Ok(_) => Ok(Some(Fence(0))), // the lease's number is the fold's to fill in
            Err(e) => {
                lost(self, now, "COMMIT", e)?;
                Ok(None)
            }
        }
    }

    fn send(&mut self, request: WriteRequest, now: Millis) -> Result<Next, String> {
        if self.env.lock == LockBackend::RowLock {
            self.send_in_transaction(request, now)
        } else {
            self.send_write(request, now)
        }
    }

    fn barrier(&mut self, fence: Fence, _now: Millis) -> Result<Result<(), WriteError>, String> {
        let sc = self.sc;
        let sql = format!(
            "SELECT barrier({}, {}, {}, {}, {});",
            lit(sc.policy.code()),
            lit(&sc.resource),
            lit(&self.name),
            fence.0,
            sc.publishes()
        );
        Ok(if self.pg.one(&sql)? == "ok" {
            Ok(())
        } else {
            Err(WriteError::StaleFence {
                token: fence,
                last: Fence(0),
            })
        })
    }

    fn job_done(&mut self, now: Millis) -> Result<Option<bool>, String> {
        // A plain read of the storage; under a row lock, inside the transaction that holds
        // the row, where a terminated session fails it.
        let done = match self.pg.statement(&job_done_sql(&self.sc.resource)) {
            Ok(rows) => rows.concat() == "t",
            Err(e) if self.env.lock == LockBackend::RowLock => {
                lost(self, now, "status read", e)?;
                return Ok(None);
            }
            Err(e) => return Err(format!("{}: status read: {e}", self.name)),
        };
        if done {
            self.record(format!(
                "{} at t={now}: read the job's status, found it done, skips to its release",
                self.name
            ));
        }
        Ok(Some(done))
    }

    fn provider_call(
        &mut self,
        what: &str,
        idempotency_key: &str,
        now: Millis,
    ) -> Result<ProviderOutcome, String> {
        // The provider is a table that never sees a token; it dedupes on the key (its
        // primary key). Called only if this client's last claim row was accepted.
        let claimed = self.pg.query(&format!(
            "SELECT result FROM write_log WHERE writer = {} AND kind = 'publish' ORDER BY seq DESC LIMIT 1;",
            lit(&self.name)
        ))?;
        if claimed.first().map(String::as_str) != Some("ok") {
            self.record(format!(
                "{} at t={now}: its claim row was refused, so it never calls the provider",
                self.name
            ));
            return Ok(ProviderOutcome::NotCalled);
        }
        let inserted = self.pg.query(&format!(
            "INSERT INTO provider_charges (idempotency_key, actor, what) VALUES ({}, {}, {}) ON CONFLICT (idempotency_key) DO NOTHING RETURNING actor;",
            lit(idempotency_key),
            lit(&self.name),
            lit(what)
        ))?;
        let (code, outcome) = if inserted.is_empty() {
            ("deduped", ProviderOutcome::Deduped)
        } else {
            ("charged", ProviderOutcome::Charged)
        };
        self.pg.query(&format!(
            "INSERT INTO provider_calls (actor, idempotency_key, outcome) VALUES ({}, {}, '{code}');",
            lit(&self.name),
            lit(idempotency_key)
        ))?;
        Ok(outcome)
    }

    fn side_effect(&mut self, what: &str, lease_live: bool, _now: Millis) -> Result<(), String> {
        // The outside system is a table that never sees a token: nothing can refuse it.
        self.pg.query(&format!(
            "INSERT INTO side_effects (actor, what, lease_live) VALUES ({}, {}, {lease_live});",
            lit(&self.name),
            lit(what)
        ))?;
        Ok(())
    }
}

/// Runs one actor's script on this thread.
pub fn run_actor(
    env: &Env,
    sc: &Scenario,
    idx: usize,
    shared: Shared,
    rng: &Mutex<SplitMix64>,
) -> Result<(), String> {
    let mut c = connect(env, sc, idx, shared, rng)?;
    let actor = &sc.actors[idx];
    let mut t = actor.start_at;
    let mut scheduled_at: Millis = 0;
    // When the actor finished its script or stopped (`None`: still going at the horizon).
    let mut done_at: Option<Millis> = None;
    let mut stopped = false;
    while c.state.pc < actor.script.len() {
        let woke = after_pauses(actor, t);
        let paused = woke != t;
        t = woke;
        if let Some(at) = c.timer.map(|(_, _, at)| at).filter(|at| *at <= t) {
            // A lock command's timeout (the watchdog's dropped renewal) fires first.
            done_at = Some(at);
            let next = fire_timer(&mut c, true)?;
            scheduled_at = at;
            if !follow(&mut c.state.pc, &mut t, next) {
                stopped = true;
                break;
            }
            continue;
        }
        if t > sc.horizon {
            break;
        }
        let frac = if t == 0 {
            STEPS_FROM
        } else {
            STEPS_FROM + STEPS_SPAN * scheduled_at as f64 / t as f64
        };
        let late = env.sleep_until(t, frac);
        c.late(late);
        if paused && env.lock == LockBackend::Etcd && c.state.fence.is_some() {
            // Evidence that etcd's lease is a lease too: did the key outlive the pause?
            let v = c.value()?;
            c.record(format!(
                "{} woke at t={t} after its pause; the etcd lock key now holds {v:?}",
                c.name
            ));
        }
        let mut next = client::step(&mut c, sc, idx, t)?;
        done_at = Some(t);
        scheduled_at = t;
        if next == Next::Wait {
            // No reply: the client waits for its timeout, doing nothing else (none: for ever).
            let Some(at) = c.timer.map(|(_, _, at)| at).filter(|at| *at <= sc.horizon) else {
                break;
            };
            next = fire_timer(&mut c, true)?;
            done_at = Some(at);
            scheduled_at = at;
        }
        if let Next::AfterTimeout(n) = next {
            scheduled_at = after_pauses(actor, n);
        }
        if !follow(&mut c.state.pc, &mut t, next) {
            stopped = true;
            break;
        }
        if c.state.pc < actor.script.len() {
            done_at = None;
        }
    }
    if !stopped && c.timer.is_some() {
        // The job finished (or stopped) with a renewal still unanswered: its timeout comes
        // later and has nothing left to cancel.
        fire_timer(&mut c, false)?;
    }
    saw_pauses(&c, done_at);
    for p in std::mem::take(&mut c.packets) {
        p.join()
            .map_err(|_| "packet thread panicked".to_owned())??;
    }
    Ok(())
}

/// Applies a step's [`Next`] to the client's place in its script and its clock; false when
/// it stops.
fn follow(pc: &mut usize, t: &mut Millis, next: Next) -> bool {
    match next {
        Next::At(n) | Next::AfterTimeout(n) => {
            *pc += 1;
            *t = n;
        }
        Next::Again(n) => *t = n,
        Next::Goto(to, n) => {
            *pc = to;
            *t = n;
        }
        Next::Wait | Next::Stop => return false,
    }
    true
}

/// The client's timeout on its unanswered lock command: waits for it (if it is within the
/// horizon) and lets the core's client decide what follows.
fn fire_timer(c: &mut Client, running: bool) -> Result<Next, String> {
    let Some((command, sent_at, at)) = c.timer.take() else {
        return Ok(Next::Stop);
    };
    if at > c.sc.horizon {
        return Ok(Next::Stop);
    }
    let late = c
        .env
        .sleep_until(at, STEPS_FROM + STEPS_SPAN * sent_at as f64 / at as f64);
    c.late(late);
    if command == LockCommand::Renew {
        c.record(format!(
            "{} at t={at}: no reply to the renewal it sent at t={sent_at}; its client gives up{}",
            c.name,
            if running {
                " and the job self-cancels"
            } else {
                ""
            }
        ));
    }
    let (sc, idx) = (c.sc, c.idx);
    Ok(client::lock_timed_out(
        c, sc, idx, command, sent_at, at, running,
    ))
}

/// Opens one client's connections (before time starts: see [`Env::ready`]).
fn connect<'a>(
    env: &'a Env,
    sc: &'a Scenario,
    idx: usize,
    shared: Shared,
    rng: &'a Mutex<SplitMix64>,
) -> Result<Client<'a>, String> {
    let actor = &sc.actors[idx];
    let app = format!("{}-{}", env.schema, actor.name);
    let (pg, observer) = if env.lock == LockBackend::RowLock {
        let mut pg = Pg::connect_as(&env.pg, &env.schema, &app)?;
        if let Some(ttl) = sc.idle_timeout() {
            // The server's own timer, in real ms: the scenario's TTL at this run's scale.
            let ms = (ttl as f64 * env.scale).round() as u64;
            pg.query(&format!("SET idle_in_transaction_session_timeout = {ms};"))?;
        }
        (Ok(pg), Some(Pg::connect(&env.pg, Some(&env.schema))?))
    } else {
        (Pg::connect(&env.pg, Some(&env.schema)), None)
    };
    let mut nodes = Vec::new();
    if env.lock == LockBackend::Redlock {
        let reach = sc
            .redlock
            .as_ref()
            .and_then(|r| r.reach.get(idx))
            .filter(|r| !r.is_empty())
            .cloned()
            .unwrap_or_else(|| (0..env.nodes.len()).collect());
        for n in reach {
            // A client simply never talks to a node it cannot reach.
            let port = *env.nodes.get(n).ok_or("redlock node out of range")?;
            nodes.push((n, Redis::connect(port)?));
        }
    }
    env.ready();
    Ok(Client {
        env,
        sc,
        idx,
        name: actor.name.clone(),
        redis: None,
        nodes,
        pg: pg?,
        observer,
        app,
        lease: None,
        me: actor.name.clone(),
        grants: 0,
        shared,
        rng,
        state: ClientState::default(),
        packets: Vec::new(),
        timer: None,
    })
}

/// The actor's pauses, as the harness made them: the thread simply did not act. A pause
/// that begins after the actor finished is no pause of its work; overlapping or touching
/// pauses read as one stall.
fn saw_pauses(c: &Client, done_at: Option<Millis>) {
    let actor = &c.sc.actors[c.idx];
    let mut pauses: Vec<_> = actor.pauses.iter().filter(|p| p.duration > 0).collect();
    pauses.sort_by_key(|p| p.start);
    let mut open: Option<Millis> = None; // end of the stall in progress
    for p in pauses {
        if p.start > c.sc.horizon || done_at.is_some_and(|d| p.start > d) && open.is_none() {
            continue;
        }
        match open {
            Some(end) if p.start <= end => open = Some(end.max(p.end())),
            _ => {
                if let Some(end) = open.filter(|e| *e <= c.sc.horizon) {
                    c.saw(end, EventKind::PauseEnded { lease_gone: false });
                }
                c.saw(
                    p.start,
                    EventKind::PauseStarted {
                        until: p.end(),
                        cause: actor.pause_cause,
                    },
                );
                open = Some(p.end());
            }
        }
    }
    if let Some(end) = open.filter(|e| *e <= c.sc.horizon) {
        c.saw(end, EventKind::PauseEnded { lease_gone: false });
    }
}

/// The sequencer check, made by the harness acting as the resource, just before the write
/// reaches PostgreSQL: is the lock key's create revision on etcd still this write's token?
/// (A lapsed lease's key is gone; a new holder's key has a newer create revision.) Asked
/// only with fencing on; PostgreSQL still applies the fencing rule first. `None`: not asked.
fn sequencer_check(c: &Client, w: &WriteRequest, now: Millis) -> Result<Option<bool>, String> {
    let sc = c.sc;
    let (true, Some(Fence(token))) = (
        sc.check == StorageCheck::Sequencer && sc.policy.checks_fence(),
        w.fence,
    ) else {
        return Ok(None);
    };
    let live = c.etcd()?.create_revision(&sc.resource)?;
    c.record(format!(
        "{} at t={now}: the resource asked etcd for {}'s lock key: create revision {}, the write's token {token}: {}",
        c.name,
        sc.resource,
        live.map_or_else(|| "none (no key)".to_owned(), |r| r.to_string()),
        if live == Some(token) { "its lease is the live one" } else { "not the live lease" }
    ));
    Ok(Some(live == Some(token)))
}

/// Whose lease a lock value is: the actor of that name, or under
/// `TokenSource::RandomValue` the actor that drew that value.
pub fn owner_of(sc: &Scenario, value: &str) -> String {
    if sc.actor_index(value).is_some() {
        return value.to_owned();
    }
    let drew = |i: usize| (0..64).any(|k| random_token(sc.seed, i, k).to_string() == value);
    (0..sc.actors.len())
        .find(|&i| drew(i))
        .map_or_else(|| value.to_owned(), |i| sc.actors[i].name.clone())
}

/// The scenario time of the grain nearest to now: when a blocked statement returned.
fn scenario_now(env: &Env) -> Millis {
    let grain = (env.slot / env.scale).round().max(1.0);
    ((env.elapsed_ms() / env.slot).round().max(0.0) * grain) as Millis
}

/// A statement failed: the session is gone if the server said so with SQLSTATE 25P03 (its
/// idle-in-transaction timeout terminated it); any other error is the harness's failure.
fn lost(c: &Client, now: Millis, what: &str, e: pg::Error) -> Result<(), String> {
    match e
        .as_db_error()
        .filter(|d| *d.code() == SqlState::IDLE_IN_TRANSACTION_SESSION_TIMEOUT)
    {
        Some(d) => {
            c.record(format!(
                "{} at t={now}: its {what} failed with SQLSTATE {} “{}”: its connection is gone",
                c.name,
                d.code().code(),
                d.message()
            ));
            Ok(())
        }
        None => Err(format!(
            "{}: {what} failed without {IDLE_IN_TRANSACTION_TIMEOUT}: {e}",
            c.name
        )),
    }
}

/// A session as `pg_stat_activity` shows it (`app` its application name): its state (with
/// " (for update)" once its query is the `SELECT … FOR UPDATE`), its wait event type and
/// whose sessions block it (their application names, without the run's `prefix`).
fn activity(
    observer: &mut Pg,
    app: &str,
    prefix: &str,
) -> Result<(String, String, Vec<String>), String> {
    let row = observer.one(&format!(
        "SELECT coalesce(a.state, '') || CASE WHEN a.query LIKE '%FOR UPDATE%' THEN ' (for update)' ELSE '' END || '|' || coalesce(a.wait_event_type, '') || '|' || coalesce((SELECT string_agg(b.application_name, ',') FROM pg_stat_activity b WHERE b.pid = ANY (pg_blocking_pids(a.pid))), '') FROM pg_stat_activity a WHERE a.application_name = {};",
        lit(app)
    ))?;
    let mut f = row.splitn(3, '|');
    let state = f.next().unwrap_or_default().to_owned();
    let wait = f.next().unwrap_or_default().to_owned();
    let blockers = f
        .next()
        .unwrap_or_default()
        .split(',')
        .filter(|b| !b.is_empty())
        .map(|b| b.strip_prefix(prefix).unwrap_or(b).to_owned())
        .collect();
    Ok((state, wait, blockers))
}

/// `BEGIN; SELECT … FOR UPDATE` on the client's session, which blocks while another
/// transaction holds the row: it runs on a thread of its own while this one watches the
/// session from outside until it either holds the row (idle in its transaction) or waits on
/// a lock, and behind whom (then recorded at `now`, while it still waits). Returns whom it
/// was seen waiting for, and the statement's outcome.
fn lock_row(
    c: &mut Client,
    now: Millis,
) -> Result<(Option<String>, Result<(), pg::Error>), String> {
    let sql = format!(
        "BEGIN; SELECT balance FROM accounts WHERE id = {} FOR UPDATE;",
        lit(&c.sc.resource)
    );
    let (env, shared, idx, name) = (c.env, c.shared.clone(), c.idx, c.name.clone());
    let prefix = format!("{}-", env.schema);
    let observer = c.observer.as_mut().ok_or("no observer session")?;
    let (pg, app) = (&mut c.pg, &c.app);
    thread::scope(|s| {
        let statement = s.spawn(|| pg.statement(&sql).map(|_| ()));
        let deadline = env.elapsed_ms() + env.slot / 4.0;
        let mut waited_for = None;
        while env.elapsed_ms() < deadline {
            let (state, wait, blockers) = activity(observer, app, &prefix)?;
            if state == "active (for update)" && wait == "Lock" && !blockers.is_empty() {
                let holder = blockers.join(",");
                let mut o = observe(&shared);
                o.notes.push(format!(
                    "{name} at t={now}: SELECT … FOR UPDATE waits on a Lock (pg_stat_activity), blocked by {holder} (pg_blocking_pids)"
                ));
                o.saw(
                    now,
                    Some(idx),
                    EventKind::LockWait {
                        holder: holder.clone(),
                    },
                );
                waited_for = Some(holder);
                break;
            }
            if state == "idle in transaction (for update)" {
                break; // it holds the row
            }
            thread::sleep(Duration::from_micros(500));
        }
        let reply = statement
            .join()
            .map_err(|_| "the SELECT … FOR UPDATE thread panicked".to_owned())?;
        Ok((waited_for, reply))
    })
}
