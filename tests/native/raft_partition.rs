//! `raft-partition`: the lock service itself partitioned. The holder's etcd member is on the
//! minority side: its renewal is refused ("no leader") and its client learns at its lease
//! deadline, after its debit left; the majority lets the lease run out and grants
//! the lock again, and only the fence stops the holder's late write.

use fencing_lab::core::deck;
use fencing_lab::core::story;
use fencing_lab::core::{run, EventKind, FencingPolicy, LockCommand, Scenario, TokenSource, Trace};

use crate::common;
use common::{w, writes};

fn run_as(policy: FencingPolicy) -> Trace {
    run(&Scenario::raft_partition().with_policy(policy))
}

#[test]
fn the_majority_grants_again_and_the_fence_refuses_the_minority_holder() {
    let expect = [
        (FencingPolicy::Off, 80, "ok"),
        (FencingPolicy::Strict, 90, "stale_fence"),
        (FencingPolicy::SameEpoch, 90, "stale_fence"),
    ];
    for (policy, balance, a) in expect {
        let t = run_as(policy);
        assert_eq!(t.scenario.lock.token_source(), TokenSource::LockService);
        assert_eq!(
            writes(&t),
            vec![w(49, "B", 34, "ok"), w(53, "A", 33, a)],
            "{policy:?}"
        );
        assert_eq!(t.summary.final_balance, balance);
        // One live lease at a time on the lock service, and A stops believing at its lease
        // deadline: its write had already left.
        assert_eq!(t.summary.max_live_leases, 1);
        assert_eq!(t.summary.max_believers, 1);
        // The minority member refuses the renewal ("no leader"); A's client learns at its
        // lease deadline, t=40 (the renewal at 10 plus the 30 ms TTL), not at its own 35 ms
        // timeout (t=55), and after its debit left at 38.
        let renewal = t.events.iter().find_map(|e| match e.kind {
            EventKind::LockNoLeader { command, learns_at } => Some((e.at, command, learns_at)),
            _ => None,
        });
        assert_eq!(
            renewal,
            Some((20, LockCommand::Renew, Some(40))),
            "{policy:?}"
        );
        assert!(!t
            .events
            .iter()
            .any(|e| matches!(e.kind, EventKind::LockUnanswered { .. })));
        let learned = t.events.iter().find_map(|e| match e.kind {
            EventKind::LockTimedOut {
                command, wrote_at, ..
            } => Some((e.at, command, wrote_at)),
            _ => None,
        });
        assert_eq!(
            learned,
            Some((40, LockCommand::Renew, Some(38))),
            "{policy:?}"
        );
    }
    // The same model as `partition`, on etcd: only the words differ.
    let mut plain = Scenario::raft_partition();
    let p = plain.partitioned().unwrap();
    plain.set_partition(p.actor, Some((p.start, p.end)), false);
    assert!(!plain.minority());
    let plain = run(&plain);
    assert_eq!(writes(&plain), writes(&run_as(FencingPolicy::Strict)));
}

/// etcd revokes a lapsed lease on a sweep every 500 ms, 5 scenario ms at the replay's scale:
/// B asks 3 ms before A's lease ends at 40 and 7 ms after, so the real grant is at 47 too.
#[test]
fn b_asks_clear_of_the_lease_end_either_side() {
    let t = run_as(FencingPolicy::Strict);
    let asks: Vec<(u64, bool)> = (t.events.iter())
        .filter(|e| e.actor.as_deref() == Some("B"))
        .filter_map(|e| match e.kind {
            EventKind::AcquireRefused { .. } => Some((e.at, false)),
            EventKind::Acquired { .. } => Some((e.at, true)),
            _ => None,
        })
        .collect();
    assert_eq!(asks, [(17, false), (27, false), (37, false), (47, true)]);
    let expired = t
        .events
        .iter()
        .find(|e| matches!(e.kind, EventKind::LeaseExpired { .. }));
    assert_eq!(expired.map(|e| e.at), Some(40));
}

#[test]
fn the_words_put_the_holder_on_the_minority_side() {
    let t = run_as(FencingPolicy::Strict);
    assert!(story::Story::of(&t)
        .narration(0)
        .contains("member 1 is cut off from members 2 and 3 (the minority side)"));
    let step = 1 + t
        .events
        .iter()
        .position(|e| matches!(e.kind, EventKind::LockNoLeader { .. }))
        .unwrap();
    assert!(story::Story::of(&t)
        .narration(step)
        .contains("it answers \"etcdserver: no leader\""));
    assert!(story::Story::of(&t)
        .narration(step)
        .contains("if none is answered by t=40, its lease deadline"));
    assert!(story::Story::of(&t).say(step).starts_with(
        "A live minority member refuses: \"no leader\"; the client knows its lease deadline."
    ));
    let story = story::Story::of(&t);
    let all: Vec<String> = (0..=t.events.len())
        .map(|i| story.narration(i) + "\n" + &story.say(i))
        .collect();
    let all = all.join("\n");
    for want in [
        "A's keep-alive has had no answer but \"no leader\" since t=20: at its lease deadline its client closes the keep-alive and Session.Done() fires.",
        "A learned at its lease deadline, not its own timeout; its write had left at t=38, after its last check.",
        "A has stopped, but its write is still on its way: B is not alone.",
    ] {
        assert!(all.contains(want), "{want}");
    }
    let entry = deck::find("raft-partition").unwrap();
    let notes = (entry.notes)(&deck::runs(entry)).join("\n");
    for want in [
        "gets 34 at t=47",
        "answers \"etcdserver: no leader\"",
        "A's client learns at t=40, its lease deadline",
        "A's debit left at t=38, after its last check, and takes until t=53",
        "(A client given all three endpoints would fail over to the majority.)",
        "Jepsen's etcd 3.4.3",
        "stale_fence (90)",
    ] {
        assert!(notes.contains(want), "{want}: {notes}");
    }
    // Review 3, U2: no aside about a replay the page never introduces.
    assert!(
        !notes.contains("SIGSTOP") && !notes.contains("replay"),
        "{notes}"
    );
    // Plain `partition` keeps its own words.
    let plain = run(&Scenario::partition());
    assert!(!(0..=plain.len()).any(|s| story::Story::of(&plain).narration(s).contains("minority")));
}
