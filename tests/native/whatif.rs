//! The what-if controls: each changes the run the way the real system would, and each
//! survives the shareable URL.

use fencing_lab::core::{
    run, story, EventKind, Fault, FaultAt, FencingPolicy, LockKind, Millis, ReleaseMode, Scenario,
    TokenSource,
};
use fencing_lab::lab::{Lab, Param, ScenarioEdit};

/// The edit that sets `sc`'s lock failover (or restart) to happen at `at` with `lag`, or
/// adds one.
fn crash(sc: &Scenario, at: Millis, lag: Option<Millis>) -> ScenarioEdit {
    let index = sc.faults.iter().position(|f| f.fault.is_crash());
    let like = index.map_or(Fault::Failover { lag }, |i| sc.faults[i].fault);
    ScenarioEdit::Fault {
        index: index.unwrap_or(sc.faults.len()),
        fault: Some(FaultAt {
            at,
            fault: like.with_lag(lag),
        }),
    }
}

/// The edit that takes `sc`'s lock failover away.
fn no_crash(sc: &Scenario) -> ScenarioEdit {
    let index = sc.faults.iter().position(|f| f.fault.is_crash());
    ScenarioEdit::Fault {
        index: index.expect("a failover to take away"),
        fault: None,
    }
}
use fencing_lab::share::{decode, encode};

fn outcomes(sc: &Scenario) -> Vec<(i64, usize, usize)> {
    FencingPolicy::ALL
        .iter()
        .map(|p| {
            let t = run(&sc.clone().with_policy(*p));
            let s = &t.summary;
            (s.final_balance, s.late_writes_accepted, s.max_believers)
        })
        .collect()
}

#[test]
fn release_modes_on_the_unsafe_release_scenario() {
    let get_del = Scenario::unsafe_release();
    assert_eq!(get_del.release, ReleaseMode::GetThenDel);
    let deleted = |sc: &Scenario| {
        run(sc)
            .events
            .iter()
            .any(|e| matches!(e.kind, EventKind::DeletedOthersLease { .. }))
    };
    assert!(deleted(&get_del), "A's late DEL deletes B's lease");
    assert_eq!(outcomes(&get_del)[0], (80, 1, 2));
    // Compare-and-delete and a plain DEL both release at t=5, before A's pause at t=6: no
    // gap for the pause to land in, so nobody's lease is deleted and nobody overlaps.
    for mode in [ReleaseMode::CompareAndDelete, ReleaseMode::Del] {
        let sc = Scenario {
            release: mode,
            ..Scenario::unsafe_release()
        };
        assert!(!deleted(&sc), "{mode:?}");
        assert!(outcomes(&sc).iter().all(|o| *o == (90, 0, 1)), "{mode:?}");
    }
    // A plain DEL after A's lease ran out deletes whoever holds it now.
    let mut late = Scenario {
        release: ReleaseMode::Del,
        ..Scenario::unsafe_release()
    };
    late.actors[0].pauses[0].start = 5;
    let t = run(&late);
    let del = t
        .events
        .iter()
        .position(|e| matches!(e.kind, EventKind::DeletedOthersLease { .. }))
        .expect("the plain DEL deletes B's lease");
    let words = story::Story::of(&t).narration(del + 1);
    assert!(words.contains("without checking whose it is"), "{words}");
    assert!(!words.contains("compare-and-delete"), "{words}");
}

#[test]
fn without_the_barrier_the_late_result_lands_under_every_policy() {
    let with = Scenario::handoff_barrier();
    let without = Scenario {
        skip_barrier: true,
        ..Scenario::handoff_barrier()
    };
    let same = |sc: &Scenario| run(&sc.clone().with_policy(FencingPolicy::SameEpoch));
    assert_eq!(same(&with).summary.late_writes_accepted, 0);
    let t = same(&without);
    assert_eq!(
        t.summary.late_writes_accepted, 1,
        "A's 41 reaches the row first"
    );
    assert_eq!(t.summary.duplicate_runs, 1);
    assert!(!t
        .events
        .iter()
        .any(|e| matches!(e.kind, EventKind::BarrierSet { .. })));
    assert!(story::outcome(&t).starts_with("duplicate publish"));
}

#[test]
fn failover_off_or_from_a_lock_service_loses_nothing() {
    let mut never = Scenario::redis_failover();
    never.set_crash_at(None, None);
    let etcd = Scenario {
        lock: LockKind::SERVICE,
        ..Scenario::redis_failover()
    };
    assert_eq!(outcomes(&Scenario::redis_failover())[2], (80, 1, 2));
    for sc in [never, etcd] {
        assert!(outcomes(&sc).iter().all(|o| *o == (90, 0, 1)));
    }
    let mut later = Scenario::redis_failover();
    later.set_crash_at(Some(40), None);
    let t = run(&later);
    assert_eq!(
        t.summary.max_live_leases, 1,
        "A released at 17: nothing live to lose at 40"
    );
}

#[test]
fn every_knob_survives_the_url() {
    let mut lab = Lab::new(Scenario::handoff_barrier());
    lab.update(ScenarioEdit::Barrier(false).into());
    lab.update(ScenarioEdit::Release(ReleaseMode::Del).into());
    let hash = encode(lab.scenario(), 3);
    assert!(
        hash.contains("&release=del") && hash.contains("&barrier=off"),
        "{hash}"
    );
    assert_eq!(&decode(&hash).unwrap().scenario, lab.scenario());

    let mut lab = Lab::new(Scenario::redis_failover());
    lab.update(crash(lab.scenario(), 12, None).into());
    lab.update(ScenarioEdit::Tokens(TokenSource::LockService).into());
    let hash = encode(lab.scenario(), 0);
    assert!(
        hash.contains("&faults=failover.12.cut") && hash.contains("&tokens=lock_service"),
        "{hash}"
    );
    assert_eq!(&decode(&hash).unwrap().scenario, lab.scenario());
    lab.update(no_crash(lab.scenario()).into());
    let hash = encode(lab.scenario(), 0);
    assert!(hash.contains("&faults=none"), "{hash}");
    assert_eq!(decode(&hash).unwrap().scenario.failover_at(), None);

    // Out of range or unknown: a message, and the last good state stays.
    lab.update(crash(lab.scenario(), 9_999, None).into());
    assert!(lab.error().unwrap_or("").contains("must come by"));
    assert_eq!(lab.scenario().failover_at(), None);
    for (bad, why) in [
        ("#s=redis-failover&failover=900", "must come by"),
        (
            "#s=redis-failover&failover=soon",
            "“soon” is not a whole number",
        ),
        ("#s=unsafe-release&release=yolo", "release must be"),
        ("#s=handoff-barrier&barrier=maybe", "barrier must be"),
    ] {
        let e = decode(bad).expect_err(bad).to_string();
        assert!(e.contains(why), "{bad}: {e}");
    }
}

/// Replica lag: the promoted replica has every write made at least `lag` ms before the
/// failover (t=5). A's SET at t=0 is on it with a lag up to 5 ms, and lost with more.
#[test]
fn replica_lag_decides_whether_the_failover_loses_the_lease() {
    let lagging = |lag| {
        let mut sc = Scenario::redis_failover();
        sc.set_crash_lag(lag);
        sc
    };
    for lag in [Some(0), Some(5)] {
        let sc = lagging(lag);
        assert!(
            outcomes(&sc).iter().all(|o| *o == (90, 0, 1)),
            "lag {lag:?}: A keeps its lease, B waits and finds the job done"
        );
        let t = run(&sc);
        let failover = t
            .events
            .iter()
            .position(|e| matches!(e.kind, EventKind::Failover { .. }))
            .unwrap();
        let EventKind::Failover {
            lost,
            next_fence,
            rolled_back,
        } = &t.events[failover].kind
        else {
            unreachable!()
        };
        assert!(lost.is_empty() && !rolled_back);
        assert_eq!(next_fence.0, 34, "the INCR reached the replica too");
        let words = story::Story::of(&t).narration(failover + 1);
        assert!(
            words.contains("5 ms behind") || words.contains("0 ms behind"),
            "{words}"
        );
        assert!(words.contains("had reached it"), "{words}");
        assert!(story::Story::of(&t)
            .say(failover + 1)
            .contains("does not make Redis strongly consistent"));
    }
    for lag in [None, Some(6), Some(10)] {
        let sc = lagging(lag);
        assert_eq!(
            outcomes(&sc),
            outcomes(&Scenario::redis_failover()),
            "lag {lag:?}"
        );
        let t = run(&sc);
        assert!(
            t.summary.two_holders(),
            "lag {lag:?}: the lock is granted twice"
        );
        if lag.is_some() {
            let i = t
                .events
                .iter()
                .position(|e| matches!(e.kind, EventKind::Failover { .. }))
                .unwrap();
            let words = story::Story::of(&t).narration(i + 1);
            assert!(words.contains("had not reached it yet"), "{words}");
        }
    }
    // A release that has not reached the replica is undone by the failover too.
    let mut late = Scenario::redis_failover();
    late.set_crash_at(Some(20), None);
    late.set_crash_lag(Some(10));
    let t = run(&late);
    assert_eq!(
        t.snapshot_at(
            t.events
                .iter()
                .position(|e| matches!(e.kind, EventKind::Failover { .. }))
                .unwrap()
                + 1
        )
        .holder
        .as_ref()
        .map(|l| l.owner.as_str()),
        Some("A"),
        "A released at 17, but the replica, 10 ms behind, still has A's key"
    );
    let i = t
        .events
        .iter()
        .position(|e| matches!(e.kind, EventKind::Failover { .. }))
        .unwrap();
    let words = story::Story::of(&t).narration(i + 1);
    assert!(
        words.contains("key is back") && words.contains("no longer believes"),
        "{words}"
    );
    assert!(story::Story::of(&t)
        .say(i + 1)
        .contains("nobody believes in"));
    // And the link keeps the lag.
    let mut lab = Lab::new(Scenario::redis_failover());
    lab.update(crash(lab.scenario(), 5, Some(3)).into());
    let hash = encode(lab.scenario(), 0);
    assert!(hash.contains("&faults=failover.5.3"), "{hash}");
    assert_eq!(&decode(&hash).unwrap().scenario, lab.scenario());
    lab.update(crash(lab.scenario(), 5, None).into());
    assert_eq!(
        decode(&encode(lab.scenario(), 0))
            .unwrap()
            .scenario
            .replication_lag(),
        None
    );
    assert!(decode("#s=redis-failover&lag=soon").is_err());
}

/// One set of rules: an edit the lab refuses, a link refuses with the same words; an edit
/// the lab makes, its link carries back exactly.
#[test]
fn the_lab_and_the_link_follow_the_same_rules() {
    use fencing_lab::core::{deck, Pause};
    let late = Pause {
        start: 90,
        duration: 50,
    };
    for (id, edit, link) in [
        (
            "gc-pause",
            ScenarioEdit::Pause {
                actor: 0,
                pause: Some(late),
            },
            "pause.A=90,50",
        ),
        (
            "redis-failover",
            crash(&Scenario::redis_failover(), 900, None),
            "faults=failover.900.cut",
        ),
        (
            "clock-jump",
            ScenarioEdit::Tokens(TokenSource::SameRedis),
            "tokens=same_redis",
        ),
        (
            "partition",
            ScenarioEdit::Fault {
                index: 0,
                fault: Some(FaultAt::cut_from_lock(
                    fencing_lab::core::Node::Client(0),
                    90,
                    110,
                )),
            },
            "faults=partition.90.110.A.lock",
        ),
        (
            "gc-pause",
            ScenarioEdit::Fault {
                index: 0,
                fault: Some(FaultAt {
                    at: 40,
                    fault: Fault::StorageFailover { lag: 600_001 },
                }),
            },
            "faults=storage.40.600001",
        ),
    ] {
        let mut lab = Lab::new(deck::find(id).map(|e| (e.build)()).unwrap());
        let before = lab.scenario().clone();
        lab.update(edit.into());
        let said = lab.error().unwrap_or_default().to_lowercase();
        let linked = decode(&format!("#s={id}&{link}")).unwrap_err().to_string();
        assert_eq!(said, format!("{}.", linked.to_lowercase()), "{id}: {link}");
        assert_eq!(lab.scenario(), &before, "{id}: the last good state stays");
    }
    let mut lab = Lab::new(Scenario::redis_failover());
    for edit in [
        ScenarioEdit::Clients(3),
        ScenarioEdit::Pause {
            actor: 2,
            pause: Some(Pause {
                start: 50,
                duration: 10,
            }),
        },
        ScenarioEdit::Delay { actor: 1, delay: 4 },
        crash(&Scenario::redis_failover(), 5, Some(3)),
        ScenarioEdit::Release(ReleaseMode::Del),
        ScenarioEdit::Policy(FencingPolicy::Off),
    ] {
        lab.update(edit.into());
        assert_eq!(lab.error(), None, "{edit:?}");
        let hash = encode(lab.scenario(), 0);
        // A fault's edit is carried by the one key for faults.
        let link = match edit.link(lab.scenario()) {
            None => "faults=failover.5.3".to_owned(),
            Some((key, value)) => key + "=" + &value,
        };
        assert!(hash.contains(&link), "{hash} says {link}");
        assert_eq!(&decode(&hash).unwrap().scenario, lab.scenario(), "{hash}");
    }
}

/// A deck entry as built.
fn entry(id: &str) -> Scenario {
    fencing_lab::core::deck::find(id)
        .map(|e| (e.build)())
        .unwrap_or_else(|| panic!("no {id}"))
}

/// The label the page gives a typed field, in its own words: the panel's from its view
/// model, What if…'s from its source (the shell is wasm only), each without its " (ms)".
fn field_label(sc: &Scenario, param: Param, actor: Option<usize>) -> String {
    use fencing_lab::view::panels::{params, FieldGroup};
    let model = params(sc, Some(sc));
    let fields = model.groups.iter().flat_map(|g| match g {
        FieldGroup::Ttl(f) | FieldGroup::Delay { field: f, .. } => vec![f],
        FieldGroup::Pause { start, length, .. } => vec![start, length],
    });
    if let Some(f) = fields
        .into_iter()
        .find(|f| f.param == param && f.actor == actor)
    {
        return f.label.trim_end_matches(" (ms)").to_owned();
    }
    let source = include_str!("../../src/ui/whatif.rs");
    let at = source
        .find(&format!("param=Param::{param:?}"))
        .unwrap_or_else(|| panic!("What if… has no {param:?} field"));
    let aria = &source[..at][source[..at].rfind("aria=\"").expect("its aria-label") + 6..];
    aria[..aria.find(" (ms)\"").expect("a label in ms")].to_owned()
}

/// The words a message may not hold: Rust's, not a user's.
const RUST: [&str; 6] = ["..=", "Some(", "Err(", "Ok(", "{", "}"];

/// Every typed field, at every edge of its range and with every kind of bad text: a value
/// inside is taken, and anything else is refused with one sentence that names the field
/// as the page labels it, says the range in ms / s / minutes and what was wrong, and keeps
/// the last good run.
#[test]
fn every_field_says_its_range_in_its_own_words() {
    use fencing_lab::core::MAX_TIME;
    use fencing_lab::lab::{Msg, Setting};
    for param in Param::ALL {
        let (id, actor) = match param {
            Param::Ttl | Param::PauseStart | Param::PauseLength => ("gc-pause", Some(0)),
            Param::Delay => ("delayed-packet", Some(0)),
            Param::LockRtt => ("cross-region", None),
        };
        let actor = actor.filter(|_| param != Param::Ttl);
        let sc = entry(id);
        let label = field_label(&sc, param, actor);
        let bound = param.setting().bound();
        let pause = sc.actors[0].pauses.first().copied();
        let max = match param {
            Param::PauseStart => sc.horizon - pause.unwrap().duration,
            Param::PauseLength => sc.horizon - pause.unwrap().start,
            _ => bound.max,
        };
        let human = |ms: u64| {
            if ms == MAX_TIME {
                "10 minutes".to_owned()
            } else {
                format!("{ms} ms")
            }
        };
        let range = format!(
            "{label} must be between {} and {} (",
            human(bound.min),
            human(max)
        );
        let (low, high) = match param.setting() {
            Setting::PauseStart => ("too early", "too late"),
            _ => ("too short", "too long"),
        };
        let typed = |text: &str| {
            let mut lab = Lab::new(sc.clone());
            lab.update(Msg::Field {
                param,
                actor,
                text: text.to_owned(),
            });
            lab
        };
        for good in [bound.min, max] {
            let lab = typed(&good.to_string());
            assert_eq!(lab.error(), None, "{label} {good}");
            assert_eq!(param.value(lab.scenario(), actor), Some(good), "{label}");
        }
        let mut bad = vec![
            (format!("{}", max + 1), format!("{} ms is {high}", max + 1)),
            ("2.5".to_owned(), "“2.5” is not a whole number".to_owned()),
            ("-5".to_owned(), "-5 is negative".to_owned()),
            (
                "99999999999999999999".to_owned(),
                format!("9999999999999999… ms is {high}"),
            ),
        ];
        if bound.min > 0 {
            bad.push((
                format!("{}", bound.min - 1),
                format!("{} ms is {low}", bound.min - 1),
            ));
        }
        // An empty What if… box unsets its time; an empty panel field has no value.
        match param {
            Param::LockRtt => {
                assert_eq!(typed(" ").error(), None, "{label} empty");
            }
            _ => bad.push((String::new(), "the value is empty".to_owned())),
        }
        for (text, why) in bad {
            let lab = typed(&text);
            let said = lab
                .error()
                .unwrap_or_else(|| panic!("{label} took “{text}”"));
            assert!(said.starts_with(&range), "{label} “{text}”: {said}");
            assert!(
                said.contains(&format!("({why}")),
                "{label} “{text}”: {said}"
            );
            assert!(!RUST.iter().any(|r| said.contains(r)), "{said}");
            assert_eq!(
                lab.scenario(),
                &sc,
                "{label} “{text}”: the last good state stays"
            );
        }
    }
    // The issue's own cases, word for word.
    let ttl = |text: &str| {
        let mut lab = Lab::new(entry("gc-pause"));
        let text = text.to_owned();
        lab.update(Msg::Field {
            param: Param::Ttl,
            actor: None,
            text,
        });
        lab.error().map(str::to_owned)
    };
    assert_eq!(
        ttl("-5").as_deref(),
        Some("Lease TTL must be between 1 ms and 10 minutes (-5 is negative).")
    );
    assert_eq!(
        ttl("0").as_deref(),
        Some("Lease TTL must be between 1 ms and 10 minutes (0 ms is too short).")
    );
    // A row lock's TTL is its idle timeout, and says so.
    let mut row = Lab::new(entry("row-lock"));
    row.update(Msg::Field {
        param: Param::Ttl,
        actor: None,
        text: "0".into(),
    });
    assert_eq!(
        row.error(),
        Some("Idle timeout must be between 1 ms and 10 minutes (0 ms is too short).")
    );
    // A pause's end is the timeline's: its fields say so.
    let mut lab = Lab::new(entry("gc-pause"));
    lab.update(Msg::Field {
        param: Param::PauseLength,
        actor: Some(0),
        text: "500".into(),
    });
    assert_eq!(
        lab.error(),
        Some(
            "A pause length must be between 1 ms and 95 ms (500 ms is too long; \
             A's pause must end by t=100 ms, the end of the timeline)."
        )
    );
}

/// What a What if… fault field does with `text`: the edit it reads, or its refusal shown.
fn type_fault(lab: &mut Lab, index: usize, field: &str, text: &str) {
    use fencing_lab::lab::Msg;
    let edit = ScenarioEdit::fault_field(lab.scenario(), index, field, text);
    lab.update(edit.map_or_else(Msg::Refuse, Msg::Edit));
}

/// The text a What if… fault field gets in [`every_kind_of_fault_is_added_edited_and_removed`],
/// and the link's item the fault then is.
/// A kind's link name, each field's text, and the link's item.
type FaultEdits = (
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static str,
);

const FAULT_EDITS: [FaultEdits; 5] = [
    ("failover", &[("at", "20"), ("lag", "3")], "failover.20.3"),
    ("restart", &[("at", "20"), ("lag", "7")], "restart.20.7"),
    (
        "partition",
        &[("at", "10"), ("until", "30"), ("a", "B"), ("b", "lock")],
        "partition.10.30.B.lock",
    ),
    (
        "clock",
        &[("at", "30"), ("node", "0"), ("by", "5")],
        "clock.30.0.5",
    ),
    ("storage", &[("at", "45"), ("lag", "15")], "storage.45.15"),
];

/// What if… → Faults: the headline can be given every kind of fault, each of its fields set
/// from the field's own text, carried by the link's `faults=`, and taken away again.
#[test]
fn every_kind_of_fault_is_added_edited_and_removed() {
    use fencing_lab::core::fault::SHAPES;
    use fencing_lab::lab::fault_fields;
    let base = Scenario::gc_pause();
    assert!(base.faults.is_empty());
    for shape in &SHAPES {
        let (_, edits, item) = FAULT_EDITS
            .iter()
            .find(|(code, ..)| *code == shape.code)
            .unwrap_or_else(|| panic!("no edits for {shape:?}"));
        let mut lab = Lab::new(base.clone());
        lab.update(ScenarioEdit::add_fault(&base, shape).unwrap().into());
        assert_eq!(lab.error(), None, "{shape:?}");
        assert_eq!(lab.scenario().faults[0].fault.shape(), shape);
        let fields = fault_fields(lab.scenario(), 0);
        let names: Vec<&str> = fields.iter().map(|f| f.name).collect();
        let typed: Vec<&str> = edits.iter().map(|(name, _)| *name).collect();
        assert_eq!(names, typed, "{shape:?}: every field is edited");
        assert_eq!(fields[0].label, format!("{} at", shape.words));
        for (name, text) in *edits {
            type_fault(&mut lab, 0, name, text);
            assert_eq!(lab.error(), None, "{shape:?} {name}={text}");
            let now = fault_fields(lab.scenario(), 0);
            let shown = &now.iter().find(|f| f.name == *name).unwrap().text;
            assert_eq!(shown, text, "{shape:?} {name}");
        }
        let hash = encode(lab.scenario(), 0);
        assert!(hash.contains(&format!("&faults={item}&")), "{hash}");
        assert_eq!(&decode(&hash).unwrap().scenario, lab.scenario());
        lab.update(
            ScenarioEdit::Fault {
                index: 0,
                fault: None,
            }
            .into(),
        );
        assert_eq!(lab.scenario(), &base, "{shape:?} taken away");
        assert!(!encode(lab.scenario(), 0).contains("faults="));
    }
}

/// A storage failover added to the headline from What if…, its standby 15 ms behind at
/// t=45: B's acknowledged debit (and its 34) is gone, so fencing on lets A's stale 33 in,
/// and with fencing off the balance is 90 where it was 80.
#[test]
fn a_storage_failover_on_the_headline_changes_its_run() {
    use fencing_lab::core::fault::shape_named;
    let with = |sc: &Scenario, p| run(&sc.clone().with_policy(p)).summary;
    let mut lab = Lab::new(Scenario::gc_pause());
    let (off, on) = (FencingPolicy::Off, FencingPolicy::Strict);
    let before = (with(lab.scenario(), off), with(lab.scenario(), on));
    let storage = shape_named("storage").unwrap();
    lab.update(
        ScenarioEdit::add_fault(lab.scenario(), storage)
            .unwrap()
            .into(),
    );
    for (field, text) in [("at", "45"), ("lag", "15")] {
        type_fault(&mut lab, 0, field, text);
    }
    let after = (with(lab.scenario(), off), with(lab.scenario(), on));
    assert_eq!((before.0.final_balance, after.0.final_balance), (80, 90));
    let late = |s: &fencing_lab::core::Summary| s.late_writes_accepted;
    assert_eq!((late(&before.1), late(&after.1)), (0, 1), "A's 33 is in");
}

/// A fault's field refuses what its range does not hold, in its label's words, and a fault
/// the scenario cannot hold is refused in the scenario's; the last good run stays.
#[test]
fn a_fault_field_refuses_in_its_own_words() {
    use fencing_lab::core::fault::{shape_named, ValueKind, SHAPES};
    use fencing_lab::lab::fault_fields;
    let typed = |sc: &Scenario, field: &str, text: &str| {
        let mut lab = Lab::new(sc.clone());
        type_fault(&mut lab, 0, field, text);
        assert_eq!(
            lab.scenario(),
            sc,
            "{field}={text}: the last good state stays"
        );
        lab.error().map(str::to_owned)
    };
    let storage = entry("storage-failover");
    assert_eq!(
        typed(&storage, "lag", "-3").as_deref(),
        Some("Storage failover lag must be between 0 ms and 10 minutes (-3 is negative).")
    );
    assert_eq!(
        typed(&storage, "at", "150").as_deref(),
        Some(
            "Storage failover at must be between 0 ms and 100 ms (150 ms is too late; \
             the storage failover must come by t=100 ms, the end of the timeline)."
        )
    );
    // Every number of every kind, past each end and as bad text.
    let base = Scenario::gc_pause();
    for shape in &SHAPES {
        let sc = ScenarioEdit::add_fault(&base, shape)
            .and_then(|e| e.apply(&base))
            .unwrap();
        for f in fault_fields(&sc, 0) {
            // A number's range is its kind's row's; a pick has none.
            let row = shape.fields.iter().find(|x| x.name == f.name);
            let Some(range) = row.map_or(Some(shape.at), |x| x.range) else {
                assert_eq!(f.least, 0, "{}: a pick", f.label);
                continue;
            };
            // The input steps no lower than the row's least (a clock jump's `by`: 1 ms).
            assert_eq!(f.least, range.least, "{}", f.label);
            let max = if f.kind == ValueKind::Moment {
                sc.horizon
            } else {
                fencing_lab::core::MAX_TIME
            };
            let mut bad = vec![(max + 1).to_string(), "-5".into(), "2.5".into()];
            if range.least > 0 {
                bad.push((range.least - 1).to_string());
            }
            for text in bad {
                let said = typed(&sc, f.name, &text).unwrap_or_else(|| panic!("{text}"));
                let range = format!("{} must be between ", f.label);
                assert!(said.starts_with(&range), "{said}");
                assert!(!RUST.iter().any(|r| said.contains(r)), "{said}");
            }
        }
    }
    // The scenario's own rules: one lock failover, and a partition that heals after it
    // starts.
    let failover = shape_named("failover").unwrap();
    let mut lab = Lab::new(entry("redis-failover"));
    let before = lab.scenario().clone();
    lab.update(ScenarioEdit::add_fault(&before, failover).unwrap().into());
    assert_eq!(
        lab.error(),
        Some("Not applied: the lock server fails over or restarts once.")
    );
    assert_eq!(lab.scenario(), &before);
    let partition = entry("partition");
    assert_eq!(
        typed(&partition, "at", "70").as_deref(),
        Some("Not applied: the partition must end after it starts (from t=70 to t=65).")
    );
    // A design without a kind: neither offered nor added.
    let row = entry("row-lock");
    let storage = shape_named("storage").unwrap();
    assert!(!fencing_lab::lab::fault_applies(&row, storage));
    assert!(ScenarioEdit::add_fault(&row, storage).is_err());
}

/// A fault's selects offer what the design has, in its words: a Redis's one server, a
/// lock service and the member each client talks to, Redlock's five nodes numbered from 1.
#[test]
fn a_faults_choices_are_the_designs_own() {
    use fencing_lab::lab::fault_fields;
    let choices = |id: &str, field: &str| {
        let sc = entry(id);
        let fields = fault_fields(&sc, 0);
        let f = fields.iter().find(|f| f.name == field).expect(field);
        (f.text.clone(), f.options.clone())
    };
    let pair = |v: &str, w: &str| (v.to_owned(), w.to_owned());
    let (now, cut) = choices("partition", "b");
    assert_eq!(now, "lock");
    assert_eq!(
        cut,
        [
            pair("A", "A"),
            pair("B", "B"),
            pair("lock", "the lock server")
        ]
    );
    let (now, cut) = choices("raft-partition", "a");
    assert_eq!(now, "member-A");
    assert!(cut.contains(&pair("member-B", "B's lock-service member")));
    assert!(cut.contains(&pair("lock", "the lock service")));
    let (now, nodes) = choices("clock-jump", "node");
    assert_eq!(now, "2");
    assert_eq!(
        nodes.iter().map(|(_, w)| w.as_str()).collect::<Vec<_>>(),
        ["node 1", "node 2", "node 3", "node 4", "node 5"]
    );
}

/// A lock service's failover shows no replica lag: its new leader has every acknowledged
/// write (a majority had it), so the field would change nothing. A Redis failover keeps it.
#[test]
fn a_lock_service_failover_has_no_replica_lag_to_edit() {
    use fencing_lab::core::fault::shape_named;
    use fencing_lab::lab::fault_fields;
    let failover = shape_named("failover").unwrap();
    let names = |id: &str| {
        let base = entry(id);
        let sc = match base.faults.iter().position(|f| f.fault.is_crash()) {
            Some(_) => base,
            None => {
                let mut lab = Lab::new(base.clone());
                lab.update(ScenarioEdit::add_fault(&base, failover).unwrap().into());
                lab.scenario().clone()
            }
        };
        let i = sc.faults.iter().position(|f| f.fault.is_crash()).unwrap();
        let fields = fault_fields(&sc, i);
        fields.iter().map(|f| f.name).collect::<Vec<_>>()
    };
    assert_eq!(names("redis-failover"), ["at", "lag"]);
    assert_eq!(names("raft-partition"), ["at"]);
}
