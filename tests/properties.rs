//! Property tests over random scenarios.
//!
//! Case count: every property below runs `CASES` = 10,000 random scenarios (one
//! `proptest!` block, `ProptestConfig { cases: 10_000, .. }`), so each invariant is
//! checked on 10,000 scenarios and the suite as a whole runs 7 × 10,000 = 70,000.
//! The policy-specific properties force their policy; the others draw it at random.

use fencing_lab::core::{
    run, Actor, EventKind, Fence, FencingPolicy, Lease, LeaseEnd, Pause, Scenario, Step, Trace,
    WriteError,
};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

const CASES: u32 = 10_000;
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
    )
        .prop_map(
            |(mut actors, lease_ttl, first_fence, initial_balance, policy, horizon)| {
                for (a, name) in actors.iter_mut().zip(NAMES) {
                    a.name = name.to_owned();
                }
                Scenario {
                    title: "random".to_owned(),
                    resource: "acct:1".to_owned(),
                    initial_balance,
                    first_fence,
                    lease_ttl,
                    policy,
                    actors,
                    horizon,
                }
            },
        )
}

fn scenario_with(policy: FencingPolicy) -> impl Strategy<Value = Scenario> {
    scenario().prop_map(move |sc| sc.with_policy(policy))
}

// ---------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------

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
    for w in &trace.writes {
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
    for w in &trace.writes {
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

/// At most one live lease at any instant, and every snapshot's holder agrees with a
/// model rebuilt from the Acquired / Extended / Released events.
fn check_single_live_lease(trace: &Trace) -> Result<(), TestCaseError> {
    let sc = &trace.scenario;
    let mut model: Option<Lease> = None;
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
            EventKind::LeaseExpired { owner, fence } => {
                let l = model.as_ref().expect("expiry without a lease");
                prop_assert_eq!(&l.owner, owner);
                prop_assert_eq!(l.fence, *fence);
                prop_assert_eq!(l.expires_at, e.at);
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
    }
    prop_assert!(trace.summary.max_believers <= sc.actors.len());

    // Lease bands, clipped to their actual end, never overlap.
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
    let mut high: Option<Fence> = None;
    let mut stale = 0;
    for w in trace.writes.iter().filter(|w| w.accepted()) {
        let f = w.request.fence.unwrap();
        if high.is_some_and(|h| f < h) {
            stale += 1;
        }
        high = high.max(Some(f));
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
    let mut hits = [0usize; 9];
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
    ];
    for (name, h) in names.iter().zip(hits) {
        eprintln!("{name}: {h}/{N}");
        assert!(h * 50 >= N, "only {h}/{N} scenarios reach `{name}`");
    }
}
