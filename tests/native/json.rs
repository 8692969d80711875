//! Recordings are read with serde's derives, the same ones that write them: every trace the
//! product can show reads back equal, and the page (`lab::read_recording`) says where
//! anything else goes wrong.

use std::collections::BTreeSet;

use fencing_lab::core::deck::{PARTITION_IN_FLIGHT, PARTITION_QUICK_TIMEOUT};
use fencing_lab::core::{
    run, Awareness, EventKind, ExpiryCause, FencingPolicy, Lane, LockCommand, NoopReason,
    PauseCause, ProviderOutcome, ReleaseMode, Scenario, SkipReason, Step, StorageCheck,
    TokenSource, Trace, WriteError, DECK,
};
use fencing_lab::lab::read_recording;

const OFF: &str = include_str!("../../assets/recordings/gc-pause-off.json");
const STRICT: &str = include_str!("../../assets/recordings/gc-pause-strict.json");

/// `text` read as a `T`.
fn read<T: serde::de::DeserializeOwned>(text: &str) -> serde_json::Result<T> {
    serde_json::from_str(text)
}

/// What the page says of `text` as a recording.
fn says(text: &str) -> String {
    read_recording(text).unwrap_err()
}

/// Every scenario the page can run: each deck entry under every fencing policy and storage
/// check, with each What if… choice (tokens, release, barrier), and the variants the
/// scenario tests build.
fn every_scenario() -> Vec<Scenario> {
    let mut bases = Vec::new();
    for e in DECK {
        let sc = (e.build)();
        bases.push(sc.clone());
        for t in TokenSource::CHOICES {
            if let Ok(lock) = sc.lock.with_tokens(t) {
                bases.push(Scenario { lock, ..sc.clone() });
            }
        }
        for r in ReleaseMode::ALL {
            bases.push(Scenario {
                release: r,
                ..sc.clone()
            });
        }
        bases.push(Scenario {
            skip_barrier: !sc.skip_barrier,
            ..sc.clone()
        });
    }
    bases.push(Scenario::row_lock_slow_job(&Scenario::row_lock()));
    bases.push(Scenario::drift_margin_pause_after_check(
        &Scenario::drift_margin(),
    ));
    bases.push(Scenario::partition_deadline());
    bases.push(Scenario::delayed_packet_timeout());
    // A call outside storage (no deck entry makes one since the handoff lost its card
    // charge to claim-row; a scenario from JSON still can).
    let mut charge = Scenario::handoff_barrier();
    charge.actors[0].script.insert(
        3,
        fencing_lab::core::Step::SideEffect {
            what: "charge the card".to_owned(),
        },
    );
    bases.push(charge);
    bases.push(Scenario::partition_with(PARTITION_QUICK_TIMEOUT, None));
    bases.push(Scenario::partition_with(
        PARTITION_QUICK_TIMEOUT,
        Some(PARTITION_IN_FLIGHT),
    ));
    let mut all = Vec::new();
    for sc in bases.into_iter().filter(|sc| sc.validate().is_ok()) {
        for p in FencingPolicy::ALL {
            for c in StorageCheck::ALL {
                let mut sc = sc.clone().with_policy(p);
                sc.check = c;
                if !all.contains(&sc) {
                    all.push(sc);
                }
            }
        }
    }
    all
}

/// The name serde writes for an event's kind: `"GaveUp"` or the key of `{"Acquired": …}`.
fn kind_name(kind: &EventKind) -> String {
    match serde_json::to_value(kind).unwrap() {
        serde_json::Value::String(s) => s,
        serde_json::Value::Object(m) => m.keys().next().unwrap().clone(),
        other => panic!("{other}"),
    }
}

#[test]
fn every_trace_the_page_can_show_reads_back_equal() {
    let scenarios = every_scenario();
    assert!(scenarios.len() > 300, "{}", scenarios.len());
    let mut kinds = BTreeSet::new();
    for sc in &scenarios {
        let t = run(sc);
        for text in [
            serde_json::to_string(&t).unwrap(),
            serde_json::to_string_pretty(&t).unwrap(),
        ] {
            let back: Trace = read(&text).unwrap_or_else(|e| panic!("{}: {e}", sc.id));
            assert_eq!(back, t, "{} {:?} {:?}", sc.id, sc.policy, sc.check);
        }
        let back: Scenario = read(&serde_json::to_string(sc).unwrap()).unwrap();
        assert_eq!(&back, sc);
        kinds.extend(t.events.iter().map(|e| kind_name(&e.kind)));
    }
    // With the few the deck never shows, every kind of event is read back.
    kinds.extend(rare_events().events.iter().map(|e| kind_name(&e.kind)));
    assert_eq!(kinds, EVENT_KINDS.iter().map(|k| k.to_string()).collect());
}

/// Every variant of `EventKind`, by the name serde writes.
const EVENT_KINDS: [&str; 34] = [
    "Acquired",
    "AcquireRefused",
    "LockWait",
    "ConnectionLost",
    "LeaseExpired",
    "PauseStarted",
    "PauseEnded",
    "Checked",
    "DeadlineChecked",
    "GaveUp",
    "WriteSent",
    "WriteTimedOut",
    "WriteApplied",
    "WriteSkipped",
    "Extended",
    "ExtendFailed",
    "Released",
    "ReleaseNoop",
    "LockValueRead",
    "DeletedOthersLease",
    "Retried",
    "LockClockJumped",
    "Failover",
    "StorageFailover",
    "BarrierSet",
    "SideEffect",
    "ProviderCall",
    "TokenTaken",
    "JobChecked",
    "ResumeRace",
    "LockUnanswered",
    "LockNoLeader",
    "LockQueued",
    "LockTimedOut",
];

/// A trace with the events, errors and extremes the deck never shows.
fn rare_events() -> Trace {
    let mut t = run(&Scenario::gc_pause());
    let template = t.events[0].clone();
    let fence = fencing_lab::core::Fence(u64::MAX);
    let kinds = [
        EventKind::LockWait { holder: "A".into() },
        EventKind::ConnectionLost,
        EventKind::Extended {
            fence,
            expires_at: 9,
            watchdog: Some(Some(4)),
            nodes: vec![0, 2],
        },
        EventKind::ExtendFailed {
            watchdog: true,
            lease_ended_at: Some(3),
        },
        EventKind::ReleaseNoop {
            via: ReleaseMode::Del,
            reason: NoopReason::OtherHolder {
                owner: "B".into(),
                fence,
            },
            deleted: vec![0, 2],
        },
        EventKind::Retried {
            fence: None,
            amount: -5,
            idempotency_key: Some("k\u{1F600}\"\n".into()),
        },
        EventKind::WriteApplied {
            fence: Some(fence),
            amount: i64::MIN,
            sent_at: 1,
            result: Err(WriteError::StaleSequencer {
                token: fence,
                live: None,
            }),
            superseded_by: None,
            highest_accepted: None,
            publish: Some("done".into()),
        },
        EventKind::BarrierSet {
            fence,
            result: Err(WriteError::DuplicateIntent {
                key: "k".into(),
                original_balance: -1,
            }),
        },
        EventKind::BarrierSet {
            fence,
            result: Err(WriteError::SessionTerminated),
        },
        EventKind::WriteSkipped {
            reason: SkipReason::NothingToRetry,
        },
        EventKind::LeaseExpired {
            owner: "A".into(),
            fence,
            cause: ExpiryCause::IdleTimeout,
            owner_knew: Awareness::Knows,
        },
    ];
    t.events = kinds
        .into_iter()
        .map(|kind| fencing_lab::core::TraceEvent {
            kind,
            lane: Lane::Actor(usize::MAX),
            ..template.clone()
        })
        .collect();
    t
}

#[test]
fn events_and_errors_the_deck_never_shows_read_back_equal() {
    let t = rare_events();
    let back: Trace = read(&serde_json::to_string(&t).unwrap()).unwrap();
    assert_eq!(back, t);
}

#[test]
fn every_unit_variant_reads_by_the_name_serde_writes() {
    fn check<T>(all: &[T])
    where
        T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
    {
        for v in all {
            let text = serde_json::to_string(v).unwrap();
            assert_eq!(&read::<T>(&text).unwrap(), v, "{text}");
        }
    }
    check(&FencingPolicy::ALL);
    check(&StorageCheck::ALL);
    check(&ReleaseMode::ALL);
    check(&[
        TokenSource::SameRedis,
        TokenSource::LockService,
        TokenSource::SeparateCounter,
        TokenSource::Counterfactual,
        TokenSource::RandomValue,
    ]);
    check(&[PauseCause::Gc, PauseCause::Stall]);
    check(&[Awareness::Paused, Awareness::Unaware, Awareness::Knows]);
    check(&[
        ExpiryCause::Ttl,
        ExpiryCause::ClockJump,
        ExpiryCause::LostInFailover,
        ExpiryCause::IdleTimeout,
    ]);
    check(&[SkipReason::NoToken, SkipReason::NothingToRetry]);
    check(&[
        ProviderOutcome::Charged,
        ProviderOutcome::Deduped,
        ProviderOutcome::NotCalled,
    ]);
    check(&[
        LockCommand::Acquire,
        LockCommand::Renew,
        LockCommand::Extend,
        LockCommand::CheckHeld,
        LockCommand::Release,
    ]);
    check(&[NoopReason::Expired, NoopReason::Lost, NoopReason::NeverHeld]);
    check(&[Lane::Lease, Lane::Storage, Lane::Actor(3)]);
    check(&[
        Step::Acquire { retry_every: 2 },
        Step::Work { ms: 1 },
        Step::CheckHeld,
        Step::CheckDeadline,
        Step::Debit {
            amount: -10,
            idempotency_key: None,
        },
        Step::Extend,
        Step::Release,
        Step::Retry,
        Step::WorkRenewing { ms: 3 },
        Step::Barrier,
        Step::SideEffect { what: "e".into() },
        Step::Publish { result: "r".into() },
        Step::CheckDone,
        Step::Claim { what: "c".into() },
        Step::ProviderCall {
            what: "p".into(),
            idempotency_key: "k".into(),
        },
    ]);
    check(&[Ok(()), Err(WriteError::MissingFence)]);
    // serde also reads a unit variant written as a one-key object with null.
    assert_eq!(read::<Lane>(r#"{"Lease": null}"#).unwrap(), Lane::Lease);
}

/// Where `file` has a value that `written` lacks or differs in.
fn differences(written: &serde_json::Value, file: &serde_json::Value, at: &str) -> Vec<String> {
    use serde_json::Value;
    match (written, file) {
        (Value::Object(w), Value::Object(f)) => f
            .iter()
            .flat_map(|(k, fv)| match w.get(k) {
                Some(wv) => differences(wv, fv, &format!("{at}.{k}")),
                None => vec![format!("{at}.{k} was dropped")],
            })
            .collect(),
        (Value::Array(w), Value::Array(f)) if w.len() == f.len() => w
            .iter()
            .zip(f)
            .enumerate()
            .flat_map(|(i, (wv, fv))| differences(wv, fv, &format!("{at}[{i}]")))
            .collect(),
        _ if written == file => Vec::new(),
        _ => vec![format!("{at}: {file} became {written}")],
    }
}

#[test]
fn both_recordings_read_and_pass_the_page_checks() {
    for (text, balance) in [(OFF, 80), (STRICT, 90)] {
        let t: Trace = read(text).unwrap();
        assert!(t.recorded.is_some());
        assert_eq!(t.summary.final_balance, balance);
        let checked = read_recording(text).unwrap();
        assert_eq!(checked, t);
        // Nothing in the file was lost or misread: written back, every value it has is
        // there unchanged (fields it predates took their defaults).
        let file: serde_json::Value = serde_json::from_str(text).unwrap();
        let again = serde_json::to_value(&t).unwrap();
        assert_eq!(differences(&again, &file, "$"), Vec::<String>::new());
    }
}

#[test]
fn absent_defaulted_and_optional_fields_read_as_serde_reads_them() {
    let minimal = r#"{
        "title": "t", "resource": "r", "initial_balance": 5, "first_fence": 1,
        "lease_ttl": 10, "policy": "strict", "horizon": 50, "unknown_key": [1, {"x": null}],
        "actors": [{"name": "A", "start_at": 0, "script": [{"acquire": {"retry_every": 1}}, "release"]}]
    }"#;
    let sc: Scenario = read(minimal).unwrap();
    assert_eq!(
        sc,
        Scenario {
            title: "t".into(),
            resource: "r".into(),
            initial_balance: 5,
            first_fence: 1,
            lease_ttl: 10,
            policy: FencingPolicy::Strict,
            horizon: 50,
            actors: vec![fencing_lab::core::Actor {
                name: "A".into(),
                script: vec![Step::Acquire { retry_every: 1 }, Step::Release],
                ..Default::default()
            }],
            ..Default::default()
        }
    );
    // Any `Option` field may be absent, as serde read it.
    let d: Step = read(r#"{"debit": {"amount": 3}}"#).unwrap();
    assert_eq!(
        d,
        Step::Debit {
            amount: 3,
            idempotency_key: None
        }
    );
}

#[test]
fn syntax_errors_say_line_and_column() {
    assert_eq!(
        says("{\"scenario\": "),
        "That is not a recorded trace: scenario: EOF while parsing a value at line 1 column 12."
    );
    assert_eq!(
        says("{\n  \"scenario\": 1,\n  \"b\": tru\n}"),
        "That is not a recorded trace: scenario: invalid type: integer `1`, expected struct Scenario at line 2 column 15."
    );
    let text = serde_json::to_string(&run(&Scenario::gc_pause())).unwrap();
    assert_eq!(
        says(&format!("{text} {{}}")),
        format!(
            "That is not a recorded trace: trailing characters at line 1 column {}.",
            text.len() + 2
        )
    );
}

#[test]
fn nesting_is_bounded() {
    // A hostile paste far deeper than the stack could take is refused, not a crash: where
    // a value is read, serde_json stops at 128 levels; an unknown key's value is skipped
    // without recursing.
    let deep = format!("{{\"scenario\": {{\"actors\": {}", "[".repeat(1_000_000));
    assert!(
        says(&deep).starts_with("That is not a recorded trace: scenario.actors"),
        "{}",
        says(&deep)
    );
    let hostile = "{\"scenario\":".repeat(150_000);
    assert_eq!(
        says(&hostile),
        "That is not a recorded trace: scenario.scenario: EOF while parsing a value at line 1 column 1800000."
    );
}

#[test]
fn shape_errors_say_the_path() {
    let mut trace = run(&Scenario::gc_pause());
    trace.recorded = Some(fencing_lab::core::Recording {
        systems: vec!["Redis 7.0.15".into()],
        timing: "1 scenario ms = 12.00 real ms".into(),
        notes: Vec::new(),
    });
    let shape = |v: &serde_json::Value| {
        let says = says(&v.to_string());
        let cut = says.rfind(" at line ").unwrap_or(says.len());
        says[..cut].to_owned()
    };
    let mut v = serde_json::to_value(&trace).unwrap();
    v["events"][3]["kind"] = serde_json::json!("Foo");
    assert_eq!(
        shape(&v),
        "That is not a recorded trace: events[3].kind: unknown variant `Foo`"
    );

    let mut v = serde_json::to_value(&trace).unwrap();
    v["summary"]
        .as_object_mut()
        .unwrap()
        .remove("final_balance");
    assert_eq!(
        shape(&v),
        "That is not a recorded trace: summary: missing field `final_balance`"
    );

    let mut v = serde_json::to_value(&trace).unwrap();
    let acquired = v["events"]
        .as_array()
        .unwrap()
        .iter()
        .position(|e| e["kind"].get("Acquired").is_some())
        .unwrap();
    v["events"][acquired]["kind"]["Acquired"]["fence"] = serde_json::json!("33");
    assert_eq!(
        shape(&v),
        format!("That is not a recorded trace: events[{acquired}].kind.Acquired.fence: invalid type: string \"33\", expected u64")
    );

    let mut v = serde_json::to_value(&trace).unwrap();
    v["scenario"]["first_fence"] = serde_json::json!(-1);
    assert_eq!(
        shape(&v),
        "That is not a recorded trace: scenario.first_fence: invalid value: integer `-1`, expected u64"
    );

    let mut v = serde_json::to_value(&trace).unwrap();
    v["scenario"]["actors"][1]["script"][0] = serde_json::json!("acquire");
    assert_eq!(
        shape(&v),
        "That is not a recorded trace: scenario.actors[1].script[0].acquire: invalid type: unit variant, expected struct variant"
    );
    assert_eq!(
        says("[1, 2]"),
        "That is not a recorded trace: [0]: invalid type: integer `1`, expected struct Scenario at line 1 column 2."
    );
}

#[test]
fn the_page_says_what_is_wrong_with_a_paste() {
    assert_eq!(
        says("{\"hello\": 1}"),
        "That is not a recorded trace: missing field `scenario` at line 1 column 12."
    );
    assert!(says("  ").starts_with("Paste or drop a recorded trace"));
    let big = " ".repeat(fencing_lab::lab::MAX_RECORDING) + "{}";
    assert_eq!(
        says(&format!("[{big}]")),
        "That recording is 2000 KB; the page reads up to 2000 KB."
    );
    // A simulated trace is valid JSON in the schema, but not a recording.
    let simulated = serde_json::to_string(&run(&Scenario::gc_pause())).unwrap();
    assert_eq!(
        says(&simulated),
        "That trace has no “recorded” field: it is not a recording from real servers."
    );
}
