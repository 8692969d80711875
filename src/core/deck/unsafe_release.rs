//! The deck's `unsafe-release` entry: Release by GET then DEL.

use super::*;

pub(super) const ENTRY: DeckEntry = DeckEntry {
    id: "unsafe-release",
    title: "Release by GET then DEL",
    question: "How do you release the lock? Is GET, compare, then DEL fine?",
    notes: |r| {
        let [off, strict, _] = r.balances();
        let (b, c) = (r.token(1), r.token(2));
        vec![
            format!("A GETs the key, sees its own value, then pauses before the DEL; its lease expires and B takes {b} and starts order 1."),
            format!("A wakes and DELs unconditionally: it deletes B's live lease, so C takes {c} while B still works. The harm: two holders at once, B and C, both running order 1."),
            format!("Off: both charge ({off}), a double charge. Fencing on: C wrote with {c} first, so B's late {b} is stale_fence ({strict}): the fence contains the damage, it does not restore B's lease."),
            {
                let cad = run(&Scenario {
                    release: ReleaseMode::CompareAndDelete,
                    ..Scenario::unsafe_release()
                });
                format!(
                    "What if… Release: compare-and-delete. One atomic script: A's release completes before its pause, and a late one would see B's value and delete nothing. No conflict, {} under every policy.",
                    cad.summary.final_balance
                )
            },
        ]
    },
    build: Scenario::unsafe_release,
    pushbacks: &[
        PushBack {
            question: "Is GET-then-PEXPIRE for renewal the same bug?",
            answer: "Yes: between the GET and the PEXPIRE the key can expire and go to another client, and the PEXPIRE then extends their lease. Renew with one Lua script that compares the value and runs PEXPIRE, as release compares and deletes.",
            source: "seed 003 (atomic renewal); Redis docs: distributed locks",
            shows: Some("renewal"),
        },
        PushBack {
            question: "So compare-and-delete makes the lock safe?",
            answer: "It makes release safe: no client deletes a successor's lease. A holder whose lease ran out while it worked still writes; that needs the fence.",
            source: "Redis docs: SET (the unlock script)",
            shows: Some("gc-pause"),
        },
    ],
};

impl Scenario {
    /// GET-then-DEL release: A finishes other work and GETs its own value at t=5; the pause
    /// (6..54) lands before the DEL. B takes 34 at t=30, finds order 1 not charged and
    /// works until t=59; A's DEL at t=54 deletes B's lease, so C (polling from t=48 every
    /// 8 ms) takes 35 at t=56, finds order 1 still not charged and charges at t=57: two
    /// holders at once, both running the same job. Clients that depend on each other act
    /// at least 2 ms apart, so the replay on real servers sees the same order. Set
    /// `release` to `CompareAndDelete` for the safe version.
    pub fn unsafe_release() -> Self {
        let mut a = actor(
            "A",
            0,
            vec![
                Step::Acquire { retry_every: 10 },
                Step::Work { ms: 5 },
                Step::Release,
            ],
        );
        a.pauses.push(pause(6, 48));
        let b = job("B", 30, 29, vec![debit(10, None), Step::Release]);
        let c = actor(
            "C",
            48,
            vec![
                Step::Acquire { retry_every: 8 },
                Step::CheckDone,
                Step::Work { ms: 1 },
                debit(10, None),
                Step::Work { ms: 3 },
                Step::Release,
            ],
        );
        Scenario {
            release: ReleaseMode::GetThenDel,
            ..job_scenario(
                "unsafe-release",
                "Release by GET then DEL",
                vec![a, b, c],
                100,
            )
        }
    }
}
