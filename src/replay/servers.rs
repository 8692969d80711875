//! Throwaway servers on loopback: `redis-server` (optionally under libfaketime), a
//! PostgreSQL cluster made with `initdb` + `pg_ctl` on a Unix socket only, and `etcd` (one
//! member or a cluster). Everything lives in one temp dir and is registered as it starts:
//! a [`Cleanup`] guard stops it all when dropped, on a panic, and on SIGINT, SIGTERM or
//! SIGHUP, so neither the release profile's `panic = "abort"` nor a kill leaves servers behind.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::etcd::Etcd;
use super::pg::PgAddr;
use super::redis::Redis;

/// Directory of the PostgreSQL 15 server binaries on Debian.
pub const PG_BIN: &str = "/usr/lib/postgresql/15/bin";
/// libfaketime, multithreaded flavour (Redis runs background threads).
pub const FAKETIME_LIB: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";
/// glibc's own malloc as a preloadable library. Debian's redis-server allocates with
/// jemalloc, which calls `clock_gettime` while libfaketime is still initialising and
/// deadlocks it (libfaketime#130, unresolved upstream); preloading glibc's malloc first
/// keeps jemalloc from ever initialising. Expiry logic is untouched: it is Redis's own.
pub const GLIBC_MALLOC_LIB: &str = "/lib/x86_64-linux-gnu/libc_malloc_debug.so.0";

/// How to stop one started thing.
enum Stop {
    Kill(Child),
    PgCtl(PathBuf),
    RemoveDir(PathBuf),
}

impl Stop {
    fn run(self) {
        match self {
            Stop::Kill(mut c) => {
                let _ = c.kill();
                let _ = c.wait();
            }
            Stop::PgCtl(data) => {
                let data = data.to_string_lossy();
                let stop = ["-D", &data, "-m", "immediate", "-w", "stop"];
                let _ = run(
                    as_postgres(&format!("{PG_BIN}/pg_ctl")).args(stop),
                    "pg_ctl",
                );
            }
            Stop::RemoveDir(d) => {
                let _ = std::fs::remove_dir_all(d);
            }
        }
    }
}

/// Everything started and not stopped yet, by id; and the last id given.
static STARTED: Mutex<(u64, Vec<(u64, Stop)>)> = Mutex::new((0, Vec::new()));

fn started() -> MutexGuard<'static, (u64, Vec<(u64, Stop)>)> {
    STARTED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Registers how to stop a thing just started (at cleanup at the latest); its id.
fn register(stop: Stop) -> u64 {
    let mut s = started();
    s.0 += 1;
    let id = s.0;
    s.1.push((id, stop));
    id
}

/// A registered process, stopped when dropped (or before).
struct Started(u64);

impl Started {
    fn stop(&self) {
        let stop = {
            let mut s = started();
            let at = s.1.iter().position(|(i, _)| *i == self.0);
            at.map(|p| s.1.remove(p).1)
        };
        if let Some(stop) = stop {
            stop.run();
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
fn stop_all() -> MutexGuard<'static, (u64, Vec<(u64, Stop)>)> {
    let mut s = started();
    for (_, stop) in std::mem::take(&mut s.1).into_iter().rev() {
        stop.run();
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

/// A free port on 127.0.0.1 (bound, read, released).
pub fn free_port() -> Result<u16, String> {
    let l = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    l.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}

/// Runs a tool to its end; its output on failure.
fn run(cmd: &mut Command, what: &str) -> Result<(), String> {
    let out = cmd.output().map_err(|e| format!("{what}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let (o, e) = (out.stdout, out.stderr);
    let said = String::from_utf8_lossy(&o) + String::from_utf8_lossy(&e);
    Err(format!("{what} failed: {said}"))
}

fn is_root() -> bool {
    let id = Command::new("id").arg("-u").output();
    id.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// PostgreSQL refuses to run as root: as root, run its tools as the `postgres` user.
fn as_postgres(program: &str) -> Command {
    if !is_root() {
        return Command::new(program);
    }
    let mut c = Command::new("runuser");
    c.args(["-u", "postgres", "--", program]);
    c
}

/// The temp dir everything lives in; removed at cleanup.
pub fn temp_root() -> Result<PathBuf, String> {
    let dir = std::env::temp_dir().join(format!("fencing-lab-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    register(Stop::RemoveDir(dir.clone()));
    Ok(dir)
}

pub fn wait_for(
    what: &str,
    timeout: Duration,
    mut ready: impl FnMut() -> bool,
) -> Result<(), String> {
    let t0 = Instant::now();
    while !ready() {
        if t0.elapsed() > timeout {
            return Err(format!("{what} did not come up within {timeout:?}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// The first dotted number `program --version` prints, after `v=` if there is one:
/// "7.0.15" of "Redis server v=7.0.15 sha=…".
pub fn version(program: &str) -> String {
    let out = Command::new(program).arg("--version").output();
    let out = out.map_or_else(
        |e| e.to_string(),
        |o| String::from_utf8_lossy(&o.stdout).into(),
    );
    let from = out.find("v=").map_or(out.as_str(), |i| &out[i + 2..]);
    let dotted = |w: &&str| w.contains('.') && w.starts_with(|c: char| c.is_ascii_digit());
    let mut words = from.split(|c: char| !(c.is_ascii_digit() || c == '.'));
    words
        .find(dotted)
        .unwrap_or("?")
        .trim_end_matches('.')
        .to_owned()
}

/// Starts `cmd` and registers it to be killed.
fn spawn(cmd: &mut Command, what: &str) -> Result<Started, String> {
    let child = cmd.spawn().map_err(|e| format!("{what}: {e}"))?;
    Ok(Started(register(Stop::Kill(child))))
}

/// One `redis-server`.
pub struct RedisServer {
    pub port: u16,
    process: Started,
}

impl RedisServer {
    /// Starts `redis-server` on 127.0.0.1 with no persistence. With `faketime_file`, it runs
    /// under libfaketime reading its clock offset from that file on every call, so the
    /// harness can step the lock node's clock.
    pub fn start(dir: &Path, name: &str, faketime_file: Option<&Path>) -> Result<Self, String> {
        let port = free_port()?;
        let d = dir.join(name);
        std::fs::create_dir_all(&d).map_err(|e| e.to_string())?;
        let mut cmd = Command::new("redis-server");
        cmd.args(["--bind", "127.0.0.1", "--port", &port.to_string()])
            .args(["--dir", &d.to_string_lossy()])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .args(["--repl-diskless-sync-delay", "0"])
            .args(["--logfile", &d.join("redis.log").to_string_lossy()])
            .stdin(Stdio::null())
            .stdout(Stdio::null());
        if let Some(f) = faketime_file {
            let preload = match Path::new(GLIBC_MALLOC_LIB).exists() {
                true => format!("{GLIBC_MALLOC_LIB} {FAKETIME_LIB}"),
                false => FAKETIME_LIB.to_owned(),
            };
            cmd.env("LD_PRELOAD", preload)
                .env("FAKETIME_TIMESTAMP_FILE", f)
                .env("FAKETIME_NO_CACHE", "1");
        }
        let process = spawn(&mut cmd, "redis-server")?;
        wait_for("redis-server", Duration::from_secs(10), || {
            let pong = Redis::connect(port).and_then(|mut r| r.cmd::<String>(&["PING"]));
            pong.is_ok_and(|r| r == "PONG")
        })?;
        Ok(Self { port, process })
    }

    /// Kills the process outright: a crash, not a shutdown.
    pub fn crash(&self) {
        self.process.stop();
    }
}

/// Starts the throwaway PostgreSQL cluster (stopped at cleanup): Unix socket only, with
/// `listen_addresses` empty, so nothing listens on TCP at all.
pub fn start_pg(dir: &Path) -> Result<PgAddr, String> {
    let base = dir.join("pg");
    std::fs::create_dir_all(&base).map_err(|e| e.to_string())?;
    let socket_dir = base.to_string_lossy().into_owned();
    if is_root() {
        run(
            Command::new("chown").args(["-R", "postgres:", &socket_dir]),
            "chown",
        )?;
    }
    let data = base.join("data");
    let d = data.to_string_lossy();
    let mut initdb = as_postgres(&format!("{PG_BIN}/initdb"));
    initdb.args(["-D", &d, "-U", "postgres", "-E", "UTF8"]);
    run(initdb.args(["--auth=trust", "--no-sync"]), "initdb")?;
    let port = free_port()?;
    let opts = format!("-k {socket_dir} -p {port} -c listen_addresses= -c fsync=off -c synchronous_commit=off -c full_page_writes=off");
    register(Stop::PgCtl(data.clone()));
    let mut pg_ctl = as_postgres(&format!("{PG_BIN}/pg_ctl"));
    pg_ctl.args(["-D", &d, "-o", &opts, "-w", "-l"]);
    run(pg_ctl.arg(base.join("log")).arg("start"), "pg_ctl start")?;
    Ok(PgAddr { socket_dir, port })
}

/// etcd on loopback: one member, or a cluster of several (to fail its leader over).
pub struct EtcdServer {
    pub client: Etcd,
    /// Each member's client port and process.
    members: Vec<(u16, Started)>,
}

impl EtcdServer {
    /// Starts `n` members named `{name}-0`… that form one cluster, and waits for a leader.
    pub fn start(dir: &Path, name: &str, n: usize) -> Result<Self, String> {
        let ports: Vec<(u16, u16)> = (0..n)
            .map(|_| Ok((free_port()?, free_port()?)))
            .collect::<Result<_, String>>()?;
        let url = |port: u16| format!("http://127.0.0.1:{port}");
        let cluster: Vec<String> = (ports.iter().enumerate())
            .map(|(i, (_, peer))| format!("{name}-{i}={}", url(*peer)))
            .collect();
        let mut members = Vec::new();
        for (i, &(port, peer)) in ports.iter().enumerate() {
            let member = format!("{name}-{i}");
            let log = std::fs::File::create(dir.join(format!("{member}.log")))
                .map_err(|e| e.to_string())?;
            let (data, client, peer) = (dir.join(&member), url(port), url(peer));
            let data = data.to_string_lossy();
            let initial = cluster.join(",");
            let flags = [
                ("name", member.as_str()),
                ("data-dir", &data),
                ("listen-client-urls", &client),
                ("advertise-client-urls", &client),
                ("listen-peer-urls", &peer),
                ("initial-advertise-peer-urls", &peer),
                ("initial-cluster", &initial),
                ("initial-cluster-token", name),
                ("initial-cluster-state", "new"),
                // A fast raft: heartbeat 10 ms, election 100 ms, so the minimum lease TTL
                // is 1 s and a new leader is elected within a few hundred ms.
                ("heartbeat-interval", "10"),
                ("election-timeout", "100"),
            ];
            let mut cmd = Command::new("etcd");
            cmd.args(flags.map(|(k, v)| format!("--{k}={v}")))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log);
            members.push((port, spawn(&mut cmd, "etcd")?));
        }
        let client = Etcd::new(ports.iter().map(|(p, _)| *p).collect());
        wait_for("etcd", Duration::from_secs(20), || {
            let led = |p: &(u16, u16)| Etcd::status(p.0).is_ok_and(|(_, leader)| leader != 0);
            client.get("replay/ping").is_ok() && ports.iter().all(led)
        })?;
        Ok(Self { client, members })
    }

    /// Kills the member that is the leader now (a crash); returns its client port.
    pub fn kill_leader(&self) -> Result<u16, String> {
        let leads = |port: u16| Etcd::status(port).is_ok_and(|(me, leader)| me == leader);
        let (port, leader) = (self.members.iter().find(|(port, _)| leads(*port)))
            .ok_or("no etcd member says it is the leader")?;
        leader.stop();
        Ok(*port)
    }

    /// Client ports of the members still answering, and the leader they agree on.
    pub fn leaders(&self) -> Vec<(u16, u64)> {
        (self.members.iter())
            .filter_map(|&(p, _)| Etcd::status(p).ok().map(|(_, l)| (p, l)))
            .collect()
    }
}
