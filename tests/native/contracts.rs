//! The six contracts of fencing-lab, checked against the lock/ledger primitives
//! directly and against the scenario engine running the headline `gc_pause`.

use fencing_lab::core::story;
use fencing_lab::core::{
    run, Acquire, Actor, Awareness, Clock, EventKind, ExpiryCause, Fence, FencingPolicy, Grant,
    Lane, LeaseEnd, LeaseLock, LeaseSpan, Ledger, LockError, NoopReason, Pause, ReleaseMode,
    Scenario, ScenarioError, Step, Trace, TraceEvent, WriteError, WriteRequest, MAX_ACTORS,
    MAX_STEPS, MAX_TIME,
};

const KEY: &str = "acct:1";
const TTL: u64 = 30;

fn debit(writer: &str, fence: Option<u64>, amount: i64, key: Option<&str>) -> WriteRequest {
    WriteRequest {
        publish: None,
        resource: KEY.to_owned(),
        writer: writer.to_owned(),
        fence: fence.map(Fence),
        amount,
        idempotency_key: key.map(str::to_owned),
    }
}

fn ledger(policy: FencingPolicy) -> Ledger {
    let mut l = Ledger::new(policy);
    l.open(KEY, 100);
    l
}

/// The narration shown at the step that `e` (an event of `trace`) produced.
fn narration_of(trace: &Trace, e: &TraceEvent) -> String {
    let i = trace
        .events
        .iter()
        .position(|x| std::ptr::eq(x, e))
        .expect("an event of this trace");
    story::Story::of(trace).narration(i + 1)
}

/// The storage-lane event recording `writer`'s write(s).
fn applied_by<'a>(trace: &'a Trace, writer: &str) -> Vec<&'a TraceEvent> {
    trace
        .events
        .iter()
        .filter(|e| {
            matches!(e.kind, EventKind::WriteApplied { .. }) && e.actor.as_deref() == Some(writer)
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// (1) While the lease is live, B cannot acquire.
// ---------------------------------------------------------------------------------------

#[test]
fn c1_live_lease_refuses_a_second_acquire() {
    let mut lock = LeaseLock::new(33);
    let a = lock.acquire(0, KEY, "A", TTL);
    assert_eq!(
        a,
        Acquire::Acquired {
            fence: Fence(33),
            expires_at: 30
        }
    );
    for t in [0, 1, 15, 29] {
        let b = lock.acquire(t, KEY, "B", TTL);
        match &b {
            Acquire::Held { holder, expires_at } => {
                assert_eq!(holder, "A");
                assert_eq!(*expires_at, 30);
            }
            other => panic!("B acquired a live lease at t={t}: {other:?}"),
        }
        assert_eq!(b.fence(), None);
        let err = b.into_result().unwrap_err();
        assert_eq!(
            err,
            LockError::LockHeld {
                holder: "A".to_owned()
            }
        );
        assert_eq!(err.code(), "lock_held");
        assert_eq!(err.to_string(), "lock_held");
    }
    // A refused acquire mints nothing and does not touch the lease.
    assert_eq!(lock.next_fence(), Fence(34));
    assert!(lock.is_held(29, KEY, "A"));
    assert!(!lock.is_held(29, KEY, "B"));
    // The holder itself cannot re-acquire either (NX is not re-entrant).
    assert!(
        matches!(lock.acquire(10, KEY, "A", TTL), Acquire::Held { ref holder, .. } if holder == "A")
    );
}

#[test]
fn c1_engine_b_is_refused_while_a_holds() {
    let trace = run(&Scenario::gc_pause());
    let refused: Vec<_> = trace
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::AcquireRefused { .. }))
        .collect();
    assert_eq!(refused.len(), 1, "{refused:#?}");
    let e = refused[0];
    assert_eq!(e.at, 20);
    assert_eq!(e.actor.as_deref(), Some("B"));
    assert_eq!(
        e.kind,
        EventKind::AcquireRefused {
            holder: "A".to_owned(),
            until: Some(30),
            retry_in: 10,
            nodes: vec![]
        }
    );
    assert_eq!(e.result_code(), "lock_held");
    let n = narration_of(&trace, e);
    assert!(n.contains("lock_held"), "{n}");
    assert_eq!(
        e.snapshot.holder.as_ref().map(|l| l.owner.as_str()),
        Some("A")
    );
}

// ---------------------------------------------------------------------------------------
// (2) After the TTL, A is no longer the holder and B gets the next token.
// ---------------------------------------------------------------------------------------

#[test]
fn c2_after_ttl_a_is_not_holder_and_b_gets_34() {
    let mut lock = LeaseLock::new(33);
    assert_eq!(lock.acquire(0, KEY, "A", TTL).fence(), Some(Fence(33)));
    assert!(lock.is_held(TTL - 1, KEY, "A"));
    // Live until, but not at, expires_at.
    assert!(!lock.is_held(TTL, KEY, "A"));
    assert!(lock.holder(TTL, KEY).is_none());
    // The stale entry is still stored; only `holder` hides it.
    assert_eq!(lock.entry(KEY).map(|l| l.fence), Some(Fence(33)));

    let b = lock.acquire(TTL, KEY, "B", TTL);
    assert_eq!(
        b,
        Acquire::Acquired {
            fence: Fence(34),
            expires_at: 60
        }
    );
    assert!(lock.is_held(TTL, KEY, "B"));
    assert!(!lock.is_held(TTL, KEY, "A"));
    assert_eq!(
        lock.holder(TTL, KEY).map(|l| (l.owner.as_str(), l.fence)),
        Some(("B", Fence(34)))
    );
}

#[test]
fn c2_engine_a_expires_at_30_and_b_acquires_34() {
    let sc = Scenario::gc_pause();
    assert_eq!(sc.first_fence, 33);
    assert_eq!(sc.lease_ttl, 30);
    let trace = run(&sc);
    let acquired: Vec<_> = trace
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Acquired {
                fence, expires_at, ..
            } => Some((e.at, e.actor.clone().unwrap(), fence, expires_at)),
            _ => None,
        })
        .collect();
    assert_eq!(
        acquired,
        vec![
            (0, "A".to_owned(), Fence(33), 30),
            (30, "B".to_owned(), Fence(34), 60)
        ]
    );
    let expiry = trace
        .events
        .iter()
        .find(|e| matches!(e.kind, EventKind::LeaseExpired { .. }))
        .expect("A's lease expires");
    assert_eq!(expiry.at, 30);
    assert_eq!(expiry.lane, Lane::Lease);
    assert_eq!(expiry.actor, None);
    assert_eq!(
        expiry.kind,
        EventKind::LeaseExpired {
            owner: "A".to_owned(),
            fence: Fence(33),
            cause: ExpiryCause::Ttl,
            owner_knew: Awareness::Paused
        }
    );
    assert!(expiry.snapshot.holder.is_none());
    // A is paused and still believes it holds the lock: that is the whole problem.
    assert_eq!(expiry.snapshot.believers, vec!["A".to_owned()]);
    let n = narration_of(&trace, expiry);
    assert!(n.contains("paused"), "{n}");
}

// ---------------------------------------------------------------------------------------
// (3) Fencing off: both debits land, the late write wins.
// ---------------------------------------------------------------------------------------

#[test]
fn c3_fencing_off_both_debits_land() {
    let mut l = ledger(FencingPolicy::Off);
    assert_eq!(l.debit(35, debit("B", Some(34), 10, None)), Ok(90));
    assert_eq!(l.debit(55, debit("A", Some(33), 10, None)), Ok(80));
    let acct = l.account(KEY);
    assert_eq!(acct.balance, 80);
    assert_eq!(acct.last_write_fence, Some(Fence(33)));
    assert_eq!(
        acct.last_fence, None,
        "no high-water mark is kept while fencing is off"
    );
    assert_eq!(l.log().len(), 2);
    assert!(l.log().iter().all(|w| w.accepted()));
}

#[test]
fn c3_engine_fencing_off_double_charge() {
    let trace = run(&Scenario::gc_pause().with_policy(FencingPolicy::Off));
    let s = &trace.summary;
    assert_eq!(s.final_balance, 80);
    assert_eq!(s.accepted_writes, 2);
    assert_eq!(s.rejected_writes, 0);
    assert_eq!(s.last_write_fence, Some(Fence(33)));
    assert_eq!(s.last_fence, None);
    assert_eq!(s.late_writes_accepted, 1);
    assert_eq!(s.out_of_order_writes, 1);
    assert_eq!(s.duplicate_runs, 1, "the one job ran twice");
    assert!(s.conflict(), "A and B both believed they held the lease");
    assert_eq!(s.max_believers, 2);
    let order: Vec<_> = trace
        .writes
        .iter()
        .map(|w| {
            (
                w.at,
                w.request.writer.as_str(),
                w.request.fence,
                w.balance_after,
            )
        })
        .collect();
    assert_eq!(
        order,
        vec![
            (35, "B", Some(Fence(34)), 90),
            (55, "A", Some(Fence(33)), 80)
        ]
    );
    let a = applied_by(&trace, "A");
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].result_code(), "ok");
    // A's write is both late (B's grant superseded it) and out of token order (34 landed first).
    assert!(a[0].is_late_write() && a[0].is_out_of_order(), "{:?}", a[0]);
    match &a[0].kind {
        EventKind::WriteApplied {
            superseded_by,
            highest_accepted,
            sent_at,
            ..
        } => {
            assert_eq!(
                superseded_by,
                &Some(Grant {
                    owner: "B".to_owned(),
                    fence: Fence(34)
                })
            );
            assert_eq!(*highest_accepted, Some(Fence(34)));
            assert_eq!(*sent_at, 55);
        }
        other => panic!("unexpected {other:?}"),
    }
    // The harm is a double charge: both debits are atomic, so no update is lost.
    let n = narration_of(&trace, a[0]);
    assert!(n.contains("twice") && n.contains("double charge"), "{n}");
    assert!(!n.contains("lost update"), "{n}");
    let b = applied_by(&trace, "B");
    assert!(!b[0].is_late_write() && !b[0].is_out_of_order());
}

// ---------------------------------------------------------------------------------------
// (4) Fencing strict: A's late write is rejected.
// ---------------------------------------------------------------------------------------

#[test]
fn c4_strict_rejects_the_older_token() {
    let mut l = ledger(FencingPolicy::Strict);
    assert_eq!(l.debit(35, debit("B", Some(34), 10, None)), Ok(90));
    let err = l.debit(55, debit("A", Some(33), 10, None)).unwrap_err();
    assert_eq!(
        err,
        WriteError::StaleFence {
            token: Fence(33),
            last: Fence(34)
        }
    );
    assert_eq!(err.code(), "stale_fence");
    assert_eq!(err.to_string(), "stale_fence");
    let acct = l.account(KEY);
    assert_eq!(acct.balance, 90);
    assert_eq!(acct.last_fence, Some(Fence(34)));
    assert_eq!(acct.last_write_fence, Some(Fence(34)));
    // The rejected attempt is still logged, with the unchanged balance.
    let last = l.log().last().unwrap();
    assert!(!last.accepted());
    assert_eq!(last.balance_after, 90);
    assert_eq!(last.result, Err(err));
}

#[test]
fn c4_strict_requires_a_token() {
    for policy in [FencingPolicy::Strict, FencingPolicy::SameEpoch] {
        let mut l = ledger(policy);
        let err = l.debit(0, debit("X", None, 10, None)).unwrap_err();
        assert_eq!(err, WriteError::MissingFence);
        assert_eq!(err.code(), "missing_fence");
        assert_eq!(l.account(KEY).balance, 100);
    }
    let mut off = ledger(FencingPolicy::Off);
    assert_eq!(off.debit(0, debit("X", None, 10, None)), Ok(90));
}

#[test]
fn c4_engine_strict_rejects_a() {
    let trace = run(&Scenario::gc_pause().with_policy(FencingPolicy::Strict));
    let s = &trace.summary;
    assert_eq!(s.final_balance, 90);
    assert_eq!(s.accepted_writes, 1);
    assert_eq!(s.rejected_writes, 1);
    assert_eq!(s.last_fence, Some(Fence(34)));
    assert_eq!(s.last_write_fence, Some(Fence(34)));
    assert_eq!(s.late_writes_accepted, 0);
    assert_eq!(s.out_of_order_writes, 0);
    assert_eq!(s.duplicate_runs, 0, "the job ran once");
    // The lease still failed to give mutual exclusion; only the storage saved us.
    assert!(s.conflict());

    let a = applied_by(&trace, "A");
    assert_eq!(a.len(), 1);
    let e = a[0];
    assert_eq!(e.at, 55);
    assert_eq!(e.lane, Lane::Storage);
    assert_eq!(e.fence(), Some(Fence(33)));
    assert_eq!(e.result_code(), "stale_fence");
    match &e.kind {
        EventKind::WriteApplied { result, amount, .. } => {
            assert_eq!(*amount, 10);
            assert_eq!(
                result,
                &Err(WriteError::StaleFence {
                    token: Fence(33),
                    last: Fence(34)
                })
            );
        }
        other => panic!("unexpected {other:?}"),
    }
    let n = narration_of(&trace, e);
    assert!(n.contains("stale_fence"), "{n}");
    assert!(n.contains("33"), "{n}");
    assert!(!n.contains("equal"), "33 < 34 is not an equal token: {n}");
    assert_eq!(e.snapshot.balance, 90);
    assert_eq!(story::label(e), "−10 #33 stale_fence");
    // The rejected write was from a superseded lease, but a refused write is not late.
    assert!(!e.is_late_write());

    let rec = trace
        .writes
        .iter()
        .find(|w| w.request.writer == "A")
        .unwrap();
    assert_eq!(rec.result.as_ref().unwrap_err().code(), "stale_fence");
    assert_eq!(rec.balance_after, 90);
}

#[test]
fn c4_same_epoch_also_rejects_a_in_the_headline() {
    let trace = run(&Scenario::gc_pause().with_policy(FencingPolicy::SameEpoch));
    assert_eq!(trace.summary.final_balance, 90);
    assert_eq!(trace.summary.late_writes_accepted, 0);
    assert_eq!(trace.summary.duplicate_runs, 0);
    assert_eq!(applied_by(&trace, "A")[0].result_code(), "stale_fence");
}

// ---------------------------------------------------------------------------------------
// (5) Equal tokens, SameEpoch and idempotency keys.
// ---------------------------------------------------------------------------------------

#[test]
fn c5_equal_token_is_stale_under_strict() {
    let mut l = ledger(FencingPolicy::Strict);
    assert_eq!(l.debit(0, debit("A", Some(33), 10, None)), Ok(90));
    assert_eq!(
        l.debit(1, debit("A", Some(33), 10, None)),
        Err(WriteError::StaleFence {
            token: Fence(33),
            last: Fence(33)
        })
    );
    assert_eq!(l.account(KEY).balance, 90);
    // A strictly newer token is fine.
    assert_eq!(l.debit(2, debit("B", Some(34), 10, None)), Ok(80));
}

#[test]
fn c5_same_epoch_accepts_equal_token_and_dedupes_by_key() {
    let mut l = ledger(FencingPolicy::SameEpoch);
    assert_eq!(l.debit(0, debit("A", Some(33), 10, Some("pay-1"))), Ok(90));
    // Same generation, new intent: accepted.
    assert_eq!(l.debit(1, debit("A", Some(33), 5, Some("pay-2"))), Ok(85));
    // Same generation, retry of an intent that already ran: duplicate.
    let err = l
        .debit(2, debit("A", Some(33), 10, Some("pay-1")))
        .unwrap_err();
    assert_eq!(
        err,
        WriteError::DuplicateIntent {
            key: "pay-1".to_owned(),
            original_balance: 90
        }
    );
    assert_eq!(err.code(), "duplicate_intent");
    let acct = l.account(KEY);
    assert_eq!(acct.balance, 85, "pay-1 was debited exactly once");
    assert_eq!(acct.last_fence, Some(Fence(33)));
    // Older tokens are still stale under SameEpoch.
    let err = l
        .debit(3, debit("B", Some(34), 1, None))
        .and_then(|_| l.debit(4, debit("A", Some(33), 1, None)));
    assert_eq!(
        err,
        Err(WriteError::StaleFence {
            token: Fence(33),
            last: Fence(34)
        })
    );
}

#[test]
fn c5_same_epoch_retry_with_key_debits_once_in_the_engine() {
    let mut sc = Scenario::gc_pause().with_policy(FencingPolicy::SameEpoch);
    sc.actors.truncate(1);
    let a = &mut sc.actors[0];
    a.pauses.clear();
    let pay = Step::Debit {
        amount: 10,
        idempotency_key: Some("pay-1".to_owned()),
    };
    a.script = vec![
        Step::Acquire { retry_every: 10 },
        pay.clone(),
        Step::Work { ms: 1 },
        pay,
        Step::Release,
    ];
    sc.validate().unwrap();
    let trace = run(&sc);
    let codes: Vec<_> = applied_by(&trace, "A")
        .iter()
        .map(|e| e.result_code())
        .collect();
    assert_eq!(codes, vec!["ok", "duplicate_intent"]);
    assert_eq!(trace.summary.final_balance, 90);
    assert_eq!(trace.summary.accepted_writes, 1);
    assert_eq!(trace.summary.rejected_writes, 1);
    let dup = applied_by(&trace, "A")[1];
    assert!(matches!(
        &dup.kind,
        EventKind::WriteApplied {
            result: Err(WriteError::DuplicateIntent { key, original_balance: 90 }),
            ..
        } if key == "pay-1"
    ));
    let n = narration_of(&trace, dup);
    assert!(
        n.contains("not applied again") && n.contains("pay-1") && n.contains("balance 90"),
        "{n}"
    );

    // The same script under Strict: the retry carries an equal token and is refused as stale
    // before the key is even consulted.
    let trace = run(&sc.clone().with_policy(FencingPolicy::Strict));
    let codes: Vec<_> = applied_by(&trace, "A")
        .iter()
        .map(|e| e.result_code())
        .collect();
    assert_eq!(codes, vec!["ok", "stale_fence"]);
    assert_eq!(trace.summary.final_balance, 90);
}

#[test]
fn c5_idempotency_key_is_not_a_fence() {
    // A fresh key on a write from an older lock generation does not make it acceptable.
    let mut l = ledger(FencingPolicy::Strict);
    assert_eq!(
        l.debit(35, debit("B", Some(34), 10, Some("b-intent"))),
        Ok(90)
    );
    let err = l
        .debit(55, debit("A", Some(33), 10, Some("a-intent")))
        .unwrap_err();
    assert_eq!(err.code(), "stale_fence");
    assert_eq!(l.account(KEY).balance, 90);
    // ...and the refused write did not burn its key: a legit writer can still use it.
    assert_eq!(
        l.debit(60, debit("C", Some(35), 10, Some("a-intent"))),
        Ok(80)
    );

    // Conversely, with fencing off the key alone lets the late write through.
    let mut off = ledger(FencingPolicy::Off);
    assert_eq!(
        off.debit(35, debit("B", Some(34), 10, Some("b-intent"))),
        Ok(90)
    );
    assert_eq!(
        off.debit(55, debit("A", Some(33), 10, Some("a-intent"))),
        Ok(80)
    );
}

#[test]
fn c5_engine_unique_keys_do_not_save_the_headline() {
    let mut sc = Scenario::gc_pause();
    for a in &mut sc.actors {
        for s in &mut a.script {
            if let Step::Debit {
                idempotency_key, ..
            } = s
            {
                *idempotency_key = Some(format!("intent-{}", a.name));
            }
        }
    }
    let off = run(&sc.clone().with_policy(FencingPolicy::Off));
    assert_eq!(off.summary.final_balance, 80);
    assert_eq!(off.summary.late_writes_accepted, 1);
    assert_eq!(off.summary.duplicate_runs, 1);
    let strict = run(&sc.with_policy(FencingPolicy::Strict));
    assert_eq!(strict.summary.final_balance, 90);
    assert_eq!(applied_by(&strict, "A")[0].result_code(), "stale_fence");
}

// ---------------------------------------------------------------------------------------
// (6) TOCTOU: is_held true now says nothing about a moment later.
// ---------------------------------------------------------------------------------------

#[test]
fn c6_toctou_check_then_write_is_rejected() {
    let mut clock = Clock::at(0);
    let mut lock = LeaseLock::new(33);
    let mut storage = ledger(FencingPolicy::Strict);

    let a_token = lock
        .acquire(clock.now(), KEY, "A", TTL)
        .into_result()
        .unwrap();
    assert_eq!(a_token, Fence(33));
    // A checks: true.
    assert!(lock.is_held(clock.now(), KEY, "A"));

    // A stalls; the clock jumps past the TTL.
    clock.jump(TTL + 25);
    assert_eq!(clock.now(), 55);
    assert!(!lock.is_held(clock.now(), KEY, "A"));

    // B acquires and writes with the newer token.
    let b_token = lock
        .acquire(clock.now(), KEY, "B", TTL)
        .into_result()
        .unwrap();
    assert_eq!(b_token, Fence(34));
    assert_eq!(
        storage.debit(clock.now(), debit("B", Some(b_token.0), 10, None)),
        Ok(90)
    );

    // A acts on its stale check.
    clock.jump(1);
    let res = storage.debit(clock.now(), debit("A", Some(a_token.0), 10, None));
    assert_eq!(
        res,
        Err(WriteError::StaleFence {
            token: Fence(33),
            last: Fence(34)
        })
    );
    assert_eq!(storage.account(KEY).balance, 90);
    assert_eq!(storage.log().last().unwrap().at, 56);

    // The clock never runs backwards.
    clock.advance_to(0);
    assert_eq!(clock.now(), 56);
}

#[test]
fn c6_engine_check_held_then_write() {
    // A checks is_held (true), then stalls before writing; B takes over and writes.
    let mut sc = Scenario::gc_pause();
    sc.actors[0].script = vec![
        Step::Acquire { retry_every: 10 },
        Step::Work { ms: 2 },
        Step::CheckHeld,
        Step::Work { ms: 10 },
        Step::Debit {
            amount: 10,
            idempotency_key: None,
        },
        Step::Release,
    ];
    let trace = run(&sc);
    let check = trace
        .events
        .iter()
        .find(|e| matches!(e.kind, EventKind::Checked { .. }))
        .unwrap();
    assert_eq!(check.at, 2);
    assert_eq!(check.kind, EventKind::Checked { held: true });
    let a = applied_by(&trace, "A");
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].at, 55);
    assert_eq!(a[0].result_code(), "stale_fence");
    assert_eq!(trace.summary.final_balance, 90);

    let off = run(&sc.with_policy(FencingPolicy::Off));
    assert_eq!(off.summary.final_balance, 80);
    assert_eq!(off.summary.late_writes_accepted, 1);
    assert_eq!(off.summary.out_of_order_writes, 1);
}

#[test]
fn c6_check_after_expiry_gives_up() {
    // A check *after* the pause does notice; the actor then gives up without writing.
    let mut sc = Scenario::gc_pause();
    // [Acquire, CheckDone, Work, CheckHeld, Debit, ...]: the check comes after the work.
    assert_eq!(sc.actors[0].script[1], Step::CheckDone);
    sc.actors[0].script.insert(3, Step::CheckHeld);
    let trace = run(&sc.with_policy(FencingPolicy::Off));
    let check = trace
        .events
        .iter()
        .find(|e| matches!(e.kind, EventKind::Checked { .. }))
        .unwrap();
    assert_eq!(check.at, 55);
    assert_eq!(check.kind, EventKind::Checked { held: false });
    assert_eq!(check.result_code(), "not_holder");
    assert!(trace
        .events
        .iter()
        .any(|e| e.kind == EventKind::GaveUp && e.actor.as_deref() == Some("A")));
    assert!(applied_by(&trace, "A").is_empty());
    assert_eq!(trace.summary.final_balance, 90);
}

// ---------------------------------------------------------------------------------------
// Release / extend by a non-holder.
// ---------------------------------------------------------------------------------------

#[test]
fn release_and_extend_by_non_holder_are_refused_and_change_nothing() {
    let mut lock = LeaseLock::new(33);
    lock.acquire(0, KEY, "A", TTL);
    let before = lock.clone();
    let holder_before = lock.holder(10, KEY).cloned();

    let err = lock.release(10, KEY, "B").unwrap_err();
    assert_eq!(err, LockError::NotHolder);
    assert_eq!(err.code(), "not_holder");
    assert_eq!(err.to_string(), "not_holder");
    assert_eq!(lock, before);
    assert_eq!(lock.holder(10, KEY).cloned(), holder_before);

    let err = lock.extend(10, KEY, "B", 1000).unwrap_err();
    assert_eq!(err, LockError::NotHolder);
    assert_eq!(err.code(), "not_holder");
    assert_eq!(lock, before);
    assert_eq!(lock.holder(10, KEY).cloned(), holder_before);
    assert_eq!(lock.entry(KEY).unwrap().expires_at, 30);

    // On a key nobody ever locked, too.
    assert_eq!(lock.release(10, "other", "A"), Err(LockError::NotHolder));
    assert_eq!(
        lock.extend(10, "other", "A", TTL),
        Err(LockError::NotHolder)
    );
    assert_eq!(lock, before);

    // The holder can extend and release.
    assert_eq!(lock.extend(10, KEY, "A", TTL), Ok(40));
    assert!(lock.is_held(39, KEY, "A"));
    assert_eq!(lock.release(20, KEY, "A"), Ok(Fence(33)));
    assert!(lock.holder(20, KEY).is_none());
    assert!(lock.entry(KEY).is_none());
}

#[test]
fn extend_after_expiry_does_not_resurrect() {
    let mut lock = LeaseLock::new(33);
    lock.acquire(0, KEY, "A", TTL);
    let before = lock.clone();
    assert_eq!(lock.extend(TTL, KEY, "A", TTL), Err(LockError::NotHolder));
    assert_eq!(lock, before);
    assert!(!lock.is_held(TTL, KEY, "A"));
    assert_eq!(lock.release(TTL, KEY, "A"), Err(LockError::NotHolder));
}

#[test]
fn late_release_does_not_delete_the_successors_lease() {
    let mut lock = LeaseLock::new(33);
    lock.acquire(0, KEY, "A", TTL);
    assert_eq!(lock.acquire(35, KEY, "B", TTL).fence(), Some(Fence(34)));
    let before = lock.clone();

    // A wakes up and releases what it thinks is its lock: compare-and-delete refuses.
    assert_eq!(lock.release(55, KEY, "A"), Err(LockError::NotHolder));
    assert_eq!(lock, before);
    let h = lock.holder(55, KEY).unwrap();
    assert_eq!(
        (h.owner.as_str(), h.fence, h.expires_at),
        ("B", Fence(34), 65)
    );
    // C still cannot get in.
    assert!(
        matches!(lock.acquire(56, KEY, "C", TTL), Acquire::Held { ref holder, .. } if holder == "B")
    );

    // The unsafe GET-then-DEL (unconditional delete) would have removed it.
    let mut unsafe_lock = before.clone();
    let deleted = unsafe_lock.delete(56, KEY).unwrap();
    assert_eq!(deleted.owner, "B");
    assert_eq!(
        unsafe_lock.acquire(56, KEY, "C", TTL).fence(),
        Some(Fence(35))
    );
}

#[test]
fn engine_late_release_is_a_noop() {
    // A releases right after its (late) write at t=55, while B's lease (30..60) is live;
    // B dawdles past its own TTL before releasing.
    let mut sc = Scenario::gc_pause();
    assert_eq!(sc.actors[0].script[4], Step::Work { ms: 5 });
    sc.actors[0].script[4] = Step::Work { ms: 0 };
    sc.actors[1].script[4] = Step::Work { ms: 40 };
    let trace = run(&sc);
    let noops: Vec<_> = trace
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::ReleaseNoop { .. }))
        .collect();
    assert_eq!(noops.len(), 2, "{noops:#?}");
    let noop = noops[0];
    assert_eq!(noop.actor.as_deref(), Some("A"));
    assert_eq!(noop.at, 55);
    assert_eq!(noop.result_code(), "not_holder");
    assert_eq!(
        noop.kind,
        EventKind::ReleaseNoop {
            via: ReleaseMode::CompareAndDelete,
            reason: NoopReason::OtherHolder {
                owner: "B".to_owned(),
                fence: Fence(34)
            },
            deleted: vec![],
        }
    );
    let n = narration_of(&trace, noop);
    assert!(n.contains("finds B's value rnd-B"), "{n}");
    let h = noop.snapshot.holder.as_ref().expect("B still holds");
    assert_eq!((h.owner.as_str(), h.fence), ("B", Fence(34)));
    // B's own release at t=75 comes after its lease expired at t=60.
    let late = noops[1];
    assert_eq!((late.actor.as_deref(), late.at), (Some("B"), 75));
    assert!(matches!(
        late.kind,
        EventKind::ReleaseNoop {
            reason: NoopReason::Expired,
            ..
        }
    ));
    let n = narration_of(&trace, late);
    assert!(n.contains("already expired"), "{n}");
    assert!(late.snapshot.holder.is_none());
    assert_eq!(
        trace
            .lease_spans()
            .iter()
            .map(|s| s.end)
            .collect::<Vec<_>>(),
        vec![LeaseEnd::Expired, LeaseEnd::Expired]
    );
}

#[test]
fn tokens_are_never_reused_after_release_or_expiry() {
    let mut lock = LeaseLock::new(33);
    let mut seen = Vec::new();
    let mut t = 0;
    for i in 0..20u64 {
        let owner = if i % 2 == 0 { "A" } else { "B" };
        let f = lock.acquire(t, KEY, owner, TTL).into_result().unwrap();
        seen.push(f);
        if i % 3 == 0 {
            t += TTL; // let it expire
        } else {
            assert_eq!(lock.release(t + 1, KEY, owner), Ok(f));
            t += 2;
        }
    }
    let expected: Vec<_> = (33..53).map(Fence).collect();
    assert_eq!(seen, expected);
    assert_eq!(lock.next_fence(), Fence(53));
}

#[test]
fn first_token_is_configurable() {
    for first in [1u64, 7, 33, 1_000_000] {
        let mut lock = LeaseLock::new(first);
        assert_eq!(lock.next_fence(), Fence(first));
        assert_eq!(lock.acquire(0, KEY, "A", TTL).fence(), Some(Fence(first)));
        assert_eq!(lock.next_fence(), Fence(first + 1));
    }
    // One counter for all keys: tokens are unique across resources.
    let mut lock = LeaseLock::new(5);
    assert_eq!(lock.acquire(0, "k1", "A", TTL).fence(), Some(Fence(5)));
    assert_eq!(lock.acquire(0, "k2", "B", TTL).fence(), Some(Fence(6)));

    let mut sc = Scenario::gc_pause();
    sc.first_fence = 7;
    let trace = run(&sc);
    let minted: Vec<_> = trace
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Acquired { fence, .. } => Some(fence),
            _ => None,
        })
        .collect();
    assert_eq!(minted, vec![Fence(7), Fence(8)]);
    assert_eq!(trace.summary.last_fence, Some(Fence(8)));
}

// ---------------------------------------------------------------------------------------
// A short pause is harmless.
// ---------------------------------------------------------------------------------------

#[test]
fn short_pause_gives_no_conflict() {
    for policy in [
        FencingPolicy::Off,
        FencingPolicy::Strict,
        FencingPolicy::SameEpoch,
    ] {
        let sc = Scenario::gc_pause().with_policy(policy).with_pause(
            0,
            Pause {
                start: 5,
                duration: 10,
            },
        );
        assert_eq!(
            sc.actors[0].pauses,
            vec![Pause {
                start: 5,
                duration: 10
            }]
        );
        sc.validate().unwrap();
        let trace = run(&sc);
        let s = &trace.summary;
        assert!(!s.conflict(), "{policy:?}: {s:?}");
        assert_eq!(s.max_believers, 1, "{policy:?}");
        assert_eq!(s.late_writes_accepted, 0, "{policy:?}");
        assert_eq!(s.out_of_order_writes, 0, "{policy:?}");
        assert_eq!(s.rejected_writes, 0, "{policy:?}");
        // One job: A charges it, B then reads that it is done and skips. Charged once.
        assert_eq!(s.accepted_writes, 1, "{policy:?}");
        assert_eq!(s.duplicate_runs, 0, "{policy:?}");
        assert_eq!(s.final_balance, 90, "{policy:?}: the job ran once");
        let checks: Vec<_> = trace
            .events
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::JobChecked { done } => Some((e.actor.clone().unwrap(), done)),
                _ => None,
            })
            .collect();
        assert_eq!(
            checks,
            vec![("A".to_owned(), false), ("B".to_owned(), true)],
            "{policy:?}"
        );
        assert!(applied_by(&trace, "B").is_empty(), "{policy:?}");
        assert!(trace.writes.iter().all(|w| w.accepted()));
        // A released its lease itself: nothing expired under anybody.
        let spans = trace.lease_spans();
        assert_eq!(spans.len(), 2);
        assert!(
            spans.iter().all(|s| s.end == LeaseEnd::Released),
            "{spans:?}"
        );
        assert_eq!(spans[0].owner, "A");
        assert!(spans[0].to <= spans[1].from);
        assert!(!trace
            .events
            .iter()
            .any(|e| matches!(e.kind, EventKind::LeaseExpired { .. })));
    }
}

#[test]
fn with_pause_adds_a_pause_when_there_is_none() {
    let sc = Scenario::gc_pause().with_pause(
        1,
        Pause {
            start: 1,
            duration: 2,
        },
    );
    assert_eq!(
        sc.actors[1].pauses,
        vec![Pause {
            start: 1,
            duration: 2
        }]
    );
    // An out-of-range actor index changes nothing.
    assert_eq!(
        Scenario::gc_pause().with_pause(
            9,
            Pause {
                start: 1,
                duration: 2
            }
        ),
        Scenario::gc_pause()
    );
}

// ---------------------------------------------------------------------------------------
// Trace stepping.
// ---------------------------------------------------------------------------------------

#[test]
fn trace_stepping() {
    let trace = run(&Scenario::gc_pause().with_policy(FencingPolicy::Off));
    let n = trace.len();
    assert!(n > 0);
    assert!(!trace.is_empty());

    let s0 = trace.snapshot_at(0);
    assert_eq!(s0, &trace.initial);
    assert_eq!(s0.at, 0);
    assert_eq!(s0.balance, 100);
    assert!(s0.holder.is_none());
    assert!(s0.believers.is_empty());
    assert_eq!(s0.last_fence, None);
    assert_eq!(s0.last_write_fence, None);
    assert!(trace.event_at(0).is_none());
    assert!(trace.writes_until(0).is_empty());

    let last = trace.snapshot_at(n);
    assert_eq!(last, &trace.events[n - 1].snapshot);
    assert_eq!(last.balance, trace.summary.final_balance);
    assert_eq!(last.balance, 80);
    assert_eq!(last.last_write_fence, Some(Fence(33)));
    // Clamped past the end.
    assert_eq!(trace.snapshot_at(n + 100), last);
    assert_eq!(trace.writes_until(n + 100), &trace.writes[..]);
    assert_eq!(trace.writes_until(n), &trace.writes[..]);
    assert!(trace.event_at(n + 1).is_none());
    assert_eq!(trace.event_at(n), trace.events.last());
    assert_eq!(trace.event_at(1), trace.events.first());

    // Time is monotone, and each step's snapshot is its event's.
    for step in 1..=n {
        let e = trace.event_at(step).unwrap();
        assert_eq!(trace.snapshot_at(step), &e.snapshot);
        assert_eq!(e.snapshot.at, e.at);
        let n = story::Story::of(&trace).narration(step);
        assert!(n.starts_with(&format!("t={} ms — ", e.at)), "{n}");
        if step > 1 {
            assert!(trace.event_at(step - 1).unwrap().at <= e.at);
        }
    }

    // writes_until grows by one exactly at each WriteApplied event.
    for step in 1..=n {
        let grew = trace.writes_until(step).len() - trace.writes_until(step - 1).len();
        let is_write = matches!(
            trace.event_at(step).unwrap().kind,
            EventKind::WriteApplied { .. }
        );
        assert_eq!(grew, usize::from(is_write), "step {step}");
        assert_eq!(trace.snapshot_at(step).balance, {
            let w = trace.writes_until(step);
            w.last().map_or(100, |w| w.balance_after)
        });
    }
    let b_write = trace
        .events
        .iter()
        .position(|e| matches!(e.kind, EventKind::WriteApplied { .. }))
        .unwrap()
        + 1;
    assert_eq!(trace.writes_until(b_write).len(), 1);
    assert_eq!(trace.writes_until(b_write)[0].request.writer, "B");
    assert_eq!(trace.writes_until(b_write - 1).len(), 0);
    assert_eq!(trace.snapshot_at(b_write).balance, 90);
}

#[test]
fn headline_lease_spans() {
    for policy in [
        FencingPolicy::Off,
        FencingPolicy::Strict,
        FencingPolicy::SameEpoch,
    ] {
        let trace = run(&Scenario::gc_pause().with_policy(policy));
        assert_eq!(
            trace.lease_spans(),
            vec![
                LeaseSpan {
                    owner: "A".to_owned(),
                    fence: Fence(33),
                    from: 0,
                    to: 30,
                    end: LeaseEnd::Expired
                },
                LeaseSpan {
                    owner: "B".to_owned(),
                    fence: Fence(34),
                    from: 30,
                    to: 40,
                    end: LeaseEnd::Released
                },
            ],
            "{policy:?}"
        );
    }
}

#[test]
fn open_and_extended_lease_spans() {
    let sc = Scenario {
        title: "extend".to_owned(),
        resource: KEY.to_owned(),
        initial_balance: 100,
        first_fence: 1,
        lease_ttl: 30,
        policy: FencingPolicy::Strict,
        actors: vec![Actor {
            name: "A".to_owned(),
            start_at: 0,
            script: vec![
                Step::Acquire { retry_every: 5 },
                Step::Work { ms: 20 },
                Step::Extend,
            ],
            ..Actor::default()
        }],
        horizon: 45,
        ..Scenario::default()
    };
    let trace = run(&sc);
    assert!(trace.events.iter().any(|e| e.kind
        == EventKind::Extended {
            fence: Fence(1),
            expires_at: 50,
            watchdog: None,
            nodes: Vec::new(),
        }));
    assert_eq!(
        trace.lease_spans(),
        vec![LeaseSpan {
            owner: "A".to_owned(),
            fence: Fence(1),
            from: 0,
            to: 50,
            end: LeaseEnd::Open
        }]
    );
    // The original expiry at t=30 was superseded by the extension.
    assert!(!trace
        .events
        .iter()
        .any(|e| matches!(e.kind, EventKind::LeaseExpired { .. })));
    assert!(trace.snapshot_at(trace.len()).holder.is_some());

    let mut longer = sc;
    longer.horizon = 100;
    let trace = run(&longer);
    assert_eq!(trace.lease_spans()[0].end, LeaseEnd::Expired);
    assert_eq!(trace.lease_spans()[0].to, 50);
    let exp: Vec<_> = trace
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::LeaseExpired { .. }))
        .map(|e| e.at)
        .collect();
    assert_eq!(exp, vec![50]);
}

#[test]
fn extend_failure_self_cancels() {
    let mut sc = Scenario::gc_pause();
    // A tries to extend after its pause instead of writing.
    sc.actors[0].script = vec![
        Step::Acquire { retry_every: 10 },
        Step::Work { ms: 10 },
        Step::Extend,
        Step::Debit {
            amount: 10,
            idempotency_key: None,
        },
    ];
    let trace = run(&sc.with_policy(FencingPolicy::Off));
    let failed = trace
        .events
        .iter()
        .find(|e| matches!(e.kind, EventKind::ExtendFailed { .. }))
        .expect("extend fails");
    assert_eq!(failed.at, 55);
    assert_eq!(
        failed.kind,
        EventKind::ExtendFailed {
            watchdog: false,
            lease_ended_at: Some(30)
        }
    );
    let n = narration_of(&trace, failed);
    assert!(n.contains("already ended at t=30"), "{n}");
    assert_eq!(failed.result_code(), "not_holder");
    assert!(!failed.snapshot.believers.contains(&"A".to_owned()));
    assert!(
        applied_by(&trace, "A").is_empty(),
        "a self-cancelled actor does not write"
    );
    assert_eq!(trace.summary.final_balance, 90);
}

// ---------------------------------------------------------------------------------------
// Scenario validation and serialization.
// ---------------------------------------------------------------------------------------

#[test]
fn validate_accepts_the_headline() {
    assert_eq!(Scenario::gc_pause().validate(), Ok(()));
    for p in FencingPolicy::ALL {
        assert_eq!(Scenario::gc_pause().with_policy(p).validate(), Ok(()));
    }
}

#[test]
fn validate_rejects_out_of_range_values() {
    let base = Scenario::gc_pause;

    let mut sc = base();
    sc.lease_ttl = 0;
    assert!(matches!(
        sc.validate(),
        Err(ScenarioError::OutOfRange {
            what: "lease_ttl",
            value: 0,
            ..
        })
    ));

    let mut sc = base();
    sc.lease_ttl = MAX_TIME + 1;
    assert!(matches!(
        sc.validate(),
        Err(ScenarioError::OutOfRange {
            what: "lease_ttl",
            ..
        })
    ));

    let mut sc = base();
    sc.horizon = 0;
    assert!(matches!(
        sc.validate(),
        Err(ScenarioError::OutOfRange {
            what: "horizon",
            ..
        })
    ));

    let mut sc = base();
    sc.first_fence = 0;
    assert!(matches!(
        sc.validate(),
        Err(ScenarioError::OutOfRange {
            what: "first_fence",
            ..
        })
    ));

    let mut sc = base();
    sc.actors.clear();
    assert_eq!(sc.validate(), Err(ScenarioError::NoActors));

    let mut sc = base();
    sc.actors[1].name = "A".to_owned();
    assert_eq!(
        sc.validate(),
        Err(ScenarioError::DuplicateActor("A".to_owned()))
    );

    let mut sc = base();
    sc.actors[1].name = "  ".to_owned();
    assert_eq!(sc.validate(), Err(ScenarioError::EmptyName));

    let mut sc = base();
    let template = sc.actors[0].clone();
    sc.actors = (0..=MAX_ACTORS)
        .map(|i| Actor {
            name: format!("P{i}"),
            ..template.clone()
        })
        .collect();
    assert_eq!(
        sc.validate(),
        Err(ScenarioError::TooManyActors(MAX_ACTORS + 1))
    );

    let mut sc = base();
    sc.actors[0].script = vec![Step::Work { ms: 1 }; MAX_STEPS + 1];
    assert_eq!(
        sc.validate(),
        Err(ScenarioError::ScriptTooLong {
            actor: "A".to_owned()
        })
    );

    let mut sc = base();
    sc.actors[0].script[0] = Step::Acquire { retry_every: 0 };
    assert!(matches!(
        sc.validate(),
        Err(ScenarioError::OutOfRange {
            what: "retry_every",
            ..
        })
    ));

    let mut sc = base();
    sc.actors[0].network_delay = MAX_TIME + 1;
    assert!(matches!(
        sc.validate(),
        Err(ScenarioError::OutOfRange {
            what: "network_delay",
            ..
        })
    ));

    let mut sc = base();
    sc.actors[0].pauses[0].duration = MAX_TIME + 1;
    assert!(matches!(
        sc.validate(),
        Err(ScenarioError::OutOfRange {
            what: "pause duration",
            ..
        })
    ));

    let mut sc = base();
    sc.actors[1].start_at = MAX_TIME + 1;
    assert!(matches!(
        sc.validate(),
        Err(ScenarioError::OutOfRange {
            what: "start_at",
            ..
        })
    ));

    let mut sc = base();
    sc.actors[0].script[3] = Step::Debit {
        amount: -2_000_000_000,
        idempotency_key: None,
    };
    assert!(matches!(
        sc.validate(),
        Err(ScenarioError::OutOfRange { what: "amount", .. })
    ));

    let mut sc = base();
    sc.initial_balance = i64::MIN;
    assert!(matches!(
        sc.validate(),
        Err(ScenarioError::OutOfRange {
            what: "initial_balance",
            ..
        })
    ));

    // Errors render as messages.
    let mut sc = base();
    sc.lease_ttl = 0;
    let msg = sc.validate().unwrap_err().to_string();
    assert!(msg.contains("lease_ttl"), "{msg}");

    // Boundaries are inclusive.
    let mut sc = base();
    sc.lease_ttl = MAX_TIME;
    sc.horizon = MAX_TIME;
    sc.actors[0].script[2] = Step::Work { ms: 0 };
    assert_eq!(sc.validate(), Ok(()));
}

#[test]
fn scenario_serde_round_trip() {
    let mut sc = Scenario::gc_pause().with_policy(FencingPolicy::SameEpoch);
    sc.actors[1].network_delay = 7;
    sc.actors[1].script.push(Step::CheckHeld);
    sc.actors[1].script.push(Step::Extend);
    sc.actors[1].script.push(Step::Debit {
        amount: 3,
        idempotency_key: Some("k".to_owned()),
    });
    let json = serde_json::to_string_pretty(&sc).unwrap();
    assert!(json.contains("\"same_epoch\""), "{json}");
    assert!(json.contains("\"acquire\""), "{json}");
    let back: Scenario = serde_json::from_str(&json).unwrap();
    assert_eq!(back, sc);
    assert_eq!(run(&back), run(&sc));

    // `pauses` and `network_delay` default when absent.
    let minimal = r#"{
        "title": "t", "resource": "r", "initial_balance": 5, "first_fence": 1,
        "lease_ttl": 10, "policy": "strict", "horizon": 50,
        "actors": [{"name": "A", "start_at": 0, "script": [{"acquire": {"retry_every": 1}}, "release"]}]
    }"#;
    let sc: Scenario = serde_json::from_str(minimal).unwrap();
    assert!(sc.actors[0].pauses.is_empty());
    assert_eq!(sc.actors[0].network_delay, 0);
    assert_eq!(
        sc.actors[0].script,
        vec![Step::Acquire { retry_every: 1 }, Step::Release]
    );
    assert_eq!(sc.validate(), Ok(()));

    // The whole trace round-trips, too.
    let trace = run(&Scenario::gc_pause());
    let back: Trace = serde_json::from_str(&serde_json::to_string(&trace).unwrap()).unwrap();
    assert_eq!(back, trace);
}

#[test]
fn policy_codes_round_trip() {
    for p in FencingPolicy::ALL {
        assert_eq!(FencingPolicy::from_code(p.code()), Some(p));
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            format!("\"{}\"", p.code())
        );
        assert_eq!(p.next().next().next(), p);
    }
    assert_eq!(FencingPolicy::from_code("nope"), None);
    assert_eq!(FencingPolicy::default(), FencingPolicy::Strict);
    assert!(!FencingPolicy::Off.checks_fence());
}

#[test]
fn run_is_deterministic_for_the_headline() {
    for p in FencingPolicy::ALL {
        let sc = Scenario::gc_pause().with_policy(p);
        assert_eq!(run(&sc), run(&sc));
    }
}

// ---------------------------------------------------------------------------------------
// Regressions: once-found engine bugs (double expiry, early wake-up), now fixed.
// ---------------------------------------------------------------------------------------

fn solo(script: Vec<Step>, pauses: Vec<Pause>) -> Scenario {
    Scenario {
        title: "solo".to_owned(),
        resource: KEY.to_owned(),
        initial_balance: 100,
        first_fence: 1,
        lease_ttl: 10,
        policy: FencingPolicy::Strict,
        actors: vec![Actor {
            name: "A".to_owned(),
            pauses,
            script,
            ..Actor::default()
        }],
        horizon: 100,
        ..Scenario::default()
    }
}

/// An extend in the same instant as the acquire (or a second extend in the same instant)
/// does not move `expires_at`, but still queues another expiry for the same (fence,
/// expires_at); `Sim::expire` does not remove the entry, so both expiries pass its guard
/// and the lease "expires" twice: two identical `LeaseExpired` events / lease-lane markers.
#[test]
fn bug_a_lease_expires_at_most_once() {
    let sc = solo(vec![Step::Acquire { retry_every: 1 }, Step::Extend], vec![]);
    sc.validate().unwrap();
    let trace = run(&sc);
    let expiries: Vec<_> = trace
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::LeaseExpired { .. }))
        .map(|e| (e.at, e.fence()))
        .collect();
    assert_eq!(expiries, vec![(10, Some(Fence(1)))]);
}

/// With overlapping pauses, the inner pause's end clears `ActorState::paused` and emits
/// `PauseEnded` ("A wakes up and carries on") although A is still frozen by the outer
/// pause (its steps are correctly deferred to t=50); the real wake-up at t=50 then emits
/// nothing, because `paused` is already false.
#[test]
fn bug_overlapping_pauses_wake_at_the_real_end() {
    let pauses = vec![
        Pause {
            start: 0,
            duration: 50,
        },
        Pause {
            start: 10,
            duration: 10,
        },
    ];
    let sc = solo(vec![Step::Acquire { retry_every: 1 }], pauses);
    sc.validate().unwrap();
    let trace = run(&sc);
    let acquired_at = trace
        .events
        .iter()
        .find(|e| matches!(e.kind, EventKind::Acquired { .. }))
        .map(|e| e.at);
    assert_eq!(
        acquired_at,
        Some(50),
        "steps are deferred to the outer pause's end"
    );
    let wakes: Vec<_> = trace
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::PauseEnded { .. }))
        .map(|e| e.at)
        .collect();
    assert_eq!(wakes, vec![50]);
}

// ---------------------------------------------------------------------------------------
// Verdicts of the headline (issue #9): late, out of order, duplicate.
// ---------------------------------------------------------------------------------------

#[test]
fn verdicts_headline_off_default() {
    let t = run(&Scenario::gc_pause().with_policy(FencingPolicy::Off));
    let s = &t.summary;
    assert_eq!(s.late_writes_accepted, 1);
    assert_eq!(s.out_of_order_writes, 1);
    assert_eq!(s.duplicate_runs, 1);
    assert_eq!(s.final_balance, 80);
    assert_eq!(s.last_write_fence, Some(Fence(33)));
    let last = t.writes.last().unwrap();
    assert_eq!(
        (last.request.writer.as_str(), last.request.fence),
        ("A", Some(Fence(33)))
    );
}

#[test]
fn verdicts_headline_strict_default() {
    let t = run(&Scenario::gc_pause().with_policy(FencingPolicy::Strict));
    let s = &t.summary;
    assert_eq!(s.final_balance, 90);
    assert_eq!(s.last_fence, Some(Fence(34)));
    assert_eq!(s.last_write_fence, Some(Fence(34)));
    assert_eq!(
        (
            s.late_writes_accepted,
            s.out_of_order_writes,
            s.duplicate_runs
        ),
        (0, 0, 0)
    );
    let a = applied_by(&t, "A");
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].result_code(), "stale_fence");
    assert_eq!(a[0].fence(), Some(Fence(33)));
}

/// A's pause ends at t=31, right after B was granted 34 (t=30) but before B's debit (t=35):
/// A's 33 reaches storage first, and a highest-token check has nothing to refuse it with.
#[test]
fn verdicts_headline_strict_late_write_before_the_new_token() {
    let sc = Scenario::gc_pause()
        .with_policy(FencingPolicy::Strict)
        .with_pause(
            0,
            Pause {
                start: 5,
                duration: 26,
            },
        );
    let t = run(&sc);
    let s = &t.summary;
    assert_eq!(s.late_writes_accepted, 1, "{s:?}");
    assert_eq!(s.duplicate_runs, 1, "{s:?}");
    assert_eq!(s.out_of_order_writes, 0, "{s:?}");
    assert_eq!(s.final_balance, 80);
    assert_eq!(s.rejected_writes, 0);
    let order: Vec<_> = t
        .writes
        .iter()
        .map(|w| (w.request.writer.as_str(), w.request.fence, w.accepted()))
        .collect();
    assert_eq!(
        order,
        vec![("A", Some(Fence(33)), true), ("B", Some(Fence(34)), true)]
    );
    let i = t
        .events
        .iter()
        .position(|e| e.is_late_write())
        .expect("A's late write");
    let e = &t.events[i];
    assert_eq!(e.actor.as_deref(), Some("A"));
    assert_eq!(e.fence(), Some(Fence(33)));
    match &e.kind {
        EventKind::WriteApplied {
            superseded_by,
            highest_accepted,
            result,
            ..
        } => {
            assert_eq!(result, &Ok(90));
            assert_eq!(
                superseded_by,
                &Some(Grant {
                    owner: "B".to_owned(),
                    fence: Fence(34)
                })
            );
            assert_eq!(*highest_accepted, None, "storage had seen no token yet");
        }
        other => panic!("unexpected {other:?}"),
    }
    let n = story::Story::of(&t).narration(i + 1);
    assert!(n.contains("has not seen it yet"), "{n}");
    let say = story::Story::of(&t).say(i + 1);
    assert!(
        say.contains("only once storage has seen 34") && say.contains("handoff barrier"),
        "{say}"
    );
    // B's later write with 34 is the second charge of the one job.
    let j = t
        .events
        .iter()
        .rposition(|e| matches!(e.kind, EventKind::WriteApplied { result: Ok(_), .. }))
        .unwrap();
    assert!(j > i);
    assert_eq!(t.events[j].actor.as_deref(), Some("B"));
    assert!(story::Story::of(&t).narration(j + 1).contains("twice"));
}

#[test]
fn out_of_range_error_shows_the_real_minimum() {
    let mut sc = Scenario::gc_pause();
    sc.actors[0].network_delay = MAX_TIME + 1;
    let err = sc.validate().unwrap_err();
    assert_eq!(
        err,
        ScenarioError::OutOfRange {
            what: "network_delay",
            value: MAX_TIME + 1,
            min: 0,
            max: MAX_TIME
        }
    );
    assert_eq!(
        err.to_string(),
        format!(
            "network_delay = {} is out of range (0..={MAX_TIME})",
            MAX_TIME + 1
        )
    );
    assert!(err.to_string().contains("(0..=600000)"), "{err}");

    // A minimum of 1 is shown as 1.
    let mut sc = Scenario::gc_pause();
    sc.lease_ttl = 0;
    assert!(sc
        .validate()
        .unwrap_err()
        .to_string()
        .contains("(1..=600000)"));

    // A request timeout must be at least 1 ms.
    let mut sc = Scenario::gc_pause();
    sc.actors[0].request_timeout = Some(0);
    let msg = sc.validate().unwrap_err().to_string();
    assert!(
        msg.contains("request_timeout = 0") && msg.contains("(1..="),
        "{msg}"
    );

    // An empty job label is refused.
    let mut sc = Scenario::gc_pause();
    sc.job = Some("  ".to_owned());
    assert_eq!(sc.validate(), Err(ScenarioError::BadJob));
}

// ---------------------------------------------------------------------------------------
// The core's error types are standard errors, so callers can box, chain and report them.
// ---------------------------------------------------------------------------------------

#[test]
fn core_errors_are_std_errors() {
    fn boxed(e: impl std::error::Error + Send + Sync + 'static) -> Box<dyn std::error::Error> {
        Box::new(e)
    }
    assert_eq!(boxed(LockError::NotHolder).to_string(), "not_holder");
    assert_eq!(boxed(WriteError::MissingFence).to_string(), "missing_fence");
    let e = boxed(ScenarioError::NoActors);
    assert_eq!(e.to_string(), "a scenario needs at least one actor");
    assert!(e.source().is_none());
}
