//! The deck's `raft-partition` entry: the lock service itself partitioned. A 3-member Raft
//! cluster keeps one holder per key on its majority side, and still cannot stop the holder
//! cut off with the minority from believing.

use super::*;

pub(super) const ENTRY: DeckEntry = DeckEntry {
    id: "raft-partition",
    title: "The lock service partitioned",
    question: "etcd runs Raft on three members. Does consensus keep one holder at a time under a partition?",
    notes: |r| {
        let [off, strict, _] = r.balances();
        let (a, b) = (r.token(0), r.token(1));
        let t = r.off();
        let p = t.scenario.partitioned().unwrap_or(Partition { actor: 0, start: 0, end: 0 });
        let at = |who: &str, want: fn(&EventKind) -> bool| {
            t.events
                .iter()
                .find(|e| want(&e.kind) && e.actor.as_deref().is_none_or(|x| x == who))
                .map_or(0, |e| e.at)
        };
        let refused = at("A", |k| matches!(k, EventKind::LockNoLeader { .. }));
        let expired = at("A", |k| matches!(k, EventKind::LeaseExpired { .. }));
        let granted = at("B", |k| matches!(k, EventKind::Acquired { .. }));
        let sent = at("A", |k| matches!(k, EventKind::WriteSent { .. }));
        let landed = t.writes.iter().find(|w| w.request.writer == "A").map_or(0, |w| w.at);
        let learned = at("A", |k| matches!(k, EventKind::LockTimedOut { .. }));
        vec![
            format!("A's client talks to member 1 of a 3-member etcd cluster. From t={} to t={} member 1 is cut off from members 2 and 3: the minority side. A's keep-alive at t={refused} reaches member 1, which has no leader: it answers \"etcdserver: no leader\", and the client keeps retrying its keep-alive. (A client given all three endpoints would fail over to the majority.)", p.start, p.end),
            format!("The majority (members 2 and 3, with the leader) goes on: A's lease ({a}) runs out there at t={expired}, and B, talking to them, gets {b} at t={granted}. Consensus did its job: the majority never had two holders."),
            format!("A's client learns at t={learned}, its lease deadline: no keep-alive answered within the TTL, so clientv3 closes the keep-alive and Session.Done() fires. But A's debit left at t={sent}, after its last check, and takes until t={landed} to reach storage: no check covers the time after it. Fencing off: {off}, the job ran twice. Strict: storage has seen {b}, A's {a} is stale_fence ({strict})."),
            "Jepsen's etcd 3.4.3 analysis: etcd locks are leases, and a lease holder paused or cut off can keep acting after the lease is gone. Raft makes the grant and the token durable; it cannot reach into the holder. The fence at storage is what saves the write.".to_owned(),
            "The minority can neither grant nor renew, so a holder on it stops at its lease deadline at best (Session.Done(), or partition's deadline check); a write already sent, or a pause after the last check, gets past that. The resource should check the token: the revision of the lock key, minted by the same commit that granted it.".to_owned(),
        ]
    },
    build: Scenario::raft_partition,
    pushbacks: &[
        PushBack {
            question: "etcd's client notices the lost lease by itself.",
            answer: "clientv3 closes the keep-alive when no answer comes within the TTL, and Session.Done() fires then. A client that did not check Done() right before writing still writes, and no check covers a pause after it: the revision fence decides.",
            source: "etcd docs: clientv3 concurrency (Session)",
            shows: None,
        },
        PushBack {
            question: "A minority member just answers nothing?",
            answer: "It answers \"etcdserver: no leader\" to streams opened WithRequireLeader, as clientv3's lease keep-alives are; a plain write there waits and fails with \"etcdserver: request timed out\". A client given several endpoints fails over to the majority side. A stopped or unreachable member answers nothing.",
            source: "etcd docs: failure modes; clientv3 WithRequireLeader (lease keep-alives)",
            shows: None,
        },
    ],
};

impl Scenario {
    /// `partition`'s schedule on etcd: A (revision token 33, lease until t=30) talks to
    /// member 1, which is cut off from members 2 and 3 from t=15 to t=65; its renewal at
    /// t=10 commits (lease until t=40), the one at t=20 does not. etcd revokes a lapsed
    /// lease on a sweep every 500 ms (5 ms at the replay's scale), so B polls from t=17 and
    /// asks at 37 and 47, clear of the lease's end at 40 either side: it gets 34 at 47 and
    /// debits at 49. Member 1 answers A's renewal at t=20 with "no leader"; A's debit leaves at
    /// 38, before its client learns at 40 (its lease deadline, Session.Done()), and takes 15 ms
    /// to reach storage, landing at 53 after B's.
    pub fn raft_partition() -> Self {
        let partition = Scenario::partition();
        // The same window, cut between A's member and the other two.
        let faults = (partition.partitioned().into_iter())
            .map(|p| FaultAt::cut_from_lock(Node::MemberOf(p.actor), p.start, p.end))
            .collect();
        let mut sc = Scenario {
            id: "raft-partition".to_owned(),
            title: "The lock service partitioned".to_owned(),
            lock: LockKind::SERVICE,
            faults,
            ..partition
        };
        sc.actors[1] = writer("B", 17, 2, 3);
        let a = &mut sc.actors[0];
        a.script[2] = Step::WorkRenewing { ms: 38 };
        a.lock_timeout = Some(35);
        a.network_delay = 15;
        sc
    }
}
