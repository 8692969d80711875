//! `raft-partition`: the lock service itself partitioned. The holder's etcd member is on the
//! minority side: its renewal gets no reply, the majority lets the lease run out and grants
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
        // One live lease at a time on the lock service, two believers.
        assert_eq!(t.summary.max_live_leases, 1);
        assert_eq!(t.summary.max_believers, 2);
        let renewal = t.events.iter().find_map(|e| match e.kind {
            EventKind::LockUnanswered { command, .. } => Some((e.at, command)),
            _ => None,
        });
        assert_eq!(renewal, Some((20, LockCommand::Renew)));
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
        .position(|e| matches!(e.kind, EventKind::LockUnanswered { .. }))
        .unwrap();
    assert!(story::Story::of(&t)
        .narration(step)
        .contains("without a quorum it can commit no renewal"));
    assert!(story::Story::of(&t)
        .say(step)
        .starts_with("A minority can neither grant nor renew;"));
    let entry = deck::find("raft-partition").unwrap();
    let notes = (entry.notes)(&deck::runs(entry)).join("\n");
    for want in [
        "gets 34 at t=47",
        "debits with 33 at t=53 and learns only at t=55",
        "SIGSTOP",
        "Jepsen's etcd 3.4.3",
        "stale_fence (90)",
    ] {
        assert!(notes.contains(want), "{want}: {notes}");
    }
    // Plain `partition` keeps its own words.
    let plain = run(&Scenario::partition());
    assert!(!(0..=plain.len()).any(|s| story::Story::of(&plain).narration(s).contains("minority")));
}
