//! A Redis-style lease lock (`SET key val NX PX ttl`) that also mints fencing tokens.
//!
//! The lease says "probably nobody else is writing"; only the token, checked by the
//! storage, makes a late writer harmless.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::fmt;

use serde::{Deserialize, Serialize};

use super::clock::{Millis, SplitMix64};
use super::scenario::MAX_TIME;

/// A fencing token: the generation of the lock that may write. Strictly increasing, never reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Fence(pub u64);

impl fmt::Display for Fence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// One granted lease.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    pub owner: String,
    pub fence: Fence,
    pub expires_at: Millis,
}

impl Lease {
    /// Live until (but not at) `expires_at`, like a Redis key with PX.
    pub fn is_live(&self, now: Millis) -> bool {
        now < self.expires_at
    }
}

/// The answer to a non-blocking acquire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Acquire {
    Acquired { fence: Fence, expires_at: Millis },
    Held { holder: String, expires_at: Millis },
}

impl Acquire {
    /// The minted token, if the acquire succeeded.
    pub fn fence(&self) -> Option<Fence> {
        match self {
            Acquire::Acquired { fence, .. } => Some(*fence),
            Acquire::Held { .. } => None,
        }
    }

    /// As a `Result`, for callers that treat a held lock as an error.
    pub fn into_result(self) -> Result<Fence, LockError> {
        match self {
            Acquire::Acquired { fence, .. } => Ok(fence),
            Acquire::Held { holder, .. } => Err(LockError::LockHeld { holder }),
        }
    }
}

/// Why a lock operation was refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum LockError {
    /// Somebody else holds a live lease.
    LockHeld { holder: String },
    /// The caller does not hold a live lease (it expired, or belongs to someone else).
    NotHolder,
}

impl LockError {
    /// Stable machine-readable code shown in the UI and asserted in tests.
    pub fn code(&self) -> &'static str {
        match self {
            LockError::LockHeld { .. } => "lock_held",
            LockError::NotHolder => "not_holder",
        }
    }
}

impl fmt::Display for LockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// A table of leases keyed by resource, plus the token counter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaseLock {
    leases: BTreeMap<String, Lease>,
    next_fence: u64,
}

impl LeaseLock {
    /// A lock whose first minted token is `first_fence` (the headline uses 33).
    pub fn new(first_fence: u64) -> Self {
        Self {
            leases: BTreeMap::new(),
            next_fence: first_fence,
        }
    }

    /// `SET key owner NX PX ttl`: grants a lease and a fresh token only when no live lease exists.
    pub fn acquire(&mut self, now: Millis, key: &str, owner: &str, ttl: Millis) -> Acquire {
        if let Some(lease) = self.live(now, key) {
            return Acquire::Held {
                holder: lease.owner.clone(),
                expires_at: lease.expires_at,
            };
        }
        let fence = Fence(self.next_fence);
        self.next_fence += 1;
        let expires_at = now.saturating_add(ttl);
        self.leases.insert(
            key.to_owned(),
            Lease {
                owner: owner.to_owned(),
                fence,
                expires_at,
            },
        );
        Acquire::Acquired { fence, expires_at }
    }

    /// Compare-and-delete (the Lua script): only the live holder can delete, so a late
    /// owner never deletes its successor's lease.
    pub fn release(&mut self, now: Millis, key: &str, owner: &str) -> Result<Fence, LockError> {
        match self.live(now, key) {
            Some(lease) if lease.owner == owner => {
                let fence = lease.fence;
                self.leases.remove(key);
                Ok(fence)
            }
            _ => Err(LockError::NotHolder),
        }
    }

    /// Unconditional `DEL`: the second half of the unsafe GET-then-DEL release.
    pub fn delete(&mut self, key: &str) -> Option<Lease> {
        self.leases.remove(key)
    }

    /// Extends the lease to `now + ttl`, atomically checking ownership first.
    pub fn extend(
        &mut self,
        now: Millis,
        key: &str,
        owner: &str,
        ttl: Millis,
    ) -> Result<Millis, LockError> {
        match self.leases.get_mut(key) {
            Some(lease) if lease.is_live(now) && lease.owner == owner => {
                lease.expires_at = now.saturating_add(ttl);
                Ok(lease.expires_at)
            }
            _ => Err(LockError::NotHolder),
        }
    }

    /// Whether `owner` holds a live lease on `key` at `now`. True now says nothing about a moment later.
    pub fn is_held(&self, now: Millis, key: &str, owner: &str) -> bool {
        self.live(now, key).is_some_and(|l| l.owner == owner)
    }

    /// The live lease on `key`, if any.
    pub fn holder(&self, now: Millis, key: &str) -> Option<&Lease> {
        self.live(now, key)
    }

    /// The stored entry for `key`, live or already expired (what `holder` hides).
    pub fn entry(&self, key: &str) -> Option<&Lease> {
        self.leases.get(key)
    }

    /// The lock node's clock jumped forward by `by`: every live lease loses `by` ms of real
    /// time (one that had less left expires at `now`). Its holder's own clock still says
    /// the old time, which is the Redlock clock assumption failing.
    pub fn clock_jump(&mut self, now: Millis, by: Millis) {
        for lease in self.leases.values_mut().filter(|l| l.is_live(now)) {
            lease.expires_at = lease.expires_at.saturating_sub(by).max(now);
        }
    }

    /// The primary crashed before replicating and a replica without the lock keys was
    /// promoted: every lease is gone from the server, though its holder was told "OK".
    /// The token counter is kept: it lives in a consensus store (etcd revision, ZooKeeper
    /// zxid), not in the Redis that failed over. Returns the leases the server lost.
    pub fn failover(&mut self) -> Vec<Lease> {
        std::mem::take(&mut self.leases).into_values().collect()
    }

    /// The token the next successful acquire will mint.
    pub fn next_fence(&self) -> Fence {
        Fence(self.next_fence)
    }

    fn live(&self, now: Millis, key: &str) -> Option<&Lease> {
        self.leases.get(key).filter(|l| l.is_live(now))
    }
}

/// When a holder renews next: at a third of the TTL, so a renewal can fail twice before the
/// lease runs out; with `jitter`, uniformly within ±25% of that, so holders that started
/// together drift apart instead of renewing in the same millisecond.
pub fn renewal_interval(ttl: Millis, jitter: Option<&mut SplitMix64>) -> Millis {
    let base = (ttl / 3).max(1);
    match jitter {
        None => base,
        Some(rng) => {
            let spread = base / 4;
            rng.between(base - spread, base + spread).max(1)
        }
    }
}

/// Most holders [`renewal_herd`] simulates.
pub const MAX_HERD: usize = 100_000;

/// Most renewals one [`renewal_herd`] call may simulate; the horizon is cut to fit, so a
/// huge herd with a tiny TTL stays a bounded amount of work.
pub const MAX_HERD_RENEWALS: u64 = 2_000_000;

/// Number of buckets [`HerdReport::per_bucket`] splits the horizon into.
pub const HERD_BUCKETS: u64 = 100;

/// The renewal load one lock server sees from a herd of holders.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_jump_shortens_only_live_leases() {
        let mut lock = LeaseLock::new(1);
        lock.acquire(0, "a", "A", 30);
        lock.acquire(0, "b", "B", 5);
        lock.clock_jump(10, 15);
        assert_eq!(lock.entry("a").unwrap().expires_at, 15);
        assert_eq!(lock.entry("b").unwrap().expires_at, 5, "already expired");
        lock.clock_jump(12, 100);
        assert_eq!(lock.entry("a").unwrap().expires_at, 12);
        assert!(lock.holder(12, "a").is_none());
    }

    #[test]
    fn failover_loses_leases_but_not_the_token_counter() {
        let mut lock = LeaseLock::new(33);
        lock.acquire(0, "k", "A", 30);
        let lost = lock.failover();
        assert_eq!(lost.len(), 1);
        assert_eq!((lost[0].owner.as_str(), lost[0].fence), ("A", Fence(33)));
        assert!(lock.entry("k").is_none());
        assert_eq!(lock.acquire(1, "k", "B", 30).fence(), Some(Fence(34)));
    }

    #[test]
    fn renewal_interval_is_a_third_with_quarter_jitter() {
        assert_eq!(renewal_interval(30, None), 10);
        assert_eq!(renewal_interval(1, None), 1);
        let mut rng = SplitMix64::new(3);
        let draws: Vec<_> = (0..200)
            .map(|_| renewal_interval(30_000, Some(&mut rng)))
            .collect();
        assert!(
            draws.iter().all(|d| (7_500..=12_500).contains(d)),
            "{draws:?}"
        );
        assert!(draws.iter().any(|&d| d < 9_000) && draws.iter().any(|&d| d > 11_000));
    }
}
