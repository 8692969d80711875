//! Storage's PostgreSQL primary dying and its asynchronous standby promoted
//! ([`Fault::StorageFailover`]): storage goes back to the writes at least `lag` ms old.

use super::shape::{ms, Field, Shape, Target, Value, ValueKind};
use super::{Bound, Fault, FaultAt, FaultKind, Millis, Model, Moment};

pub(super) fn model(at: Millis, lag: Millis) -> Model {
    Model {
        kind: FaultKind::StorageFailover,
        moment: Moment::AfterExpiry,
        bounds: vec![
            Bound {
                what: "storage failover at",
                value: at,
                min: 0,
            },
            Bound {
                what: "standby lag",
                value: lag,
                min: 0,
            },
        ],
        once: Some("storage fails over once"),
    }
}

const STORAGE: &[Field] = &[Field {
    name: "lag",
    label: "lag",
    kind: ValueKind::Ms,
    get: |f| match *f {
        Fault::StorageFailover { lag } => Value::Ms(lag),
        _ => Value::Ms(0),
    },
    set: |f, v| match f {
        Fault::StorageFailover { .. } => Some(Fault::StorageFailover { lag: ms(v)? }),
        _ => None,
    },
}];

/// Its row of the kinds' table.
pub(super) const SHAPE: Shape = Shape {
    code: "storage",
    words: "Storage failover",
    target: Target::Storage,
    fields: STORAGE,
    kind: FaultKind::StorageFailover,
    fresh: |h| FaultAt {
        at: h / 2,
        fault: Fault::StorageFailover { lag: 10 },
    },
};
