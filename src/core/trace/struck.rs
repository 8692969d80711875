//! The fault events among the trace's events: which ones they are, and which kind of fault
//! each is the strike of.

use super::super::fault::FaultKind;
use super::super::scenario::Scenario;
use super::EventKind;

/// The pattern of every fault's own event: the one list of them, so that the places that
/// treat them alike (the story's topic and labels, the timeline's marker) match this instead
/// of naming each kind; a new fault event is added here as well. [`EventKind::struck`]
/// says which kind of fault struck.
macro_rules! fault_event {
    () => {
        $crate::core::EventKind::LockClockJumped { .. }
            | $crate::core::EventKind::Failover { .. }
            | $crate::core::EventKind::StorageFailover { .. }
    };
}
pub(crate) use fault_event;

impl EventKind {
    /// The kind of fault this event is the strike of, if it is a fault's own event
    /// ([`fault_event`]). A restart records a failover's event: the scenario's crash tells
    /// them apart.
    pub fn struck(&self, sc: &Scenario) -> Option<FaultKind> {
        match self {
            EventKind::LockClockJumped { .. } => Some(FaultKind::ClockJump),
            EventKind::Failover { .. } => {
                Some(sc.crash().map_or(FaultKind::Failover, |(_, f)| f.kind()))
            }
            EventKind::StorageFailover { .. } => Some(FaultKind::StorageFailover),
            _ => None,
        }
    }
}
