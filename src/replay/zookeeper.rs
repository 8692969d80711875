//! ZooKeeper as a lock service: a throwaway server (Debian's zookeeper 3.8 under java, on a
//! free 127.0.0.1 port, its data in the run's temp dir, no admin server), reached through the
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

use fencing_lab::core::Scenario;
use futures_lite::future::block_on;
use zookeeper_client as zk;

use super::lock::{Answer, Lock, Run, Service};
use super::servers::{free_port, spawn, wait_for, Started};

/// Debian's server jar; its manifest names the jars it needs.
const JAR: &str = "/usr/share/java/zookeeper.jar";
/// The server's tick (ms): sessions expire on tick boundaries, at most a tick late. Under a
/// fifth of the finest slot (100 ms), so an expiry stays within its own slot's first half.
const TICK_MS: u64 = 20;

/// One ZooKeeper server on loopback.
pub struct Servers {
    /// The connect string, `127.0.0.1:port`.
    cluster: String,
    _process: Started,
}

impl Servers {
    /// Starts a standalone server and waits until a client can open a session on it.
    pub fn start(run: &Run, notes: &mut Vec<String>) -> Result<Self, String> {
        let (dir, port) = (run.dir.join(format!("zookeeper-{}", run.n)), free_port()?);
        std::fs::create_dir_all(dir.join("data")).map_err(|e| e.to_string())?;
        let data = dir.join("data");
        // Sessions as short as two ticks, so a lease of a few scenario ms is one.
        let cfg = format!(
            "tickTime={TICK_MS}\ndataDir={}\nclientPort={port}\nclientPortAddress=127.0.0.1\nadmin.enableServer=false\nminSessionTimeout={}\nmaxSessionTimeout=60000\n",
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
        let process = spawn(&mut cmd, "zookeeper")?;
        let cluster = format!("127.0.0.1:{port}");
        wait_for("zookeeper", Duration::from_secs(60), || {
            session(&cluster, Duration::from_secs(2), None).is_ok()
        })?;
        notes.push(format!(
            "1 ZooKeeper server on port {port}, tickTime {TICK_MS} ms"
        ));
        Ok(Self {
            cluster,
            _process: process,
        })
    }
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
        format!("ZooKeeper {}", version())
    }
}

/// A session on `cluster`: a new one of `timeout`, or `resumed` (its id and password). A
/// new one is detached: dropping the client leaves it to expire, as a frozen client does.
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
    block_on(c.with_fail_eagerly().connect(cluster))
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

impl Lock for ZkLock {
    /// A new session of the lease's timeout (a tick short: it expires on the next tick
    /// boundary after it) creates the client's znode; it holds the lock if that znode is the
    /// lowest, else it deletes it (a try-lock), or in a fair queue keeps it and waits.
    fn acquire(&mut self, key: &str, value: &str, px: u64) -> Result<Answer, String> {
        let timeout = Duration::from_millis(px.saturating_sub(TICK_MS).max(2 * TICK_MS));
        let c = session(&self.cluster, timeout, None).map_err(failed(self.cluster.clone()))?;
        let node = lock_node(key);
        let persistent = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
        block_on(c.mkdir(&node, &persistent)).map_err(failed(format!("mkdir {node}")))?;
        let ephemeral = zk::CreateMode::EphemeralSequential.with_acls(zk::Acls::anyone_all());
        let prefix = format!("{node}/lock-");
        let (stat, seq) = block_on(c.create(&prefix, value.as_bytes(), &ephemeral))
            .map_err(failed(format!("create {prefix}")))?;
        let mine = format!("{prefix}{seq}");
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
