//! The deck's `sequencer` entry: Sequencer check with the lock service.

use super::*;

pub(super) const ENTRY: DeckEntry = DeckEntry {
    id: "sequencer",
    title: "Sequencer check with the lock service",
    question: "Storage hasn't seen the newer token yet. Can it still refuse the stale holder?",
    notes: |r| {
        let (a, b) = (r.token(0), r.token(1));
        let [off, strict, same] = r.balances();
        let at = |t: &Trace, who: &str| {
            t.writes
                .iter()
                .find(|w| w.request.writer == who)
                .map_or(0, |w| w.at)
        };
        let granted = r
            .strict()
            .events
            .iter()
            .find(|e| {
                matches!(e.kind, EventKind::Acquired { .. }) && e.actor.as_deref() == Some("B")
            })
            .map_or(0, |e| e.at);
        let code = |t: &Trace| {
            t.writes
                .iter()
                .find(|w| w.request.writer == "A")
                .map_or("ok", |w| {
                    w.result.as_ref().err().map_or("ok", WriteError::code)
                })
        };
        // The same schedule with only the highest-token check.
        let plain = |t: &Trace| {
            run(&Scenario {
                check: StorageCheck::HighestToken,
                ..t.scenario.clone()
            })
        };
        let (p_strict, p_same) = (plain(r.strict()), plain(r.same_epoch()));
        let woke = r.off().scenario.actors[0]
            .pauses
            .first()
            .map_or(0, |p| p.end());
        let expired = r
            .off()
            .events
            .iter()
            .find(|e| matches!(e.kind, EventKind::LeaseExpired { .. }))
            .map_or(0, |e| e.at);
        let word = |c: &'static str| if c == "ok" { "accepted" } else { c };
        let both_took = code(&p_strict) == "ok" && code(&p_same) == "ok";
        vec![
            format!("A's GC pause ends at t={woke} this time: A's lease (token {a}) ran out at t={expired} and B got {b} at t={granted}, but A's debit reaches storage at t={}, before B's at t={}.", at(r.off(), "A"), at(r.off(), "B")),
            format!(
                "Highest token alone, this schedule: A's {a} is {} under strict ({}) and {} under same-epoch ({}).{}",
                word(code(&p_strict)),
                p_strict.summary.final_balance,
                word(code(&p_same)),
                p_same.summary.final_balance,
                if both_took { format!(" Storage has not seen {b} yet, so nothing tells it A was superseded; B's debit lands too.") } else { String::new() }
            ),
            format!("Sequencer check: storage also asks the lock service whether A's lease is still the live one. B holds {b}, so A's {a} is {} (strict {strict}, same-epoch {same}), though storage never saw {b}. Fencing off checks nothing, sequencer included: {off}.", code(r.strict())),
            "The price: a round trip to the lock service per protected write (or a session keeping a cache of the lock coherent, as Chubby's servers may), and a write now fails whenever storage cannot reach the lock service.".to_owned(),
            "The model checks and applies at one instant. A real resource applies a moment after the answer, and a lease that lapses in between still lands: the check narrows the window to that gap. A check in the write's own transaction (an etcd Txn comparing the lock key's create revision, when etcd is the resource) has none.".to_owned(),
        ]
    },
    build: Scenario::sequencer,
    pushbacks: &[
        PushBack {
            question: "Then make the lock service the resource.",
            answer: "Yes, when the data fits: an etcd transaction can compare the lock key's revision and write the data in one atomic step, so nothing separates check and write. The lock service is then your database, with its size and throughput limits.",
            source: "etcd docs: transactions (Txn)",
            shows: None,
        },
    ],
};

impl Scenario {
    /// The headline's race with A waking after B's grant but before B's debit, tokens from
    /// the lock service, and storage checking each write's sequencer with it: A (33, lease
    /// until t=30) pauses 5..45; B gets 34 at t=30 and works 20 ms, so A's 33 reaches
    /// storage at t=45, before storage has seen 34 (B's debit comes at t=50). The
    /// highest-token check alone takes it; the sequencer check does not. Every time is a
    /// multiple of 5 ms, and B holds the lock when A writes even if it gets it one retry
    /// later (t=40): etcd sweeps expired leases only about every 500 ms, 5 ms on its replay.
    pub fn sequencer() -> Self {
        let mut a = writer("A", 0, 10, 5);
        a.pauses.push(pause(5, 40));
        Scenario {
            lock: LockKind::SERVICE,
            check: StorageCheck::Sequencer,
            ..job_scenario(
                "sequencer",
                "Sequencer check with the lock service",
                vec![a, writer("B", 20, 20, 5)],
                100,
            )
        }
    }
}
