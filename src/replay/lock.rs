//! The seam between the replay's clients and the lock services they take leases from:
//! [`LockBackend`] names a service, [`Service`] is its servers started for one run, [`Lock`]
//! one client's connection to it. A new service is a variant here, its arm in
//! [`LockBackend::start`], and one module that implements [`Service`] and [`Lock`].

use std::path::Path;
use std::time::Duration;

use fencing_lab::core::{LockCommand, LockKind, Scenario};

use super::world::{Fault, World};
use super::{etcd, redis, servers, zookeeper};

/// Who grants the lease, and so where the token comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockBackend {
    /// `SET key value NX PX ttl` on one redis-server (the port can change at a failover);
    /// with `TokenSource::SameRedis` the same Lua script INCRs `fence:<key>` for the token.
    Redis,
    /// An etcd lease plus a create-if-absent transaction; the revision is the token
    /// (`TokenSource::LockService`).
    Etcd,
    /// An ephemeral sequential znode in a session whose timeout is the lease; its czxid is
    /// the token (`TokenSource::LockService`, run again on ZooKeeper: `@zookeeper`).
    ZooKeeper,
    /// Redlock over several redis-servers; the token is a separate counter's (a PostgreSQL
    /// sequence), Redlock itself mints none (`TokenSource::Counterfactual`).
    Redlock,
    /// No lock server: `SELECT … FOR UPDATE` on the account's row in the storage's own
    /// PostgreSQL, with `idle_in_transaction_session_timeout` (`Scenario::row_lock`). No token.
    RowLock,
}

impl LockBackend {
    /// The one place that maps a scenario's `token_source` (and `redlock`, `row_lock`) onto
    /// real servers.
    pub fn of(sc: &Scenario) -> Self {
        match sc.lock {
            LockKind::Row(_) => Self::RowLock,
            LockKind::Redlock(_) => Self::Redlock,
            LockKind::Service(_) => Self::Etcd,
            LockKind::Redis { .. } => Self::Redis,
        }
    }

    /// Starts run `n`'s lock servers in `dir`, at `scale` real ms per scenario ms; what it
    /// started goes into `notes`.
    pub fn start(self, run: &Run, notes: &mut Vec<String>) -> Result<Box<dyn Service>, String> {
        Ok(match self {
            Self::Redis | Self::Redlock => Box::new(redis::Servers::start(run, notes)?),
            Self::Etcd => Box::new(etcd::Servers::start(run, notes)?),
            Self::ZooKeeper => Box::new(zookeeper::Servers::start(run, notes)?),
            Self::RowLock => Box::new(RowOnly::start(run, notes)),
        })
    }

    /// A lock service proper (etcd, ZooKeeper): its leases expire on a sweep or a tick, so
    /// its runs take a scale of seconds, and its tokens are raw revisions or zxids, compared
    /// with the core's by rank.
    pub fn is_lock_service(self) -> bool {
        matches!(self, Self::Etcd | Self::ZooKeeper)
    }
}

/// What a lock service's servers are started for: one run of a scenario.
pub struct Run<'a> {
    pub sc: &'a Scenario,
    pub n: usize,
    pub dir: &'a Path,
    pub scale: f64,
}

/// A lock service's servers for one run, stopped when dropped.
pub trait Service: Send + Sync {
    /// Client `idx`'s connection.
    fn connect(&self, sc: &Scenario, idx: usize) -> Result<Box<dyn Lock>, String>;
    /// The system a recorded trace names: "etcd 3.4.23".
    fn system(&self) -> String;
    /// Makes a world fault (it is time for it); what it did, or `None` if the service has
    /// nothing it applies to.
    fn fault(&self, _w: &World, _t: u64, _f: Fault) -> Result<Option<String>, String> {
        Ok(None)
    }
    /// A last line of evidence, after the run.
    fn end_note(&self) -> Option<String> {
        None
    }
}

/// A lock service's answer to an acquire.
pub struct Answer {
    pub granted: bool,
    /// The token the grant itself carries (Redis's INCR in the same script, etcd's revision).
    pub token: Option<u64>,
    /// Redlock: the nodes that answered OK.
    pub nodes: Vec<usize>,
    /// How the server said it, for the run's evidence.
    pub how: String,
}

impl Answer {
    /// A lock service's answer: it has no Redlock nodes.
    pub fn of_service(granted: bool, token: Option<u64>, how: String) -> Self {
        let nodes = Vec::new();
        Self {
            granted,
            token,
            nodes,
            how,
        }
    }
}

/// A lock command sent where it gets no answer, run on a thread of its own: evidence that
/// none came, or an error if one did.
pub type Unanswered = Box<dyn FnOnce() -> Result<String, String> + Send>;

/// One client's connection to a lock service. `value` is what the client stores as the
/// lock's value and checks ownership with (its name, or its random value); `px` the lease's
/// real time to live in ms. A command a service has no equivalent of is an error.
pub trait Lock: Send {
    fn acquire(&mut self, _key: &str, _value: &str, _px: u64) -> Result<Answer, String> {
        Err("this lock is taken by a statement, not a command".to_owned())
    }
    /// Fair queue ([`Scenario::queue`]): after an acquire that queued, blocks until the lock
    /// service hands this client the lock; the grant.
    fn wait_turn(&mut self, _key: &str) -> Result<Answer, String> {
        Err("this lock service keeps no queue".to_owned())
    }
    /// A command the scenario's partition leaves unanswered, sent for real where the world
    /// cut this client's server off, waiting `wait` for the answer; `None` where the harness
    /// drops it by not sending it (Redis: the client is cut off, not a server).
    fn unanswered(&mut self, _command: LockCommand, _wait: Duration) -> Option<Unanswered> {
        None
    }
    /// The lock key's current value.
    fn value(&mut self, _key: &str) -> Result<Option<String>, String> {
        Err("this lock has no lock key".to_owned())
    }
    /// The token of the lease that holds the lock now (the sequencer check asks it).
    fn live_token(&mut self, _key: &str) -> Result<Option<u64>, String> {
        Err("this lock service mints no token to check a sequencer against".to_owned())
    }
    /// Whether `value` holds the lock (under Redlock: on a majority of the nodes).
    fn holds(&mut self, key: &str, value: &str) -> Result<bool, String> {
        Ok(self.value(key)?.as_deref() == Some(value))
    }
    /// The ownership-checked extend; false if `value` no longer holds it.
    fn extend(&mut self, _key: &str, _value: &str, _px: u64) -> Result<bool, String> {
        Err("this lock service renews by other means than an extend".to_owned())
    }
    /// The compare-and-delete: `Ok(())` if it released `value`'s lease, else the Redlock
    /// nodes where it still deleted a leftover key of `value`'s.
    fn release(&mut self, _key: &str, _value: &str) -> Result<Result<(), Vec<usize>>, String> {
        Err("this lock is released by a statement, not a command".to_owned())
    }
    /// The unconditional DEL of GET-then-DEL: the value it deleted, if any.
    fn delete(&mut self, _key: &str) -> Result<Option<String>, String> {
        Err("an unconditional DEL is a Redis-client pattern".to_owned())
    }
}

/// The row lock's "service": the storage's own row, taken and released by statements
/// (`SELECT … FOR UPDATE`, `COMMIT`), not commands.
pub struct RowOnly(String);

impl RowOnly {
    fn start(run: &Run, notes: &mut Vec<String>) -> Self {
        notes.push("no lock server: the row lock is PostgreSQL's own, on the account's row".into());
        let pg = servers::version(&format!("{}/postgres", servers::PG_BIN));
        let timeout = (run.sc.idle_timeout()).map_or_else(String::new, |ms| {
            let real = ms as f64 * run.scale;
            format!(", idle_in_transaction_session_timeout = {real:.0} ms")
        });
        Self(format!("PostgreSQL {pg} (SELECT … FOR UPDATE{timeout})"))
    }
}

impl Service for RowOnly {
    /// None: a row-lock client's statements go to the storage.
    fn connect(&self, _: &Scenario, _: usize) -> Result<Box<dyn Lock>, String> {
        Ok(Box::new(RowOnly(String::new())))
    }
    fn system(&self) -> String {
        self.0.clone()
    }
}

impl Lock for RowOnly {}
