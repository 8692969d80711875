//! Storage's PostgreSQL primary dying and its asynchronous standby promoted
//! ([`Fault::StorageFailover`]): storage goes back to the writes at least `lag` ms old.

use super::shape::{ms, Field, Range, Shape, Target, Value, ValueKind};
use super::{Fault, FaultAt, FaultKind, Moment, MAX_TIME};

const STORAGE: &[Field] = &[Field {
    name: "lag",
    label: "lag",
    kind: ValueKind::Ms,
    range: Some(Range {
        what: "standby lag",
        least: 0,
        most: MAX_TIME,
    }),
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
    at: Range {
        what: "storage failover at",
        least: 0,
        most: MAX_TIME,
    },
    fields: STORAGE,
    kind: FaultKind::StorageFailover,
    moment: Moment::AfterExpiry,
    once: Some("storage fails over once"),
    fresh: |h| FaultAt {
        at: h / 2,
        fault: Fault::StorageFailover { lag: 10 },
    },
};
