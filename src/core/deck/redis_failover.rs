//! The deck's `redis-failover` entry: Redis failover.

use super::*;

pub(super) const ENTRY: DeckEntry = DeckEntry {
    id: "redis-failover",
    title: "Redis failover",
    question: "What if the Redis primary fails over? Use Redis replication for HA?",
    notes: |r| {
        let [off, strict, same] = r.balances();
        let (a, b) = (r.token(0), r.token(1));
        vec![
            "The primary acknowledges A's SET, then crashes before replicating it; the promoted replica has no key.".to_owned(),
            "B acquires the same key: the lock service itself has now granted it twice, and both grants are unexpired: not just two believers.".to_owned(),
            format!("The token came from INCR on the same Redis, so the counter rolled back too: A has {a} and B gets {b}. Storage cannot tell them apart."),
            format!("Off: {off}. Strict refuses the second equal token ({strict}) — by luck of arrival order. Same-epoch admits both: {same}, the job ran twice."),
            {
                let etcd = run(&Scenario {
                    lock: LockKind::SERVICE,
                    ..Scenario::redis_failover()
                });
                format!(
                    "What if… tokens from etcd / ZooKeeper: lease and token survive the leader change, B waits and finds the job done ({} under every policy). That fixes the failover only: a pause or a partition still needs the fence.",
                    etcd.summary.final_balance
                )
            },
        ]
    },
    build: Scenario::redis_failover,
    pushbacks: &[
        PushBack {
            question: "Use WAIT 1, or check the replicas before trusting the lock.",
            answer: "WAIT blocks until that many replicas acknowledge, but Redis's docs say it does not make Redis strongly consistent: a failover can still promote a replica without the lock, and a WAIT that times out leaves the write on the primary, not undone. It narrows the window; the fence still decides.",
            source: "Redis docs: WAIT",
            shows: None,
        },
        PushBack {
            question: "Then use Redlock over independent masters.",
            answer: "Redlock assumes bounded clock drift and pauses, and still mints no token, so a paused holder writes as before. Tokens from a consensus store (an etcd revision, a ZooKeeper zxid) survive a leader change.",
            source: "Kleppmann 2016; antirez 2016, Is Redlock safe?",
            shows: Some("clock-jump"),
        },
    ],
};

impl Scenario {
    /// The primary acknowledges A's lock (33, until t=30) and fails over at t=5 without
    /// having replicated it, nor the INCR of its token; B acquires at t=8 and gets 33 again
    /// from the rolled-back counter, debits at t=10; A debits with 33 at t=12. Two live
    /// leases from t=8 to t=30. With a lock service (`LockKind::Service`) nothing is lost.
    pub fn redis_failover() -> Self {
        let a = writer("A", 0, 12, 5);
        let b = writer("B", 8, 2, 15);
        Scenario {
            faults: vec![FaultAt {
                at: 5,
                fault: Fault::Failover { lag: None },
            }],
            ..job_scenario("redis-failover", "Redis failover", vec![a, b], 60)
        }
    }
}
