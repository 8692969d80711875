//! ZooKeeper as a lock service: a throwaway server (Debian's zookeeper 3.8 under java, on a
//! free 127.0.0.1 port, its data in the run's temp dir, no admin server), or an ensemble of
//! three whose leader a failover kills, reached through the
//! `zookeeper-client` crate, and the lock recipe on it: each acquire creates an ephemeral
//! sequential znode under the lock's node, and the client whose znode is the lowest holds it.
//!
//! The lease is the session: an ephemeral znode dies with the session that created it, and a
//! session dies when the server hears nothing from it for its timeout. A client frozen by a
//! pause sends nothing; here every client is so between its commands (its lock session is
//! connected only while it acquires or releases), so the lease lasts the session timeout from
//! the grant, as the core's lasts its TTL. The token is the znode's czxid, the zxid of the
//! write that created it: ZooKeeper's one order of all writes (as etcd's revision), never 0,
//! and still increasing across a leader change (the epoch is its high half). The sequential
//! number would do as well but counts from 0, which the fold reads as no token.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use fencing_lab::core::{self, Millis, Scenario};
use futures_lite::future::block_on;
use zookeeper_client as zk;

use super::super::lock::{Answer, Backend, Fault, Lock, Run, Service, Stage};
use super::super::observed::{failover, observe};
use super::super::servers::{free_port, spawn, wait_for, Started};

/// Debian's server jar; its manifest names the jars it needs.
const JAR: &str = "/usr/share/java/zookeeper.jar";
/// The server's tick (ms): sessions expire on tick boundaries, at most a tick late. Under a
/// fifth of the finest slot (100 ms), so an expiry stays within its own slot's first half.
const TICK_MS: u64 = 20;

/// An ephemeral sequential znode in a session whose timeout is the lease; its czxid is the
/// token. It makes every etcd run again (`…@zookeeper`).
pub const ZOOKEEPER: Backend = Backend {
    name: "zookeeper",
    lock_service: true,
    twin_of: Some("etcd"),
    start: |run, notes| Ok(Box::new(Servers::start(run, notes)?)),
    cannot: |sc| {
        lapses_while_live(sc).then_some("a live ZooKeeper client's heartbeats keep its session: its lease lapses only while the client is frozen")
    },
};

/// Whether the core lets a lease lapse while its holder is not paused (a ZooKeeper client
/// that is not frozen keeps its session, and so its lease, alive).
fn lapses_while_live(sc: &Scenario) -> bool {
    let trace = core::run(sc);
    let paused = |owner: &str, at: Millis| {
        let actor = sc.actors.iter().find(|a| a.name == owner);
        actor.is_some_and(|a| a.pauses.iter().any(|p| p.contains(at)))
    };
    trace.events.iter().any(|e| match &e.kind {
        core::EventKind::LeaseExpired { owner, .. } => !paused(owner, e.at),
        _ => false,
    })
}

/// ZooKeeper on loopback: one server, or an ensemble of three (to fail its leader over).
pub struct Servers {
    /// The connect string, `127.0.0.1:port[,127.0.0.1:port…]`.
    cluster: String,
    /// Each server's client port and process.
    members: Vec<(u16, Started)>,
}

/// How many servers an ensemble has: a leader killed leaves a majority of two.
const ENSEMBLE: usize = 3;

impl Servers {
    /// Starts a standalone server, or an ensemble if the run fails the lock service over,
    /// and waits until a client can open a session on it.
    fn start(run: &Run, notes: &mut Vec<String>) -> Result<Self, String> {
        let count = if run.sc.failover_at().is_some() {
            ENSEMBLE
        } else {
            1
        };
        let ports: Vec<[u16; 3]> = (0..count)
            .map(|_| Ok([free_port()?, free_port()?, free_port()?]))
            .collect::<Result<_, String>>()?;
        // Each server's quorum and election ports: the same lines in every server's config.
        let ensemble: String = (ports.iter().enumerate())
            .map(|(i, [_, quorum, election])| {
                format!("server.{}=127.0.0.1:{quorum}:{election}\n", i + 1)
            })
            .collect();
        let ensemble = if count > 1 { ensemble } else { String::new() };
        let mut members = Vec::new();
        for (i, [port, ..]) in ports.iter().enumerate() {
            let dir = run.dir.join(format!("zookeeper-{}-{i}", run.n));
            members.push((*port, start_server(&dir, *port, i + 1, &ensemble)?));
        }
        let cluster = (ports.iter().map(|[port, ..]| format!("127.0.0.1:{port}")))
            .collect::<Vec<_>>()
            .join(",");
        wait_for("zookeeper", Duration::from_secs(90), || {
            let serving = |p: &[u16; 3]| mode(p[0]).is_some();
            ports.iter().all(serving) && session(&cluster, Duration::from_secs(2), None).is_ok()
        })?;
        let client_ports: Vec<u16> = members.iter().map(|(p, _)| *p).collect();
        notes.push(format!(
            "{count} ZooKeeper server(s) on ports {client_ports:?}, tickTime {TICK_MS} ms"
        ));
        Ok(Self { cluster, members })
    }
}

/// Starts server number `myid` (an ensemble's `server.N` lines in `ensemble`, none when it
/// stands alone), its data in `dir`.
fn start_server(dir: &Path, port: u16, myid: usize, ensemble: &str) -> Result<Started, String> {
    let data = dir.join("data");
    std::fs::create_dir_all(&data).map_err(|e| e.to_string())?;
    std::fs::write(data.join("myid"), format!("{myid}\n")).map_err(|e| e.to_string())?;
    // Sessions as short as two ticks, so a lease of a few scenario ms is one. A follower
    // has 25 ticks (0.5 s) to hear from its leader; `srvr` tells which one leads.
    let cfg = format!(
        "tickTime={TICK_MS}\ninitLimit=250\nsyncLimit=25\ndataDir={}\nclientPort={port}\nclientPortAddress=127.0.0.1\nadmin.enableServer=false\n4lw.commands.whitelist=srvr\nminSessionTimeout={}\nmaxSessionTimeout=60000\n{ensemble}",
        data.display(),
        2 * TICK_MS
    );
    let cfg_file = dir.join("zoo.cfg");
    std::fs::write(&cfg_file, cfg).map_err(|e| e.to_string())?;
    let log = std::fs::File::create(dir.join("zookeeper.log")).map_err(|e| e.to_string())?;
    let mut cmd = Command::new("java");
    // A small heap and the quick JIT tier: the server starts in seconds on a busy machine.
    cmd.args([
        "-Xmx128m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-cp",
        JAR,
    ])
    .arg("org.apache.zookeeper.server.quorum.QuorumPeerMain")
    .arg(&cfg_file)
    .stdin(Stdio::null())
    .stdout(log.try_clone().map_err(|e| e.to_string())?)
    .stderr(log);
    spawn(&mut cmd, "zookeeper")
}

/// What the server on `port` says it is (`srvr`'s `Mode:` line: "leader", "follower",
/// "standalone"), if it serves clients.
fn mode(port: u16) -> Option<String> {
    use std::io::{Read, Write};
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let mut s = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(1)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    s.write_all(b"srvr").ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    let line = out.lines().find_map(|l| l.strip_prefix("Mode: "))?;
    Some(line.trim().to_owned())
}

impl Service for Servers {
    fn connect(&self, sc: &Scenario, _: usize) -> Result<Box<dyn Lock>, String> {
        let reader = session(&self.cluster, Duration::from_secs(10), None)
            .map_err(failed(self.cluster.clone()))?;
        Ok(Box::new(ZkLock {
            cluster: self.cluster.clone(),
            reader,
            held: None,
            queue: sc.lock.queue(),
            waiting: None,
        }))
    }

    fn system(&self) -> String {
        match self.members.len() {
            1 => format!("ZooKeeper {}", version()),
            n => format!("ZooKeeper {} ×{n}", version()),
        }
    }

    /// A failover kills the server that leads the ensemble now (a crash): the other two
    /// elect a new leader, which has every write the old one committed, so no lease is lost
    /// and the token counter (the zxid) goes on from where it was.
    fn fault(&self, w: &Stage, t: Millis, f: Fault) -> Result<Option<String>, String> {
        if f != Fault::Failover || self.members.len() < 2 {
            return Ok(None);
        }
        let leads = |(port, _): &&(u16, Started)| mode(*port).as_deref() == Some("leader");
        let (port, leader) =
            (self.members.iter().find(leads)).ok_or("no ZooKeeper server says it is the leader")?;
        leader.stop();
        let killed = std::time::Instant::now();
        {
            let mut o = observe(w.shared);
            let next = o.tokens.iter().max().map_or(w.sc.first_fence, |t| t + 1);
            o.saw(t, None, failover(next, Vec::new()));
        }
        let rest = || self.members.iter().filter(|(p, _)| p != port);
        let elected = || rest().find(|(p, _)| mode(*p).as_deref() == Some("leader"));
        wait_for("a new ZooKeeper leader", Duration::from_secs(10), || {
            elected().is_some()
        })?;
        let (new, ms) = (
            elected().map_or(0, |(p, _)| *p),
            killed.elapsed().as_millis(),
        );
        Ok(Some(format!("t={t}: killed the ZooKeeper leader (client port :{port}); the other two elected :{new} within {ms} real ms")))
    }

    /// The servers still answering after a failover, and what each is now.
    fn end_note(&self) -> Option<String> {
        (self.members.len() > 1).then(|| {
            let modes = (self.members.iter())
                .map(|(p, _)| format!(":{p} {}", mode(*p).unwrap_or_else(|| "down".into())));
            format!(
                "ZooKeeper servers at the end: {}",
                modes.collect::<Vec<_>>().join(", ")
            )
        })
    }
}

/// A session on `cluster` (one server or several): a new one of `timeout`, or `resumed`
/// (its id and password). A new one is detached: dropping the client leaves it to expire, as a frozen client does.
fn session(
    cluster: &str,
    timeout: Duration,
    resumed: Option<zk::SessionInfo>,
) -> Result<zk::Client, zk::Error> {
    let c = zk::Client::connector().with_session_timeout(timeout);
    let c = match resumed {
        Some(s) => c.with_session(s),
        None => c.with_detached(),
    };
    // Alone, a server that does not answer is down: fail at once. An ensemble's client
    // tries the servers in turn until one serves it (an election takes a moment), within
    // the session's timeout, as a ZooKeeper client does.
    let c = if cluster.contains(',') {
        c
    } else {
        c.with_fail_eagerly()
    };
    block_on(c.connect(cluster))
}

/// A ZooKeeper error as the harness's failure.
fn failed(what: String) -> impl FnOnce(zk::Error) -> String {
    move |e| format!("zookeeper {what}: {e}")
}

/// The server's version, from the name of Debian's versioned jar: "3.8.0".
fn version() -> String {
    let names = std::fs::read_dir(Path::new(JAR).parent().unwrap_or(Path::new("/")));
    let names = names.into_iter().flatten().flatten();
    let names = names.map(|e| e.file_name().to_string_lossy().into_owned());
    names
        .filter_map(|n| {
            Some(
                n.strip_prefix("zookeeper-")?
                    .strip_suffix(".jar")?
                    .to_owned(),
            )
        })
        .find(|v| v.starts_with(|c: char| c.is_ascii_digit()))
        .unwrap_or_else(|| "?".to_owned())
}

/// A client's lock on ZooKeeper.
pub struct ZkLock {
    cluster: String,
    /// A session for reads: it holds no znode, so its heartbeats renew no lease.
    reader: zk::Client,
    /// The session that holds this client's znode, and the znode's path.
    held: Option<(zk::SessionInfo, String)>,
    /// A fair queue ([`Scenario::queue`]): an acquire that is not the lowest waits.
    queue: bool,
    /// The queued znode's session (connected, so its heartbeats keep it, as a live waiter's
    /// do), path and czxid.
    waiting: Option<(zk::Client, String, u64)>,
}

/// The lock's node: its children are the contenders' znodes.
fn lock_node(key: &str) -> String {
    format!("/locks/{key}")
}

impl ZkLock {
    /// The holder's znode: the lowest child of the lock's node (names are zero-padded), its
    /// data (the holder's value) and its czxid.
    fn holder(&self, key: &str) -> Result<Option<(String, String, u64)>, String> {
        let node = lock_node(key);
        let children = match block_on(self.reader.list_children(&node)) {
            Err(zk::Error::NoNode) => return Ok(None),
            r => r.map_err(failed(format!("list {node}")))?,
        };
        let Some(lowest) = children.into_iter().min() else {
            return Ok(None);
        };
        let path = format!("{node}/{lowest}");
        match block_on(self.reader.get_data(&path)) {
            // Its session expired between the two reads.
            Err(zk::Error::NoNode) => self.holder(key),
            Err(e) => Err(failed(format!("get {path}"))(e)),
            Ok((data, stat)) => {
                let value = String::from_utf8_lossy(&data).into_owned();
                Ok(Some((path, value, stat.czxid as u64)))
            }
        }
    }
}

impl ZkLock {
    /// A new session of `timeout` creates this client's ephemeral sequential znode under
    /// `node`: the session, the znode's path and its stat. An ensemble's server can drop the
    /// connection while its leader is replaced (ConnectionLoss): then, as ZooKeeper's lock
    /// recipe does, the client looks for a znode its session owns (the create may have been
    /// committed), and if there is none, tries again in a new session.
    fn create(&self, node: &str, value: &str, timeout: Duration) -> Result<Created, String> {
        let persistent = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
        let ephemeral = zk::CreateMode::EphemeralSequential.with_acls(zk::Acls::anyone_all());
        let prefix = format!("{node}/lock-");
        let mut tries = 0;
        loop {
            tries += 1;
            let c = session(&self.cluster, timeout, None).map_err(failed(self.cluster.clone()))?;
            let created = block_on(c.mkdir(node, &persistent))
                .and_then(|()| block_on(c.create(&prefix, value.as_bytes(), &ephemeral)));
            match created {
                Ok((stat, seq)) => return Ok((c, format!("{prefix}{seq}"), stat)),
                Err(zk::Error::ConnectionLoss) if tries < 3 => {
                    if let Some((path, stat)) = self.owned(node, c.session().id().0)? {
                        return Ok((c, path, stat));
                    }
                }
                Err(e) => return Err(failed(format!("create {prefix}"))(e)),
            }
        }
    }

    /// The child of `node` that session `id` owns, if any.
    fn owned(&self, node: &str, id: i64) -> Result<Option<(String, zk::Stat)>, String> {
        let children = match block_on(self.reader.list_children(node)) {
            Err(zk::Error::NoNode) => return Ok(None),
            r => r.map_err(failed(format!("list {node}")))?,
        };
        for child in children {
            let path = format!("{node}/{child}");
            match block_on(self.reader.get_data(&path)) {
                Ok((_, stat)) if stat.ephemeral_owner == id => return Ok(Some((path, stat))),
                Ok(_) | Err(zk::Error::NoNode) => {}
                Err(e) => return Err(failed(format!("get {path}"))(e)),
            }
        }
        Ok(None)
    }
}

/// A created znode: its session, path and stat.
type Created = (zk::Client, String, zk::Stat);

impl Lock for ZkLock {
    /// A new session of the lease's timeout (a tick short: it expires on the next tick
    /// boundary after it) creates the client's znode; it holds the lock if that znode is the
    /// lowest, else it deletes it (a try-lock), or in a fair queue keeps it and waits.
    fn acquire(&mut self, key: &str, value: &str, px: u64) -> Result<Answer, String> {
        let timeout = Duration::from_millis(px.saturating_sub(TICK_MS).max(2 * TICK_MS));
        let node = lock_node(key);
        let (c, mine, stat) = self.create(&node, value, timeout)?;
        let granted = self.holder(key)?.is_some_and(|(path, ..)| path == mine);
        let ms = c.session_timeout().as_millis();
        let how = if granted {
            self.held = Some((c.session().clone(), mine.clone()));
            format!("ZooKeeper created {mine} (czxid {}), the lowest, in a session of {ms} ms; its czxid is the token", stat.czxid)
        } else if self.queue {
            let how = format!("ZooKeeper created {mine}, not the lowest: it waits in the queue");
            self.waiting = Some((c, mine, stat.czxid as u64));
            how
        } else {
            block_on(c.delete(&mine, None)).map_err(failed(format!("delete {mine}")))?;
            format!("ZooKeeper created {mine}, not the lowest: deleted it again")
        };
        let token = granted.then_some(stat.czxid as u64);
        Ok(Answer::of_service(granted, token, how))
    }

    /// ZooKeeper's lock recipe: watches only the znode just before this client's (the
    /// highest lower one) until it is gone, until none is left. Its session is then left
    /// alone, so it lapses its timeout after the grant, as the core's lease its TTL.
    fn wait_turn(&mut self, key: &str) -> Result<Answer, String> {
        let (c, mine, czxid) = self.waiting.take().ok_or("zookeeper: no queued znode")?;
        let (node, mut waited) = (lock_node(key), Vec::new());
        let name = mine.rsplit('/').next().unwrap_or_default().to_owned();
        loop {
            let children =
                block_on(c.list_children(&node)).map_err(failed(format!("list {node}")))?;
            let Some(before) = children.into_iter().filter(|n| *n < name).max() else {
                break;
            };
            let path = format!("{node}/{before}");
            let (stat, watch) =
                block_on(c.check_and_watch_stat(&path)).map_err(failed(format!("watch {path}")))?;
            if stat.is_some() {
                block_on(watch.changed());
            }
            waited.push(path);
        }
        self.held = Some((c.session().clone(), mine.clone()));
        let waited = waited.join(", then ");
        let how = format!("ZooKeeper's watch saw {waited} go: {mine} (czxid {czxid}) is the lowest, its czxid the token");
        Ok(Answer::of_service(true, Some(czxid), how))
    }

    fn value(&mut self, key: &str) -> Result<Option<String>, String> {
        Ok(self.holder(key)?.map(|(_, value, _)| value))
    }

    /// The holder's czxid: a lapsed session's znode is gone; a new holder's is newer.
    fn live_token(&mut self, key: &str) -> Result<Option<u64>, String> {
        Ok(self.holder(key)?.map(|(.., czxid)| czxid))
    }

    /// The znode goes only if this client's session still holds it: the session is resumed
    /// (an expired one is refused) and closed, which deletes its znode.
    fn release(&mut self, _key: &str, _value: &str) -> Result<Result<(), Vec<usize>>, String> {
        let Some((s, path)) = self.held.take() else {
            return Ok(Err(Vec::new()));
        };
        let c = match session(&self.cluster, Duration::from_secs(1), Some(s)) {
            Err(zk::Error::SessionExpired) => return Ok(Err(Vec::new())),
            r => r.map_err(failed(self.cluster.clone()))?,
        };
        match block_on(c.delete(&path, None)) {
            Ok(()) => Ok(Ok(())),
            Err(zk::Error::NoNode) => Ok(Err(Vec::new())),
            Err(e) => Err(failed(format!("delete {path}"))(e)),
        }
    }
}
