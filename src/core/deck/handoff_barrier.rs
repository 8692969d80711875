//! The deck's `handoff-barrier` entry: Job handoff with a barrier.

use super::*;

pub(super) const ENTRY: DeckEntry = DeckEntry {
    id: "handoff-barrier",
    title: "Job handoff with a barrier",
    question: "A scheduler reassigns a stuck job. How do you stop the old worker's late result?",
    notes: |r| {
        let (a, b) = (r.token(0), r.token(1));
        vec![
            format!("A runs job 7 with token {a} and a 10 s lease, then its whole process freezes for 15 s (a long collector pause or a VM freeze); the scheduler hands the job to B with {b}."),
            format!("Before B starts, the scheduler establishes epoch {b} in the job's result row, with an atomic update that cannot lower it; B then publishes with a conditional write requiring epoch {b}."),
            format!("A wakes and publishes its result with {a}: rejected stale_fence under strict and same-epoch, even though B has not published yet. Off, A's result lands and B's overwrites it: a duplicate publish."),
            {
                // Off: how long A's stale result was the published one.
                let at = |who: &str| {
                    r.off()
                        .events
                        .iter()
                        .find(|e| e.actor.as_deref() == Some(who) && matches!(e.kind, EventKind::WriteApplied { result: Ok(_), .. }))
                        .map_or(0, |e| e.at)
                };
                let sc = &r.off().scenario;
                format!(
                    "Off, A's stale result is the published one from t={} until B's lands at t={}. A first-wins idempotency key on job 7 would make it worse: it keeps A's stale result and drops B's. Only the fence refuses A.",
                    story::instant(sc, at("A")),
                    story::instant(sc, at("B"))
                )
            },
            {
                let bare = run(&Scenario {
                    skip_barrier: true,
                    ..Scenario::handoff_barrier()
                });
                format!(
                    "Strict (>) spends the barrier: B's own write with {b} is refused too, since B's grant makes two writes (the barrier, then the publish). {} What if… no barrier: A's {a} reaches the row before B's {b} and passes the check ({}).",
                    story::Line::WhichRule.text(),
                    story::outcome(&bare)
                )
            },
        ]
    },
    build: Scenario::handoff_barrier,
    pushbacks: &[
        PushBack {
            question: "Key the publish on job 7.",
            answer: "A first-wins key on job 7 keeps whichever result arrives first, here A's stale one, and drops B's: a key dedupes one intent, it does not pick the live owner. The epoch check at the result row does.",
            source: "seed 003 (worked example)",
            shows: None,
        },
        PushBack {
            question: "Why establish the epoch before B starts?",
            answer: "A highest-token check revokes A only once storage has seen 42; if A's 41 gets there first, it lands. Writing 42 to the row before B starts closes that window.",
            source: "seed 003 (strict handoff)",
            shows: Some("cross-region"),
        },
    ],
};

impl Scenario {
    /// A job scheduler in seconds (the seed's worked example): worker A runs job 7 with token
    /// 41 and a 10 s lease, and its whole process freezes from 1 s to 16 s; B gets the job
    /// with 42 at 10 s and the scheduler first establishes epoch 42 in the job's result row.
    /// A wakes and publishes its late result with 41; B publishes with 42 at 18 s, a
    /// conditional write on the result row. Fencing is same-epoch so that B's own publish
    /// passes the epoch the scheduler set for it. (A card charge belongs to claim-row.)
    pub fn handoff_barrier() -> Self {
        let mut a = actor(
            "A",
            0,
            vec![
                Step::Acquire { retry_every: 1_000 },
                Step::CheckDone,
                Step::Work { ms: 1_000 },
                Step::Publish {
                    result: "result by A".to_owned(),
                },
                Step::Release,
            ],
        );
        a.pauses.push(pause(1_000, 15_000));
        a.pause_cause = PauseCause::Stall;
        let b = actor(
            "B",
            10_000,
            vec![
                Step::Acquire { retry_every: 1_000 },
                Step::Barrier,
                Step::CheckDone,
                Step::Work { ms: 8_000 },
                Step::Publish {
                    result: "result by B".to_owned(),
                },
                Step::Release,
            ],
        );
        Scenario {
            id: "handoff-barrier".to_owned(),
            title: "Job handoff with a barrier".to_owned(),
            resource: "job:7".to_owned(),
            initial_balance: 0,
            first_fence: 41,
            lease_ttl: 10_000,
            policy: FencingPolicy::SameEpoch,
            actors: vec![a, b],
            horizon: 25_000,
            job: Some("job 7".to_owned()),
            ..Scenario::default()
        }
    }
}
