//! One run's world: the lock servers started for it, and the faults that are the world's,
//! not an actor's, made on them at their scenario times: a lock node's clock step
//! (libfaketime), a replica cut off from its primary, and a failover (the Redis primary
//! killed and its replica promoted, the one Redis killed and restarted from its snapshot,
//! or the etcd leader killed).

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use fencing_lab::core::{EventKind, Fence, Lease, Millis, Scenario};

use super::lock::LockBackend;
use super::redis::{fence_key, Redis};
use super::run::{observe, owner_of, Env, Shared, AT_CLOCK_STEP, AT_FAILOVER};
use super::servers::{free_port, wait_for, EtcdServer, RedisServer};

/// Members of the etcd cluster of a run that fails over.
const ETCD_CLUSTER: usize = 3;

/// The lock servers of one run, started for it and stopped when dropped.
#[derive(Default)]
pub struct LockServers {
    /// The redis-servers: the one lock server (the primary if it fails over), or Redlock's.
    pub nodes: Vec<RedisServer>,
    replica: Option<RedisServer>,
    /// The etcd member, or cluster of a run that fails etcd over.
    pub etcd: Option<EtcdServer>,
    /// The file libfaketime reads the lock node's clock offset from (clock-jump runs).
    pub faketime: Option<PathBuf>,
    /// The redis-server whose clock steps (the lock node, or Redlock's jumping node).
    jumping: Option<u16>,
    /// Where the one Redis keeps its snapshot, and its name, if it restarts (redis-restart).
    restart: Option<(PathBuf, String)>,
    /// The redis-server the restart brought back, kept until the run ends.
    restarted: Mutex<Option<RedisServer>>,
    pub notes: Vec<String>,
}

impl LockServers {
    /// Starts run `n`'s lock servers in `dir`.
    pub fn start(sc: &Scenario, lock: LockBackend, n: usize, dir: &Path) -> Result<Self, String> {
        let mut s = LockServers::default();
        if !sc.lock_clock_jumps.is_empty() {
            let file = dir.join(format!("faketime-{n}"));
            std::fs::write(&file, "+0\n").map_err(|e| e.to_string())?;
            s.faketime = Some(file);
        }
        let faketime = s.faketime.as_deref();
        match (lock, sc.failover_at, &sc.redlock) {
            (LockBackend::RowLock, _, _) => s.notes.push(
                "no lock server: the row lock is PostgreSQL's own, on the account's row".into(),
            ),
            // One member, or a cluster whose leader can fail over.
            (LockBackend::Etcd, failover, _) => {
                let members = failover.map_or(1, |_| ETCD_CLUSTER);
                let e = EtcdServer::start(dir, &format!("etcd-{n}"), members)?;
                let ports = &e.client.ports;
                s.notes
                    .push(format!("{members} etcd member(s) on ports {ports:?}"));
                s.etcd = Some(e);
            }
            // One redis-server, or Redlock's nodes (one of which may run under libfaketime).
            (LockBackend::Redis | LockBackend::Redlock, failover, r) => {
                let (count, jumping) = r.as_ref().map_or((1, 0), |r| (r.nodes, r.jumping_node));
                for i in 0..count {
                    let ft = faketime.filter(|_| i == jumping);
                    let name = format!("redis-{n}-{i}");
                    s.nodes.push(RedisServer::start(dir, &name, ft)?);
                    if sc.restart {
                        s.restart = Some((dir.to_path_buf(), name));
                    }
                }
                s.jumping = s.nodes.get(jumping).map(|s| s.port);
                let ports: Vec<u16> = s.nodes.iter().map(|s| s.port).collect();
                let jumps = faketime.map_or_else(String::new, |_| {
                    format!(", node {jumping} under libfaketime")
                });
                s.notes
                    .push(format!("{count} redis-server(s) on ports {ports:?}{jumps}"));
                // The fence counter's base value, set on the primary before a replica syncs,
                // so the replica has it too (and only it).
                let first = sc.first_fence.saturating_sub(1).to_string();
                let fence = fence_key(&sc.resource);
                Redis::connect(ports[0])?.cmd::<()>(&["SET", &fence, &first])?;
                if sc.restart {
                    // No replica: the one Redis comes back from the snapshot taken now, with
                    // no AOF (`--appendonly no`), so nothing a client is told OK after it.
                    Redis::connect(ports[0])?.cmd::<()>(&["SAVE"])?;
                    s.notes.push("no AOF; SAVE before the run, so the snapshot holds only the fence counter's base".to_owned());
                } else if let Some(at) = failover {
                    let r = start_replica(dir, n, ports[0], &mut s.notes)?;
                    // A replica more behind than the failover is late has none of the run's
                    // writes: it is cut off before any client runs.
                    if sc.replication_lag.is_none_or(|lag| lag > at) {
                        cut(&mut Redis::connect(r.port)?)?;
                        s.notes
                            .push("replication cut before any client ran".to_owned());
                    }
                    s.replica = Some(r);
                }
            }
        }
        Ok(s)
    }
}

/// The world's faults, in the order the core makes them at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Fault {
    ClockStep,
    /// The replication cut that makes the replica `replication_lag` behind at the failover.
    Cut,
    Failover,
}

/// What the world's thread acts on and reports to.
pub struct World<'a> {
    pub env: &'a Env,
    pub sc: &'a Scenario,
    pub servers: &'a LockServers,
    pub shared: &'a Shared,
}

impl World<'_> {
    /// Makes the world's faults at their times (on its own thread, beside the actors').
    pub fn run(&self) -> Result<(), String> {
        let (env, sc, s) = (self.env, self.sc, self.servers);
        env.ready();
        let mut faults: Vec<(Millis, Fault)> = (sc.lock_clock_jumps.iter())
            .map(|j| (j.at, Fault::ClockStep))
            .collect();
        if let Some(t) = sc.failover_at {
            faults.push((t, Fault::Failover));
            let lag = sc
                .replication_lag
                .filter(|lag| *lag <= t && s.replica.is_some());
            faults.extend(lag.map(|lag| (t - lag, Fault::Cut)));
        }
        faults.sort_unstable();
        faults.dedup();
        let mut jumped: Millis = 0;
        for (t, fault) in faults.into_iter().filter(|(t, _)| *t <= sc.horizon) {
            let note = match (fault, s.nodes.first(), &s.replica, &s.etcd) {
                (Fault::ClockStep, ..) => {
                    env.sleep_until(t, AT_CLOCK_STEP);
                    let jumps = sc.lock_clock_jumps.iter().filter(|j| j.at == t);
                    let by = jumps.map(|j| j.by).sum::<Millis>();
                    jumped += by;
                    self.step_clock(t, by, jumped)?
                }
                (Fault::Cut, Some(p), Some(r), _) => {
                    // After this instant's steps (or, with no lag, just before the failover).
                    let lag = sc.replication_lag.unwrap_or(0);
                    env.sleep_until(t, if lag == 0 { -0.4 } else { 0.4 });
                    let how = cut_at_lag(p.port, r.port)?;
                    format!("t={t}: replication cut, {lag} ms before the failover ({how})")
                }
                (Fault::Failover, _, _, Some(cluster)) => {
                    env.sleep_until(t, AT_FAILOVER);
                    let killed = cluster.kill_leader()?;
                    let mut o = observe(self.shared);
                    let next = o.tokens.iter().max().map_or(sc.first_fence, |t| t + 1);
                    o.saw(t, None, failover(next, Vec::new()));
                    format!("t={t}: killed the etcd leader (client port :{killed}); the other members elect a new one")
                }
                (Fault::Failover, Some(p), None, None) if s.restart.is_some() => {
                    env.sleep_until(t, AT_FAILOVER);
                    self.restart_redis(t, p)?
                }
                (Fault::Failover, Some(p), Some(r), None) => {
                    env.sleep_until(t, AT_FAILOVER);
                    self.fail_redis_over(t, p, r)?
                }
                _ => continue,
            };
            observe(self.shared).notes.push(note);
        }
        if let (Some(cluster), Some(_)) = (&s.etcd, sc.failover_at) {
            let leaders = cluster.leaders();
            let note =
                format!("at the end, the surviving etcd members (port, leader id): {leaders:?}");
            observe(self.shared).notes.push(note);
        }
        Ok(())
    }

    /// Steps the lock node's clock to `jumped` scenario ms ahead (libfaketime reads the
    /// offset from its file on every call), and says what it did to the live lease's PTTL.
    fn step_clock(&self, t: Millis, by: Millis, jumped: Millis) -> Result<String, String> {
        let (env, res) = (self.env, &self.sc.resource);
        let (Some(port), Some(file)) = (self.servers.jumping, &self.servers.faketime) else {
            return Ok(format!("t={t}: no clock to step"));
        };
        let mut r = Redis::connect(port)?;
        let before: Option<i64> = r.cmd(&["PTTL", res])?;
        let secs = jumped as f64 * env.scale / 1000.0;
        let tmp = file.with_extension("tmp");
        std::fs::write(&tmp, format!("+{secs:.6}\n")).map_err(|e| e.to_string())?;
        std::fs::rename(&tmp, file).map_err(|e| e.to_string())?;
        let after: Option<i64> = r.cmd(&["PTTL", res])?;
        let kind = EventKind::LockClockJumped {
            by,
            shortened: None,
        };
        observe(self.shared).saw(t, None, kind);
        let real = by as f64 * env.scale;
        Ok(format!("t={t}: the clock of the redis-server on :{port} stepped +{real:.0} real ms (libfaketime); PTTL {res} went {before:?} → {after:?} ms"))
    }

    /// Kills the primary and promotes the replica (`REPLICAOF NO ONE`); the clients follow
    /// the lock server's port to it.
    fn fail_redis_over(
        &self,
        t: Millis,
        p: &RedisServer,
        r: &RedisServer,
    ) -> Result<String, String> {
        let (sc, fence) = (self.sc, fence_key(&self.sc.resource));
        let ([seen, seen_fence], [on_primary, primary_fence]) =
            (read_lock(sc, r.port)?, read_lock(sc, p.port)?);
        p.crash();
        Redis::connect(r.port)?.cmd::<()>(&["REPLICAOF", "NO", "ONE"])?;
        self.env.redis_port.store(r.port, Ordering::SeqCst);
        let kind = came_back(sc, &on_primary, &seen, &seen_fence);
        observe(self.shared).saw(t, None, kind);
        let res = &sc.resource;
        Ok(format!("t={t}: primary killed (it held {res} = {on_primary:?}, {fence} = {primary_fence:?}); the replica, which had {seen:?} and {fence} = {seen_fence:?}, promoted by REPLICAOF NO ONE"))
    }
}

impl World<'_> {
    /// The one Redis restarting: killed outright (kill -9), and a new redis-server started
    /// on its directory, which loads the snapshot taken before the run; the clients follow
    /// the port to it.
    fn restart_redis(&self, t: Millis, p: &RedisServer) -> Result<String, String> {
        let (sc, fence) = (self.sc, fence_key(&self.sc.resource));
        let Some((dir, name)) = &self.servers.restart else {
            return Ok(format!("t={t}: no Redis to restart"));
        };
        let [held, counter] = read_lock(sc, p.port)?;
        p.crash();
        let back = RedisServer::start(dir, name, None)?;
        let [kept, kept_counter] = read_lock(sc, back.port)?;
        self.env.redis_port.store(back.port, Ordering::SeqCst);
        observe(self.shared).saw(t, None, came_back(sc, &held, &kept, &kept_counter));
        let (res, old, new) = (&sc.resource, p.port, back.port);
        *self
            .servers
            .restarted
            .lock()
            .map_err(|_| "restart lock poisoned")? = Some(back);
        Ok(format!("t={t}: redis-server :{old} killed (kill -9) holding {res} = {held:?}, {fence} = {counter:?}; restarted on :{new} from its snapshot: {res} = {kept:?}, {fence} = {kept_counter:?}"))
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
        (Some(v), k) if k.as_ref() != Some(v) => vec![owner_of(sc, v)],
        _ => Vec::new(),
    };
    failover(next, lost)
}

/// A failover as the harness made it: the owners of the live keys the promoted replica
/// lacked (their leases' tokens and expiries are the fold's to fill in).
fn failover(next: u64, lost: Vec<String>) -> EventKind {
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
