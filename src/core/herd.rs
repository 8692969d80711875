//! The renewal herd: how many extends per millisecond one lock server takes when many
//! holders renew on a fixed schedule, against the same holders with jitter.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use serde::Serialize;

use super::clock::{Millis, SplitMix64};
use super::lease::{renewal_interval, LeaseLock};
use super::scenario::MAX_TIME;

/// Most holders [`renewal_herd`] simulates.
pub const MAX_HERD: usize = 100_000;

/// Most renewals one [`renewal_herd`] call may simulate; the horizon is cut to fit, so a
/// huge herd with a tiny TTL stays a bounded amount of work.
pub const MAX_HERD_RENEWALS: u64 = 2_000_000;

/// Number of buckets [`HerdReport::per_bucket`] splits the horizon into.
pub const HERD_BUCKETS: u64 = 100;

/// The renewal load one lock server sees from a herd of holders.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HerdReport {
    /// The parameters actually simulated (after clamping).
    pub holders: usize,
    pub ttl: Millis,
    pub jitter: bool,
    pub horizon: Millis,
    /// Successful extends in `(0, horizon]`.
    pub renewals: u64,
    /// Refused extends; nobody pauses in a herd, so anything but 0 is a bug.
    pub failed_renewals: u64,
    /// Most renewals the server took in one millisecond, and the first ms it happened.
    pub peak_per_ms: u32,
    pub peak_at: Millis,
    /// Renewals per `bucket_ms`-wide bucket, from t=0.
    pub bucket_ms: Millis,
    pub per_bucket: Vec<u32>,
}

impl HerdReport {
    /// The busiest bucket.
    pub fn peak_per_bucket(&self) -> u32 {
        self.per_bucket.iter().copied().max().unwrap_or(0)
    }
}

/// `holders` clients acquire their *own* key on one lock server at t=0 (a fleet restarting
/// together) and each renews at [`renewal_interval`] until `horizon`, with or without jitter.
///
/// A lean dedicated loop over the same [`LeaseLock`] rather than the scenario engine: the
/// engine narrates and snapshots every event and is capped at `MAX_ACTORS`, while this only
/// needs a timer heap and the `extend` call, so 10,000 holders take a few milliseconds
/// (O(R log N) for R renewals). Inputs are clamped: `holders` to [`MAX_HERD`], `ttl` to
/// `3..=MAX_TIME`, `horizon` to `1..=MAX_TIME` and then to what keeps the herd within
/// [`MAX_HERD_RENEWALS`]; the report carries the values actually used.
pub fn renewal_herd(
    holders: usize,
    ttl: Millis,
    jitter: bool,
    seed: u64,
    horizon: Millis,
) -> HerdReport {
    let holders = holders.min(MAX_HERD);
    let ttl = ttl.clamp(3, MAX_TIME);
    let fastest = renewal_interval(ttl, None) - renewal_interval(ttl, None) / 4;
    let budget = (MAX_HERD_RENEWALS / holders.max(1) as u64).saturating_mul(fastest);
    let horizon = horizon.clamp(1, MAX_TIME).min(budget.max(1));
    let mut rng = SplitMix64::new(seed);
    let mut lock = LeaseLock::new(1);
    let keys: Vec<String> = (0..holders).map(|i| format!("job:{i}")).collect();
    let mut due = BinaryHeap::with_capacity(holders);
    let next = |rng: &mut SplitMix64| renewal_interval(ttl, jitter.then_some(rng));
    for (i, key) in keys.iter().enumerate() {
        lock.acquire(0, key, key, ttl);
        due.push(Reverse((next(&mut rng), i)));
    }
    let mut per_ms = vec![0u32; horizon as usize + 1];
    let (mut renewals, mut failed_renewals) = (0, 0);
    while let Some(Reverse((t, i))) = due.pop() {
        if t > horizon {
            break;
        }
        match lock.extend(t, &keys[i], &keys[i], ttl) {
            Ok(_) => {
                renewals += 1;
                per_ms[t as usize] += 1;
                due.push(Reverse((t + next(&mut rng), i)));
            }
            Err(_) => failed_renewals += 1,
        }
    }
    let (peak_at, peak_per_ms) =
        per_ms.iter().enumerate().fold(
            (0, 0),
            |best, (t, &n)| if n > best.1 { (t as Millis, n) } else { best },
        );
    let bucket_ms = horizon.div_ceil(HERD_BUCKETS).max(1);
    let per_bucket = per_ms
        .chunks(bucket_ms as usize)
        .map(|c| c.iter().sum())
        .collect();
    HerdReport {
        holders,
        ttl,
        jitter,
        horizon,
        renewals,
        failed_renewals,
        peak_per_ms,
        peak_at,
        bucket_ms,
        per_bucket,
    }
}
