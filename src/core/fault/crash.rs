//! The lock server crashing ([`Fault::Failover`]: a replica promoted; [`Fault::Restart`]: the
//! one Redis back from its snapshot). Both come back with what was written at least `lag` ms
//! before, so they share a model; the engine and the words tell them apart.

use super::{Bound, Fault, FaultKind, Millis, Model, Moment};

pub(super) fn model(kind: FaultKind, at: Millis, lag: Option<Millis>) -> Model {
    Model {
        kind,
        moment: Moment::AfterExpiry,
        bounds: vec![
            Bound {
                what: "failover_at",
                value: at,
                min: 0,
            },
            Bound {
                what: "replication_lag",
                value: lag.unwrap_or(0),
                min: 0,
            },
        ],
        once: Some("the lock server fails over or restarts once"),
    }
}

impl Fault {
    /// The replica's lag of a failover or a restart.
    pub fn lag(&self) -> Option<Millis> {
        match self {
            Fault::Failover { lag } | Fault::Restart { lag } => *lag,
            _ => None,
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

    /// Whether the lock server goes down (a failover or a restart).
    pub fn is_crash(&self) -> bool {
        matches!(self, Fault::Failover { .. } | Fault::Restart { .. })
    }
}
