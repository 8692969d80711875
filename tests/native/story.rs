//! The words (issue #9, "Trustworthy story"): every narration and "Say:" line is checked
//! against the facts of its own step, for every deck entry under every policy, and for
//! variants of the deck with one actor's pause moved across the timeline.

use fencing_lab::core::deck::{self, DECK};
use fencing_lab::core::story;
use fencing_lab::core::{
    run, Awareness, EventKind, ExpiryCause, FencingPolicy, Pause, PauseCause, ReleaseMode,
    Scenario, Trace, WriteError,
};
use serde_json::Value;

/// Every deck entry under every policy.
fn deck_runs() -> Vec<Trace> {
    DECK.iter()
        .flat_map(|e| FencingPolicy::ALL.map(|p| run(&(e.build)().with_policy(p))))
        .collect()
}

/// The deck runs, plus each entry with its first actor's (or a paused actor's) pause moved
/// over a coarse grid: reaches near misses the hand-placed pauses do not.
fn all_runs() -> Vec<Trace> {
    let mut out = deck_runs();
    for e in DECK {
        let base = (e.build)();
        let Some(actor) = base.actors.iter().position(|a| !a.pauses.is_empty()) else {
            continue;
        };
        let h = base.horizon;
        for start in (0..8).map(|i| h * i / 10) {
            for duration in [h / 20, h / 4, h / 2] {
                let sc = base.clone().with_pause(actor, Pause { start, duration });
                if sc.validate().is_err() {
                    continue;
                }
                for p in FencingPolicy::ALL {
                    out.push(run(&sc.clone().with_policy(p)));
                }
            }
        }
    }
    out
}

/// (event step, narration, say) for every event of a run, step 0 included.
fn lines(t: &Trace) -> Vec<(usize, String, String)> {
    let steps = story::Steps::of(t);
    (0..=t.len())
        .map(|s| {
            // A run of identical events is one story step: each event gets its words.
            let shown = s.checked_sub(1).map_or(0, |i| steps.showing(i));
            (
                s,
                story::Story::of(t).narration(shown),
                story::Story::of(t).say(shown),
            )
        })
        .collect()
}

fn whole_words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
}

/// Every number that follows "token " (any case) in `text`.
fn tokens_named(text: &str) -> Vec<u64> {
    let lower = text.to_lowercase();
    lower
        .match_indices("token ")
        .filter_map(|(i, m)| {
            let digits: String = lower[i + m.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        })
        .collect()
}

/// Every token-valued field anywhere in a JSON value (fences, marks, grants, leases).
fn collect_fences(v: &Value, out: &mut Vec<u64>) {
    const KEYS: [&str; 7] = [
        "fence",
        "next_fence",
        "last_fence",
        "last_write_fence",
        "highest_accepted",
        "token",
        "last",
    ];
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                if KEYS.contains(&k.as_str()) {
                    if let Some(n) = v.as_u64() {
                        out.push(n);
                    }
                }
                collect_fences(v, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|v| collect_fences(v, out)),
        _ => {}
    }
}

/// The tokens the facts up to and including `step` mention.
fn fences_known_at(t: &Trace, step: usize) -> Vec<u64> {
    let mut out = Vec::new();
    collect_fences(&serde_json::to_value(&t.initial).unwrap(), &mut out);
    for e in &t.events[..step.min(t.len())] {
        collect_fences(&serde_json::to_value(e).unwrap(), &mut out);
    }
    out
}

fn who(t: &Trace) -> String {
    format!("{} under {:?}", t.scenario.id, t.scenario.policy)
}

// (a)
#[test]
fn every_step_has_a_narration_and_a_say_line() {
    for t in all_runs() {
        for (step, n, s) in lines(&t) {
            assert!(
                !n.trim().is_empty(),
                "{} step {step}: no narration",
                who(&t)
            );
            assert!(!s.trim().is_empty(), "{} step {step}: no Say line", who(&t));
            if step > 0 {
                assert!(n.starts_with("t="), "{} step {step}: {n}", who(&t));
                assert!(!story::label(&t.events[step - 1]).is_empty());
            }
        }
        assert!(!story::outcome(&t).is_empty());
    }
}

// (b)
#[test]
fn the_words_name_only_actors_of_the_scenario_and_tokens_of_the_facts() {
    let letters = ["A", "B", "C", "D", "E"];
    for t in all_runs() {
        let actors: Vec<&str> = t.scenario.actors.iter().map(|a| a.name.as_str()).collect();
        for (step, n, s) in lines(&t) {
            let known = fences_known_at(&t, step);
            for text in [&n, &s] {
                for w in whole_words(text) {
                    if letters.contains(&w) {
                        assert!(
                            actors.contains(&w),
                            "{} step {step} names {w}, not an actor: {text}",
                            who(&t)
                        );
                    }
                }
                for tok in tokens_named(text) {
                    assert!(
                        known.contains(&tok),
                        "{} step {step} names token {tok}, not in its facts {known:?}: {text}",
                        who(&t)
                    );
                }
            }
        }
    }
}

/// A check of the check: the scanners do find what they look for.
#[test]
fn the_scanners_find_names_and_tokens() {
    assert_eq!(
        tokens_named("gives token 33. Token 34 again; token none"),
        [33, 34]
    );
    let words: Vec<_> = whole_words("B's lease (A) and C.").collect();
    assert_eq!(words, ["B", "s", "lease", "A", "and", "C"]);
    let t = run(&Scenario::gc_pause());
    assert!(fences_known_at(&t, 0).is_empty());
    let at_b = fences_known_at(&t, 6);
    assert!(at_b.contains(&33) && at_b.contains(&34), "{at_b:?}");
    assert!(!fences_known_at(&t, 1).contains(&34));
}

// (c)
#[test]
fn compare_and_delete_is_claimed_only_where_it_is_used() {
    for t in all_runs() {
        let cad = t.scenario.release == ReleaseMode::CompareAndDelete;
        for (step, n, s) in lines(&t) {
            for text in [&n, &s] {
                if text.to_lowercase().contains("compare-and-delete") && !cad {
                    assert!(
                        text.contains("GET then DEL would") || text.contains("cannot"),
                        "{} step {step} credits compare-and-delete under GET-then-DEL: {text}",
                        who(&t)
                    );
                }
            }
            if let Some(e) = t.event_at(step) {
                if let EventKind::Released { via, .. } | EventKind::ReleaseNoop { via, .. } =
                    &e.kind
                {
                    assert_eq!(*via, t.scenario.release, "{} step {step}", who(&t));
                    if !cad {
                        assert!(
                            !n.contains("with compare-and-delete")
                                && !n.contains("Compare-and-delete deletes"),
                            "{} step {step}: {n}",
                            who(&t)
                        );
                    }
                }
            }
        }
    }
    // Concretely, in unsafe-release nobody "releases … with compare-and-delete".
    for p in FencingPolicy::ALL {
        let t = run(&(deck::find("unsafe-release").unwrap().build)().with_policy(p));
        assert_eq!(t.scenario.release, ReleaseMode::GetThenDel);
        let releases: Vec<String> = lines(&t)
            .into_iter()
            .filter(|(step, ..)| {
                matches!(
                    t.event_at(*step).map(|e| &e.kind),
                    Some(EventKind::Released { .. } | EventKind::ReleaseNoop { .. })
                )
            })
            .map(|(_, n, _)| n)
            .collect();
        assert!(!releases.is_empty(), "{p:?}");
        for n in releases {
            assert!(!n.contains("compare-and-delete"), "{p:?}: {n}");
        }
    }
}

// (d)
#[test]
fn a_stale_fence_says_equal_exactly_when_the_token_equals_the_last_fence() {
    let (mut equal, mut lower) = (0, 0);
    for t in all_runs() {
        for (step, n, _) in lines(&t) {
            let Some(EventKind::WriteApplied {
                result: Err(WriteError::StaleFence { token, last }),
                ..
            }) = t.event_at(step).map(|e| &e.kind)
            else {
                continue;
            };
            if token == last {
                equal += 1;
                assert!(n.contains("equal"), "{} step {step}: {n}", who(&t));
            } else {
                lower += 1;
                assert!(token < last);
                assert!(!n.contains("equal"), "{} step {step}: {n}", who(&t));
            }
        }
    }
    assert!(
        equal > 0 && lower > 0,
        "both cases are reached: {equal} / {lower}"
    );
}

// (e)
#[test]
fn gc_is_said_only_of_a_gc_pause() {
    for t in all_runs() {
        for (step, n, s) in lines(&t) {
            for text in [&n, &s] {
                if !whole_words(text).any(|w| w == "GC") {
                    continue;
                }
                let e = t.event_at(step).expect("step 0 does not talk about GC");
                let actor = e
                    .actor
                    .as_deref()
                    .and_then(|a| t.scenario.actor_index(a))
                    .map(|i| &t.scenario.actors[i]);
                assert!(
                    actor.is_some_and(|a| a.pause_cause == PauseCause::Gc && !a.pauses.is_empty()),
                    "{} step {step} says GC: {text}",
                    who(&t)
                );
            }
        }
    }
    // The handoff's worker freezes whole (GC or VM); nothing about it says a GC pause.
    for p in FencingPolicy::ALL {
        let t = run(&(deck::find("handoff-barrier").unwrap().build)().with_policy(p));
        assert_eq!(t.scenario.actors[0].pause_cause, PauseCause::Stall);
        for (step, n, s) in lines(&t) {
            assert!(
                !n.contains("GC") && !s.contains("GC"),
                "step {step}: {n} / {s}"
            );
        }
        let pause = t
            .events
            .iter()
            .find(|e| matches!(e.kind, EventKind::PauseStarted { .. }))
            .unwrap();
        assert_eq!(story::label(pause), "process frozen");
    }
}

// (f)
#[test]
fn a_late_self_cancel_is_not_said_to_beat_the_expiry() {
    let mut seen = 0;
    let mut traces = all_runs();
    // The renewal entry under seeds where the watchdog wins the resume race.
    for seed in 0..16 {
        let sc = Scenario {
            seed,
            ..(deck::find("renewal").unwrap().build)()
        };
        traces.push(run(&sc));
    }
    for t in traces {
        for (step, n, s) in lines(&t) {
            if let Some(EventKind::ExtendFailed {
                lease_ended_at: Some(end),
                ..
            }) = t.event_at(step).map(|e| &e.kind)
            {
                seen += 1;
                assert!(
                    !s.contains("before the lease is gone"),
                    "{} step {step}: {s}",
                    who(&t)
                );
                assert!(s.contains("already ended"), "{} step {step}: {s}", who(&t));
                let at = story::instant(&t.scenario, *end);
                assert!(
                    n.contains(&format!("ended at t={at}")),
                    "{} step {step}: {n}",
                    who(&t)
                );
            }
        }
    }
    assert!(seen > 0, "a late self-cancel is reached");
}

// (g)
#[test]
fn a_clock_jump_expiry_is_not_said_to_be_a_pause() {
    let mut seen = 0;
    for t in all_runs() {
        for (step, n, s) in lines(&t) {
            let Some(EventKind::LeaseExpired {
                cause, owner_knew, ..
            }) = t.event_at(step).map(|e| &e.kind)
            else {
                continue;
            };
            let says_pause = |x: &str| x.contains("frozen") || x.contains("paused");
            if *owner_knew != Awareness::Paused {
                assert!(!says_pause(&n), "{} step {step}: {n}", who(&t));
            }
            if *cause == ExpiryCause::ClockJump {
                seen += 1;
                assert!(!says_pause(&s), "{} step {step}: {s}", who(&t));
                if *owner_knew != Awareness::Paused {
                    assert!(!says_pause(&n), "{} step {step}: {n}", who(&t));
                }
            }
        }
    }
    assert!(seen > 0, "a clock-jump expiry is reached");
}

// (h)
#[test]
fn two_live_leases_are_claimed_only_when_the_snapshot_has_them() {
    let mut traces = all_runs();
    // redis-failover with B holding past t=30, when A's lost lease runs out: the one case
    // where the narration may say both were live.
    let mut sc = (deck::find("redis-failover").unwrap().build)();
    sc.actors[1].script[4] = fencing_lab::core::Step::Work { ms: 25 };
    traces.push(run(&sc));
    let mut seen = 0;
    for t in traces {
        for (step, n, s) in lines(&t) {
            for text in [&n, &s] {
                if !(text.contains("both live") || text.contains("two leases were live")) {
                    continue;
                }
                seen += 1;
                let e = t.event_at(step).expect("not at step 0");
                // The snapshot just before the event: the leases that were live until now.
                let before = t.snapshot_at(step - 1);
                let live = usize::from(before.holder.is_some()) + before.lost_leases.len();
                assert!(live >= 2, "{} step {step}: {text} — {before:?}", who(&t));
                let other = e.snapshot.holder.as_ref();
                let owner = match &e.kind {
                    EventKind::LeaseExpired { owner, .. } => Some(owner),
                    _ => None,
                };
                assert!(
                    other.is_some_and(|l| Some(&l.owner) != owner),
                    "{} step {step}: {text}",
                    who(&t)
                );
            }
        }
    }
    assert!(seen > 0, "the overlap is narrated somewhere");
}

// (i)
#[test]
fn nothing_calls_the_headline_a_lost_update() {
    for t in all_runs() {
        for (step, n, s) in lines(&t) {
            for text in [&n, &s] {
                assert!(
                    !text.to_lowercase().contains("lost update"),
                    "{} step {step}: {text}",
                    who(&t)
                );
            }
        }
        assert!(!story::outcome(&t).to_lowercase().contains("lost update"));
    }
    for e in DECK {
        for note in (e.notes)(&deck::runs(e)) {
            assert!(
                !note.to_lowercase().contains("lost update"),
                "{}: {note}",
                e.id
            );
        }
    }
}

/// In a job scenario, the second accepted write is the job running twice, and says so.
#[test]
fn the_second_accepted_write_of_a_job_says_twice() {
    let mut seen = 0;
    for t in all_runs() {
        if t.scenario.job.is_none() {
            continue;
        }
        let mut accepted = 0;
        for (step, n, _) in lines(&t) {
            if let Some(EventKind::WriteApplied { result: Ok(_), .. }) =
                t.event_at(step).map(|e| &e.kind)
            {
                accepted += 1;
                if accepted == 1 {
                    assert!(!n.contains("twice"), "{} step {step}: {n}", who(&t));
                } else {
                    seen += 1;
                    assert!(n.contains("twice"), "{} step {step}: {n}", who(&t));
                }
            }
        }
        assert_eq!(t.summary.duplicate_runs, accepted.max(1) - 1, "{}", who(&t));
    }
    assert!(seen > 0);
}

/// The headline's words, literally: the numbers the page is presented with.
#[test]
fn the_headline_narration_names_33_34_80_and_90() {
    let off = run(&Scenario::gc_pause().with_policy(FencingPolicy::Off));
    let strict = run(&Scenario::gc_pause());
    let all = |t: &Trace| {
        lines(t)
            .into_iter()
            .map(|(_, n, s)| format!("{n} {s}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let (o, s) = (all(&off), all(&strict));
    assert!(
        o.contains("gives token 33") && o.contains("gives token 34"),
        "{o}"
    );
    assert!(
        o.contains("Balance 80.") && o.contains("double charge"),
        "{o}"
    );
    assert!(
        s.contains("stale_fence") && s.contains("Balance stays 90."),
        "{s}"
    );
    assert!(
        s.contains("storage has already seen 34"),
        "strict refuses 33 once it has seen 34: {s}"
    );
}

/// A failover after A's lease *expired* loses no live lease, so the same-Redis counter is
/// not rolled back (an expired key is gone on both sides): B gets 34, and the failover's
/// narration "nothing is lost" is then true.
#[test]
fn a_failover_after_expiry_loses_nothing() {
    let mut sc = Scenario::gc_pause();
    sc.actors[0].pauses.clear();
    sc.actors[0].script = vec![fencing_lab::core::Step::Acquire { retry_every: 10 }];
    sc.actors[1].start_at = 50;
    sc.set_crash_at(Some(40), None);
    sc.validate().unwrap();
    let t = run(&sc);
    let i = t
        .events
        .iter()
        .position(|e| matches!(e.kind, EventKind::Failover { .. }))
        .unwrap();
    assert!(matches!(
        &t.events[i].kind,
        EventKind::Failover { lost, rolled_back: false, .. } if lost.is_empty()
    ));
    let tokens: Vec<_> = t
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Acquired { fence, .. } => Some(fence.0),
            _ => None,
        })
        .collect();
    assert_eq!(
        tokens,
        [33, 34],
        "no live grant was lost, so no INCR was either"
    );
    let (n, s) = (
        story::Story::of(&t).narration(i + 1),
        story::Story::of(&t).say(i + 1),
    );
    assert!(n.contains("nothing is lost"), "{n}");
    assert!(s.contains("loses nothing"), "{s}");
}

/// With a separate counter a lease's number is not its token: the timeline's lease bands and
/// lease markers name no token, and the narration names none for a lease.
#[test]
fn a_separate_counter_names_no_token_for_a_lease() {
    let t = run(&Scenario::separate_counter());
    let drawn = fencing_lab::view::timeline::model(&t, t.len(), false);
    let bands: Vec<_> = drawn.bands.iter().map(|b| b.label.text.as_str()).collect();
    assert_eq!(bands, ["A · lease", "B · lease"], "no band claims a token");
    let labels: Vec<_> = drawn
        .markers
        .iter()
        .filter_map(|m| m.label.as_ref().map(|l| l.text.as_str()))
        .collect();
    assert!(labels.contains(&"lease expires"), "{labels:?}");
    assert!(
        !labels.iter().any(|l| l.contains("#33 expires")),
        "{labels:?}"
    );
    for step in 1..=t.len() {
        let e = &t.events[step - 1];
        let n = story::Story::of(&t).narration(step);
        if matches!(
            e.kind,
            EventKind::LeaseExpired { .. }
                | EventKind::Released { .. }
                | EventKind::ReleaseNoop { .. }
        ) {
            assert!(!n.contains("token"), "step {step}: {n}");
        }
    }
    let tokens: Vec<_> = t
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::TokenTaken { fence } => Some((e.actor.clone().unwrap(), fence.0)),
            _ => None,
        })
        .collect();
    assert_eq!(
        tokens,
        [("B".to_owned(), 33), ("A".to_owned(), 34)],
        "the older lease gets the newer token"
    );
}

/// With fencing off nothing is checked, so no Say line may claim a token "passed the check"
/// or that storage "could not yet refuse" a write.
#[test]
fn fencing_off_claims_no_check() {
    for entry in fencing_lab::core::DECK {
        let t = run(&(entry.build)().with_policy(fencing_lab::core::FencingPolicy::Off));
        for step in 0..=t.len() {
            let s = story::Story::of(&t).say(step);
            assert!(
                !s.contains("passed the check"),
                "{} step {step}: {s}",
                entry.id
            );
            assert!(
                !s.contains("could not yet refuse"),
                "{} step {step}: {s}",
                entry.id
            );
        }
    }
}

/// A client that skips a done job while another still believes it holds the lock is not
/// "one holder at a time": the Say line names the other believer.
#[test]
fn a_skip_while_another_client_still_believes_says_so() {
    let t = run(&Scenario::gc_pause()
        .with_clients(3)
        .with_policy(FencingPolicy::Off));
    let skip = t
        .events
        .iter()
        .position(|e| {
            e.actor.as_deref() == Some("C") && e.kind == EventKind::JobChecked { done: true }
        })
        .expect("C finds the job done");
    let say = story::Story::of(&t).say(skip + 1);
    assert!(t.events[skip].snapshot.believers.iter().any(|b| b == "A"));
    assert!(
        say.contains("But A still believes it holds the lock")
            && !say.contains("one holder at a time"),
        "{say}"
    );
    // Alone, the same check keeps the old line.
    let short = Scenario::gc_pause().with_pause(
        0,
        fencing_lab::core::Pause {
            start: 5,
            duration: 10,
        },
    );
    let t = run(&short);
    let skip = t
        .events
        .iter()
        .position(|e| e.kind == EventKind::JobChecked { done: true })
        .unwrap();
    assert!(story::Story::of(&t)
        .say(skip + 1)
        .contains("one holder at a time"));
}

/// "Compare-and-delete saw someone else's value …; a plain DEL would have deleted their
/// lease": rerun with a plain DEL and it does; rerun with GET then DEL and the GET sees the
/// other value, so nothing is deleted (the client compares before it DELs).
#[test]
fn a_refused_release_names_the_delete_that_would_have_hurt() {
    let mut checked = 0;
    for t in deck_runs() {
        for (step, _, say) in lines(&t) {
            if !say.contains("a plain DEL would have deleted their lease") {
                continue;
            }
            let e = t.event_at(step).unwrap();
            let who = e.actor.clone().unwrap();
            assert!(
                matches!(
                    e.kind,
                    EventKind::ReleaseNoop {
                        via: ReleaseMode::CompareAndDelete,
                        ..
                    }
                ),
                "{} step {step}",
                who
            );
            let release_by = |mode: ReleaseMode| {
                let rerun = run(&Scenario {
                    release: mode,
                    ..t.scenario.clone()
                });
                rerun
                    .events
                    .iter()
                    .filter(|r| r.actor.as_deref() == Some(&who) && r.at == e.at)
                    .map(|r| r.kind.clone())
                    .find(|k| {
                        matches!(
                            k,
                            EventKind::Released { .. }
                                | EventKind::ReleaseNoop { .. }
                                | EventKind::DeletedOthersLease { .. }
                                | EventKind::LockValueRead { .. }
                        )
                    })
            };
            assert!(
                matches!(
                    release_by(ReleaseMode::Del),
                    Some(EventKind::DeletedOthersLease { .. })
                ),
                "{}: a plain DEL by {who} at t={} deletes another's lease",
                t.scenario.id,
                e.at
            );
            assert!(
                matches!(
                    release_by(ReleaseMode::GetThenDel),
                    Some(EventKind::LockValueRead { owner: Some(ref o), .. }) if *o != who
                ),
                "{}: GET then DEL by {who} reads another's value and does not DEL",
                t.scenario.id
            );
            checked += 1;
        }
    }
    assert!(
        checked > 0,
        "the deck has a release refused by compare-and-delete"
    );
}

/// Lines a review found false at their own step, now said only where they are true: the
/// live holder's write is never "the older generation", a storage that asks the lock service
/// is never one that "enforces nothing", and same-epoch admitting the last fence's own token
/// says so (and that strict would refuse it).
#[test]
fn generations_sequencers_and_equal_epochs_are_said_only_where_true() {
    let (mut live_but_lower, mut equal_admitted) = (0, 0);
    for t in all_runs() {
        let asks = story::asks_lock_service(&t.scenario);
        for (step, _, s) in lines(&t) {
            if asks {
                assert!(
                    !s.contains("Nothing at the storage enforces it"),
                    "{} step {step}: {s}",
                    who(&t)
                );
            }
            if s.contains("Same-epoch (≥) admits a token equal to the last fence") {
                equal_admitted += 1;
                let Some(EventKind::WriteApplied { fence, .. }) = t.event_at(step).map(|e| &e.kind)
                else {
                    panic!("{} step {step} is not a write: {s}", who(&t));
                };
                assert_eq!(t.scenario.policy, FencingPolicy::SameEpoch, "{}", who(&t));
                // The snapshot before this write: step - 1 (a write is never step 0).
                assert_eq!(
                    *fence,
                    t.snapshot_at(step - 1).last_fence,
                    "{} step {step}",
                    who(&t)
                );
            }
            let Some(EventKind::WriteApplied {
                result: Ok(_),
                superseded_by: None,
                ..
            }) = t.event_at(step).map(|e| &e.kind)
            else {
                continue;
            };
            assert!(
                !s.contains("older generation"),
                "{} step {step}: {s}",
                who(&t)
            );
            if s.contains("holds the live lease, yet its token is lower") {
                live_but_lower += 1;
            }
        }
    }
    assert!(
        live_but_lower > 0 && equal_admitted > 0,
        "both lines are reached: {live_but_lower} / {equal_admitted}"
    );
    // Concretely: separate-counter off, B's debit with 33 after A's 34.
    let t = run(&(deck::find("separate-counter").unwrap().build)().with_policy(FencingPolicy::Off));
    assert!(lines(&t).iter().any(|(_, _, s)| s
        .starts_with("B holds the live lease, yet its token is lower")
        && s.contains("Both debits landed: a double charge.")
        && s.ends_with(story::Line::IdempotencyShort.text())));
}

/// The story's step list over the deck and its moved pauses: its steps cover every event once
/// and in order; a step of several events is one actor doing one thing with one answer, said
/// once with its count and its marker label counted; and a long pause that keeps a client
/// retrying does make such runs.
#[test]
fn repeated_steps_cover_every_event_once_and_count_themselves() {
    let mut collapsed = 0;
    for t in all_runs() {
        let steps = story::Steps::of(&t);
        let mut next = 0;
        for k in 1..=steps.last() {
            let run = steps.events(k);
            assert_eq!(run.start, next, "{} step {k}", who(&t));
            assert!(!run.is_empty(), "{} step {k} shows no event", who(&t));
            assert!(run.clone().all(|i| steps.showing(i) == k));
            next = run.end;
            let n = run.len();
            if n < 2 {
                continue;
            }
            collapsed += 1;
            let first = &t.events[run.start];
            let label = story::marker_label(&t, first);
            for e in &t.events[run.clone()] {
                assert_eq!(e.actor, first.actor, "{} step {k}", who(&t));
                assert_eq!(story::marker_label(&t, e), label, "{} step {k}", who(&t));
            }
            let words = story::Story::of(&t).narration(k);
            assert!(
                words.contains(&format!("×{n}"))
                    && (words.contains(" times") || words.contains("twice")),
                "{} step {k}: {words}",
                who(&t)
            );
            assert_eq!(
                story::run_label(&t, &steps, run.start),
                Some(format!("{label} ×{n}"))
            );
            assert!(run
                .skip(1)
                .all(|i| story::run_label(&t, &steps, i).is_none()));
        }
        assert_eq!(next, t.len(), "{}: every event is shown", who(&t));
        assert_eq!(steps.through(steps.last()), t.len());
    }
    eprintln!("{collapsed} collapsed steps");
    assert!(collapsed > 20, "{collapsed} collapsed steps");
}

/// The facts a story reads are what a search back through the trace finds: [`story::Story`]
/// reads them off in one forward pass, and each must agree, at every step of every run, with
/// the search each phrase used to make for itself.
#[test]
fn each_steps_facts_are_what_a_search_back_through_the_trace_finds() {
    use fencing_lab::core::LockCommand;
    for t in all_runs() {
        let words = story::Story::of(&t);
        for (i, e) in t.events.iter().enumerate() {
            let fx = words.facts(i).expect("a step per event");
            let before = || t.events[..i].iter().rev();
            let prior = before().find_map(|p| match &p.kind {
                EventKind::Acquired { fence, .. } => {
                    Some((p.actor.clone().unwrap_or_default(), *fence))
                }
                _ => None,
            });
            assert_eq!(fx.prior_grant, prior, "{}: event {i}", who(&t));
            let barrier =
                before().any(|p| matches!(p.kind, EventKind::BarrierSet { result: Ok(()), .. }));
            assert_eq!(fx.barrier_set, barrier, "{}: event {i}", who(&t));
            let ended = before().find_map(|p| match &p.kind {
                EventKind::Released { .. } => p.actor.clone(),
                EventKind::LeaseExpired { owner, .. } => Some(owner.clone()),
                _ => None,
            });
            assert_eq!(fx.last_ended, ended, "{}: event {i}", who(&t));
            let writes = before()
                .filter(|p| matches!(p.kind, EventKind::WriteApplied { .. }))
                .count();
            assert_eq!(fx.writes_before, writes, "{}: event {i}", who(&t));
            if let EventKind::SideEffect { what, .. } = &e.kind {
                let again = before()
                    .any(|p| matches!(&p.kind, EventKind::SideEffect { what: w, .. } if w == what));
                assert_eq!(fx.side_effect_again, again, "{}: event {i}", who(&t));
            }
            for (k, a) in t.scenario.actors.iter().enumerate() {
                let c = fx.clients[k];
                let mine = || before().filter(|p| p.actor.as_deref() == Some(a.name.as_str()));
                let granted = mine().find(|p| matches!(p.kind, EventKind::Acquired { .. }));
                assert_eq!(
                    c.granted_at,
                    granted.map(|p| p.at),
                    "{}: event {i}, {}",
                    who(&t),
                    a.name
                );
                let renewed = mine().find(|p| {
                    matches!(
                        p.kind,
                        EventKind::Acquired { .. } | EventKind::Extended { .. }
                    )
                });
                assert_eq!(
                    c.renewed_at,
                    renewed.map(|p| p.at),
                    "{}: event {i}, {}",
                    who(&t),
                    a.name
                );
                let waiting = mine().find_map(|p| match &p.kind {
                    EventKind::LockTimedOut {
                        command: LockCommand::Renew,
                        ..
                    } => Some(None),
                    EventKind::LockUnanswered {
                        command: LockCommand::Renew,
                        timeout_at,
                    } => Some(Some((p.at, *timeout_at))),
                    _ => None,
                });
                assert_eq!(
                    c.renewal_waiting,
                    waiting.flatten(),
                    "{}: event {i}, {}",
                    who(&t),
                    a.name
                );
                let terminated = before().find_map(|p| match &p.kind {
                    EventKind::LeaseExpired {
                        owner,
                        cause: ExpiryCause::IdleTimeout,
                        ..
                    } if *owner == a.name => Some(p.at),
                    _ => None,
                });
                assert_eq!(
                    c.session_ended_at,
                    terminated,
                    "{}: event {i}, {}",
                    who(&t),
                    a.name
                );
                let since_grant =
                    || mine().take_while(|p| !matches!(p.kind, EventKind::Acquired { .. }));
                let asked = since_grant().find(|p| matches!(p.kind, EventKind::LockWait { .. }));
                assert_eq!(
                    c.waiting_since,
                    asked.map(|p| p.at),
                    "{}: event {i}, {}",
                    who(&t),
                    a.name
                );
                let waited = mine().any(|p| matches!(p.kind, EventKind::LockWait { .. }));
                assert_eq!(c.has_waited, waited, "{}: event {i}, {}", who(&t), a.name);
                let paused = mine().find_map(|p| match p.kind {
                    EventKind::PauseStarted { .. } => Some(true),
                    EventKind::PauseEnded { .. } => Some(false),
                    _ => None,
                });
                assert_eq!(
                    c.paused,
                    paused.unwrap_or(false),
                    "{}: event {i}, {}",
                    who(&t),
                    a.name
                );
                let wrote = since_grant()
                    .any(|p| matches!(p.kind, EventKind::WriteApplied { result: Ok(_), .. }));
                assert_eq!(
                    c.wrote_since_grant,
                    wrote,
                    "{}: event {i}, {}",
                    who(&t),
                    a.name
                );
            }
        }
    }
}
