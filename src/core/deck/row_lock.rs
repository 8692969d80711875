//! The deck's `row-lock` entry: SELECT … FOR UPDATE as the lock.

use super::*;

pub(super) const ENTRY: DeckEntry = DeckEntry {
    id: "row-lock",
    title: "SELECT … FOR UPDATE as the lock",
    question: "Why not lock the row itself in Postgres, with SELECT … FOR UPDATE?",
    notes: |r| {
        let [off, strict, same] = r.balances();
        let sc = r.strict().scenario.clone();
        let ttl = sc.lease_ttl;
        let t = r.strict();
        let ended = t
            .events
            .iter()
            .find(|e| matches!(e.kind, EventKind::LeaseExpired { .. }))
            .map_or(0, |e| e.at);
        let refused = t
            .writes
            .iter()
            .find(|w| !w.accepted())
            .map_or_else(String::new, |w| format!("at t={}", w.at));
        let no_timeout = run(&Scenario {
            lock: LockKind::Row(RowLock {
                idle_timeout: false,
            }),
            ..sc.clone()
        });
        let slow = run(&Scenario::row_lock_slow_job(&sc));
        let slow_failed = slow
            .writes
            .iter()
            .find(|w| !w.accepted())
            .map_or_else(String::new, |w| w.request.writer.clone());
        let slow_work = Scenario::row_lock_slow_job(&sc).actors[0]
            .script
            .iter()
            .find_map(|s| match s {
                Step::Work { ms } => Some(*ms),
                _ => None,
            })
            .unwrap_or(0);
        let no_timeout_wait = row_lock_wait(&no_timeout, "B");
        let commit = no_timeout
            .events
            .iter()
            .find(|e| {
                e.actor.as_deref() == Some("A") && matches!(e.kind, EventKind::Released { .. })
            })
            .map_or(0, |e| e.at);
        vec![
            format!("The lock is the account's own row: A runs SELECT … FOR UPDATE in the PostgreSQL that holds the balance and freezes in a GC pause; B's SELECT … FOR UPDATE is not refused, it waits in the row's lock queue. With idle_in_transaction_session_timeout = {ttl} ms, PostgreSQL terminates A's session at t={ended} ({IDLE_IN_TRANSACTION_TIMEOUT}), rolls its transaction back and releases the row. B's statement returns after {} ms; B finds the job not done, debits and commits ({strict}).", row_lock_wait(t, "B")),
            format!("A's UPDATE ({refused}) fails: its transaction no longer exists. That is what stops it, not a token, so every fencing policy ends the same: off {off}, strict {strict}, same-epoch {same}. Lock and data in one system: losing the lock loses the transaction."),
            format!("Costs. With no timeout nothing ends A's hold: B waits {no_timeout_wait} ms, until A wakes and commits at t={commit}, then finds the job done ({}). The holder keeps a connection and the row lock for the whole job, blocking every other writer of that row (plain reads still run), and its open transaction holds back VACUUM.", no_timeout.summary.final_balance),
            format!("The timeout is itself a lease: a healthy job that works {slow_work} ms between statements is killed the same way ({slow_failed}'s UPDATE fails; balance {}). And it only covers writes in this database: a payment API call cannot be rolled back (claim-row).", slow.summary.final_balance),
            format!("No held lock at all, when one statement can check and write: UPDATE accounts SET balance = balance − 10, order_1_charged = true WHERE id = '{}' AND NOT order_1_charged. The row lock lasts only that statement, and a second run matches no row (UPDATE 0): a no-op.", sc.resource),
        ]
    },
    build: Scenario::row_lock,
    pushbacks: &[
        PushBack {
            question: "The pool retries the UPDATE on a new connection.",
            answer: "Then the UPDATE runs outside the terminated transaction, without the row lock, as a statement of its own: the stale write lands after all. Retry the whole transaction (BEGIN, SELECT … FOR UPDATE, re-read, write), never one statement.",
            source: "PostgreSQL docs: 25P03 idle_in_transaction_session_timeout",
            shows: None,
        },
        PushBack {
            question: "Why not lock_timeout instead?",
            answer: "lock_timeout bounds how long a statement waits for a lock, here B's wait for the row; idle_in_transaction_session_timeout ends a session idle inside a transaction, here A's. One limits the queue, the other frees a stalled holder's lock.",
            source: "PostgreSQL docs: lock_timeout, idle_in_transaction_session_timeout",
            shows: None,
        },
    ],
};

/// How long `actor` waited in the row's lock queue in `t`: from its blocked `SELECT … FOR
/// UPDATE` to the grant (0 if it never waited).
pub fn row_lock_wait(t: &Trace, actor: &str) -> Millis {
    let mine = |e: &&super::super::trace::TraceEvent| e.actor.as_deref() == Some(actor);
    let asked = t
        .events
        .iter()
        .filter(mine)
        .find(|e| matches!(e.kind, EventKind::LockWait { .. }));
    let granted = t
        .events
        .iter()
        .filter(mine)
        .find(|e| matches!(e.kind, EventKind::Acquired { .. }));
    match (asked, granted) {
        (Some(a), Some(g)) => g.at.saturating_sub(a.at),
        _ => 0,
    }
}

impl Scenario {
    /// The headline's schedule with the lock a PostgreSQL row lock on the account's own row
    /// ([`RowLock`]), `idle_in_transaction_session_timeout` 30 ms: A locks the row at t=0,
    /// reads the job's status and pauses 5..55; B's `SELECT … FOR UPDATE` at t=20 waits. At
    /// t=30 the server terminates A's session and B's statement returns; B debits and commits
    /// at 35. A wakes at 55 and its UPDATE fails: its session is gone.
    pub fn row_lock() -> Self {
        let worker = |name: &str, start_at: Millis, work: Millis| {
            job(name, start_at, work, vec![debit(10, None), Step::Release])
        };
        let mut a = worker("A", 0, 10);
        a.pauses.push(pause(5, 50));
        Scenario {
            lock: LockKind::Row(RowLock { idle_timeout: true }),
            ..job_scenario(
                "row-lock",
                "SELECT … FOR UPDATE as the lock",
                vec![a, worker("B", 20, 5)],
                100,
            )
        }
    }

    /// `row-lock`'s what-if for the notes: `sc` without A's pause, A working 40 ms (longer
    /// than the idle timeout) between its status read and its UPDATE: a healthy slow job.
    pub fn row_lock_slow_job(sc: &Scenario) -> Self {
        let mut sc = sc.clone();
        let a = &mut sc.actors[0];
        a.pauses.clear();
        for s in &mut a.script {
            if let Step::Work { ms } = s {
                *ms = 40;
            }
        }
        sc
    }
}
