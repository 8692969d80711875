//! The lock service a run talks to, behind one set of operations so that the engine need
//! not care which kind it is, and the PostgreSQL row lock that is no lock service at all.

use std::collections::VecDeque;

use super::clock::Millis;
use super::lease::{Acquire, Fence, Lease, LeaseLock, LockError};
use super::redlock::Redlock;

/// The lock service: one Redis (or one linearizable store), or Redlock over several nodes.
/// `reach` is the nodes the caller can reach; a single server ignores it.
#[derive(Debug, Clone)]
pub(super) enum Locks {
    One(LeaseLock),
    /// One lock service that queues waiters fairly ([`Scenario::queue`]): the lease lock,
    /// and the waiters in arrival order.
    ///
    /// [`Scenario::queue`]: super::scenario::Scenario::queue
    Fair(LeaseLock, VecDeque<String>),
    Quorum(Redlock),
    Row(RowLocks),
}

/// What `SELECT … FOR UPDATE` answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum RowAnswer {
    /// The row was free: the caller's transaction holds its lock now.
    Locked(Lease),
    /// Another transaction holds it: the statement waits behind `holder`.
    Waits { holder: String },
}

/// A PostgreSQL row lock on the account row (one row: the scenario's resource). The holder
/// is a [`Lease`] whose `fence` is only the grant's number (no token reaches storage) and
/// whose `expires_at` is when its session's idle-in-transaction timeout fires, counted from
/// its last statement (`Millis::MAX` with no timeout). Waiters queue in arrival order.
#[derive(Debug, Clone)]
pub(super) struct RowLocks {
    holder: Option<Lease>,
    waiting: VecDeque<String>,
    next: u64,
    idle_timeout: Option<Millis>,
}

impl RowLocks {
    pub(super) fn new(first: u64, idle_timeout: Option<Millis>) -> Self {
        Self {
            holder: None,
            waiting: VecDeque::new(),
            next: first,
            idle_timeout,
        }
    }

    /// When a session idle since `now` is terminated.
    fn deadline(&self, now: Millis) -> Millis {
        super::lease::idle_deadline(self.idle_timeout, now)
    }

    fn grant(&mut self, now: Millis, owner: &str) -> Lease {
        let lease = Lease {
            owner: owner.to_owned(),
            fence: Fence(self.next),
            expires_at: self.deadline(now),
        };
        self.next += 1;
        self.holder = Some(lease.clone());
        lease
    }

    /// `SELECT … FOR UPDATE` from `owner`'s transaction at `now`.
    pub(super) fn lock(&mut self, now: Millis, owner: &str) -> RowAnswer {
        match &self.holder {
            Some(h) => {
                let holder = h.owner.clone();
                self.waiting.push_back(owner.to_owned());
                RowAnswer::Waits { holder }
            }
            None => RowAnswer::Locked(self.grant(now, owner)),
        }
    }

    /// A statement of the holder's finished at `now`: its idle clock starts again. Returns
    /// the lease with its new deadline.
    pub(super) fn touch(&mut self, now: Millis, owner: &str) -> Option<Lease> {
        let deadline = self.deadline(now);
        let h = self.holder.as_mut().filter(|h| h.owner == owner)?;
        h.expires_at = deadline;
        Some(h.clone())
    }

    /// The holder's transaction ends (COMMIT, or the server terminating its session).
    /// Returns the lease it held; [`RowLocks::grant_next`] then hands the lock on.
    pub(super) fn end(&mut self) -> Option<Lease> {
        self.holder.take()
    }

    /// The first waiter's `SELECT … FOR UPDATE` returns with the lock, if the row is free.
    pub(super) fn grant_next(&mut self, now: Millis) -> Option<Lease> {
        if self.holder.is_some() {
            return None;
        }
        let w = self.waiting.pop_front()?;
        Some(self.grant(now, &w))
    }

    fn holder(&self, now: Millis) -> Option<&Lease> {
        self.holder.as_ref().filter(|h| h.is_live(now))
    }
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
            Locks::Fair(l, waiting) => {
                let answer = l.acquire_with(now, key, owner, ttl, value);
                if matches!(answer, Acquire::Held { .. }) && !waiting.iter().any(|w| w == owner) {
                    waiting.push_back(owner.to_owned());
                }
                (answer, Vec::new())
            }
            Locks::Quorum(r) => r.acquire(now, key, owner, ttl, reach),
            Locks::Row(r) => match r.lock(now, owner) {
                RowAnswer::Locked(l) => (
                    Acquire::Acquired {
                        fence: l.fence,
                        expires_at: l.expires_at,
                    },
                    Vec::new(),
                ),
                RowAnswer::Waits { holder } => (
                    Acquire::Held {
                        holder,
                        expires_at: Millis::MAX,
                    },
                    Vec::new(),
                ),
            },
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
            Locks::One(l) | Locks::Fair(l, _) => (l.release(now, key, owner), Vec::new()),
            Locks::Quorum(r) => r.release(now, key, owner, reach),
            Locks::Row(r) => match r.holder(now) {
                Some(h) if h.owner == owner => {
                    let fence = h.fence;
                    r.end();
                    (Ok(fence), Vec::new())
                }
                _ => (Err(LockError::NotHolder), Vec::new()),
            },
        }
    }

    pub(super) fn delete(&mut self, now: Millis, key: &str, reach: &[usize]) {
        match self {
            Locks::One(l) | Locks::Fair(l, _) => {
                l.delete(now, key);
            }
            Locks::Quorum(r) => r.delete(now, key, reach),
            Locks::Row(r) => {
                r.end();
            }
        }
    }

    pub(super) fn extend(
        &mut self,
        now: Millis,
        key: &str,
        owner: &str,
        ttl: Millis,
        reach: &[usize],
    ) -> (Result<Millis, LockError>, Vec<usize>) {
        match self {
            Locks::One(l) | Locks::Fair(l, _) => (l.extend(now, key, owner, ttl), Vec::new()),
            Locks::Quorum(r) => r.extend(now, key, owner, ttl, reach),
            // A statement restarts the idle clock; there is nothing else to extend.
            Locks::Row(r) => {
                let touched = r.touch(now, owner).map(|l| l.expires_at);
                (touched.ok_or(LockError::NotHolder), Vec::new())
            }
        }
    }

    pub(super) fn is_held(&self, now: Millis, key: &str, owner: &str) -> bool {
        match self {
            Locks::One(l) | Locks::Fair(l, _) => l.is_held(now, key, owner),
            Locks::Quorum(r) => r.is_held(now, key, owner),
            Locks::Row(r) => r.holder(now).is_some_and(|h| h.owner == owner),
        }
    }

    /// The live lease (Redlock: the newest client holding a majority).
    pub(super) fn holder(&self, now: Millis, key: &str) -> Option<Lease> {
        match self {
            Locks::One(l) | Locks::Fair(l, _) => l.holder(now, key).cloned(),
            Locks::Quorum(r) => r.holder(now, key),
            Locks::Row(r) => r.holder(now).cloned(),
        }
    }

    /// Redlock only: the other clients that hold a majority at the same time.
    pub(super) fn others(&self, now: Millis, key: &str) -> Vec<Lease> {
        match self {
            Locks::One(_) | Locks::Fair(..) | Locks::Row(_) => Vec::new(),
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
            Locks::One(l) | Locks::Fair(l, _) => l.entry(key).filter(|l| l.fence == fence).cloned(),
            Locks::Quorum(r) => r.lease(key, fence),
            Locks::Row(r) => r.holder.clone().filter(|l| l.fence == fence),
        }
    }

    pub(super) fn clock_jump(&mut self, now: Millis, by: Millis, node: usize) {
        match self {
            Locks::One(l) | Locks::Fair(l, _) => l.clock_jump(now, by),
            Locks::Quorum(r) => r.clock_jump(now, by, node),
            // The idle timeout runs on PostgreSQL's own timer, not a lock node's clock: the
            // engine does not call this for it (`trace::ends_by_lock_clock`).
            Locks::Row(_) => {}
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
            (Locks::One(l) | Locks::Fair(l, _), None) => l.failover(now, counter_lost),
            (Locks::One(l) | Locks::Fair(l, _), Some(lag)) => {
                l.failover_after(now, lag, counter_lost)
            }
            (Locks::Quorum(_) | Locks::Row(_), _) => Vec::new(),
        }
    }

    /// A row lock's or a fair queue's next holder, if the lock is free: the first waiter
    /// gets it at `now` (a fair queue's for `ttl`, the row lock's until its idle timeout).
    pub(super) fn grant_next(&mut self, now: Millis, key: &str, ttl: Millis) -> Option<Lease> {
        match self {
            Locks::Row(r) => r.grant_next(now),
            Locks::Fair(l, waiting) if l.holder(now, key).is_none() => {
                let next = waiting.pop_front()?;
                l.acquire_with(now, key, &next, ttl, None);
                l.entry(key).cloned()
            }
            _ => None,
        }
    }

    /// The row lock, when the lock is one.
    pub(super) fn row(&mut self) -> Option<&mut RowLocks> {
        match self {
            Locks::Row(r) => Some(r),
            _ => None,
        }
    }

    pub(super) fn next_fence(&self) -> Fence {
        match self {
            Locks::One(l) | Locks::Fair(l, _) => l.next_fence(),
            Locks::Quorum(r) => r.next_fence(),
            Locks::Row(r) => Fence(r.next),
        }
    }
}
