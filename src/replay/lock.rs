//! The seam between the replay's clients and the lock services they take leases from:
//! [`LockBackend`] names a service, [`Lock`] is one client's connection to it. A new service
//! is a variant here, a module that implements [`Lock`] (and starts its server), and its arm
//! in [`LockBackend::of`] and in `run::connect`.

use fencing_lab::core::{Scenario, TokenSource};

/// Who grants the lease, and so where the token comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockBackend {
    /// `SET key value NX PX ttl` on one redis-server (the port can change at a failover);
    /// with `TokenSource::SameRedis` the same Lua script INCRs `fence:<key>` for the token.
    Redis,
    /// An etcd lease plus a create-if-absent transaction; the revision is the token
    /// (`TokenSource::LockService`).
    Etcd,
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
        match (&sc.row_lock, &sc.redlock, sc.token_source) {
            (Some(_), _, _) => Self::RowLock,
            (None, Some(_), _) => Self::Redlock,
            (None, None, TokenSource::LockService) => Self::Etcd,
            (
                None,
                None,
                TokenSource::SameRedis
                | TokenSource::Counterfactual
                | TokenSource::SeparateCounter
                | TokenSource::RandomValue,
            ) => Self::Redis,
        }
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
    pub fn new(granted: bool, token: Option<u64>, nodes: Vec<usize>, how: String) -> Self {
        Self {
            granted,
            token,
            nodes,
            how,
        }
    }
}

/// One client's connection to a lock service. `value` is what the client stores as the
/// lock's value and checks ownership with (its name, or its random value); `px` the lease's
/// real time to live in ms. A command a service has no equivalent of is an error.
pub trait Lock: Send {
    fn acquire(&mut self, _key: &str, _value: &str, _px: u64) -> Result<Answer, String> {
        Err("this lock is taken by a statement, not a command".to_owned())
    }
    /// The lock key's current value.
    fn value(&mut self, _key: &str) -> Result<Option<String>, String> {
        Err("this lock has no lock key".to_owned())
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
pub struct RowOnly;

impl Lock for RowOnly {}
