//! The second story review (issue 40, `shared/reviews/story-review-2.md`): each wording
//! finding pinned by a test that failed on the words before it was fixed.

use fencing_lab::core::deck::{self, DECK};
use fencing_lab::core::story::{self, Line};
use fencing_lab::core::{run, EventKind, Fault, FencingPolicy, Scenario, Trace};

fn run_as(id: &str, policy: FencingPolicy) -> Trace {
    run(&(deck::find(id).unwrap().build)().with_policy(policy))
}

fn deck_runs() -> Vec<(&'static str, Trace)> {
    DECK.iter()
        .flat_map(|e| FencingPolicy::ALL.map(|p| (e.id, run(&(e.build)().with_policy(p)))))
        .collect()
}

fn notes(id: &str) -> Vec<String> {
    let e = deck::find(id).unwrap();
    (e.notes)(&deck::runs(e))
}

/// Every Say line of a run, step 0 included, one per step.
fn says(t: &Trace) -> Vec<String> {
    (0..=story::Steps::of(t).last())
        .map(|s| story::Story::of(t).say(s))
        .collect()
}

/// The step showing the first event that matches `pred`.
fn step_of(t: &Trace, pred: impl Fn(&fencing_lab::core::TraceEvent) -> bool) -> usize {
    let i = t.events.iter().position(pred).expect("no such event");
    story::Steps::of(t).showing(i)
}

/// N1: a restart with no AOF loses the lock; with everysec only an OS crash or power loss does.
#[test]
fn n1_a_restart_loses_what_the_fsync_policy_says() {
    for p in FencingPolicy::ALL {
        let t = run_as("redis-restart", p);
        let restart = step_of(&t, |e| matches!(e.kind, EventKind::Failover { .. }));
        let say = story::Story::of(&t).say(restart);
        assert!(
            say.contains("With no AOF, a restart forgets the lock and its counter")
                && say.contains("with appendfsync everysec, only an OS crash or power loss does"),
            "{say}"
        );
        assert!(says(&t)
            .iter()
            .all(|s| !s.contains("Without appendfsync always")));
    }
}

/// N4: "superseded" means by grant order, on every page that defines it.
#[test]
fn n4_superseded_is_defined_by_grant_order() {
    assert_eq!(
        story::SUPERSEDED,
        "accepted after the lock was granted to someone else"
    );
    let explorer = include_str!("../../src/ui/explorer.rs");
    assert!(explorer.contains("story::SUPERSEDED"));
    assert!(!explorer.contains("newer token had already been granted"));
    // Every accepted late write names the later grant where it says "superseded".
    for (id, t) in deck_runs() {
        let steps = story::Steps::of(&t);
        for (i, e) in t.events.iter().enumerate() {
            if e.is_late_write() {
                let n = story::Story::of(&t).narration(steps.showing(i));
                assert!(
                    n.contains("superseded") && n.contains("granted"),
                    "{id}: {n}"
                );
            }
        }
    }
}

/// N5: handoff-barrier's broken run is labelled by what was live, and a key on job 7 is
/// said to keep the stale result.
#[test]
fn n5_handoff_harm_is_what_was_live() {
    let t = run_as("handoff-barrier", FencingPolicy::Off);
    let late = step_of(&t, |e| e.is_late_write());
    let say = story::Story::of(&t).say(late);
    assert!(
        say.contains("first-wins idempotency key") && say.contains("keep A's result and drop"),
        "{say}"
    );
    let b = step_of(&t, |e| {
        e.actor.as_deref() == Some("B") && matches!(e.kind, EventKind::WriteApplied { .. })
    });
    let say = story::Story::of(&t).say(b);
    assert!(
        say.contains("A's stale result was the published one from t=16.0 s to t=18.0 s"),
        "{say}"
    );
    let n = notes("handoff-barrier").join("\n");
    assert!(
        n.contains("from t=16.0 s until B's lands at t=18.0 s"),
        "{n}"
    );
    assert!(n.contains("first-wins idempotency key on job 7"), "{n}");
    for (id, t) in deck_runs() {
        for s in says(&t) {
            assert!(
                !s.contains("no idempotency key on the job catches it"),
                "{id}: {s}"
            );
        }
    }
}

/// N6: a refusal that returns the last fence tells the client which write landed.
#[test]
fn n6_the_last_fence_tells_which_write_landed() {
    let t = run_as("same-token-retry", FencingPolicy::Strict);
    let refused = step_of(&t, |e| e.result_code() == "stale_fence");
    let say = story::Story::of(&t).say(refused);
    assert!(
        say.contains(
            "Only the last fence storage returns, 33, A's own token, says its first debit landed"
        ),
        "{say}"
    );
    let n = notes("same-token-retry").join("\n");
    assert!(
        n.contains("cannot tell which of its writes landed, unless storage returns the last fence")
    );
    assert!(!say.contains("cannot tell whether") && !n.contains("cannot tell whether"));
}

/// N8: etcd revisions are ranks here, and every setup naming a lock service counted in
/// seconds says once how times are scaled, from its own TTL.
#[test]
fn n8_revisions_are_ranks_and_times_are_scaled() {
    let t = run_as("raft-partition", FencingPolicy::Strict);
    let b = step_of(&t, |e| {
        e.actor.as_deref() == Some("B") && matches!(e.kind, EventKind::Acquired { .. })
    });
    let n = story::Story::of(&t).narration(b);
    assert!(
        n.contains("real revisions are larger, still increasing"),
        "{n}"
    );
    for (id, t) in deck_runs() {
        let setup = story::Story::of(&t).narration(0);
        let ttl = t.scenario.lease_ttl;
        let clause = format!("Times scaled: {ttl} ms here stands for {ttl} s");
        let names_service = ["etcd", "ZooKeeper", "Chubby"]
            .iter()
            .any(|s| setup.contains(s));
        // Review 3, U6: a Redis failover or restart takes seconds too.
        let redis_down = t
            .scenario
            .faults
            .iter()
            .any(|f| matches!(f.fault, Fault::Failover { .. } | Fault::Restart { .. }));
        let wants = (names_service || redis_down) && t.scenario.horizon < story::SECONDS_FROM;
        assert_eq!(
            setup.matches("Times scaled").count(),
            usize::from(wants),
            "{id}: {setup}"
        );
        assert_eq!(setup.contains(&clause), wants, "{id}: {setup}");
        assert!(!setup.contains("times scaled down here"), "{id}: {setup}");
    }
    // Computed from the TTL, not written in: a 45 ms lease stands for 45 s.
    let sc = Scenario {
        lease_ttl: 45,
        ..Scenario::sequencer()
    };
    let setup = story::Story::of(&run(&sc)).narration(0);
    assert!(
        setup.contains("Times scaled: 45 ms here stands for 45 s."),
        "{setup}"
    );
    // Redis's PX counts in ms: no clause.
    assert!(
        !story::Story::of(&run_as("gc-pause", FencingPolicy::Strict))
            .narration(0)
            .contains("scaled")
    );
}

/// N9: the consensus-store what-if in redis-restart says what it does not fix.
#[test]
fn n9_a_durable_lock_service_fixes_the_restart_only() {
    let n = notes("redis-restart").join("\n");
    assert!(
        n.contains("That fixes the restart only: a pause or a partition still needs the fence."),
        "{n}"
    );
}

/// N10: each lock speaks its own words.
#[test]
fn n10_words_of_the_right_system() {
    let t = run_as("raft-partition", FencingPolicy::Strict);
    let renew = step_of(&t, |e| matches!(e.kind, EventKind::Extended { .. }));
    let say = story::Story::of(&t).say(renew);
    assert!(
        say.contains("renews the lease by ID") && !say.contains("value"),
        "{say}"
    );
    let t = run_as("lock-queue", FencingPolicy::Strict);
    let release = step_of(&t, |e| matches!(e.kind, EventKind::Released { .. }));
    let n = story::Story::of(&t).narration(release);
    assert!(
        n.contains("deletes its own sequential node") && !n.contains("revokes its lease"),
        "{n}"
    );
    let t = run_as("lock-delay", FencingPolicy::Strict);
    let delayed = step_of(&t, |e| {
        e.result_code() == "lock_held" && e.snapshot.holder.is_none()
    });
    let n = story::Story::of(&t).narration(delayed);
    assert!(
        n.contains("refused: nobody holds acct:1") && !n.contains("(lock_held) — no lease is live"),
        "{n}"
    );
}

/// N11: a late self-cancel is not what stops a write; review 3's U7: in renewal no write
/// was sent before the pause, so the line names the race the watchdog won instead.
#[test]
fn n11_a_self_cancel_cannot_recall_a_sent_write() {
    let t = run_as("renewal", FencingPolicy::Strict);
    let failed = step_of(&t, |e| matches!(e.kind, EventKind::ExtendFailed { .. }));
    let say = story::Story::of(&t).say(failed);
    assert!(
        say.contains("had the worker run first, its debit would have gone out"),
        "{say}"
    );
    assert!(!say.contains("what ran in between"), "{say}");
}

/// N12: every click has something new to say.
#[test]
fn n12_no_step_without_something_to_say() {
    for (id, t) in deck_runs() {
        let lines = says(&t);
        for (i, s) in lines.iter().enumerate() {
            assert!(
                !s.contains("As before") && !s.contains("Nothing new here"),
                "{id}: {s}"
            );
            assert!(!s.is_empty(), "{id}: step {i} says nothing");
            assert!(!lines[..i].contains(s), "{id}: {s} said twice");
        }
    }
    // A second client reading the job's status says who else runs the job.
    let t = run_as("gc-pause", FencingPolicy::Off);
    let steps = story::Steps::of(&t);
    let reads: Vec<usize> = (0..t.len())
        .filter(|&i| matches!(t.events[i].kind, EventKind::JobChecked { done: false }))
        .collect();
    let say = story::Story::of(&t).say(steps.showing(reads[1]));
    assert_eq!(
        say,
        "A started it too and has not written: two clients now run it."
    );
    // drift-margin: the stop and the give-up say two different things.
    let t = run_as("drift-margin", FencingPolicy::Off);
    let gave_up = step_of(&t, |e| matches!(e.kind, EventKind::GaveUp));
    let (stop, give) = (
        story::Story::of(&t).say(gave_up - 1),
        story::Story::of(&t).say(gave_up),
    );
    assert!(stop.contains("pause after the check"), "{stop}");
    assert!(
        !give.contains("pause") && give.contains("nothing in flight"),
        "{give}"
    );
    // partition's notes in the scenario's own unit.
    let n = notes("partition").join("\n");
    assert!(
        !n.contains("600 s") && n.contains("a TTL of 600000 ms"),
        "{n}"
    );
    // clock-jump: A's own view of its lock is the TTL less Redlock's drift allowance.
    let t = run_as("clock-jump", FencingPolicy::Off);
    let jump = step_of(&t, |e| matches!(e.kind, EventKind::LockClockJumped { .. }));
    let n = story::Story::of(&t).narration(jump);
    assert!(
        n.contains("valid until about t=28") && n.contains("drift allowance"),
        "{n}"
    );
    assert!(notes("clock-jump")
        .join("\n")
        .contains("valid until about t=28"));
    // The last resort for an edited run that repeats itself is not "As before." either.
    let mut sc = Scenario::gc_pause();
    sc.actors.push(sc.actors[1].clone());
    sc.actors[2].name = "C".to_owned();
    let t = run(&sc);
    for s in says(&t) {
        assert!(!s.contains("As before"), "{s}");
    }
}

/// M7: the page recommends one equal-token rule, and says when, the same way everywhere.
#[test]
fn m7_one_rule_recommended_everywhere() {
    let rule = Line::WhichRule.text();
    assert!(rule.starts_with("Recommend strict (>) when each grant makes one write."));
    assert!(rule.contains("same-epoch (≥) only together with an idempotency key"));
    for id in ["same-token-retry", "handoff-barrier"] {
        assert!(notes(id).iter().any(|n| n.contains(rule)), "{id}");
    }
    let t = run_as("handoff-barrier", FencingPolicy::Strict);
    assert!(says(&t).iter().any(|s| s.contains(rule)));
    // Nowhere is same-epoch advised without a key, or strict advised the old ways.
    let mut texts: Vec<String> = DECK.iter().flat_map(|e| notes(e.id)).collect();
    texts.extend(deck_runs().iter().flat_map(|(_, t)| says(t)));
    for text in texts {
        for sentence in text.split(". ") {
            let lower = sentence.to_lowercase();
            if lower.contains("use same-epoch") {
                assert!(lower.contains("key"), "{sentence}");
            }
            assert!(
                !lower.contains("strict (>) suits") && !lower.contains("strict (>) only when"),
                "{sentence}"
            );
        }
    }
}

/// U5: claim-row strict's refusal and stop say two different, new things.
#[test]
fn u5_claim_row_stop_says_something_new() {
    let t = run_as("claim-row", FencingPolicy::Strict);
    let stop = step_of(&t, |e| matches!(e.kind, EventKind::GaveUp));
    let say = story::Story::of(&t).say(stop);
    assert!(
        say.contains("stale_fence is final, unlike a timeout"),
        "{say}"
    );
    assert!(
        !say.contains("hands the job to the newer generation"),
        "{say}"
    );
}

/// N3: renewal-herd's notes in consistent units (a 30 s TTL, scaled), and the herd's harm
/// on the timeline: the late reply, the lost lease, B's grant, A's write refused.
#[test]
fn n3_the_herd_in_consistent_units() {
    let n = notes("renewal-herd").join("\n");
    for want in [
        "Times scaled: 30 ms here stands for 30 s",
        "renew on one fixed schedule, 3 s before each lease ends",
        "The model assumes the service answers 2,000 commands a second",
        "Renew at a third of the TTL and 20 s are left, twice the 10 s between renewals",
    ] {
        assert!(n.contains(want), "{want}: {n}");
    }
    assert!(
        !n.contains("every 10 ms") && !n.contains("of a 30 ms TTL"),
        "{n}"
    );
    let t = run_as("renewal-herd", FencingPolicy::Strict);
    let kinds: Vec<&str> = t.events.iter().map(|e| e.result_code()).collect();
    for code in ["queued", "not_holder", "stale_fence"] {
        assert!(kinds.contains(&code), "{code}: {kinds:?}");
    }
}

/// N2: etcd's client is not deaf until its own timeout. The minority member answers "no
/// leader", the client learns at its lease deadline (Session.Done()), and the stale write
/// is one that left before that: the fence decides, in every policy.
#[test]
fn n2_etcds_client_learns_at_its_lease_deadline() {
    for p in FencingPolicy::ALL {
        let t = run_as("raft-partition", p);
        let at = |want: fn(&EventKind) -> bool| {
            let e = t
                .events
                .iter()
                .find(|e| want(&e.kind))
                .expect("no such event");
            (e.at, step_of(&t, |x| std::ptr::eq(x, e)))
        };
        let (refused, _) = at(|k| matches!(k, EventKind::LockNoLeader { .. }));
        let (learned, step) = at(|k| matches!(k, EventKind::LockTimedOut { .. }));
        let (expired, _) = at(|k| matches!(k, EventKind::LeaseExpired { .. }));
        let (sent, _) = at(|k| matches!(k, EventKind::WriteSent { .. }));
        assert_eq!((refused, learned), (20, expired), "{p:?}");
        assert!(
            sent < learned,
            "{p:?}: A's write left at {sent}, before it learned"
        );
        let say = story::Story::of(&t).say(step);
        assert!(
            say.starts_with("A learned at its lease deadline, not its own timeout;"),
            "{say}"
        );
        let words = says(&t).join("\n") + &notes("raft-partition").join("\n");
        for old in [
            "learned only at its own timeout",
            "a minority of one that answers nothing, all A's client can see",
        ] {
            assert!(!words.contains(old), "{p:?}: {old}");
        }
    }
}
