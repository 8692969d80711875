//! `row-lock`: the lock is a PostgreSQL row lock (`SELECT … FOR UPDATE`) in the database that
//! holds the balance. The second client waits instead of being refused; the idle-in-transaction
//! timeout ends a stalled holder's session, and with it its transaction, so its late UPDATE
//! cannot land whatever the fencing policy. Without the timeout, the waiter waits out the stall.

use fencing_lab::core::deck::{self, row_lock_wait};
use fencing_lab::core::story;
use fencing_lab::core::{
    run, Awareness, EventKind, ExpiryCause, FencingPolicy, LockKind, Pause, RowLock, Scenario,
    ScenarioError, Step, Trace, IDLE_IN_TRANSACTION_TIMEOUT,
};
use fencing_lab::share::{decode, encode};

use crate::common;
use common::{w, write_step, writes};

fn run_as(policy: FencingPolicy) -> Trace {
    run(&Scenario::row_lock().with_policy(policy))
}

fn without_timeout(sc: Scenario) -> Scenario {
    Scenario {
        lock: LockKind::Row(RowLock {
            idle_timeout: false,
        }),
        ..sc
    }
}

/// (at, actor, kind) of the events whose kind matches.
fn when(t: &Trace, pred: impl Fn(&EventKind) -> bool) -> Vec<(u64, String)> {
    t.events
        .iter()
        .filter(|e| pred(&e.kind))
        .map(|e| (e.at, e.actor.clone().unwrap_or_default()))
        .collect()
}

#[test]
fn the_timeout_ends_a_stalled_holder_and_its_late_update_fails_under_every_policy() {
    let runs: Vec<Trace> = FencingPolicy::ALL.into_iter().map(run_as).collect();
    for t in &runs {
        let p = t.scenario.policy;
        assert_eq!(
            writes(t),
            [w(35, "B", 0, "ok"), w(55, "A", 0, "session_ended")],
            "{p:?}: no write carries a token; A's UPDATE cannot run"
        );
        let s = &t.summary;
        assert_eq!(s.final_balance, 90, "{p:?}");
        assert_eq!((s.accepted_writes, s.rejected_writes), (1, 1), "{p:?}");
        assert_eq!(s.duplicate_runs, 0, "{p:?}: the job ran once");
        assert_eq!(s.late_writes_accepted, 0, "{p:?}");
        assert_eq!(s.last_fence, None, "{p:?}: no token ever reached storage");
        assert_eq!(s.last_write_fence, None, "{p:?}");
        assert_eq!(s.max_believers, 2, "{p:?}: A still believes while B holds");
        assert_eq!(
            s.max_live_leases, 1,
            "{p:?}: the row has one holder at a time"
        );
        assert_eq!(
            story::outcome(t),
            format!("A's UPDATE failed: session_ended ({IDLE_IN_TRANSACTION_TIMEOUT})")
        );
    }
    // The policy changes nothing: the same events, snapshots and write log.
    assert_eq!(runs[0].events, runs[1].events);
    assert_eq!(runs[1].events, runs[2].events);
    assert_eq!(runs[0].writes, runs[2].writes);
}

#[test]
fn b_waits_in_the_queue_until_the_server_terminates_a() {
    let t = run_as(FencingPolicy::Strict);
    assert_eq!(
        when(
            &t,
            |k| matches!(k, EventKind::LockWait { holder } if holder == "A")
        ),
        [(20, "B".to_owned())],
        "B's SELECT … FOR UPDATE blocks once, behind A: no refusal, no retry"
    );
    assert!(when(&t, |k| matches!(k, EventKind::AcquireRefused { .. })).is_empty());
    let ended: Vec<_> = t
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::LeaseExpired {
                owner,
                cause,
                owner_knew,
                ..
            } => Some((e.at, owner.as_str(), *cause, *owner_knew)),
            _ => None,
        })
        .collect();
    assert_eq!(
        ended,
        [(30, "A", ExpiryCause::IdleTimeout, Awareness::Paused)],
        "idle since its status read at t=0, A's session ends at 0 + 30"
    );
    assert_eq!(
        when(&t, |k| matches!(k, EventKind::Acquired { .. })),
        [(0, "A".to_owned()), (30, "B".to_owned())]
    );
    assert_eq!(row_lock_wait(&t, "B"), 10);
    assert_eq!(row_lock_wait(&t, "A"), 0, "A never waited");
    // B is granted in the same instant, right after the termination, with a fresh idle clock.
    let granted = t
        .events
        .iter()
        .find(|e| e.actor.as_deref() == Some("B") && matches!(e.kind, EventKind::Acquired { .. }))
        .unwrap();
    let holder = granted.snapshot.holder.as_ref().unwrap();
    assert_eq!((holder.owner.as_str(), holder.expires_at), ("B", 60));
    assert_eq!(granted.snapshot.believers, ["A", "B"]);
    // A wakes believing, and its UPDATE's refusal is what tells it.
    assert!(t
        .events
        .iter()
        .any(|e| e.at == 55 && e.kind == EventKind::PauseEnded { lease_gone: true }));
    let failed = t
        .events
        .iter()
        .find(|e| {
            e.actor.as_deref() == Some("A") && matches!(e.kind, EventKind::WriteApplied { .. })
        })
        .unwrap();
    assert_eq!(failed.result_code(), "session_ended");
    assert!(
        failed.snapshot.believers.is_empty(),
        "B has committed; A learns its session is gone"
    );
    assert!(
        !t.events.iter().any(
            |e| e.actor.as_deref() == Some("A") && matches!(e.kind, EventKind::Released { .. })
        ),
        "A's connection is gone: no COMMIT follows"
    );
}

#[test]
fn without_the_timeout_b_waits_out_the_whole_stall_and_finds_the_job_done() {
    for policy in FencingPolicy::ALL {
        let t = run(&without_timeout(Scenario::row_lock()).with_policy(policy));
        assert!(when(&t, |k| matches!(k, EventKind::LeaseExpired { .. })).is_empty());
        assert_eq!(writes(&t), [w(55, "A", 0, "ok")], "{policy:?}");
        assert_eq!(t.summary.final_balance, 90);
        assert_eq!(t.summary.max_believers, 1, "nobody else believed meanwhile");
        assert_eq!(
            row_lock_wait(&t, "B"),
            35,
            "from t=20 until A's COMMIT at 55"
        );
        assert_eq!(
            when(&t, |k| matches!(k, EventKind::Released { .. })),
            [(55, "A".to_owned()), (55, "B".to_owned())]
        );
        assert!(t
            .events
            .iter()
            .any(|e| e.at == 55 && e.kind == EventKind::JobChecked { done: true }));
        assert_eq!(
            story::outcome(&t),
            "no conflict: one holder at a time",
            "{policy:?}"
        );
    }
}

#[test]
fn each_statement_restarts_the_idle_clock() {
    // A works 40 ms in two halves with a status read between them: never idle for 30 ms.
    let mut sc = without_timeout(Scenario::row_lock());
    sc.lock = LockKind::Row(RowLock { idle_timeout: true });
    let a = &mut sc.actors[0];
    a.pauses.clear();
    a.script = vec![
        Step::Acquire { retry_every: 10 },
        Step::CheckDone,
        Step::Work { ms: 20 },
        Step::CheckDone,
        Step::Work { ms: 20 },
        Step::Debit {
            amount: 10,
            idempotency_key: None,
        },
        Step::Release,
    ];
    let t = run(&sc);
    assert!(when(&t, |k| matches!(k, EventKind::LeaseExpired { .. })).is_empty());
    assert_eq!(writes(&t), [w(40, "A", 0, "ok")]);
    let deadlines: Vec<u64> = t
        .events
        .iter()
        .filter(|e| e.actor.as_deref() == Some("A"))
        .filter_map(|e| e.snapshot.holder.as_ref().map(|h| h.expires_at))
        .collect();
    assert_eq!(
        deadlines,
        [30, 30, 50, 70],
        "grant, read at 0, read at 20, UPDATE at 40"
    );
    assert_eq!(row_lock_wait(&t, "B"), 20);

    // The same job as one 40 ms stretch: a healthy slow job, killed at t=30 while working.
    let slow = run(&Scenario::row_lock_slow_job(&Scenario::row_lock()));
    assert_eq!(
        writes(&slow),
        [w(35, "B", 0, "ok"), w(40, "A", 0, "session_ended")]
    );
    assert!(slow.events.iter().any(|e| matches!(
        e.kind,
        EventKind::LeaseExpired {
            cause: ExpiryCause::IdleTimeout,
            owner_knew: Awareness::Unaware,
            ..
        }
    ) && e.at == 30));
}

#[test]
fn a_read_on_a_terminated_session_loses_the_connection_and_writes_nothing() {
    let mut sc = Scenario::row_lock();
    let a = &mut sc.actors[0];
    a.script = vec![
        Step::Acquire { retry_every: 10 },
        Step::Work { ms: 1 },
        Step::CheckDone,
        Step::Debit {
            amount: 10,
            idempotency_key: None,
        },
        Step::Release,
    ];
    a.pauses = vec![Pause {
        start: 1,
        duration: 49,
    }];
    let t = run(&sc);
    let lost: Vec<_> = t
        .events
        .iter()
        .filter(|e| e.kind == EventKind::ConnectionLost)
        .collect();
    assert_eq!(lost.len(), 1);
    assert_eq!((lost[0].at, lost[0].result_code()), (50, "session_ended"));
    assert!(lost[0].snapshot.believers.iter().all(|b| b != "A"));
    assert_eq!(
        writes(&t),
        [w(35, "B", 0, "ok")],
        "A never reaches its UPDATE"
    );
    let i = t
        .events
        .iter()
        .position(|e| std::ptr::eq(e, lost[0]))
        .unwrap();
    assert!(story::Story::of(&t)
        .narration(i + 1)
        .contains("terminated at t=30"));
}

#[test]
fn no_pause_placement_runs_the_job_twice_with_or_without_the_timeout() {
    for timeout in [true, false] {
        for policy in FencingPolicy::ALL {
            for start in (1..=60).step_by(3) {
                for duration in (1..=90).step_by(4) {
                    let mut sc = Scenario::row_lock()
                        .with_policy(policy)
                        .with_pause(0, Pause { start, duration });
                    sc.lock = LockKind::Row(RowLock {
                        idle_timeout: timeout,
                    });
                    let t = run(&sc);
                    let what = format!("timeout {timeout}, {policy:?}, pause {start}+{duration}");
                    assert_eq!(t.summary.duplicate_runs, 0, "{what}");
                    assert_eq!(t.summary.accepted_writes, 1, "{what}");
                    assert_eq!(t.summary.final_balance, 90, "{what}");
                    assert!(t.summary.max_live_leases <= 1, "{what}");
                    let refused = t.writes.iter().filter(|w| !w.accepted()).count();
                    if !timeout {
                        assert_eq!(refused, 0, "{what}: nothing ends a session");
                    }
                }
            }
        }
    }
}

#[test]
fn the_same_pause_under_a_lease_is_a_double_charge() {
    // The contrast the entry exists for: the headline, same pause, charges twice unfenced.
    let lease = run(&Scenario::gc_pause().with_policy(FencingPolicy::Off));
    assert_eq!(lease.summary.final_balance, 80);
    assert_eq!(lease.summary.duplicate_runs, 1);
    assert_eq!(run_as(FencingPolicy::Off).summary.final_balance, 90);
}

#[test]
fn a_debit_under_a_row_lock_must_commit_at_once() {
    let mut sc = Scenario::row_lock();
    sc.actors[1].script.insert(4, Step::Work { ms: 5 });
    assert_eq!(
        sc.validate(),
        Err(ScenarioError::UncommittedDebit {
            actor: "B".to_owned()
        })
    );
    assert_eq!(Scenario::row_lock().validate(), Ok(()));
    // Nor does it have a lock server to fail over, or a lock node's clock to step.
    let mut failover = Scenario::row_lock();
    failover.set_crash_at(Some(5), None);
    assert_eq!(
        failover.validate(),
        Err(ScenarioError::NotForRowLock {
            what: "lock server to fail over"
        })
    );
    let err = decode("#s=row-lock&failover=5").unwrap_err().to_string();
    assert!(err.contains("no lock server to fail over"), "{err}");
}

#[test]
fn the_words_name_no_token_and_say_the_policy_changes_nothing() {
    for policy in FencingPolicy::ALL {
        let t = run_as(policy);
        for step in 0..=t.len() {
            let (n, s) = (
                story::Story::of(&t).narration(step),
                story::Story::of(&t).say(step),
            );
            for words in [&n, &s] {
                for banned in [
                    "token 33",
                    "token 34",
                    "#33",
                    "#34",
                    "stale_fence",
                    "lease expires",
                ] {
                    assert!(!words.contains(banned), "{policy:?} step {step}: {words}");
                }
            }
        }
        let opening = story::Story::of(&t).narration(0);
        assert!(
            opening.contains(&format!("fencing policy ({})", policy.short())),
            "{opening}"
        );
        assert!(opening.contains("idle_in_transaction_session_timeout = 30 ms"));
        let a_write = write_step(&t, "A");
        let n = story::Story::of(&t).narration(a_write);
        assert!(
            n.contains("terminated that session at t=30: FATAL 25P03"),
            "{n}"
        );
        assert!(n.contains("Balance stays 90"), "{n}");
        assert!(story::Story::of(&t)
            .say(a_write)
            .contains("off, strict and same-epoch"));
        let labels: Vec<String> = t
            .events
            .iter()
            .map(|e| story::marker_label(&t, e))
            .collect();
        assert!(
            labels.contains(&"FOR UPDATE waits".to_owned()),
            "{labels:?}"
        );
        assert!(
            labels.contains(&"idle timeout 25P03".to_owned()),
            "{labels:?}"
        );
        assert!(
            labels.contains(&"UPDATE −10: 25P03".to_owned()),
            "{labels:?}"
        );
        assert!(labels.contains(&"COMMIT".to_owned()), "{labels:?}");
    }
    // Without the timeout the grant says how long B waited, and nobody else believed.
    let t = run(&without_timeout(Scenario::row_lock()));
    let grant = t
        .events
        .iter()
        .position(|e| {
            e.actor.as_deref() == Some("B") && matches!(e.kind, EventKind::Acquired { .. })
        })
        .unwrap()
        + 1;
    assert!(story::Story::of(&t)
        .narration(grant)
        .contains("after waiting 35 ms"));
    assert!(story::Story::of(&t).say(grant).contains("B waited 35 ms"));
    assert!(story::Story::of(&t)
        .narration(grant)
        .contains("No idle timeout is set"));
}

#[test]
fn the_notes_carry_the_computed_figures() {
    let entry = deck::find("row-lock").unwrap();
    let notes = (entry.notes)(&deck::runs(entry)).join("\n");
    for figure in [
        "terminates A's session at t=30 (25P03)",
        "returns after 10 ms",
        "off 90, strict 90, same-epoch 90",
        "B waits 35 ms, until A wakes and commits at t=55",
        "works 40 ms between statements",
    ] {
        assert!(notes.contains(figure), "{figure}\n{notes}");
    }
}

#[test]
fn the_link_restores_the_entry_and_its_edits() {
    let v = decode("#s=row-lock&fence=off&ttl=45&step=3").unwrap();
    assert_eq!(v.scenario.lock.row(), Some(RowLock { idle_timeout: true }));
    assert_eq!(v.scenario.lease_ttl, 45);
    assert_eq!(v.scenario.policy, FencingPolicy::Off);
    let back = decode(&encode(&v.scenario, 3)).unwrap();
    assert_eq!(back.scenario, v.scenario);
    // A 45 ms timeout fires at t=45, still inside A's pause: B waits 25 ms.
    let t = run(&v.scenario);
    assert_eq!(row_lock_wait(&t, "B"), 25);
    assert_eq!(
        writes(&t),
        [w(50, "B", 0, "ok"), w(55, "A", 0, "session_ended")]
    );
}
