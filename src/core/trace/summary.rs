//! A run's verdicts and, for a recorded one, where it was made.

use serde::{Deserialize, Serialize};

use super::super::lease::Fence;

/// What a run amounts to: the verdicts [`super::super::audit`] reads off the events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub final_balance: i64,
    pub accepted_writes: usize,
    pub rejected_writes: usize,
    /// Accepted writes whose token was already superseded: a newer token had been granted
    /// before the write reached storage (its lease had expired, been lost or released).
    /// Fencing by highest-seen token can still let these through, before storage has seen
    /// the newer token.
    pub late_writes_accepted: usize,
    /// Accepted writes with a lower token than one storage had already accepted. A fencing
    /// policy refuses these by its rule, so this is informative only with fencing off.
    pub out_of_order_writes: usize,
    /// Writes of one job landed from two lock generations: the job ran twice.
    #[serde(default)]
    pub duplicate_runs: usize,
    /// Most actors that believed at once that they held the lease.
    pub max_believers: usize,
    pub last_fence: Option<Fence>,
    pub last_write_fence: Option<Fence>,
    /// Most leases live at once: granted and neither expired, released nor deleted, counting
    /// those a failed primary lost. Above 1 only after a failover: two holders according to
    /// the lock service itself, not just two believers.
    #[serde(default)]
    pub max_live_leases: usize,
    /// Side effects (calls that carry no token) made by an actor without a live lease.
    #[serde(default)]
    pub unprotected_side_effects: usize,
    /// Side effects made in all, protected or not.
    #[serde(default)]
    pub side_effects: usize,
    /// Accepted publishes, after the job's first, that rewrote the value already in the
    /// result row: a second run that wasted work but changed nothing.
    #[serde(default)]
    pub harmless_reruns: usize,
    /// Provider calls that charged (a new idempotency key).
    #[serde(default)]
    pub provider_charges: usize,
    /// Provider calls the provider answered from an idempotency key already used.
    #[serde(default)]
    pub provider_deduped: usize,
}

impl Summary {
    /// The lock service itself granted the same lock to two clients at once.
    pub fn two_holders(&self) -> bool {
        self.max_live_leases > 1
    }

    /// Two clients believed they held the lock at the same time.
    pub fn conflict(&self) -> bool {
        self.max_believers > 1
    }
}

/// Where and how a recorded trace was made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recording {
    /// The servers and their versions, e.g. "Redis 7.0.15", "PostgreSQL 15.18".
    pub systems: Vec<String>,
    /// How scenario time was stretched, e.g. "1 scenario ms = 20 real ms".
    pub timing: String,
    /// What the harness saw besides the events (a failover, a clock step, a PTTL).
    #[serde(default)]
    pub notes: Vec<String>,
}

impl Recording {
    /// "Redis 7.0.15 · PostgreSQL 15.18": the label the page shows on a recorded timeline.
    pub fn label(&self) -> String {
        format!("recorded on {}", self.systems.join(" · "))
    }
}
