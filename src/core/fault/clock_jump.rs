//! A lock node's clock stepping forward ([`Fault::ClockJump`]): every TTL it counts down
//! loses the jump. It strikes before the expiries at its instant, since it can end a lease
//! on the spot. Every jump of a run steps the same node (the scenario checks which).

use super::{Bound, FaultKind, Millis, Model, Moment};

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
