//! A Redis-style lease lock (`SET key val NX PX ttl`) that also mints fencing tokens.
//!
//! The lease says "probably nobody else is writing"; only the token, checked by the
//! storage, makes a late writer harmless.

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};

use serde::{Deserialize, Serialize};

use super::clock::{Millis, SplitMix64};

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
    /// Until when this lease, lapsed at its expiry rather than released, keeps the lock
    /// from everyone under a Chubby-style lock-delay of `lock_delay` (0: not past its expiry).
    pub fn delay_ends(&self, lock_delay: Millis) -> Millis {
        self.expires_at.saturating_add(lock_delay)
    }

    /// Live until (but not at) `expires_at`, like a Redis key with PX.
    pub fn is_live(&self, now: Millis) -> bool {
        now < self.expires_at
    }

    /// This lease, lapsed without a release: until when its lock-delay of `lock_delay` still
    /// keeps the lock from everyone at `now`, or `None` once it no longer does.
    pub(crate) fn delays(&self, lock_delay: Millis, now: Millis) -> Option<Millis> {
        let until = self.delay_ends(lock_delay);
        (now < until).then_some(until)
    }
}

/// Who keeps the lock from an acquire at `now`, and until when: the `live` lease to its
/// end, else a `lapsed` one (run out, not released) to the end of its lock-delay of
/// `lock_delay`. `None`: the lock is free.
pub(crate) fn kept_by(
    live: Option<&Lease>,
    lapsed: Option<&Lease>,
    lock_delay: Millis,
    now: Millis,
) -> Option<(String, Millis)> {
    if let Some(l) = live {
        return Some((l.owner.clone(), l.expires_at));
    }
    let l = lapsed?;
    l.delays(lock_delay, now)
        .map(|until| (l.owner.clone(), until))
}

/// When a row lock's session idle since `now` is terminated by its idle-in-transaction
/// timeout (`Millis::MAX` with none): its lease's end.
pub(crate) fn idle_deadline(idle_timeout: Option<Millis>, now: Millis) -> Millis {
    idle_timeout.map_or(Millis::MAX, |t| now.saturating_add(t))
}

/// When a key whose PX ran out at `expires_at` runs out after its node's clock steps `by`
/// at `now`: that much sooner, but not before `now`.
pub(crate) fn jumped(expires_at: Millis, now: Millis, by: Millis) -> Millis {
    expires_at.saturating_sub(by).max(now)
}

/// The answer to a non-blocking acquire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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

impl std::error::Error for LockError {}

/// A table of leases keyed by resource, plus the token counter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LeaseLock {
    leases: Table,
    next_fence: u64,
    /// Chubby's lock-delay: after a lease lapses without a release, nobody gets the lock
    /// for this long (0: the lock is free the moment the lease expires, as in Redis).
    lock_delay: Millis,
    /// The primary's writes in order: when, which key, what it holds after (`None`:
    /// deleted), and the counter after. An asynchronous replica has a prefix of these
    /// (see [`LeaseLock::failover_after`]).
    writes: Vec<(Millis, String, Option<Lease>, u64)>,
    /// The counter before the first write.
    first_fence: u64,
}

/// The lease table: a hash map, for the renewal herd's up to 100,000 keys (a `BTreeMap`'s
/// node code was 9 KB of the page's first-screen wasm), read in key order wherever order
/// shows (a failover's lost leases, the replica's history, printing, serializing), as a
/// `BTreeMap` reads. Hashed by FNV-1a, so every run is the same.
#[derive(Clone, Default, PartialEq, Eq)]
struct Table(HashMap<String, Lease, BuildHasherDefault<Fnv>>);

impl std::ops::Deref for Table {
    type Target = HashMap<String, Lease, BuildHasherDefault<Fnv>>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for Table {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl Table {
    /// The entries in key order: a failover touches a handful of keys, so by insertion.
    fn by_key(&self) -> Vec<(&String, &Lease)> {
        let mut all: Vec<(&String, &Lease)> = self.0.iter().collect();
        for i in 1..all.len() {
            let mut j = i;
            while j > 0 && all[j - 1].0 > all[j].0 {
                all.swap(j - 1, j);
                j -= 1;
            }
        }
        all
    }
}

impl fmt::Debug for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.by_key()).finish()
    }
}

impl Serialize for Table {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.by_key())
    }
}

/// FNV-1a over the key's bytes: a fixed hash, so a run never depends on a random seed.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

impl LeaseLock {
    /// A lock whose first minted token is `first_fence` (the headline uses 33).
    pub fn new(first_fence: u64) -> Self {
        Self {
            leases: Table::default(),
            next_fence: first_fence,
            lock_delay: 0,
            writes: Vec::new(),
            first_fence,
        }
    }

    /// Remembers what a write at `now` left in `key`, for a lagging replica.
    fn wrote(&mut self, now: Millis, key: &str) {
        let value = self.leases.get(key).cloned();
        self.writes
            .push((now, key.to_owned(), value, self.next_fence));
    }

    /// The lock with a Chubby-style lock-delay of `ms`: a lease that expired (rather than
    /// being released) keeps the lock from everyone until `ms` after its expiry.
    pub fn with_lock_delay(mut self, ms: Millis) -> Self {
        self.lock_delay = ms;
        self
    }

    /// `SET key owner NX PX ttl`: grants a lease and a fresh token only when no live lease exists.
    pub fn acquire(&mut self, now: Millis, key: &str, owner: &str, ttl: Millis) -> Acquire {
        self.acquire_with(now, key, owner, ttl, None)
    }

    /// [`LeaseLock::acquire`], where `value` (when given) is the token instead of the next
    /// counter value: the client's own random `SET` value, which the lock does not order.
    pub fn acquire_with(
        &mut self,
        now: Millis,
        key: &str,
        owner: &str,
        ttl: Millis,
        value: Option<Fence>,
    ) -> Acquire {
        // A lease still stored and not live is one that expired without a release (a release
        // deletes it).
        let (live, lapsed) = (self.live(now, key), self.leases.get(key));
        if let Some((holder, expires_at)) = kept_by(live, lapsed, self.lock_delay, now) {
            return Acquire::Held { holder, expires_at };
        }
        let fence = match value {
            Some(v) => v,
            None => {
                self.next_fence += 1;
                Fence(self.next_fence - 1)
            }
        };
        let expires_at = now.saturating_add(ttl);
        self.leases.insert(
            key.to_owned(),
            Lease {
                owner: owner.to_owned(),
                fence,
                expires_at,
            },
        );
        self.wrote(now, key);
        Acquire::Acquired { fence, expires_at }
    }

    /// Compare-and-delete (the Lua script): only the live holder can delete, so a late
    /// owner never deletes its successor's lease.
    pub fn release(&mut self, now: Millis, key: &str, owner: &str) -> Result<Fence, LockError> {
        match self.live(now, key) {
            Some(lease) if lease.owner == owner => {
                let fence = lease.fence;
                self.leases.remove(key);
                self.wrote(now, key);
                Ok(fence)
            }
            _ => Err(LockError::NotHolder),
        }
    }

    /// Unconditional `DEL`: the second half of the unsafe GET-then-DEL release.
    pub fn delete(&mut self, now: Millis, key: &str) -> Option<Lease> {
        let gone = self.leases.remove(key);
        self.wrote(now, key);
        gone
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
                let until = lease.expires_at;
                self.wrote(now, key);
                Ok(until)
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
            lease.expires_at = jumped(lease.expires_at, now, by);
        }
    }

    /// The primary crashed before replicating and a replica without the lock keys was
    /// promoted: every lease is gone from the server, though its holder was told "OK".
    /// With `counter_lost` the token counter lived on the same Redis and goes back to where
    /// it was before the lost grants (their INCRs were not replicated either), so the next
    /// grant reuses the lowest lost token. Returns the live leases the server lost.
    pub fn failover(&mut self, now: Millis, counter_lost: bool) -> Vec<Lease> {
        // Keys already expired are gone on either side; only live grants are lost.
        let lost: Vec<Lease> = std::mem::take(&mut self.leases)
            .by_key()
            .into_iter()
            .filter(|(_, l)| l.is_live(now))
            .map(|(_, l)| l.clone())
            .collect();
        if counter_lost {
            if let Some(low) = lost.iter().map(|l| l.fence.0).min() {
                self.next_fence = self.next_fence.min(low);
            }
        }
        lost
    }

    /// A failover to a replica that receives each write `lag` ms after the primary made it:
    /// the promoted replica has every write made by `now - lag`, and none after. Returns the
    /// live leases it lacks (their holders were told OK). With `counter_lost` the token
    /// counter lived on the same Redis and is the replica's too.
    pub fn failover_after(&mut self, now: Millis, lag: Millis, counter_lost: bool) -> Vec<Lease> {
        // The replica has every write made by `now - lag`: replay those.
        let mut replica = Table::default();
        let mut counter = self.first_fence;
        for (at, key, value, after) in &self.writes {
            if at.saturating_add(lag) > now {
                break;
            }
            match value {
                Some(l) => replica.insert(key.clone(), l.clone()),
                None => replica.remove(key),
            };
            counter = *after;
        }
        let lost: Vec<Lease> = self
            .leases
            .by_key()
            .into_iter()
            .filter(|(key, l)| l.is_live(now) && replica.get(*key) != Some(l))
            .map(|(_, l)| l.clone())
            .collect();
        self.leases = replica;
        if counter_lost {
            self.next_fence = counter;
        }
        // From here on the replica is the primary: its history is the one a later
        // failover replays.
        self.writes = self
            .leases
            .by_key()
            .into_iter()
            .map(|(k, l)| (0, k.clone(), Some(l.clone()), self.next_fence))
            .collect();
        self.first_fence = self.next_fence;
        lost
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

    /// The table reads in key order wherever order shows, whatever order the keys came in:
    /// a failover's lost leases, the promoted replica's history, its printout.
    #[test]
    fn the_table_reads_in_key_order() {
        let keys = ["job:2", "job:10", "acct:1", "job:1"];
        let mut lock = LeaseLock::new(1);
        for k in keys {
            lock.acquire(0, k, k, 30);
        }
        let mut sorted = keys.to_vec();
        sorted.sort_unstable();
        let shown = format!("{:?}", lock.leases);
        let at: Vec<usize> = sorted.iter().map(|k| shown.find(k).unwrap()).collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{shown}");
        let mut lagging = lock.clone();
        let lost: Vec<String> = lock
            .failover(5, false)
            .into_iter()
            .map(|l| l.owner)
            .collect();
        assert_eq!(lost, sorted);
        let lost: Vec<String> = lagging
            .failover_after(5, 10, false)
            .into_iter()
            .map(|l| l.owner)
            .collect();
        assert_eq!(lost, sorted);
    }

    #[test]
    fn failover_loses_leases_but_not_the_token_counter() {
        let mut lock = LeaseLock::new(33);
        lock.acquire(0, "k", "A", 30);
        let lost = lock.failover(1, false);
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
