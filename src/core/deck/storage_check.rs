//! The deck's `storage-check` entry: the fence checked in two statements.

use super::*;

pub(super) const ENTRY: DeckEntry = DeckEntry {
    id: "storage-check",
    title: "Fence checked in two statements",
    question: "Storage checks the token. How, exactly: what does the SQL look like?",
    notes: |r| {
        let (a, b) = (r.token(0), r.token(1));
        let [off, strict, same] = r.balances();
        let landed = |who: &str| {
            (r.strict().writes.iter())
                .find(|w| w.request.writer == who)
                .map_or(0, |w| w.at)
        };
        // The same schedule with the check in one statement.
        let one = run(&Scenario {
            check: StorageCheck::HighestToken,
            ..r.strict().scenario.clone()
        });
        let woke = (r.off().scenario.actors[0].pauses.first()).map_or(0, |p| p.end());
        let refused = (one.writes.iter())
            .find(|w| w.request.writer == "A")
            .and_then(|w| w.result.as_ref().err())
            .map_or("ok", WriteError::code);
        vec![
            "Storage checks the fence in two statements: SELECT fence FROM accounts WHERE id = $1; then, if the token is newer, UPDATE accounts SET balance = balance - 10, fence = GREATEST(fence, $token) WHERE id = $1. In READ COMMITTED, PostgreSQL's default, another transaction can commit between the two.".to_owned(),
            format!("B's debit with {b} and A's with {a} both reach storage at t={} (B's first, A's as A wakes at t={woke}): both SELECTs run before either UPDATE commits, so A's does not see {b}, and both tokens pass.", landed("B")),
            format!("Fencing on still ends at {strict} (same-epoch {same}), as off does ({off}): the job ran twice. The check was made; it was not one step with the write."),
            format!("The fix: one statement, UPDATE … SET … WHERE id = $1 AND fence < $token. An UPDATE waits for another's uncommitted UPDATE of the row, then re-checks its WHERE against the committed row: {a} is {refused}, balance {}. Or SELECT … FOR UPDATE in the write's transaction, which locks the row from the check to the COMMIT.", one.summary.final_balance),
        ]
    },
    build: Scenario::storage_check,
    pushbacks: &[
        PushBack {
            question: "Why not just lock the row for the check?",
            answer: "That works: in one transaction, SELECT … FOR UPDATE locks the account's row until COMMIT, so the other writer's SELECT … FOR UPDATE waits, then reads the committed fence and refuses the older token. It holds the row lock across a round trip; the single conditional UPDATE holds it only while it runs.",
            source: "PostgreSQL docs: SELECT, The Locking Clause",
            shows: None,
        },
        PushBack {
            question: "Would a stricter isolation level fix it?",
            answer: "Yes, with the SELECT and the UPDATE in one transaction: under REPEATABLE READ or SERIALIZABLE, an UPDATE of a row another transaction changed after this one's snapshot fails with SQLSTATE 40001, and the client must retry (and then sees the newer fence). The conditional UPDATE needs no retry loop.",
            source: "PostgreSQL docs: 13.2 Transaction Isolation",
            shows: None,
        },
    ],
};

impl Scenario {
    /// The headline's two workers, with B's debit reaching storage as A wakes: A (33, lease
    /// until t=30) pauses 5..40; B gets 34 at t=30 and sends its debit at t=35, 5 ms on the
    /// way, so it lands at t=40, first, and A's lands at t=40 too. Storage checks the fence
    /// with a SELECT and then an UPDATE. Every time is a multiple of 5 ms.
    pub fn storage_check() -> Self {
        let mut a = writer("A", 0, 10, 5);
        a.pauses.push(pause(5, 35));
        let mut b = headline_b();
        b.network_delay = 5;
        Scenario {
            check: StorageCheck::ReadThenWrite,
            ..job_scenario(
                "storage-check",
                "Fence checked in two statements",
                vec![a, b],
                100,
            )
        }
    }
}
