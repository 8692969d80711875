//! The words of each kind of fault, one file per kind: its narration, its Say lines, its
//! marker's label and what it adds to a run's outcome. The matches here are the one place
//! that routes a kind to its file; they are exhaustive over [`FaultKind`], so a new kind
//! does not compile until it has words. The event of a fault that struck says its kind
//! ([`EventKind::struck`]); a partition strikes none, and its clients' events are worded by
//! [`partition`].

use super::*;
use crate::core::fault::{Fault, FaultKind};

mod clock_jump;
mod failover;
pub(super) mod partition;
mod restart;
mod storage_failover;

pub(super) use storage_failover::forgotten;

/// The narration of the fault that struck at `c`'s event.
pub(super) fn narrate(c: &Ctx) -> Option<String> {
    match c.e.kind.struck(c.sc)? {
        FaultKind::ClockJump => clock_jump::narrate(c),
        FaultKind::Failover => failover::narrate(c),
        FaultKind::Restart => restart::narrate(c),
        FaultKind::StorageFailover => storage_failover::narrate(c),
        FaultKind::Partition => partition::narrate(c),
    }
}

/// The Say line of the fault that struck at `c`'s event.
pub(super) fn say(c: &Ctx) -> Option<String> {
    match c.e.kind.struck(c.sc)? {
        FaultKind::ClockJump => clock_jump::say(c),
        FaultKind::Failover => failover::say(c),
        FaultKind::Restart => restart::say(c),
        FaultKind::StorageFailover => storage_failover::say(c),
        FaultKind::Partition => partition::say(c),
    }
}

/// The marker's label of a fault that struck at `e`, if `e` is one's event.
pub(super) fn label(sc: &Scenario, e: &TraceEvent) -> Option<String> {
    let label = match e.kind.struck(sc)? {
        FaultKind::ClockJump => clock_jump::label,
        FaultKind::Failover => failover::label,
        FaultKind::Restart => restart::label,
        FaultKind::StorageFailover => storage_failover::label,
        // A partition strikes no event of its own.
        FaultKind::Partition => return None,
    };
    Some(label(sc, e))
}

/// The outcome's name for a job that ran twice, where a fault that struck in `t` is why.
pub(super) fn twice(t: &Trace) -> Option<&'static str> {
    t.events
        .iter()
        .find_map(|e| match e.kind.struck(&t.scenario)? {
            FaultKind::StorageFailover => storage_failover::twice(e),
            FaultKind::ClockJump
            | FaultKind::Failover
            | FaultKind::Restart
            | FaultKind::Partition => None,
        })
}

/// Whether a run has a fault of the lock server that takes seconds in life (a Sentinel
/// failover, a restart): a Redis run with one needs the scale clause too, though `PX`
/// counts in ms.
pub(super) fn in_seconds(sc: &Scenario) -> bool {
    // The fault itself, not its model: the setup's path stays small.
    sc.faults.iter().any(|f| match f.fault {
        Fault::Failover { .. } | Fault::Restart { .. } => true,
        Fault::ClockJump { .. } | Fault::StorageFailover { .. } | Fault::Partition { .. } => false,
    })
}
