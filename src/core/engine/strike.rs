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
        self.lock.clock_jump(now, by, node);
        let shortened = before.and_then(|old| {
            let ends_at = self
                .lock
                .lease(res, old.fence)
                .map_or(now, |l| l.expires_at);
            if ends_at == old.expires_at {
                return None; // the jump did not touch this lease (another Redlock node)
            }
            self.push(ends_at, Class::Expiry, Pending::Expiry { fence: old.fence });
            Some(Shortened {
                owner: old.owner,
                fence: old.fence,
                granted_until: old.expires_at,
                ends_at,
            })
        });
        self.emit(
            None,
            Lane::Lease,
            EventKind::LockClockJumped { by, shortened },
        );
    }

    /// Whether a clock jump cut lease `fence` short: its expiry is then the jump's doing.
    pub(super) fn cut_short_by_a_jump(&self, fence: Fence) -> bool {
        self.events.iter().any(|e| {
            matches!(&e.kind, EventKind::LockClockJumped { shortened: Some(s), .. } if s.fence == fence)
        })
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
