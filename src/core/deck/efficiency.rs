//! The deck's `efficiency` entry: Efficiency or correctness?.

use super::*;

/// The value every rebuild of `efficiency`'s report writes: recomputed from the same input.
pub const REPORT: &str = "12 orders";

pub(super) const ENTRY: DeckEntry = DeckEntry {
    id: "efficiency",
    title: "Efficiency or correctness?",
    question: "Is your lock for efficiency or for correctness?",
    notes: |r| {
        let (a, b) = (r.token(0), r.token(1));
        let off = &r.off().summary;
        let report = story::final_value(r.off());
        let headline = runs(find("gc-pause").expect("gc-pause is in the deck"));
        vec![
            "Kleppmann's first question: is the lock for efficiency (a second run only wastes work) or for correctness (a second run corrupts data)?".to_owned(),
            format!("Same schedule as the headline: A takes {a}, freezes in a GC pause past its TTL, B takes {b}, finds the report not built yet and rebuilds it; A wakes and rebuilds it too."),
            if off.duplicate_runs > 0 {
                format!("Fencing off: {} rebuilds landed, the job ran twice, and the row holds \"{report}\" either way: {} of them rewrote the value already there. Wasted work, no harm.", off.accepted_writes, off.harmless_reruns)
            } else {
                format!("Fencing off: only one rebuild landed (\"{report}\"); nothing ran twice in this schedule.")
            },
            format!("Contrast gc-pause: the same pause with a debit is a double charge, {} instead of {}. The job, not the lock, decides whether a duplicate matters.", headline.off().summary.final_balance, headline.strict().summary.final_balance),
            format!("Fencing still works here (strict: {}), but it buys little: Kleppmann's best-effort lock is enough when a duplicate only costs work, as here, where every run computes the same value from the same input and the second only overwrites it.", story::outcome(r.strict())),
        ]
    },
    build: Scenario::efficiency,
    pushbacks: &[
        PushBack {
            question: "So a lock for efficiency needs no fence?",
            answer: "Right: when running twice only wastes work (a recomputed report, a cache fill), one Redis with SET NX PX is enough. Say so, and name the writes that are the other kind.",
            source: "Kleppmann 2016 (efficiency or correctness); seed 000",
            shows: Some("gc-pause"),
        },
        PushBack {
            question: "What if the input changed between A's run and B's?",
            answer: "Then the runs compute different values, and A's late write replaces B's newer one: a lost update, no longer wasted work. That makes the lock one for correctness: fence the write, or write only if the input's version is still the one read.",
            source: "Kleppmann 2016 (efficiency or correctness)",
            shows: Some("handoff-barrier"),
        },
    ],
};

impl Scenario {
    /// The headline's schedule for a job whose duplicate is harmless: rebuilding the daily
    /// report, which recomputes the same value from the same input and overwrites the row.
    /// A (33, lease until t=30) pauses 5..55; B gets 34 at t=30, finds the report not built
    /// and publishes [`REPORT`] at 35; A wakes and publishes the same [`REPORT`] at 55.
    pub fn efficiency() -> Self {
        let rebuild = |name: &str, start_at: Millis, work: Millis| {
            let then = vec![
                Step::Publish {
                    result: REPORT.to_owned(),
                },
                Step::Work { ms: 5 },
                Step::Release,
            ];
            job(name, start_at, work, then)
        };
        let mut a = rebuild("A", 0, 10);
        a.pauses.push(pause(5, 50));
        Scenario {
            id: "efficiency".to_owned(),
            title: "Efficiency or correctness?".to_owned(),
            resource: "report:daily".to_owned(),
            initial_balance: 0,
            first_fence: 33,
            lease_ttl: 30,
            policy: FencingPolicy::Strict,
            actors: vec![a, rebuild("B", 20, 5)],
            horizon: 100,
            job: Some("the daily report rebuild".to_owned()),
            ..Scenario::default()
        }
    }
}
