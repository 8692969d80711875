//! `lock-delay`: Chubby's lock-delay narrows the window a lapsed lease leaves, but a pause
//! longer than TTL + lock-delay still lets the stale write land; the fence still refuses it.

use fencing_lab::core::deck::{self, LOCK_DELAY_SHORT_PAUSE};
use fencing_lab::core::story;
use fencing_lab::core::{
    run, Acquire, EventKind, Fence, FencingPolicy, LeaseLock, LockKind, Pause, Scenario, Trace,
    MAX_TIME,
};
use fencing_lab::share::{decode, encode};

use crate::common;
use common::{w, writes};

fn run_as(policy: FencingPolicy) -> Trace {
    run(&Scenario::lock_delay().with_policy(policy))
}

#[test]
fn the_lock_waits_out_the_delay_after_a_lapse_but_not_after_a_release() {
    let mut lock = LeaseLock::new(33).with_lock_delay(20);
    assert!(lock.acquire(0, "k", "A", 30).fence().is_some());
    // Expired at 30, held back until 50.
    assert_eq!(
        lock.acquire(30, "k", "B", 30),
        Acquire::Held {
            holder: "A".to_owned(),
            expires_at: 50
        }
    );
    assert!(lock.holder(40, "k").is_none(), "no lease is live meanwhile");
    assert!(lock.acquire(49, "k", "B", 30).fence().is_none());
    assert_eq!(lock.acquire(50, "k", "B", 30).fence(), Some(Fence(34)));
    // Released: no delay.
    assert!(lock.release(60, "k", "B").is_ok());
    assert_eq!(lock.acquire(60, "k", "C", 30).fence(), Some(Fence(35)));
    // Without a delay, the lock is free the moment the lease expires (Redis).
    let mut redis = LeaseLock::new(1);
    redis.acquire(0, "k", "A", 30);
    assert!(redis.acquire(30, "k", "B", 30).fence().is_some());
}

#[test]
fn a_pause_longer_than_ttl_plus_delay_still_lands_unfenced_and_is_refused_fenced() {
    let off = run_as(FencingPolicy::Off);
    assert_eq!(off.scenario.lock.lock_delay(), 20);
    let refused: Vec<u64> = off
        .events
        .iter()
        .filter(|e| {
            e.actor.as_deref() == Some("B") && matches!(e.kind, EventKind::AcquireRefused { .. })
        })
        .map(|e| e.at)
        .collect();
    assert_eq!(
        refused,
        [20, 30, 40],
        "refused while live, then twice by the delay"
    );
    let delayed = off
        .events
        .iter()
        .find(|e| e.at == 30 && matches!(e.kind, EventKind::AcquireRefused { .. }))
        .unwrap();
    assert!(delayed.snapshot.holder.is_none());
    let i = off
        .events
        .iter()
        .position(|e| std::ptr::eq(e, delayed))
        .unwrap();
    let words = story::Story::of(&off).narration(i + 1);
    assert!(
        words.contains("lock-delay keeps acct:1 from everyone until t=50"),
        "{words}"
    );
    assert!(story::Story::of(&off)
        .say(i + 1)
        .contains("cannot close it"));
    // A system that has a lock-delay (Chubby, Consul's sessions), with the scaling said.
    let setup = story::Story::of(&off).narration(0);
    assert!(
        setup.contains("20 ms lock-delay, as in Chubby")
            && setup.contains("Consul's session lock-delay is 15 s by default")
            // Review 2, N8: the one computed scale clause every lock service's setup has.
            && setup.contains("Times scaled: 30 ms here stands for 30 s."),
        "{setup}"
    );
    assert_eq!(writes(&off), [w(55, "B", 34, "ok"), w(65, "A", 33, "ok")]);
    assert_eq!(off.summary.final_balance, 80);
    assert_eq!(off.summary.late_writes_accepted, 1);
    assert_eq!(off.summary.duplicate_runs, 1);
    for policy in [FencingPolicy::Strict, FencingPolicy::SameEpoch] {
        let t = run_as(policy);
        assert_eq!(
            writes(&t),
            [w(55, "B", 34, "ok"), w(65, "A", 33, "stale_fence")],
            "{policy:?}"
        );
        assert_eq!(t.summary.final_balance, 90);
        assert_eq!(t.summary.last_fence, Some(Fence(34)));
        assert_eq!(t.summary.late_writes_accepted, 0);
        assert_eq!(
            story::outcome(&t),
            "A's 33 refused: stale_fence; last fence 34"
        );
    }
}

#[test]
fn the_delay_narrows_the_window() {
    let short = Pause {
        start: 5,
        duration: LOCK_DELAY_SHORT_PAUSE,
    };
    let with = run(&Scenario::lock_delay()
        .with_policy(FencingPolicy::Off)
        .with_pause(0, short));
    // A wakes at 45, before anyone else holds the lock: its write is not superseded, and B
    // finds the job done.
    assert_eq!(writes(&with), [w(45, "A", 33, "ok")]);
    assert_eq!(with.summary.final_balance, 90);
    assert_eq!(with.summary.late_writes_accepted, 0);
    assert!(
        with.events
            .iter()
            .any(|e| e.actor.as_deref() == Some("B")
                && e.kind == EventKind::JobChecked { done: true })
    );
    let without = run(&Scenario {
        lock: LockKind::SERVICE,
        ..Scenario::lock_delay()
            .with_policy(FencingPolicy::Off)
            .with_pause(0, short)
    });
    assert_eq!(
        writes(&without),
        [w(35, "B", 34, "ok"), w(45, "A", 33, "ok")]
    );
    assert_eq!(without.summary.final_balance, 80);
}

#[test]
fn notes_quote_the_runs() {
    let entry = deck::find("lock-delay").unwrap();
    let notes = (entry.notes)(&deck::runs(entry)).join("\n");
    for figure in [
        "20 ms",
        "t=50",
        "33",
        "34",
        "(90)",
        "(80)",
        "50 ms",
        "80, the job ran twice",
        "stale_fence (90)",
        "Redis has none",
    ] {
        assert!(notes.contains(figure), "{figure}: {notes}");
    }
    let mut sc = Scenario::lock_delay();
    sc.lock = sc.lock.with_lock_delay(10).unwrap();
    let runs = deck::Runs(FencingPolicy::ALL.map(|p| run(&sc.clone().with_policy(p))));
    let other = (entry.notes)(&runs).join("\n");
    assert!(
        other.contains("lock-delay of 10 ms") && other.contains("t=40"),
        "{other}"
    );
}

#[test]
fn the_lock_delay_is_in_the_link_and_bounded() {
    let mut sc = Scenario::lock_delay();
    assert!(
        !encode(&sc, 0).contains("lockdelay"),
        "the deck's own value"
    );
    sc.lock = sc.lock.with_lock_delay(35).unwrap();
    let hash = encode(&sc, 3);
    assert!(hash.contains("&lockdelay=35"), "{hash}");
    assert_eq!(decode(&hash).map(|v| v.scenario), Ok(sc));
    // Only a lock service has one: Redis grants the moment the key expires.
    assert_eq!(
        decode("#s=gc-pause&lockdelay=20").unwrap_err().to_string(),
        "Redis has no lock-delay: a lock service (tokens from etcd / ZooKeeper) has one"
    );
    let etcd = decode("#s=gc-pause&tokens=lock_service&lockdelay=20").unwrap();
    assert_eq!(etcd.scenario.lock.lock_delay(), 20);
    assert_eq!(
        decode(&format!("#s=lock-delay&lockdelay={}", MAX_TIME + 1))
            .unwrap_err()
            .to_string(),
        "Lock-delay must be between 0 ms and 10 minutes (600001 ms is too long)"
    );
    assert_eq!(
        decode("#s=lock-delay&lockdelay=soon")
            .unwrap_err()
            .to_string(),
        "Lock-delay must be between 0 ms and 10 minutes (“soon” is not a whole number)"
    );
}
