//! Faults as data (turmoil's way): what goes wrong in the world, and when, as one list the
//! engine and the replay both read. A fault here is the world's, not a client's: a client's
//! own stall is a [`Pause`](super::scenario::Pause) in its script.
//!
//! [`Fault`] is the list of kinds; each kind's model is its own file here, as its row of the
//! kinds' table [`SHAPES`] (when it strikes among the world's events, its values and their
//! ranges, how many a run may have) and its helpers, reached through [`Fault::shape`] from
//! [`Fault::kind`], this module's one match over the kinds. What a kind does to the world
//! is the engine's (`engine/strike.rs`), and its words are the story's (`story/fault/`):
//! both sit after the lock, the storage and the trace on the modules' line.

mod shape;
pub use shape::{shape_named, Field, Range, Shape, Slot, Target, Value, ValueKind};

use serde::{Deserialize, Serialize};

use super::clock::{Millis, MAX_TIME};

mod clock_jump;
mod crash;
mod partition;
mod storage_failover;

pub use partition::can_reach;

/// Every kind of fault, each row from its kind's file, in the order the What if… "Add
/// fault" lists them.
pub static SHAPES: [Shape; 5] = [
    crash::FAILOVER,
    crash::RESTART,
    partition::SHAPE,
    clock_jump::SHAPE,
    storage_failover::SHAPE,
];

/// A machine a partition can cut: a client, the lock service, or the lock-service member a
/// client's connection goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Node {
    /// Client `i` (its index in `Scenario::actors`).
    Client(usize),
    /// The lock service as a whole (one server, or the majority of a cluster).
    LockService,
    /// The member of a 3-member Raft cluster that client `i` talks to (the replay pins that
    /// client's connection to it). Cut off from [`Node::LockService`], it is a minority of
    /// one: it can commit nothing, so it answers the client nothing.
    MemberOf(usize),
}

/// One thing that goes wrong in the world.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    /// From the fault's time until `until`, nothing sent between `a` and `b` arrives: a lock
    /// command is dropped (never executed, no reply), and the client learns only at its own
    /// lock timeout. Dropped, not delayed: over TCP the kernel would retransmit after the heal.
    Partition { a: Node, b: Node, until: Millis },
    /// The lock server's primary crashes and a replica is promoted. With tokens from the same
    /// Redis, the replica has every write made at least `lag` ms before (`None`: replication
    /// was cut before the run, so it has none of the run's); a linearizable lock service's new
    /// leader has them all.
    Failover { lag: Option<Millis> },
    /// The lock's one Redis is killed (kill -9) and restarts from its last snapshot (no AOF,
    /// or `appendfsync everysec` after a power loss): it keeps what was written at least
    /// `lag` ms before (`None`: the snapshot was taken before the run).
    Restart { lag: Option<Millis> },
    /// Lock node `node`'s clock steps forward `by` ms (an NTP step, an operator's fix): every
    /// TTL it is counting down loses `by` ms of real time. `node` is a Redlock node's index;
    /// a single lock server is node 0.
    ClockJump { node: usize, by: Millis },
    /// Storage's primary (PostgreSQL with an asynchronous streaming standby) dies and the
    /// standby is promoted. The standby has replayed every write committed at least `lag` ms
    /// before; newer ones, acknowledged to their writers, are gone, and with them the
    /// high-water mark they raised. `lag` 0 is synchronous commit: the standby has them all.
    StorageFailover { lag: Millis },
}

/// A fault and when it happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultAt {
    pub at: Millis,
    pub fault: Fault,
}

/// A fault's kind, without its values: what the words route on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FaultKind {
    Partition,
    Failover,
    Restart,
    ClockJump,
    StorageFailover,
}

/// Where a fault falls among the world's events at its instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moment {
    /// Before the leases ending at that instant: a clock step can end one on the spot.
    BeforeExpiry,
    /// After them (so a lease ending then is recorded), before anyone acts: a crash.
    AfterExpiry,
    /// Never as an event: a window the clients ask about ([`can_reach`]).
    Window,
}

impl Fault {
    /// This fault's kind: the one match over the kinds. Everything else a kind declares
    /// (when it strikes, its values' ranges, how many a run may have) is its row of
    /// [`SHAPES`] ([`Fault::shape`]).
    pub fn kind(&self) -> FaultKind {
        match self {
            Fault::Partition { .. } => FaultKind::Partition,
            Fault::Failover { .. } => FaultKind::Failover,
            Fault::Restart { .. } => FaultKind::Restart,
            Fault::ClockJump { .. } => FaultKind::ClockJump,
            Fault::StorageFailover { .. } => FaultKind::StorageFailover,
        }
    }

    /// Where this fault falls among the world's events at its instant.
    pub fn moment(&self) -> Moment {
        self.shape().moment
    }
}
