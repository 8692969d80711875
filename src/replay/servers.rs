//! Throwaway servers: the PostgreSQL cluster made with `initdb` + `pg_ctl` on a Unix socket
//! only (and, where storage fails over, a run's own primary and standby: [`PgPair`]), and the
//! processes each lock service's module starts with [`spawn`]. Everything lives
//! in one temp dir and is registered as it starts: a [`Cleanup`] guard stops it all when
//! dropped, on a panic, and on SIGINT, SIGTERM or SIGHUP, so neither the release profile's
//! `panic = "abort"` nor a kill leaves servers behind.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use super::pg::Config;

/// Directory of the PostgreSQL 15 server binaries on Debian.
pub const PG_BIN: &str = "/usr/lib/postgresql/15/bin";
/// libfaketime, multithreaded flavour (Redis runs background threads).
pub const FAKETIME_LIB: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";

/// How to stop one started thing.
type Stop = Box<dyn FnOnce() + Send>;

/// How to stop everything started, by id; `None` once stopped.
static STARTED: Mutex<Vec<Option<Stop>>> = Mutex::new(Vec::new());

fn started() -> MutexGuard<'static, Vec<Option<Stop>>> {
    STARTED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Registers how to stop a thing just started (at cleanup at the latest); its id.
fn register(stop: impl FnOnce() + Send + 'static) -> usize {
    let mut s = started();
    s.push(Some(Box::new(stop)));
    s.len() - 1
}

/// A registered process (its id in the registry, its pid), stopped when dropped (or before).
pub struct Started(usize, u32);

impl Started {
    /// Sends the process `signal` ("STOP", "CONT") with kill(1): a fault the world makes.
    pub fn signal(&self, signal: &str) -> Result<(), String> {
        let mut kill = Command::new("kill");
        run(
            kill.args([format!("-{signal}"), self.1.to_string()]),
            "kill",
        )
    }

    pub fn stop(&self) {
        let stop = started()[self.0].take();
        if let Some(stop) = stop {
            stop();
        }
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Stops everything still registered, newest first (servers before their temp dir). The
/// registry stays locked until then, so nothing new registers meanwhile.
fn stop_all() -> MutexGuard<'static, Vec<Option<Stop>>> {
    let mut s = started();
    for stop in s.iter_mut().rev().filter_map(Option::take) {
        stop();
    }
    s
}

/// Stops every server when dropped, on a panic, and on SIGINT, SIGTERM or SIGHUP.
pub struct Cleanup;

impl Cleanup {
    pub fn install() -> Self {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            default(info);
            drop(stop_all());
        }));
        let on_signal = || {
            eprintln!("replay: stopped by a signal; stopping its servers");
            let _locked = stop_all();
            std::process::exit(130);
        };
        if let Err(e) = ctrlc::set_handler(on_signal) {
            eprintln!("replay: no signal handler ({e}): a kill would leave servers running");
        }
        Cleanup
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        drop(stop_all());
    }
}

/// A port on 127.0.0.1 for a server to listen on: free when checked (bound and released),
/// handed out once per process, so runs made at once never get the same one, and below the
/// kernel's ephemeral range, so no client socket is given it before its server binds it. Each
/// process starts at its own place in the range (by pid), so two replays rarely try the same.
pub fn free_port() -> Result<u16, String> {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    const LOW: usize = 10_000;
    let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok();
    let ephemeral: Option<usize> = range.and_then(|r| r.split_whitespace().next()?.parse().ok());
    let span = ephemeral.unwrap_or(32_768).saturating_sub(LOW);
    let start = std::process::id() as usize * 7_919;
    for _ in 0..span {
        let port = (LOW + (start + NEXT.fetch_add(1, Ordering::Relaxed)) % span) as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return Ok(port);
        }
    }
    Err(format!("no free port on 127.0.0.1 from {LOW} up"))
}

/// Runs a tool to its end; its output on failure.
fn run(cmd: &mut Command, what: &str) -> Result<(), String> {
    let out = cmd.output().map_err(|e| format!("{what}: {e}"))?;
    let said = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    (out.status.success().then_some(())).ok_or_else(|| format!("{what} failed: {said}"))
}

fn is_root() -> bool {
    let id = Command::new("id").arg("-u").output();
    id.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// PostgreSQL refuses to run as root: as root, run its tools as the `postgres` user (by
/// util-linux's path, so a PATH without /usr/sbin does not lose it).
fn as_postgres(program: &str) -> Command {
    if !is_root() {
        return Command::new(program);
    }
    let mut c = Command::new("/usr/sbin/runuser");
    c.args(["-u", "postgres", "--", program]);
    c
}

/// The temp dir everything lives in; removed at cleanup.
pub fn temp_root() -> Result<PathBuf, String> {
    let dir = std::env::temp_dir().join(format!("fencing-lab-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let d = dir.clone();
    register(move || drop(std::fs::remove_dir_all(d)));
    Ok(dir)
}

pub fn wait_for(what: &str, limit: Duration, up: impl FnMut() -> bool) -> Result<(), String> {
    poll(what, limit, Duration::from_millis(20), up)
}

/// [`wait_for`], asking `every` so often: for a step inside a run's schedule.
pub fn poll(
    what: &str,
    limit: Duration,
    every: Duration,
    mut up: impl FnMut() -> bool,
) -> Result<(), String> {
    let t0 = Instant::now();
    while !up() {
        if t0.elapsed() > limit {
            return Err(format!("{what} did not come up within {limit:?}"));
        }
        std::thread::sleep(every);
    }
    Ok(())
}

/// The first dotted number `program --version` prints, after `v=` if there is one:
/// "7.0.15" of "Redis server v=7.0.15 sha=…".
pub fn version(program: &str) -> String {
    let out = Command::new(program).arg("--version").output();
    let out = out.map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    let out = out.unwrap_or_else(|e| e.to_string());
    let from = out.find("v=").map_or(out.as_str(), |i| &out[i + 2..]);
    let dotted = |w: &&str| w.contains('.') && w.starts_with(|c: char| c.is_ascii_digit());
    let mut words = from.split(|c: char| !(c.is_ascii_digit() || c == '.'));
    let v = words.find(dotted).unwrap_or("?");
    v.trim_end_matches('.').to_owned()
}

/// Starts `cmd` and registers it to be killed.
pub fn spawn(cmd: &mut Command, what: &str) -> Result<Started, String> {
    let child = cmd.spawn().map_err(|e| format!("{what}: {e}"))?;
    let pid = child.id();
    let stop = register(move || {
        let mut c = child;
        let _ = (c.kill(), c.wait());
    });
    Ok(Started(stop, pid))
}

/// Starts the throwaway PostgreSQL cluster (stopped at cleanup): Unix socket only, with
/// `listen_addresses` empty, so nothing listens on TCP at all.
pub fn start_pg(dir: &Path) -> Result<Config, String> {
    let base = socket_dir(&dir.join("pg"))?;
    let d = base.join("data");
    initdb(&d)?;
    // Shared by every run: stopped at cleanup. A COMMIT need not wait for its WAL's flush.
    let (port, _) = start_cluster(&base, &d, "-c synchronous_commit=off")?;
    Ok(pg_config(&base, port))
}

/// A new cluster in `data`: trust auth, no fsync of its files (it lives for one replay).
fn initdb(data: &Path) -> Result<(), String> {
    let mut initdb = as_postgres(&format!("{PG_BIN}/initdb"));
    initdb.args(["-D".as_ref(), data.as_os_str()]);
    initdb.args(["-U", "postgres", "-E", "UTF8", "--auth=trust", "--no-sync"]);
    run(&mut initdb, "initdb")
}

/// A directory the `postgres` user owns (as root): the clusters' data and sockets.
fn socket_dir(base: &Path) -> Result<PathBuf, String> {
    std::fs::create_dir_all(base).map_err(|e| e.to_string())?;
    if is_root() {
        let mut chown = Command::new("chown");
        run(chown.arg("-R").arg("postgres:").arg(base), "chown")?;
    }
    Ok(base.to_owned())
}

/// Starts the cluster in `data` on a free port, its socket in `base`, registered to be
/// stopped with `pg_ctl stop -m immediate` (every server process quits at once, no shutdown
/// checkpoint: a crash) at cleanup; its port, and its postmaster (registry id, pid), for a
/// [`Started`] that stops it sooner.
fn start_cluster(base: &Path, data: &Path, more: &str) -> Result<(u16, (usize, u32)), String> {
    let (socket_dir, d) = (base.to_string_lossy(), data.to_string_lossy().into_owned());
    let port = free_port()?;
    let opts = format!("-k {socket_dir} -p {port} -c listen_addresses= -c fsync=off -c full_page_writes=off {more}");
    let pg_ctl = || as_postgres(&format!("{PG_BIN}/pg_ctl"));
    let stop = ["-D", &d, "-m", "immediate", "-w", "stop"].map(str::to_owned);
    let id = register(move || drop(run(pg_ctl().args(stop), "pg_ctl stop")));
    let log = format!("{d}.log");
    let start = ["-D", &d, "-o", &opts, "-w", "-l", &log, "start"];
    run(pg_ctl().args(start), "pg_ctl start")?;
    // postmaster.pid's first line is the postmaster's pid.
    let pid = std::fs::read_to_string(data.join("postmaster.pid")).unwrap_or_default();
    let pid = pid.lines().next().and_then(|l| l.trim().parse().ok());
    Ok((port, (id, pid.ok_or("postgres: no postmaster.pid")?)))
}

/// A session's settings for the cluster listening in `socket_dir` on `port`.
fn pg_config(socket_dir: &Path, port: u16) -> Config {
    let mut cfg = Config::new();
    cfg.host_path(socket_dir).port(port);
    cfg.user("postgres").dbname("postgres");
    cfg
}

/// A fresh cluster's files (`initdb`, its server never started), made once per replay in
/// `dir`, for each primary to copy: a copy takes a tenth of initdb's time.
fn fresh_cluster(dir: &Path) -> Result<&'static Path, String> {
    static TEMPLATE: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let made = TEMPLATE.get_or_init(|| {
        let data = socket_dir(dir)?.join("data");
        initdb(&data).map(|()| data)
    });
    made.as_deref().map_err(Clone::clone)
}

/// Storage as a PostgreSQL primary with an asynchronous streaming standby (storage-failover),
/// both stopped when dropped.
pub struct PgPair {
    pub primary: Config,
    pub standby: Config,
    /// Both, as a client's connection string lists them: it connects to the one that takes
    /// writes (`target_session_attrs=read-write`), so the primary until it dies, then the
    /// promoted standby.
    pub either: Config,
    primary_server: Started,
    _standby_server: Started,
}

impl PgPair {
    /// A fresh primary (a copy of [`fresh_cluster`]'s), and a standby made from it with
    /// `pg_basebackup -R` (its `primary_conninfo` and `standby.signal`) that streams its WAL
    /// asynchronously (the default: no `synchronous_standby_names`).
    pub fn start(dir: &Path) -> Result<Self, String> {
        let template = fresh_cluster(&dir.with_file_name("pg-template"))?;
        let base = socket_dir(dir)?;
        let (p, s) = (base.join("primary"), base.join("standby"));
        let mut cp = Command::new("cp");
        run(cp.arg("-a").arg(template).arg(&p), "cp")?;
        // synchronous_commit on (the default): a COMMIT returns once its WAL is flushed on the
        // primary, and the walsender streams only flushed WAL.
        let (port, (id, pid)) = start_cluster(&base, &p, "")?;
        let primary_server = Started(id, pid);
        let mut backup = as_postgres(&format!("{PG_BIN}/pg_basebackup"));
        let at = ["-p", &port.to_string(), "-U", "postgres"].map(str::to_owned);
        backup.arg("-h").arg(&base).args(at).arg("-D").arg(&s);
        backup.args(["-R", "-X", "stream", "-c", "fast", "--no-sync"]);
        run(&mut backup, "pg_basebackup")?;
        let (standby_port, (id, pid)) = start_cluster(&base, &s, "")?;
        let mut either = pg_config(&base, port);
        either.host_path(&base).port(standby_port);
        either.target_session_attrs(postgres::config::TargetSessionAttrs::ReadWrite);
        Ok(Self {
            primary: pg_config(&base, port),
            standby: pg_config(&base, standby_port),
            either,
            primary_server,
            _standby_server: Started(id, pid),
        })
    }

    /// The primary's crash: SIGQUIT to its postmaster, PostgreSQL's immediate shutdown (every
    /// server process quits at once, no checkpoint), waited for until the postmaster is gone.
    pub fn kill_primary(&self) -> Result<(), String> {
        self.primary_server.signal("QUIT")?;
        let pid = self.primary_server.1;
        let (limit, every) = (Duration::from_secs(10), Duration::from_millis(1));
        poll("the primary's exit", limit, every, || {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"));
            // Gone, or a zombie its reaper has not collected yet.
            stat.map_or(true, |s| {
                s.rsplit(')')
                    .next()
                    .is_some_and(|r| r.trim_start().starts_with('Z'))
            })
        })
    }
}
