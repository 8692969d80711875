//! Redis as a lock service: throwaway redis-servers (one, a primary with its replica, or
//! Redlock's nodes, one of them under libfaketime), the `redis` crate's blocking client (one
//! connection per client thread, replies typed by the crate, a server error an error value),
//! the lock on them, and the faults the world makes on them.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fencing_lab::core::{EventKind, Fence, Lease, Millis, Scenario, TokenSource};
use redis::FromRedisValue;

use super::lock::{Answer, Lock, Run, Service};
use super::run::observe;
use super::servers::{free_port, spawn, version, wait_for, Started, FAKETIME_LIB};
use super::world::{Fault, World};

/// glibc's own malloc as a preloadable library. Debian's redis-server allocates with
/// jemalloc, which calls `clock_gettime` while libfaketime is still initialising and
/// deadlocks it (libfaketime#130, unresolved upstream); preloading glibc's malloc first
/// keeps jemalloc from ever initialising. Expiry logic is untouched: it is Redis's own.
const GLIBC_MALLOC_LIB: &str = "/lib/x86_64-linux-gnu/libc_malloc_debug.so.0";

/// One connection to the redis-server on 127.0.0.1:`port`.
pub struct Redis {
    con: redis::Connection,
    pub port: u16,
}

impl Redis {
    pub fn connect(port: u16) -> Result<Self, String> {
        let wait = Duration::from_secs(10);
        let con = redis::Client::open(format!("redis://127.0.0.1:{port}/"))
            .and_then(|c| c.get_connection_with_timeout(wait))
            .and_then(|con| con.set_read_timeout(Some(wait)).map(|()| con))
            .map_err(|e| format!("redis :{port}: {e}"))?;
        Ok(Self { con, port })
    }

    /// Sends one command (its name and arguments) and reads its reply as a `T`.
    pub fn cmd<T: FromRedisValue>(&mut self, args: &[&str]) -> Result<T, String> {
        let (name, rest) = args.split_first().ok_or("redis: an empty command")?;
        redis::cmd(name)
            .arg(rest)
            .query(&mut self.con)
            .map_err(|e| format!("redis :{} {name}: {e}", self.port))
    }

    /// Runs a Lua script (EVALSHA, loading it first if the server lacks it).
    pub fn eval<T: FromRedisValue>(
        &mut self,
        script: &str,
        keys: &[&str],
        args: &[&str],
    ) -> Result<T, String> {
        redis::Script::new(script)
            .key(keys)
            .arg(args)
            .invoke(&mut self.con)
            .map_err(|e| format!("redis :{} script: {e}", self.port))
    }
}

/// Key of the token counter next to the lock key.
pub fn fence_key(resource: &str) -> String {
    format!("fence:{resource}")
}

const ACQUIRE_INCR: &str = "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return redis.call('INCR', KEYS[2]) end return false";
const RELEASE_CAD: &str =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";
const EXTEND_OWNED: &str = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0";

/// A lock on redis-servers: one (a majority of one) or Redlock's nodes, each command sent to
/// every node the client reaches and counted against a majority of all of them.
pub struct RedisLock {
    /// A connection to each node this client reaches, by node number.
    nodes: Vec<(usize, Redis)>,
    /// How many nodes there are in all.
    of: usize,
    /// One redis-server whose port moves at a failover: the port to follow.
    follow: Option<Arc<AtomicU16>>,
    /// The acquire's script INCRs the fence counter too (`TokenSource::SameRedis`).
    incr: bool,
}

impl RedisLock {
    /// The connections, the single server's made again if a failover moved it.
    fn conns(&mut self) -> Result<&mut [(usize, Redis)], String> {
        if let Some(port) = self.follow.as_ref().map(|p| p.load(Ordering::SeqCst)) {
            if self.nodes[0].1.port != port {
                self.nodes[0].1 = Redis::connect(port)?;
            }
        }
        Ok(&mut self.nodes)
    }

    /// The nodes whose command (a SET, or a script) answered as `ok` says.
    fn nodes_where<T: FromRedisValue>(
        &mut self,
        mut send: impl FnMut(&mut Redis) -> Result<T, String>,
        mut ok: impl FnMut(&T) -> bool,
    ) -> Result<Vec<usize>, String> {
        let mut yes = Vec::new();
        for (n, r) in self.conns()? {
            if ok(&send(r)?) {
                yes.push(*n);
            }
        }
        Ok(yes)
    }

    /// The nodes whose script answered 1 (a deleted or extended key).
    fn where_one(&mut self, script: &str, key: &str, args: &[&str]) -> Result<Vec<usize>, String> {
        self.nodes_where(|r| r.eval::<i64>(script, &[key], args), |n| *n == 1)
    }

    /// Whether `nodes` are a majority of all; the nodes themselves, for Redlock only.
    fn majority(&self, nodes: Vec<usize>) -> (bool, Vec<usize>) {
        let majority = nodes.len() > self.of / 2;
        (majority, if self.of > 1 { nodes } else { Vec::new() })
    }
}

impl Lock for RedisLock {
    fn acquire(&mut self, key: &str, value: &str, px: u64) -> Result<Answer, String> {
        let (incr, px, fence) = (self.incr, px.to_string(), fence_key(key));
        let set = |r: &mut Redis| match incr {
            true => r.eval(ACQUIRE_INCR, &[key, &fence], &[value, &px]),
            false => r
                .cmd::<Option<String>>(&["SET", key, value, "NX", "PX", &px])
                .map(|ok| ok.map(|_| 0)),
        };
        let mut token = None;
        let ok = self.nodes_where(set, |t: &Option<u64>| {
            token = t.filter(|_| incr);
            t.is_some()
        })?;
        let (n, of, port) = (ok.len(), self.of, self.nodes[0].1.port);
        let (granted, nodes) = self.majority(ok);
        let how = match (of, token) {
            (1, Some(t)) => format!("SET NX PX on :{port} and the script's INCR gave token {t}"),
            (1, None) => format!("SET {key} {value} NX PX {px} answered OK"),
            (_, _) if granted => {
                format!("Redlock SET NX PX answered OK on nodes {nodes:?}, {n} of {of}")
            }
            (_, _) => {
                // No majority: it deletes the keys it did get again.
                self.where_one(RELEASE_CAD, key, &[value])?;
                format!("Redlock SET NX PX answered OK on nodes {nodes:?} only, {n} of {of}: no majority, deleted them again")
            }
        };
        Ok(Answer {
            granted,
            token,
            nodes,
            how,
        })
    }

    fn value(&mut self, key: &str) -> Result<Option<String>, String> {
        match self.conns()? {
            [(_, r)] => r.cmd(&["GET", key]),
            _ => Err("GET on Redlock: not one value".to_owned()),
        }
    }

    fn holds(&mut self, key: &str, value: &str) -> Result<bool, String> {
        let get = |r: &mut Redis| r.cmd::<Option<String>>(&["GET", key]);
        let mine = self.nodes_where(get, |v| v.as_deref() == Some(value))?;
        Ok(self.majority(mine).0)
    }

    fn extend(&mut self, key: &str, value: &str, px: u64) -> Result<bool, String> {
        let extended = self.where_one(EXTEND_OWNED, key, &[value, &px.to_string()])?;
        Ok(self.majority(extended).0)
    }

    fn release(&mut self, key: &str, value: &str) -> Result<Result<(), Vec<usize>>, String> {
        // Released only if it still held it: a majority of its keys were there to delete.
        let deleted = self.where_one(RELEASE_CAD, key, &[value])?;
        let (released, nodes) = self.majority(deleted);
        Ok(if released { Ok(()) } else { Err(nodes) })
    }

    /// As `GETDEL`, so the log can say whose lease it deleted (the same effect as `DEL`).
    fn delete(&mut self, key: &str) -> Result<Option<String>, String> {
        match self.conns()? {
            [(_, r)] => r.cmd(&["GETDEL", key]),
            _ => Err("GET-then-DEL over Redlock nodes is not modelled".to_owned()),
        }
    }
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
}

/// The redis-servers of one run: the one lock server (the primary, with a replica, if it
/// fails over; alone, if it restarts), or Redlock's nodes.
pub struct Servers {
    nodes: Vec<RedisServer>,
    replica: Option<RedisServer>,
    /// Where the one Redis keeps its snapshot, and its name, if it restarts (redis-restart).
    restart: Option<(PathBuf, String)>,
    /// The redis-server the restart brought back, kept until the run ends.
    restarted: Mutex<Option<RedisServer>>,
    /// Port of the Redis that is the lock server right now (it moves at a failover).
    port: Arc<AtomicU16>,
    /// The file libfaketime reads the jumping node's clock offset from (clock-jump runs),
    /// and that node's port.
    faketime: Option<(PathBuf, u16)>,
    /// The acquire's script INCRs the fence counter too (`TokenSource::SameRedis`).
    incr: bool,
    scale: f64,
    label: String,
}

impl Servers {
    /// One redis-server, or Redlock's nodes (one of which may run under libfaketime).
    pub fn start(run: &Run, notes: &mut Vec<String>) -> Result<Self, String> {
        let (sc, n, dir) = (run.sc, run.n, run.dir);
        let file = dir.join(format!("faketime-{n}"));
        let jumps = !sc.lock_clock_jumps.is_empty();
        if jumps {
            std::fs::write(&file, "+0\n").map_err(|e| e.to_string())?;
        }
        let (count, jumping) = sc
            .redlock
            .as_ref()
            .map_or((1, 0), |r| (r.nodes, r.jumping_node));
        let mut nodes = Vec::new();
        for i in 0..count {
            let ft = Some(file.as_path()).filter(|_| jumps && i == jumping);
            nodes.push(RedisServer::start(dir, &format!("redis-{n}-{i}"), ft)?);
        }
        let restart = sc
            .restart
            .then(|| (dir.to_path_buf(), format!("redis-{n}-0")));
        let ports: Vec<u16> = nodes.iter().map(|s| s.port).collect();
        let faketime = (nodes.get(jumping))
            .filter(|_| jumps)
            .map(|s| (file, s.port));
        let under = faketime.as_ref().map_or_else(String::new, |_| {
            format!(", node {jumping} under libfaketime")
        });
        notes.push(format!("{count} redis-server(s) on ports {ports:?}{under}"));
        // The fence counter's base value, set on the primary before a replica syncs, so the
        // replica has it too (and only it).
        let first = sc.first_fence.saturating_sub(1).to_string();
        Redis::connect(ports[0])?.cmd::<()>(&["SET", &fence_key(&sc.resource), &first])?;
        let mut replica = None;
        if sc.restart {
            // No replica: the one Redis comes back from the snapshot taken now, with no AOF
            // (`--appendonly no`), so nothing a client is told OK after it.
            Redis::connect(ports[0])?.cmd::<()>(&["SAVE"])?;
            notes.push(
                "no AOF; SAVE before the run, so the snapshot holds only the fence counter's base"
                    .to_owned(),
            );
        } else if let Some(at) = sc.failover_at {
            let r = start_replica(dir, n, ports[0], notes)?;
            // A replica more behind than the failover is late has none of the run's writes:
            // it is cut off before any client runs.
            if sc.replication_lag.is_none_or(|lag| lag > at) {
                cut(&mut Redis::connect(r.port)?)?;
                notes.push("replication cut before any client ran".to_owned());
            }
            replica = Some(r);
        }
        let redis = version("redis-server");
        let label = match count {
            1 => format!("Redis {redis}"),
            _ => format!("Redis {redis} ×{count}"),
        };
        Ok(Self {
            port: Arc::new(AtomicU16::new(ports[0])),
            nodes,
            replica,
            restart,
            restarted: Mutex::new(None),
            faketime,
            incr: sc.token_source == TokenSource::SameRedis,
            scale: run.scale,
            label,
        })
    }

    /// Steps the lock node's clock to `jumped` scenario ms ahead (libfaketime reads the
    /// offset from its file on every call), and says what it did to the live lease's PTTL.
    fn step_clock(
        &self,
        w: &World,
        t: Millis,
        by: Millis,
        jumped: Millis,
    ) -> Result<String, String> {
        let res = &w.sc.resource;
        let Some((file, port)) = &self.faketime else {
            return Ok(format!("t={t}: no clock to step"));
        };
        let mut r = Redis::connect(*port)?;
        let before: Option<i64> = r.cmd(&["PTTL", res])?;
        let secs = jumped as f64 * self.scale / 1000.0;
        let tmp = file.with_extension("tmp");
        std::fs::write(&tmp, format!("+{secs:.6}\n")).map_err(|e| e.to_string())?;
        std::fs::rename(&tmp, file).map_err(|e| e.to_string())?;
        let after: Option<i64> = r.cmd(&["PTTL", res])?;
        let kind = EventKind::LockClockJumped {
            by,
            shortened: None,
        };
        observe(w.shared).saw(t, None, kind);
        let real = by as f64 * self.scale;
        Ok(format!("t={t}: the clock of the redis-server on :{port} stepped +{real:.0} real ms (libfaketime); PTTL {res} went {before:?} → {after:?} ms"))
    }

    /// Kills the primary and promotes the replica (`REPLICAOF NO ONE`); the clients follow
    /// the lock server's port to it.
    fn fail_over(&self, w: &World, t: Millis, r: &RedisServer) -> Result<String, String> {
        let (sc, fence, p) = (w.sc, fence_key(&w.sc.resource), &self.nodes[0]);
        let ([seen, seen_fence], [on_primary, primary_fence]) =
            (read_lock(sc, r.port)?, read_lock(sc, p.port)?);
        p.process.stop();
        Redis::connect(r.port)?.cmd::<()>(&["REPLICAOF", "NO", "ONE"])?;
        self.port.store(r.port, Ordering::SeqCst);
        let kind = came_back(sc, &on_primary, &seen, &seen_fence);
        observe(w.shared).saw(t, None, kind);
        let res = &sc.resource;
        Ok(format!("t={t}: primary killed (it held {res} = {on_primary:?}, {fence} = {primary_fence:?}); the replica, which had {seen:?} and {fence} = {seen_fence:?}, promoted by REPLICAOF NO ONE"))
    }
}

impl Servers {
    /// The one Redis restarting: killed outright (kill -9), and a new redis-server started
    /// on its directory, which loads the snapshot taken before the run; the clients follow
    /// the port to it.
    fn restart(
        &self,
        w: &World,
        t: Millis,
        (dir, name): &(PathBuf, String),
    ) -> Result<String, String> {
        let (sc, fence, p) = (w.sc, fence_key(&w.sc.resource), &self.nodes[0]);
        let [held, counter] = read_lock(sc, p.port)?;
        p.process.stop();
        let back = RedisServer::start(dir, name, None)?;
        let [kept, kept_counter] = read_lock(sc, back.port)?;
        self.port.store(back.port, Ordering::SeqCst);
        observe(w.shared).saw(t, None, came_back(sc, &held, &kept, &kept_counter));
        let (res, old, new) = (&sc.resource, p.port, back.port);
        *self.restarted.lock().map_err(|_| "restart lock poisoned")? = Some(back);
        Ok(format!("t={t}: redis-server :{old} killed (kill -9) holding {res} = {held:?}, {fence} = {counter:?}; restarted on :{new} from its snapshot: {res} = {kept:?}, {fence} = {kept_counter:?}"))
    }
}

impl Service for Servers {
    /// The one lock server (and later whatever port a failover moves it to), or the Redlock
    /// nodes the client reaches (it never talks to a node it cannot reach).
    fn connect(&self, sc: &Scenario, idx: usize) -> Result<Box<dyn Lock>, String> {
        let ports: Vec<u16> = self.nodes.iter().map(|s| s.port).collect();
        let all: Vec<usize> = (0..ports.len()).collect();
        let reach = (sc.redlock.as_ref()).and_then(|r| r.reach.get(idx));
        let reach = reach.filter(|r| !r.is_empty()).unwrap_or(&all);
        let node = |&n: &usize| {
            let port = ports.get(n).ok_or("redlock node out of range")?;
            Ok((n, Redis::connect(*port)?))
        };
        Ok(Box::new(RedisLock {
            nodes: reach.iter().map(node).collect::<Result<_, String>>()?,
            of: ports.len(),
            follow: sc.redlock.is_none().then(|| self.port.clone()),
            incr: self.incr,
        }))
    }

    fn system(&self) -> String {
        self.label.clone()
    }

    fn fault(&self, w: &World, t: Millis, f: Fault) -> Result<Option<String>, String> {
        let lag = w.sc.replication_lag.unwrap_or(0);
        Ok(Some(match (f, &self.replica) {
            (Fault::ClockStep { by, jumped }, _) => self.step_clock(w, t, by, jumped)?,
            (Fault::Cut, Some(r)) => {
                let how = cut_at_lag(self.nodes[0].port, r.port)?;
                format!("t={t}: replication cut, {lag} ms before the failover ({how})")
            }
            (Fault::Failover, Some(r)) => self.fail_over(w, t, r)?,
            (Fault::Failover, None) if self.restart.is_some() => {
                let restart = self.restart.as_ref().ok_or("no Redis to restart")?;
                self.restart(w, t, restart)?
            }
            _ => return Ok(None),
        }))
    }
}

/// The lock key and the fence counter on the redis-server at `port`.
fn read_lock(sc: &Scenario, port: u16) -> Result<[Option<String>; 2], String> {
    let mut c = Redis::connect(port)?;
    let fence = fence_key(&sc.resource);
    Ok([c.cmd(&["GET", &sc.resource])?, c.cmd(&["GET", &fence])?])
}

/// The failover as the clients see a Redis that came back without the newest writes (a
/// promoted replica, or the one Redis restarted): its counter's next token (`counter` + 1)
/// and the owner of the live key it lacks (`held` before, `kept` after), if any.
fn came_back(
    sc: &Scenario,
    held: &Option<String>,
    kept: &Option<String>,
    counter: &Option<String>,
) -> EventKind {
    let counted = counter.as_deref().and_then(|v| v.parse::<u64>().ok());
    let next = counted.map_or(sc.first_fence, |v| v + 1);
    let lost = match (held, kept) {
        (Some(v), k) if k.as_ref() != Some(v) => vec![super::run::owner_of(sc, v)],
        _ => Vec::new(),
    };
    failover(next, lost)
}

/// A failover as the harness made it: the owners of the live keys the promoted replica
/// lacked (their leases' tokens and expiries are the fold's to fill in).
pub fn failover(next: u64, lost: Vec<String>) -> EventKind {
    let (fence, expires_at) = (Fence(0), 0);
    let lost = lost.into_iter().map(|owner| Lease {
        owner,
        fence,
        expires_at,
    });
    let (next_fence, rolled_back) = (Fence(next), false);
    EventKind::Failover {
        lost: lost.collect(),
        next_fence,
        rolled_back,
    }
}

/// A replica of `primary` that has synced, and keeps replicating until [`cut_at_lag`].
fn start_replica(
    dir: &Path,
    n: usize,
    primary: u16,
    notes: &mut Vec<String>,
) -> Result<RedisServer, String> {
    let r = RedisServer::start(dir, &format!("redis-{n}-replica"), None)?;
    let mut rc = Redis::connect(r.port)?;
    rc.cmd::<()>(&["REPLICAOF", "127.0.0.1", &primary.to_string()])?;
    Redis::connect(primary)?.cmd::<()>(&["SET", "replay:synced", "yes"])?;
    wait_for("the replica's sync", Duration::from_secs(10), || {
        rc.cmd::<Option<String>>(&["GET", "replay:synced"])
            .is_ok_and(|v| v.is_some())
    })?;
    notes.push(format!(
        "replica :{} synced from primary :{primary}",
        r.port
    ));
    Ok(r)
}

/// Points the replica at a port where nothing listens: a partition. It keeps its data and
/// receives nothing more.
fn cut(replica: &mut Redis) -> Result<(), String> {
    let dead = free_port()?.to_string();
    replica.cmd(&["REPLICAOF", "127.0.0.1", &dead])
}

/// A lagging replica, made real: at `failover − lag` the replica is let catch up with
/// everything the primary has so far (its replication offset reaches the primary's), then
/// cut off. What it has at the failover is every write made by then, and nothing later.
fn cut_at_lag(primary: u16, replica: u16) -> Result<String, String> {
    let offset = |r: &mut Redis, field: &str| -> Result<u64, String> {
        let info: String = r.cmd(&["INFO", "replication"])?;
        let line = info
            .lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'));
        Ok(line.and_then(|v| v.trim().parse().ok()).unwrap_or(0))
    };
    let want = offset(&mut Redis::connect(primary)?, "master_repl_offset")?;
    let mut r = Redis::connect(replica)?;
    let t0 = Instant::now();
    let mut got = offset(&mut r, "slave_repl_offset")?;
    while got < want && t0.elapsed() < Duration::from_millis(500) {
        std::thread::sleep(Duration::from_micros(200));
        got = offset(&mut r, "slave_repl_offset")?;
    }
    cut(&mut r)?;
    Ok(format!(
        "replica offset {got} of the primary's {want} when cut"
    ))
}
