//! The scenario deck: every entry runs on the real engine and shows what its notes say,
//! under each fencing policy.

use fencing_lab::core::deck::{self, DECK};
use fencing_lab::core::story;
use fencing_lab::core::{
    renewal_herd, run, Awareness, EventKind, ExpiryCause, Fence, FencingPolicy, Grant, Lane,
    LeaseEnd, LockKind, PauseCause, ReleaseMode, Scenario, Shortened, Snapshot, Step, StorageCheck,
    TokenSource, Trace, TraceEvent, WriteError,
};

use crate::common;
use common::{w, writes};

const OFF: FencingPolicy = FencingPolicy::Off;
const STRICT: FencingPolicy = FencingPolicy::Strict;
const SAME: FencingPolicy = FencingPolicy::SameEpoch;

fn build(id: &str) -> Scenario {
    let entry = deck::find(id).unwrap_or_else(|| panic!("no deck entry {id:?}"));
    (entry.build)()
}

fn run_as(id: &str, policy: FencingPolicy) -> Trace {
    run(&build(id).with_policy(policy))
}

/// (at, owner, token) of every successful acquire.
fn acquired(t: &Trace) -> Vec<(u64, String, u64)> {
    t.events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Acquired { fence, .. } => Some((e.at, e.actor.clone().unwrap(), fence.0)),
            _ => None,
        })
        .collect()
}

fn a(at: u64, owner: &str, token: u64) -> (u64, String, u64) {
    (at, owner.to_owned(), token)
}

fn events(t: &Trace, pred: impl Fn(&EventKind) -> bool) -> Vec<&TraceEvent> {
    t.events.iter().filter(|e| pred(&e.kind)).collect()
}

/// The narration at the step `e` (an event of `t`) produced.
fn narration_of(t: &Trace, e: &TraceEvent) -> String {
    let i = t
        .events
        .iter()
        .position(|x| std::ptr::eq(x, e))
        .expect("an event of this trace");
    story::Story::of(t).narration(i + 1)
}

fn by<'a>(t: &'a Trace, actor: &str, pred: impl Fn(&EventKind) -> bool) -> Vec<&'a TraceEvent> {
    t.events
        .iter()
        .filter(|e| e.actor.as_deref() == Some(actor) && pred(&e.kind))
        .collect()
}

// ---------------------------------------------------------------------------------------
// The deck itself.
// ---------------------------------------------------------------------------------------

/// `fencing-lab ARGS…`: (exit code, stdout, stderr).
fn cli(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fencing-lab"))
        .args(args)
        .output()
        .expect("the binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn deck_json_is_the_deck_as_data() {
    let (code, json, _) = cli(&["deck", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&json).expect("deck --json is JSON");
    assert_eq!(v, serde_json::to_value(deck::data()).unwrap());
    let entries = v["entries"].as_array().unwrap();
    assert_eq!(v["count"], entries.len());
    assert_eq!(entries.len(), DECK.len());
    for (e, d) in entries.iter().zip(DECK) {
        assert_eq!(e["id"], d.id);
        assert_eq!(e["question"], d.question);
        for (p, t) in FencingPolicy::ALL.iter().zip(deck::runs(d).0) {
            let r = &e["runs"][p.code()];
            assert_eq!(r["value"], story::final_value(&t), "{} {p:?}", d.id);
            assert_eq!(r["outcome"], story::outcome(&t), "{} {p:?}", d.id);
            assert_eq!(r["steps"], story::Steps::of(&t).last());
            // The codes are those of the run's events, each once, never "ok".
            let codes: Vec<&str> = r["codes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap())
                .collect();
            assert!(codes
                .iter()
                .all(|c| *c != "ok" && t.events.iter().any(|e| e.result_code() == *c)));
            assert!(t
                .events
                .iter()
                .all(|e| e.result_code() == "ok" || codes.contains(&e.result_code())));
        }
    }
    let (code, _, err) = cli(&["deck", "--yaml"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown option"), "{err}");
}

#[test]
fn story_accepts_the_decks_spelling_and_refuses_an_unknown_policy() {
    // U7: `same-epoch` (the deck's column) and `same_epoch` (the link's) print the same run,
    // and only that run.
    let (code, dashed, _) = cli(&["story", "gc-pause", "same-epoch"]);
    assert_eq!(code, 0);
    assert_eq!(dashed, cli(&["story", "gc-pause", "same_epoch"]).1);
    assert!(dashed.starts_with("== fencing same-epoch"), "{dashed}");
    assert_eq!(dashed.matches("== fencing ").count(), 1);
    let (code, out, err) = cli(&["story", "gc-pause", "strictest"]);
    assert_eq!(code, 2);
    assert!(out.is_empty(), "nothing else is printed: {out}");
    assert!(
        err.contains("unknown fencing policy \"strictest\"; use off, strict or same-epoch"),
        "{err}"
    );
    let (code, _, err) = cli(&["story", "nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("usage: fencing-lab story <deck id> [off|strict|same-epoch]"));
}

#[test]
fn every_entry_is_well_formed_valid_and_deterministic() {
    for (i, e) in DECK.iter().enumerate() {
        assert!(
            !e.id.is_empty()
                && e.id
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
            "{:?} is not a URL-safe slug",
            e.id
        );
        assert!(
            DECK[..i].iter().all(|o| o.id != e.id),
            "duplicate id {}",
            e.id
        );
        assert!(!e.title.trim().is_empty(), "{}", e.id);
        assert!(e.question.trim().ends_with('?'), "{}: {}", e.id, e.question);
        let runs = deck::runs(e);
        let notes = (e.notes)(&runs);
        assert!((3..=5).contains(&notes.len()), "{}: {notes:?}", e.id);
        assert!(notes.iter().all(|n| !n.trim().is_empty()), "{}", e.id);
        assert_eq!(notes, (e.notes)(&deck::runs(e)), "{}: notes are pure", e.id);
        assert!(std::ptr::eq(deck::find(e.id).unwrap(), e));
        for (p, t) in FencingPolicy::ALL.iter().zip(&runs.0) {
            assert_eq!(t.scenario.policy, *p, "{}: runs are in ALL order", e.id);
        }
        assert_eq!(runs.off().scenario.policy, FencingPolicy::Off);
        assert_eq!(runs.strict().scenario.policy, FencingPolicy::Strict);
        assert_eq!(runs.same_epoch().scenario.policy, FencingPolicy::SameEpoch);

        let sc = (e.build)();
        assert_eq!(sc.id, e.id, "the scenario knows its deck entry");
        assert_eq!(sc.validate(), Ok(()), "{}", e.id);
        assert_eq!((e.build)(), sc, "{}: the builder is pure", e.id);
        for p in FencingPolicy::ALL {
            let sc = sc.clone().with_policy(p);
            assert_eq!(sc.validate(), Ok(()));
            let t = run(&sc);
            assert_eq!(t, run(&sc), "{} under {p:?} is deterministic", e.id);
            assert!(!t.is_empty());
            assert_eq!(t.scenario.id, e.id);
            // Through JSON and back: same scenario, same trace.
            let back: Scenario =
                serde_json::from_str(&serde_json::to_string(&sc).unwrap()).unwrap();
            assert_eq!(back, sc);
            assert_eq!(run(&back), t);
            for (step, ev) in t.events.iter().enumerate() {
                assert!(
                    !story::Story::of(&t).narration(step + 1).is_empty()
                        && !story::label(ev).is_empty()
                );
                assert!(!story::Story::of(&t).say(step + 1).is_empty());
            }
            // Step 0 introduces the scenario (the question is shown beside it by the panel).
            let intro = story::Story::of(&t).say(0);
            assert!(
                intro.contains(&t.scenario.resource)
                    && intro.starts_with(&match t.scenario.actors.len() {
                        1 => "1 client,".to_owned(),
                        n => format!("{n} clients,"),
                    }),
                "{}: {intro}",
                e.id
            );
            let shown = fencing_lab::view::panels::story(&t, 0);
            assert_eq!(shown.question, Some(e.question), "{}", e.id);
            assert!(!story::outcome(&t).is_empty());
        }
    }
    assert!(deck::find("nope").is_none());
    assert!(deck::find("").is_none());
}

#[test]
fn without_a_failover_at_most_one_lease_is_ever_live() {
    for e in DECK {
        for p in FencingPolicy::ALL {
            let t = run(&(e.build)().with_policy(p));
            if t.scenario.failover_at().is_none() {
                assert!(t.summary.max_live_leases <= 1, "{} {p:?}", e.id);
                assert!(!t.summary.two_holders());
                assert!(t.events.iter().all(|e| e.snapshot.lost_leases.is_empty()));
                let spans = t.lease_spans();
                for pair in spans.windows(2) {
                    assert!(pair[0].to <= pair[1].from, "{}: {spans:?}", e.id);
                }
            }
        }
    }
}

#[test]
fn narration_counts_in_seconds_only_for_long_scenarios() {
    let t = run_as("handoff-barrier", SAME);
    let all: Vec<String> = (1..=t.len())
        .map(|s| story::Story::of(&t).narration(s))
        .collect();
    assert!(all
        .iter()
        .all(|n| n.starts_with("t=") && !n.contains(" ms — ")));
    assert!(all.iter().any(|n| n.starts_with("t=16.0 s — ")));
    // The stall is narrated in seconds (and as a whole-process freeze, not a GC pause).
    assert!(
        all.iter().any(|n| n.contains("freezes for 15.0 s")),
        "{all:#?}"
    );
    assert_eq!(story::time_label(&t.scenario, 15_000), "15.0 s");
    let t = run_as("gc-pause", STRICT);
    for (i, e) in t.events.iter().enumerate() {
        let n = story::Story::of(&t).narration(i + 1);
        assert!(n.starts_with(&format!("t={} ms — ", e.at)), "{n}");
    }
    assert!(story::Story::of(&t)
        .narration(3)
        .contains("50 ms stop-the-world GC pause"));
    assert_eq!(story::time_label(&t.scenario, 55), "55 ms");
}

#[test]
fn old_json_without_the_new_fields_still_parses() {
    let json = r#"{
        "title": "t", "resource": "r", "initial_balance": 5, "first_fence": 1,
        "lease_ttl": 10, "policy": "strict", "horizon": 50,
        "actors": [{"name": "A", "start_at": 0, "script": [{"acquire": {"retry_every": 1}}, "release"]}]
    }"#;
    let sc: Scenario = serde_json::from_str(json).unwrap();
    assert_eq!(sc.id, "");
    assert_eq!(sc.release, ReleaseMode::CompareAndDelete);
    assert_eq!(sc.failover_at(), None);
    assert!(sc.faults.is_empty());
    assert_eq!(sc.seed, 0);
    assert_eq!(sc.validate(), Ok(()));
    // New steps and fields have stable JSON names.
    let sc = build("handoff-barrier");
    let json = serde_json::to_string(&build("unsafe-release")).unwrap();
    assert!(json.contains("\"release\":\"get_then_del\""), "{json}");
    let json = serde_json::to_string(&sc).unwrap();
    assert!(json.contains("\"barrier\""), "{json}");
    // A trace serialised before `lost_leases` / `max_live_leases` existed still loads.
    let trace = run(&Scenario::gc_pause());
    let mut v: serde_json::Value = serde_json::to_value(&trace).unwrap();
    v["summary"]
        .as_object_mut()
        .unwrap()
        .remove("max_live_leases");
    v["initial"].as_object_mut().unwrap().remove("lost_leases");
    let back: Trace = serde_json::from_str(&v.to_string()).unwrap();
    assert_eq!(back.summary.max_live_leases, 0);
    // …and so does a scenario without the issue-#9 fields.
    let mut v = serde_json::to_value(Scenario::gc_pause()).unwrap();
    for f in ["token_source", "job"] {
        v.as_object_mut().unwrap().remove(f);
    }
    for a in v["actors"].as_array_mut().unwrap() {
        for f in ["pause_cause", "request_timeout"] {
            a.as_object_mut().unwrap().remove(f);
        }
    }
    let sc: Scenario = serde_json::from_str(&v.to_string()).unwrap();
    assert_eq!(sc.lock.token_source(), TokenSource::SameRedis);
    assert_eq!(sc.job, None);
    assert_eq!(sc.actors[0].pause_cause, PauseCause::Gc);
    assert_eq!(sc.actors[0].request_timeout, None);
    let json = serde_json::to_string(&build("handoff-barrier")).unwrap();
    assert!(json.contains("\"pause_cause\":\"stall\""), "{json}");
    assert!(json.contains("\"check_done\""), "{json}");
}

// ---------------------------------------------------------------------------------------
// 1. gc-pause: the headline, unchanged.
// ---------------------------------------------------------------------------------------

#[test]
fn gc_pause_is_the_headline() {
    let off = run_as("gc-pause", OFF);
    assert_eq!(acquired(&off), [a(0, "A", 33), a(30, "B", 34)]);
    assert_eq!(writes(&off), [w(35, "B", 34, "ok"), w(55, "A", 33, "ok")]);
    assert_eq!(off.summary.final_balance, 80);
    let strict = run_as("gc-pause", STRICT);
    assert_eq!(
        writes(&strict),
        [w(35, "B", 34, "ok"), w(55, "A", 33, "stale_fence")]
    );
    assert_eq!(strict.summary.final_balance, 90);
    assert_eq!(build("gc-pause"), Scenario::gc_pause());
    // One job, "charge order 1": off it ran twice, strict once.
    assert_eq!(off.scenario.job.as_deref(), Some(deck::HEADLINE_JOB));
    assert_eq!(
        (off.summary.duplicate_runs, strict.summary.duplicate_runs),
        (1, 0)
    );
}

// ---------------------------------------------------------------------------------------
// 2. toctou
// ---------------------------------------------------------------------------------------

#[test]
fn toctou_check_passes_then_the_pause_lands() {
    for (policy, a_code, balance) in [
        (OFF, "ok", 80),
        (STRICT, "stale_fence", 90),
        (SAME, "stale_fence", 90),
    ] {
        let t = run_as("toctou", policy);
        let checks = by(&t, "A", |k| matches!(k, EventKind::Checked { .. }));
        assert_eq!(checks.len(), 1);
        assert_eq!(
            (checks[0].at, &checks[0].kind),
            (4, &EventKind::Checked { held: true })
        );
        let pause = by(&t, "A", |k| matches!(k, EventKind::PauseStarted { .. }))[0];
        assert!(pause.at > checks[0].at, "the pause lands after the check");
        assert_eq!(acquired(&t), [a(0, "A", 33), a(30, "B", 34)]);
        assert_eq!(writes(&t), [w(35, "B", 34, "ok"), w(55, "A", 33, a_code)]);
        assert_eq!(t.summary.final_balance, balance, "{policy:?}");
        assert_eq!(t.summary.max_believers, 2);
        assert!(by(&t, "A", |k| *k == EventKind::GaveUp).is_empty());
    }
}

// ---------------------------------------------------------------------------------------
// 3. same-token-retry
// ---------------------------------------------------------------------------------------

#[test]
fn same_token_retry_dedupes_the_intent_but_the_key_is_not_a_fence() {
    let cases = [
        (OFF, "duplicate_intent"),
        (STRICT, "stale_fence"),
        (SAME, "duplicate_intent"),
    ];
    for (policy, retry_code) in cases {
        let t = run_as("same-token-retry", policy);
        // The scenario ends with the retry: one client, one intent, sent twice.
        assert_eq!(
            writes(&t),
            [w(0, "A", 33, "ok"), w(5, "A", 33, retry_code)],
            "{policy:?}"
        );
        assert_eq!(t.scenario.actors.len(), 1);
        // The retry is the same request: same token, same key.
        let retry = by(&t, "A", |k| matches!(k, EventKind::Retried { .. }));
        assert_eq!(retry.len(), 1);
        assert_eq!(
            retry[0].kind,
            EventKind::Retried {
                fence: Some(Fence(33)),
                amount: 10,
                idempotency_key: Some("pay-1".to_owned())
            }
        );
        assert_eq!(t.writes[0].request, t.writes[1].request);
        // pay-1 is debited exactly once under every policy.
        let pay1 = t
            .writes
            .iter()
            .filter(|w| w.accepted() && w.request.idempotency_key.as_deref() == Some("pay-1"))
            .count();
        assert_eq!(pay1, 1, "{policy:?}");
        assert_eq!(t.summary.final_balance, 90, "{policy:?}");
    }
    // Strict refuses the equal token itself, before looking at the key.
    let t = run_as("same-token-retry", STRICT);
    assert_eq!(
        t.writes[1].result,
        Err(WriteError::StaleFence {
            token: Fence(33),
            last: Fence(33)
        })
    );
    // Same-epoch admits the equal token; the key is what stops it.
    let t = run_as("same-token-retry", SAME);
    assert_eq!(
        t.writes[1].result,
        Err(WriteError::DuplicateIntent {
            key: "pay-1".to_owned(),
            original_balance: 90
        })
    );
    // The key returns the original result, so A learns that pay-1 landed.
    let dup = &t.events[3];
    assert_eq!(dup.result_code(), "duplicate_intent");
    let n = story::Story::of(&t).narration(4);
    assert!(n.contains("original result (balance 90)"), "{n}");
}

// ---------------------------------------------------------------------------------------
// 4. unsafe-release
// ---------------------------------------------------------------------------------------

#[test]
fn get_then_del_deletes_the_successors_lease() {
    for (policy, b_code, balance) in [
        (OFF, "ok", 80),
        (STRICT, "stale_fence", 90),
        (SAME, "stale_fence", 90),
    ] {
        let t = run_as("unsafe-release", policy);
        assert_eq!(t.scenario.release, ReleaseMode::GetThenDel);
        // A's GET sees its own value while its lease is live; the DEL comes after the pause.
        let get = by(&t, "A", |k| matches!(k, EventKind::LockValueRead { .. }))[0];
        assert_eq!(get.at, 5);
        assert_eq!(
            get.kind,
            EventKind::LockValueRead {
                owner: Some("A".to_owned()),
                fence: Some(Fence(33))
            }
        );
        let del = by(&t, "A", |k| {
            matches!(k, EventKind::DeletedOthersLease { .. })
        });
        assert_eq!(del.len(), 1);
        assert_eq!(del[0].at, 54);
        assert_eq!(
            del[0].kind,
            EventKind::DeletedOthersLease {
                owner: "B".to_owned(),
                fence: Fence(34)
            }
        );
        assert_eq!(del[0].result_code(), "deleted_other_lease");
        assert!(del[0].snapshot.holder.is_none(), "the lock is free");
        assert_eq!(
            acquired(&t),
            [a(0, "A", 33), a(30, "B", 34), a(56, "C", 35)]
        );
        // B (still working inside its 30..60 lease) and C both believe they hold it: two
        // holders at once, both running order 1 (each read the job as not done).
        let c_acq = by(&t, "C", |k| matches!(k, EventKind::Acquired { .. }))[0];
        assert_eq!(c_acq.snapshot.believers, ["B", "C"]);
        assert!(c_acq.at < 60, "B's own lease had not run out");
        for who in ["B", "C"] {
            let checked = by(&t, who, |k| matches!(k, EventKind::JobChecked { .. }));
            assert_eq!(
                checked[0].kind,
                EventKind::JobChecked { done: false },
                "{who}"
            );
        }
        assert_eq!(
            writes(&t),
            [w(57, "C", 35, "ok"), w(59, "B", 34, b_code)],
            "{policy:?}"
        );
        assert_eq!(t.summary.final_balance, balance);
        assert_eq!(t.summary.duplicate_runs, usize::from(policy == OFF));
        assert_eq!(t.summary.max_live_leases, 1, "deleted leases are not live");
        let b_span = t
            .lease_spans()
            .into_iter()
            .find(|s| s.owner == "B")
            .unwrap();
        assert_eq!((b_span.to, b_span.end), (54, LeaseEnd::Released));
    }
}

#[test]
fn compare_and_delete_keeps_the_successors_lease() {
    for policy in FencingPolicy::ALL {
        let mut sc = build("unsafe-release").with_policy(policy);
        sc.release = ReleaseMode::CompareAndDelete;
        sc.validate().unwrap();
        let t = run(&sc);
        assert!(events(&t, |k| matches!(k, EventKind::DeletedOthersLease { .. })).is_empty());
        assert!(events(&t, |k| matches!(k, EventKind::LockValueRead { .. })).is_empty());
        // A's release is one atomic step at t=5 while its lease is live; A is finished
        // before its pause would begin, so the pause harms nothing.
        let rel = by(&t, "A", |k| matches!(k, EventKind::Released { .. }))[0];
        assert_eq!((rel.at, rel.fence()), (5, Some(Fence(33))));
        assert!(by(&t, "A", |k| matches!(k, EventKind::PauseStarted { .. })).is_empty());
        assert_eq!(t.scenario.actors[0].pauses[0].start, 6);
        // C has to wait while B holds the lease, and only gets it after B released.
        let refused = by(&t, "C", |k| matches!(k, EventKind::AcquireRefused { .. }));
        assert!(!refused.is_empty());
        assert!(refused.iter().all(|e| matches!(
            &e.kind,
            EventKind::AcquireRefused { holder, .. } if holder == "B"
        )));
        let b_rel = by(&t, "B", |k| matches!(k, EventKind::Released { .. }))[0];
        let (c_at, _, c_token) = acquired(&t).pop().unwrap();
        assert!(c_at > b_rel.at);
        assert_eq!(c_token, 35);
        assert_eq!(t.summary.max_believers, 1, "{policy:?}");
        // C reads the job as done after B's charge: one holder at a time, charged once.
        assert!(t.writes.iter().all(|w| w.accepted()));
        assert_eq!(t.summary.final_balance, 90);
    }
}

// ---------------------------------------------------------------------------------------
// 5. delayed-packet
// ---------------------------------------------------------------------------------------

#[test]
fn delayed_packet_lands_after_the_successor_without_any_pause() {
    for (policy, a_code, balance) in [
        (OFF, "ok", 80),
        (STRICT, "stale_fence", 90),
        (SAME, "stale_fence", 90),
    ] {
        let t = run_as("delayed-packet", policy);
        assert!(events(&t, |k| matches!(k, EventKind::PauseStarted { .. })).is_empty());
        let sent = by(&t, "A", |k| matches!(k, EventKind::WriteSent { .. }))[0];
        assert_eq!(sent.at, 5);
        assert_eq!(
            sent.snapshot
                .holder
                .as_ref()
                .map(|l| (l.owner.as_str(), l.fence)),
            Some(("A", Fence(33))),
            "sent while A's lease is live"
        );
        // Kleppmann's case: no timeout, no release; the lease expires with the packet in
        // flight, and A still believes it holds the lock.
        assert!(by(&t, "A", |k| matches!(k, EventKind::WriteTimedOut { .. })).is_empty());
        assert!(by(&t, "A", |k| matches!(k, EventKind::Released { .. })).is_empty());
        let expired = events(
            &t,
            |k| matches!(k, EventKind::LeaseExpired { owner, .. } if owner == "A"),
        )[0];
        assert_eq!(expired.at, 30);
        assert!(expired.snapshot.believers.contains(&"A".to_owned()));
        assert_eq!(acquired(&t), [a(0, "A", 33), a(30, "B", 34)]);
        assert_eq!(writes(&t), [w(35, "B", 34, "ok"), w(45, "A", 33, a_code)]);
        let applied = by(&t, "A", |k| matches!(k, EventKind::WriteApplied { .. }))[0];
        assert!(matches!(
            applied.kind,
            EventKind::WriteApplied { sent_at: 5, .. }
        ));
        assert_eq!(t.summary.final_balance, balance);
        assert_eq!(t.summary.late_writes_accepted, usize::from(policy == OFF));
        assert_eq!(t.summary.duplicate_runs, usize::from(policy == OFF));
    }
    // The what-if: a client timeout releases the lock at t=15, and the request still lands.
    let t = run(&Scenario::delayed_packet_timeout().with_policy(OFF));
    let timeout = by(&t, "A", |k| matches!(k, EventKind::WriteTimedOut { .. }));
    assert_eq!(
        (timeout[0].at, &timeout[0].kind),
        (
            15,
            &EventKind::WriteTimedOut {
                fence: Some(Fence(33)),
                sent_at: 5,
                arrives_at: 45
            }
        )
    );
    assert_eq!(t.summary.max_believers, 1, "nobody ever believed at once");
    assert_eq!(t.summary.final_balance, 80);
}

// ---------------------------------------------------------------------------------------
// 6. redis-failover
// ---------------------------------------------------------------------------------------

#[test]
fn failover_makes_two_holders_and_the_counter_rolls_back() {
    for (policy, a_code, balance) in [
        (OFF, "ok", 80),
        (STRICT, "stale_fence", 90),
        (SAME, "ok", 80),
    ] {
        let t = run_as("redis-failover", policy);
        assert_eq!(t.scenario.lock.token_source(), TokenSource::SameRedis);
        let fo = events(&t, |k| matches!(k, EventKind::Failover { .. }));
        assert_eq!(fo.len(), 1);
        assert_eq!(
            (fo[0].at, fo[0].lane, fo[0].result_code()),
            (5, Lane::Lease, "failover")
        );
        match &fo[0].kind {
            EventKind::Failover {
                lost,
                next_fence,
                rolled_back,
            } => {
                assert_eq!(lost.len(), 1);
                assert_eq!((lost[0].owner.as_str(), lost[0].fence), ("A", Fence(33)));
                // The INCR of A's token was lost with its key: 33 will be handed out again.
                assert_eq!(*next_fence, Fence(33));
                assert!(*rolled_back);
            }
            other => panic!("{other:?}"),
        }
        assert!(fo[0].snapshot.holder.is_none());
        assert_eq!(acquired(&t), [a(0, "A", 33), a(8, "B", 33)]);
        // Two holders per the lock service itself: the new primary's B and the lost A.
        let b_acq = by(&t, "B", |k| matches!(k, EventKind::Acquired { .. }))[0];
        assert_eq!(b_acq.snapshot.holder.as_ref().unwrap().owner, "B");
        assert_eq!(b_acq.snapshot.lost_leases.len(), 1);
        assert_eq!(b_acq.snapshot.lost_leases[0].fence, Fence(33));
        let say = story::Story::of(&t).say(
            t.events
                .iter()
                .position(|e| std::ptr::eq(e, b_acq))
                .unwrap()
                + 1,
        );
        assert!(say.contains("Token 33 again"), "{say}");
        assert_eq!(t.summary.max_live_leases, 2);
        assert!(t.summary.two_holders());
        assert_eq!(writes(&t), [w(10, "B", 33, "ok"), w(12, "A", 33, a_code)]);
        assert_eq!(t.summary.final_balance, balance, "{policy:?}");
        // A's write is from a superseded grant even though its token is not lower: the audit
        // compares grants, not token values.
        let a_write = by(&t, "A", |k| matches!(k, EventKind::WriteApplied { .. }))[0];
        match &a_write.kind {
            EventKind::WriteApplied { superseded_by, .. } => assert_eq!(
                superseded_by,
                &Some(Grant {
                    owner: "B".to_owned(),
                    fence: Fence(33)
                })
            ),
            other => panic!("{other:?}"),
        }
        let accepted = a_code == "ok";
        assert_eq!(t.summary.late_writes_accepted, usize::from(accepted));
        assert_eq!(t.summary.duplicate_runs, usize::from(accepted));
        assert_eq!(t.summary.out_of_order_writes, 0, "33 after 33 is not lower");
        if policy == STRICT {
            // Strict refuses the equal token — by luck of arrival order.
            assert_eq!(
                t.writes[1].result,
                Err(WriteError::StaleFence {
                    token: Fence(33),
                    last: Fence(33)
                })
            );
        }
        // The lost lease runs out at its own TTL.
        let exp = events(&t, |k| {
            matches!(
                k,
                EventKind::LeaseExpired {
                    fence: Fence(33),
                    cause: ExpiryCause::LostInFailover,
                    ..
                }
            )
        });
        assert_eq!(exp.len(), 1);
        assert_eq!(exp[0].at, 30);
        assert!(exp[0].snapshot.lost_leases.is_empty());
    }
    // Without the failover, B waits for A as it should, then finds the job done.
    let mut sc = build("redis-failover");
    sc.set_crash_at(None, None);
    let t = run(&sc);
    assert_eq!(t.summary.max_live_leases, 1);
    assert_eq!(acquired(&t)[1].1, "B");
    assert!(acquired(&t)[1].0 >= 17, "B only gets it after A is done");
    assert_eq!(t.summary.final_balance, 90, "the job ran once");
    assert_eq!(t.summary.duplicate_runs, 0);
    assert!(by(&t, "B", |k| *k == EventKind::JobChecked { done: true }).len() == 1);
}

#[test]
fn failover_of_a_lock_service_loses_nothing() {
    for policy in FencingPolicy::ALL {
        let mut sc = build("redis-failover").with_policy(policy);
        sc.lock = LockKind::SERVICE;
        sc.validate().unwrap();
        let t = run(&sc);
        let fo = events(&t, |k| matches!(k, EventKind::Failover { .. }));
        assert_eq!(fo.len(), 1);
        assert_eq!(
            fo[0].kind,
            EventKind::Failover {
                lost: vec![],
                next_fence: Fence(34),
                rolled_back: false
            }
        );
        // B is refused while A's lease lives on in the new leader, then gets a new token.
        assert!(!by(&t, "B", |k| matches!(k, EventKind::AcquireRefused { .. })).is_empty());
        assert_eq!(
            acquired(&t).iter().map(|x| x.2).collect::<Vec<_>>(),
            [33, 34]
        );
        assert_eq!(t.summary.max_live_leases, 1, "{policy:?}");
        assert_eq!(t.summary.max_believers, 1, "{policy:?}");
        assert_eq!(t.summary.final_balance, 90, "{policy:?}");
        assert_eq!(t.summary.duplicate_runs, 0, "{policy:?}");
        let n = story::Story::of(&t).narration(1);
        assert!(n.contains("lock service"), "{n}");
    }
}

// ---------------------------------------------------------------------------------------
// 7. renewal
// ---------------------------------------------------------------------------------------

/// Whether the worker ran first when the paused worker woke (`None`: no race).
fn resume_race(t: &Trace) -> Option<bool> {
    t.events.iter().find_map(|e| match e.kind {
        EventKind::ResumeRace { worker_first } => Some(worker_first),
        _ => None,
    })
}

/// What every renewal run shares, whichever thread wins the resume race.
fn check_renewals(t: &Trace) -> u64 {
    let renewals = by(t, "A", |k| matches!(k, EventKind::Extended { .. }));
    assert!(renewals.len() >= 2, "{renewals:#?}");
    // A third of the 30 ms TTL, ±25%: every 8..=12 ms from the acquire.
    let mut last = 0;
    for r in &renewals {
        assert!(
            (8..=12).contains(&(r.at - last)),
            "renewed at {} after {last}",
            r.at
        );
        assert!(
            matches!(r.kind, EventKind::Extended { fence: Fence(33), expires_at, watchdog: Some(_), .. } if expires_at == r.at + 30)
        );
        last = r.at;
    }
    let (b_at, b, b_token) = acquired(t).pop().unwrap();
    assert_eq!((b.as_str(), b_token), ("B", 34));
    assert!(
        b_at > last + 29,
        "B only gets in after A's last renewal ran out"
    );
    let pause = by(t, "A", |k| matches!(k, EventKind::PauseStarted { .. }))[0];
    assert!(
        pause.at > last,
        "the pause lands after the last good renewal"
    );
    b_at
}

#[test]
fn renewal_when_the_worker_wins_the_race_it_writes_late() {
    // The deck's own seed shows the failed renewal (extend answers 0) on screen.
    let t = run_as("renewal", OFF);
    assert_eq!(t.scenario.seed, deck::RENEWAL_SEED);
    assert_eq!(
        resume_race(&t),
        Some(false),
        "the deck's seed: watchdog first"
    );
    let failed = by(&t, "A", |k| matches!(k, EventKind::ExtendFailed { .. }));
    assert_eq!(failed.len(), 1);
    let i = t
        .events
        .iter()
        .position(|e| std::ptr::eq(e, failed[0]))
        .unwrap();
    let n = story::Story::of(&t).narration(i + 1);
    assert!(n.contains("answers 0"), "{n}");
    for (policy, a_code, balance) in [
        (OFF, "ok", 80),
        (STRICT, "stale_fence", 90),
        (SAME, "stale_fence", 90),
    ] {
        let t = run(&Scenario {
            seed: deck::RENEWAL_WORKER_SEED,
            ..build("renewal").with_policy(policy)
        });
        let b_at = check_renewals(&t);
        let race = by(&t, "A", |k| matches!(k, EventKind::ResumeRace { .. }));
        assert_eq!(race.len(), 1, "{policy:?}");
        let woke = by(&t, "A", |k| matches!(k, EventKind::PauseEnded { .. }))[0];
        assert_eq!(race[0].at, woke.at, "the race is decided on waking");
        assert_eq!(
            resume_race(&t),
            Some(true),
            "the what-if's seed: worker first"
        );
        // The worker ran first, so no renewal was refused before it wrote.
        assert!(by(&t, "A", |k| matches!(k, EventKind::ExtendFailed { .. })).is_empty());
        assert_eq!(
            writes(&t),
            [w(b_at + 5, "B", 34, "ok"), w(woke.at, "A", 33, a_code)],
            "{policy:?}"
        );
        assert_eq!(t.summary.final_balance, balance, "{policy:?}");
        assert_eq!(t.summary.duplicate_runs, usize::from(policy == OFF));
        let i = t
            .events
            .iter()
            .position(|e| std::ptr::eq(e, race[0]))
            .unwrap();
        let say = story::Story::of(&t).say(story::Steps::of(&t).showing(i));
        assert!(say.contains("race"), "{say}");
    }
}

#[test]
fn renewal_when_the_watchdog_wins_the_job_self_cancels() {
    let base = build("renewal");
    let seed = (0..64)
        .find(|&seed| {
            resume_race(&run(&Scenario {
                seed,
                ..base.clone()
            })) == Some(false)
        })
        .expect("some seed lets the watchdog run first");
    let first_worker = (0..64)
        .find(|&seed| {
            resume_race(&run(&Scenario {
                seed,
                ..base.clone()
            })) == Some(true)
        })
        .expect("some seed lets the worker run first");
    assert_ne!(seed, first_worker);
    for policy in FencingPolicy::ALL {
        let t = run(&Scenario {
            seed,
            ..base.clone().with_policy(policy)
        });
        let b_at = check_renewals(&t);
        let failed = by(&t, "A", |k| matches!(k, EventKind::ExtendFailed { .. }));
        assert_eq!(failed.len(), 1);
        let woke = by(&t, "A", |k| matches!(k, EventKind::PauseEnded { .. }))[0];
        assert_eq!(
            failed[0].at, woke.at,
            "the overdue renewal runs when A wakes"
        );
        let expired = events(&t, |k| matches!(k, EventKind::LeaseExpired { .. }))[0];
        assert_eq!(
            failed[0].kind,
            EventKind::ExtendFailed {
                watchdog: true,
                lease_ended_at: Some(expired.at)
            }
        );
        assert_eq!(failed[0].result_code(), "not_holder");
        assert!(!failed[0].snapshot.believers.contains(&"A".to_owned()));
        assert!(
            by(&t, "A", |k| matches!(
                k,
                EventKind::WriteApplied { .. } | EventKind::WriteSent { .. }
            ))
            .is_empty(),
            "a self-cancelled job does not write"
        );
        assert_eq!(writes(&t), [w(b_at + 5, "B", 34, "ok")]);
        assert_eq!(t.summary.final_balance, 90, "{policy:?}");
        assert_eq!(t.summary.duplicate_runs, 0);
        // Self-cancel came after the lease was gone: the words must not claim otherwise.
        let i = t
            .events
            .iter()
            .position(|e| std::ptr::eq(e, failed[0]))
            .unwrap();
        let say = story::Story::of(&t).say(i + 1);
        assert!(say.contains("already ended"), "{say}");
        assert!(!say.contains("before the lease is gone"), "{say}");
    }
}

#[test]
fn renewal_is_seeded_and_keeps_a_job_alive_without_a_pause() {
    let base = build("renewal");
    let times = |sc: &Scenario| -> Vec<u64> {
        run(sc)
            .events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::Extended { .. }))
            .map(|e| e.at)
            .collect()
    };
    assert_eq!(times(&base), times(&base.clone()));
    let seeds: Vec<_> = (0..8)
        .map(|seed| {
            times(&Scenario {
                seed,
                ..base.clone()
            })
        })
        .collect();
    assert!(
        seeds.windows(2).any(|p| p[0] != p[1]),
        "jitter depends on the seed"
    );

    let mut calm = base;
    calm.actors[0].pauses.clear();
    let t = run(&calm);
    assert!(events(&t, |k| matches!(k, EventKind::ExtendFailed { .. })).is_empty());
    assert!(resume_race(&t).is_none(), "no pause, no race");
    assert!(by(&t, "A", |k| matches!(k, EventKind::Extended { .. })).len() >= 5);
    assert!(t.writes.iter().all(|w| w.accepted()));
    assert_eq!(t.writes.len(), 1, "B finds the job done and skips it");
    assert_eq!(t.writes[0].request.writer, "A");
    assert_eq!(
        t.writes[0].at, 60,
        "A worked through twice its TTL and then wrote"
    );
    assert_eq!(
        by(&t, "B", |k| *k == EventKind::JobChecked { done: true }).len(),
        1
    );
    assert_eq!(t.summary.max_believers, 1);
    assert_eq!(t.summary.final_balance, 90);
    assert_eq!(t.summary.duplicate_runs, 0);
}

// ---------------------------------------------------------------------------------------
// 8. handoff-barrier
// ---------------------------------------------------------------------------------------

#[test]
fn handoff_barrier_rejects_the_late_publish() {
    // The job publishes a result row; the last column is the row at the end.
    let cases = [
        (OFF, "ok", "ok", Some("result by B")),
        (STRICT, "stale_fence", "stale_fence", None),
        (SAME, "stale_fence", "ok", Some("result by B")),
    ];
    for (policy, a_code, b_code, result) in cases {
        let t = run_as("handoff-barrier", policy);
        assert_eq!(t.scenario.lease_ttl, 10_000);
        assert_eq!(acquired(&t), [a(0, "A", 41), a(10_000, "B", 42)]);
        let pause = by(&t, "A", |k| matches!(k, EventKind::PauseStarted { .. }))[0];
        assert_eq!(
            pause.kind,
            EventKind::PauseStarted {
                until: 16_000,
                cause: PauseCause::Stall
            }
        );
        let n = narration_of(&t, pause);
        assert!(
            n.contains("whole process freezes") && !n.contains("GC pause"),
            "{n}"
        );
        assert_eq!(pause.at, 1_000);
        // The barrier comes before anything else B does, and changes no balance.
        let barrier = by(&t, "B", |k| matches!(k, EventKind::BarrierSet { .. }));
        assert_eq!(barrier.len(), 1);
        let barrier = barrier[0];
        assert_eq!((barrier.at, barrier.lane), (10_000, Lane::Storage));
        assert_eq!(
            barrier.kind,
            EventKind::BarrierSet {
                fence: Fence(42),
                result: Ok(())
            }
        );
        assert_eq!(
            barrier.snapshot,
            Snapshot {
                at: barrier.at,
                last_fence: barrier.snapshot.last_fence,
                ..t.snapshot_at(
                    t.events
                        .iter()
                        .position(|e| std::ptr::eq(e, barrier))
                        .unwrap()
                )
                .clone()
            },
            "the barrier changes nothing but the mark"
        );
        assert_eq!(barrier.snapshot.result, None);
        let expected_mark = policy.checks_fence().then_some(Fence(42));
        assert_eq!(barrier.snapshot.last_fence, expected_mark);
        assert!(t.writes.iter().all(|w| w.at > barrier.at));
        // A's late publish arrives *before* B's, and is refused only because of the barrier.
        assert_eq!(
            writes(&t),
            [w(16_000, "A", 41, a_code), w(18_000, "B", 42, b_code)],
            "{policy:?}"
        );
        let last = t.snapshot_at(t.len());
        assert_eq!(last.result.as_deref(), result, "{policy:?}");
        assert_eq!(story::final_value(&t), result.unwrap_or("—"), "{policy:?}");
        assert_eq!(
            t.summary.final_balance, t.scenario.initial_balance,
            "a publish moves no money"
        );
        // No card charge here (that is claim-row's): the late result is the fence's case.
        assert!(events(&t, |k| matches!(k, EventKind::SideEffect { .. })).is_empty());
        assert_eq!(t.summary.side_effects, 0);
    }
}

#[test]
fn without_the_barrier_the_late_publish_lands_first() {
    let mut sc = build("handoff-barrier").with_policy(STRICT);
    sc.actors[1].script.retain(|s| *s != Step::Barrier);
    let t = run(&sc);
    assert_eq!(
        writes(&t),
        [w(16_000, "A", 41, "ok"), w(18_000, "B", 42, "ok")],
        "order-based fencing cannot tell: 41 arrived before anything newer"
    );
    assert_eq!(
        t.snapshot_at(t.len()).result.as_deref(),
        Some("result by B"),
        "B's result overwrites A's late one: the job ran twice"
    );
    assert_eq!(t.summary.late_writes_accepted, 1);
    assert_eq!(t.summary.duplicate_runs, 1);
    assert_eq!(t.summary.out_of_order_writes, 0, "41 then 42 is in order");
    // Off with the barrier: storage ignored it; A's 41 is still from a superseded lease.
    let off = run_as("handoff-barrier", OFF);
    assert_eq!(off.summary.late_writes_accepted, 1);
    assert_eq!(off.summary.duplicate_runs, 1);
    let late = off.events.iter().find(|e| e.is_late_write()).unwrap();
    assert_eq!(
        (late.actor.as_deref(), late.fence()),
        (Some("A"), Some(Fence(41)))
    );
}

// ---------------------------------------------------------------------------------------
// 9. clock-jump
// ---------------------------------------------------------------------------------------

#[test]
fn clock_jump_expires_the_lease_early_and_fencing_still_holds() {
    for (policy, a_code, balance) in [
        (OFF, "ok", 80),
        (STRICT, "stale_fence", 90),
        (SAME, "stale_fence", 90),
    ] {
        let t = run_as("clock-jump", policy);
        // Redlock on five nodes: A locks 0–2, B is refused with 3–4, then locks 2–4 after
        // node 2's clock jumped. Redlock mints no token: under a fence they are a what-if.
        let rl = t.scenario.lock.redlock().expect("clock-jump runs Redlock");
        assert_eq!(rl.nodes, 5);
        assert_eq!(t.scenario.lock.token_source(), TokenSource::Counterfactual);
        assert_eq!(story::counterfactual(&t), policy != OFF);
        let nodes: Vec<(String, Vec<usize>)> = t
            .events
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::Acquired { nodes, .. } | EventKind::AcquireRefused { nodes, .. } => {
                    Some((e.actor.clone().unwrap(), nodes.clone()))
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            nodes,
            [
                ("A".to_owned(), vec![0, 1, 2]),
                ("B".to_owned(), vec![3, 4]),
                ("B".to_owned(), vec![2, 3, 4])
            ],
            "{policy:?}"
        );
        let jump = events(&t, |k| matches!(k, EventKind::LockClockJumped { .. }));
        assert_eq!(jump.len(), 1);
        assert_eq!(
            (jump[0].at, &jump[0].kind),
            (
                10,
                &EventKind::LockClockJumped {
                    by: 25,
                    shortened: Some(Shortened {
                        owner: "A".to_owned(),
                        fence: Fence(33),
                        granted_until: 30,
                        ends_at: 10
                    })
                }
            )
        );
        assert_eq!(jump[0].result_code(), "clock_jump");
        let exp = events(&t, |k| matches!(k, EventKind::LeaseExpired { .. }));
        assert_eq!(exp.len(), 1);
        assert_eq!(
            (exp[0].at, exp[0].fence()),
            (10, Some(Fence(33))),
            "20 ms before the t=30 A was promised"
        );
        assert!(matches!(
            exp[0].kind,
            EventKind::LeaseExpired {
                cause: ExpiryCause::ClockJump,
                owner_knew: Awareness::Unaware,
                ..
            }
        ));
        let n = narration_of(&t, exp[0]);
        assert!(n.contains("jumped clock") && !n.contains("paused"), "{n}");
        assert!(events(&t, |k| matches!(k, EventKind::PauseStarted { .. })).is_empty());
        assert_eq!(acquired(&t), [a(0, "A", 33), a(15, "B", 34)]);
        let b_acq = by(&t, "B", |k| matches!(k, EventKind::Acquired { .. }))[0];
        assert_eq!(b_acq.snapshot.believers, ["A", "B"]);
        assert_eq!(writes(&t), [w(17, "B", 34, "ok"), w(20, "A", 33, a_code)]);
        assert_eq!(t.summary.final_balance, balance, "{policy:?}");
        assert_eq!(t.summary.max_live_leases, 1, "the server only ever had one");
        let span = &t.lease_spans()[0];
        assert_eq!(
            (span.fence, span.to, span.end),
            (Fence(33), 10, LeaseEnd::Expired)
        );
        // A's release runs compare-and-delete on every node (Redis docs, "Releasing the
        // Lock"): its own leftover keys on nodes 1 and 2 are deleted, yet nothing is released.
        let rel = by(&t, "A", |k| matches!(k, EventKind::ReleaseNoop { .. }));
        assert_eq!(rel.len(), 1, "{policy:?}");
        assert!(
            matches!(&rel[0].kind, EventKind::ReleaseNoop { deleted, .. } if *deleted == [0, 1]),
            "{:?}",
            rel[0].kind
        );
        let n = narration_of(&t, rel[0]);
        assert!(
            n.contains("are deleted") && !n.contains("deletes nothing"),
            "{n}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// The renewal herd.
// ---------------------------------------------------------------------------------------

#[test]
fn jitter_flattens_the_renewal_herd() {
    let fixed = renewal_herd(1_000, 30_000, false, 7, 120_000);
    let jittered = renewal_herd(1_000, 30_000, true, 7, 120_000);
    for r in [&fixed, &jittered] {
        assert_eq!(r.failed_renewals, 0, "nobody pauses, nobody loses a lease");
        assert_eq!(
            r.per_bucket.iter().map(|&n| u64::from(n)).sum::<u64>(),
            r.renewals
        );
        assert!(r.per_bucket.len() as u64 * r.bucket_ms > r.horizon);
    }
    // Fixed schedule: all 1,000 renew in the same millisecond, every 10 s.
    assert_eq!(fixed.peak_per_ms, 1_000);
    assert_eq!(fixed.peak_at, 10_000);
    assert_eq!(fixed.renewals, 1_000 * 12);
    // Jittered: same order of total work, spread out.
    assert!(
        jittered.peak_per_ms < fixed.peak_per_ms / 10,
        "{}",
        jittered.peak_per_ms
    );
    assert!(jittered.peak_per_bucket() < fixed.peak_per_bucket());
    assert!(jittered.renewals.abs_diff(fixed.renewals) < fixed.renewals / 10);
    // Deterministic per seed.
    assert_eq!(renewal_herd(1_000, 30_000, true, 7, 120_000), jittered);
    assert_ne!(renewal_herd(1_000, 30_000, true, 8, 120_000), jittered);
}

#[test]
fn herd_inputs_are_clamped() {
    use fencing_lab::core::{MAX_HERD, MAX_HERD_RENEWALS};
    let r = renewal_herd(usize::MAX, 0, true, 1, u64::MAX);
    assert_eq!(r.holders, MAX_HERD);
    assert_eq!(r.ttl, 3);
    assert!(r.renewals <= MAX_HERD_RENEWALS, "{}", r.renewals);
    assert!(r.horizon >= 1);
    let r = renewal_herd(10, 30_000, false, 1, u64::MAX);
    assert_eq!(r.horizon, fencing_lab::core::MAX_TIME);
    let empty = renewal_herd(0, 30, false, 0, 100);
    assert_eq!((empty.renewals, empty.peak_per_ms), (0, 0));
}

/// Regression (found by the property tests): a failover at the very instant a lease expires
/// used to drop the lease from the server before its expiry ran, so it never expired and its
/// band stayed open. An expiry now comes before a failover at the same instant.
#[test]
fn failover_at_the_instant_a_lease_expires() {
    let mut sc = Scenario::gc_pause();
    sc.actors.truncate(1);
    sc.actors[0].pauses.clear();
    sc.actors[0].script = vec![Step::Acquire { retry_every: 10 }];
    sc.set_crash_at(Some(30), None);
    let t = run(&sc);
    let kinds: Vec<_> = t.events.iter().map(|e| (e.at, e.result_code())).collect();
    assert_eq!(kinds, [(0, "ok"), (30, "ok"), (30, "failover")]);
    assert!(matches!(t.events[1].kind, EventKind::LeaseExpired { .. }));
    assert!(matches!(
        &t.events[2].kind,
        EventKind::Failover { lost, .. } if lost.is_empty()
    ));
    assert_eq!(t.lease_spans()[0].end, LeaseEnd::Expired);
    assert_eq!(t.summary.max_live_leases, 1);
}

#[test]
fn validation_bounds_the_new_fields() {
    use fencing_lab::core::{Fault, FaultAt, ScenarioError};
    use fencing_lab::core::{MAX_LABEL, MAX_STEPS, MAX_TIME};
    let out_of_range = |sc: &Scenario, what: &str| matches!(sc.validate(), Err(ScenarioError::OutOfRange { what: w, .. }) if w == what);

    let mut sc = build("redis-failover");
    sc.set_crash_at(Some(MAX_TIME + 1), None);
    assert!(out_of_range(&sc, "failover_at"));
    sc.set_crash_at(Some(MAX_TIME), None);
    assert_eq!(sc.validate(), Ok(()));

    let mut sc = build("clock-jump");
    let jump = |at, node, by| FaultAt {
        at,
        fault: Fault::ClockJump { node, by },
    };
    sc.faults = vec![jump(10, 2, 0)];
    assert!(out_of_range(&sc, "clock jump by"));
    sc.faults = vec![jump(MAX_TIME + 1, 2, 1)];
    assert!(out_of_range(&sc, "clock jump at"));
    sc.faults = vec![jump(10, 5, 1)];
    assert!(out_of_range(&sc, "redlock node"), "node 5 of 0–4");
    sc.faults = vec![jump(1, 2, 1); MAX_STEPS + 1];
    assert!(out_of_range(&sc, "faults"));
    sc.faults = vec![jump(1, 2, 1), jump(2, 3, 1)];
    assert_eq!(
        sc.validate(),
        Err(ScenarioError::BadFault("clock jumps step one node"))
    );

    for bad in [
        "GC-pause",
        "gc pause",
        "gc/pause",
        &"x".repeat(MAX_LABEL + 1),
    ] {
        let mut sc = Scenario::gc_pause();
        sc.id = bad.to_owned();
        assert_eq!(sc.validate(), Err(ScenarioError::BadId(bad.to_owned())));
        assert!(sc.validate().unwrap_err().to_string().contains("URL-safe"));
    }
    let mut sc = Scenario::gc_pause();
    sc.id = String::new();
    assert_eq!(sc.validate(), Ok(()), "a hand-made scenario has no id");

    for what in [String::new(), "  ".to_owned(), "x".repeat(MAX_LABEL + 1)] {
        let mut sc = build("handoff-barrier");
        sc.actors[0].script[2] = Step::SideEffect { what };
        assert_eq!(
            sc.validate(),
            Err(ScenarioError::BadLabel {
                actor: "A".to_owned()
            })
        );
    }

    let mut sc = build("renewal");
    sc.actors[0].script[1] = Step::WorkRenewing { ms: MAX_TIME + 1 };
    assert!(out_of_range(&sc, "work"));
}

/// Steps that need state they do not have are narrated no-ops, not panics.
#[test]
fn new_steps_without_a_lease_or_a_prior_write_are_skipped() {
    let mut sc = Scenario::gc_pause();
    sc.actors.truncate(1);
    sc.actors[0].pauses.clear();
    sc.actors[0].script = vec![
        Step::Retry,
        Step::Barrier,
        Step::SideEffect {
            what: "send an email".to_owned(),
        },
        Step::WorkRenewing { ms: 20 },
    ];
    let t = run(&sc);
    let codes: Vec<_> = t.events.iter().map(|e| e.result_code()).collect();
    assert_eq!(codes, ["skipped", "skipped", "unfenced", "not_holder"]);
    assert!(t.writes.is_empty());
    assert_eq!(t.summary.unprotected_side_effects, 1);
    assert_eq!(t.summary.final_balance, 100);
}

/// The notes are written from the runs, not typed in: fed other runs, they say other numbers.
#[test]
fn notes_are_computed_from_the_runs() {
    let entry = deck::find("gc-pause").unwrap();
    let notes = (entry.notes)(&deck::runs(entry)).join("\n");
    for figure in ["33", "34", "80", "90", "stale_fence"] {
        assert!(notes.contains(figure), "{figure}: {notes}");
    }
    let mut sc = Scenario::gc_pause();
    sc.first_fence = 7;
    sc.initial_balance = 50;
    let runs = deck::Runs(FencingPolicy::ALL.map(|p| run(&sc.clone().with_policy(p))));
    assert_eq!(runs.strict().summary.final_balance, 40);
    let other = (entry.notes)(&runs).join("\n");
    for figure in ["7", "8", "30", "40"] {
        assert!(other.contains(figure), "{figure}: {other}");
    }
    for figure in ["33", "34", "80", "90"] {
        assert!(!other.contains(figure), "{figure} is not computed: {other}");
    }
}

/// The picker's titles are the deck's, in its order, and natively every entry is linked in:
/// nothing needs fetching (in the page, `needs_fetch` is what fetches the deck's chunk).
#[test]
fn titles_list_the_deck_and_natively_every_entry_is_found() {
    let listed: Vec<(&str, &str)> = DECK.iter().map(|e| (e.id, e.title)).collect();
    assert_eq!(deck::TITLES, listed.as_slice());
    assert_eq!(deck::HEADLINE.id, DECK[0].id);
    for e in DECK {
        assert_eq!(deck::find(e.id).map(|f| f.id), Some(e.id));
        assert!(!deck::needs_fetch(e.id), "{}", e.id);
    }
    assert!(deck::find("no-such-entry").is_none());
    assert!(!deck::needs_fetch("no-such-entry"));
}

#[test]
fn storage_check_lets_both_tokens_pass_the_read() {
    // B's 34 and A's 33 land at one instant, B's first: both SELECTs read the mark as the
    // instant began, so strict still takes both; one conditional UPDATE refuses 33.
    for policy in FencingPolicy::ALL {
        let t = run_as("storage-check", policy);
        let landed: Vec<(u64, &str, bool)> = (t.writes.iter())
            .map(|w| (w.at, w.request.writer.as_str(), w.accepted()))
            .collect();
        assert_eq!(landed, [(40, "B", true), (40, "A", true)], "{policy:?}");
        assert_eq!(t.summary.final_balance, 80, "{policy:?}");
    }
    let mut one = build("storage-check");
    one.check = StorageCheck::HighestToken;
    let t = run(&one);
    let codes: Vec<_> = (t.writes.iter())
        .map(|w| w.result.as_ref().err().map(|e| e.code()))
        .collect();
    assert_eq!(codes, [None, Some("stale_fence")]);
    assert_eq!(t.summary.final_balance, 90);
    // One instant apart, the SELECT sees the committed 34.
    let mut apart = build("storage-check");
    apart.actors[0].pauses[0].duration += 5;
    let t = run(&apart);
    assert_eq!(t.summary.final_balance, 90);
}

#[test]
fn storage_check_says_why_both_passed_not_that_a_write_came_first() {
    // B's 34 was taken at the same instant, before A's 33: the words blame the check that is
    // not part of the write, and name the one-statement fix.
    for policy in [FencingPolicy::Strict, FencingPolicy::SameEpoch] {
        let t = run_as("storage-check", policy);
        let words = fencing_lab::core::story::Story::of(&t);
        let says: Vec<String> = (0..=words.last()).map(|s| words.say(s)).collect();
        assert!(
            says.iter().any(
                |s| s.contains("A's check read the fence before B's UPDATE committed")
                    && s.contains("UPDATE … WHERE fence < $token")
            ),
            "{policy:?}: {says:#?}"
        );
        assert!(
            !says.iter().any(|s| s.contains("got there first")),
            "{policy:?}: {says:#?}"
        );
    }
}
