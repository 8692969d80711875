//! What one run observed, shared by its threads: the clients' and the harness's observations
//! (the recorded trace is folded from them), the tokens granted and the lines of evidence.
//! A leaf: every other replay file may write here, and it imports none of them.

use std::sync::{Mutex, MutexGuard};

use fencing_lab::core::{Fence, Millis, Observation, Seen};

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
    /// What `actor` (or, with `None`, the harness) saw at `at`: an event as far as it can be
    /// seen (an `EventKind` goes in without the fields the fold derives).
    pub fn saw(&mut self, at: Millis, actor: Option<usize>, seen: impl Into<Seen>) {
        self.events.push(Observation {
            at,
            actor,
            seen: seen.into(),
            request: None,
            grant: None,
            believes: None,
        });
    }

    /// What client `actor` saw at `at`, and whether it believed right after that it held
    /// the lock (its own state's answer: the fold takes it, rather than working it out).
    pub fn saw_believing(&mut self, at: Millis, actor: usize, seen: impl Into<Seen>, b: bool) {
        self.saw(at, Some(actor), seen);
        if let Some(o) = self.events.last_mut() {
            o.believes = Some(b);
        }
    }
}

pub type Shared = Mutex<Observed>;

/// What the run has observed so far, for one change (a thread that panicked holding it left
/// nothing half-written that matters here).
pub fn observe(shared: &Shared) -> MutexGuard<'_, Observed> {
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

/// A failover as the harness made it: the token the lock mints next, and the owners of the
/// live keys the promoted replica lacked (their leases are the fold's).
pub fn failover(next: u64, lost: Vec<String>) -> Seen {
    let next_fence = Fence(next);
    Seen::Failover { lost, next_fence }
}
