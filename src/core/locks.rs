//! The lock service a run talks to, behind one set of operations so that the engine need
//! not care which kind it is.

use super::clock::Millis;
use super::lease::{Acquire, Fence, Lease, LeaseLock, LockError};
use super::redlock::Redlock;

/// The lock service: one Redis (or one linearizable store), or Redlock over several nodes.
/// `reach` is the nodes the caller can reach; a single server ignores it.
#[derive(Debug, Clone)]
pub(super) enum Locks {
    One(LeaseLock),
    Quorum(Redlock),
}

impl Locks {
    pub(super) fn acquire(
        &mut self,
        now: Millis,
        key: &str,
        owner: &str,
        ttl: Millis,
        reach: &[usize],
        value: Option<Fence>,
    ) -> (Acquire, Vec<usize>) {
        match self {
            Locks::One(l) => (l.acquire_with(now, key, owner, ttl, value), Vec::new()),
            Locks::Quorum(r) => r.acquire(now, key, owner, ttl, reach),
        }
    }

    pub(super) fn release(
        &mut self,
        now: Millis,
        key: &str,
        owner: &str,
        reach: &[usize],
    ) -> (Result<Fence, LockError>, Vec<usize>) {
        match self {
            Locks::One(l) => (l.release(now, key, owner), Vec::new()),
            Locks::Quorum(r) => r.release(now, key, owner, reach),
        }
    }

    pub(super) fn delete(&mut self, now: Millis, key: &str, reach: &[usize]) {
        match self {
            Locks::One(l) => {
                l.delete(now, key);
            }
            Locks::Quorum(r) => r.delete(now, key, reach),
        }
    }

    pub(super) fn extend(
        &mut self,
        now: Millis,
        key: &str,
        owner: &str,
        ttl: Millis,
        reach: &[usize],
    ) -> Result<Millis, LockError> {
        match self {
            Locks::One(l) => l.extend(now, key, owner, ttl),
            Locks::Quorum(r) => r.extend(now, key, owner, ttl, reach),
        }
    }

    pub(super) fn is_held(&self, now: Millis, key: &str, owner: &str) -> bool {
        match self {
            Locks::One(l) => l.is_held(now, key, owner),
            Locks::Quorum(r) => r.is_held(now, key, owner),
        }
    }

    /// The live lease (Redlock: the newest client holding a majority).
    pub(super) fn holder(&self, now: Millis, key: &str) -> Option<Lease> {
        match self {
            Locks::One(l) => l.holder(now, key).cloned(),
            Locks::Quorum(r) => r.holder(now, key),
        }
    }

    /// Redlock only: the other clients that hold a majority at the same time.
    pub(super) fn others(&self, now: Millis, key: &str) -> Vec<Lease> {
        match self {
            Locks::One(_) => Vec::new(),
            Locks::Quorum(r) => {
                let mut all = r.holders(now, key);
                all.pop();
                all
            }
        }
    }

    /// The grant with token `fence` and when it ends (or ended), if the server still has it.
    pub(super) fn lease(&self, key: &str, fence: Fence) -> Option<Lease> {
        match self {
            Locks::One(l) => l.entry(key).filter(|l| l.fence == fence).cloned(),
            Locks::Quorum(r) => r.lease(key, fence),
        }
    }

    pub(super) fn clock_jump(&mut self, now: Millis, by: Millis, node: usize) {
        match self {
            Locks::One(l) => l.clock_jump(now, by),
            Locks::Quorum(r) => r.clock_jump(now, by, node),
        }
    }

    /// `lag`: the replica's replication lag, or `None` for one cut off before the run.
    pub(super) fn failover(
        &mut self,
        now: Millis,
        counter_lost: bool,
        lag: Option<Millis>,
    ) -> Vec<Lease> {
        match (self, lag) {
            (Locks::One(l), None) => l.failover(now, counter_lost),
            (Locks::One(l), Some(lag)) => l.failover_after(now, lag, counter_lost),
            (Locks::Quorum(_), _) => Vec::new(),
        }
    }

    pub(super) fn next_fence(&self) -> Fence {
        match self {
            Locks::One(l) => l.next_fence(),
            Locks::Quorum(r) => r.next_fence(),
        }
    }
}
