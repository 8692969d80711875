//! A partition ([`Fault::Partition`]): from its time until `until`, nothing sent between two
//! nodes arrives. Not an event: a window a client asks about ([`can_reach`]) before it sends.

use serde::{Deserialize, Serialize};

use super::{Bound, Fault, FaultAt, FaultKind, Millis, Model, Moment};

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

pub(super) fn model(at: Millis, until: Millis) -> Model {
    Model {
        kind: FaultKind::Partition,
        moment: Moment::Window,
        bounds: vec![
            Bound {
                what: "partition start",
                value: at,
                min: 0,
            },
            Bound {
                what: "partition end",
                value: until,
                min: 0,
            },
        ],
        once: Some("one client is cut off at a time"),
    }
}

impl Fault {
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
