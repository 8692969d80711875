//! `storage-failover`: storage is a PostgreSQL primary with an asynchronous standby. The
//! primary accepts B's debit with 34 and dies before the standby has it; the promoted standby
//! never saw 34, so it takes A's 33. With synchronous commit (no lag) it refuses it.

use fencing_lab::core::deck::{self, STANDBY_LAG};
use fencing_lab::core::story;
use fencing_lab::core::{
    run, EventKind, Fault, Fence, FencingPolicy, Ledger, Scenario, Trace, WriteRequest,
};
use fencing_lab::view::timeline::{self, Verdict};

use crate::common::{w, writes};

fn run_as(policy: FencingPolicy) -> Trace {
    run(&Scenario::storage_failover().with_policy(policy))
}

/// The entry's schedule with the standby `lag` ms behind.
fn with_lag(policy: FencingPolicy, lag: u64) -> Trace {
    let mut sc = Scenario::storage_failover().with_policy(policy);
    for f in &mut sc.faults {
        f.fault = Fault::StorageFailover { lag };
    }
    run(&sc)
}

/// What the failover lost (writer, token), and the account just after it.
fn failover(t: &Trace) -> (Vec<(String, u64)>, i64, Option<u64>) {
    let e = (t.events.iter())
        .find(|e| matches!(e.kind, EventKind::StorageFailover { .. }))
        .expect("the failover is on the timeline");
    let EventKind::StorageFailover { lost, .. } = &e.kind else {
        unreachable!()
    };
    let lost = (lost.iter())
        .map(|w| (w.request.writer.clone(), w.request.fence.map_or(0, |f| f.0)))
        .collect();
    (lost, e.snapshot.balance, e.snapshot.last_fence.map(|f| f.0))
}

/// Every policy: the standby forgot B's 34 (and B's debit), so A's 33 is accepted; the
/// account ends with A's debit only.
#[test]
fn the_promoted_standby_forgot_34_and_takes_33() {
    for policy in FencingPolicy::ALL {
        let t = run_as(policy);
        assert_eq!(
            writes(&t),
            vec![w(35, "B", 34, "ok"), w(55, "A", 33, "ok")],
            "{policy:?}"
        );
        assert_eq!(
            failover(&t),
            (vec![("B".to_owned(), 34)], 100, None),
            "{policy:?}"
        );
        assert_eq!(t.summary.final_balance, 90, "{policy:?}");
        assert_eq!(
            t.summary.last_write_fence.map(|f| f.0),
            Some(33),
            "{policy:?}"
        );
    }
}

/// Synchronous commit (lag 0): the standby has 34, so strict and same-epoch refuse 33 and
/// B's debit stays; off takes both (80).
#[test]
fn with_synchronous_commit_the_fence_survives() {
    let expect = [
        (FencingPolicy::Off, 80, "ok", None),
        (FencingPolicy::Strict, 90, "stale_fence", Some(34)),
        (FencingPolicy::SameEpoch, 90, "stale_fence", Some(34)),
    ];
    for (policy, balance, a, mark) in expect {
        let t = with_lag(policy, 0);
        assert_eq!(writes(&t)[1], w(55, "A", 33, a), "{policy:?}");
        assert_eq!(failover(&t), (vec![], 90, mark), "{policy:?}");
        assert_eq!(t.summary.final_balance, balance, "{policy:?}");
    }
}

/// The standby has every write at least `lag` ms old: B's write at t=35 is 10 ms old when
/// the primary dies at t=45.
#[test]
fn the_standby_has_exactly_the_writes_at_least_lag_old() {
    let strict = |lag| writes(&with_lag(FencingPolicy::Strict, lag))[1].3;
    assert_eq!(strict(10), "stale_fence", "10 ms old: replicated");
    assert_eq!(strict(11), "ok", "not yet");
    assert_eq!(strict(STANDBY_LAG), "ok", "the entry's standby lacks it");
}

#[test]
fn the_words_say_the_standby_never_got_34() {
    let t = run_as(FencingPolicy::Strict);
    let s = story::Story::of(&t);
    let text: Vec<String> = (0..=t.len())
        .flat_map(|i| [s.narration(i), s.say(i)])
        .collect();
    let text = text.join("\n");
    for said in [
        "its asynchronous standby, 15 ms behind, is promoted (pg_promote). It never got B's debit with token 34 (t=35)",
        "acknowledged by the primary: balance 100 again, and it has seen no token",
        "Asynchronous replication forgets the newest writes, and the high-water mark with them",
        "B was granted 34 and storage took its write, then failed over to a standby that never got it, so 33 passes the check",
        "Synchronous commit (synchronous_standby_names, synchronous_commit = on)",
    ] {
        assert!(text.contains(said), "missing {said:?} in {text}");
    }
    assert!(!text.contains("storage has not seen it yet"), "{text}");
    assert!(!text.contains("double charge"), "one debit is left: {text}");
    assert!(
        story::outcome(&t).contains("an acknowledged write lost"),
        "{}",
        story::outcome(&t)
    );

    let sync = with_lag(FencingPolicy::Strict, 0);
    let s = story::Story::of(&sync);
    let text: Vec<String> = (0..=sync.len())
        .flat_map(|i| [s.narration(i), s.say(i)])
        .collect();
    let text = text.join("\n");
    assert!(
        text.contains("its synchronous standby is promoted"),
        "{text}"
    );
    assert!(
        text.contains("so nothing is lost: balance 90, and the highest token it has seen is 34"),
        "{text}"
    );

    let entry = deck::find("storage-failover").unwrap();
    let notes = (entry.notes)(&deck::runs(entry)).join("\n");
    for said in [
        "asynchronous streaming standby, 15 ms behind",
        "B's debit with 34 commits on the primary at t=35",
        "at t=55: ok. Fencing on ends at 90",
        "A's 33 is stale_fence, balance 90",
        "commits wait",
    ] {
        assert!(notes.contains(said), "missing {said:?} in {notes}");
    }
}

/// The failover is a danger marker on the storage lane, named for what it lost.
#[test]
fn the_timeline_marks_the_failover_on_storage() {
    let t = run_as(FencingPolicy::Strict);
    let m = timeline::model(&t, t.len(), false);
    let i = (t.events.iter())
        .position(|e| matches!(e.kind, EventKind::StorageFailover { .. }))
        .unwrap();
    let marker = m.markers.iter().find(|k| k.event == i).expect("drawn");
    assert_eq!(marker.verdict, Verdict::Danger);
    assert_eq!(marker.result, "storage_failover");
    assert_eq!(
        story::marker_label(&t, &t.events[i]),
        "standby promoted: #34 lost"
    );
    let storage = m.markers.iter().find(|k| {
        t.events[k.event].actor.as_deref() == Some("B")
            && matches!(t.events[k.event].kind, EventKind::WriteApplied { .. })
    });
    assert_eq!(storage.map(|k| k.y), Some(marker.y), "on the storage lane");
}

/// The fault survives the scenario's JSON (a recording, the replay's input).
#[test]
fn the_fault_round_trips_through_json() {
    let sc = Scenario::storage_failover();
    let json = serde_json::to_value(&sc).unwrap();
    assert_eq!(
        json["storage_failover"],
        serde_json::json!({"at": 45, "lag": 15})
    );
    let back: Scenario = serde_json::from_value(json).unwrap();
    assert_eq!(back, sc);
    let headline = serde_json::to_value(Scenario::gc_pause()).unwrap();
    assert!(headline.get("storage_failover").is_none(), "unchanged JSON");
}

/// The ledger rolls back to the newest state the standby has: balance, high-water mark
/// (a barrier's too) and applied intents; a lost write no longer counts as the job done,
/// and a second failover goes back no further than the first left it.
#[test]
fn the_ledger_fails_over_to_what_the_standby_has() {
    let debit = |writer: &str, fence: u64, key: &str| WriteRequest {
        publish: None,
        resource: "acct:1".to_owned(),
        writer: writer.to_owned(),
        fence: Some(Fence(fence)),
        amount: 10,
        idempotency_key: Some(key.to_owned()),
    };
    let mut l = Ledger::new(FencingPolicy::Strict);
    l.open("acct:1", 100);
    l.debit(10, debit("A", 33, "k1")).unwrap();
    l.barrier(20, "acct:1", Fence(34)).unwrap();
    l.debit(30, debit("B", 35, "k2")).unwrap();
    let lost = l.fail_over(35, 10);
    assert_eq!(lost.iter().map(|w| w.at).collect::<Vec<_>>(), [30]);
    let a = l.account("acct:1");
    assert_eq!(
        (a.balance, a.last_fence),
        (90, Some(Fence(34))),
        "the barrier at t=20 stays"
    );
    assert!(l.any_accepted("acct:1"), "A's debit stays");
    // k2 is not applied on the standby: the same intent runs again.
    assert_eq!(l.debit(36, debit("B", 35, "k2")), Ok(80));
    assert!(
        l.fail_over(100, 1000).len() == 2,
        "the original A and the retried B"
    );
    assert_eq!(l.account("acct:1").balance, 100);
    assert!(
        !l.any_accepted("acct:1"),
        "a lost write is not there to read"
    );
}
