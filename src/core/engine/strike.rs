//! What each kind of fault does to the world when it strikes: one function per kind, reached
//! through [`Sim::strike`], the engine's one match over the kinds. A partition does nothing
//! here: it is a window the clients ask about before they send (`fault::can_reach`).

use super::super::clock::Millis;
use super::super::fault::Fault;
use super::super::lease::{Fence, Lease};
use super::super::queue::{Class, Pending};
use super::super::scenario::TokenSource;
use super::super::sim::Sim;
use super::super::trace::{self, EventKind, Lane, Shortened};

impl Sim<'_> {
    /// Fault `f` strikes now.
    pub(super) fn strike(&mut self, f: Fault) {
        match f {
            Fault::ClockJump { node, by } => self.clock_jump(node, by),
            Fault::Failover { lag } | Fault::Restart { lag } => self.failover(lag),
            Fault::StorageFailover { lag } => self.storage_failover(lag),
            Fault::Partition { .. } => {}
        }
    }

    /// Lock node `node`'s clock steps forward: the live lease loses `by` ms of real time.
    fn clock_jump(&mut self, node: usize, by: Millis) {
        let now = self.now();
        let res = &self.sc.resource;
        let before = self.lock.holder(now, res);
        if trace::ends_by_lock_clock(&self.sc.lock) {
            self.lock.clock_jump(now, by, node);
        }
        // The server forgets a lease the jump ran out at once: it ends now.
        let ends_at = |old: &Lease| {
            self.lock
                .lease(res, old.fence)
                .map_or(now, |l| l.expires_at)
        };
        let shortened = Shortened::of(before, ends_at);
        if let Some(s) = &shortened {
            let fence = s.fence;
            self.push(s.ends_at, Class::Expiry, Pending::Expiry { fence });
        }
        self.emit(
            None,
            Lane::Lease,
            EventKind::LockClockJumped { by, shortened },
        );
    }

    /// The primary fails over. Off a single Redis with asynchronous replication, the
    /// promoted replica never got the newest lock keys; a linearizable lock service's new
    /// leader has them all. `lag`: the replica's (or the restart's snapshot's), `None` for
    /// one that has none of the run's writes.
    fn failover(&mut self, lag: Option<Millis>) {
        let now = self.now();
        let lost: Vec<Lease> = match self.sc.lock.token_source() {
            TokenSource::SameRedis => self.lock.failover(now, true, lag),
            TokenSource::SeparateCounter | TokenSource::RandomValue => {
                self.lock.failover(now, false, lag)
            }
            TokenSource::LockService | TokenSource::Counterfactual => Vec::new(),
        };
        self.lost.extend(lost.iter().cloned());
        let next_fence = match self.sc.lock.token_source() {
            TokenSource::SeparateCounter => Fence(self.counter),
            _ => self.lock.next_fence(),
        };
        let granted = self.grants.iter().map(|g| g.fence);
        let rolled_back = trace::rolled_back(self.sc.lock.token_source(), next_fence, granted);
        let kind = EventKind::Failover {
            lost,
            next_fence,
            rolled_back,
        };
        self.emit(None, Lane::Lease, kind);
    }

    /// Storage's primary dies and its standby, `lag` ms behind, is promoted: storage goes
    /// back to the writes it has.
    fn storage_failover(&mut self, lag: Millis) {
        let lost = self.ledger.fail_over(self.now(), lag);
        let kind = EventKind::StorageFailover { lag, lost };
        self.emit(None, Lane::Storage, kind);
    }
}
