//! The seam between the replay's clients and the lock services they take leases from:
//! [`Backend`] names a service and starts it, [`Service`] is its servers started for one
//! run, [`Lock`] one client's connection to it. This port imports no adapter: each adapter
//! (a file of `backends/`) implements [`Service`] and [`Lock`] and declares its [`Backend`];
//! `backends.rs` declares and lists them.

use std::path::Path;
use std::time::Duration;

use fencing_lab::core::{random_token, LockCommand, Millis, Scenario};

use super::observed::Shared;

/// A lock backend: who grants the lease, and so where the token comes from.
#[derive(Debug)]
pub struct Backend {
    /// Its name; a twin's runs are labelled `…@name`.
    pub name: &'static str,
    /// A lock service proper (etcd, ZooKeeper): its leases expire on a sweep or a tick, so
    /// its runs take a scale of seconds, and its tokens are raw revisions or zxids, compared
    /// with the core's by rank.
    pub lock_service: bool,
    /// The backend whose runs this one makes again, as `…@name` (ZooKeeper twins etcd).
    pub twin_of: Option<&'static str>,
    /// Starts one run's servers; what it started goes into the notes.
    pub start: Start,
    /// Why a scenario has no faithful equivalent on this backend, if it has none (a
    /// limit of the real system, or of how this harness drives it).
    pub cannot: fn(&Scenario) -> Option<&'static str>,
}

/// How a backend starts one run's servers.
pub type Start = fn(&Run, &mut Vec<String>) -> Result<Box<dyn Service>, String>;

impl PartialEq for Backend {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

/// A world fault, in the order the core makes them at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fault {
    /// The lock node's clock steps `by` scenario ms, `jumped` in all so far.
    ClockStep {
        by: Millis,
        jumped: Millis,
    },
    /// The replication cut that makes the replica `replication_lag` behind at the failover.
    Cut,
    Failover,
    /// A minority partition ([`Scenario::minority`]): the cut-off client's lock-service member
    /// is cut off from the others (`cut`), or rejoins them.
    Minority {
        cut: bool,
    },
}

/// What a service makes a world fault on: the run's scenario, its scale (real ms per
/// scenario ms), and where it reports what it did.
pub struct Stage<'a> {
    pub sc: &'a Scenario,
    pub scale: f64,
    pub shared: &'a Shared,
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
    fn fault(&self, _w: &Stage, _t: Millis, _f: Fault) -> Result<Option<String>, String> {
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
    /// Redlock: the nodes that took the last extend, by their replies (none for one server).
    fn extended_on(&self) -> Vec<usize> {
        Vec::new()
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

/// Whose lease a lock value is: the actor of that name, or under
/// `TokenSource::RandomValue` the actor that drew that value.
pub fn owner_of(sc: &Scenario, value: &str) -> String {
    if sc.actor_index(value).is_some() {
        return value.to_owned();
    }
    let drew = |i: usize| (0..64).any(|k| random_token(sc.seed, i, k).to_string() == value);
    (0..sc.actors.len())
        .find(|&i| drew(i))
        .map_or_else(|| value.to_owned(), |i| sc.actors[i].name.clone())
}

/// Real ms per scenario ms on a lock service proper. etcd's TTLs are whole seconds and its
/// lessor sweeps every 500 ms (ZooKeeper's ticks are finer, and it takes the same), so a
/// scenario ms must be long enough that a 30 ms TTL is 3 s: 1000·⌈TTL/10⌉/TTL.
pub fn service_scale(sc: &Scenario) -> f64 {
    let ttl = sc.lease_ttl.max(1) as f64;
    1000.0 * (ttl / 10.0).ceil() / ttl
}
