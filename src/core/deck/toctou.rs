//! The deck's `toctou` entry: Check is_held first.

use super::*;

pub(super) const ENTRY: DeckEntry = DeckEntry {
    id: "toctou",
    title: "Check is_held first",
    question: "Why not just check that you still hold the lock right before writing?",
    notes: |r| {
        let [off, strict, _] = r.balances();
        let a = r.token(0);
        vec![
            "A checks is_held and gets true, then the pause lands between the check and the write.".to_owned(),
            "Check-then-act is a TOCTOU race: true now says nothing about a moment later.".to_owned(),
            "No check placed on the client can close the gap; the pause can always land after it.".to_owned(),
            format!("Fencing off: {off}, the job ran twice. Strict: A's {a} is stale_fence, {strict}. The check has to be at the storage."),
        ]
    },
    build: Scenario::toctou,
    pushbacks: &[
        PushBack {
            question: "Check and write atomically at the resource, then.",
            answer: "Yes, that is the fix where the resource can do it: a conditional write (UPDATE … WHERE last_fence < $token) checks and applies in one step. When the lock and the data live in one database, a row lock held by the writing transaction does the same.",
            source: "seed 003 (destination enforcement); seed 000",
            shows: Some("row-lock"),
        },
        PushBack {
            question: "A monotonic clock read before the write would catch the pause.",
            answer: "A monotonic clock shows a pause only at the next read, after it happened; a pause between that read and the write goes unseen. It lets a client stop early, it cannot make a write safe.",
            source: "Kleppmann 2016",
            shows: None,
        },
    ],
};

impl Scenario {
    /// A checks `is_held` at t=4 (true), the pause lands at t=5, right after the check;
    /// the rest is the headline: B writes with 34 at t=35, A writes with 33 at t=55.
    pub fn toctou() -> Self {
        let mut a = job(
            "A",
            0,
            4,
            vec![
                Step::CheckHeld,
                Step::Work { ms: 1 },
                debit(10, None),
                Step::Work { ms: 5 },
                Step::Release,
            ],
        );
        a.pauses.push(pause(5, 50));
        job_scenario(
            "toctou",
            "Check is_held, then write",
            vec![a, headline_b()],
            100,
        )
    }
}
