//! The deck's `storage-failover` entry: storage fails over to an asynchronous standby that
//! never got the newest fence.

use super::*;

/// How far the asynchronous standby is behind its primary (ms): it has every commit made at
/// least this long before the primary dies.
pub const STANDBY_LAG: Millis = 15;

pub(super) const ENTRY: DeckEntry = DeckEntry {
    id: "storage-failover",
    title: "Storage fails over",
    question: "Storage keeps the highest token. What if storage itself fails over?",
    notes: |r| {
        let (a, b) = (r.token(0), r.token(1));
        let [off, strict, same] = r.balances();
        let sc = &r.strict().scenario;
        let (died, lag) = sc.storage_crash().unwrap_or_default();
        let landed = |t: &Trace, who: &str| {
            (t.writes.iter())
                .find(|w| w.request.writer == who)
                .map(|w| (w.at, w.result.as_ref().err().map_or("ok", WriteError::code)))
                .unwrap_or((0, "never sent"))
        };
        let (b_at, _) = landed(r.strict(), "B");
        let (a_at, a_result) = landed(r.strict(), "A");
        // The same schedule with synchronous commit: the standby has every acknowledged commit.
        let mut sync = sc.clone();
        sync.faults.retain(|f| !matches!(f.fault, Fault::StorageFailover { .. }));
        sync.add_fault(died, Fault::StorageFailover { lag: 0 });
        let sync = run(&sync);
        let (_, a_sync) = landed(&sync, "A");
        vec![
            format!("Storage is a PostgreSQL primary with an asynchronous streaming standby, {lag} ms behind: a COMMIT returns once the primary has flushed its WAL; the standby replays it later."),
            format!("B's debit with {b} commits on the primary at t={b_at}, and B is told OK. The primary dies at t={died}, before the standby has it; the standby is promoted (pg_promote) without B's debit, and without {b} as the account's highest token."),
            format!("A wakes and its debit with {a} reaches the promoted standby at t={a_at}: {a_result}. Fencing on ends at {strict} (same-epoch {same}, off {off}): A's stale write is in, and B's acknowledged one is gone. The fence is only as durable as the row it is kept in."),
            format!("The fix: synchronous commit for the fence, synchronous_standby_names = 'standby1' and synchronous_commit = on (or remote_apply): a COMMIT returns only once the standby has flushed it. The same run with the standby in step: A's {a} is {a_sync}, balance {}.", sync.summary.final_balance),
            "What it costs: every fenced write waits a round trip to the standby; and with the standby down, commits wait, because PostgreSQL does not fall back to asynchronous by itself. An operator or a failover manager that clears synchronous_standby_names to keep writing reopens the window.".to_owned(),
        ]
    },
    build: Scenario::storage_failover,
    pushbacks: &[
        PushBack {
            question: "Can't the writer time out the wait for the standby, and roll back?",
            answer: "No: a COMMIT waiting for its synchronous standby has already committed on the primary. Cancelling the wait (pg_cancel_backend) ends it with a warning that the transaction committed locally but might not have reached the standby: the write stays; only its acknowledgement was held back.",
            source: "PostgreSQL docs: High Availability, Synchronous Replication; src/backend/replication/syncrep.c",
            shows: None,
        },
        PushBack {
            question: "What does synchronous replication cost when all is well?",
            answer: "Each commit waits at least the round trip from primary to standby; read-only transactions and rollbacks do not wait. synchronous_commit can be set per transaction, so only the fenced writes need pay it, with the rest left asynchronous.",
            source: "PostgreSQL docs: High Availability, Synchronous Replication; synchronous_commit",
            shows: None,
        },
        PushBack {
            question: "And if the lock service fails over instead?",
            answer: "Then the lock, not storage, forgets: a Redis replica promoted without the newest SET grants the lock again. A consensus store (etcd, ZooKeeper) commits a grant on a majority first.",
            source: "Redis docs: Replication (asynchronous); Kleppmann 2016",
            shows: Some("redis-failover"),
        },
    ],
};

impl Scenario {
    /// The headline's two workers over a storage that fails over: A (33, lease until t=30)
    /// pauses 5..55; B gets 34 at t=30 and its debit commits at t=35; storage's primary dies
    /// at t=45, and its standby, [`STANDBY_LAG`] ms behind, is promoted without it; A's debit
    /// lands at t=55 on the promoted standby.
    pub fn storage_failover() -> Self {
        let mut a = writer("A", 0, 10, 5);
        a.pauses.push(pause(5, 50));
        let mut sc = job_scenario(
            "storage-failover",
            "Storage fails over",
            vec![a, headline_b()],
            100,
        );
        sc.add_fault(45, Fault::StorageFailover { lag: STANDBY_LAG });
        sc
    }
}
