//! A Redis-style lease lock (`SET key val NX PX ttl`) that also mints fencing tokens.
//!
//! The lease says "probably nobody else is writing"; only the token, checked by the
//! storage, makes a late writer harmless.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::clock::Millis;

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

    /// The token the next successful acquire will mint.
    pub fn next_fence(&self) -> Fence {
        Fence(self.next_fence)
    }

    fn live(&self, now: Millis, key: &str) -> Option<&Lease> {
        self.leases.get(key).filter(|l| l.is_live(now))
    }
}
