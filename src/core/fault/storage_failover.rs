//! Storage's PostgreSQL primary dying and its asynchronous standby promoted
//! ([`Fault::StorageFailover`]): storage goes back to the writes at least `lag` ms old.

use super::{Bound, FaultKind, Millis, Model, Moment};

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
