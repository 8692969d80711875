//! `lock-queue`: waiting on a lock. A fair queue (ZooKeeper's lock recipe, etcd's mutex)
//! hands the lock over in arrival order with no polling; spin-retry on Redis lets a later
//! waiter overtake; and a paused head of the queue still needs the fence.

use fencing_lab::core::deck;
use fencing_lab::core::story;
use fencing_lab::core::{run, EventKind, FencingPolicy, LockKind, Scenario, Trace};

use crate::common;
use common::{w, writes};

fn run_as(policy: FencingPolicy) -> Trace {
    run(&Scenario::lock_queue().with_policy(policy))
}

/// (at, who, token) of every grant.
fn grants(t: &Trace) -> Vec<(u64, String, u64)> {
    t.events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Acquired { fence, .. } => Some((e.at, e.actor.clone()?, fence.0)),
            _ => None,
        })
        .collect()
}

fn g(at: u64, who: &str, token: u64) -> (u64, String, u64) {
    (at, who.to_owned(), token)
}

#[test]
fn the_queue_hands_the_lock_over_in_arrival_order_without_polling() {
    for policy in FencingPolicy::ALL {
        let t = run_as(policy);
        // A's session expires at 30: B, first in the queue, is handed the lock at once; B's
        // release at 35 hands it to C in the same instant. Queue order is token order.
        assert_eq!(
            grants(&t),
            vec![g(0, "A", 33), g(30, "B", 34), g(35, "C", 35)]
        );
        let waits: Vec<(u64, Option<String>)> = t
            .events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::LockWait { .. }))
            .map(|e| (e.at, e.actor.clone()))
            .collect();
        assert_eq!(waits, vec![(12, Some("B".into())), (21, Some("C".into()))]);
        assert!(
            !t.events
                .iter()
                .any(|e| matches!(e.kind, EventKind::AcquireRefused { .. })),
            "no polling"
        );
    }
}

#[test]
fn a_paused_head_of_the_queue_still_needs_the_fence() {
    let expect = [
        (FencingPolicy::Off, 80, "ok"),
        (FencingPolicy::Strict, 90, "stale_fence"),
        (FencingPolicy::SameEpoch, 90, "stale_fence"),
    ];
    for (policy, balance, a) in expect {
        let t = run_as(policy);
        assert_eq!(
            writes(&t),
            vec![w(35, "B", 34, "ok"), w(55, "A", 33, a)],
            "{policy:?}"
        );
        assert_eq!(t.summary.final_balance, balance);
        assert_eq!(
            t.summary.max_believers, 2,
            "{policy:?}: A still believes while B holds"
        );
    }
}

#[test]
fn spin_retry_on_redis_lets_a_later_waiter_overtake() {
    let spin = run(&Scenario {
        lock: LockKind::default(),
        ..Scenario::lock_queue()
    });
    // C asked at 21, B at 12, but C's retry timer fires first once the lease is gone.
    assert_eq!(
        grants(&spin),
        vec![g(0, "A", 33), g(31, "C", 34), g(42, "B", 35)]
    );
    let refused = spin
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::AcquireRefused { .. }))
        .count();
    assert_eq!(refused, 4);
    let entry = deck::find("lock-queue").unwrap();
    let notes = (entry.notes)(&deck::runs(entry)).join("\n");
    for want in [
        "Grants in the queue: A 33 at t=0, B 34 at t=30, C 35 at t=35.",
        "4 refused tries, and grants A 33 at t=0, C 34 at t=31, B 35 at t=42",
        "off 80, the job ran twice; strict refuses it as stale_fence (90)",
    ] {
        assert!(notes.contains(want), "{want}\n{notes}");
    }
}

#[test]
fn the_words_say_queue_and_a_row_lock_has_none() {
    let t = run_as(FencingPolicy::Strict);
    let step = |pred: fn(&EventKind) -> bool, who: &str| {
        1 + t
            .events
            .iter()
            .position(|e| e.actor.as_deref() == Some(who) && pred(&e.kind))
            .unwrap()
    };
    let wait = step(|k| matches!(k, EventKind::LockWait { .. }), "B");
    assert!(story::Story::of(&t)
        .narration(wait)
        .contains("creates its sequential node and watches only the one just before it"));
    assert!(story::Story::of(&t)
        .say(wait)
        .starts_with("Each waiter watches only its predecessor"));
    assert_eq!(story::marker_label(&t, &t.events[wait - 1]), "queued");
    let granted = step(|k| matches!(k, EventKind::Acquired { .. }), "B");
    assert!(story::Story::of(&t)
        .narration(granted)
        .contains("B's watch fires: it holds acct:1 with token 34"));
    // A row lock's queue is the row's own: JSON that sets both names no lock there is.
    let mut row = serde_json::to_value(Scenario::lock_queue()).unwrap();
    row["row_lock"] = serde_json::json!({ "idle_timeout": true });
    let err = serde_json::from_value::<Scenario>(row)
        .unwrap_err()
        .to_string();
    assert!(err.contains("no such lock"), "{err}");
    // Written only when set: other scenarios' JSON is unchanged.
    let json = serde_json::to_string(&Scenario::gc_pause()).unwrap();
    assert!(!json.contains("queue"), "{json}");
}
