//! `fencing-lab replay [SCENARIO…]`: runs each deck scenario's schedule against real
//! servers (redis-server, PostgreSQL, etcd, libfaketime) and compares what happened with
//! what the core predicted. Native only.
//!
//! Coupling to the core, kept small on purpose: `Scenario`/`Actor`/`Step` data (read in
//! [`run::act`] and [`plan`]), `core::run` → `Trace.writes` (`writer`, `fence`, `result`) and
//! `Trace.summary.final_balance / last_fence / side_effects`, the final snapshot's `result`,
//! `Scenario::token_source` / `redlock` for which servers grant the lock, `renewal_interval`
//! and `SplitMix64` for the watchdog's jitter and the resume race. Nothing reads `story`.

mod etcd;
mod pg;
mod redis;
mod restart;
mod run;
mod servers;

use std::path::Path;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Barrier, Mutex, OnceLock};
use std::time::{Duration, Instant};

use fencing_lab::core::{
    self, FencingPolicy, Millis, ReleaseMode, Scenario, SplitMix64, Step, StorageCheck,
    TokenSource, COUNTER_GAP, DECK, GET_DEL_GAP,
};
use serde_json::json;

use pg::Pg;
use redis::{Redis, ReplyExt};
use run::{Env, LockBackend, Observed};
use servers::{Cleanup, EtcdServer, PgServer, RedisServer};

/// Real ms per time slot of a Redis-locked run: the smallest gap between two decisive
/// events of a scenario becomes this long (override: `REPLAY_SLOT_MS`).
const SLOT_MS: f64 = 60.0;
/// Suffix of the runs whose lease, lock and token come from etcd instead of Redis.
const ETCD_SUFFIX: &str = "@etcd";
/// Deck scenarios replayed a second time with `TokenSource::LockService` (etcd). For
/// redis-failover that is the page's what-if: a 3-member etcd cluster loses its leader.
const ON_ETCD: &[&str] = &["gc-pause", "redis-failover"];
/// Members of the etcd cluster of a run that fails over.
const ETCD_CLUSTER: usize = 3;

/// One run to make.
struct Case {
    label: String,
    sc: Scenario,
    lock: LockBackend,
}

/// Which real servers grant the lock and mint the token: the one place that maps the
/// scenario's `token_source` (and `redlock`) onto servers.
fn backend(sc: &Scenario) -> LockBackend {
    if sc.row_lock.is_some() {
        return LockBackend::RowLock;
    }
    match (&sc.redlock, sc.token_source) {
        (Some(_), _) => LockBackend::Redlock,
        (None, TokenSource::LockService) => LockBackend::Etcd,
        (
            None,
            TokenSource::SameRedis
            | TokenSource::Counterfactual
            | TokenSource::SeparateCounter
            | TokenSource::RandomValue,
        ) => LockBackend::Redis,
    }
}

/// Why a case has no faithful real equivalent here, if it has none.
fn not_reproducible(c: &Case) -> Option<String> {
    let sc = &c.sc;
    let steps = || sc.actors.iter().flat_map(|a| &a.script);
    if !sc.lock_clock_jumps.is_empty() && !Path::new(servers::FAKETIME_LIB).exists() {
        return Some("clock jump needs libfaketime (Debian faketime), not installed".to_owned());
    }
    if sc.redlock.is_none() && sc.token_source == TokenSource::Counterfactual {
        return Some(
            "counterfactual tokens without Redlock: the core's single lock still mints them"
                .to_owned(),
        );
    }
    if sc.restart && sc.replication_lag.is_some() {
        return Some(
            "a restart has no replica to lag: the one Redis comes back from its snapshot"
                .to_owned(),
        );
    }
    if sc.lock_delay > 0 {
        return Some("lock-delay is Chubby's: Redis has none (SET NX succeeds the moment the key expires), and an etcd lease has none either".to_owned());
    }
    if sc.check == StorageCheck::Sequencer && sc.policy.checks_fence() {
        // The harness, acting as the resource, asks etcd: the lock key's create revision is
        // the holder's token. Redis has no grant number to ask about but its counter.
        if c.lock != LockBackend::Etcd {
            return Some("the harness makes the sequencer check against etcd only (the lock key's create revision); with a Redis lock it would compare the lock's value and the fence counter, which it does not".to_owned());
        }
        if steps().any(|s| matches!(s, Step::Publish { .. } | Step::Claim { .. }))
            || sc.actors.iter().any(|a| a.network_delay > 0)
        {
            return Some("the harness checks sequencers on undelayed debits only".to_owned());
        }
    }
    if sc.queue {
        return Some("not reproduced yet: the fair queue is ZooKeeper's lock recipe or etcd's mutex, and the replay runs neither recipe yet".to_owned());
    }
    if sc.minority {
        return Some("not reproduced yet: a minority partition needs the harness to cut one etcd member's peer traffic (or SIGSTOP it) while A's client stays pinned to that member, and the replay's etcd client talks to the whole cluster".to_owned());
    }
    if sc.partition.is_some() && c.lock != LockBackend::Redis {
        return Some("a partition is replayed against one Redis only (the harness drops the cut-off client's commands)".to_owned());
    }
    let publishes = steps().any(|s| matches!(s, Step::Publish { .. }));
    let debits = steps().any(|s| matches!(s, Step::Debit { .. }));
    if publishes && debits {
        return Some("debits and publishes share one high-water mark in the core; the harness keeps the balance's fence and the result row's epoch apart".to_owned());
    }
    match c.lock {
        LockBackend::RowLock => {
            if sc.actors.iter().any(|a| a.network_delay > 0) {
                return Some("a delayed packet would need a second connection, outside the lock holder's transaction".to_owned());
            }
        }
        LockBackend::Etcd => {
            if steps().any(|s| matches!(s, Step::Extend | Step::WorkRenewing { .. })) {
                return Some(
                    "etcd renews by a keep-alive stream; the harness does not drive it".to_owned(),
                );
            }
            if sc.release == ReleaseMode::GetThenDel && steps().any(|s| *s == Step::Release) {
                return Some("GET-then-DEL is a Redis-client pattern".to_owned());
            }
            if !sc.lock_clock_jumps.is_empty() {
                return Some("etcd does not run under faketime here".to_owned());
            }
            if (sc.lease_ttl as f64 * etcd_scale(sc)) % 1000.0 != 0.0 {
                return Some("etcd lease TTLs are whole seconds".to_owned());
            }
        }
        LockBackend::Redlock => {
            if sc.failover_at.is_some() {
                return Some(
                    "a failover under Redlock: the core fails no Redlock node over".to_owned(),
                );
            }
            if sc.release == ReleaseMode::GetThenDel && steps().any(|s| *s == Step::Release) {
                return Some("GET-then-DEL over Redlock nodes is not modelled".to_owned());
            }
        }
        LockBackend::Redis => {
            if !sc.lock_clock_jumps.is_empty() && sc.failover_at.is_some() {
                return Some("a clock step and a failover in one run: the promoted replica does not run under libfaketime".to_owned());
            }
        }
    }
    None
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The scenario's time grain: the gcd of every time in it (1 ms if a watchdog jitters).
fn granularity(sc: &Scenario) -> Millis {
    let mut g = gcd(sc.lease_ttl, sc.failover_at.unwrap_or(0));
    for j in &sc.lock_clock_jumps {
        g = gcd(gcd(g, j.at), j.by);
    }
    for a in &sc.actors {
        g = gcd(gcd(g, a.start_at), a.network_delay);
        g = gcd(g, a.request_timeout.unwrap_or(0));
        for p in &a.pauses {
            g = gcd(gcd(g, p.start), p.duration);
        }
        for s in &a.script {
            g = match s {
                Step::Acquire { retry_every }
                    if sc.token_source == TokenSource::SeparateCounter =>
                {
                    gcd(gcd(g, *retry_every), COUNTER_GAP)
                }
                Step::Acquire { retry_every } => gcd(g, *retry_every),
                Step::Work { ms } => gcd(g, *ms),
                Step::WorkRenewing { .. } => 1,
                Step::Release if matches!(sc.release, ReleaseMode::GetThenDel) => {
                    gcd(g, GET_DEL_GAP)
                }
                _ => g,
            };
        }
    }
    g.max(1)
}

/// etcd: whole-second TTLs and a lease sweep every 500 ms, so a scenario ms must be long
/// enough that a 30 ms TTL is 3 s: scale = 1000·⌈TTL/10⌉/TTL real ms per scenario ms.
fn etcd_scale(sc: &Scenario) -> f64 {
    let ttl = sc.lease_ttl.max(1) as f64;
    1000.0 * (ttl / 10.0).ceil() / ttl
}

fn slot_ms() -> f64 {
    std::env::var("REPLAY_SLOT_MS")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|s: &f64| *s >= 5.0)
        .unwrap_or(SLOT_MS)
}

/// (real ms per scenario ms, real ms per slot).
fn timing(c: &Case) -> (f64, f64) {
    let g = granularity(&c.sc) as f64;
    match c.lock {
        LockBackend::Redis | LockBackend::Redlock | LockBackend::RowLock => {
            (slot_ms() / g, slot_ms())
        }
        LockBackend::Etcd => {
            let s = etcd_scale(&c.sc);
            (s, s * g)
        }
    }
}

/// The replica lags replayed on redis-failover (failover at t=5, A's SET at t=0): 5 ms
/// behind it has the SET, 10 ms behind it does not.
const LAGS: [Millis; 2] = [5, 10];

/// A deck scenario as it is, on etcd, with a lagging replica, or (a row lock) without the
/// idle-in-transaction timeout.
#[derive(Clone, Copy)]
enum Variant {
    Deck,
    Etcd,
    Lag(Millis),
    /// The same schedule with storage checking only the highest token it has seen.
    Highest,
    NoIdleTimeout,
}

/// Suffix of the row-lock run without `idle_in_transaction_session_timeout`.
const NO_TIMEOUT_SUFFIX: &str = "@no-timeout";

/// The deck entry whose schedule is replayed a second time with only the highest-token
/// check (`sequencer@highest`): the run that the sequencer check changes.
const HIGHEST_TOO: &str = "sequencer";

fn cases(ids: &[String]) -> Result<Vec<Case>, String> {
    let mut out = Vec::new();
    let want = |id: &str| ids.is_empty() || ids.iter().any(|i| i == id);
    for e in DECK {
        let mut labels = vec![(e.id.to_owned(), Variant::Deck)];
        if ON_ETCD.contains(&e.id) {
            labels.push((format!("{}{ETCD_SUFFIX}", e.id), Variant::Etcd));
        }
        if e.id == "redis-failover" {
            for lag in LAGS {
                labels.push((format!("{}@lag{lag}", e.id), Variant::Lag(lag)));
            }
        }
        if (e.build)().row_lock.is_some() {
            labels.push((
                format!("{}{NO_TIMEOUT_SUFFIX}", e.id),
                Variant::NoIdleTimeout,
            ));
        }
        if e.id == HIGHEST_TOO {
            labels.push((format!("{}@highest", e.id), Variant::Highest));
        }
        for (label, variant) in labels {
            if !want(&label) {
                continue;
            }
            for policy in FencingPolicy::ALL {
                let mut sc = (e.build)().with_policy(policy);
                match variant {
                    Variant::Deck => {}
                    Variant::Etcd => sc.token_source = TokenSource::LockService,
                    Variant::Lag(lag) => sc.replication_lag = Some(lag),
                    Variant::NoIdleTimeout => {
                        sc.row_lock = Some(core::RowLock {
                            idle_timeout: false,
                        })
                    }
                    Variant::Highest => sc.check = StorageCheck::HighestToken,
                }
                out.push(Case {
                    label: label.clone(),
                    lock: backend(&sc),
                    sc,
                });
            }
        }
    }
    for id in ids {
        if !out.iter().any(|c| &c.label == id) {
            let known: Vec<String> = DECK
                .iter()
                .map(|e| e.id.to_owned())
                .chain(ON_ETCD.iter().map(|i| format!("{i}{ETCD_SUFFIX}")))
                .chain(LAGS.iter().map(|l| format!("redis-failover@lag{l}")))
                .chain([format!("{HIGHEST_TOO}@highest")])
                .chain(
                    DECK.iter()
                        .filter(|e| (e.build)().row_lock.is_some())
                        .map(|e| format!("{}{NO_TIMEOUT_SUFFIX}", e.id)),
                )
                .collect();
            return Err(format!(
                "unknown scenario {id:?}; known: {}",
                known.join(", ")
            ));
        }
    }
    Ok(out)
}

/// One storage attempt: who, with which token, what the storage answered.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Attempt {
    writer: String,
    token: Option<u64>,
    code: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Outcome {
    balance: i64,
    last_fence: Option<u64>,
    /// The job's result row (scenarios that publish).
    result: Option<String>,
    /// Calls to the outside system that never sees a token (the card charge).
    side_effects: usize,
    /// Provider calls that charged, and those deduped by their idempotency key.
    provider: (usize, usize),
    writes: Vec<Attempt>,
}

/// What the core predicts, read off its run of the scenario.
fn predict(trace: &core::Trace) -> Outcome {
    Outcome {
        balance: trace.summary.final_balance,
        last_fence: trace.summary.last_fence.map(|f| f.0),
        result: trace.snapshot_at(trace.len()).result.clone(),
        side_effects: trace.summary.side_effects,
        provider: (
            trace.summary.provider_charges,
            trace.summary.provider_deduped,
        ),
        writes: trace
            .writes
            .iter()
            .map(|w| Attempt {
                writer: w.request.writer.clone(),
                token: w.request.fence.map(|f| f.0),
                code: match &w.result {
                    Ok(()) => "ok".to_owned(),
                    Err(e) => e.code().to_owned(),
                },
            })
            .collect(),
    }
}

/// Each way `observed` differs from `predicted`, one line each.
fn differences(predicted: &Outcome, observed: &Outcome) -> Vec<String> {
    let mut d = Vec::new();
    if predicted.balance != observed.balance {
        d.push(format!(
            "    balance: predicted {}, observed {}",
            predicted.balance, observed.balance
        ));
    }
    if predicted.result != observed.result {
        d.push(format!(
            "    result row: predicted {:?}, observed {:?}",
            predicted.result, observed.result
        ));
    }
    if predicted.side_effects != observed.side_effects {
        d.push(format!(
            "    side effects: predicted {}, observed {}",
            predicted.side_effects, observed.side_effects
        ));
    }
    if predicted.provider != observed.provider {
        d.push(format!(
            "    provider (charged, deduped): predicted {:?}, observed {:?}",
            predicted.provider, observed.provider
        ));
    }
    if predicted.last_fence != observed.last_fence {
        d.push(format!(
            "    last fence: predicted {:?}, observed {:?}",
            predicted.last_fence, observed.last_fence
        ));
    }
    let n = predicted.writes.len().max(observed.writes.len());
    for i in 0..n {
        let (p, o) = (predicted.writes.get(i), observed.writes.get(i));
        if p != o {
            let one = |w: Option<&Attempt>| {
                w.map_or_else(
                    || "nothing".to_owned(),
                    |w| format!("{} token {:?} → {}", w.writer, w.token, w.code),
                )
            };
            d.push(format!(
                "    storage attempt {}: predicted {}, observed {}",
                i + 1,
                one(p),
                one(o)
            ));
        }
    }
    d
}

fn show(o: &Outcome) -> String {
    let writes: Vec<String> = o
        .writes
        .iter()
        .map(|w| {
            let tok = w.token.map_or_else(|| "-".to_owned(), |t| format!("#{t}"));
            format!("{}{tok} {}", w.writer, w.code)
        })
        .collect();
    let fence = o
        .last_fence
        .map_or_else(|| "none".to_owned(), |f| f.to_string());
    let value = match &o.result {
        Some(r) => format!("{} “{r}”", o.balance),
        None => o.balance.to_string(),
    };
    let effects = match o.side_effects {
        0 => String::new(),
        n => format!(" / {n} side effects"),
    };
    let provider = match o.provider {
        (0, 0) => String::new(),
        (c, d) => format!(" / provider {c} charged, {d} deduped"),
    };
    format!(
        "{value} / {fence} / {}{effects}{provider}",
        writes.join(", ")
    )
}

/// What a finished run produced.
struct Report {
    observed: Outcome,
    /// The run as a trace in the core's own schema, folded from what the clients saw.
    trace: core::Trace,
    /// Raw tokens → reported tokens, when tokens are compared by rank (etcd revisions).
    ranked: Option<Vec<(u64, u64)>>,
    notes: Vec<String>,
    max_late_ms: f64,
    wall: Duration,
}

struct Servers {
    /// "Redis 7.0.15", "PostgreSQL 15.18", "etcd 3.4.23": for a recorded trace's label.
    versions: Versions,
    dir: std::path::PathBuf,
    pg: PgServer,
    etcd: Option<EtcdServer>,
}

struct Versions {
    redis: String,
    pg: String,
    etcd: String,
}

/// The first dotted number in a `--version` line, after `v=` if there is one.
fn short_version(line: &str) -> String {
    let from = line.find("v=").map_or(line, |i| &line[i + 2..]);
    from.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .find(|w| w.contains('.') && w.starts_with(|c: char| c.is_ascii_digit()))
        .unwrap_or("?")
        .trim_end_matches('.')
        .to_owned()
}

fn run_case(c: &Case, n: usize, srv: &Servers) -> Result<Report, String> {
    let t0 = Instant::now();
    let sc = &c.sc;
    let (scale, slot) = timing(c);
    let schema = format!("run{n}");
    let mut admin = Pg::connect(&srv.pg.addr, None)?;
    admin.query(&pg::schema_sql(
        &schema,
        &sc.resource,
        sc.initial_balance,
        sc.first_fence,
    ))?;

    // The lock server(s).
    let faketime = (!sc.lock_clock_jumps.is_empty()).then(|| srv.dir.join(format!("faketime-{n}")));
    if let Some(f) = &faketime {
        std::fs::write(f, "+0\n").map_err(|e| e.to_string())?;
    }
    let mut notes = Vec::new();
    let mut primary = None;
    let mut replica = None;
    let mut nodes = Vec::new();
    let mut cluster = None;
    let restarts = (sc.restart && sc.failover_at.is_some() && c.lock == LockBackend::Redis)
        .then(|| restart::Restart::new(srv.dir.clone(), format!("redis-{n}")));
    match c.lock {
        LockBackend::RowLock => {
            notes.push(
                "no lock server: the row lock is PostgreSQL's own, on the account's row".to_owned(),
            );
        }
        LockBackend::Etcd => {
            if sc.failover_at.is_some() {
                let e = EtcdServer::start(&srv.dir, &format!("etcd-{n}"), ETCD_CLUSTER)?;
                notes.push(format!(
                    "a {ETCD_CLUSTER}-member etcd cluster on ports {:?}",
                    e.client.ports
                ));
                cluster = Some(e);
            }
        }
        LockBackend::Redis => {
            let p = RedisServer::start(&srv.dir, &format!("redis-{n}"), faketime.as_deref())?;
            // The fence counter's base value, set on the primary before the replica syncs,
            // so the replica has it too (and only it).
            let first = sc.first_fence.saturating_sub(1).to_string();
            Redis::connect(p.port)?.cmd(&["SET", &run::fence_key(&sc.resource), &first])?;
            if let Some(r) = &restarts {
                notes.push(r.snapshot(&p)?);
            } else if sc.failover_at.is_some() {
                // A replica more behind than the failover is late has none of the run's writes.
                let cut_now = match (sc.replication_lag, sc.failover_at) {
                    (Some(lag), Some(at)) => lag > at,
                    _ => true,
                };
                replica = Some(start_cut_replica(&srv.dir, n, &p, cut_now, &mut notes)?);
            }
            primary = Some(p);
        }
        LockBackend::Redlock => {
            let r = sc.redlock.as_ref().ok_or("redlock")?;
            for i in 0..r.nodes {
                let ft = if i == r.jumping_node {
                    faketime.as_deref()
                } else {
                    None
                };
                nodes.push(RedisServer::start(
                    &srv.dir,
                    &format!("redis-{n}-node{i}"),
                    ft,
                )?);
            }
            notes.push(format!(
                "Redlock over {} redis-servers on ports {:?}{}",
                r.nodes,
                nodes.iter().map(|s| s.port).collect::<Vec<_>>(),
                if faketime.is_some() {
                    format!(", node {} under libfaketime", r.jumping_node)
                } else {
                    String::new()
                }
            ));
        }
    }
    let port = Arc::new(AtomicU16::new(primary.as_ref().map_or(0, |p| p.port)));
    let shared: run::Shared = Arc::new(Mutex::new(Observed::default()));
    let rng = Mutex::new(SplitMix64::new(sc.seed));
    // The clients connect first; time starts a little later, for all of them at once.
    let env = Env {
        scale,
        slot,
        lock: c.lock,
        redis_port: port.clone(),
        nodes: nodes.iter().map(|s| s.port).collect(),
        etcd: match &cluster {
            Some(e) => Some(e.client.clone()),
            None => srv.etcd.as_ref().map(|e| e.client.clone()),
        },
        pg: srv.pg.addr.clone(),
        schema: schema.clone(),
        faketime: faketime.clone(),
        start: OnceLock::new(),
        barrier: Barrier::new(sc.actors.len() + 1),
    };
    let jumping = match c.lock {
        LockBackend::Redlock => sc
            .redlock
            .as_ref()
            .and_then(|r| nodes.get(r.jumping_node))
            .map(|s| s.port),
        _ => primary.as_ref().map(|p| p.port),
    };
    let faults = Faults {
        jumping,
        primary: primary.as_ref(),
        replica: replica.as_ref(),
        cluster: cluster.as_ref(),
        restart: restarts.as_ref(),
    };
    let results: Vec<Result<(), String>> = std::thread::scope(|s| {
        let mut hs = Vec::new();
        for i in 0..sc.actors.len() {
            let (env, shared, rng) = (&env, shared.clone(), &rng);
            hs.push(s.spawn(move || run::run_actor(env, sc, i, shared, rng)));
        }
        let world = s.spawn(|| world(&env, sc, &faults, &shared));
        let mut out: Vec<Result<(), String>> = hs
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("actor thread panicked".to_owned()))
            })
            .collect();
        out.push(
            world
                .join()
                .unwrap_or_else(|_| Err("world thread panicked".to_owned())),
        );
        out
    });
    for r in results {
        r?;
    }
    drop(primary);
    drop(replica);
    drop(nodes);
    drop(cluster);
    drop(restarts);

    // What the storage recorded.
    let acct = admin.one(&format!(
        "SELECT a.balance || '|' || a.fence || '|' || r.epoch || '|' || (SELECT count(*) FROM {schema}.side_effects) || '|' || (SELECT count(*) FROM {schema}.provider_charges) || '|' || (SELECT count(*) FROM {schema}.provider_calls WHERE outcome = 'deduped') || '|' || coalesce(r.result, '') || '|' || CASE WHEN r.result IS NULL THEN 'null' ELSE 'set' END FROM {schema}.accounts a JOIN {schema}.job_results r ON r.job = a.id WHERE a.id = {};",
        pg::lit(&sc.resource)
    ))?;
    let f: Vec<&str> = acct.split('|').collect();
    let [balance, fence, epoch, effects, charged, deduped, result, result_set] = f[..] else {
        return Err(format!("accounts row: {acct}"));
    };
    let rows = admin.query(&format!(
        "SELECT writer || '|' || coalesce(token::text, '') || '|' || result FROM {schema}.write_log WHERE kind IN ('debit', 'publish') ORDER BY seq;"
    ))?;
    let obs = run::observe(&shared);
    notes.extend(obs.notes.iter().cloned());
    let ranked = (c.lock == LockBackend::Etcd).then(|| {
        let mut t = obs.tokens.clone();
        t.sort_unstable();
        t.dedup();
        t.into_iter()
            .enumerate()
            .map(|(i, raw)| (raw, sc.first_fence + i as u64))
            .collect::<Vec<_>>()
    });
    let map = |raw: u64| match &ranked {
        Some(m) => m.iter().find(|(r, _)| *r == raw).map_or(raw, |(_, v)| *v),
        None => raw,
    };
    // The storage's log as it holds it (raw tokens), and as reported (etcd's by rank).
    let logged: Vec<Attempt> = rows
        .iter()
        .map(|r| {
            let mut f = r.splitn(3, '|');
            let writer = f.next().unwrap_or_default().to_owned();
            let token = f.next().and_then(|t| t.parse().ok());
            let code = f.next().unwrap_or_default().to_owned();
            Attempt {
                writer,
                token,
                code,
            }
        })
        .collect();
    let mut writes: Vec<Attempt> = logged
        .iter()
        .map(|a| Attempt {
            token: a.token.map(map),
            ..a.clone()
        })
        .collect();
    if c.lock == LockBackend::RowLock {
        // An UPDATE on a terminated session never reached the server, so its write_log has
        // no row for it: the client saw it fail (25P03). Put those where they happened.
        let mut seen: Vec<&core::Observation> = obs
            .events
            .iter()
            .filter(|o| matches!(o.kind, core::EventKind::WriteApplied { .. }))
            .collect();
        seen.sort_by_key(|o| o.at);
        let mut from_log = writes.into_iter();
        writes = Vec::new();
        for o in seen {
            match (&o.kind, &o.request) {
                (
                    core::EventKind::WriteApplied {
                        result: Err(core::WriteError::SessionTerminated),
                        ..
                    },
                    Some(r),
                ) => writes.push(Attempt {
                    writer: r.writer.clone(),
                    token: None,
                    code: "session_ended".to_owned(),
                }),
                _ => writes.extend(from_log.next()),
            }
        }
        writes.extend(from_log);
    }
    // The high-water mark: the result row's epoch where the job publishes, else the fence.
    let mark = if sc.publishes() { epoch } else { fence };
    let mark: u64 = mark.parse().map_err(|_| "fence")?;
    let balance: i64 = balance.parse().map_err(|_| "balance")?;
    let mut systems = vec![
        match c.lock {
            LockBackend::Etcd => format!("etcd {}", srv.versions.etcd),
            LockBackend::Redlock => format!(
                "Redis {} ×{}",
                srv.versions.redis,
                sc.redlock.as_ref().map_or(0, |r| r.nodes)
            ),
            LockBackend::Redis => format!("Redis {}", srv.versions.redis),
            LockBackend::RowLock => format!(
                "PostgreSQL {} (SELECT … FOR UPDATE{})",
                srv.versions.pg,
                match sc.idle_timeout() {
                    Some(ms) => format!(
                        ", idle_in_transaction_session_timeout = {:.0} ms",
                        ms as f64 * scale
                    ),
                    None => String::new(),
                }
            ),
        },
        format!("PostgreSQL {}", srv.versions.pg),
    ];
    if c.lock == LockBackend::RowLock {
        systems.remove(1); // the lock and the storage are one server
    }
    if faketime.is_some() {
        systems.push("libfaketime".to_owned());
    }
    let trace = core::recorded(
        sc,
        obs.events.clone(),
        core::Account {
            balance,
            last_fence: (sc.policy != FencingPolicy::Off && mark > 0).then_some(core::Fence(mark)),
            last_write_fence: logged
                .iter()
                .rev()
                .find(|a| a.code == "ok")
                .and_then(|a| a.token)
                .map(core::Fence),
            result: (result_set == "set").then(|| result.to_owned()),
        },
        core::Recording {
            systems,
            timing: format!("1 scenario ms = {scale:.2} real ms"),
            notes: notes.clone(),
        },
    );
    Ok(Report {
        trace,
        observed: Outcome {
            balance,
            last_fence: (mark > 0).then(|| map(mark)),
            result: (result_set == "set").then(|| result.to_owned()),
            side_effects: effects.parse().map_err(|_| "side effects")?,
            provider: (
                charged.parse().map_err(|_| "provider charges")?,
                deduped.parse().map_err(|_| "provider deduped")?,
            ),
            writes,
        },
        ranked,
        notes,
        max_late_ms: obs.max_late_ms,
        wall: t0.elapsed(),
    })
}

/// A replica that has synced, then is cut off: it is pointed at a port where nothing
/// listens (a partition), so it keeps its data but receives nothing more from the primary.
fn start_cut_replica(
    dir: &Path,
    n: usize,
    primary: &RedisServer,
    cut_now: bool,
    notes: &mut Vec<String>,
) -> Result<RedisServer, String> {
    let r = RedisServer::start(dir, &format!("redis-{n}-replica"), None)?;
    let mut rc = Redis::connect(r.port)?;
    rc.cmd(&["REPLICAOF", "127.0.0.1", &primary.port.to_string()])?;
    Redis::connect(primary.port)?.cmd(&["SET", "replay:synced", "yes"])?;
    let t0 = Instant::now();
    while rc.cmd(&["GET", "replay:synced"])?.text().as_deref() != Some("yes") {
        if t0.elapsed() > Duration::from_secs(10) {
            return Err("replica never synced".to_owned());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    if !cut_now {
        notes.push(format!(
            "replica :{} synced from primary :{} and keeps replicating until the cut",
            r.port, primary.port
        ));
        return Ok(r);
    }
    cut_replication(&mut rc)?;
    notes.push(format!(
        "replica :{} synced from primary :{}, then replication was cut (REPLICAOF a dead port) before any client ran",
        r.port, primary.port
    ));
    Ok(r)
}

/// Points the replica at a port where nothing listens: a partition. It keeps its data and
/// receives nothing more.
fn cut_replication(replica: &mut Redis) -> Result<(), String> {
    let dead = servers::free_port()?;
    replica.cmd(&["REPLICAOF", "127.0.0.1", &dead.to_string()])?;
    Ok(())
}

/// A number from an `INFO replication` reply, e.g. `master_repl_offset`.
fn info_field(info: &str, field: &str) -> Option<u64> {
    info.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().parse().ok())
}

/// A lagging replica, made real: at `failover − lag` the replica is let catch up with
/// everything the primary has so far (its replication offset reaches the primary's), then
/// cut off. What it has at the failover is every write made by then, and nothing later.
fn cut_at_lag(primary: u16, replica: u16) -> Result<String, String> {
    let mut p = Redis::connect(primary)?;
    let mut r = Redis::connect(replica)?;
    let want = info_field(
        &p.cmd(&["INFO", "replication"])?.text().unwrap_or_default(),
        "master_repl_offset",
    )
    .unwrap_or(0);
    let t0 = Instant::now();
    let mut got = 0;
    while t0.elapsed() < Duration::from_millis(500) {
        got = info_field(
            &r.cmd(&["INFO", "replication"])?.text().unwrap_or_default(),
            "slave_repl_offset",
        )
        .unwrap_or(0);
        if got >= want {
            break;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    cut_replication(&mut r)?;
    Ok(format!(
        "replica offset {got} of the primary's {want} when cut"
    ))
}

/// The servers the world's faults act on.
struct Faults<'a> {
    /// The redis-server whose clock steps (the lock node, or Redlock's jumping node).
    jumping: Option<u16>,
    primary: Option<&'a RedisServer>,
    replica: Option<&'a RedisServer>,
    cluster: Option<&'a EtcdServer>,
    /// The one Redis restarts instead of failing over ([`Scenario::restart`]).
    restart: Option<&'a restart::Restart>,
}

/// The faults that are the world's, not an actor's: the failover and the clock step.
fn world(env: &Env, sc: &Scenario, f: &Faults, shared: &run::Shared) -> Result<(), String> {
    env.ready();
    let note = |s: String| run::observe(shared).notes.push(s);
    let mut events: Vec<(Millis, u8)> = sc.lock_clock_jumps.iter().map(|j| (j.at, 0)).collect();
    if let Some(t) = sc.failover_at {
        events.push((t, 1));
        if let (Some(lag), Some(_)) = (sc.replication_lag, f.replica) {
            if lag <= t {
                events.push((t - lag, 2));
            }
        }
    }
    // At one instant: a clock step, then the replication cut, then the failover.
    events.sort_unstable_by_key(|&(t, kind)| (t, [0, 2, 1][kind as usize]));
    events.dedup();
    let mut jumped: Millis = 0;
    for (t, kind) in events {
        if t > sc.horizon {
            break;
        }
        if kind == 2 {
            // The cut that makes the replica `lag` behind at the failover: after this
            // instant's steps (or, with no lag, just before the failover itself).
            let lag = sc.replication_lag.unwrap_or(0);
            env.sleep_until(t, if lag == 0 { -0.4 } else { 0.4 });
            if let (Some(p), Some(r)) = (f.primary, f.replica) {
                let how = cut_at_lag(p.port, r.port)?;
                note(format!(
                    "t={t}: replication cut, {lag} ms before the failover ({how})"
                ));
            }
            continue;
        }
        if kind == 0 {
            let by = sc
                .lock_clock_jumps
                .iter()
                .filter(|j| j.at == t)
                .map(|j| j.by)
                .sum::<Millis>();
            env.sleep_until(t, run::AT_CLOCK_STEP);
            let (Some(port), Some(file)) = (f.jumping, env.faketime.clone()) else {
                continue;
            };
            let mut r = Redis::connect(port)?;
            let before = r.cmd(&["PTTL", &sc.resource])?.int();
            jumped += by;
            let secs = jumped as f64 * env.scale / 1000.0;
            let tmp = file.with_extension("tmp");
            std::fs::write(&tmp, format!("+{secs:.6}\n")).map_err(|e| e.to_string())?;
            std::fs::rename(&tmp, &file).map_err(|e| e.to_string())?;
            let after = r.cmd(&["PTTL", &sc.resource])?.int();
            run::observe(shared).saw(
                t,
                None,
                core::EventKind::LockClockJumped {
                    by,
                    shortened: None,
                },
            );
            note(format!(
                "t={t}: the clock of the redis-server on :{port} stepped +{:.0} real ms (libfaketime); PTTL {} went {:?} → {:?} ms",
                by as f64 * env.scale,
                sc.resource,
                before,
                after
            ));
        } else if let Some(cluster) = f.cluster {
            env.sleep_until(t, run::AT_FAILOVER);
            let killed = cluster.kill_leader()?;
            {
                let mut o = run::observe(shared);
                let next = o.tokens.iter().max().map_or(sc.first_fence, |t| t + 1);
                o.saw(t, None, failover(next, Vec::new()));
            }
            note(format!(
                "t={t}: killed the etcd leader (client port :{killed}); the other members elect a new one"
            ));
        } else if let (Some(r), Some(p)) = (f.restart, f.primary) {
            env.sleep_until(t, run::AT_FAILOVER);
            r.run(env, sc, p, shared, t)?;
        } else {
            env.sleep_until(t, run::AT_FAILOVER);
            let (Some(p), Some(r)) = (f.primary, f.replica) else {
                continue;
            };
            let mut rc = Redis::connect(r.port)?;
            let fence = run::fence_key(&sc.resource);
            let seen = rc.cmd(&["GET", &sc.resource])?.text();
            let seen_fence = rc.cmd(&["GET", &fence])?.text();
            let mut pc = Redis::connect(p.port)?;
            let on_primary = pc.cmd(&["GET", &sc.resource])?.text();
            let primary_fence = pc.cmd(&["GET", &fence])?.text();
            p.crash();
            rc.cmd(&["REPLICAOF", "NO", "ONE"])?;
            env.redis_port.store(r.port, Ordering::SeqCst);
            let kind = restart::came_back(sc, &on_primary, &seen, &seen_fence);
            run::observe(shared).saw(t, None, kind);
            note(format!(
                "t={t}: primary killed (it held {} = {:?}, {fence} = {:?}); the replica, which had {:?} and {fence} = {:?}, promoted by REPLICAOF NO ONE",
                sc.resource, on_primary, primary_fence, seen, seen_fence
            ));
        }
    }
    if let Some(cluster) = f.cluster {
        if sc.failover_at.is_some() {
            note(format!(
                "at the end, the surviving etcd members (port, leader id): {:?}",
                cluster.leaders()
            ));
        }
    }
    Ok(())
}

/// A failover as the harness made it: the owners of the live keys the promoted replica
/// lacked (their leases' tokens and expiries are the fold's to fill in).
fn failover(next: u64, lost: Vec<String>) -> core::EventKind {
    core::EventKind::Failover {
        lost: lost
            .into_iter()
            .map(|owner| core::Lease {
                owner,
                fence: core::Fence(0),
                expires_at: 0,
            })
            .collect(),
        next_fence: core::Fence(next),
        rolled_back: false,
    }
}

fn policy_name(p: FencingPolicy) -> &'static str {
    p.short()
}

/// Entry point of `fencing-lab replay [SCENARIO…]`; returns the exit code.
pub fn main(args: &[String]) -> i32 {
    let t0 = Instant::now();
    let cases = match cases(args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("replay: {e}");
            return 2;
        }
    };
    let _cleanup = Cleanup::install();
    let result = replay(&cases);
    let code = match result {
        Ok(0) => 0,
        Ok(_) => 1,
        Err(e) => {
            eprintln!("replay: error: {e}");
            println!("replay: 0 runs, 1 mismatches");
            1
        }
    };
    eprintln!("replay: wall time {:.1} s", t0.elapsed().as_secs_f64());
    code
}

fn replay(cases: &[Case]) -> Result<usize, String> {
    let dir = servers::temp_root()?;
    println!(
        "servers (all on 127.0.0.1 / a Unix socket, in {}):",
        dir.display()
    );
    println!("  {}", servers::version("redis-server", "--version"));
    println!(
        "  {}",
        servers::version("/usr/lib/postgresql/15/bin/postgres", "--version")
    );
    let need_etcd = cases.iter().any(|c| c.lock == LockBackend::Etcd);
    if need_etcd {
        println!("  {}", servers::version("etcd", "--version"));
    }
    if cases.iter().any(|c| !c.sc.lock_clock_jumps.is_empty()) {
        println!(
            "  libfaketime: {}",
            servers::version("faketime", "--version")
        );
    }
    let srv = Servers {
        versions: Versions {
            redis: short_version(&servers::version("redis-server", "--version")),
            pg: short_version(&servers::version(
                "/usr/lib/postgresql/15/bin/postgres",
                "--version",
            )),
            etcd: if need_etcd {
                short_version(&servers::version("etcd", "--version"))
            } else {
                String::new()
            },
        },
        pg: PgServer::start(&dir)?,
        etcd: if need_etcd {
            Some(EtcdServer::start(&dir, "etcd", 1)?)
        } else {
            None
        },
        dir,
    };
    println!();
    println!("| scenario | policy | real ms per scenario ms | predicted: balance / last fence / writes | observed | |");
    println!("|---|---|---|---|---|---|");
    let mut runs = 0;
    let mut mismatches = Vec::new();
    let mut skipped = Vec::new();
    let mut record = Vec::new();
    let mut same_events = 0;
    for (n, c) in cases.iter().enumerate() {
        let policy = policy_name(c.sc.policy);
        if let Some(why) = not_reproducible(c) {
            println!(
                "| {} | {policy} | – | {} | not reproduced | {why} |",
                c.label,
                show(&predict(&core::run(&c.sc)))
            );
            skipped.push(format!("{} {policy}: {why}", c.label));
            continue;
        }
        let sim = core::run(&c.sc);
        let predicted = predict(&sim);
        let (scale, slot) = timing(c);
        runs += 1;
        let mut result = run_case(c, 2 * n, &srv);
        // A disagreement from a run whose threads woke a quarter slot late may be the
        // scheduler's, not the servers': such a run (only such) is made once more, and says so.
        if let Ok(rep) = &result {
            if rep.observed != predicted && rep.max_late_ms > 0.25 * slot {
                eprintln!(
                    "  {} {policy}: disagreed with {:.1} ms of scheduler lateness (slot {slot:.0} ms); running it again",
                    c.label, rep.max_late_ms
                );
                let first = show(&rep.observed);
                result = run_case(c, 2 * n + 1, &srv).map(|mut r| {
                    r.notes.push(format!(
                        "rerun: the first attempt observed {first} with {:.1} ms lateness",
                        rep.max_late_ms
                    ));
                    r
                });
            }
        }
        match result {
            Ok(rep) => {
                // The recorded trace must tell what the storage's own log says.
                let traced: Vec<(String, &str)> = rep
                    .trace
                    .writes
                    .iter()
                    .map(|w| {
                        let code = w.result.as_ref().map_or_else(|e| e.code(), |_| "ok");
                        (w.request.writer.clone(), code)
                    })
                    .collect();
                let logged: Vec<(String, &str)> = rep
                    .observed
                    .writes
                    .iter()
                    .map(|a| (a.writer.clone(), a.code.as_str()))
                    .collect();
                if traced != logged || rep.trace.summary.final_balance != rep.observed.balance {
                    mismatches.push(format!(
                        "{} {policy}: the recorded trace disagrees with the storage's write log: {traced:?} against {logged:?}",
                        c.label
                    ));
                }
                // How close the recording came to the simulation: event for event.
                let first_diff = sim
                    .events
                    .iter()
                    .zip(&rep.trace.events)
                    .position(|(a, b)| a != b)
                    .or_else(|| {
                        (sim.events.len() != rep.trace.events.len())
                            .then_some(sim.events.len().min(rep.trace.events.len()))
                    });
                match first_diff {
                    None => same_events += 1,
                    Some(i) => eprintln!(
                        "  {} {policy}: the recorded trace differs from the simulated one from event {i}: {:?} against {:?}",
                        c.label,
                        rep.trace.events.get(i).map(|e| (e.at, &e.kind)),
                        sim.events.get(i).map(|e| (e.at, &e.kind))
                    ),
                }
                let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/replay/recorded");
                if std::fs::create_dir_all(&dir).is_ok() {
                    let _ = std::fs::write(
                        dir.join(format!("{}-{}.json", c.label, c.sc.policy.code())),
                        serde_json::to_string_pretty(&rep.trace).unwrap_or_default(),
                    );
                }
                let ok = rep.observed == predicted;
                println!(
                    "| {} | {policy} | {scale:.2} | {} | {} | {} |",
                    c.label,
                    show(&predicted),
                    show(&rep.observed),
                    if ok { "✓" } else { "MISMATCH" }
                );
                if !ok {
                    mismatches.push(format!(
                        "{} {policy}:\n    predicted {}\n    observed  {}\n{}",
                        c.label,
                        show(&predicted),
                        show(&rep.observed),
                        differences(&predicted, &rep.observed).join("\n")
                    ));
                }
                record.push(json!({
                    "scenario": c.label, "policy": c.sc.policy.code(), "scale": scale,
                    "lock": format!("{:?}", c.lock), "token_source": c.sc.token_source.code(),
                    "predicted": show(&predicted), "observed": show(&rep.observed), "match": ok,
                    "ranked_tokens": rep.ranked, "notes": rep.notes,
                    "max_late_ms": rep.max_late_ms, "wall_s": rep.wall.as_secs_f64(),
                }));
                for note in &rep.notes {
                    eprintln!("  {} {policy}: {note}", c.label);
                }
                if let Some(r) = &rep.ranked {
                    eprintln!(
                        "  {} {policy}: etcd revisions compared by rank (raw → shown): {r:?}",
                        c.label
                    );
                }
                eprintln!(
                    "  {} {policy}: worst lateness {:.1} ms, {:.1} s",
                    c.label,
                    rep.max_late_ms,
                    rep.wall.as_secs_f64()
                );
            }
            Err(e) => {
                println!(
                    "| {} | {policy} | {scale:.2} | {} | error | MISMATCH |",
                    c.label,
                    show(&predicted)
                );
                mismatches.push(format!("{} {policy}: error: {e}", c.label));
            }
        }
    }
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/replay");
    if std::fs::create_dir_all(&out).is_ok() {
        let _ = std::fs::write(
            out.join("observed.json"),
            serde_json::to_string_pretty(&record).unwrap_or_default(),
        );
    }
    println!();
    for s in &skipped {
        println!("not reproduced: {s}");
    }
    for m in &mismatches {
        println!("mismatch: {m}");
    }
    println!(
        "recorded traces (target/replay/recorded/): {same_events} of {runs} equal the simulated trace event for event"
    );
    println!("replay: {runs} runs, {} mismatches", mismatches.len());
    Ok(mismatches.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_deck_scenario_gets_a_plan_and_a_scale() {
        let all = cases(&[]).expect("cases");
        assert_eq!(
            all.len(),
            (DECK.len() + ON_ETCD.len() + LAGS.len() + 2) * FencingPolicy::ALL.len(),
            "the deck, its etcd runs, the lags, {HIGHEST_TOO}@highest and row-lock{NO_TIMEOUT_SUFFIX}"
        );
        let highest = all
            .iter()
            .find(|c| c.label == format!("{HIGHEST_TOO}@highest"))
            .expect("the highest-token run");
        assert_eq!(highest.sc.check, StorageCheck::HighestToken);
        assert_eq!(highest.lock, LockBackend::Etcd);
        assert_eq!(granularity(&highest.sc), 5, "every time a multiple of 5 ms");
        for c in &all {
            let (scale, slot) = timing(c);
            assert!(scale > 0.0 && slot >= 5.0, "{}", c.label);
            // The whole horizon stays within a few seconds of real time.
            assert!(c.sc.horizon as f64 * scale <= 12_000.0, "{}", c.label);
        }
        assert_eq!(granularity(&Scenario::gc_pause()), 5);
        assert_eq!(granularity(&Scenario::delayed_packet()), 5);
        let mut odd = Scenario::delayed_packet();
        odd.actors[0].request_timeout = Some(12);
        assert_eq!(
            granularity(&odd),
            1,
            "the timeout is a time of the scenario too"
        );
        let handoff = all
            .iter()
            .find(|c| c.label == "handoff-barrier")
            .expect("handoff");
        assert_eq!(granularity(&handoff.sc), 1_000);
    }

    #[test]
    fn the_sequencer_check_is_replayed_on_etcd_only() {
        let case = |sc: Scenario| Case {
            label: "x".to_owned(),
            lock: backend(&sc),
            sc,
        };
        let on_redis = Scenario {
            check: StorageCheck::Sequencer,
            ..Scenario::gc_pause()
        };
        let why = not_reproducible(&case(on_redis.clone())).expect("not on Redis");
        assert!(why.contains("against etcd only"), "{why}");
        // Off, storage asks nothing: the run is an ordinary one.
        assert_eq!(
            not_reproducible(&case(on_redis.with_policy(FencingPolicy::Off))),
            None
        );
        assert_eq!(not_reproducible(&case(Scenario::sequencer())), None);
    }

    #[test]
    fn tokens_come_from_the_servers_the_scenario_names() {
        let find = |id: &str| (core::deck::find(id).expect("deck").build)();
        assert_eq!(backend(&find("redis-failover")), LockBackend::Redis);
        assert_eq!(backend(&find("clock-jump")), LockBackend::Redlock);
        assert_eq!(backend(&Scenario::gc_pause()), LockBackend::Redis);
        let all = cases(&[]).expect("cases");
        let what_if = all
            .iter()
            .find(|c| c.label == "redis-failover@etcd")
            .expect("what-if");
        assert_eq!(what_if.lock, LockBackend::Etcd);
        assert_eq!(what_if.sc.token_source, TokenSource::LockService);
    }
}
