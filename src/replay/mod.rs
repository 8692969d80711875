//! `fencing-lab replay [SCENARIO…]`: runs each deck scenario's schedule against real
//! servers (redis-server, PostgreSQL, etcd, libfaketime) and compares what happened with
//! what the core predicted. Native only.
//!
//! The clients run the core's own steps ([`run`]); the lock services sit behind one seam
//! ([`lock`]); the world's faults are [`world`]'s. What the replay reads of the core besides:
//! `core::run`'s trace (its writes and summary: the prediction), `core::recorded` (the fold
//! of what the clients saw into a trace of the same schema), and the scenario's data.

mod backends;
mod lock;
mod observed;
mod outcome;
mod pg;
mod run;
mod servers;
mod standby;
mod world;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex, OnceLock};
use std::time::Instant;

use fencing_lab::core::EventKind::PauseStarted;
use fencing_lab::core::Seen;
use fencing_lab::core::{
    self, FencingPolicy, LockKind, Millis, RowLock, Scenario, SplitMix64, Step, StorageCheck,
    TokenSource, COUNTER_GAP, DECK, GET_DEL_GAP,
};

use lock::Backend;
use outcome::{code, predict, show, Outcome};
use pg::Pg;
use run::Env;
use servers::PG_BIN;

/// Real ms per time slot of a Redis-locked run: the smallest gap between two decisive
/// events of a scenario becomes this long.
const SLOT_MS: f64 = 60.0;
/// How an error of the fold of a run's observations begins (see [`run_until_punctual`]).
const FOLD_FAILED: &str = "the fold of what the clients saw";
/// How a what-if changes its deck scenario.
type Change = fn(&mut Scenario);

/// The what-ifs replayed beside the deck: the deck entry, the run's label, what changes.
/// On etcd, the lease, lock and token are etcd's (for redis-failover the page's what-if: a
/// 3-member etcd cluster loses its leader). The replica lags on redis-failover (failover at
/// t=5, A's SET at t=0): 5 ms behind it has the SET, 10 ms behind it does not. `@highest`:
/// storage checks only the highest token it has seen, the run the sequencer check changes.
static WHAT_IFS: &[(&str, &str, Change)] = &[
    ("gc-pause", "gc-pause@etcd", |sc| {
        sc.lock = LockKind::SERVICE
    }),
    ("redis-failover", "redis-failover@etcd", |sc| {
        sc.lock = LockKind::SERVICE
    }),
    ("redis-failover", "redis-failover@lag5", |sc| {
        sc.set_crash_lag(Some(5))
    }),
    ("redis-failover", "redis-failover@lag10", |sc| {
        sc.set_crash_lag(Some(10))
    }),
    ("row-lock", "row-lock@no-timeout", |sc| {
        sc.lock = LockKind::Row(RowLock {
            idle_timeout: false,
        })
    }),
    ("sequencer", "sequencer@highest", |sc| {
        sc.check = StorageCheck::HighestToken
    }),
];

/// One run to make.
struct Case {
    label: String,
    sc: Scenario,
    lock: &'static Backend,
}

/// The runs `ids` names (all of them if none), under every policy: each deck entry, and
/// after it its what-ifs; after each run on etcd, the same on ZooKeeper (`@zookeeper`).
fn cases(ids: &[String]) -> Result<Vec<Case>, String> {
    let mut all = Vec::new();
    for e in DECK {
        let what_ifs = WHAT_IFS.iter().filter(|w| w.0 == e.id).map(|w| (w.1, w.2));
        for (label, change) in [(e.id, (|_| {}) as Change)].into_iter().chain(what_ifs) {
            let scs = FencingPolicy::ALL.map(|policy| {
                let mut sc = (e.build)().with_policy(policy);
                change(&mut sc);
                sc
            });
            let first = backends::of(&scs[0]);
            let mut runs = vec![(label.to_owned(), first)];
            let base = label.trim_end_matches(&format!("@{}", first.name));
            let twin = |t: &'static Backend| (format!("{base}@{}", t.name), t);
            runs.extend(backends::twins(first).map(twin));
            for (label, lock) in runs {
                let case = |sc: &Scenario| Case {
                    label: label.clone(),
                    sc: sc.clone(),
                    lock,
                };
                all.extend(scs.iter().map(case));
            }
        }
    }
    if let Some(id) = ids.iter().find(|id| !all.iter().any(|c| c.label == **id)) {
        let mut known: Vec<&str> = all.iter().map(|c| c.label.as_str()).collect();
        known.dedup();
        let known = known.join(", ");
        return Err(format!("unknown scenario {id:?}; known: {known}"));
    }
    all.retain(|c| ids.is_empty() || ids.contains(&c.label));
    Ok(all)
}

/// Why a case has no faithful real equivalent here, if it has none. (A case that asks a
/// lock service for what it has no equivalent of fails with an error instead: see
/// [`lock::Lock`].)
fn not_reproducible(c: &Case) -> Option<&'static str> {
    let sc = &c.sc;
    let steps = || sc.actors.iter().flat_map(|a| &a.script);
    let publishes = steps().any(|s| matches!(s, Step::Publish { .. } | Step::Claim { .. }));
    let debits = steps().any(|s| matches!(s, Step::Debit { .. }));
    let delayed = sc.actors.iter().any(|a| a.network_delay > 0);
    let jumps = sc.clock_jumps().next().is_some();
    let service = c.lock.lock_service;
    // The harness, acting as the resource, makes the sequencer check on undelayed debits.
    let sequencer = sc.check == StorageCheck::Sequencer && sc.policy.checks_fence();
    [
        (jumps && !Path::new(servers::FAKETIME_LIB).exists(), "clock jump needs libfaketime (Debian faketime), not installed"),
        (sc.lock.lock_delay() > 0, "lock-delay is Chubby's: Redis has none (SET NX succeeds the moment the key expires), nor has an etcd lease or a ZooKeeper session"),
        (sequencer && (publishes || delayed), "the harness checks sequencers on undelayed debits only"),
        (publishes && debits, "debits and publishes share one high-water mark in the core; the harness keeps the balance's fence and the result row's epoch apart"),
        (service && jumps, "the lock service does not run under faketime here"),
        (sc.failover_at().is_some() && jumps, "a failover with a clock step: the promoted replica does not run under libfaketime"),
        (sc.restart() && sc.replication_lag().is_some(), "a restart has no replica to lag: the one Redis comes back from its snapshot"),
    ]
    .into_iter()
    .find_map(|(applies, why)| applies.then_some(why))
    .or_else(|| (c.lock.cannot)(sc))
}

/// Euclid's: `gcd(a, 0)` is `a`.
fn gcd(a: u64, b: u64) -> u64 {
    a.checked_rem(b).map_or(a, |r| gcd(b, r))
}

/// The scenario's time grain: the gcd of every time in it (1 ms if a watchdog jitters).
fn granularity(sc: &Scenario) -> Millis {
    let mut times = vec![sc.lease_ttl, sc.failover_at().unwrap_or(0)];
    times.extend(sc.clock_jumps().flat_map(|(at, _, by)| [at, by]));
    let separate = sc.lock.token_source() == TokenSource::SeparateCounter;
    for a in &sc.actors {
        times.extend([a.start_at, a.network_delay, a.request_timeout.unwrap_or(0)]);
        times.extend(a.pauses.iter().flat_map(|p| [p.start, p.duration]));
        times.extend(a.script.iter().map(|s| match s {
            Step::Acquire { retry_every } if separate => gcd(*retry_every, COUNTER_GAP),
            Step::Acquire { retry_every } => *retry_every,
            Step::Work { ms } => *ms,
            Step::WorkRenewing { .. } => 1,
            Step::Release if sc.release == core::ReleaseMode::GetThenDel => GET_DEL_GAP,
            _ => 0,
        }));
    }
    times.into_iter().fold(0, gcd).max(1)
}

/// (real ms per scenario ms, real ms per slot).
fn timing(c: &Case) -> (f64, f64) {
    let g = granularity(&c.sc) as f64;
    let scale = match c.lock.lock_service {
        // A herd's late answers come 2 ms after the lease ended, and etcd's lessor revokes an
        // expired lease up to 500 ms late (it checks every 500 ms): three times slower puts
        // 600 real ms between them, and keeps the TTL whole seconds.
        true if c.sc.lock.herd().is_some() => 3.0 * lock::service_scale(&c.sc),
        true => lock::service_scale(&c.sc),
        false => SLOT_MS / g,
    };
    (scale, scale * g)
}

/// What a finished run produced.
struct Report {
    observed: Outcome,
    /// The run as a trace in the core's own schema, folded from what the clients saw.
    trace: core::Trace,
    /// Worst lateness of any action against its target time (real ms).
    late_ms: f64,
}

/// The servers every run shares: PostgreSQL (its version, "15.18", for a recorded trace's
/// label), and the temp dir every run's servers live in.
struct Servers {
    dir: PathBuf,
    pg: pg::Config,
    pg_version: String,
}

/// Makes one run: the lock servers, the actors and the world on their threads, then what
/// the storage holds, as an outcome and as a recorded trace.
fn run_case(c: &Case, n: usize, srv: &Servers) -> Result<Report, String> {
    let (sc, (scale, slot), schema) = (&c.sc, timing(c), format!("run{n}"));
    let (run_schema, mut notes) = (schema.clone(), Vec::new());
    // Where storage fails over, it is a primary and a standby of the run's own.
    let pair_dir = srv.dir.join(format!("pg-pair{n}"));
    let failover = (sc.storage_crash().is_some())
        .then(|| standby::Failover::start(&pair_dir, &schema, &mut notes))
        .transpose()?;
    let pg_cfg = failover.as_ref().map_or(&srv.pg, |f| f.either()).clone();
    let mut admin = Pg::connect(&pg_cfg, "")?;
    let sql = pg::schema_sql(&schema, sc);
    (admin.batch(&sql)).map_err(|e| format!("postgres: {e}: {sql}"))?;
    let dir = &srv.dir;
    let service = (c.lock.start)(&lock::Run { sc, n, dir, scale }, &mut notes)?;
    let env = Env {
        scale,
        slot,
        service: service.as_ref(),
        pg: pg_cfg.clone(),
        schema,
        shared: Mutex::default(),
        rng: Mutex::new(SplitMix64::new(sc.seed)),
        start: OnceLock::new(),
    };
    std::thread::scope(|s| {
        let connect = |i| run::connect(&env, sc, i, s);
        let clients: Vec<_> = (0..sc.actors.len())
            .map(connect)
            .collect::<Result<_, _>>()?;
        env.begin();
        let (env, service, shared) = (&env, env.service, &env.shared);
        let storage = failover.as_ref();
        let world = world::World {
            env,
            sc,
            service,
            shared,
            storage,
        };
        let world = s.spawn(move || world.run());
        let actors: Vec<_> = clients
            .into_iter()
            .map(|c| s.spawn(|| run::act(c)))
            .collect();
        for h in actors.into_iter().chain([world]) {
            h.join().map_err(|_| "a replay thread panicked")??;
        }
        Ok::<(), String>(())
    })?;
    let obs = std::mem::take(&mut *observed::observe(&env.shared));
    let lock_system = service.system();
    drop(service);
    if failover.is_some() {
        // The admin's session died with the primary: the promoted standby's, in the schema.
        admin = Pg::connect(&pg_cfg, &run_schema)?;
    }
    let read = pg::read_storage(&mut admin, sc);
    let mut observed = read.map_err(|e| format!("postgres: reading the storage back: {e}"))?;
    if let Some(f) = &failover {
        f.splice(&mut observed);
    }
    let account = pg::account(&observed, sc);
    pg::add_ended_sessions(&mut observed, &obs.events);
    notes.extend(obs.notes);
    if c.lock.lock_service {
        rank_tokens(&mut observed, &obs.tokens, sc.first_fence, &mut notes);
    }
    // The pauses are the schedule's, made by the harness by not acting: the engine's own.
    let pause = |o: &core::Observation| {
        matches!(o.seen, Seen::Event(PauseStarted { .. }) | Seen::PauseEnded)
    };
    let pauses = core::observations_of(&core::run(sc))
        .into_iter()
        .filter(pause);
    let events = obs.events.into_iter().chain(pauses).collect();
    // Under a row lock, the lock and the storage are one server.
    let standby = if failover.is_some() {
        " (primary + asynchronous streaming standby)"
    } else {
        ""
    };
    let storage =
        (c.lock.name != "row-lock").then(|| format!("PostgreSQL {}{standby}", srv.pg_version));
    let jumps = (sc.clock_jumps().next().is_some()).then(|| "libfaketime".to_owned());
    let systems = [Some(lock_system), storage, jumps].into_iter().flatten();
    let recording = core::Recording {
        systems: systems.collect(),
        timing: format!("1 scenario ms = {scale:.2} real ms"),
        notes,
    };
    let trace = core::recorded(sc, events, account, recording)
        .map_err(|e| format!("{FOLD_FAILED}: {e}"))?;
    let late_ms = obs.max_late_ms;
    Ok(Report {
        observed,
        trace,
        late_ms,
    })
}

/// A lock service's tokens (etcd's revisions, ZooKeeper's czxids) count every write it made:
/// they are compared with the core's by rank (the first grant's is `first`, the next one more).
fn rank_tokens(o: &mut Outcome, granted: &[u64], first: u64, notes: &mut Vec<String>) {
    let mut raw = granted.to_vec();
    raw.sort_unstable();
    raw.dedup();
    let rank = |t: u64| raw.binary_search(&t).map_or(t, |i| first + i as u64);
    for w in &mut o.writes {
        w.token = w.token.map(rank);
    }
    o.last_fence = o.last_fence.map(rank);
    let shown: Vec<(u64, u64)> = raw.iter().map(|&r| (r, rank(r))).collect();
    notes.push(format!(
        "the lock service's tokens compared by rank (raw → shown): {shown:?}"
    ));
}

/// How many runs are made at once unless `--jobs N` says otherwise: most of a run is its
/// clients sleeping until their slots, so runs overlap well (see scripts/replay.sh).
const JOBS: usize = 3;

/// Entry point of `fencing-lab replay [--jobs N] [SCENARIO…]`; returns the exit code.
pub fn main(args: &[String]) -> i32 {
    let t0 = Instant::now();
    let (jobs, cases) = match jobs(args).and_then(|(jobs, ids)| Ok((jobs, cases(ids)?))) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("replay: {e}");
            return 2;
        }
    };
    let _cleanup = servers::Cleanup::install();
    let mismatches = replay(&cases, jobs).unwrap_or_else(|e| {
        eprintln!("replay: error: {e}");
        println!("replay: 0 runs, 1 mismatches");
        1
    });
    eprintln!("replay: wall time {:.1} s", t0.elapsed().as_secs_f64());
    i32::from(mismatches > 0)
}

/// `--jobs N` (a leading option) and the scenario ids after it.
fn jobs(args: &[String]) -> Result<(usize, &[String]), String> {
    match args {
        [flag, n, ids @ ..] if flag == "--jobs" => match n.parse() {
            Ok(jobs @ 1..) => Ok((jobs, ids)),
            _ => Err(format!("--jobs {n:?}: wants a whole number, 1 or more")),
        },
        ids => Ok((JOBS, ids)),
    }
}

/// Starts the shared servers, makes every run (`jobs` at a time), prints the table and the
/// verdict; returns the number of mismatches.
fn replay(cases: &[Case], jobs: usize) -> Result<usize, String> {
    let dir = servers::temp_root()?;
    let shown = dir.display();
    println!("servers (all on 127.0.0.1 / a Unix socket, in {shown}):");
    let v = servers::version;
    let pg_version = v(&format!("{PG_BIN}/postgres"));
    let (redis, etcd, faketime) = (v("redis-server"), v("etcd"), v("faketime"));
    println!("  Redis {redis}, PostgreSQL {pg_version}, etcd {etcd}, libfaketime {faketime}");
    let srv = Servers {
        pg: servers::start_pg(&dir)?,
        dir,
        pg_version,
    };
    println!();
    println!("| scenario | policy | real ms per scenario ms | predicted: balance / last fence / writes | observed | |");
    println!("|---|---|---|---|---|---|");
    let mut tally = Tally::default();
    let case = |n| {
        let mut t = Tally::default();
        t.case(&cases[n], n, &srv);
        t
    };
    pool(cases.len(), jobs, case, |t| tally.add(t));
    println!();
    for m in &tally.mismatches {
        println!("mismatch: {m}");
    }
    let (same, runs) = (tally.same_events, tally.runs);
    println!("recorded traces (target/replay/recorded/): {same} of {runs} equal the simulated trace event for event");
    println!("replay: {runs} runs, {} mismatches", tally.mismatches.len());
    Ok(tally.mismatches.len())
}

/// Makes `count` things on `jobs` scoped threads, each thread taking the next one as it is
/// free, and hands `done` each result in order: as soon as it and all before it are made.
fn pool<T: Send>(count: usize, jobs: usize, make: impl Fn(usize) -> T + Sync, done: impl FnMut(T)) {
    let (next, (tx, rx)) = (AtomicUsize::new(0), mpsc::channel());
    std::thread::scope(|s| {
        for _ in 0..jobs.min(count) {
            let (tx, next, make) = (tx.clone(), &next, &make);
            s.spawn(move || loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                if n >= count || tx.send((n, make(n))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        in_order(rx, done);
    });
}

/// Hands `done` the items of `(index, item)` pairs numbered from 0 that arrive in any order,
/// in index order, each as soon as all before it have arrived.
fn in_order<T>(arrivals: impl IntoIterator<Item = (usize, T)>, mut done: impl FnMut(T)) {
    let (mut waiting, mut next) = (BTreeMap::new(), 0);
    for (n, item) in arrivals {
        waiting.insert(n, item);
        while let Some(item) = waiting.remove(&next) {
            done(item);
            next += 1;
        }
    }
}

/// Makes case number `n`. A disagreement from a run whose threads woke a quarter slot late may
/// be the scheduler's, not the servers': such a run (only such) is made once more, and says so.
fn run_until_punctual(c: &Case, n: usize, srv: &Servers, want: &Outcome) -> Result<Report, String> {
    let slot = timing(c).1;
    let first = match run_case(c, 2 * n, srv) {
        // A fault the world made late (a failover still under way when a client acts) can
        // leave an observation no grant explains: that run is made again once, and says so.
        Err(e) if e.starts_with(FOLD_FAILED) => {
            let mut again = run_case(c, 2 * n + 1, srv)?;
            if let Some(r) = &mut again.trace.recorded {
                r.notes.push(format!(
                    "rerun: the first attempt could not be folded ({e})"
                ));
            }
            return Ok(again);
        }
        first => first?,
    };
    let late = first.late_ms;
    if first.observed == *want || late <= 0.25 * slot {
        return Ok(first);
    }
    let seen = show(&first.observed);
    let mut again = run_case(c, 2 * n + 1, srv)?;
    if let Some(r) = &mut again.trace.recorded {
        r.notes.push(format!("rerun: the first attempt observed {seen} with {late:.1} ms of scheduler lateness (slot {slot:.0} ms)"));
    }
    Ok(again)
}

/// What the runs so far came to; a case's own, with the lines it prints, until [`Tally::add`].
#[derive(Default)]
struct Tally {
    runs: usize,
    /// Runs whose recorded trace equals the simulated one, event for event.
    same_events: usize,
    mismatches: Vec<String>,
    /// Lines not yet printed: (to stderr, line). A case's are printed together, in case order.
    lines: Vec<(bool, String)>,
}

impl Tally {
    /// Adds a case's tally, printing its lines.
    fn add(&mut self, case: Tally) {
        for (to_stderr, line) in case.lines {
            match to_stderr {
                true => eprintln!("{line}"),
                false => println!("{line}"),
            }
        }
        self.runs += case.runs;
        self.same_events += case.same_events;
        self.mismatches.extend(case.mismatches);
    }

    /// Makes case number `n` (unless it has no real equivalent), keeps its row, its notes and
    /// its recorded trace.
    fn case(&mut self, c: &Case, n: usize, srv: &Servers) {
        let sim = core::run(&c.sc);
        let predicted = predict(&sim);
        let (label, policy, p) = (&c.label, c.sc.policy.short(), show(&predicted));
        let row = |scale: &str, observed: &str, verdict: &str| {
            (
                false,
                format!("| {label} | {policy} | {scale} | {p} | {observed} | {verdict} |"),
            )
        };
        if let Some(why) = not_reproducible(c) {
            return self.lines.push(row("–", "not reproduced", why));
        }
        self.runs += 1;
        let scale = format!("{:.2}", timing(c).0);
        let rep = match run_until_punctual(c, n, srv, &predicted) {
            Ok(rep) => rep,
            Err(e) => {
                self.lines.push(row(&scale, "error", "MISMATCH"));
                let m = format!("{label} {policy}: error: {e}");
                return self.mismatches.push(m);
            }
        };
        let (ok, o) = (rep.observed == predicted, show(&rep.observed));
        self.lines
            .push(row(&scale, &o, if ok { "✓" } else { "MISMATCH" }));
        if !ok {
            let m = format!("{label} {policy}:\n    predicted {p}\n    observed  {o}");
            self.mismatches.push(m);
        }
        self.check_trace(c, &sim, &rep);
        for note in rep.trace.recorded.iter().flat_map(|r| &r.notes) {
            self.note(format!("  {label} {policy}: {note}"));
        }
        let (late, slot) = (rep.late_ms, timing(c).1);
        self.note(format!(
            "  {label} {policy}: worst lateness {late:.1} ms (slot {slot:.0} ms)"
        ));
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/replay/recorded");
        let file = dir.join(format!("{label}-{}.json", c.sc.policy.code()));
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(&dir)?;
            std::fs::write(&file, serde_json::to_vec_pretty(&rep.trace)?)
        };
        if let Err(e) = write() {
            self.note(format!("  {label} {policy}: {}: {e}", file.display()));
        }
    }

    /// Keeps a note line (to stderr) with the case's other lines.
    fn note(&mut self, line: String) {
        self.lines.push((true, line));
    }

    /// The recorded trace must tell what the storage's own log says; and how close it came
    /// to the simulation, event for event.
    fn check_trace(&mut self, c: &Case, sim: &core::Trace, rep: &Report) {
        let (label, policy) = (&c.label, c.sc.policy.short());
        let traced: Vec<(&str, &str)> = (rep.trace.writes.iter())
            .map(|w| (w.request.writer.as_str(), code(w)))
            .collect();
        let logged: Vec<(&str, &str)> = (rep.observed.writes.iter())
            .map(|a| (a.writer.as_str(), a.code.as_str()))
            .collect();
        if traced != logged || rep.trace.summary.final_balance != rep.observed.balance {
            self.mismatches.push(format!("{label} {policy}: the recorded trace disagrees with the storage's write log: {traced:?} against {logged:?}"));
        }
        let (s, r) = (&sim.events, &rep.trace.events);
        let first_diff = s.iter().zip(r).position(|(a, b)| a != b);
        match first_diff.or((s.len() != r.len()).then_some(s.len().min(r.len()))) {
            None => self.same_events += 1,
            Some(i) => self.note(format!(
                "  {label} {policy}: the recorded trace differs from the simulated one from event {i}: {:?} against {:?}",
                r.get(i).map(|e| (e.at, &e.kind)),
                s.get(i).map(|e| (e.at, &e.kind))
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn runs_made_at_once_are_told_in_case_order_as_soon_as_they_can_be() {
        // (item, arrivals so far when it was told): a and b once a came, c and d once c came.
        let (arrived, mut told) = (Cell::new(0), Vec::new());
        let arrivals = [(1, 'b'), (0, 'a'), (3, 'd'), (2, 'c')];
        let counted = arrivals
            .into_iter()
            .inspect(|_| arrived.set(arrived.get() + 1));
        in_order(counted, |item| told.push((item, arrived.get())));
        assert_eq!(told, [('a', 2), ('b', 2), ('c', 4), ('d', 4)]);
        // On the pool, later items are made sooner, yet are told in order, each once.
        let mut told = Vec::new();
        let slower_first = |n: usize| {
            std::thread::sleep(std::time::Duration::from_millis(4 * (8 - n) as u64));
            n
        };
        pool(8, 3, slower_first, |n| told.push(n));
        assert_eq!(told, (0..8).collect::<Vec<_>>());
    }

    #[test]
    fn jobs_is_a_leading_option_and_a_bad_count_is_refused() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let ids = args(&["gc-pause", "clock-jump"]);
        assert_eq!(jobs(&ids), Ok((JOBS, &ids[..])));
        let with = args(&["--jobs", "2", "gc-pause"]);
        assert_eq!(jobs(&with), Ok((2, &with[2..])));
        for n in ["0", "two", "-1"] {
            let err = jobs(&args(&["--jobs", n])).expect_err("refused");
            assert!(err.ends_with("wants a whole number, 1 or more"), "{err}");
        }
    }

    #[test]
    fn every_run_gets_its_servers_and_a_scale_of_seconds() {
        let all = cases(&[]).expect("cases");
        let on_etcd = all.iter().filter(|c| c.lock.name == "etcd").count();
        assert_eq!(
            all.len(),
            (DECK.len() + WHAT_IFS.len()) * FencingPolicy::ALL.len() + on_etcd
        );
        let find = |label: &str| all.iter().find(|c| c.label == label).expect("a run");
        let zk = find("gc-pause@zookeeper");
        assert_eq!(
            (zk.lock.name, zk.sc.lock.token_source()),
            ("zookeeper", TokenSource::LockService)
        );
        assert_eq!(find("sequencer@highest@zookeeper").lock.name, "zookeeper");
        let (highest, on_etcd) = (find("sequencer@highest"), find("redis-failover@etcd"));
        assert_eq!(highest.sc.check, StorageCheck::HighestToken);
        assert_eq!((highest.lock.name, on_etcd.lock.name), ("etcd", "etcd"));
        assert_eq!(on_etcd.sc.lock.token_source(), TokenSource::LockService);
        assert_eq!(find("redis-failover").lock.name, "redis");
        assert_eq!(find("clock-jump").lock.name, "redlock");
        assert_eq!(granularity(&highest.sc), 5, "every time a multiple of 5 ms");
        assert_eq!(granularity(&find("handoff-barrier").sc), 1_000);
        for c in &all {
            let (scale, slot) = timing(c);
            assert!(scale > 0.0 && slot >= 5.0, "{}", c.label);
            // The whole horizon stays within a few seconds of real time; a herd's runs are
            // three times slower ([`timing`]: etcd revokes an expired lease up to 500 ms late).
            let bound = if c.sc.lock.herd().is_some() { 3.0 } else { 1.0 } * 12_000.0;
            assert!(c.sc.horizon as f64 * scale <= bound, "{}", c.label);
        }
        let mut odd = Scenario::delayed_packet();
        odd.actors[0].request_timeout = Some(12);
        assert_eq!(
            granularity(&odd),
            1,
            "the timeout is a time of the scenario too"
        );
    }

    /// A backend's own limits come from its declaration ([`lock::Backend::cannot`]), the
    /// harness's from [`not_reproducible`]'s list: the runs left out, and why, by name.
    #[test]
    fn the_runs_not_reproduced_are_left_out_by_their_backend_or_the_harness() {
        let all = cases(&[]).expect("cases");
        let mut out: Vec<(&str, &str)> = (all.iter())
            .filter_map(|c| Some((c.label.as_str(), not_reproducible(c)?)))
            .collect();
        out.sort_unstable();
        out.dedup();
        let chubby = "lock-delay is Chubby's";
        let live = "a live ZooKeeper client's heartbeats keep its session";
        let whys: Vec<(&str, &str)> = (out.iter())
            .map(|(label, why)| {
                (
                    *label,
                    if why.starts_with(chubby) {
                        chubby
                    } else {
                        live
                    },
                )
            })
            .collect();
        assert_eq!(
            whys,
            [
                ("lock-delay", chubby),
                ("lock-delay@zookeeper", chubby),
                ("raft-partition@zookeeper", live),
                ("renewal-herd@zookeeper", live),
            ]
        );
        assert!(out
            .iter()
            .all(|(_, why)| why.starts_with(chubby) || why.starts_with(live)));
        // The same scenario on another backend: only ZooKeeper's declaration leaves it out.
        let raft = (all.iter())
            .find(|c| c.label == "raft-partition")
            .expect("on etcd");
        assert_eq!(not_reproducible(raft), None);
    }
}
