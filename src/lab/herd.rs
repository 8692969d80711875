//! The renewal herd shown beside the renewal scenario.

use std::sync::Arc;

use crate::core::{deck, renewal_herd, HerdReport, Millis, Scenario};

/// Many holders renewing on one fixed schedule hit the lock server in bursts; jitter
/// spreads them. Both are real runs of the core's herd simulation.
#[derive(Debug, Clone, PartialEq)]
pub struct Herd {
    pub holders: usize,
    pub ttl: Millis,
    pub seed: u64,
    pub fixed: HerdReport,
    pub jittered: HerdReport,
}

impl Herd {
    pub const HOLDERS: usize = 1_000;

    /// The herd shown beside `sc` (the renewal entries only: 1,000 holders beside `renewal`,
    /// the entry's own 10,000 beside `renewal-herd`), reusing `old` when the TTL and seed are
    /// the same, so a drag does not rerun it.
    pub(super) fn beside(sc: &Scenario, old: Option<&Arc<Herd>>) -> Option<Arc<Herd>> {
        let holders = match sc.id.as_str() {
            "renewal" => Self::HOLDERS,
            "renewal-herd" => deck::HERD_HOLDERS,
            _ => return None,
        };
        if let Some(h) =
            old.filter(|h| h.holders == holders && h.ttl == sc.lease_ttl && h.seed == sc.seed)
        {
            return Some(Arc::clone(h));
        }
        let horizon = deck::herd_horizon(sc.lease_ttl);
        Some(Arc::new(Herd {
            holders,
            ttl: sc.lease_ttl,
            seed: sc.seed,
            fixed: renewal_herd(holders, sc.lease_ttl, false, sc.seed, horizon),
            jittered: renewal_herd(holders, sc.lease_ttl, true, sc.seed, horizon),
        }))
    }

    pub fn caption(&self) -> String {
        format!(
            "{} holders renewing every third of a {} ms TTL: the fixed schedule peaks at {} renewals per {} ms, jitter at {}.",
            self.holders,
            self.ttl,
            self.fixed.peak_per_bucket(),
            self.fixed.bucket_ms,
            self.jittered.peak_per_bucket()
        )
    }
}
