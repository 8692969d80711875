//! The deck's `separate-counter` entry: Token from a separate counter.

use super::*;

pub(super) const ENTRY: DeckEntry = DeckEntry {
    id: "separate-counter",
    title: "Token from a separate counter",
    question: "Why not SET the lock, then INCR a fencing counter kept somewhere safe?",
    notes: |r| {
        let [off, strict, _] = r.balances();
        let (first, second) = (r.token(0), r.token(1));
        vec![
            "A's SET NX PX answers OK; its INCR on the separate counter is one more round trip, and A freezes in between.".to_owned(),
            format!("A's lease expires; B's SET answers OK and B's INCR runs first: B gets {first}."),
            format!("A wakes and INCRs: {second}. The older lease now carries the newer token."),
            format!("Strict: A's write with {second} lands first, and B, the real holder, is refused stale_fence with {first} ({strict}). Off: both land ({off})."),
            "Take the token in the same atomic step as the grant (the acquire script's INCR, an etcd revision), never after it.".to_owned(),
        ]
    },
    build: Scenario::separate_counter,
    pushbacks: &[
        PushBack {
            question: "INCR before SET, then.",
            answer: "Then a token is taken before the lock is won: a client that INCRs, pauses and then SETs holds the newer lease with the smaller token, and storage refuses the live holder. Either order leaves a gap; mint the token in the same atomic step as the grant.",
            source: "seed 003 (token tied to the grant)",
            shows: None,
        },
        PushBack {
            question: "Then INCR inside the acquire script.",
            answer: "That ties the token to the grant on one Redis, but a failover or a restart rolls the counter back with the lock key, and the same token is handed out twice.",
            source: "seed 003 (ordering that survives failover)",
            shows: Some("redis-failover"),
        },
    ],
};

impl Scenario {
    /// A's SET answers OK at t=0 and it freezes (1..41) before its INCR on the separate
    /// counter; its lease expires at 30, B's SET answers OK at 30 and B's INCR at 31 takes
    /// 33. A wakes at 41, INCRs 34 and charges at once; B charges with 33 at 46.
    pub fn separate_counter() -> Self {
        let mut a = actor(
            "A",
            0,
            vec![
                Step::Acquire { retry_every: 10 },
                Step::CheckDone,
                debit(10, None),
                Step::Release,
            ],
        );
        a.pauses.push(pause(1, 40));
        let b = writer("B", 20, 15, 5);
        Scenario {
            lock: LockKind::Redis {
                tokens: RedisTokens::SeparateCounter,
            },
            ..job_scenario(
                "separate-counter",
                "Token from a separate counter",
                vec![a, b],
                100,
            )
        }
    }
}
