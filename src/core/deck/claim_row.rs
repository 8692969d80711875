//! The deck's `claim-row` entry: Fenced claim row before a provider call.

use super::*;

/// The idempotency key of `claim-row`'s provider call: one per intent (the order's charge).
pub const PROVIDER_KEY: &str = "order-1-charge";

pub(super) const ENTRY: DeckEntry = DeckEntry {
    id: "claim-row",
    title: "Fenced claim row before a provider call",
    question: "The payment provider never sees your token. How do you stop a stale worker charging the card?",
    notes: |r| {
        let (a, b) = (r.token(0), r.token(1));
        let claim = |t: &Trace| story::final_value(t);
        let provider = |t: &Trace| (t.summary.provider_charges, t.summary.provider_deduped);
        let (off_c, off_d) = provider(r.off());
        let (on_c, on_d) = provider(r.strict());
        vec![
            format!("Before calling the provider, the job writes a claim row carrying its token, a conditional write like any fenced write; it calls only if the claim is accepted. A has {a}, B has {b}."),
            format!("Fencing off: A wakes after B has charged, its claim lands too (the row now says “{}”), and A calls the provider as well: {} charge, {} call deduped by the idempotency key “{}”.", claim(r.off()), off_c, off_d, PROVIDER_KEY),
            format!("Strict: storage has seen {b}, A's late claim with {a} is stale_fence, and A never calls: {on_c} charge, {on_d} deduped. The row says “{}”.", claim(r.strict())),
            "The idempotency key says \"this intent runs once\": it saved the card with fencing off, but it cannot tell an old lock generation from a new one. The fence says \"this generation may write\": it cannot reach the provider, so it guards the claim row in front of it.".to_owned(),
            "You want both: the fence on the claim stops a holder that is already stale when it claims; the key stops a retry from charging twice, and a holder that went stale between its claim and its call.".to_owned(),
        ]
    },
    build: Scenario::claim_row,
    pushbacks: &[
        PushBack {
            question: "Idempotency keys are pruned after 24 h.",
            answer: "Stripe may remove a key once it is at least 24 hours old, and a retry after that is a new charge. So the fenced claim row is the durable record: keep the key in it, and check the claim before any retry.",
            source: "Stripe docs: idempotent requests",
            shows: None,
        },
        PushBack {
            question: "What if the stale worker reuses the key with another amount?",
            answer: "Stripe compares a reused key's parameters with the first request's and returns an error when they differ; with the same parameters it returns the first result. Either way the provider never sees the token.",
            source: "Stripe docs: idempotent requests",
            shows: None,
        },
    ],
};

impl Scenario {
    /// The headline's schedule for a job that charges a card through a provider that never
    /// sees the token: each worker writes a fenced claim row, then (only if the claim was
    /// accepted) calls the provider with the idempotency key [`PROVIDER_KEY`]. A holds 33 and
    /// pauses 5..55; B takes 34 at t=30, claims and calls at 35; A claims and calls at 55.
    pub fn claim_row() -> Self {
        let worker = |name: &str, start_at: Millis, work: Millis| {
            let then = vec![
                Step::Claim {
                    what: format!("claimed by {name}"),
                },
                Step::ProviderCall {
                    what: "charge the card $10 (payment API)".to_owned(),
                    idempotency_key: PROVIDER_KEY.to_owned(),
                },
                Step::Work { ms: 5 },
                Step::Release,
            ];
            job(name, start_at, work, then)
        };
        let mut a = worker("A", 0, 10);
        a.pauses.push(pause(5, 50));
        let b = worker("B", 20, 5);
        Scenario {
            resource: "order:1".to_owned(),
            initial_balance: 0,
            ..job_scenario(
                "claim-row",
                "Fenced claim row before a provider call",
                vec![a, b],
                100,
            )
        }
    }
}
