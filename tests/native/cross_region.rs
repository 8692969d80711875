//! `cross-region`: a lock service a WAN round trip away. Every lock command costs its client
//! that round trip, and the new holder's token reaches storage that much later: a stale
//! holder's write slips into the gap, and the fence, which has not seen the new token yet,
//! takes it.

use fencing_lab::core::deck::{self, CROSS_REGION_RTT};
use fencing_lab::core::story;
use fencing_lab::core::{
    run, EventKind, FencingPolicy, LockKind, RowLock, Scenario, ScenarioError, Trace, MAX_TIME,
};
use fencing_lab::share::{decode, encode};

use crate::common;
use common::{w, writes};

fn at(t: &Trace, who: &str, want: fn(&EventKind) -> bool) -> u64 {
    t.events
        .iter()
        .find(|e| e.actor.as_deref() == Some(who) && want(&e.kind))
        .map(|e| e.at)
        .expect("no such event")
}

fn strict(rtt: u64) -> Trace {
    run(&Scenario::cross_region_with(rtt).with_policy(FencingPolicy::Strict))
}

#[test]
fn each_lock_command_costs_its_client_a_round_trip() {
    for rtt in [0, 10, CROSS_REGION_RTT] {
        let t = strict(rtt);
        // A is granted at t=0 and reads the job's status when the answer arrives.
        assert_eq!(at(&t, "A", |k| matches!(k, EventKind::Acquired { .. })), 0);
        assert_eq!(
            at(&t, "A", |k| matches!(k, EventKind::JobChecked { .. })),
            rtt
        );
        // B's refusal at t=22 reaches it a round trip later; its retry timer starts then.
        let refused = at(&t, "B", |k| matches!(k, EventKind::AcquireRefused { .. }));
        let granted = at(&t, "B", |k| matches!(k, EventKind::Acquired { .. }));
        assert_eq!((refused, granted), (22, 32 + rtt), "rtt {rtt}");
    }
}

#[test]
fn the_window_before_storage_sees_the_new_token_grows_with_the_round_trip() {
    // One region: B's 34 reaches storage at t=37, and A's late 33 is refused.
    assert_eq!(
        writes(&strict(0)),
        vec![w(37, "B", 34, "ok"), w(65, "A", 33, "stale_fence")]
    );
    // 10 ms: B granted at 42, writes at 57, still before A.
    assert_eq!(
        writes(&strict(10)),
        vec![w(57, "B", 34, "ok"), w(65, "A", 33, "stale_fence")]
    );
    // 20 ms (the entry): B granted at 52 hears at 72; A's 33 lands at 65, first, under every
    // policy, and B finds the job done.
    for policy in FencingPolicy::ALL {
        let t = run(&Scenario::cross_region().with_policy(policy));
        assert_eq!(writes(&t), vec![w(65, "A", 33, "ok")], "{policy:?}");
        assert_eq!(t.summary.late_writes_accepted, 1, "{policy:?}");
        assert_eq!(t.summary.final_balance, 90);
        assert_eq!(
            story::outcome(&t),
            "A's 33 landed from a superseded lease",
            "{policy:?}"
        );
    }
}

#[test]
fn the_words_say_where_the_round_trip_goes() {
    let t = strict(CROSS_REGION_RTT);
    assert!(story::Story::of(&t)
        .narration(0)
        .contains("another region: every lock command costs a client a 20 ms round trip"));
    let grant = 1 + t
        .events
        .iter()
        .position(|e| {
            e.actor.as_deref() == Some("B") && matches!(e.kind, EventKind::Acquired { .. })
        })
        .unwrap();
    assert!(story::Story::of(&t)
        .narration(grant)
        .ends_with("The answer reaches B at t=72, a round trip later."));
    assert!(story::Story::of(&t)
        .say(grant)
        .contains("storage sees 34 only with B's first write"));
    let entry = deck::find("cross-region").unwrap();
    let notes = (entry.notes)(&deck::runs(entry)).join("\n");
    for want in [
        "0 ms: B granted at t=32, first write at t=37, A's 33 stale_fence (90)",
        "10 ms: B granted at t=42, first write at t=57, A's 33 stale_fence (90)",
        "20 ms: B granted at t=52, A's 33 accepted before B wrote anything (90)",
        "Run one lock service per region",
    ] {
        assert!(notes.contains(want), "{want}\n{notes}");
    }
    // In one region nothing about a round trip is said.
    let near = strict(0);
    assert!(!(0..=near.len()).any(|s| story::Story::of(&near).narration(s).contains("round trip")));
}

#[test]
fn the_round_trip_is_a_link_edit_bounded_and_not_for_a_row_lock() {
    let hash = encode(&Scenario::cross_region(), 0);
    assert!(!hash.contains("rtt="), "the deck's own value: {hash}");
    let near = decode("#s=cross-region&fence=strict&rtt=0")
        .unwrap()
        .scenario;
    assert_eq!(
        near,
        Scenario::cross_region_with(0).with_policy(FencingPolicy::Strict)
    );
    let far = decode("#s=gc-pause&rtt=40").unwrap().scenario;
    assert_eq!(far.lock_rtt, 40);
    assert_eq!(decode(&encode(&far, 2)).unwrap().scenario, far);
    assert!(decode("#s=cross-region&rtt=far").is_err());
    assert_eq!(
        Scenario {
            lock_rtt: MAX_TIME + 1,
            ..Scenario::cross_region()
        }
        .validate(),
        Err(ScenarioError::OutOfRange {
            what: "lock_rtt",
            value: MAX_TIME + 1,
            min: 0,
            max: MAX_TIME
        })
    );
    let row = Scenario {
        lock: LockKind::Row(RowLock { idle_timeout: true }),
        ..Scenario::cross_region()
    };
    assert_eq!(
        row.validate(),
        Err(ScenarioError::NotForRowLock {
            what: "lock service to wait for"
        })
    );
    // A recording of a scenario without the round trip is written as before.
    let json = serde_json::to_string(&Scenario::cross_region_with(0)).unwrap();
    assert!(!json.contains("lock_rtt"), "{json}");
}
