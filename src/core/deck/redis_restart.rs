//! The deck's `redis-restart` entry: Redis's own distributed-lock page, "crash recovery
//! and fsync": an acknowledged lock that never reached disk, and a restart that grants it
//! again.

use super::*;

pub(super) const ENTRY: DeckEntry = DeckEntry {
    id: "redis-restart",
    title: "Redis restarts without fsync",
    question: "No replicas then: what if the one Redis restarts?",
    notes: |r| {
        let [off, strict, same] = r.balances();
        let (a, b) = (r.token(0), r.token(1));
        let t = r.off();
        let crash = t.scenario.failover_at().unwrap_or(0);
        let granted = t
            .events
            .iter()
            .find(|e| {
                e.actor.as_deref() == Some("B") && matches!(e.kind, EventKind::Acquired { .. })
            })
            .map_or(0, |e| e.at);
        let etcd = run(&Scenario {
            lock: LockKind::SERVICE,
            ..Scenario::redis_restart()
        });
        vec![
            format!("A's acquire script answers OK at t=0 with token {a}. Redis answers from memory: with no AOF nothing is written, and with appendfsync everysec the AOF is fsynced about once a second."),
            format!("At t={crash} redis-server is killed (kill -9) and restarts from its last snapshot, taken before the run: no lock key, and the fence counter back too. B acquires at t={granted} and gets {b} again while A's lease still runs: the lock was granted twice."),
            format!("Off: {off}. Strict refuses the second equal token ({strict}), by luck of arrival order. Same-epoch admits both: {same}, the job ran twice."),
            "With appendfsync everysec a kill -9 alone loses nothing already handed to the kernel; a power loss or kernel crash within that second does. appendfsync always makes each acknowledged write durable, at a cost per write. Redis's lock page adds delayed restarts: keep a crashed node down longer than the longest TTL.".to_owned(),
            format!("What if… tokens from etcd / ZooKeeper: a grant is committed to a majority of fsynced logs before OK, so a restart loses nothing; B waits and finds the job done ({}). That fixes the restart only: a pause or a partition still needs the fence.", etcd.summary.final_balance),
        ]
    },
    build: Scenario::redis_restart,
    pushbacks: &[
        PushBack {
            question: "Turn on appendfsync everysec.",
            answer: "everysec survives a kill -9, since the kernel already has the writes, but an OS crash or power loss can lose about a second of acknowledged writes: a lock granted in that second is granted again. appendfsync always closes that, at a cost per write.",
            source: "redis.conf: appendfsync",
            shows: None,
        },
        PushBack {
            question: "Then delay the restart.",
            answer: "Redis's lock page suggests it: a node kept down longer than the longest TTL comes back after every lease it forgot has expired. Something must enforce the delay, and it does nothing for a pause.",
            source: "Redis docs: distributed locks (crash recovery)",
            shows: Some("gc-pause"),
        },
    ],
};

impl Scenario {
    /// One Redis, no replica: A's lock (33, until t=30) is acknowledged at t=0 and never
    /// written to disk; at t=5 redis-server is killed and restarts from a snapshot taken
    /// before the run (counter at 32, no key). B acquires at t=15 and gets 33 again, debits
    /// at t=17; A debits with 33 at t=20. Two live leases from t=15 to t=30.
    pub fn redis_restart() -> Self {
        let a = writer("A", 0, 20, 5);
        let b = writer("B", 15, 2, 15);
        Scenario {
            faults: vec![FaultAt {
                at: 5,
                fault: Fault::Restart { lag: None },
            }],
            ..job_scenario(
                "redis-restart",
                "Redis restarts without fsync",
                vec![a, b],
                60,
            )
        }
    }
}
