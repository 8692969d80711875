//! Redlock: one lock over several independent Redis nodes. A client holds it while a
//! majority of the nodes hold its key; each node counts its TTL down on its own clock.
//! Redlock mints no fencing token: the tokens here are counterfactual, what a separate
//! linearizable counter would hand out, so the page can show what a fence would have done.

use super::clock::Millis;
use super::lease::{Acquire, Fence, Lease, LeaseLock, LockError};

/// Nodes of `nodes` that must hold a client's key for it to hold the lock.
pub fn majority(nodes: usize) -> usize {
    nodes.max(1) / 2 + 1
}

/// When a hold on a majority of `nodes` ends, given its keys' expiries on the nodes that hold
/// one: the majority-th latest. `None` when fewer than a majority hold a key.
pub fn majority_ends(nodes: usize, ends: impl IntoIterator<Item = Millis>) -> Option<Millis> {
    let mut ends: Vec<Millis> = ends.into_iter().collect();
    // Latest first, by insertion: a handful of nodes, and the library's sort would be the
    // only one in the page's first-screen wasm (about 1 KB of its gzip).
    for i in 1..ends.len() {
        let mut j = i;
        while j > 0 && ends[j - 1] < ends[j] {
            ends.swap(j - 1, j);
            j -= 1;
        }
    }
    ends.get(majority(nodes) - 1).copied()
}

/// What a refused Redlock acquire answers at `now`: the newest client holding a majority
/// (`holder`) and until when, or, with none, that nobody has a majority.
pub(crate) fn refused_by(holder: Option<Lease>, now: Millis) -> (String, Millis) {
    match holder {
        Some(l) => (l.owner, l.expires_at),
        None => ("no majority".to_owned(), now),
    }
}

/// The nodes and the counterfactual token counter.
#[derive(Debug, Clone)]
pub struct Redlock {
    nodes: Vec<LeaseLock>,
    next_fence: u64,
    /// Every grant, in order: who got which token.
    grants: Vec<(String, Fence)>,
}

impl Redlock {
    pub fn new(nodes: usize, first_fence: u64) -> Self {
        Self {
            nodes: (0..nodes.max(1)).map(|_| LeaseLock::new(1)).collect(),
            next_fence: first_fence,
            grants: Vec::new(),
        }
    }

    /// Nodes that must hold a client's key for it to hold the lock.
    pub fn majority(&self) -> usize {
        majority(self.nodes.len())
    }

    /// `SET key owner NX PX ttl` on every node in `reach`; with a majority of OKs the lock is
    /// granted, otherwise the keys it did get are deleted again. Returns the answer and the
    /// nodes that said OK.
    pub fn acquire(
        &mut self,
        now: Millis,
        key: &str,
        owner: &str,
        ttl: Millis,
        reach: &[usize],
    ) -> (Acquire, Vec<usize>) {
        let ok: Vec<usize> = reach
            .iter()
            .copied()
            .filter(|&n| {
                self.nodes
                    .get_mut(n)
                    .is_some_and(|node| node.acquire(now, key, owner, ttl).fence().is_some())
            })
            .collect();
        if ok.len() >= self.majority() {
            let fence = Fence(self.next_fence);
            self.next_fence += 1;
            self.grants.push((owner.to_owned(), fence));
            let expires_at = self.expiry(key, owner).unwrap_or(now);
            return (Acquire::Acquired { fence, expires_at }, ok);
        }
        for &n in &ok {
            let _ = self.nodes[n].release(now, key, owner);
        }
        let (holder, expires_at) = refused_by(self.holder(now, key), now);
        (Acquire::Held { holder, expires_at }, ok)
    }

    /// When `owner`'s hold on a majority ends: the majority-th latest expiry among the
    /// nodes that hold its key. `None` when it never held a majority of keys.
    fn expiry(&self, key: &str, owner: &str) -> Option<Millis> {
        let ends = (self.nodes.iter())
            .filter_map(|n| n.entry(key).filter(|l| l.owner == owner))
            .map(|l| l.expires_at);
        majority_ends(self.nodes.len(), ends)
    }

    fn lease_of(&self, owner: &str, fence: Fence, key: &str) -> Option<Lease> {
        self.expiry(key, owner).map(|expires_at| Lease {
            owner: owner.to_owned(),
            fence,
            expires_at,
        })
    }

    /// Every client holding a majority of live keys right now, in grant order.
    pub fn holders(&self, now: Millis, key: &str) -> Vec<Lease> {
        let mut out: Vec<Lease> = Vec::new();
        for (owner, fence) in self.grants.iter().rev() {
            if out.iter().any(|l| l.owner == *owner) {
                continue; // only the newest grant of each owner
            }
            if let Some(l) = self.lease_of(owner, *fence, key).filter(|l| l.is_live(now)) {
                out.push(l);
            }
        }
        out.reverse();
        out
    }

    /// The newest client holding a majority.
    pub fn holder(&self, now: Millis, key: &str) -> Option<Lease> {
        self.holders(now, key).pop()
    }

    pub fn is_held(&self, now: Millis, key: &str, owner: &str) -> bool {
        self.holders(now, key).iter().any(|l| l.owner == owner)
    }

    /// The grant with this token and when its majority ends (or ended).
    pub fn lease(&self, key: &str, fence: Fence) -> Option<Lease> {
        let (owner, _) = self.grants.iter().find(|(_, f)| *f == fence)?;
        self.lease_of(owner, fence, key)
    }

    /// Compare-and-delete on every reachable node, whether or not the caller still holds the
    /// lock (as Redis's Redlock description says a release is run). It releases the lock
    /// only if the caller held a majority; the nodes where its own key was deleted come back
    /// either way, since a minority of leftover keys is deleted too.
    pub fn release(
        &mut self,
        now: Millis,
        key: &str,
        owner: &str,
        reach: &[usize],
    ) -> (Result<Fence, LockError>, Vec<usize>) {
        let held = self
            .holders(now, key)
            .into_iter()
            .find(|l| l.owner == owner)
            .map(|l| l.fence)
            .ok_or(LockError::NotHolder);
        let deleted = reach
            .iter()
            .copied()
            .filter(|&n| {
                self.nodes
                    .get_mut(n)
                    .is_some_and(|node| node.release(now, key, owner).is_ok())
            })
            .collect();
        (held, deleted)
    }

    /// Extends on every reachable node; held only while a majority took the extension.
    /// Returns when the hold ends, and the nodes that took it (their keys moved, whether or
    /// not they were a majority).
    pub fn extend(
        &mut self,
        now: Millis,
        key: &str,
        owner: &str,
        ttl: Millis,
        reach: &[usize],
    ) -> (Result<Millis, LockError>, Vec<usize>) {
        let ok: Vec<usize> = (reach.iter().copied())
            .filter(|&n| {
                self.nodes
                    .get_mut(n)
                    .is_some_and(|node| node.extend(now, key, owner, ttl).is_ok())
            })
            .collect();
        let held = match ok.len() >= self.majority() {
            true => self.expiry(key, owner).ok_or(LockError::NotHolder),
            false => Err(LockError::NotHolder),
        };
        (held, ok)
    }

    /// Unconditional `DEL` on every reachable node.
    pub fn delete(&mut self, now: Millis, key: &str, reach: &[usize]) {
        for &n in reach {
            if let Some(node) = self.nodes.get_mut(n) {
                node.delete(now, key);
            }
        }
    }

    /// Node `node`'s clock steps forward by `by`: the keys it holds lose that much time.
    pub fn clock_jump(&mut self, now: Millis, by: Millis, node: usize) {
        if let Some(n) = self.nodes.get_mut(node) {
            n.clock_jump(now, by);
        }
    }

    /// The token the next grant would carry.
    pub fn next_fence(&self) -> Fence {
        Fence(self.next_fence)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kleppmann's Redlock counterexample: A locks nodes 0, 1, 2 (3 and 4 unreachable),
    /// node 2's clock jumps and its key expires, B locks nodes 2, 3, 4: both got a majority.
    #[test]
    fn a_clock_jump_on_a_shared_node_lets_two_clients_in() {
        let mut r = Redlock::new(5, 33);
        let (a, ok) = r.acquire(0, "k", "A", 30, &[0, 1, 2]);
        assert_eq!((a.fence(), ok), (Some(Fence(33)), vec![0, 1, 2]));
        let (refused, ok) = r.acquire(5, "k", "B", 30, &[2, 3, 4]);
        assert_eq!(
            (refused.fence(), ok),
            (None, vec![3, 4]),
            "2 of 5 is no majority"
        );
        r.clock_jump(10, 25, 2);
        assert!(
            !r.is_held(10, "k", "A"),
            "A's keys on 0 and 1 are no majority"
        );
        assert_eq!(r.lease("k", Fence(33)).map(|l| l.expires_at), Some(10));
        let (b, ok) = r.acquire(15, "k", "B", 30, &[2, 3, 4]);
        assert_eq!((b.fence(), ok), (Some(Fence(34)), vec![2, 3, 4]));
        assert_eq!(r.holder(15, "k").map(|l| l.owner), Some("B".to_owned()));
        assert_eq!(r.lease("k", Fence(33)), None, "node 3 now holds B's key");
    }

    /// An extend moves the key on each node that still holds the caller's key, and says
    /// which: those are the keys the replay's fold moves (an extend's event names them). It
    /// holds with a majority, and does not without one, though the minority's keys moved.
    #[test]
    fn an_extend_says_which_nodes_took_it() {
        let mut r = Redlock::new(3, 1);
        let (_, ok) = r.acquire(0, "k", "A", 30, &[0, 1, 2]);
        assert_eq!(ok, vec![0, 1, 2]);
        r.delete(5, "k", &[2]);
        assert_eq!(r.extend(10, "k", "A", 30, &[0, 1, 2]), (Ok(40), vec![0, 1]));
        r.clock_jump(15, 25, 0);
        assert_eq!(
            r.lease("k", Fence(1)).map(|l| l.expires_at),
            Some(15),
            "node 0's key ran out: node 1's alone is no majority"
        );
        assert_eq!(
            r.extend(20, "k", "A", 30, &[1, 2]),
            (Err(LockError::NotHolder), vec![1])
        );
    }

    /// The majority-th latest expiry, as a sort would pick it, whatever the keys' order.
    #[test]
    fn majority_ends_is_the_majority_th_latest() {
        let mut seed = crate::core::clock::SplitMix64::new(11);
        for n in 0..40_u64 {
            let ends: Vec<Millis> = (0..n % 8).map(|_| seed.next_u64() % 50).collect();
            let nodes = 5;
            let mut sorted = ends.clone();
            sorted.sort_unstable_by(|a, b| b.cmp(a));
            assert_eq!(
                majority_ends(nodes, ends.iter().copied()),
                sorted.get(majority(nodes) - 1).copied(),
                "{ends:?}"
            );
        }
    }
}
