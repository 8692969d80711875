//! `partition`: the holder is cut off from the lock service, not from storage. It keeps
//! running; its renewal gets no reply, the lease runs out and B takes over; its write still
//! reaches storage. It learns only at its own timeout, and the fence is what refuses it.

use fencing_lab::core::deck::{
    self, PARTITION_IN_FLIGHT, PARTITION_LOCK_TIMEOUT, PARTITION_LONG_TTL, PARTITION_QUICK_TIMEOUT,
};
use fencing_lab::core::story;
use fencing_lab::core::{
    observations_of, recorded, run, Account, EventKind, FencingPolicy, LockCommand, Partition,
    Recording, Scenario, Step, Trace,
};
use fencing_lab::lab::{EditError, ParseError};
use fencing_lab::share::{decode, encode, ShareError};

use crate::common;
use common::{w, write_step, writes};

fn run_as(policy: FencingPolicy) -> Trace {
    run(&Scenario::partition().with_policy(policy))
}

/// (at, actor, kind's debug name) of every event, for asserting the order of a run.
fn timeline(t: &Trace) -> Vec<(u64, String, String)> {
    t.events
        .iter()
        .map(|e| {
            let kind = format!("{:?}", e.kind);
            let name = kind.split([' ', '{', '(']).next().unwrap_or("").to_owned();
            (e.at, e.actor.clone().unwrap_or_default(), name)
        })
        .collect()
}

/// When `actor`'s client gave up on an unanswered lock command, with what it knew then.
fn timed_out(t: &Trace, actor: &str) -> Option<(u64, LockCommand, u64, bool, Option<u64>)> {
    t.events.iter().find_map(|e| match &e.kind {
        EventKind::LockTimedOut {
            command,
            sent_at,
            cancelled,
            wrote_at,
            ..
        } if e.actor.as_deref() == Some(actor) => {
            Some((e.at, *command, *sent_at, *cancelled, *wrote_at))
        }
        _ => None,
    })
}

#[test]
fn the_cut_off_holder_keeps_running_and_its_write_reaches_storage() {
    let off = run_as(FencingPolicy::Off);
    let sc = &off.scenario;
    assert_eq!(
        sc.partitioned(),
        Some(Partition {
            actor: 0,
            start: 15,
            end: 65
        })
    );
    assert!(
        sc.actors[0].pauses.is_empty(),
        "a partition is not a pause: nobody pauses"
    );
    assert!(sc.actors[1].pauses.is_empty());
    assert_eq!(sc.actors[0].lock_timeout, Some(PARTITION_LOCK_TIMEOUT));
    // The renewal before the window got through; the one in it got no reply.
    let a_lock: Vec<(u64, String)> = timeline(&off)
        .into_iter()
        .filter(|(_, who, k)| {
            who == "A" && ["Extended", "LockUnanswered", "LockTimedOut"].contains(&k.as_str())
        })
        .map(|(at, _, k)| (at, k))
        .collect();
    assert_eq!(
        a_lock,
        [
            (10, "Extended".to_owned()),
            (20, "LockUnanswered".to_owned()),
            (50, "LockTimedOut".to_owned())
        ]
    );
    let unanswered = off
        .events
        .iter()
        .find(|e| matches!(e.kind, EventKind::LockUnanswered { .. }))
        .unwrap();
    assert_eq!(
        unanswered.kind,
        EventKind::LockUnanswered {
            command: LockCommand::Renew,
            timeout_at: Some(50)
        }
    );
    assert_eq!(unanswered.result_code(), "no_reply");
    // The lock service let the lease run out on the TTL of the last renewal that arrived.
    let expired = off
        .events
        .iter()
        .find(|e| matches!(e.kind, EventKind::LeaseExpired { .. }))
        .unwrap();
    assert_eq!(expired.at, 40);
    assert_eq!(expired.snapshot.believers, ["A"], "A still believes");
    // B takes over at once: availability.
    let b_grant = off
        .events
        .iter()
        .find(|e| e.actor.as_deref() == Some("B") && matches!(e.kind, EventKind::Acquired { .. }))
        .unwrap();
    assert_eq!(b_grant.at, 40);
    assert_eq!(b_grant.snapshot.believers, ["A", "B"]);
    // Storage is reachable: A's write arrives, after B's.
    assert_eq!(writes(&off), [w(45, "B", 34, "ok"), w(48, "A", 33, "ok")]);
    assert_eq!(off.summary.final_balance, 80);
    assert_eq!(off.summary.accepted_writes, 2);
    assert_eq!(off.summary.late_writes_accepted, 1);
    assert_eq!(off.summary.duplicate_runs, 1);
    assert_eq!(off.summary.max_believers, 2);
}

#[test]
fn the_fence_refuses_the_write_under_both_fencing_rules() {
    for policy in [FencingPolicy::Strict, FencingPolicy::SameEpoch] {
        let t = run_as(policy);
        assert_eq!(
            writes(&t),
            [w(45, "B", 34, "ok"), w(48, "A", 33, "stale_fence")],
            "{policy:?}"
        );
        assert_eq!(t.summary.final_balance, 90);
        assert_eq!(t.summary.accepted_writes, 1);
        assert_eq!(t.summary.rejected_writes, 1);
        assert_eq!(t.summary.late_writes_accepted, 0);
        assert_eq!(t.summary.duplicate_runs, 0);
        assert_eq!(t.summary.last_fence.map(|f| f.0), Some(34));
        assert_eq!(
            story::outcome(&t),
            "A's 33 refused: stale_fence; last fence 34"
        );
    }
}

#[test]
fn a_learns_at_its_own_timeout_after_the_lease_ended_and_after_its_write() {
    for policy in FencingPolicy::ALL {
        let t = run_as(policy);
        // Sent at 20, 30 ms timeout: it gives up at 50, 10 ms after the lease ended at 40
        // and 2 ms after its debit at 48. It self-cancels: too late for that write.
        assert_eq!(
            timed_out(&t, "A"),
            Some((50, LockCommand::Renew, 20, true, Some(48))),
            "{policy:?}"
        );
        let e = t
            .events
            .iter()
            .find(|e| matches!(e.kind, EventKind::LockTimedOut { .. }))
            .unwrap();
        assert!(matches!(
            e.kind,
            EventKind::LockTimedOut {
                lease_ended_at: Some(40),
                ..
            }
        ));
        assert!(!e.snapshot.believers.contains(&"A".to_owned()));
        assert_eq!(e.result_code(), "timeout");
        // A does nothing after its self-cancel: no release, no further command.
        let i = t.events.iter().position(|x| std::ptr::eq(x, e)).unwrap();
        assert!(t.events[i + 1..]
            .iter()
            .all(|x| x.actor.as_deref() != Some("A")));
    }
}

#[test]
fn a_timeout_shorter_than_the_lease_left_stops_a_in_time_unless_its_write_is_on_the_wire() {
    let off = |sc: Scenario| run(&sc.with_policy(FencingPolicy::Off));
    // 10 ms: A gives up at 30, while its lease still runs until 40, and never writes.
    let quick = off(Scenario::partition_with(PARTITION_QUICK_TIMEOUT, None));
    assert_eq!(
        timed_out(&quick, "A"),
        Some((30, LockCommand::Renew, 20, true, None))
    );
    assert_eq!(writes(&quick), [w(45, "B", 34, "ok")]);
    assert_eq!(quick.summary.final_balance, 90);
    assert_eq!(quick.summary.duplicate_runs, 0);
    // The debit sent at 25 takes 25 ms: A's self-cancel at 30 cannot call it back.
    let sent = off(Scenario::partition_with(
        PARTITION_QUICK_TIMEOUT,
        Some(PARTITION_IN_FLIGHT),
    ));
    assert_eq!(
        timed_out(&sent, "A"),
        Some((30, LockCommand::Renew, 20, true, Some(25)))
    );
    assert_eq!(writes(&sent), [w(45, "B", 34, "ok"), w(50, "A", 33, "ok")]);
    assert_eq!(sent.summary.final_balance, 80);
    let fenced = run(&Scenario::partition_with(
        PARTITION_QUICK_TIMEOUT,
        Some(PARTITION_IN_FLIGHT),
    ));
    assert_eq!(
        writes(&fenced),
        [w(45, "B", 34, "ok"), w(50, "A", 33, "stale_fence")]
    );
    // The Say line of that timeout does not call it "in time".
    let i = sent
        .events
        .iter()
        .position(|e| matches!(e.kind, EventKind::LockTimedOut { .. }))
        .unwrap();
    let say = story::Story::of(&sent).say(i + 1);
    assert!(say.contains("already on its way"), "{say}");
    assert!(!say.contains("In time"), "{say}");
}

#[test]
fn a_deadline_counted_from_the_last_acknowledged_renewal_needs_no_reply() {
    let t = run(&Scenario::partition_deadline().with_policy(FencingPolicy::Off));
    let check = t
        .events
        .iter()
        .find_map(|e| match e.kind {
            EventKind::DeadlineChecked { local, ok, .. } => Some((e.at, local, ok)),
            _ => None,
        })
        .unwrap();
    assert_eq!(check, (48, 38, false), "38 ms since the renewal sent at 10");
    assert_eq!(writes(&t), [w(45, "B", 34, "ok")]);
    assert_eq!(t.summary.final_balance, 90);
}

#[test]
fn a_lease_that_outlasts_the_partition_is_safe_and_locks_b_out_until_it_heals() {
    let long = run(&Scenario {
        lease_ttl: PARTITION_LONG_TTL,
        ..Scenario::partition().with_policy(FencingPolicy::Off)
    });
    let b_refused: Vec<u64> = long
        .events
        .iter()
        .filter(|e| {
            e.actor.as_deref() == Some("B") && matches!(e.kind, EventKind::AcquireRefused { .. })
        })
        .map(|e| e.at)
        .collect();
    assert_eq!(b_refused, [20, 30, 40, 50, 60]);
    // A's release at 68 is after the heal (65), so it reaches the lock service.
    let released = long
        .events
        .iter()
        .find(|e| e.actor.as_deref() == Some("A") && matches!(e.kind, EventKind::Released { .. }))
        .unwrap();
    assert_eq!(released.at, 68);
    let b_grant = long
        .events
        .iter()
        .find(|e| e.actor.as_deref() == Some("B") && matches!(e.kind, EventKind::Acquired { .. }))
        .unwrap();
    assert_eq!(b_grant.at, 70);
    // A never lost its lease: its write landed under it, and B found the job done.
    assert_eq!(writes(&long), [w(48, "A", 33, "ok")]);
    assert_eq!(long.summary.final_balance, 90);
    assert_eq!(long.summary.max_believers, 1);
}

#[test]
fn every_command_sent_in_the_window_is_dropped_and_each_timeout_does_what_it_says() {
    // A's acquire at t=0 falls in a partition from 0 to 25: no reply; at its 10 ms timeout
    // it tries again (10 ms later), still cut off; the third try, at 40, after the heal,
    // reaches the lock service, which B took at 20 and released at 30.
    let mut sc = Scenario::partition().with_policy(FencingPolicy::Off);
    sc.set_partition(0, Some((0, 25)), false);
    sc.actors[0].lock_timeout = Some(10);
    let t = run(&sc);
    let a: Vec<(u64, String)> = timeline(&t)
        .into_iter()
        .filter(|(_, who, _)| who == "A")
        .take(5)
        .map(|(at, _, k)| (at, k))
        .collect();
    assert_eq!(
        a,
        [
            (0, "LockUnanswered".to_owned()),
            (10, "LockTimedOut".to_owned()),
            (20, "LockUnanswered".to_owned()),
            (30, "LockTimedOut".to_owned()),
            (40, "Acquired".to_owned()),
        ]
    );
    assert_eq!(writes(&t), [w(25, "B", 33, "ok")], "A finds the job done");
    assert_eq!(
        timed_out(&t, "A"),
        Some((10, LockCommand::Acquire, 0, false, None))
    );
    // A release with no timeout: the client waits for ever and never finishes its script.
    let mut sc = Scenario::partition().with_policy(FencingPolicy::Off);
    sc.actors[0].lock_timeout = None;
    sc.set_partition(0, Some((60, 100)), false);
    sc.actors[0].script = vec![
        Step::Acquire { retry_every: 10 },
        Step::Work { ms: 60 },
        Step::Release,
    ];
    let t = run(&sc);
    let last = t
        .events
        .iter()
        .rev()
        .find(|e| e.actor.as_deref() == Some("A"))
        .unwrap();
    assert_eq!(
        last.kind,
        EventKind::LockUnanswered {
            command: LockCommand::Release,
            timeout_at: None
        }
    );
    assert!(story::Story::of(&t)
        .say(t.events.iter().position(|e| std::ptr::eq(e, last)).unwrap() + 1)
        .contains("waits for ever"));
}

#[test]
fn every_step_says_what_happened_under_each_policy() {
    for policy in FencingPolicy::ALL {
        let t = run_as(policy);
        let words: Vec<String> = (0..=t.len())
            .map(|s| story::Story::of(&t).narration(s))
            .collect();
        let say: Vec<String> = (0..=t.len()).map(|s| story::Story::of(&t).say(s)).collect();
        assert!(words[0]
            .contains("A is cut off from the lock service (not from storage) from t=15 to t=65"));
        let find =
            |pred: fn(&EventKind) -> bool| t.events.iter().position(|e| pred(&e.kind)).unwrap() + 1;
        let lost = find(|k| matches!(k, EventKind::LockUnanswered { .. }));
        assert!(words[lost].contains("A's watchdog sends a renewal (token 33), but a partition cuts A off from the lock service until t=65"));
        assert!(words[lost].contains("waits for one until t=50 (30 ms timeout)"));
        assert!(words[lost].contains("the job works on, and the lease still ends at t=40."));
        assert!(say[lost].contains("No reply is not a refusal"));
        let expiry = find(|k| matches!(k, EventKind::LeaseExpired { .. }));
        assert!(words[expiry].contains("its renewal sent at t=20 got no reply"));
        assert!(say[expiry].contains("cannot tell a cut-off holder from a dead one"));
        let gave_up = find(|k| matches!(k, EventKind::LockTimedOut { .. }));
        assert!(words[gave_up].contains("no reply in 30 ms"));
        assert!(words[gave_up].contains("Its lease had ended at t=40."));
        assert!(words[gave_up].contains("Too late for its write, sent at t=48"));
        assert!(say[gave_up].contains("though its lease had only 20 ms left then: too late"));
        let a_write = write_step(&t, "A");
        match policy {
            FencingPolicy::Off => {
                assert!(say[gave_up].contains("had already landed, and nothing refused it"));
                assert!(words[gave_up].contains("after the lease went to B"));
                assert!(say[a_write].contains("nobody paused"));
                assert!(say[a_write].contains("not from storage"));
            }
            _ => {
                assert!(say[gave_up].contains("only the fence refused it"));
                assert!(say[a_write].contains("storage has seen 34, so it refuses 33"));
            }
        }
        // No sentence claims a pause.
        assert!(words
            .iter()
            .all(|s| !s.contains("GC pause") && !s.contains("wakes")));
    }
}

#[test]
fn the_notes_are_computed_from_the_runs() {
    let e = deck::find("partition").unwrap();
    let notes = (e.notes)(&deck::runs(e));
    let all = notes.join("\n");
    for want in [
        "from t=15 to t=65 A is cut off from the lock service, not from storage",
        "renewal at t=10 got through; the one at t=20 is dropped",
        "runs out at t=40 and B gets 34 at t=40",
        "fencing off it lands too, 80",
        "stale_fence, 90",
        "A learned at t=50",
        "10 ms after its lease ended, 2 ms after its write",
        "it stops at t=30, before writing (90 with fencing off)",
        "landing at t=50): 80 off, 90 strict",
        "stops it at t=48: 90 with fencing off",
        "B is refused 5 times and gets the lock only at t=70",
        "locked out for 50 ms",
    ] {
        assert!(all.contains(want), "missing {want:?} in\n{all}");
    }
}

#[test]
fn the_fold_rebuilds_every_partition_run_from_what_the_clients_saw() {
    let mut scs: Vec<Scenario> = FencingPolicy::ALL
        .iter()
        .map(|p| Scenario::partition().with_policy(*p))
        .collect();
    scs.push(Scenario::partition_with(PARTITION_QUICK_TIMEOUT, None));
    scs.push(Scenario::partition_with(
        PARTITION_QUICK_TIMEOUT,
        Some(PARTITION_IN_FLIGHT),
    ));
    for sc in scs {
        let t = run(&sc);
        let rebuilt = recorded(
            &sc,
            observations_of(&t),
            Account {
                balance: t.summary.final_balance,
                last_fence: t.summary.last_fence,
                last_write_fence: t.summary.last_write_fence,
                ..Account::default()
            },
            Recording {
                systems: Vec::new(),
                timing: String::new(),
                notes: Vec::new(),
            },
        )
        .expect("the fold explains every observation");
        assert_eq!(rebuilt.events, t.events, "{:?}", sc.policy);
        assert_eq!(rebuilt.summary, t.summary);
    }
}

#[test]
fn the_partition_is_in_the_link_and_checked() {
    let sc = Scenario::partition().with_policy(FencingPolicy::Off);
    assert_eq!(encode(&sc, 3), "#s=partition&fence=off&ttl=30&step=3");
    // Edited: a later, shorter window on A and a quicker timeout.
    let hash = "#s=partition&fence=strict&ttl=30&partition.A=25,30&locktimeout.A=10&step=0";
    let view = decode(hash).unwrap();
    assert_eq!(
        view.scenario.partitioned(),
        Some(Partition {
            actor: 0,
            start: 25,
            end: 55
        })
    );
    assert_eq!(view.scenario.actors[0].lock_timeout, Some(10));
    // Printed with the one key for faults, and read back the same.
    let printed =
        "#s=partition&fence=strict&ttl=30&locktimeout.A=10&faults=partition.25.55.A.lock&step=0";
    assert_eq!(encode(&view.scenario, 0), printed);
    assert_eq!(decode(printed).unwrap(), view);
    // Moved to B, or taken away.
    let b = decode("#s=partition&partition.B=0,40").unwrap().scenario;
    assert_eq!(b.partitioned().map(|p| p.actor), Some(1));
    assert_eq!(decode(&encode(&b, 0)).unwrap().scenario, b);
    let none = decode("#s=partition&partition.A=none&locktimeout.A=none").unwrap();
    assert_eq!(none.scenario.partitioned(), None);
    assert_eq!(none.scenario.actors[0].lock_timeout, None);
    assert_eq!(
        encode(&none.scenario, 0),
        "#s=partition&fence=off&ttl=30&locktimeout.A=none&faults=none&step=0"
    );
    // Any deck scenario can get one.
    let gc = decode("#s=gc-pause&partition.B=10,20").unwrap().scenario;
    assert_eq!(decode(&encode(&gc, 0)).unwrap().scenario, gc);
    // Refused with a message.
    assert_eq!(
        decode("#s=partition&partition.A=90,20").unwrap_err(),
        ShareError::Edit(ParseError::Refused(EditError::PartitionTooLate {
            client: "A".into(),
            horizon: 100
        }))
    );
    assert_eq!(
        decode("#s=partition&partition.A=1,2&partition.B=3,4").unwrap_err(),
        ShareError::TwoPartitions
    );
    assert_eq!(
        decode("#s=partition&partition.A=10,0")
            .unwrap_err()
            .to_string(),
        "A partition length must be between 1 ms and 10 minutes (0 ms is too short)"
    );
    let mut bad = Scenario::partition();
    bad.set_partition(5, Some((0, 10)), false);
    assert_eq!(
        bad.validate().unwrap_err().to_string(),
        "the partition names client 6, but there are only 2"
    );
}
