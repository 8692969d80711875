//! The deck's `renewal` entry: Renewal and self-cancel.

use super::*;

/// The seed of `renewal`: renewals at t=11, 20 and 31, and on waking the watchdog runs
/// first, so the failed renewal (extend answers 0) shows on screen.
pub const RENEWAL_SEED: u64 = 9;
/// `renewal`'s what-if: the same renewals, but on waking the worker runs first and writes.
pub const RENEWAL_WORKER_SEED: u64 = 11;

pub(super) const ENTRY: DeckEntry = DeckEntry {
    id: "renewal",
    title: "Renewal and self-cancel",
    question: "Long jobs outlive the TTL. How do you renew, and what if renewal fails?",
    notes: |r| {
        let [off, _, _] = r.balances();
        let b = r.token(1);
        let worker = run(&Scenario {
            seed: RENEWAL_WORKER_SEED,
            ..r.off().scenario.clone()
        });
        let fenced = run(&Scenario {
            seed: RENEWAL_WORKER_SEED,
            ..r.strict().scenario.clone()
        });
        vec![
            "A's watchdog renews at about a third of the TTL with ±25% jitter, checking ownership atomically.".to_owned(),
            format!("The pause lands after the last good renewal; the lease runs out and B takes {b} and charges."),
            format!("A wakes with its work done and a renewal overdue: worker and watchdog race. Here the watchdog runs first, the extend answers 0 and the job self-cancels ({off} off). What if… the worker runs first (another seed): its debit lands, {} off, {} strict.", worker.summary.final_balance, fenced.summary.final_balance),
            "Self-cancel on a failed renewal stops the rest of a job; it cannot stop a write that is already on its way. That needs the fence.".to_owned(),
            "Jitter matters at scale: holders renewing on a fixed schedule hit the lock server in the same millisecond.".to_owned(),
        ]
    },
    build: Scenario::renewal,
    pushbacks: &[
        PushBack {
            question: "Why not stop at the local deadline?",
            answer: "Do: stop when the lease's local deadline, less a margin, passes without a successful renewal. It covers a renewal that fails while the client runs; it cannot stop a write sent before a pause, or a packet already in flight.",
            source: "seed 003 (renewal failures)",
            shows: Some("partition"),
        },
        PushBack {
            question: "Renew more often, then.",
            answer: "More renewals shorten the gap a failed one leaves, but a whole-process pause stops the watchdog too, so no renewal rate covers it, and each renewal is load on the lock service.",
            source: "seed 004; Kleppmann 2016",
            shows: Some("renewal-herd"),
        },
    ],
};

impl Scenario {
    /// A works 60 ms (twice the TTL) while its watchdog renews every ~10 ms (jittered from
    /// `seed`); a 50 ms pause from t=35 stops the watchdog and the lease runs out at t=61.
    /// B, polling from t=45 every 16 ms, takes 34 at t=61 and debits; A wakes at t=85, its
    /// watchdog runs first, the extend script answers 0 and the job self-cancels.
    pub fn renewal() -> Self {
        let mut a = actor(
            "A",
            0,
            vec![
                Step::Acquire { retry_every: 10 },
                Step::CheckDone,
                Step::WorkRenewing { ms: 60 },
                debit(10, None),
                Step::Release,
            ],
        );
        a.pauses.push(pause(35, 50));
        let mut b = headline_b();
        b.start_at = 45;
        b.script[0] = Step::Acquire { retry_every: 16 };
        Scenario {
            seed: RENEWAL_SEED,
            ..job_scenario("renewal", "Renewal and self-cancel", vec![a, b], 120)
        }
    }
}
