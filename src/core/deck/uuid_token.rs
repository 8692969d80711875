//! The deck's `uuid-token` entry: A random value as the token.

use super::*;

/// The seed of `uuid-token`: A's random value draws larger than B's.
pub const UUID_SEED: u64 = 2;
/// Another draw for `uuid-token`, where A's random value is the smaller one.
pub const UUID_OTHER_SEED: u64 = 1;

pub(super) const ENTRY: DeckEntry = DeckEntry {
    id: "uuid-token",
    title: "A random value as the token",
    question: "Why not use the lock's random value (a UUID) as the fencing token?",
    notes: |r| {
        let [off, strict, same] = r.balances();
        let (a, b) = (r.token(0), r.token(1));
        let fence = |t: &Trace| {
            t.summary
                .last_fence
                .map_or_else(|| "none".to_owned(), |f| f.to_string())
        };
        let base = || r.strict().scenario.clone();
        let other = run(&Scenario {
            seed: UUID_OTHER_SEED,
            ..base()
        });
        let draws: Vec<String> = other
            .events
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::Acquired { fence, .. } => {
                    Some(format!("{} {fence}", e.actor.clone().unwrap_or_default()))
                }
                _ => None,
            })
            .collect();
        let first = run(&base().with_pause(
            0,
            Pause {
                start: 5,
                duration: 26,
            },
        ));
        let refused = first
            .writes
            .iter()
            .find(|w| !w.accepted())
            .map_or_else(String::new, |w| w.request.writer.clone());
        vec![
            format!("The headline schedule, but each client's token is the random value it SETs (a UUID in production): A drew {a}, B drew {b}. Unique, not ordered."),
            format!("Fencing off: both debits land, balance {off}: the double charge of the headline. The random value changed nothing."),
            format!("Strict and same-epoch compare {b} with A's late {a}: A's is larger, so storage accepts the superseded write by luck of the draw (strict {strict}, same-epoch {same}; last fence {}).", fence(r.strict())),
            format!("Another draw ({}): A's late debit is refused ({}) — the right answer by the same luck. Back to the first draw (A {a}, B {b}), with A's pause ending at t=31: A's stale write lands first and {refused}, the real holder, is refused stale_fence ({}).", draws.join(", "), other.summary.final_balance, first.summary.final_balance),
            "A random value is an owner ID: it makes compare-and-delete safe. A fencing token is a number that only goes up, minted with the grant.".to_owned(),
        ]
    },
    build: Scenario::uuid_token,
    pushbacks: &[
        PushBack {
            question: "Only write if the random value is still the current one (compare-and-set).",
            answer: "That moves the check into the resource: it must hold the current owner's value and compare-and-set it in the same step as each write, so a new holder registers its value there first, a handoff barrier with random values. The resource is then the lock for safety; the Redis lease only decides who tries.",
            source: "antirez 2016, Is Redlock safe?; Kleppmann 2016",
            shows: Some("handoff-barrier"),
        },
        PushBack {
            question: "Use a timestamp as the token, then.",
            answer: "Timestamps from different clients come from different clocks: skew or a step can give a later grant a smaller number. A token must come from one counter, bumped with each grant.",
            source: "seed 003 (token ordering)",
            shows: Some("clock-jump"),
        },
    ],
};

impl Scenario {
    /// The headline schedule (A 30 ms lease, pause 5..55; B takes the lock at t=30 and
    /// debits at 35; A debits at 55) with each client's random SET value as its token,
    /// drawn from [`UUID_SEED`]: A's value is the larger, so a highest-token check takes
    /// A's superseded write.
    pub fn uuid_token() -> Self {
        Scenario {
            id: "uuid-token".to_owned(),
            title: "A random value as the token".to_owned(),
            lock: LockKind::Redis {
                tokens: RedisTokens::RandomValue,
            },
            seed: UUID_SEED,
            ..Scenario::gc_pause()
        }
    }
}
