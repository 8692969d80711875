//! The page's JSON reader (`core::json`): it reads back exactly what serde writes for every
//! trace the product can show, and says where anything else goes wrong.

use std::collections::BTreeSet;

use fencing_lab::core::deck::{PARTITION_IN_FLIGHT, PARTITION_QUICK_TIMEOUT};
use fencing_lab::core::json::{parse, read, Json, JsonError, MAX_DEPTH};
use fencing_lab::core::{
    run, Awareness, EventKind, ExpiryCause, FencingPolicy, Lane, LockCommand, NoopReason,
    PauseCause, ProviderOutcome, ReleaseMode, Scenario, SkipReason, Step, StorageCheck,
    TokenSource, Trace, WriteError, DECK,
};
use fencing_lab::lab::read_recording;

const OFF: &str = include_str!("../assets/recordings/gc-pause-off.json");
const STRICT: &str = include_str!("../assets/recordings/gc-pause-strict.json");

/// The error message for `text` read as a `T`.
fn error<T: fencing_lab::core::json::FromJson + std::fmt::Debug>(text: &str) -> String {
    read::<T>(text).unwrap_err().to_string()
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
            bases.push(Scenario {
                token_source: t,
                ..sc.clone()
            });
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
    bases.push(Scenario::drift_margin_long_job(&Scenario::drift_margin()));
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
const EVENT_KINDS: [&str; 31] = [
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
    "BarrierSet",
    "SideEffect",
    "ProviderCall",
    "TokenTaken",
    "JobChecked",
    "ResumeRace",
    "LockUnanswered",
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
        T: serde::Serialize + fencing_lab::core::json::FromJson + PartialEq + std::fmt::Debug,
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
    assert_eq!(read::<Lane>(r#"{"Lease": null}"#), Ok(Lane::Lease));
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
fn values_parse_exactly() {
    assert_eq!(read::<u64>("18446744073709551615"), Ok(u64::MAX));
    assert_eq!(read::<i64>("-9223372036854775808"), Ok(i64::MIN));
    assert_eq!(
        read::<String>(r#""a\"b\\c\/d\b\f\n\r\t\u00e9\u20AC\ud83d\ude00 é😀""#),
        Ok("a\"b\\c/d\u{8}\u{c}\n\r\t\u{e9}\u{20ac}\u{1F600} é😀".to_owned())
    );
    assert_eq!(
        parse(" [true, false, null, -0.5e+3, {}, [], \"\"] \n"),
        Ok(Json::Array(vec![
            Json::Bool(true),
            Json::Bool(false),
            Json::Null,
            Json::Number("-0.5e+3".into()),
            Json::Object(vec![]),
            Json::Array(vec![]),
            Json::String(String::new()),
        ]))
    );
    assert_eq!(read::<Option<Option<u64>>>("null"), Ok(None));
    assert_eq!(
        read::<Vec<Vec<usize>>>("[[0, 1], []]"),
        Ok(vec![vec![0, 1], vec![]])
    );
}

#[test]
fn syntax_errors_say_line_and_column() {
    let syntax = |text: &str| parse(text).unwrap_err().to_string();
    assert_eq!(
        syntax("{\"scenario\": "),
        "line 1, column 14: expected a value, found the end"
    );
    assert_eq!(
        syntax("{\n  \"a\": 1,\n  \"b\": tru\n}"),
        "line 3, column 8: expected a value, found `t`"
    );
    assert_eq!(
        syntax("[1 2]"),
        "line 1, column 4: expected `,` or `]`, found `2`"
    );
    assert_eq!(
        syntax("{\"a\" 1}"),
        "line 1, column 6: expected `:`, found `1`"
    );
    assert_eq!(
        syntax("{a: 1}"),
        "line 1, column 2: expected a key in double quotes, found `a`"
    );
    assert_eq!(
        syntax("[1,]"),
        "line 1, column 4: expected a value, found `]`"
    );
    assert_eq!(
        syntax("{} {}"),
        "line 1, column 4: expected the end of the text, found `{`"
    );
    assert_eq!(
        syntax("[01]"),
        "line 1, column 3: expected `,` or `]`, found `1`"
    );
    assert_eq!(
        syntax("-"),
        "line 1, column 2: expected a digit, found the end"
    );
    assert_eq!(
        syntax("1.e5"),
        "line 1, column 3: expected a digit, found `e`"
    );
    // Columns count characters, not bytes.
    assert_eq!(
        syntax("[\"é😀\" x]"),
        "line 1, column 7: expected `,` or `]`, found `x`"
    );
    assert_eq!(
        syntax("\"tab\there\""),
        "line 1, column 5: expected a control character to be escaped, found U+0009"
    );
    assert_eq!(
        syntax("\"open"),
        "line 1, column 6: expected `\"` to close the string, found the end"
    );
}

#[test]
fn bad_escapes_are_refused_where_they_are() {
    let syntax = |text: &str| parse(text).unwrap_err().to_string();
    assert_eq!(
        syntax(r#"["\x"]"#),
        r#"line 1, column 4: expected an escape (\n, \", \u00e9, …), found `x`"#
    );
    assert_eq!(
        syntax(r#""\u12g4""#),
        r#"line 1, column 3: expected four hex digits in `\uXXXX`, found `u`"#
    );
    assert_eq!(
        syntax(r#""\u+123""#),
        r#"line 1, column 3: expected four hex digits in `\uXXXX`, found `u`"#
    );
    // A surrogate pair must be whole: high, then low.
    assert_eq!(
        syntax(r#""ab\ud83d""#),
        r#"line 1, column 10: expected a low surrogate (`\uDC00`–`\uDFFF`) after a high one, found `"`"#
    );
    assert_eq!(
        syntax(r#""\ud83d\u0041""#),
        r#"line 1, column 8: expected a low surrogate (`\uDC00`–`\uDFFF`) after a high one, found `\`"#
    );
    assert_eq!(
        syntax(r#""\ude00""#),
        r#"line 1, column 2: expected a high surrogate (`\uD800`–`\uDBFF`) before a low one, found `\`"#
    );
}

#[test]
fn nesting_is_bounded() {
    let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    assert!(parse(&deep(MAX_DEPTH)).is_ok());
    assert_eq!(
        parse(&deep(MAX_DEPTH + 1)).unwrap_err().to_string(),
        "line 1, column 129: nested more than 128 deep, found `[`"
    );
    // A hostile paste far deeper than the stack could take is refused, not a crash.
    let hostile = "{\"a\":".repeat(1_000_000);
    assert!(parse(&hostile)
        .unwrap_err()
        .to_string()
        .ends_with("nested more than 128 deep, found `{`"));
}

#[test]
fn shape_errors_say_the_path() {
    let trace = run(&Scenario::gc_pause());
    let mut v = serde_json::to_value(&trace).unwrap();
    v["events"][3]["kind"] = serde_json::json!("Foo");
    assert_eq!(
        error::<Trace>(&v.to_string()),
        "events[3].kind: unknown variant `Foo`"
    );

    let mut v = serde_json::to_value(&trace).unwrap();
    v["summary"]
        .as_object_mut()
        .unwrap()
        .remove("final_balance");
    assert_eq!(
        error::<Trace>(&v.to_string()),
        "summary: missing field `final_balance`"
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
        error::<Trace>(&v.to_string()),
        format!("events[{acquired}].kind.Acquired.fence: expected an integer, found a string")
    );

    let mut v = serde_json::to_value(&trace).unwrap();
    v["scenario"]["actors"][1]["script"][0] = serde_json::json!("acquire");
    assert_eq!(
        error::<Trace>(&v.to_string()),
        "scenario.actors[1].script[0].acquire: expected a value, not a unit variant"
    );

    let mut v = serde_json::to_value(&trace).unwrap();
    v["scenario"]["policy"] = serde_json::json!({"strict": 1});
    assert_eq!(
        error::<Trace>(&v.to_string()),
        "scenario.policy.strict: expected null (a unit variant), found 1"
    );

    assert_eq!(
        error::<Trace>(r#"{"hello": 1}"#),
        "missing field `scenario`"
    );
    assert_eq!(
        error::<Trace>("[1, 2]"),
        "expected an object, found an array"
    );
    assert_eq!(
        error::<Vec<u64>>("[1, 2.5]"),
        "[1]: expected an integer, found 2.5"
    );
    assert_eq!(
        error::<Step>(r#"{"work": {"ms": 1}, "extend": null}"#),
        "expected a variant name or an object with one key, found an object"
    );
    assert_eq!(
        error::<Step>(r#"{"work": {"ms": 1, "ms": 2}}"#),
        "work: duplicate field `ms`"
    );
    assert_eq!(
        error::<Result<(), WriteError>>(r#"{"Maybe": null}"#),
        "unknown variant `Maybe`"
    );
    assert_eq!(error::<bool>("1"), "expected true or false, found 1");
    assert_eq!(error::<String>("null"), "expected a string, found null");
}

#[test]
fn integers_beyond_their_type_are_refused() {
    assert_eq!(
        error::<u64>("18446744073709551616"),
        "18446744073709551616 is out of range for u64"
    );
    assert_eq!(error::<u64>("-1"), "-1 is out of range for u64");
    assert_eq!(
        error::<i64>("9223372036854775808"),
        "9223372036854775808 is out of range for i64"
    );
    assert_eq!(error::<u64>("1e3"), "expected an integer, found 1e3");
    let mut v = serde_json::to_value(run(&Scenario::gc_pause())).unwrap();
    v["scenario"]["first_fence"] = serde_json::json!(1);
    let huge = v.to_string().replacen(
        "\"first_fence\":1",
        "\"first_fence\":99999999999999999999999",
        1,
    );
    assert_eq!(
        error::<Trace>(&huge),
        "scenario.first_fence: 99999999999999999999999 is out of range for u64"
    );
}

#[test]
fn the_page_says_what_is_wrong_with_a_paste() {
    let says = |text: &str| read_recording(text).unwrap_err();
    assert_eq!(
        says("{\"scenario\": "),
        "That is not a recorded trace: line 1, column 13: expected a value, found the end."
    );
    assert_eq!(
        says("{\"hello\": 1}"),
        "That is not a recorded trace: missing field `scenario`."
    );
    let bad: JsonError = read::<Trace>("{\"scenario\": 3}").unwrap_err();
    assert_eq!(
        says("{\"scenario\": 3}"),
        format!("That is not a recorded trace: {bad}.")
    );
}
