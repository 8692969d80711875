//! `claim-row`: a fenced claim row written before a call to a provider that never sees the
//! token, and the provider's idempotency key. The key dedupes an intent; the fence stops a
//! stale lock generation.

use fencing_lab::core::deck::{self, PROVIDER_KEY};
use fencing_lab::core::story;
use fencing_lab::core::{
    run, EventKind, Fence, FencingPolicy, ProviderOutcome, Scenario, ScenarioError, Step, Trace,
};

fn run_as(policy: FencingPolicy) -> Trace {
    run(&Scenario::claim_row().with_policy(policy))
}

/// (at, writer, token, code) of each claim in arrival order.
fn claims(t: &Trace) -> Vec<(u64, String, u64, &'static str)> {
    t.writes
        .iter()
        .map(|w| {
            assert!(w.request.publish.is_some() && w.request.amount == 0);
            (
                w.at,
                w.request.writer.clone(),
                w.request.fence.unwrap().0,
                w.result.as_ref().err().map_or("ok", |e| e.code()),
            )
        })
        .collect()
}

/// (at, caller, outcome, key, lease live) of each provider call.
fn calls(t: &Trace) -> Vec<(u64, String, ProviderOutcome, String, bool)> {
    t.events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ProviderCall {
                outcome,
                idempotency_key,
                lease_live,
                ..
            } => Some((
                e.at,
                e.actor.clone().unwrap(),
                *outcome,
                idempotency_key.clone(),
                *lease_live,
            )),
            _ => None,
        })
        .collect()
}

fn c(
    at: u64,
    who: &str,
    o: ProviderOutcome,
    live: bool,
) -> (u64, String, ProviderOutcome, String, bool) {
    (at, who.to_owned(), o, PROVIDER_KEY.to_owned(), live)
}

#[test]
fn fencing_off_both_call_and_the_key_dedupes_the_second() {
    let t = run_as(FencingPolicy::Off);
    assert!(t.scenario.claims() && t.scenario.publishes());
    assert_eq!(
        claims(&t),
        [
            (35, "B".to_owned(), 34, "ok"),
            (55, "A".to_owned(), 33, "ok")
        ]
    );
    assert_eq!(
        calls(&t),
        [
            c(35, "B", ProviderOutcome::Charged, true),
            c(55, "A", ProviderOutcome::Deduped, false)
        ]
    );
    let s = &t.summary;
    assert_eq!((s.provider_charges, s.provider_deduped), (1, 1));
    assert_eq!(s.late_writes_accepted, 1);
    assert_eq!(s.duplicate_runs, 1, "both generations claimed the job");
    assert_eq!(s.last_fence, None);
    assert_eq!(
        s.final_balance, 0,
        "no debit: the money moves at the provider"
    );
    assert_eq!(story::final_value(&t), "claimed by A");
    let outcome = story::outcome(&t);
    assert!(
        outcome.contains("duplicate claim")
            && outcome.contains("the provider charged once; 1 call deduped by its idempotency key"),
        "{outcome}"
    );
    let dedupe = t
        .events
        .iter()
        .position(|e| e.result_code() == "deduped")
        .unwrap();
    assert!(story::Story::of(&t)
        .say(dedupe + 1)
        .contains("only the provider's idempotency key"));
}

#[test]
fn fenced_the_late_claim_is_refused_and_a_never_calls() {
    for policy in [FencingPolicy::Strict, FencingPolicy::SameEpoch] {
        let t = run_as(policy);
        assert_eq!(
            claims(&t),
            [
                (35, "B".to_owned(), 34, "ok"),
                (55, "A".to_owned(), 33, "stale_fence")
            ],
            "{policy:?}"
        );
        assert_eq!(
            calls(&t),
            [
                c(35, "B", ProviderOutcome::Charged, true),
                c(55, "A", ProviderOutcome::NotCalled, false)
            ],
            "{policy:?}"
        );
        let s = &t.summary;
        assert_eq!((s.provider_charges, s.provider_deduped), (1, 0));
        assert_eq!(s.late_writes_accepted, 0);
        assert_eq!(s.duplicate_runs, 0);
        assert_eq!(s.last_fence, Some(Fence(34)));
        assert_eq!(story::final_value(&t), "claimed by B");
        assert_eq!(
            story::outcome(&t),
            "A's 33 refused: stale_fence; last fence 34; the provider charged once"
        );
        // A stops right after the refusal: nothing after its give-up.
        let gave_up = t
            .events
            .iter()
            .position(|e| e.actor.as_deref() == Some("A") && e.kind == EventKind::GaveUp)
            .unwrap();
        assert!(t.events[gave_up + 1..]
            .iter()
            .all(|e| e.actor.as_deref() != Some("A")));
        // The step before said A does not call; the give-up says why it stops, not that again.
        let stop = story::Story::of(&t).narration(gave_up + 1);
        assert!(
            stop.contains("newer lock generation owns the job"),
            "{stop}"
        );
        assert!(!stop.contains("provider"), "{stop}");
        assert!(story::Story::of(&t)
            .narration(gave_up)
            .contains("does not call the provider"));
    }
}

#[test]
fn the_key_is_not_a_fence_and_the_fence_is_not_a_key() {
    // Without the claim row, the key alone still dedupes the charge, but nothing stops A
    // acting; without the key (a key per worker), the off run charges twice.
    let mut per_worker = Scenario::claim_row().with_policy(FencingPolicy::Off);
    for a in &mut per_worker.actors {
        for s in &mut a.script {
            if let Step::ProviderCall {
                idempotency_key, ..
            } = s
            {
                *idempotency_key = format!("charge-by-{}", a.name);
            }
        }
    }
    let t = run(&per_worker);
    assert_eq!(
        (t.summary.provider_charges, t.summary.provider_deduped),
        (2, 0)
    );
    assert!(story::outcome(&t).contains("the provider charged 2 times"));
    // Fenced, the same change makes no difference: A never gets past its claim.
    let fenced = run(&per_worker.with_policy(FencingPolicy::Strict));
    assert_eq!(fenced.summary.provider_charges, 1);
    // An empty key is refused.
    let mut bad = Scenario::claim_row();
    bad.actors[0].script[4] = Step::ProviderCall {
        what: "charge".to_owned(),
        idempotency_key: " ".to_owned(),
    };
    assert_eq!(
        bad.validate(),
        Err(ScenarioError::BadLabel {
            actor: "A".to_owned()
        })
    );
}

#[test]
fn notes_quote_the_runs() {
    let entry = deck::find("claim-row").unwrap();
    let notes = (entry.notes)(&deck::runs(entry)).join("\n");
    for figure in [
        "33",
        "34",
        "claimed by A",
        "claimed by B",
        "1 charge, 1 call deduped",
        "1 charge, 0 deduped",
        PROVIDER_KEY,
        "this intent runs once",
        "this generation may write",
    ] {
        assert!(notes.contains(figure), "{figure}: {notes}");
    }
    let mut sc = Scenario::claim_row();
    sc.first_fence = 7;
    let runs = deck::Runs(FencingPolicy::ALL.map(|p| run(&sc.clone().with_policy(p))));
    let other = (entry.notes)(&runs).join("\n");
    assert!(other.contains("A has 7, B has 8"), "{other}");
}
