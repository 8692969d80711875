//! A lock node's clock stepping forward ([`Fault::ClockJump`]): every TTL it counts down
//! loses the jump. It strikes before the expiries at its instant, since it can end a lease
//! on the spot. Every jump of a run steps the same node (the scenario checks which).

use super::shape::{ms, Field, Shape, Target, Value, ValueKind};
use super::{Bound, Fault, FaultAt, FaultKind, Millis, Model, Moment};

pub(super) fn model(at: Millis, by: Millis) -> Model {
    Model {
        kind: FaultKind::ClockJump,
        moment: Moment::BeforeExpiry,
        bounds: vec![
            Bound {
                what: "clock jump at",
                value: at,
                min: 0,
            },
            Bound {
                what: "clock jump by",
                value: by,
                min: 1,
            },
        ],
        once: None,
    }
}

const CLOCK: &[Field] = &[
    Field {
        name: "node",
        label: "node",
        kind: ValueKind::LockNode,
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
        kind: ValueKind::PositiveMs,
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
    fields: CLOCK,
    kind: FaultKind::ClockJump,
    fresh: |h| FaultAt {
        at: h / 2,
        fault: Fault::ClockJump {
            node: 0,
            by: (h / 4).max(1),
        },
    },
};
