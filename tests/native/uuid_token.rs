//! `uuid-token`: the lock's random SET value used as the fencing token. Unique, not ordered:
//! storage comparing tokens orders the two holders by the luck of the draw.

use fencing_lab::core::deck::{self, UUID_OTHER_SEED, UUID_SEED};
use fencing_lab::core::story;
use fencing_lab::core::{
    random_token, run, EventKind, Fence, FencingPolicy, Pause, Scenario, TokenSource, Trace,
    RANDOM_TOKENS,
};

fn run_as(policy: FencingPolicy) -> Trace {
    run(&Scenario::uuid_token().with_policy(policy))
}

/// (writer, token, code) of each write in arrival order.
fn writes(t: &Trace) -> Vec<(String, u64, &'static str)> {
    t.writes
        .iter()
        .map(|w| {
            (
                w.request.writer.clone(),
                w.request.fence.unwrap().0,
                w.result.as_ref().err().map_or("ok", |e| e.code()),
            )
        })
        .collect()
}

/// (at, owner, token) of each grant.
fn grants(t: &Trace) -> Vec<(u64, String, u64)> {
    t.events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Acquired { fence, .. } => Some((e.at, e.actor.clone().unwrap(), fence.0)),
            _ => None,
        })
        .collect()
}

#[test]
fn random_tokens_are_seeded_unique_and_unordered() {
    assert_eq!(random_token(UUID_SEED, 0, 0), random_token(UUID_SEED, 0, 0));
    let mut seen = Vec::new();
    for seed in 0..50 {
        for actor in 0..3 {
            for nth in 0..3 {
                let v = random_token(seed, actor, nth);
                assert!(RANDOM_TOKENS.contains(&v), "{v}");
                seen.push(v);
            }
        }
    }
    let mut dedup = seen.clone();
    dedup.sort_unstable();
    dedup.dedup();
    assert_eq!(dedup.len(), seen.len(), "450 draws, all distinct");
    // Not ordered: over many seeds the first client's value is the larger about half the time.
    let a_larger = (0..200)
        .filter(|&s| random_token(s, 0, 0) > random_token(s, 1, 0))
        .count();
    assert!((70..=130).contains(&a_larger), "{a_larger} of 200");
    // The deck's two draws are the two cases.
    assert!(random_token(UUID_SEED, 0, 0) > random_token(UUID_SEED, 1, 0));
    assert!(random_token(UUID_OTHER_SEED, 0, 0) < random_token(UUID_OTHER_SEED, 1, 0));
    assert_eq!(
        TokenSource::from_code("random"),
        Some(TokenSource::RandomValue)
    );
    assert!(TokenSource::CHOICES.contains(&TokenSource::RandomValue));
}

#[test]
fn the_headline_schedule_with_random_values() {
    let (a, b) = (random_token(UUID_SEED, 0, 0), random_token(UUID_SEED, 1, 0));
    let off = run_as(FencingPolicy::Off);
    assert_eq!(
        grants(&off),
        [(0, "A".to_owned(), a), (30, "B".to_owned(), b)]
    );
    // The tokens are the SET values, not a counter from first_fence.
    assert!(grants(&off).iter().all(|g| g.2 != 33 && g.2 != 34));
    assert_eq!(
        writes(&off),
        [("B".to_owned(), b, "ok"), ("A".to_owned(), a, "ok")]
    );
    assert_eq!(off.summary.final_balance, 80);
    assert_eq!(
        off.summary.last_fence, None,
        "no mark is kept with fencing off"
    );
    assert_eq!(off.summary.late_writes_accepted, 1);
    assert_eq!(off.summary.duplicate_runs, 1);

    for policy in [FencingPolicy::Strict, FencingPolicy::SameEpoch] {
        let t = run_as(policy);
        // A's stale write is accepted, by luck of the draw: its value is the larger.
        assert_eq!(
            writes(&t),
            [("B".to_owned(), b, "ok"), ("A".to_owned(), a, "ok")],
            "{policy:?}"
        );
        assert_eq!(t.summary.final_balance, 80, "{policy:?}");
        assert_eq!(t.summary.last_fence, Some(Fence(a)), "{policy:?}");
        assert_eq!(t.summary.late_writes_accepted, 1, "{policy:?}");
        assert_eq!(t.summary.out_of_order_writes, 0, "{policy:?}");
        assert_eq!(t.summary.duplicate_runs, 1, "{policy:?}");
        let outcome = story::outcome(&t);
        assert!(
            outcome.contains("by luck of the draw") && outcome.contains(&format!("({a} > {b})")),
            "{outcome}"
        );
        let late = t.events.iter().position(|e| e.is_late_write()).unwrap();
        let words = story::Story::of(&t).narration(late + 1);
        assert!(
            words.contains("happens to be larger") && !words.contains("has not seen it yet"),
            "{words}"
        );
        let say = story::Story::of(&t).say(late + 1);
        assert!(say.starts_with("By luck of the draw"), "{say}");
    }
    assert!(!story::outcome(&off).contains("luck"));
}

#[test]
fn another_draw_refuses_a_and_a_first_write_refuses_the_real_holder() {
    // Another seed: A's value is the smaller, so strict refuses A — right, but by luck.
    let other = run(&Scenario {
        seed: UUID_OTHER_SEED,
        ..Scenario::uuid_token()
    });
    let (a, b) = (
        random_token(UUID_OTHER_SEED, 0, 0),
        random_token(UUID_OTHER_SEED, 1, 0),
    );
    assert_eq!(
        writes(&other),
        [
            ("B".to_owned(), b, "ok"),
            ("A".to_owned(), a, "stale_fence")
        ]
    );
    assert_eq!(other.summary.final_balance, 90);
    let refused = other
        .events
        .iter()
        .position(|e| e.result_code() == "stale_fence")
        .unwrap();
    assert!(story::Story::of(&other)
        .say(refused + 1)
        .contains("by luck of the draw"));

    // The deck's draw, A's pause ending at t=31: A's stale write lands first and B, the real
    // holder, is refused.
    let early = run(&Scenario::uuid_token().with_pause(
        0,
        Pause {
            start: 5,
            duration: 26,
        },
    ));
    let (a, b) = (random_token(UUID_SEED, 0, 0), random_token(UUID_SEED, 1, 0));
    assert_eq!(
        writes(&early),
        [
            ("A".to_owned(), a, "ok"),
            ("B".to_owned(), b, "stale_fence")
        ]
    );
    assert_eq!(early.summary.final_balance, 90);
    assert_eq!(early.summary.late_writes_accepted, 1);
    let refused = early
        .events
        .iter()
        .position(|e| e.result_code() == "stale_fence")
        .unwrap();
    assert!(story::Story::of(&early)
        .say(refused + 1)
        .contains("refused the real holder"));
}

#[test]
fn notes_quote_the_runs() {
    let entry = deck::find("uuid-token").unwrap();
    let notes = (entry.notes)(&deck::runs(entry)).join("\n");
    let (a, b) = (random_token(UUID_SEED, 0, 0), random_token(UUID_SEED, 1, 0));
    let (oa, ob) = (
        random_token(UUID_OTHER_SEED, 0, 0),
        random_token(UUID_OTHER_SEED, 1, 0),
    );
    for figure in [
        a.to_string(),
        b.to_string(),
        oa.to_string(),
        ob.to_string(),
        "80".to_owned(),
        "90".to_owned(),
        "luck of the draw".to_owned(),
        "B, the real holder".to_owned(),
    ] {
        assert!(notes.contains(&figure), "{figure}: {notes}");
    }
    // The t=31 what-if is the deck's own draw (with the other draw both writes land).
    assert!(
        notes.contains(&format!(
            "Back to the first draw (A {a}, B {b}), with A's pause ending at t=31"
        )),
        "{notes}"
    );
    // Another seed, other figures: the notes are computed.
    let sc = Scenario {
        seed: 99,
        ..Scenario::uuid_token()
    };
    let runs = deck::Runs(FencingPolicy::ALL.map(|p| run(&sc.clone().with_policy(p))));
    let other = (entry.notes)(&runs).join("\n");
    assert!(
        other.contains(&random_token(99, 0, 0).to_string()),
        "{other}"
    );
    assert!(!other.contains(&a.to_string()), "{other}");
}
