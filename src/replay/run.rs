//! One replay run: the scenario's actors as real threads with real time against real
//! servers. [`act`] is the one place a [`Step`] becomes real actions.
//!
//! Time: scenario time `t` (ms) happens at `t · scale` real ms after the run's start. Events
//! the core orders at one instant keep that order inside the instant's slot (`slot` real ms,
//! centred on `t · scale`, one slot per scenario grain): a lease expires at −½ slot (its PX is
//! set so), a clock step at −0.42, a failover at −0.36, a delayed packet lands at −0.3, and an
//! actor's step at −0.2 + 0.45 · (when it was scheduled / t), i.e. first-scheduled first, as
//! the core's queue does. The last step of a slot is still ¼ slot before the next expiry.

use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use fencing_lab::core::{
    client_elapsed, random_token, renewal_interval, Actor, EventKind, Fence, FencingPolicy,
    LockCommand, Millis, NoopReason, Observation, ProviderOutcome, ReleaseMode, Scenario,
    SkipReason, SplitMix64, Step, StorageCheck, TokenSource, WriteError, WriteRequest, COUNTER_GAP,
    GET_DEL_GAP, IDLE_IN_TRANSACTION_TIMEOUT,
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
fn write_result(reply: &str, w: &Write) -> Result<Result<i64, WriteError>, String> {
    let mut f = reply.splitn(2, '|');
    let code = f.next().unwrap_or_default();
    let balance: i64 = f.next().and_then(|b| b.parse().ok()).unwrap_or(0);
    let token = Fence(w.token.unwrap_or(0));
    Ok(match code {
        "ok" => Ok(balance),
        "stale_fence" => Err(WriteError::StaleFence {
            token,
            last: Fence(0),
        }),
        "missing_fence" => Err(WriteError::MissingFence),
        "stale_sequencer" => Err(WriteError::StaleSequencer { token, live: None }),
        "duplicate_intent" => Err(WriteError::DuplicateIntent {
            key: w.key.clone().unwrap_or_default(),
            original_balance: balance,
        }),
        other => return Err(format!("storage answered {other:?}")),
    })
}

/// What storage did with a write, as an observation on the writer's behalf.
fn applied(
    sc: &Scenario,
    idx: usize,
    w: &Write,
    sent_at: Millis,
    at: Millis,
    reply: &str,
) -> Result<Observation, String> {
    Ok(Observation {
        at,
        actor: Some(idx),
        kind: EventKind::WriteApplied {
            fence: w.token.map(Fence),
            amount: w.amount,
            sent_at,
            result: write_result(reply, w)?,
            superseded_by: None,
            highest_accepted: None,
            publish: w.publish.clone(),
        },
        request: Some(WriteRequest {
            resource: sc.resource.clone(),
            writer: sc.actors[idx].name.clone(),
            fence: w.token.map(Fence),
            amount: w.amount,
            idempotency_key: w.key.clone(),
            publish: w.publish.clone(),
        }),
    })
}

pub type Shared = Arc<Mutex<Observed>>;

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
struct Client<'a> {
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
}

impl Client<'_> {
    /// Whether this client is cut off from the lock service at scenario time `t`.
    fn cut_off(&self, t: Millis) -> bool {
        self.sc
            .partition
            .is_some_and(|p| p.actor == self.idx && p.contains(t))
    }

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
    fn acquire(&mut self, now: Millis) -> Result<(Option<u64>, Vec<usize>), String> {
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
                    self.note(format!(
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
                    self.note(format!(
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
                    let t: u64 = self
                        .pg
                        .one("SELECT nextval('tokens');")?
                        .parse()
                        .map_err(|_| "token sequence")?;
                    self.note(format!(
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
                    self.note(format!(
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
                        self.note(format!(
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
            self.shared
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .tokens
                .push(t);
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

    fn is_held(&mut self) -> Result<bool, String> {
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
    fn extend(&mut self, now: Millis) -> Result<bool, String> {
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
        self.shared
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .saw(at, Some(self.idx), kind);
    }

    fn note(&self, s: String) {
        self.shared
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .notes
            .push(s);
    }

    fn late(&self, ms: f64) {
        let mut o = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        o.max_late_ms = o.max_late_ms.max(ms);
    }
}

/// A write as the client sends it: a debit, or (with `publish`) the job's result.
#[derive(Debug, Clone)]
struct Write {
    token: Option<u64>,
    amount: i64,
    key: Option<String>,
    publish: Option<String>,
}

/// `live`: the sequencer check's answer (the write's lease is the live one), or `None` when
/// the resource does not ask.
fn write_sql(sc: &Scenario, writer: &str, w: &Write, live: Option<bool>) -> String {
    let token = w.token.map_or_else(|| "NULL".to_owned(), |t| t.to_string());
    match &w.publish {
        Some(result) => format!(
            "SELECT publish({}, {}, {}, {token}, {});",
            lit(policy_code(sc.policy)),
            lit(&sc.resource),
            lit(writer),
            lit(result)
        ),
        None => format!(
            "SELECT debit({}, {}, {}, {token}, {}, {}, {});",
            lit(policy_code(sc.policy)),
            lit(&sc.resource),
            lit(writer),
            w.amount,
            opt_lit(w.key.as_deref()),
            live.unwrap_or(true)
        ),
    }
}

pub fn policy_code(p: FencingPolicy) -> &'static str {
    p.code()
}

/// The actor's own state, as the engine keeps it.
#[derive(Default)]
struct State {
    pc: usize,
    token: Option<u64>,
    /// Separate counter: the SET answered OK, the INCR is still to come.
    token_pending: bool,
    last_write: Option<Write>,
    del_pending: bool,
    work_until: Option<Millis>,
    renew_due: Option<Millis>,
    /// When the lease was last granted or renewed: the client's local deadline counts from here.
    lease_from: Option<Millis>,
    /// The watchdog's renewal that a partition dropped: when it was sent, and when the
    /// client's timeout gives up on it.
    renew_sent: Option<(Millis, Millis)>,
    /// When the client last sent a write.
    wrote_at: Option<Millis>,
}

/// What a step leaves to do next.
enum Next {
    /// The next step at this scenario time.
    At(Millis),
    /// The same step again at this time (a refused acquire, the DEL half, a renewal).
    Again(Millis),
    /// Step number `pc` at this time (a job found done skips to its release).
    Goto(usize, Millis),
    /// The next step at this time, scheduled only then: the client's request timeout fired
    /// (the core queues the next step when the timeout fires, so it runs late in its slot).
    TimedOut(Millis),
    /// The actor stops (gave up, self-cancelled).
    Stop,
}

/// The step's start, pushed past any pause it falls into: a paused thread does not act.
fn past_pauses(actor: &Actor, t: Millis) -> Millis {
    let mut at = t;
    while let Some(p) = actor.pauses.iter().find(|p| p.contains(at)) {
        at = p.end();
    }
    at
}

/// Runs one actor's script on this thread.
pub fn run_actor(
    env: &Env,
    sc: &Scenario,
    idx: usize,
    shared: Shared,
    rng: &Mutex<SplitMix64>,
) -> Result<(), String> {
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
    let mut c = Client {
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
    };
    let mut st = State::default();
    let mut t = actor.start_at;
    let mut scheduled_at: Millis = 0;
    let mut packets = Vec::new();
    // When the actor finished its script or stopped (`None`: still going at the horizon).
    let mut done_at: Option<Millis> = None;
    let mut cancelled = false;
    while let Some(step) = actor.script.get(st.pc) {
        let woke = past_pauses(actor, t);
        let paused = woke != t;
        t = woke;
        if st.renew_sent.is_some_and(|(_, at)| at <= t) {
            // The watchdog gives up on its dropped renewal before this step: the job stops.
            let at = st.renew_sent.map_or(t, |(_, at)| at);
            renewal_timed_out(&c, &mut st, true);
            done_at = Some(at);
            cancelled = true;
            break;
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
        if paused && env.lock == LockBackend::Etcd && st.token.is_some() {
            // Evidence that etcd's lease is a lease too: did the key outlive the pause?
            let v = c.value()?;
            c.note(format!(
                "{} woke at t={t} after its pause; the etcd lock key now holds {v:?}",
                c.name
            ));
        }
        let next = act(&mut c, &mut st, step, t, rng, &mut packets)?;
        done_at = Some(t);
        scheduled_at = t;
        match next {
            Next::At(n) => {
                st.pc += 1;
                t = n;
            }
            Next::Again(n) => t = n,
            Next::Goto(pc, n) => {
                st.pc = pc;
                t = n;
            }
            Next::TimedOut(n) => {
                st.pc += 1;
                t = n;
                scheduled_at = past_pauses(actor, n);
            }
            Next::Stop => break,
        }
        if st.pc < actor.script.len() {
            done_at = None;
        }
    }
    if !cancelled {
        // The job finished (or stopped) with a renewal still unanswered: its timeout comes
        // later and has nothing left to cancel.
        renewal_timed_out(&c, &mut st, false);
    }
    saw_pauses(&c, done_at);
    for p in packets {
        p.join()
            .map_err(|_| "packet thread panicked".to_owned())??;
    }
    Ok(())
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

type Packet = thread::JoinHandle<Result<(), String>>;

/// Sends a write: now, or after the actor's network delay on a thread of its own (the
/// packet in flight). As in the core, the client then waits for the reply, unless its
/// request timeout is shorter than the delay: then it waits that long, gives up and carries
/// on with its script while the request is still delivered and executed later.
fn send(c: &mut Client, w: Write, now: Millis, packets: &mut Vec<Packet>) -> Result<Next, String> {
    let actor = &c.sc.actors[c.idx];
    let delay = actor.network_delay;
    if delay == 0 {
        let live = sequencer_check(c, &w, now)?;
        let sql = write_sql(c.sc, &c.name, &w, live);
        let reply = c.pg.one(&sql)?;
        let o = applied(c.sc, c.idx, &w, now, now, &reply)?;
        c.shared
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .events
            .push(o);
        return Ok(Next::At(now));
    }
    let sql = write_sql(c.sc, &c.name, &w, None);
    let arrives = now + delay;
    c.saw(
        now,
        EventKind::WriteSent {
            fence: w.token.map(Fence),
            amount: w.amount,
            arrives_at: arrives,
        },
    );
    let timeout = actor.request_timeout.filter(|t| *t < delay);
    if arrives > c.sc.horizon {
        // Never delivered within the horizon.
        return Ok(timeout.map_or(Next::Stop, |t| Next::TimedOut(now + t)));
    }
    let addr = c.env.pg.clone();
    let schema = c.env.schema.clone();
    let target = c.env.real_ms(arrives, AT_DELIVERY);
    let start = c.env.start();
    let shared = c.shared.clone();
    let (sc, idx, now_sent, sent) = (c.sc.clone(), c.idx, now, w.clone());
    let (tx, rx) = mpsc::channel();
    packets.push(thread::spawn(move || {
        let mut pg = Pg::connect(&addr, Some(&schema))?;
        let now = signed_ms(start);
        if target > now {
            thread::sleep(Duration::from_secs_f64((target - now) / 1000.0));
        }
        let late = (signed_ms(start) - target).max(0.0);
        {
            let mut o = shared.lock().unwrap_or_else(|e| e.into_inner());
            o.max_late_ms = o.max_late_ms.max(late);
        }
        let reply = pg.one(&sql)?;
        let o = applied(&sc, idx, &sent, now_sent, arrives, &reply)?;
        shared
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .events
            .push(o);
        let _ = tx.send(reply); // the client may have stopped waiting
        Ok(())
    }));
    match timeout {
        None => {
            rx.recv()
                .map_err(|_| "the delayed write's thread failed".to_owned())?;
            Ok(Next::At(arrives))
        }
        Some(t) => {
            let deadline = c.env.real_ms(now + t, STEPS_FROM);
            let wait = (deadline - c.env.elapsed_ms()).max(0.0);
            let got = rx.recv_timeout(Duration::from_secs_f64(wait / 1000.0));
            if got.is_err() {
                c.saw(
                    now + t,
                    EventKind::WriteTimedOut {
                        fence: w.token.map(Fence),
                        sent_at: now,
                        arrives_at: arrives,
                    },
                );
            }
            match got {
                Err(mpsc::RecvTimeoutError::Timeout) => c.note(format!(
                    "{} at t={}: no reply {t} ms after sending, the client gave up on its write (still in flight until t={arrives})",
                    c.name,
                    now + t
                )),
                _ => c.note(format!(
                    "{}: the reply came before its {t} ms timeout",
                    c.name
                )),
            }
            Ok(Next::TimedOut(now + t))
        }
    }
}

/// The sequencer check, made by the harness acting as the resource, just before the write
/// reaches PostgreSQL: is the lock key's create revision on etcd still this write's token?
/// (A lapsed lease's key is gone; a new holder's key has a newer create revision.) Asked
/// only with fencing on; PostgreSQL still applies the fencing rule first. `None`: not asked.
fn sequencer_check(c: &Client, w: &Write, now: Millis) -> Result<Option<bool>, String> {
    let sc = c.sc;
    let (true, Some(token)) = (
        sc.check == StorageCheck::Sequencer && sc.policy.checks_fence(),
        w.token,
    ) else {
        return Ok(None);
    };
    let live = c.etcd()?.create_revision(&sc.resource)?;
    c.note(format!(
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

/// The lock answered OK at `now`: the client's lease starts, and it says so.
fn granted(
    c: &Client,
    st: &mut State,
    now: Millis,
    fence: Fence,
    nodes: Vec<usize>,
    token_later: bool,
) {
    st.lease_from = Some(now);
    c.saw(
        now,
        EventKind::Acquired {
            fence,
            expires_at: now + c.sc.lease_ttl,
            nodes,
            token_later,
        },
    );
}

fn refused(retry_in: Millis, nodes: Vec<usize>) -> EventKind {
    // Who holds it and until when: filled in by the fold from the grants it has seen.
    EventKind::AcquireRefused {
        holder: String::new(),
        until: 0,
        retry_in,
        nodes,
    }
}

fn skipped(reason: SkipReason) -> EventKind {
    EventKind::WriteSkipped { reason }
}

fn extend_failed(watchdog: bool) -> EventKind {
    EventKind::ExtendFailed {
        watchdog,
        lease_ended_at: None,
    }
}

fn released(via: ReleaseMode) -> EventKind {
    // The lease's number is filled in by the fold (a separate counter's token is not it).
    EventKind::Released {
        fence: Fence(0),
        via,
    }
}

/// A release that released nothing; `deleted`: the Redlock nodes where it still deleted its
/// own leftover key.
fn noop(via: ReleaseMode, deleted: Vec<usize>) -> EventKind {
    EventKind::ReleaseNoop {
        via,
        reason: NoopReason::NeverHeld,
        deleted,
    }
}

/// A lock command in the partition: the harness, being the cut-off client, never gets it to
/// Redis (nothing is sent) and waits for the reply until its own timeout, doing nothing
/// else. Then, as the engine: an acquire is tried again, a release given up on, an extend or
/// is_held check stops the job.
fn unanswered(
    c: &mut Client,
    st: &mut State,
    command: LockCommand,
    step: &Step,
    now: Millis,
) -> Result<Next, String> {
    let timeout = c.sc.actors[c.idx].lock_timeout;
    let timeout_at = timeout.map(|t| now + t);
    c.saw(
        now,
        EventKind::LockUnanswered {
            command,
            timeout_at,
        },
    );
    let Some(at) = timeout_at else {
        return Ok(Next::Stop); // no timeout: it waits for ever
    };
    if at > c.sc.horizon {
        return Ok(Next::Stop);
    }
    let late = c
        .env
        .sleep_until(at, STEPS_FROM + STEPS_SPAN * now as f64 / at as f64);
    c.late(late);
    let cancelled = matches!(command, LockCommand::Extend | LockCommand::CheckHeld);
    c.saw(
        at,
        EventKind::LockTimedOut {
            command,
            sent_at: now,
            cancelled,
            wrote_at: st.wrote_at,
            lease_ended_at: None,
        },
    );
    Ok(match (command, step) {
        (LockCommand::Acquire, Step::Acquire { retry_every }) => Next::Again(at + retry_every),
        (LockCommand::Release, _) => {
            st.del_pending = false;
            Next::TimedOut(at)
        }
        _ => Next::Stop,
    })
}

/// The watchdog's timeout on its dropped renewal, at `at`: the job self-cancels if it is still
/// running (`running`), as in the engine.
fn renewal_timed_out(c: &Client, st: &mut State, running: bool) {
    let Some((sent_at, at)) = st.renew_sent.take() else {
        return;
    };
    if at > c.sc.horizon {
        return;
    }
    let late = c
        .env
        .sleep_until(at, STEPS_FROM + STEPS_SPAN * sent_at as f64 / at as f64);
    c.late(late);
    c.saw(
        at,
        EventKind::LockTimedOut {
            command: LockCommand::Renew,
            sent_at,
            cancelled: running,
            wrote_at: st.wrote_at,
            lease_ended_at: None,
        },
    );
    c.note(format!(
        "{} at t={at}: no reply to the renewal it sent at t={sent_at}; its client gives up{}",
        c.name,
        if running {
            " and the job self-cancels"
        } else {
            ""
        }
    ));
}

/// THE interpretation of a scenario step as real actions, mirroring the engine's `step`.
fn act(
    c: &mut Client,
    st: &mut State,
    step: &Step,
    now: Millis,
    rng: &Mutex<SplitMix64>,
    packets: &mut Vec<Packet>,
) -> Result<Next, String> {
    let sc = c.sc;
    if c.env.lock == LockBackend::RowLock {
        return act_row(c, st, step, now);
    }
    if let Some(command) = LockCommand::sent_by(step).filter(|_| c.cut_off(now)) {
        return unanswered(c, st, command, step, now);
    }
    Ok(match step {
        Step::Acquire { .. } if st.token_pending => {
            // The second round trip: INCR on the separate counter (a sequence in its own
            // store, so it survives a Redis failover), for whoever asks.
            let t: u64 =
                c.pg.one("SELECT nextval('tokens');")?
                    .parse()
                    .map_err(|_| "token sequence")?;
            c.note(format!(
                "{} at t={now}: the separate counter gives {t}",
                c.name
            ));
            c.saw(now, EventKind::TokenTaken { fence: Fence(t) });
            st.token_pending = false;
            st.token = Some(t);
            Next::At(now)
        }
        Step::Acquire { retry_every } if sc.token_source == TokenSource::SeparateCounter => {
            // SET NX PX alone: the grant carries no token.
            let (res, name) = (sc.resource.clone(), c.name.clone());
            let px = c.env.px_until(now + sc.lease_ttl).to_string();
            if c.redis()?
                .cmd(&["SET", &res, &name, "NX", "PX", &px])?
                .is_nil()
            {
                c.saw(now, refused(*retry_every, Vec::new()));
                Next::Again(now + retry_every)
            } else {
                // The lease's own number: the grants so far (the SET carries none).
                let lease = {
                    let mut o = c.shared.lock().unwrap_or_else(|e| e.into_inner());
                    o.grants += 1;
                    sc.first_fence + o.grants - 1
                };
                granted(c, st, now, Fence(lease), Vec::new(), true);
                st.token = None;
                st.token_pending = true;
                Next::Again(now + COUNTER_GAP)
            }
        }
        Step::Acquire { retry_every } => match c.acquire(now)? {
            (Some(token), nodes) => {
                c.shared.lock().unwrap_or_else(|e| e.into_inner()).grants += 1;
                granted(c, st, now, Fence(token), nodes, false);
                st.token = Some(token);
                Next::At(now)
            }
            (None, nodes) => {
                c.saw(now, refused(*retry_every, nodes));
                Next::Again(now + retry_every)
            }
        },
        Step::Work { ms } => Next::At(now + ms),
        Step::CheckHeld => {
            let held = c.is_held()?;
            c.saw(now, EventKind::Checked { held });
            if held {
                Next::At(now)
            } else {
                c.saw(now, EventKind::GaveUp);
                Next::Stop
            }
        }
        Step::CheckDeadline => {
            // The client's own clock: the harness is the client, so it reads scenario time and
            // runs it `client_drift` per mille slow, as a slow clock would. No server sees it.
            let since = now.saturating_sub(st.lease_from.unwrap_or(now));
            let local = client_elapsed(since, sc.client_drift);
            let deadline = sc.lease_ttl.saturating_sub(sc.deadline_margin);
            let ok = local < deadline;
            c.saw(
                now,
                EventKind::DeadlineChecked {
                    local,
                    deadline,
                    ok,
                },
            );
            if ok {
                Next::At(now)
            } else {
                c.saw(now, EventKind::GaveUp);
                Next::Stop
            }
        }
        Step::CheckDone => {
            // The job's status is a plain read of the storage: has any write landed?
            let done = c.pg.one(&format!(
                "SELECT EXISTS (SELECT 1 FROM write_log WHERE account = {} AND kind IN ('debit', 'publish') AND result = 'ok');",
                lit(&sc.resource)
            ))? == "t";
            c.saw(now, EventKind::JobChecked { done });
            if done {
                c.note(format!(
                    "{} at t={now}: read the job's status, found it done, skips to its release",
                    c.name
                ));
            }
            after_status(done, &sc.actors[c.idx].script, st.pc, now)
        }
        Step::Debit {
            amount,
            idempotency_key,
        } => match st.token {
            None => {
                c.saw(now, skipped(SkipReason::NoToken));
                Next::At(now)
            }
            Some(_) => {
                let w = Write {
                    token: st.token,
                    amount: *amount,
                    key: idempotency_key.clone(),
                    publish: None,
                };
                st.last_write = Some(w.clone());
                st.wrote_at = Some(now);
                send(c, w, now, packets)?
            }
        },
        Step::ProviderCall {
            what,
            idempotency_key,
        } => {
            // The provider is a table that never sees a token; it dedupes on the key (its
            // primary key). Called only if this client's last claim row was accepted.
            let claimed = c.pg.query(&format!(
                "SELECT result FROM write_log WHERE writer = {} AND kind = 'publish' ORDER BY seq DESC LIMIT 1;",
                lit(&c.name)
            ))?;
            let lease_live = c.is_held()?;
            let call = |outcome| EventKind::ProviderCall {
                what: what.clone(),
                idempotency_key: idempotency_key.clone(),
                outcome,
                lease_live,
            };
            if claimed.first().map(String::as_str) != Some("ok") {
                c.note(format!(
                    "{} at t={now}: its claim row was refused, so it never calls the provider",
                    c.name
                ));
                c.saw(now, call(ProviderOutcome::NotCalled));
                c.saw(now, EventKind::GaveUp);
                Next::Stop
            } else {
                let inserted = c.pg.query(&format!(
                    "INSERT INTO provider_charges (idempotency_key, actor, what) VALUES ({}, {}, {}) ON CONFLICT (idempotency_key) DO NOTHING RETURNING actor;",
                    lit(idempotency_key),
                    lit(&c.name),
                    lit(what)
                ))?;
                let (outcome, seen) = if inserted.is_empty() {
                    ("deduped", ProviderOutcome::Deduped)
                } else {
                    ("charged", ProviderOutcome::Charged)
                };
                c.saw(now, call(seen));
                c.pg.query(&format!(
                    "INSERT INTO provider_calls (actor, idempotency_key, outcome) VALUES ({}, {}, '{outcome}');",
                    lit(&c.name),
                    lit(idempotency_key)
                ))?;
                Next::At(now)
            }
        }
        // A claim row is the same conditional write as a publish, made before an outside call.
        Step::Publish { result } | Step::Claim { what: result } => match st.token {
            None => {
                c.saw(now, skipped(SkipReason::NoToken));
                Next::At(now)
            }
            Some(_) => {
                let w = Write {
                    token: st.token,
                    amount: 0,
                    key: None,
                    publish: Some(result.clone()),
                };
                st.last_write = Some(w.clone());
                st.wrote_at = Some(now);
                send(c, w, now, packets)?
            }
        },
        Step::Retry => match st.last_write.clone() {
            Some(w) => {
                c.saw(
                    now,
                    EventKind::Retried {
                        fence: w.token.map(Fence),
                        amount: w.amount,
                        idempotency_key: w.key.clone(),
                    },
                );
                st.wrote_at = Some(now);
                send(c, w, now, packets)?
            }
            None => {
                c.saw(now, skipped(SkipReason::NothingToRetry));
                Next::At(now)
            }
        },
        Step::Extend => {
            if c.extend(now)? {
                st.lease_from = Some(now);
                c.saw(
                    now,
                    EventKind::Extended {
                        fence: Fence(st.token.unwrap_or(0)),
                        expires_at: now + sc.lease_ttl,
                        watchdog: None,
                    },
                );
                Next::At(now)
            } else {
                c.saw(now, extend_failed(false));
                Next::Stop
            }
        }
        Step::WorkRenewing { ms } => {
            let schedule = |st: &mut State, until: Millis| {
                let mut r = rng.lock().unwrap_or_else(|e| e.into_inner());
                let due = now + renewal_interval(sc.lease_ttl, Some(&mut r));
                if due < until && st.renew_sent.is_none() {
                    st.renew_due = Some(due);
                    Next::Again(due)
                } else {
                    st.renew_due = None;
                    Next::Again(until.max(now))
                }
            };
            match st.work_until {
                None => {
                    let until = now + ms;
                    st.work_until = Some(until);
                    schedule(st, until)
                }
                Some(until) => {
                    let mut renew = st.renew_due.is_some_and(|d| d <= now);
                    if renew && until <= now {
                        // Woken with the work done and a renewal overdue: worker and watchdog
                        // race. The coin is the core's: the same seeded stream, in order.
                        let coin = rng.lock().unwrap_or_else(|e| e.into_inner()).next_u64();
                        let worker_first = coin % 2 == 0;
                        c.note(format!(
                            "{} at t={now}: woke with its work done and a renewal overdue; the seeded race puts the {} first",
                            c.name,
                            if worker_first { "worker" } else { "watchdog" }
                        ));
                        c.saw(now, EventKind::ResumeRace { worker_first });
                        renew = !worker_first;
                    }
                    if !renew {
                        st.work_until = None;
                        st.renew_due = None;
                        Next::At(now)
                    } else if c.cut_off(now) {
                        // The partition drops the renewal: nothing is sent to Redis, no reply
                        // comes, and the worker carries on while the client waits.
                        let timeout_at = sc.actors[c.idx].lock_timeout.map(|t| now + t);
                        st.renew_due = None;
                        st.renew_sent = Some((now, timeout_at.unwrap_or(Millis::MAX)));
                        c.saw(
                            now,
                            EventKind::LockUnanswered {
                                command: LockCommand::Renew,
                                timeout_at,
                            },
                        );
                        c.note(format!(
                            "{} at t={now}: cut off from Redis, its watchdog's renewal is never sent; the job works on",
                            c.name
                        ));
                        Next::Again(until.max(now))
                    } else if c.extend(now)? {
                        let next = schedule(st, until);
                        st.lease_from = Some(now);
                        c.saw(
                            now,
                            EventKind::Extended {
                                fence: Fence(st.token.unwrap_or(0)),
                                expires_at: now + sc.lease_ttl,
                                watchdog: Some(st.renew_due),
                            },
                        );
                        next
                    } else {
                        c.saw(now, extend_failed(true));
                        c.note(format!(
                            "{} at t={now}: the watchdog's extend script answered 0 (not the holder); the job self-cancels",
                            c.name
                        ));
                        Next::Stop
                    }
                }
            }
        }
        Step::Barrier if sc.skip_barrier => Next::At(now),
        Step::Barrier => match st.token {
            None => {
                c.saw(now, skipped(SkipReason::NoToken));
                Next::At(now)
            }
            Some(tok) => {
                let sql = format!(
                    "SELECT barrier({}, {}, {}, {tok}, {});",
                    lit(policy_code(sc.policy)),
                    lit(&sc.resource),
                    lit(&c.name),
                    sc.publishes()
                );
                let ok = c.pg.one(&sql)? == "ok";
                let fence = Fence(tok);
                let result = if ok {
                    Ok(())
                } else {
                    Err(WriteError::StaleFence {
                        token: fence,
                        last: Fence(0),
                    })
                };
                c.saw(now, EventKind::BarrierSet { fence, result });
                if ok {
                    Next::At(now)
                } else {
                    c.saw(now, EventKind::GaveUp);
                    Next::Stop
                }
            }
        },
        Step::SideEffect { what } => {
            // The outside system is a table that never sees a token: nothing can refuse it.
            let held = c.is_held()?;
            c.pg.query(&format!(
                "INSERT INTO side_effects (actor, what, lease_live) VALUES ({}, {}, {held});",
                lit(&c.name),
                lit(what)
            ))?;
            c.saw(
                now,
                EventKind::SideEffect {
                    what: what.clone(),
                    lease_live: held,
                },
            );
            Next::At(now)
        }
        Step::Release => match sc.release {
            ReleaseMode::CompareAndDelete => {
                let via = ReleaseMode::CompareAndDelete;
                match c.release_cad()? {
                    Ok(()) => c.saw(now, released(via)),
                    Err(deleted) => c.saw(now, noop(via, deleted)),
                }
                Next::At(now)
            }
            ReleaseMode::GetThenDel if !st.del_pending => {
                let value = c.value()?;
                let own = value.as_deref() == Some(c.me.as_str());
                let owner = value.map(|v| owner_of(c.sc, &v));
                c.saw(now, EventKind::LockValueRead { owner, fence: None });
                if own {
                    st.del_pending = true;
                    Next::Again(now + GET_DEL_GAP)
                } else {
                    Next::At(now)
                }
            }
            via @ (ReleaseMode::GetThenDel | ReleaseMode::Del) => {
                st.del_pending = false;
                match c.del()? {
                    Some(v) if v == c.me => c.saw(now, released(via)),
                    Some(v) => {
                        let v = owner_of(c.sc, &v);
                        c.note(format!(
                            "{} at t={now}: its unconditional DEL deleted {v}'s live lease",
                            c.name
                        ));
                        c.saw(
                            now,
                            EventKind::DeletedOthersLease {
                                owner: v,
                                fence: Fence(0),
                            },
                        );
                    }
                    None => c.saw(now, noop(via, Vec::new())),
                }
                Next::At(now)
            }
        },
    })
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
            c.note(format!(
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
                let mut o = shared.lock().unwrap_or_else(|e| e.into_inner());
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

/// A step under a row lock, on the client's own PostgreSQL session: `BEGIN; SELECT … FOR
/// UPDATE` (which blocks while another transaction holds the row), the status read and the
/// debit inside that transaction, `COMMIT`. A session the server terminated makes psql exit:
/// the next statement reports 25P03 and the client stops.
fn act_row(c: &mut Client, st: &mut State, step: &Step, now: Millis) -> Result<Next, String> {
    let sc = c.sc;
    let res = lit(&sc.resource);
    Ok(match step {
        Step::Acquire { .. } => {
            let (mut waited_for, reply) = lock_row(c, now)?;
            if let Err(e) = reply {
                lost(c, now, "SELECT … FOR UPDATE", e)?;
                c.saw(now, EventKind::ConnectionLost);
                return Ok(Next::Stop);
            }
            if waited_for.is_none() && scenario_now(c.env) > now {
                // It returned a grain or more later, though the watch saw no lock wait in
                // time: it waited all the same (the fold names the holder it waited behind).
                c.note(format!(
                    "{} at t={now}: SELECT … FOR UPDATE returned late without a lock wait seen in pg_stat_activity",
                    c.name
                ));
                c.saw(
                    now,
                    EventKind::LockWait {
                        holder: String::new(),
                    },
                );
                waited_for = Some(String::new());
            }
            let at = if waited_for.is_some() {
                let at = scenario_now(c.env);
                c.note(format!(
                    "{}: its SELECT … FOR UPDATE returned at t={at} ({:.0} real ms after the start)",
                    c.name,
                    c.env.elapsed_ms()
                ));
                at
            } else {
                now
            };
            let fence = {
                let mut o = c.shared.lock().unwrap_or_else(|e| e.into_inner());
                o.grants += 1;
                sc.first_fence + o.grants - 1
            };
            st.token = Some(fence);
            c.saw(
                at,
                EventKind::Acquired {
                    fence: Fence(fence),
                    expires_at: sc.idle_timeout().map_or(Millis::MAX, |t| at + t),
                    nodes: Vec::new(),
                    token_later: false,
                },
            );
            Next::At(at)
        }
        Step::Work { ms } => Next::At(now + ms),
        Step::CheckDone => {
            // The job's status, read inside the transaction that holds the row.
            let sql = format!(
                "SELECT EXISTS (SELECT 1 FROM write_log WHERE account = {res} AND kind IN ('debit', 'publish') AND result = 'ok');"
            );
            match c.pg.statement(&sql).map(|rows| rows.concat()) {
                Err(e) => {
                    lost(c, now, "status read", e)?;
                    c.saw(now, EventKind::ConnectionLost);
                    Next::Stop
                }
                Ok(v) => {
                    let done = v == "t";
                    c.saw(now, EventKind::JobChecked { done });
                    after_status(done, &sc.actors[c.idx].script, st.pc, now)
                }
            }
        }
        Step::Debit {
            amount,
            idempotency_key,
        } => {
            // The UPDATE in the lock holder's transaction: no token (policy 'off').
            let w = Write {
                token: None,
                amount: *amount,
                key: idempotency_key.clone(),
                publish: None,
            };
            let sql = format!(
                "SELECT debit('off', {res}, {}, NULL, {amount}, {});",
                lit(&c.name),
                opt_lit(idempotency_key.as_deref())
            );
            match c.pg.statement(&sql).map(|rows| rows.concat()) {
                Ok(reply) => {
                    let o = applied(sc, c.idx, &w, now, now, &reply)?;
                    c.shared
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .events
                        .push(o);
                    Next::At(now)
                }
                Err(e) => {
                    lost(c, now, "UPDATE", e)?;
                    c.shared
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .events
                        .push(Observation {
                            at: now,
                            actor: Some(c.idx),
                            kind: EventKind::WriteApplied {
                                fence: None,
                                amount: *amount,
                                sent_at: now,
                                result: Err(WriteError::SessionTerminated),
                                superseded_by: None,
                                highest_accepted: None,
                                publish: None,
                            },
                            request: Some(WriteRequest {
                                resource: sc.resource.clone(),
                                writer: c.name.clone(),
                                fence: None,
                                amount: *amount,
                                idempotency_key: idempotency_key.clone(),
                                publish: None,
                            }),
                        });
                    Next::Stop
                }
            }
        }
        Step::Release => match c.pg.statement("COMMIT;") {
            Ok(_) => {
                // The COMMIT came first on the server: a waiter's SELECT … FOR UPDATE returns
                // only after it, though its thread may have logged that a moment sooner.
                let mut o = c.shared.lock().unwrap_or_else(|e| e.into_inner());
                let waited = |o: &Observed, actor: Option<usize>| {
                    o.events.iter().any(|p| {
                        p.actor == actor
                            && matches!(&p.kind, EventKind::LockWait { holder } if *holder == c.name)
                    })
                };
                let at = o.events.iter().position(|p| {
                    p.at == now
                        && p.actor != Some(c.idx)
                        && matches!(p.kind, EventKind::Acquired { .. })
                        && waited(&o, p.actor)
                });
                let seen = Observation {
                    at: now,
                    actor: Some(c.idx),
                    kind: released(ReleaseMode::CompareAndDelete),
                    request: None,
                };
                match at {
                    Some(i) => o.events.insert(i, seen),
                    None => o.events.push(seen),
                }
                Next::At(now)
            }
            Err(e) => {
                lost(c, now, "COMMIT", e)?;
                c.saw(now, EventKind::ConnectionLost);
                Next::Stop
            }
        },
        other => return Err(format!("{other:?} is not modelled under a row lock")),
    })
}

/// After a job-status read at step `pc`: a job not done goes on with the next step; a done
/// one skips to the actor's release (or stops if it has none), as the engine's does.
fn after_status(done: bool, script: &[Step], pc: usize, now: Millis) -> Next {
    if !done {
        return Next::At(now);
    }
    match script[pc..].iter().position(|s| *s == Step::Release) {
        Some(i) => Next::Goto(pc + i, now),
        None => Next::Stop,
    }
}
