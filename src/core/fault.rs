//! Faults as data (turmoil's way): what goes wrong in the world, and when, as one list the
//! engine and the replay both read. A fault here is the world's, not a client's: a client's
//! own stall is a [`Pause`](super::scenario::Pause) in its script.

mod shape;
pub use shape::{shape_named, Field, Shape, Target, Value, ValueKind, SHAPES};

use serde::{Deserialize, Serialize};

use super::clock::Millis;

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

impl Fault {
    /// The replica's lag of a failover or a restart.
    pub fn lag(&self) -> Option<Millis> {
        match self {
            Fault::Failover { lag } | Fault::Restart { lag } => *lag,
            Fault::Partition { .. } | Fault::ClockJump { .. } | Fault::StorageFailover { .. } => {
                None
            }
        }
    }

    /// The same failover or restart with the replica's lag `lag`.
    pub fn with_lag(self, lag: Option<Millis>) -> Self {
        match self {
            Fault::Failover { .. } => Fault::Failover { lag },
            Fault::Restart { .. } => Fault::Restart { lag },
            other => other,
        }
    }

    /// Whether this partition cuts a client's lock-service member off (a minority of one),
    /// not the client itself.
    pub fn minority(&self) -> bool {
        matches!(
            self,
            Fault::Partition {
                a: Node::MemberOf(_),
                ..
            } | Fault::Partition {
                b: Node::MemberOf(_),
                ..
            }
        )
    }

    /// Whether the lock server goes down (a failover or a restart).
    pub fn is_crash(&self) -> bool {
        matches!(self, Fault::Failover { .. } | Fault::Restart { .. })
    }
}

impl FaultAt {
    /// `node` cut off from the lock service from `at` until `until`.
    pub fn cut_from_lock(node: Node, at: Millis, until: Millis) -> Self {
        let (a, b) = (node, Node::LockService);
        FaultAt {
            at,
            fault: Fault::Partition { a, b, until },
        }
    }

    /// The partition's window `[at, until)`, if this is a partition that cuts `x` off from
    /// `y` (in either order).
    pub fn cuts(&self, x: Node, y: Node) -> Option<(Millis, Millis)> {
        match self.fault {
            Fault::Partition { a, b, until } if (a, b) == (x, y) || (a, b) == (y, x) => {
                Some((self.at, until))
            }
            _ => None,
        }
    }
}

/// Whether client `me` reaches the lock service at `now`: neither it nor the member it talks
/// to is cut off from the lock service.
pub fn can_reach(faults: &[FaultAt], me: usize, now: Millis) -> bool {
    !faults.iter().any(|f| {
        [Node::Client(me), Node::MemberOf(me)]
            .into_iter()
            .filter_map(|n| f.cuts(n, Node::LockService))
            .any(|(start, end)| start <= now && now < end)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A partition cuts only its own client, only inside its window, and a member cut off
    /// from the majority cuts the client pinned to it.
    #[test]
    fn a_client_reaches_the_lock_service_unless_a_partition_cuts_it() {
        let cut = |a: Node| FaultAt {
            at: 10,
            fault: Fault::Partition {
                a,
                b: Node::LockService,
                until: 40,
            },
        };
        let faults = [cut(Node::Client(0))];
        assert!(can_reach(&faults, 0, 9) && can_reach(&faults, 0, 40));
        assert!(!can_reach(&faults, 0, 10) && !can_reach(&faults, 0, 39));
        assert!(can_reach(&faults, 1, 20), "another client");
        let minority = [cut(Node::MemberOf(1))];
        assert!(!can_reach(&minority, 1, 20) && can_reach(&minority, 0, 20));
        let jump = [FaultAt {
            at: 10,
            fault: Fault::ClockJump { node: 0, by: 25 },
        }];
        assert!(can_reach(&jump, 0, 20), "a clock jump cuts no one off");
    }
}
