//! Property tests over random scenarios.
//!
//! Case count: every property below runs `CASES` = 10,000 random scenarios (one
//! `proptest!` block, `ProptestConfig { cases: 10_000, .. }`), so each invariant is
//! checked on 10,000 scenarios and the suite as a whole runs 7 × 10,000 = 70,000, plus
//! `DECK_CASES` = 5,000 perturbed deck scenarios checked against all invariants at once.
//! The policy-specific properties force their policy; the others draw it at random.
//!
//! Scenarios also draw the deck's extra machinery: the release mode, a failover, a clock
//! jump on the lock node, retries, barriers, side effects and renewing work. The single-lease
//! invariants are asserted for every scenario without a failover; with one, the lost leases
//! are modelled and `max_live_leases` must match the model.

use fencing_lab::core::deck::DECK;
use fencing_lab::core::{
    run, Actor, ClockJump, EventKind, Fence, FencingPolicy, Lease, LeaseEnd, Pause, ReleaseMode,
    Scenario, Step, Trace, WriteError, WriteRecord,
};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

const CASES: u32 = 10_000;
const DECK_CASES: u32 = 5_000;
const NAMES: [&str; 5] = ["A", "B", "C", "D", "E"];
const KEYS: [&str; 3] = ["k0", "k1", "k2"];

// ---------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (1u64..=30).prop_map(|retry_every| Step::Acquire { retry_every }),
        3 => (0u64..=40).prop_map(|ms| Step::Work { ms }),
        1 => Just(Step::CheckHeld),
        4 => (0i64..=50, prop::option::of(prop::sample::select(KEYS.to_vec()))).prop_map(|(amount, key)| {
            Step::Debit {
                amount,
                idempotency_key: key.map(str::to_owned),
            }
        }),
        1 => Just(Step::Extend),
        2 => Just(Step::Release),
        1 => Just(Step::Retry),
        1 => Just(Step::Barrier),
        1 => Just(Step::SideEffect { what: "charge card".to_owned() }),
        1 => (0u64..=60).prop_map(|ms| Step::WorkRenewing { ms }),
    ]
}

fn pause() -> impl Strategy<Value = Pause> {
    (0u64..=250, 0u64..=100).prop_map(|(start, duration)| Pause { start, duration })
}

/// An actor without its name (assigned by position).
fn actor() -> impl Strategy<Value = Actor> {
    (
        0u64..=120,
        prop::collection::vec(pause(), 0..=2),
        0u64..=60,
        // Most scripts start by taking the lock, so that the interesting paths are common.
        prop::bool::weighted(0.8),
        prop::collection::vec(step(), 0..=8),
    )
        .prop_map(
            |(start_at, pauses, network_delay, lead_acquire, mut script)| {
                if lead_acquire {
                    script.insert(0, Step::Acquire { retry_every: 10 });
                }
                Actor {
                    name: String::new(),
                    start_at,
                    pauses,
                    network_delay,
                    script,
                }
            },
        )
}

fn policy() -> impl Strategy<Value = FencingPolicy> {
    prop::sample::select(FencingPolicy::ALL.to_vec())
}

fn scenario() -> impl Strategy<Value = Scenario> {
    (
        prop::collection::vec(actor(), 2..=5),
        1u64..=100,
        1u64..=100,
        0i64..=1_000,
        policy(),
        250u64..=300,
        prop::sample::select(vec![ReleaseMode::CompareAndDelete, ReleaseMode::GetThenDel]),
        prop::option::weighted(0.2, 0u64..=250),
        prop::collection::vec(
            (0u64..=250, 1u64..=40).prop_map(|(at, by)| ClockJump { at, by }),
            0..=1,
        ),
        any::<u64>(),
    )
        .prop_map(
            |(
                mut actors,
                lease_ttl,
                first_fence,
                initial_balance,
                policy,
                horizon,
                release,
                failover_at,
                lock_clock_jumps,
                seed,
            )| {
                for (a, name) in actors.iter_mut().zip(NAMES) {
                    a.name = name.to_owned();
                }
                Scenario {
                    id: String::new(),
                    title: "random".to_owned(),
                    resource: "acct:1".to_owned(),
                    initial_balance,
                    first_fence,
                    lease_ttl,
                    policy,
                    actors,
                    horizon,
                    release,
                    failover_at,
                    lock_clock_jumps,
                    seed,
                }
            },
        )
}

/// A deck scenario under a random policy and seed, half the time with one actor's pause
/// moved anywhere: reaches the paths random scripts rarely hit (the unsafe DEL, a lost
/// lease, a barrier before a late publish) and their near misses.
fn deck_variant() -> impl Strategy<Value = Scenario> {
    (
        0..DECK.len(),
        policy(),
        any::<u64>(),
        prop::option::of((any::<prop::sample::Index>(), 0u64..=100, 0u64..=100)),
    )
        .prop_map(|(i, policy, seed, nudge)| {
            let mut sc = (DECK[i].build)().with_policy(policy);
            sc.seed = seed;
            if let Some((who, start, duration)) = nudge {
                let h = sc.horizon;
                let pause = Pause {
                    start: h * start / 200,
                    duration: h * duration / 200,
                };
                let actor = who.index(sc.actors.len());
                sc = sc.with_pause(actor, pause);
            }
            sc
        })
}

fn scenario_with(policy: FencingPolicy) -> impl Strategy<Value = Scenario> {
    scenario().prop_map(move |sc| sc.with_policy(policy))
}

// ---------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------

/// What reached the storage, in order: debits (from the write log) and epoch barriers
/// (which raise the high-water mark but are not debits, so only the events record them).
enum StorageOp<'a> {
    Write(&'a WriteRecord),
    Barrier(Fence, &'a Result<(), WriteError>),
}

fn storage_ops(trace: &Trace) -> Vec<StorageOp<'_>> {
    let mut writes = trace.writes.iter();
    trace
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::WriteApplied { .. } => Some(StorageOp::Write(writes.next().unwrap())),
            EventKind::BarrierSet { fence, result } => Some(StorageOp::Barrier(*fence, result)),
            _ => None,
        })
        .collect()
}

fn accepted_tokens(trace: &Trace) -> Vec<Fence> {
    trace
        .writes
        .iter()
        .filter(|w| w.accepted())
        .map(|w| w.request.fence.expect("the engine always sends a token"))
        .collect()
}

/// Strict: accepted tokens strictly increase; every rejection is justified.
fn check_strict(trace: &Trace) -> Result<(), TestCaseError> {
    let tokens = accepted_tokens(trace);
    for w in tokens.windows(2) {
        prop_assert!(
            w[0] < w[1],
            "strict accepted {} after {}: {:?}",
            w[1],
            w[0],
            tokens
        );
    }
    let mut high: Option<Fence> = None;
    let mut used: Vec<&str> = Vec::new();
    for op in storage_ops(trace) {
        let w = match op {
            StorageOp::Barrier(token, result) => {
                match result {
                    Ok(()) => {
                        prop_assert!(high.is_none_or(|h| token > h));
                        high = Some(token);
                    }
                    Err(WriteError::StaleFence { token: t, last }) => {
                        prop_assert_eq!(*t, token);
                        prop_assert_eq!(Some(*last), high);
                        prop_assert!(token <= *last);
                    }
                    Err(e) => prop_assert!(false, "unexpected barrier rejection: {e:?}"),
                }
                continue;
            }
            StorageOp::Write(w) => w,
        };
        let token = w.request.fence.unwrap();
        let key = w.request.idempotency_key.as_deref();
        match &w.result {
            Ok(()) => {
                prop_assert!(high.is_none_or(|h| token > h));
                prop_assert!(
                    key.is_none_or(|k| !used.contains(&k)),
                    "key {key:?} applied twice"
                );
                high = Some(token);
                used.extend(key);
            }
            Err(WriteError::StaleFence { token: t, last }) => {
                prop_assert_eq!(*t, token);
                prop_assert_eq!(Some(*last), high);
                prop_assert!(token <= *last);
            }
            // A fresh token may still carry an intent that already ran.
            Err(WriteError::DuplicateIntent { key: k }) => {
                prop_assert_eq!(Some(k.as_str()), key);
                prop_assert!(used.contains(&k.as_str()));
                prop_assert!(
                    high.is_none_or(|h| token > h),
                    "a stale token must fail as stale first"
                );
            }
            Err(e) => prop_assert!(false, "unexpected rejection under strict: {e:?}"),
        }
    }
    prop_assert_eq!(trace.summary.last_fence, high);
    Ok(())
}

/// SameEpoch: accepted tokens never decrease; duplicates are real duplicates.
fn check_same_epoch(trace: &Trace) -> Result<(), TestCaseError> {
    let tokens = accepted_tokens(trace);
    for w in tokens.windows(2) {
        prop_assert!(
            w[0] <= w[1],
            "same-epoch accepted {} after {}: {:?}",
            w[1],
            w[0],
            tokens
        );
    }
    let mut high: Option<Fence> = None;
    let mut used: Vec<&str> = Vec::new();
    for op in storage_ops(trace) {
        let w = match op {
            StorageOp::Barrier(token, result) => {
                match result {
                    Ok(()) => {
                        prop_assert!(high.is_none_or(|h| token >= h));
                        high = high.max(Some(token));
                    }
                    Err(WriteError::StaleFence { last, .. }) => {
                        prop_assert_eq!(Some(*last), high);
                        prop_assert!(token < *last);
                    }
                    Err(e) => prop_assert!(false, "unexpected barrier rejection: {e:?}"),
                }
                continue;
            }
            StorageOp::Write(w) => w,
        };
        let token = w.request.fence.unwrap();
        let key = w.request.idempotency_key.as_deref();
        match &w.result {
            Ok(()) => {
                prop_assert!(high.is_none_or(|h| token >= h));
                prop_assert!(
                    key.is_none_or(|k| !used.contains(&k)),
                    "key {key:?} applied twice"
                );
                high = Some(token);
                used.extend(key);
            }
            Err(WriteError::StaleFence { last, .. }) => {
                prop_assert_eq!(Some(*last), high);
                prop_assert!(token < *last);
            }
            Err(WriteError::DuplicateIntent { key: k }) => {
                prop_assert_eq!(Some(k.as_str()), key);
                prop_assert!(used.contains(&k.as_str()));
                prop_assert!(
                    high.is_none_or(|h| token >= h),
                    "a stale token must fail as stale first"
                );
            }
            Err(e) => prop_assert!(false, "unexpected rejection under same-epoch: {e:?}"),
        }
    }
    prop_assert_eq!(trace.summary.last_fence, high);
    Ok(())
}

/// The lock server holds at most one live lease at any instant, and every snapshot's holder
/// agrees with a model rebuilt from the lease events (acquire, extend, release, unsafe DEL,
/// clock jump, failover, expiry). Leases a failover lost are modelled too; without a
/// failover at most one lease is ever live and lease bands never overlap.
fn check_single_live_lease(trace: &Trace) -> Result<(), TestCaseError> {
    let sc = &trace.scenario;
    let mut model: Option<Lease> = None;
    let mut lost: Vec<Lease> = Vec::new();
    let mut max_live = 0;
    for e in &trace.events {
        match &e.kind {
            EventKind::Acquired { fence, expires_at } => {
                prop_assert!(
                    model.as_ref().is_none_or(|l| !l.is_live(e.at)),
                    "acquire at t={} while {:?} is live",
                    e.at,
                    model
                );
                prop_assert_eq!(*expires_at, e.at + sc.lease_ttl);
                model = Some(Lease {
                    owner: e.actor.clone().unwrap(),
                    fence: *fence,
                    expires_at: *expires_at,
                });
            }
            EventKind::Extended { fence, expires_at } => {
                let l = model.as_mut().expect("extend without a lease");
                prop_assert!(l.is_live(e.at), "extended a dead lease at t={}", e.at);
                prop_assert_eq!(l.fence, *fence);
                prop_assert_eq!(Some(&l.owner), e.actor.as_ref());
                prop_assert_eq!(*expires_at, e.at + sc.lease_ttl);
                l.expires_at = *expires_at;
            }
            EventKind::Released { fence } => {
                let l = model.take().expect("release without a lease");
                prop_assert!(l.is_live(e.at), "released a dead lease at t={}", e.at);
                prop_assert_eq!(l.fence, *fence);
                prop_assert_eq!(Some(&l.owner), e.actor.as_ref());
            }
            EventKind::DeletedOthersLease { owner, fence } => {
                prop_assert_eq!(sc.release, ReleaseMode::GetThenDel);
                let l = model.take().expect("DEL without a lease");
                prop_assert!(l.is_live(e.at), "deleted a dead lease at t={}", e.at);
                prop_assert_eq!(&l.owner, owner);
                prop_assert_eq!(l.fence, *fence);
                prop_assert_ne!(Some(owner), e.actor.as_ref());
            }
            EventKind::LockClockJumped { by } => {
                prop_assert!(sc
                    .lock_clock_jumps
                    .iter()
                    .any(|j| j.at == e.at && j.by == *by));
                if let Some(l) = model.as_mut().filter(|l| l.is_live(e.at)) {
                    l.expires_at = l.expires_at.saturating_sub(*by).max(e.at);
                }
            }
            EventKind::Failover { lost: gone } => {
                prop_assert_eq!(sc.failover_at, Some(e.at));
                let live: Vec<Lease> = model
                    .take()
                    .filter(|l| l.is_live(e.at))
                    .into_iter()
                    .collect();
                prop_assert_eq!(gone, &live);
                lost.extend(live);
            }
            EventKind::LeaseExpired { owner, fence } => {
                if let Some(i) = lost.iter().position(|l| l.fence == *fence) {
                    let l = lost.remove(i);
                    prop_assert_eq!(&l.owner, owner);
                    prop_assert_eq!(l.expires_at, e.at);
                } else {
                    let l = model.as_ref().expect("expiry without a lease");
                    prop_assert_eq!(&l.owner, owner);
                    prop_assert_eq!(l.fence, *fence);
                    prop_assert_eq!(l.expires_at, e.at);
                }
            }
            _ => {}
        }
        let expected = model.clone().filter(|l| l.is_live(e.at));
        prop_assert_eq!(
            &e.snapshot.holder,
            &expected,
            "holder at t={}: {}",
            e.at,
            e.narration
        );
        let lost_live: Vec<Lease> = lost.iter().filter(|l| l.is_live(e.at)).cloned().collect();
        prop_assert_eq!(&e.snapshot.lost_leases, &lost_live);
        max_live = max_live.max(usize::from(expected.is_some()) + lost_live.len());
    }
    prop_assert!(trace.summary.max_believers <= sc.actors.len());
    prop_assert_eq!(trace.summary.max_live_leases, max_live);
    if sc.failover_at.is_none() {
        prop_assert!(max_live <= 1, "two live leases without a failover");
    }

    // Lease bands, clipped to their actual end, never overlap (unless a failover lost one).
    let spans = trace.lease_spans();
    for s in &spans {
        prop_assert!(s.from <= s.to, "{s:?}");
        match s.end {
            LeaseEnd::Released => prop_assert!(s.to <= sc.horizon, "{s:?}"),
            LeaseEnd::Expired => {
                prop_assert!(s.to <= sc.horizon, "{s:?}");
                let expiry = EventKind::LeaseExpired {
                    owner: s.owner.clone(),
                    fence: s.fence,
                };
                let expired_then = trace
                    .events
                    .iter()
                    .any(|e| e.at == s.to && e.kind == expiry);
                prop_assert!(expired_then, "{s:?} has no expiry event");
            }
            LeaseEnd::Open => prop_assert!(s.to > sc.horizon, "{s:?}"),
        }
    }
    if sc.failover_at.is_none() {
        for w in spans.windows(2) {
            prop_assert!(
                w[0].to <= w[1].from,
                "overlapping leases {:?} and {:?}",
                w[0],
                w[1]
            );
            prop_assert!(
                w[0].end != LeaseEnd::Open,
                "an open lease is followed by {:?}",
                w[1]
            );
        }
    }
    Ok(())
}

/// Minted tokens never repeat and strictly increase in trace order, from `first_fence`.
fn check_minted_tokens(trace: &Trace) -> Result<(), TestCaseError> {
    let minted: Vec<Fence> = trace
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Acquired { fence, .. } => Some(fence),
            _ => None,
        })
        .collect();
    for w in minted.windows(2) {
        prop_assert!(w[0] < w[1], "minted {} after {}", w[1], w[0]);
    }
    let first = trace.scenario.first_fence;
    let expected: Vec<Fence> = (first..first + minted.len() as u64).map(Fence).collect();
    prop_assert_eq!(&minted, &expected);
    // Every token that reaches storage was minted.
    for w in &trace.writes {
        prop_assert!(minted.contains(&w.request.fence.unwrap()));
    }
    Ok(())
}

/// Balance conservation and per-record consistency.
fn check_balance(trace: &Trace) -> Result<(), TestCaseError> {
    let initial = trace.scenario.initial_balance;
    let mut balance = initial;
    for w in &trace.writes {
        if w.accepted() {
            balance -= w.request.amount;
        }
        prop_assert_eq!(w.balance_after, balance, "{:?}", w);
        prop_assert!(w.at <= trace.scenario.horizon);
    }
    let accepted_sum: i64 = trace
        .writes
        .iter()
        .filter(|w| w.accepted())
        .map(|w| w.request.amount)
        .sum();
    prop_assert_eq!(trace.summary.final_balance, initial - accepted_sum);
    prop_assert_eq!(trace.summary.final_balance, balance);
    prop_assert_eq!(trace.initial.balance, initial);
    prop_assert_eq!(trace.snapshot_at(trace.len()).balance, balance);
    // Stepping: the snapshot balance always matches the write log up to that step.
    for step in 0..=trace.len() {
        let expected = trace
            .writes_until(step)
            .last()
            .map_or(initial, |w| w.balance_after);
        prop_assert_eq!(trace.snapshot_at(step).balance, expected, "step {}", step);
    }
    prop_assert_eq!(trace.writes_until(trace.len()), &trace.writes[..]);
    Ok(())
}

/// Summary counters agree with the log; no stale write lands while fencing is on.
fn check_summary(trace: &Trace) -> Result<(), TestCaseError> {
    let s = &trace.summary;
    prop_assert_eq!(
        s.accepted_writes,
        trace.writes.iter().filter(|w| w.accepted()).count()
    );
    prop_assert_eq!(
        s.rejected_writes,
        trace.writes.iter().filter(|w| !w.accepted()).count()
    );
    // An acknowledged barrier is its generation's first write, even where storage ignores it.
    let mut high: Option<Fence> = None;
    let mut stale = 0;
    for op in storage_ops(trace) {
        match op {
            StorageOp::Write(w) if w.accepted() => {
                let f = w.request.fence.unwrap();
                if high.is_some_and(|h| f < h) {
                    stale += 1;
                }
                high = high.max(Some(f));
            }
            StorageOp::Barrier(f, Ok(())) => high = high.max(Some(f)),
            _ => {}
        }
    }
    prop_assert_eq!(s.stale_writes_accepted, stale);
    prop_assert_eq!(s.storage_safe(), stale == 0);
    let overtaken = trace
        .events
        .iter()
        .filter(|e| {
            matches!(
                e.kind,
                EventKind::WriteApplied {
                    overtaken: true,
                    ..
                }
            )
        })
        .count();
    prop_assert_eq!(
        overtaken,
        stale,
        "every overtaken marker is a counted stale write"
    );
    if trace.scenario.policy.checks_fence() {
        prop_assert_eq!(
            s.stale_writes_accepted,
            0,
            "{:?} let a stale write land",
            trace.scenario.policy
        );
    } else {
        prop_assert_eq!(s.last_fence, None);
    }
    prop_assert_eq!(
        s.last_write_fence,
        trace
            .writes
            .iter()
            .rev()
            .find(|w| w.accepted())
            .and_then(|w| w.request.fence)
    );
    // Time never goes backwards and nothing happens past the horizon.
    for w in trace.events.windows(2) {
        prop_assert!(w[0].at <= w[1].at);
    }
    prop_assert!(trace
        .events
        .iter()
        .all(|e| e.at <= trace.scenario.horizon && e.snapshot.at == e.at));
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, ..ProptestConfig::default() })]

    #[test]
    fn strict_accepts_strictly_increasing_tokens(sc in scenario_with(FencingPolicy::Strict)) {
        prop_assert_eq!(sc.validate(), Ok(()));
        check_strict(&run(&sc))?;
    }

    #[test]
    fn same_epoch_accepts_non_decreasing_tokens(sc in scenario_with(FencingPolicy::SameEpoch)) {
        prop_assert_eq!(sc.validate(), Ok(()));
        check_same_epoch(&run(&sc))?;
    }

    #[test]
    fn at_most_one_live_lease(sc in scenario()) {
        check_single_live_lease(&run(&sc))?;
    }

    #[test]
    fn minted_tokens_are_unique_and_increasing(sc in scenario()) {
        check_minted_tokens(&run(&sc))?;
    }

    #[test]
    fn balance_is_initial_minus_accepted_debits(sc in scenario()) {
        check_balance(&run(&sc))?;
    }

    #[test]
    fn summary_is_consistent_and_fencing_is_safe(sc in scenario()) {
        prop_assert_eq!(sc.validate(), Ok(()));
        check_summary(&run(&sc))?;
    }

    #[test]
    fn runs_are_deterministic(sc in scenario()) {
        let a = run(&sc);
        let b = run(&sc);
        prop_assert_eq!(&a, &b);
        // A scenario that went through JSON replays to the same trace.
        let json = serde_json::to_string(&sc).unwrap();
        let back: Scenario = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(&back, &sc);
        prop_assert_eq!(run(&back), a);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: DECK_CASES, ..ProptestConfig::default() })]

    #[test]
    fn deck_variants_keep_every_invariant(sc in deck_variant()) {
        prop_assert_eq!(sc.validate(), Ok(()));
        let trace = run(&sc);
        check_single_live_lease(&trace)?;
        check_minted_tokens(&trace)?;
        check_balance(&trace)?;
        check_summary(&trace)?;
        match sc.policy {
            FencingPolicy::Strict => check_strict(&trace)?,
            FencingPolicy::SameEpoch => check_same_epoch(&trace)?,
            FencingPolicy::Off => {}
        }
        prop_assert_eq!(run(&sc), trace);
    }
}

/// The generator is only as good as what it reaches: with a fixed seed, make sure a
/// decent share of scenarios hit each interesting path (so the properties above are
/// not vacuously true on scenarios where nobody ever contends).
#[test]
fn generator_reaches_the_interesting_paths() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;

    const N: usize = 2_000;
    let mut runner = TestRunner::deterministic();
    let strategy = scenario();
    let mut hits = [0usize; 14];
    for _ in 0..N {
        let sc = strategy.new_tree(&mut runner).unwrap().current();
        let checked = run(&sc.clone().with_policy(FencingPolicy::Strict));
        let off = run(&sc.with_policy(FencingPolicy::Off));
        let has = |t: &Trace, f: &dyn Fn(&EventKind) -> bool| t.events.iter().any(|e| f(&e.kind));
        let flags = [
            checked.summary.conflict(),
            off.summary.stale_writes_accepted > 0,
            checked
                .writes
                .iter()
                .any(|w| matches!(w.result, Err(WriteError::StaleFence { .. }))),
            checked
                .writes
                .iter()
                .any(|w| matches!(w.result, Err(WriteError::DuplicateIntent { .. }))),
            has(&checked, &|k| matches!(k, EventKind::Extended { .. })),
            has(&checked, &|k| matches!(k, EventKind::LeaseExpired { .. })),
            has(&checked, &|k| matches!(k, EventKind::Released { .. })),
            has(&checked, &|k| matches!(k, EventKind::ReleaseNoop)),
            has(&checked, &|k| {
                matches!(k, EventKind::GaveUp | EventKind::ExtendFailed)
            }),
            checked.summary.two_holders(),
            has(&checked, &|k| {
                matches!(k, EventKind::LockClockJumped { .. })
            }),
            has(&checked, &|k| {
                matches!(k, EventKind::BarrierSet { result: Ok(()), .. })
            }),
            checked.summary.unprotected_side_effects > 0,
            has(&checked, &|k| matches!(k, EventKind::Retried { .. })),
        ];
        for (h, f) in hits.iter_mut().zip(flags) {
            *h += usize::from(f);
        }
    }
    let names = [
        "conflict",
        "stale write lands with fencing off",
        "stale_fence rejection",
        "duplicate_intent rejection",
        "extend",
        "lease expiry",
        "release",
        "release no-op",
        "give up / self-cancel",
        "two live leases (failover)",
        "lock clock jump",
        "barrier",
        "unprotected side effect",
        "retry",
    ];
    for (name, h) in names.iter().zip(hits) {
        eprintln!("{name}: {h}/{N}");
        assert!(h * 50 >= N, "only {h}/{N} scenarios reach `{name}`");
    }
}

/// The deck variants reach what the random scripts rarely do.
#[test]
fn deck_variants_reach_the_deck_paths() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;

    const N: usize = 1_000;
    let mut runner = TestRunner::deterministic();
    let strategy = deck_variant();
    let mut hits = [0usize; 5];
    for _ in 0..N {
        let t = run(&strategy.new_tree(&mut runner).unwrap().current());
        let has = |f: &dyn Fn(&EventKind) -> bool| t.events.iter().any(|e| f(&e.kind));
        let flags = [
            has(&|k| matches!(k, EventKind::DeletedOthersLease { .. })),
            t.summary.two_holders(),
            has(&|k| matches!(k, EventKind::BarrierSet { .. })),
            t.summary.unprotected_side_effects > 0,
            has(&|k| *k == EventKind::ExtendFailed),
        ];
        for (h, f) in hits.iter_mut().zip(flags) {
            *h += usize::from(f);
        }
    }
    let names = [
        "unsafe DEL of another's lease",
        "two live leases",
        "barrier",
        "unprotected side effect",
        "renewal self-cancel",
    ];
    for (name, h) in names.iter().zip(hits) {
        eprintln!("{name}: {h}/{N}");
        assert!(h * 100 >= N, "only {h}/{N} deck variants reach `{name}`");
    }
}
