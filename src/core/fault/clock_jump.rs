//! A lock node's clock stepping forward ([`Fault::ClockJump`]): every TTL it counts down
//! loses the jump. It strikes before the expiries at its instant, since it can end a lease
//! on the spot. Every jump of a run steps the same node (the scenario checks which).

use super::shape::{ms, Field, Range, Shape, Target, Value, ValueKind};
use super::{Fault, FaultAt, FaultKind, Moment, MAX_TIME};

const CLOCK: &[Field] = &[
    Field {
        name: "node",
        label: "node",
        kind: ValueKind::LockNode,
        range: None,
        get: |f| match *f {
            Fault::ClockJump { node, .. } => Value::Index(node),
            _ => Value::Index(0),
        },
        set: |f, v| match (f, v) {
            (Fault::ClockJump { by, .. }, Value::Index(node)) => {
                Some(Fault::ClockJump { node, by })
            }
            _ => None,
        },
    },
    Field {
        name: "by",
        label: "by",
        kind: ValueKind::Ms,
        // A step of 0 ms is none.
        range: Some(Range {
            what: "clock jump by",
            least: 1,
            most: MAX_TIME,
        }),
        get: |f| match *f {
            Fault::ClockJump { by, .. } => Value::Ms(by),
            _ => Value::Ms(0),
        },
        set: |f, v| match f {
            Fault::ClockJump { node, .. } => Some(Fault::ClockJump { node, by: ms(v)? }),
            _ => None,
        },
    },
];

/// Its row of the kinds' table.
pub(super) const SHAPE: Shape = Shape {
    code: "clock",
    words: "Lock clock jump",
    target: Target::LockClock,
    at: Range {
        what: "clock jump at",
        least: 0,
        most: MAX_TIME,
    },
    fields: CLOCK,
    kind: FaultKind::ClockJump,
    moment: Moment::BeforeExpiry,
    once: None,
    fresh: |h| FaultAt {
        at: h / 2,
        fault: Fault::ClockJump {
            node: 0,
            by: (h / 4).max(1),
        },
    },
};
