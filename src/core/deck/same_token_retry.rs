//! The deck's `same-token-retry` entry: Retry with the same token.

use super::*;

pub(super) const ENTRY: DeckEntry = DeckEntry {
    id: "same-token-retry",
    title: "Retry with the same token",
    question: "What if the reply is lost and the client retries? Is the token enough?",
    notes: |r| {
        let [off, strict, same] = r.balances();
        let a = r.token(0);
        vec![
            format!("A's debit pay-1 lands, the reply is lost, A retries: same token {a}, same key pay-1."),
            format!("Strict refuses the retry as stale_fence ({a} is not > {a}): this storage checks the fence before the key, so A cannot tell which of its writes landed, unless storage returns the last fence with the error ({a}, its own token: the first debit did). Same-epoch admits the token; the key returns the original result, so A learns it landed. A storage that looked the key up first would answer the retry under strict too."),
            format!("The key dedupes even with fencing off: it is the intent's identity, not a fence. Every column ends at {off}, {strict}, {same}: charged once."),
            format!("Which rule? {}", story::Line::WhichRule.text()),
            "Tokens order lock generations; keys dedupe intents. You need both: a stale holder's new intent is the fence's to refuse (gc-pause).".to_owned(),
        ]
    },
    build: Scenario::same_token_retry,
    pushbacks: &[
        PushBack {
            question: "lastFence = 33 tells A its write landed.",
            answer: "Only if storage returns it and each grant makes one write: seed 000's debit returns lastFence with stale_fence, and when it equals A's own token, A's write with it landed. With several writes per grant it cannot say which one; a stored idempotency key answers with the original result instead.",
            source: "seed 000 (debit contract)",
            shows: None,
        },
        PushBack {
            question: "Why not use ≥ everywhere?",
            answer: "≥ admits every write of the current holder, a duplicate of one that already landed included; only an idempotency key keeps that to once. With one write per grant, > is simpler and refuses the repeat outright.",
            source: "seed 003 (equal tokens, retry deduplication); Stripe docs: idempotent requests",
            shows: None,
        },
    ],
};

impl Scenario {
    /// A debits `pay-1` at t=0, loses the reply and retries it unchanged at t=5 (same token
    /// 33, same key), then releases. The scenario ends there: its point is the retry.
    pub fn same_token_retry() -> Self {
        let a = actor(
            "A",
            0,
            vec![
                Step::Acquire { retry_every: 10 },
                debit(10, Some("pay-1")),
                Step::Work { ms: 5 },
                Step::Retry,
                Step::Work { ms: 5 },
                Step::Release,
            ],
        );
        account_scenario(
            "same-token-retry",
            "Lost reply, retry with the same token",
            vec![a],
            100,
        )
    }
}
