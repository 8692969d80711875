//! storage-failover's storage: a PostgreSQL primary with an asynchronous streaming standby
//! ([`PgPair`]). The standby's stream is cut `lag` before the primary dies, so it has every
//! commit at least `lag` old and none newer (the core's `Fault::StorageFailover`); then the
//! primary is killed and the standby promoted, and the clients' connection string finds it.
//!
//! Not `recovery_min_apply_delay` nor a paused replay: both hold back only the replay of WAL
//! the standby has already received, and a promotion replays all of it first, so nothing
//! would be lost. What an asynchronous standby loses is what it never received.

use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use fencing_lab::core::{Fence, Millis, Seen};

use super::outcome::{show_writes, Attempt, Outcome};
use super::pg::{self, Config, Pg};
use super::servers::{poll, PgPair};

/// A run's storage that fails over, and the two write logs it leaves.
pub struct Failover {
    pair: PgPair,
    /// A session on the primary and one on the standby, in the run's schema, opened before
    /// the run so that the cut, inside the schedule, waits on no connection.
    sessions: Mutex<(Pg, Pg)>,
    /// The primary's write log when it died, and how many of its rows the promoted standby
    /// has (a prefix: WAL is replayed in order).
    logs: Mutex<Option<(Vec<Attempt>, usize)>>,
}

/// How long a server's own step (a catch-up, the receiver's exit, a promotion) may take.
const LIMIT: Duration = Duration::from_secs(10);
/// How often the harness asks, inside the run's schedule.
const EVERY: Duration = Duration::from_millis(2);

impl Failover {
    /// Starts the pair in `dir`; the run's schema goes on the primary (`schema`), which
    /// streams it to the standby.
    pub fn start(dir: &Path, schema: &str, notes: &mut Vec<String>) -> Result<Self, String> {
        let t0 = Instant::now();
        let pair = PgPair::start(dir)?;
        let took = t0.elapsed().as_secs_f64();
        notes.push(format!("storage: a primary and its asynchronous streaming standby (pg_basebackup -R), started in {took:.2} s"));
        let primary = Pg::connect(&pair.primary, schema)?;
        let sessions = Mutex::new((primary, Pg::connect(&pair.standby, schema)?));
        let logs = Mutex::new(None);
        Ok(Self {
            pair,
            sessions,
            logs,
        })
    }

    /// Where the clients connect: to whichever of the two takes writes.
    pub fn either(&self) -> &Config {
        &self.pair.either
    }

    /// Cuts the standby's stream (`primary_conninfo` emptied and reloaded: its WAL receiver
    /// exits and is not started again), once it has received all the primary has flushed.
    pub fn cut(&self) -> Result<String, String> {
        let (primary, standby) = &mut *self.sessions();
        let flushed: String = primary.value("SELECT pg_current_wal_flush_lsn()::text", &[])?;
        let caught_up = "SELECT coalesce(pg_last_wal_receive_lsn() >= $1::text::pg_lsn, false)";
        poll("the standby's catch-up", LIMIT, EVERY, || {
            standby.value(caught_up, &[&flushed]).unwrap_or(false)
        })?;
        for sql in [
            "ALTER SYSTEM SET primary_conninfo = ''",
            "SELECT pg_reload_conf()",
        ] {
            standby
                .batch(sql)
                .map_err(|e| format!("postgres: {e}: {sql}"))?;
        }
        let receivers = "SELECT count(*) FROM pg_stat_wal_receiver";
        poll("the standby's WAL receiver to exit", LIMIT, EVERY, || {
            standby.value::<i64>(receivers, &[]).is_ok_and(|n| n == 0)
        })?;
        Ok(format!("the standby received the primary's WAL up to {flushed}; its stream was then cut (primary_conninfo = '', reloaded: its WAL receiver exited)"))
    }

    /// Reads the primary's write log, kills it, promotes the standby (`pg_promote`) and reads
    /// the standby's rows from before the kill (every later one is a client's on the promoted
    /// standby): what the harness saw (the acknowledged writes the standby lacks), and its
    /// evidence.
    pub fn fail_over(&self, lag: Millis) -> Result<(Seen, String), String> {
        let (primary, standby) = &mut *self.sessions();
        let failed = |e| format!("postgres: reading the write log: {e}");
        let on_primary = pg::write_log(primary, None).map_err(failed)?;
        let now = "SELECT clock_timestamp()::text";
        let killed_at: String = primary.value(now, &[])?;
        let t0 = Instant::now();
        self.pair.kill_primary()?;
        let killed = t0.elapsed().as_secs_f64() * 1000.0;
        let _: bool = standby.value("SELECT pg_promote(false)", &[])?;
        poll("the standby's promotion", LIMIT, EVERY, || {
            standby
                .value("SELECT NOT pg_is_in_recovery()", &[])
                .unwrap_or(false)
        })?;
        let promoted = t0.elapsed().as_secs_f64() * 1000.0;
        let on_standby = pg::write_log(standby, Some(&killed_at)).map_err(failed)?;
        let kept = on_standby.len();
        let gone = on_primary.get(kept..).unwrap_or_default();
        let lost = (gone.iter().filter(|a| a.code == "ok"))
            .map(|a| (a.writer.clone(), a.token.map(Fence)))
            .collect();
        let note = format!(
            "the primary was killed (SIGQUIT, immediate shutdown: gone in {killed:.1} ms) and the standby promoted (pg_promote: writable {promoted:.1} ms after the kill); the primary's write log: [{}], the promoted standby's rows from before the kill: [{}]",
            show_writes(&on_primary),
            show_writes(&on_standby),
        );
        *lock(&self.logs) = Some((on_primary, kept));
        Ok((Seen::StorageFailover { lag, lost }, note))
    }

    fn sessions(&self) -> MutexGuard<'_, (Pg, Pg)> {
        lock(&self.sessions)
    }

    /// Every write attempted, as the storage's own logs tell it: the dead primary's rows,
    /// then the rows the promoted standby took after it (`stored` is read from the standby).
    pub fn splice(&self, stored: &mut Outcome) {
        if let Some((primary, kept)) = lock(&self.logs).take() {
            let after = stored.writes.split_off(kept.min(stored.writes.len()));
            stored.writes = primary.into_iter().chain(after).collect();
        }
    }
}

/// A lock a thread that panicked holding it left nothing half-written in.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
