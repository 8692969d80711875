//! `redis-restart`: one Redis, no replica. The lock is acknowledged from memory, redis-server
//! is killed and comes back from a snapshot taken before the run, and grants the lock again,
//! with the same token: the failover's rollback without a failover.

use fencing_lab::core::deck;
use fencing_lab::core::story;
use fencing_lab::core::{run, EventKind, Fault, FaultAt, FencingPolicy, LockKind, Scenario, Trace};
use fencing_lab::lab::ScenarioEdit;

use crate::common;
use common::{w, writes};

fn run_as(policy: FencingPolicy) -> Trace {
    run(&Scenario::redis_restart().with_policy(policy))
}

#[test]
fn the_restart_forgets_the_lock_and_its_counter() {
    let expect = [
        (FencingPolicy::Off, 80, "ok"),
        (FencingPolicy::Strict, 90, "stale_fence"),
        (FencingPolicy::SameEpoch, 80, "ok"),
    ];
    for (policy, balance, a) in expect {
        let t = run_as(policy);
        assert_eq!(
            writes(&t),
            vec![w(17, "B", 33, "ok"), w(20, "A", 33, a)],
            "{policy:?}"
        );
        assert_eq!(t.summary.final_balance, balance, "{policy:?}");
        assert_eq!(
            t.summary.max_live_leases, 2,
            "two unexpired grants of one key"
        );
        let lost = t.events.iter().find_map(|e| match &e.kind {
            EventKind::Failover {
                lost,
                rolled_back,
                next_fence,
            } => Some((lost.clone(), *rolled_back, next_fence.0)),
            _ => None,
        });
        let (lost, rolled_back, next) = lost.expect("the restart is on the timeline");
        assert_eq!((lost.len(), rolled_back, next), (1, true, 33));
    }
    // The same run as a failover to a replica cut off before the run: only the words differ.
    let mut as_failover = Scenario::redis_restart();
    as_failover.faults = vec![FaultAt {
        at: as_failover.failover_at().unwrap(),
        fault: Fault::Failover { lag: None },
    }];
    let as_failover = run(&as_failover);
    assert_eq!(writes(&as_failover), writes(&run_as(FencingPolicy::Strict)));
}

#[test]
fn the_words_say_restart_not_failover() {
    for policy in FencingPolicy::ALL {
        let t = run_as(policy);
        let all: Vec<String> = (0..=t.len())
            .flat_map(|s| {
                [
                    story::Story::of(&t).narration(s),
                    story::Story::of(&t).say(s),
                ]
            })
            .collect();
        let text = all.join("\n");
        assert!(
            text.contains("Redis is killed (kill -9) and restarts from its last snapshot"),
            "{text}"
        );
        assert!(text.contains("Acknowledged is not durable"), "{text}");
        for wrong in ["failover", "replica", "promoted"] {
            assert!(
                !text.to_lowercase().contains(wrong),
                "{policy:?} says {wrong}: {text}"
            );
        }
        let marker = t
            .events
            .iter()
            .find(|e| matches!(e.kind, EventKind::Failover { .. }))
            .unwrap();
        assert_eq!(story::marker_label(&t, marker), "restart: #33 lost");
    }
    let entry = deck::find("redis-restart").unwrap();
    let notes = (entry.notes)(&deck::runs(entry)).join("\n");
    assert!(
        notes.contains("B acquires at t=15 and gets 33 again"),
        "{notes}"
    );
    assert!(notes.contains("Same-epoch admits both: 80"), "{notes}");
    assert!(
        notes.contains("restart loses nothing; B waits and finds the job done (90)"),
        "{notes}"
    );
}

#[test]
fn tokens_from_a_lock_service_survive_the_restart() {
    let t = run(&Scenario {
        lock: LockKind::SERVICE,
        ..Scenario::redis_restart()
    });
    assert_eq!(writes(&t), vec![w(20, "A", 33, "ok")]);
    assert_eq!(t.summary.max_live_leases, 1);
    // There is no replica: What if… edits the restart's snapshot age, not a replica's lag.
    let sc = Scenario::redis_restart();
    let fields = fencing_lab::lab::fault_fields(&sc, 0);
    let labels: Vec<&str> = fields.iter().map(|f| f.label.as_str()).collect();
    assert_eq!(labels, ["Lock restart at", "Lock restart snapshot age"]);
    let gone = ScenarioEdit::Fault {
        index: 0,
        fault: None,
    };
    assert!(gone.applies_to(&sc));
}
