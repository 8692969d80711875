//! A [`Voice`] per lock kind: each backend's own wording (its commands, what the lock's value
//! is, what an extend or a release compares), so a phrase asks the voice instead of testing
//! `redlock`, `token_source` and `lock_delay` to choose its words. Where the tokens come from
//! is another axis (`TokenSource`), worded where tokens are named.

use super::super::scenario::LockKind;
use super::*;

/// Which lock grants the lease, as the words name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Voice {
    /// One Redis: `SET key value NX PX ttl`, Lua scripts that compare the value.
    Redis,
    /// Redlock: the same SET on a majority of independent Redis nodes.
    Redlock,
    /// A consensus lock service (etcd, ZooKeeper): a lease and a create-if-absent
    /// transaction; the token is the lock key's revision.
    LockService,
    /// Chubby: a lock service that hands out sequencers and holds a lapsed lock for a
    /// lock-delay.
    Chubby,
    /// A PostgreSQL row lock (`SELECT … FOR UPDATE`); its sentences are in `row`.
    RowLock,
}

impl Voice {
    pub fn of(sc: &Scenario) -> Self {
        match &sc.lock {
            LockKind::Row(_) => Voice::RowLock,
            LockKind::Redlock(_) => Voice::Redlock,
            LockKind::Service(o) if o.lock_delay > 0 => Voice::Chubby,
            LockKind::Service(_) => Voice::LockService,
            LockKind::Redis { .. } => Voice::Redis,
        }
    }

    /// Whether a lock service (not Redis) holds the lock: it checks ownership itself, by
    /// lease, instead of a script comparing a random value.
    pub fn is_service(self) -> bool {
        matches!(self, Voice::LockService | Voice::Chubby)
    }

    /// An acquire's answer while another's lease is live.
    pub fn held_answer(self) -> &'static str {
        match self {
            Voice::LockService => "the lock key exists (lock_held)",
            Voice::Chubby => "refused (lock_held)",
            Voice::Redis | Voice::Redlock | Voice::RowLock => "SET NX answers nil (lock_held)",
        }
    }

    /// How a refused client tries again, in brackets after its retry: etcd's Mutex and
    /// ZooKeeper's recipe wait on a watch of the key before their own, where the model polls.
    pub fn retry_note(self) -> &'static str {
        if self == Voice::LockService {
            "the model polls; etcd and ZooKeeper locks wait on a watch"
        } else {
            "randomised in a real client"
        }
    }

    /// The Say line for a refused acquire while a lease is live.
    pub fn refuses_others(self) -> &'static str {
        match self {
            Voice::Redlock => "Without a majority there is no lock: Redlock deletes the keys it did get and tries again.",
            Voice::LockService => "While the lock key exists, the create-if-absent transaction fails for everyone else.",
            Voice::Chubby => "While a lease is live, the lock service refuses everyone else.",
            Voice::Redis | Voice::RowLock => "While a lease is live, NX refuses everyone else.",
        }
    }

    /// What an extend compares, after "until t=…: ".
    pub fn extend_checks(self) -> &'static str {
        if self.is_service() {
            "the lock service checks the lease is still its own"
        } else {
            "one script compares the value and runs PEXPIRE"
        }
    }

    /// The Say line for a checked release that deleted its own lock. A lock service's words
    /// name the lock, not a key: Chubby releases through a handle.
    pub fn own_release(self) -> &'static str {
        if self.is_service() {
            "The release checks the lock is still this client's, so a late release cannot free a successor's lock."
        } else {
            "Compare-and-delete in one script deletes only your own lease."
        }
    }

    /// The Say line for a lock service's checked release that found the lock not its own
    /// (Redis's depends on what its script found, and is worded there).
    pub fn service_noop(self) -> &'static str {
        "The checked release saw the lock is not this client's any more and freed nothing."
    }

    /// The Say line for a clock jump that shortened a live lease.
    pub fn clock_jump(self) -> &'static str {
        match self {
            Voice::Redlock => "Redlock's safety assumes every node's clock runs at about the right rate. One node's NTP step breaks that, and no client can tell.",
            _ => "Lease expiry trusts the lock node's clock. A clock step shortens the lease, and the holder cannot tell.",
        }
    }

    /// The Say line for a lease a clock jump ended early.
    pub fn ended_by_jump(self) -> &'static str {
        match self {
            Voice::Redlock => "The jumped node counts in both majorities: once its key expires early, a second client can gather a majority while the first still believes.",
            _ => "Lease expiry trusts the lock node's clock: a forward step ended this lease early, and the holder cannot tell.",
        }
    }
}
