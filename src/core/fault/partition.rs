//! A partition ([`Fault::Partition`]): from its time until `until`, nothing sent between two
//! nodes arrives. Not an event: a window a client asks about ([`can_reach`]) before it sends.

use super::shape::{ms, node, Field, Range, Shape, Target, Value, ValueKind};
use super::{Fault, FaultAt, FaultKind, Millis, Moment, Node, MAX_TIME};

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

const PARTITION: &[Field] = &[
    Field {
        name: "until",
        label: "until",
        kind: ValueKind::Moment,
        // After `at` too: the scenario's own rule, with its own words.
        range: Some(Range {
            what: "partition end",
            least: 0,
            most: MAX_TIME,
        }),
        get: |f| match *f {
            Fault::Partition { until, .. } => Value::Ms(until),
            _ => Value::Ms(0),
        },
        set: |f, v| match f {
            Fault::Partition { a, b, .. } => Some(Fault::Partition {
                a,
                b,
                until: ms(v)?,
            }),
            _ => None,
        },
    },
    Field {
        name: "a",
        label: "cuts off",
        kind: ValueKind::Node,
        range: None,
        get: |f| match *f {
            Fault::Partition { a, .. } => Value::Node(a),
            _ => Value::Node(Node::LockService),
        },
        set: |f, v| match f {
            Fault::Partition { b, until, .. } => Some(Fault::Partition {
                a: node(v)?,
                b,
                until,
            }),
            _ => None,
        },
    },
    Field {
        name: "b",
        label: "from",
        kind: ValueKind::Node,
        range: None,
        get: |f| match *f {
            Fault::Partition { b, .. } => Value::Node(b),
            _ => Value::Node(Node::LockService),
        },
        set: |f, v| match f {
            Fault::Partition { a, until, .. } => Some(Fault::Partition {
                a,
                b: node(v)?,
                until,
            }),
            _ => None,
        },
    },
];

/// Its row of the kinds' table.
pub(super) const SHAPE: Shape = Shape {
    code: "partition",
    words: "Network partition",
    target: Target::LockLink,
    at: Range {
        what: "partition start",
        least: 0,
        most: MAX_TIME,
    },
    fields: PARTITION,
    kind: FaultKind::Partition,
    moment: Moment::Window,
    once: Some("one client is cut off at a time"),
    fresh: |h| FaultAt::cut_from_lock(Node::Client(0), h / 4, h / 2),
};

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
