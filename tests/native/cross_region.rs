//! `cross-region`: a lock service a WAN round trip away. Every lock command runs there half
//! a round trip after it is sent and costs its client the whole round trip, and the new
//! holder's token reaches storage that much later: a stale
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

/// `who`'s first grant: when the lock service made it, and when the lease expires there.
fn grant(t: &Trace, who: &str) -> (u64, u64) {
    t.events
        .iter()
        .find_map(|e| match e.kind {
            EventKind::Acquired { expires_at, .. } if e.actor.as_deref() == Some(who) => {
                Some((e.at, expires_at))
            }
            _ => None,
        })
        .expect("no grant")
}

#[test]
fn a_lock_command_runs_on_the_lock_service_half_a_round_trip_after_it_is_sent() {
    for rtt in [0, 10, CROSS_REGION_RTT, 21] {
        let t = strict(rtt);
        let (there, back) = (rtt / 2, rtt - rtt / 2);
        // A sends its acquire at t=0: the lock service grants it on arrival, the lease's
        // TTL counting from there, and A reads the job's status when the answer is back.
        assert_eq!(grant(&t, "A"), (there, there + 30), "rtt {rtt}");
        assert_eq!(
            at(&t, "A", |k| matches!(k, EventKind::JobChecked { .. })),
            rtt
        );
        // B's acquire sent at t=22 is refused on arrival; its retry timer starts when the
        // answer is back, so its second acquire is sent at t=32 + rtt.
        let refused = at(&t, "B", |k| matches!(k, EventKind::AcquireRefused { .. }));
        assert_eq!(refused, 22 + there, "rtt {rtt}");
        let (granted, until) = grant(&t, "B");
        assert_eq!(
            (granted, until),
            (32 + rtt + there, 62 + rtt + there),
            "rtt {rtt}"
        );
        let heard = at(&t, "B", |k| matches!(k, EventKind::JobChecked { .. }));
        assert_eq!(heard, granted + back, "rtt {rtt}");
    }
}

#[test]
fn a_client_paused_while_its_command_travels_does_not_hold_it_back() {
    // A's acquire is on its way (sent at t=0, arriving at t=20) when A freezes at t=5: the
    // lock service grants it at t=20 all the same, and A hears of it after its pause.
    let mut sc = Scenario::cross_region_with(40).with_policy(FencingPolicy::Strict);
    sc.actors[0].pauses[0].start = 5;
    let t = run(&sc);
    assert_eq!(grant(&t, "A"), (20, 50));
    let woke = at(&t, "A", |k| matches!(k, EventKind::PauseEnded { .. }));
    assert_eq!(woke, 45);
    assert_eq!(
        at(&t, "A", |k| matches!(k, EventKind::JobChecked { .. })),
        45
    );
}

#[test]
fn the_window_before_storage_sees_the_new_token_grows_with_the_round_trip() {
    // One region: B's 34 reaches storage at t=37, and A's late 33 is refused.
    assert_eq!(
        writes(&strict(0)),
        vec![w(37, "B", 34, "ok"), w(65, "A", 33, "stale_fence")]
    );
    // 10 ms: B granted at 47, writes at 57, still before A.
    assert_eq!(
        writes(&strict(10)),
        vec![w(57, "B", 34, "ok"), w(65, "A", 33, "stale_fence")]
    );
    // 20 ms (the entry): B granted at 62 hears at 72; A's 33 lands at 65, first, under every
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
fn the_words_say_where_each_half_of_the_round_trip_goes() {
    let t = strict(CROSS_REGION_RTT);
    let story = story::Story::of(&t);
    assert!(story.narration(0).contains(
        "every lock command costs a client a 20 ms round trip, and runs on the lock service when it arrives, 10 ms after it was sent"
    ));
    let step = |who: &str, want: fn(&EventKind) -> bool| {
        1 + t
            .events
            .iter()
            .position(|e| e.actor.as_deref() == Some(who) && want(&e.kind))
            .unwrap()
    };
    let a = story.narration(step("A", |k| matches!(k, EventKind::Acquired { .. })));
    assert!(a.starts_with("t=10 ms — "), "{a}");
    assert!(
        a.ends_with("The lease runs until t=40. A sent the command at t=0; it ran on arrival, and the answer reaches A at t=20. A counts the lease from its send (as Redlock's clients do), so to A it ends at t=30, 10 ms before the lock service's t=40."),
        "{a}"
    );
    assert!(story
        .say(step("A", |k| matches!(k, EventKind::Acquired { .. })))
        .starts_with("Every lock command waits a round trip (20 ms) to the lock service"));
    let refused = story.narration(step("B", |k| matches!(k, EventKind::AcquireRefused { .. })));
    assert!(
        refused.ends_with(
            "B sent the command at t=22; it ran on arrival, and the answer reaches B at t=42."
        ),
        "{refused}"
    );
    let grant = step("B", |k| matches!(k, EventKind::Acquired { .. }));
    assert!(story.narration(grant).contains(
        "B sent the command at t=52; it ran on arrival, and the answer reaches B at t=72."
    ));
    assert!(story.say(grant).contains(
        "hears of it only half a round trip later, and storage sees 34 only with B's first write"
    ));
    let entry = deck::find("cross-region").unwrap();
    let notes = (entry.notes)(&deck::runs(entry)).join("\n");
    for want in [
        "A asks at t=0; the lock service grants 33 when the request arrives, at t=10, so there the lease runs to t=40, while A, counting from its send (as Redlock's clients do), believes it ends at t=30.",
        "believes it ends at t=30. A freezes in a GC pause past both; B is granted 34 at t=62 but hears of it at t=72. A wakes and its 33 reaches storage at t=65",
        "0 ms: B granted at t=32, first write at t=37, A's 33 stale_fence (90)",
        "10 ms: B granted at t=47, first write at t=57, A's 33 stale_fence (90)",
        "20 ms: B granted at t=62, A's 33 accepted before B wrote anything (90)",
        "Run one lock service per region",
    ] {
        assert!(notes.contains(want), "{want}\n{notes}");
    }
    // In one region nothing about a round trip is said.
    let near = strict(0);
    assert!(!(0..=near.len()).any(|s| story::Story::of(&near).narration(s).contains("round trip")));
}

/// `id`'s scenario under strict with the lock service `rtt` away, and its story's narration
/// and Say lines, step by step.
fn far(id: &str, rtt: u64) -> (Trace, Vec<(String, String)>) {
    let mut sc = (deck::find(id).unwrap().build)().with_policy(FencingPolicy::Strict);
    sc.lock_rtt = rtt;
    let t = run(&sc);
    let story = story::Story::of(&t);
    let lines = (0..=t.len())
        .map(|s| (story.narration(s), story.say(s)))
        .collect();
    (t, lines)
}

#[test]
fn a_grant_handed_over_in_a_queue_was_not_sent_so_no_send_time_is_claimed() {
    let (_, lines) = far("lock-queue", 20);
    let sent: Vec<&str> = lines
        .iter()
        .filter(|(n, _)| n.contains("sent the command"))
        .map(|(n, _)| n.as_str())
        .collect();
    // Only A's own acquire was sent; B's and C's grants come from their watches firing.
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert!(sent[0].contains("A sent the command at t=0"), "{sent:?}");
    let watch = lines
        .iter()
        .find(|(n, _)| n.contains("B's watch fires"))
        .unwrap();
    assert!(!watch.1.contains("half a round trip"), "{watch:?}");
}

#[test]
fn a_local_deadline_counts_from_the_send_and_says_so() {
    let (_, lines) = far("drift-margin", 20);
    let check = lines
        .iter()
        .map(|(n, _)| n)
        .find(|n| n.contains("checks its local deadline"))
        .unwrap();
    // 56 ms after its send at t=0, 20% slow: 44 ms; the grant was made at t=10.
    assert!(
        check.contains("its own clock, running 20% slow, reads 44 ms since it asked for its lease (56 ms in real time; the lock server granted it 46 ms ago)"),
        "{check}"
    );
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
