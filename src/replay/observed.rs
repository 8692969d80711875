//! What one run observed, shared by its threads: the clients' and the harness's observations
//! (the recorded trace is folded from them), the tokens granted and the lines of evidence.
//! A leaf: every other replay file may write here, and it imports none of them.

use std::sync::{Mutex, MutexGuard};

use fencing_lab::core::{EventKind, Fence, Lease, Millis, Observation};

/// What one run observed besides the storage's own tables.
#[derive(Debug, Default)]
pub struct Observed {
    /// Tokens granted, in grant order.
    pub tokens: Vec<u64>,
    /// Lines of evidence: failover, clock step, lease expiry seen on etcd, …
    pub notes: Vec<String>,
    /// Worst lateness of any action against its target time (real ms).
    pub max_late_ms: f64,
    /// What the clients saw and the harness did, in the order it happened: the recorded
    /// trace is folded from these ([`fencing_lab::core::recorded`]).
    pub events: Vec<Observation>,
    /// Row lock: until when the transaction that holds the row holds it (its idle timeout's
    /// end, or its COMMIT).
    pub row: Option<Millis>,
}

impl Observed {
    pub fn saw(&mut self, at: Millis, actor: Option<usize>, kind: EventKind) {
        self.events.push(Observation {
            at,
            actor,
            kind,
            request: None,
        });
    }
}

pub type Shared = Mutex<Observed>;

/// What the run has observed so far, for one change (a thread that panicked holding it left
/// nothing half-written that matters here).
pub fn observe(shared: &Shared) -> MutexGuard<'_, Observed> {
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

/// A failover as the harness made it: the owners of the live keys the promoted replica
/// lacked (their leases' tokens and expiries are the fold's to fill in).
pub fn failover(next: u64, lost: Vec<String>) -> EventKind {
    let (fence, expires_at) = (Fence(0), 0);
    let lost = lost.into_iter().map(|owner| Lease {
        owner,
        fence,
        expires_at,
    });
    let (next_fence, rolled_back) = (Fence(next), false);
    EventKind::Failover {
        lost: lost.collect(),
        next_fence,
        rolled_back,
    }
}
