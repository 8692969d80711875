//! Redis as a lock service: throwaway redis-servers (one, a primary with its replica, or
//! Redlock's nodes, one of them under libfaketime), the `redis` crate's blocking client (one
//! connection per client thread, replies typed by the crate, a server error an error value),
//! the lock on them, and the faults the world makes on them.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fencing_lab::core::{Millis, Scenario, Seen, TokenSource};
use redis::FromRedisValue;

use super::super::lock::{owner_of, Answer, Backend, Fault, Lock, Run, Service, Stage};
use super::super::observed::{failover, observe};
use super::super::servers::{free_port, spawn, version, wait_for, Started, FAKETIME_LIB};

/// `SET key value NX PX ttl` on one redis-server (the port can change at a failover); with
/// `TokenSource::SameRedis` the same Lua script INCRs `fence:<key>` for the token.
pub const REDIS: Backend = Backend {
    name: "redis",
    lock_service: false,
    twin_of: None,
    start: |run, notes| Ok(Box::new(Servers::start(run, notes)?)),
    cannot: |_| None,
};

/// Redlock over several redis-servers; the token is a separate counter's (a PostgreSQL
/// sequence), Redlock itself mints none (`TokenSource::Counterfactual`).
pub const REDLOCK: Backend = Backend {
    name: "redlock",
    cannot: |sc| {
        (sc.failover_at().is_some())
            .then_some("a failover under Redlock: the core fails no Redlock node over")
    },
    ..REDIS
};

/// glibc's own malloc as a preloadable library. Debian's redis-server allocates with
/// jemalloc, which calls `clock_gettime` while libfaketime is still initialising and
/// deadlocks it (libfaketime#130, unresolved upstream); preloading glibc's malloc first
/// keeps jemalloc from ever initialising. Expiry logic is untouched: it is Redis's own.
const GLIBC_MALLOC_LIB: &str = "/lib/x86_64-linux-gnu/libc_malloc_debug.so.0";

/// One connection to the redis-server on 127.0.0.1:`port`.
struct Redis {
    con: redis::Connection,
    port: u16,
}

impl Redis {
    fn connect(port: u16) -> Result<Self, String> {
        let wait = Duration::from_secs(10);
        let con = redis::Client::open(format!("redis://127.0.0.1:{port}/"))
            .and_then(|c| c.get_connection_with_timeout(wait))
            .and_then(|con| con.set_read_timeout(Some(wait)).map(|()| con))
            .map_err(|e| format!("redis :{port}: {e}"))?;
        Ok(Self { con, port })
    }

    /// Sends one command (its name and arguments) and reads its reply as a `T`.
    fn cmd<T: FromRedisValue>(&mut self, args: &[&str]) -> Result<T, String> {
        let (name, rest) = args.split_first().ok_or("redis: an empty command")?;
        redis::cmd(name)
            .arg(rest)
            .query(&mut self.con)
            .map_err(|e| format!("redis :{} {name}: {e}", self.port))
    }
}

/// Key of the token counter next to the lock key.
fn fence_key(resource: &str) -> String {
    format!("fence:{resource}")
}

const ACQUIRE_INCR: &str = "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return redis.call('INCR', KEYS[2]) end return false";
const RELEASE_CAD: &str =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";
const EXTEND_OWNED: &str = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0";

/// A lock on redis-servers: one (a majority of one) or Redlock's nodes, each command sent to
/// every node the client reaches and counted against a majority of all of them.
struct RedisLock {
    /// A connection to each node this client reaches, by node number.
    nodes: Vec<(usize, Redis)>,
    /// How many nodes there are in all.
    of: usize,
    /// One redis-server whose port moves at a failover: the port to follow.
    follow: Option<Arc<AtomicU16>>,
    /// The acquire's script INCRs the fence counter too (`TokenSource::SameRedis`).
    incr: bool,
    /// Redlock: the nodes whose last extend answered 1.
    extended: Vec<usize>,
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

    /// The nodes `ok` says yes of (a GET, a SET or a script's answer).
    fn nodes_where(
        &mut self,
        mut ok: impl FnMut(&mut Redis) -> Result<bool, String>,
    ) -> Result<Vec<usize>, String> {
        let mut yes = Vec::new();
        for (n, r) in self.conns()? {
            if ok(r)? {
                yes.push(*n);
            }
        }
        Ok(yes)
    }

    /// The nodes whose script answered 1 (a deleted or extended key).
    fn where_one(&mut self, script: &str, key: &str, args: &[&str]) -> Result<Vec<usize>, String> {
        let eval = [&["EVAL", script, "1", key], args].concat();
        self.nodes_where(|r| Ok(r.cmd::<i64>(&eval)? == 1))
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
        let mut token = None;
        let ok = self.nodes_where(|r| {
            token = match incr {
                true => r.cmd(&["EVAL", ACQUIRE_INCR, "2", key, &fence, value, &px])?,
                false => {
                    (r.cmd::<Option<String>>(&["SET", key, value, "NX", "PX", &px])?).map(|_| 0)
                }
            };
            Ok(token.is_some())
        })?;
        let token = token.filter(|_| incr);
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
        let mine = self.nodes_where(|r| Ok(get(r)?.as_deref() == Some(value)))?;
        Ok(self.majority(mine).0)
    }

    fn extend(&mut self, key: &str, value: &str, px: u64) -> Result<bool, String> {
        let extended = self.where_one(EXTEND_OWNED, key, &[value, &px.to_string()])?;
        let (held, nodes) = self.majority(extended);
        self.extended = nodes;
        Ok(held)
    }

    fn extended_on(&self) -> Vec<usize> {
        self.extended.clone()
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

/// One `redis-server`, and the directory it keeps its snapshot in.
struct RedisServer {
    port: u16,
    dir: PathBuf,
    process: Started,
}

impl RedisServer {
    /// Starts `redis-server` on 127.0.0.1 in `dir`, with no AOF. With `faketime_file`, it
    /// runs under libfaketime reading its clock offset from that file on every call, so the
    /// harness can step the lock node's clock.
    fn start(dir: PathBuf, faketime_file: Option<&Path>) -> Result<Self, String> {
        let port = free_port()?;
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let mut cmd = Command::new("redis-server");
        cmd.args(["--bind", "127.0.0.1", "--port", &port.to_string()])
            .args(["--dir", &dir.to_string_lossy()])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .args(["--repl-diskless-sync-delay", "0"])
            .args(["--logfile", &dir.join("redis.log").to_string_lossy()])
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
        Ok(Self { port, dir, process })
    }
}

/// The redis-servers of one run: the one lock server (the primary, with a replica, if it
/// fails over; alone, if it restarts), or Redlock's nodes.
pub struct Servers {
    nodes: Vec<RedisServer>,
    replica: Option<RedisServer>,
    /// The redis-server a restart brought back, kept until the run ends.
    restarted: Mutex<Option<RedisServer>>,
    /// Port of the Redis that is the lock server right now (it moves at a failover).
    port: Arc<AtomicU16>,
    /// The file libfaketime reads the jumping node's clock offset from (clock-jump runs),
    /// and that node's port.
    faketime: Option<(PathBuf, u16)>,
}

impl Servers {
    /// One redis-server, or Redlock's nodes (one of which may run under libfaketime).
    fn start(run: &Run, notes: &mut Vec<String>) -> Result<Self, String> {
        let (sc, n, dir) = (run.sc, run.n, run.dir);
        let (count, jumping) = (sc.lock.redlock().map_or(1, |r| r.nodes), sc.jumping_node());
        let jumps = sc.clock_jumps().next().is_some();
        let faketime = jumps.then(|| dir.join(format!("faketime-{n}")));
        if let Some(file) = &faketime {
            std::fs::write(file, "+0\n").map_err(|e| e.to_string())?;
        }
        let mut nodes = Vec::new();
        for i in 0..count {
            let ft = faketime.as_deref().filter(|_| i == jumping);
            nodes.push(RedisServer::start(dir.join(format!("redis-{n}-{i}")), ft)?);
        }
        let ports: Vec<u16> = nodes.iter().map(|s| s.port).collect();
        let under = jumps.then(|| format!(", node {jumping} under libfaketime"));
        let under = under.unwrap_or_default();
        notes.push(format!("{count} redis-server(s) on ports {ports:?}{under}"));
        // The fence counter's base value, set on the primary before a replica syncs, so the
        // replica has it too (and only it).
        let (mut primary, first) = (Redis::connect(ports[0])?, sc.first_fence.saturating_sub(1));
        primary.cmd::<()>(&["SET", &fence_key(&sc.resource), &first.to_string()])?;
        let mut replica = None;
        if sc.restart() {
            // No replica: the one Redis comes back from the snapshot taken now, with no AOF
            // (`--appendonly no`), so nothing a client is told OK after it.
            primary.cmd::<()>(&["SAVE"])?;
            notes.push(
                "no AOF; SAVE before the run, so the snapshot holds only the fence counter's base"
                    .into(),
            );
        } else if let Some(at) = sc.failover_at() {
            let r = RedisServer::start(dir.join(format!("redis-{n}-replica")), None)?;
            let (r_port, primary) = (r.port, ports[0]);
            Redis::connect(r_port)?.cmd::<()>(&["REPLICAOF", "127.0.0.1", &primary.to_string()])?;
            if replicated(primary, "5000")? < 1 {
                return Err(format!("replica :{r_port} did not sync within 5 s"));
            }
            notes.push(format!("replica :{r_port} synced from primary :{primary}"));
            // A replica more behind than the failover is late has none of the run's writes:
            // it is cut off before any client runs.
            if sc.replication_lag().is_none_or(|lag| lag > at) {
                cut(r.port)?;
                notes.push("replication cut before any client ran".to_owned());
            }
            replica = Some(r);
        }
        Ok(Self {
            port: Arc::new(AtomicU16::new(ports[0])),
            faketime: faketime.map(|f| (f, ports[jumping])),
            nodes,
            replica,
            restarted: Mutex::new(None),
        })
    }

    /// Steps the lock node's clock to `jumped` scenario ms ahead (libfaketime reads the
    /// offset from its file on every call), and says what it did to the live lease's PTTL.
    fn step_clock(
        &self,
        w: &Stage,
        t: Millis,
        by: Millis,
        jumped: Millis,
    ) -> Result<String, String> {
        let (res, scale) = (&w.sc.resource, w.scale);
        let Some((file, port)) = &self.faketime else {
            return Ok(format!("t={t}: no clock to step"));
        };
        let mut r = Redis::connect(*port)?;
        let before: Option<i64> = r.cmd(&["PTTL", res])?;
        let (tmp, secs) = (file.with_extension("tmp"), jumped as f64 * scale / 1000.0);
        std::fs::write(&tmp, format!("+{secs:.6}\n")).map_err(|e| e.to_string())?;
        std::fs::rename(&tmp, file).map_err(|e| e.to_string())?;
        let after: Option<i64> = r.cmd(&["PTTL", res])?;
        // Whose lease it shortened is the fold's.
        observe(w.shared).saw(t, None, Seen::LockClockJumped { by });
        let real = by as f64 * scale;
        Ok(format!("t={t}: the clock of the redis-server on :{port} stepped +{real:.0} real ms (libfaketime); PTTL {res} went {before:?} → {after:?} ms"))
    }

    /// The one Redis replaced at the failover's instant: the primary killed outright (kill -9)
    /// and its replica promoted (`REPLICAOF NO ONE`), or, with no replica, a new redis-server
    /// started on its directory, which loads the snapshot taken before the run. The clients
    /// follow the lock server's port to it.
    fn fail_over(&self, w: &Stage, t: Millis) -> Result<String, String> {
        let (sc, fence, p) = (w.sc, fence_key(&w.sc.resource), &self.nodes[0]);
        let [held, counter] = read_lock(sc, p.port)?;
        let seen = (self.replica.as_ref()).map(|r| read_lock(sc, r.port));
        let seen = seen.transpose()?;
        p.process.stop();
        let (how, port) = match &self.replica {
            Some(r) => {
                Redis::connect(r.port)?.cmd::<()>(&["REPLICAOF", "NO", "ONE"])?;
                ("its replica promoted by REPLICAOF NO ONE", r.port)
            }
            None => {
                let back = RedisServer::start(p.dir.clone(), None)?;
                let port = back.port;
                *self.restarted.lock().map_err(|_| "restart lock poisoned")? = Some(back);
                ("restarted from its snapshot", port)
            }
        };
        // Read before the clients follow it there (a replica, before the primary died).
        let [kept, kept_counter] = seen.map_or_else(|| read_lock(sc, port), Ok)?;
        self.port.store(port, Ordering::SeqCst);
        // As the clients see it: the next token the counter that came back gives, and the
        // owner of the live key it lacks, if any.
        let counted = kept_counter.as_deref().and_then(|v| v.parse::<u64>().ok());
        let next = counted.map_or(sc.first_fence, |v| v + 1);
        let lost = held.as_ref().filter(|v| kept.as_ref() != Some(v));
        let lost = lost.map(|v| owner_of(sc, v)).into_iter().collect();
        observe(w.shared).saw(t, None, failover(next, lost));
        let (res, old) = (&sc.resource, p.port);
        Ok(format!("t={t}: redis-server :{old} killed (kill -9) holding {res} = {held:?}, {fence} = {counter:?}; {how} on :{port}: {res} = {kept:?}, {fence} = {kept_counter:?}"))
    }
}

impl Service for Servers {
    /// The one lock server (and later whatever port a failover moves it to), or the Redlock
    /// nodes the client reaches (it never talks to a node it cannot reach).
    fn connect(&self, sc: &Scenario, idx: usize) -> Result<Box<dyn Lock>, String> {
        let all: Vec<usize> = (0..self.nodes.len()).collect();
        let reach = (sc.lock.redlock()).and_then(|r| r.reach.get(idx));
        let reach = reach.filter(|r| !r.is_empty()).unwrap_or(&all);
        let node = |&n: &usize| {
            let server = self.nodes.get(n).ok_or("redlock node out of range")?;
            Ok((n, Redis::connect(server.port)?))
        };
        Ok(Box::new(RedisLock {
            nodes: reach.iter().map(node).collect::<Result<_, String>>()?,
            of: self.nodes.len(),
            follow: sc.lock.redlock().is_none().then(|| self.port.clone()),
            incr: sc.lock.token_source() == TokenSource::SameRedis,
            extended: Vec::new(),
        }))
    }

    fn system(&self) -> String {
        match (version("redis-server"), self.nodes.len()) {
            (v, 1) => format!("Redis {v}"),
            (v, count) => format!("Redis {v} ×{count}"),
        }
    }

    fn fault(&self, w: &Stage, t: Millis, f: Fault) -> Result<Option<String>, String> {
        let lag = w.sc.replication_lag().unwrap_or(0);
        Ok(Some(match (f, &self.replica) {
            (Fault::ClockStep { by, jumped }, _) => self.step_clock(w, t, by, jumped)?,
            (Fault::Cut, Some(r)) => {
                // At `failover − lag` the replica has every write made so far; from then on,
                // none: what it has at the failover is exactly the writes of `lag` ago.
                let acked = replicated(self.nodes[0].port, "500")?;
                cut(r.port)?;
                format!("t={t}: replication cut, {lag} ms before the failover ({acked} replica(s) had acknowledged every write)")
            }
            (Fault::Failover, Some(_)) => self.fail_over(w, t)?,
            (Fault::Failover, None) if w.sc.restart() => self.fail_over(w, t)?,
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

/// How many replicas have every write the primary on `primary` has made so far, waiting up
/// to `ms` for one. WAIT counts the replicas that acknowledged this connection's own last
/// write, so it writes one first: the replication stream is in order, so a replica that has
/// it has every write before it.
fn replicated(primary: u16, ms: &str) -> Result<i64, String> {
    let mut p = Redis::connect(primary)?;
    p.cmd::<()>(&["SET", "replay:synced", "yes"])?;
    p.cmd(&["WAIT", "1", ms])
}

/// Points the replica at a port where nothing listens: a partition. It keeps its data and
/// receives nothing more.
fn cut(replica: u16) -> Result<(), String> {
    let dead = free_port()?.to_string();
    Redis::connect(replica)?.cmd(&["REPLICAOF", "127.0.0.1", &dead])
}
