//! The lock server crashing ([`Fault::Failover`]: a replica promoted; [`Fault::Restart`]: the
//! one Redis back from its snapshot). Both come back with what was written at least `lag` ms
//! before, so they share their ranges and their rule; the engine and the words tell them
//! apart.

use super::shape::{lag, Field, Range, Shape, Target, Value, ValueKind};
use super::{Fault, FaultAt, FaultKind, Millis, Moment, MAX_TIME};

/// When the lock server goes down: any time the scenario holds.
const AT: Range = Range {
    what: "failover_at",
    least: 0,
    most: MAX_TIME,
};

/// Its one rule: a run's lock server goes down at most once.
const ONCE: Option<&str> = Some("the lock server fails over or restarts once");

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

/// A failover's or a restart's lag: the one field both have ([`Fault::lag`]).
const fn lag_field(label: &'static str) -> Field {
    Field {
        name: "lag",
        label,
        kind: ValueKind::MsOrCut,
        range: Some(Range {
            what: "replication_lag",
            least: 0,
            most: MAX_TIME,
        }),
        get: |f| Value::Lag(f.lag()),
        set: |f, v| f.is_crash().then_some(f.with_lag(lag(v)?)),
    }
}

const FAILOVER_FIELDS: &[Field] = &[lag_field("replica lag")];
const RESTART_FIELDS: &[Field] = &[lag_field("snapshot age")];

/// A failover's row of the kinds' table.
pub(super) const FAILOVER: Shape = Shape {
    code: "failover",
    words: "Lock failover",
    target: Target::LockPrimary,
    at: AT,
    fields: FAILOVER_FIELDS,
    kind: FaultKind::Failover,
    moment: Moment::AfterExpiry,
    once: ONCE,
    fresh: |h| FaultAt {
        at: h / 2,
        fault: Fault::Failover { lag: None },
    },
};

/// A restart's row of the kinds' table.
pub(super) const RESTART: Shape = Shape {
    code: "restart",
    words: "Lock restart",
    target: Target::OneRedis,
    at: AT,
    fields: RESTART_FIELDS,
    kind: FaultKind::Restart,
    moment: Moment::AfterExpiry,
    once: ONCE,
    fresh: |h| FaultAt {
        at: h / 2,
        fault: Fault::Restart { lag: None },
    },
};
