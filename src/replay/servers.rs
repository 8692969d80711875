//! Throwaway servers on loopback: `redis-server` (optionally under libfaketime, optionally a
//! replica), a PostgreSQL cluster made with `initdb` + `pg_ctl` on a Unix socket only, and a
//! single-node `etcd`. Everything lives in one temp dir and is registered for cleanup: a
//! [`Cleanup`] guard stops it all when dropped, and a panic hook does the same, so the
//! release profile's `panic = "abort"` cannot leave servers behind.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::thread::sleep;
use std::time::{Duration, Instant};

use super::etcd::Etcd;
use super::pg::PgAddr;
use super::redis::{Redis, ReplyExt};

/// Directory of the PostgreSQL 15 server binaries on Debian.
const PG_BIN: &str = "/usr/lib/postgresql/15/bin";
/// libfaketime, multithreaded flavour (Redis runs background threads).
pub const FAKETIME_LIB: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";
/// glibc's own malloc as a preloadable library. Debian's redis-server allocates with
/// jemalloc, which calls `clock_gettime` while libfaketime is still initialising and
/// deadlocks it (libfaketime#130, unresolved upstream); preloading glibc's malloc first
/// keeps jemalloc from ever initialising. Expiry logic is untouched: it is Redis's own.
pub const GLIBC_MALLOC_LIB: &str = "/lib/x86_64-linux-gnu/libc_malloc_debug.so.0";

enum Stop {
    Kill(Child),
    PgCtl { data: PathBuf },
    RemoveDir(PathBuf),
}

static REGISTRY: Mutex<Vec<(u64, Stop)>> = Mutex::new(Vec::new());
static NEXT_ID: Mutex<u64> = Mutex::new(0);

fn register(stop: Stop) -> u64 {
    let mut n = NEXT_ID.lock().unwrap_or_else(|e| e.into_inner());
    *n += 1;
    REGISTRY
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((*n, stop));
    *n
}

fn run_stop(stop: Stop) {
    match stop {
        Stop::Kill(mut c) => {
            let _ = c.kill();
            let _ = c.wait();
        }
        Stop::PgCtl { data } => {
            let _ = as_postgres(&format!("{PG_BIN}/pg_ctl"))
                .args([
                    "-D",
                    &data.to_string_lossy(),
                    "-m",
                    "immediate",
                    "-w",
                    "stop",
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        Stop::RemoveDir(d) => {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// Stops one registered server now.
pub fn stop(id: u64) {
    let stop = {
        let mut r = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
        r.iter().position(|(i, _)| *i == id).map(|p| r.remove(p).1)
    };
    if let Some(s) = stop {
        run_stop(s);
    }
}

/// Stops everything still registered, newest first (servers before their temp dir).
pub fn stop_all() {
    let all: Vec<_> = match REGISTRY.try_lock() {
        Ok(mut r) => r.drain(..).collect(),
        Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner().drain(..).collect(),
        Err(std::sync::TryLockError::WouldBlock) => return,
    };
    for (_, s) in all.into_iter().rev() {
        run_stop(s);
    }
}

/// Stops every server when dropped, and installs a panic hook that does the same.
pub struct Cleanup;

impl Cleanup {
    pub fn install() -> Self {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            default(info);
            stop_all();
        }));
        Cleanup
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        stop_all();
    }
}

/// A free port on 127.0.0.1 (bound, read, released).
pub fn free_port() -> Result<u16, String> {
    let l = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    l.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// PostgreSQL refuses to run as root: as root, run its tools as the `postgres` user.
fn as_postgres(program: &str) -> Command {
    if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--", program]);
        c
    } else {
        Command::new(program)
    }
}

/// The temp dir everything lives in; removed at cleanup.
pub fn temp_root() -> Result<PathBuf, String> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let dir =
        std::env::temp_dir().join(format!("fencing-lab-replay-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    register(Stop::RemoveDir(dir.clone()));
    Ok(dir)
}

fn wait_for(what: &str, timeout: Duration, mut ready: impl FnMut() -> bool) -> Result<(), String> {
    let t0 = Instant::now();
    while t0.elapsed() < timeout {
        if ready() {
            return Ok(());
        }
        sleep(Duration::from_millis(20));
    }
    Err(format!("{what} did not come up within {timeout:?}"))
}

pub fn version(program: &str, arg: &str) -> String {
    Command::new(program)
        .arg(arg)
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or_default()
                .to_owned()
        })
        .unwrap_or_else(|e| format!("{program}: {e}"))
}

/// One `redis-server`.
pub struct RedisServer {
    pub port: u16,
    id: u64,
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
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        if let Some(f) = faketime_file {
            let preload = if Path::new(GLIBC_MALLOC_LIB).exists() {
                format!("{GLIBC_MALLOC_LIB} {FAKETIME_LIB}")
            } else {
                FAKETIME_LIB.to_owned()
            };
            cmd.env("LD_PRELOAD", preload)
                .env("FAKETIME_TIMESTAMP_FILE", f)
                .env("FAKETIME_NO_CACHE", "1");
        }
        let child = cmd.spawn().map_err(|e| format!("redis-server: {e}"))?;
        let id = register(Stop::Kill(child));
        wait_for("redis-server", Duration::from_secs(10), || {
            Redis::connect(port)
                .and_then(|mut r| r.cmd(&["PING"]))
                .is_ok_and(|r| r.text().as_deref() == Some("PONG"))
        })?;
        Ok(Self { port, id })
    }

    /// Kills the process outright: a crash, not a shutdown.
    pub fn crash(&self) {
        stop(self.id);
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        stop(self.id);
    }
}

/// The throwaway PostgreSQL cluster.
pub struct PgServer {
    pub addr: PgAddr,
}

impl PgServer {
    pub fn start(dir: &Path) -> Result<Self, String> {
        let base = dir.join("pg");
        std::fs::create_dir_all(&base).map_err(|e| e.to_string())?;
        if is_root() {
            let ok = Command::new("chown")
                .args(["-R", "postgres:", &base.to_string_lossy()])
                .status()
                .map_err(|e| format!("chown: {e}"))?
                .success();
            if !ok {
                return Err("chown postgres failed".to_owned());
            }
        }
        let data = base.join("data");
        let out = as_postgres(&format!("{PG_BIN}/initdb"))
            .args(["-D", &data.to_string_lossy(), "-U", "postgres"])
            .args(["--auth=trust", "-E", "UTF8", "--no-sync"])
            .output()
            .map_err(|e| format!("initdb: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "initdb failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let port = free_port()?;
        let sock = base.to_string_lossy().into_owned();
        // Unix socket only: listen_addresses is empty, so nothing listens on TCP at all.
        let opts = format!(
            "-k {sock} -p {port} -c listen_addresses= -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        );
        register(Stop::PgCtl { data: data.clone() });
        let out = as_postgres(&format!("{PG_BIN}/pg_ctl"))
            .args(["-D", &data.to_string_lossy(), "-o", &opts, "-w"])
            .args(["-l", &base.join("log").to_string_lossy(), "start"])
            .output()
            .map_err(|e| format!("pg_ctl: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "pg_ctl start failed: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(Self {
            addr: PgAddr {
                socket_dir: sock,
                port,
            },
        })
    }
}

/// etcd on loopback: one member, or a cluster of several (to fail its leader over).
pub struct EtcdServer {
    pub client: Etcd,
    /// (client port, registry id) of each member.
    members: Vec<(u16, u64)>,
}

impl EtcdServer {
    /// Starts `n` members named `{name}-0`… that form one cluster, and waits for a leader.
    pub fn start(dir: &Path, name: &str, n: usize) -> Result<Self, String> {
        let ports: Vec<(u16, u16)> = (0..n)
            .map(|_| Ok((free_port()?, free_port()?)))
            .collect::<Result<_, String>>()?;
        let cluster: Vec<String> = ports
            .iter()
            .enumerate()
            .map(|(i, (_, peer))| format!("{name}-{i}=http://127.0.0.1:{peer}"))
            .collect();
        let mut members = Vec::new();
        for (i, (port, peer)) in ports.iter().enumerate() {
            let client = format!("http://127.0.0.1:{port}");
            let peer_url = format!("http://127.0.0.1:{peer}");
            let member = format!("{name}-{i}");
            let d = dir.join(&member);
            let log = std::fs::File::create(dir.join(format!("{member}.log")))
                .map_err(|e| e.to_string())?;
            let child = Command::new("etcd")
                .args(["--name", &member, "--data-dir", &d.to_string_lossy()])
                .args(["--listen-client-urls", &client])
                .args(["--advertise-client-urls", &client])
                .args(["--listen-peer-urls", &peer_url])
                .args(["--initial-advertise-peer-urls", &peer_url])
                .args(["--initial-cluster", &cluster.join(",")])
                .args(["--initial-cluster-token", name])
                .args(["--initial-cluster-state", "new"])
                // A fast raft: heartbeat 10 ms, election 100 ms, so the minimum lease TTL
                // is 1 s and a new leader is elected within a few hundred ms.
                .args(["--heartbeat-interval", "10", "--election-timeout", "100"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .map_err(|e| format!("etcd: {e}"))?;
            members.push((*port, register(Stop::Kill(child))));
        }
        let client = Etcd::new(ports.iter().map(|(p, _)| *p).collect());
        wait_for("etcd", Duration::from_secs(20), || {
            client.put_revision("replay/ping", "1").is_ok()
                && ports
                    .iter()
                    .all(|(p, _)| Etcd::status(*p).is_ok_and(|(_, leader)| leader != 0))
        })?;
        Ok(Self { client, members })
    }

    /// Kills the member that is the leader now (a crash); returns its client port.
    pub fn kill_leader(&self) -> Result<u16, String> {
        for &(port, id) in &self.members {
            let Ok((me, leader)) = Etcd::status(port) else {
                continue;
            };
            if me == leader {
                stop(id);
                return Ok(port);
            }
        }
        Err("no etcd member says it is the leader".to_owned())
    }

    /// Client ports of the members still answering, and the leader they agree on.
    pub fn leaders(&self) -> Vec<(u16, u64)> {
        self.members
            .iter()
            .filter_map(|&(p, _)| Etcd::status(p).ok().map(|(_, l)| (p, l)))
            .collect()
    }
}

impl Drop for EtcdServer {
    fn drop(&mut self) {
        for &(_, id) in &self.members {
            stop(id);
        }
    }
}
