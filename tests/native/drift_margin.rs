//! `drift-margin`: a client whose clock runs slow believes its lease lasts longer than it
//! does; stopping at TTL − a margin on its own clock skips the late write when the drift is
//! bounded (the main run), but a pause after the check still lands unfenced, and the fence
//! refuses it (the notes' what-if).

use fencing_lab::core::deck;
use fencing_lab::core::story;
use fencing_lab::core::{
    client_elapsed, run, EventKind, FencingPolicy, Scenario, ScenarioError, Trace,
    MAX_CLIENT_DRIFT, MAX_TIME,
};
use fencing_lab::share::{decode, encode};

use crate::common;
use common::{w, writes};

fn run_as(policy: FencingPolicy) -> Trace {
    run(&Scenario::drift_margin().with_policy(policy))
}

/// (at, local, deadline, ok) of each deadline check, and its step (1-based).
fn checks(t: &Trace) -> Vec<(u64, u64, u64, bool, usize)> {
    t.events
        .iter()
        .enumerate()
        .filter_map(|(i, e)| match e.kind {
            EventKind::DeadlineChecked {
                local,
                deadline,
                ok,
            } => Some((e.at, local, deadline, ok, i + 1)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_slow_clock_counts_less() {
    assert_eq!(client_elapsed(20, 200), 16);
    assert_eq!(client_elapsed(36, 200), 28, "rounded down");
    assert_eq!(client_elapsed(36, 0), 36);
    assert_eq!(client_elapsed(10, 1000), 0);
}

/// U4: the main run is the drift the margin fixes (no pause): A's check at t=36 reads 28
/// ms on its slow clock, past TTL − margin = 22, so it stops; only B's debit lands, 90 under
/// every policy, and the words say what the margin fixed and that the drift is exaggerated.
#[test]
fn the_main_run_shows_the_margin_stopping_a_slow_clock() {
    for policy in FencingPolicy::ALL {
        let t = run_as(policy);
        assert_eq!(
            (t.scenario.client_drift, t.scenario.deadline_margin),
            (200, 8)
        );
        assert!(t.scenario.actors.iter().all(|a| a.pauses.is_empty()));
        let c = checks(&t);
        assert_eq!(c.len(), 1);
        let (at, local, deadline, ok, step) = c[0];
        assert_eq!((at, local, deadline, ok), (36, 28, 22, false), "{policy:?}");
        assert_eq!(step, 8, "the browser test steps to A's check");
        assert_eq!(t.events[step].kind, EventKind::GaveUp);
        let words = story::Story::of(&t).narration(step);
        assert!(
            words.contains("reads 28 ms since its lease began (36 ms on the lock server's clock)")
                && words.contains("it is past it, so it stops before writing")
                && words.contains("without the margin its deadline would be the TTL, 30 ms, and at 28 ms it would have gone on to write"),
            "{words}"
        );
        let say = story::Story::of(&t).say(step);
        assert!(
            say.contains("The margin stopped it") && say.contains("exaggerated for visibility"),
            "{say}"
        );
        assert_eq!(writes(&t), [w(35, "B", 34, "ok")], "{policy:?}");
        assert_eq!(t.summary.final_balance, 90);
        assert_eq!(t.summary.late_writes_accepted, 0);
    }
    assert!(
        story::Story::of(&run_as(FencingPolicy::Off)).narration(0).contains("client clocks run 20% slow (exaggerated for visibility: real clocks drift by tens of ppm), and stop at TTL − 8 ms")
    );
}

#[test]
fn without_the_margin_the_slow_clock_writes_late() {
    // The main run with margin 0 (a link's what-if): 28 < 30, A believes it has 2 ms left,
    // and writes 7 ms after its lease ran out.
    let bare = decode("#s=drift-margin&fence=off&margin=0")
        .unwrap()
        .scenario;
    let without = run(&bare);
    let (at, local, deadline, ok, step) = checks(&without)[0];
    assert_eq!((at, local, deadline, ok), (36, 28, 30, true));
    let words = story::Story::of(&without).narration(step);
    assert!(
        words.contains("2 ms left") && words.contains("ran out on the lock server 6 ms ago"),
        "{words}"
    );
    assert!(story::Story::of(&without)
        .say(step)
        .contains("A margin of at least TTL × drift"));
    assert_eq!(
        writes(&without),
        [w(35, "B", 34, "ok"), w(37, "A", 33, "ok")]
    );
    assert_eq!(without.summary.final_balance, 80);
    assert_eq!(
        run(&bare.clone().with_policy(FencingPolicy::Strict))
            .summary
            .final_balance,
        90
    );
    // An accurate clock: the same check at t=36 reads 36 ms and stops even without a margin.
    let accurate = run(&Scenario {
        client_drift: 0,
        ..bare
    });
    assert_eq!(checks(&accurate)[0].1, 36);
    assert_eq!(accurate.summary.final_balance, 90);
}

#[test]
fn a_pause_after_a_check_that_passes_lands_unfenced() {
    // What the margin cannot fix (the notes' what-if): A checks at t=15 (12 of 22 ms on its
    // clock), passes, and a GC pause lands after the check.
    let paused = Scenario::drift_margin_pause_after_check(&Scenario::drift_margin());
    let off = run(&paused.clone().with_policy(FencingPolicy::Off));
    let (at, local, deadline, ok, step) = checks(&off)[0];
    assert_eq!((at, local, deadline, ok), (15, 12, 22, true));
    let words = story::Story::of(&off).narration(step);
    assert!(
        words.contains("running 20% slow, reads 12 ms since its lease began (15 ms on the lock server's clock)")
            && words.contains("TTL − margin = 30 ms − 8 ms = 22 ms, so it has 10 ms left"),
        "{words}"
    );
    assert!(story::Story::of(&off)
        .say(step)
        .contains("cannot cover a pause after the check"));
    assert_eq!(writes(&off), [w(35, "B", 34, "ok"), w(56, "A", 33, "ok")]);
    assert_eq!(off.summary.final_balance, 80);
    assert_eq!(off.summary.duplicate_runs, 1);
    for policy in [FencingPolicy::Strict, FencingPolicy::SameEpoch] {
        let t = run(&paused.clone().with_policy(policy));
        assert_eq!(
            writes(&t),
            [w(35, "B", 34, "ok"), w(56, "A", 33, "stale_fence")],
            "{policy:?}"
        );
        assert_eq!(t.summary.final_balance, 90);
    }
}

#[test]
fn notes_quote_the_runs() {
    let entry = deck::find("drift-margin").unwrap();
    let notes = (entry.notes)(&deck::runs(entry)).join("\n");
    for figure in [
        "20% slow against the lock server's, exaggerated for visibility",
        "counts 800 ms while 1000 pass",
        "token 33",
        "A checks at t=36: its clock reads 28 ms, past its deadline of 22 ms (TTL − 8 ms), so it stops: 90 under every policy",
        "TTL × drift (6 ms)",
        "no margin (margin=0)",
        "writes at t=37, 7 ms after its lease ran out: 80 with fencing off, 90 with the fence",
        "A checks at t=15, its clock 12 of 22 ms, then freezes for 40 ms",
        "80, the job ran twice",
        "stale_fence (90)",
        "TTL × 0.01 + 2 ms",
    ] {
        assert!(notes.contains(figure), "{figure}: {notes}");
    }
    assert!(!notes.contains("‰"), "one unit for the drift: {notes}");
    let mut thin = Scenario::drift_margin();
    thin.deadline_margin = 1;
    let runs = deck::Runs(FencingPolicy::ALL.map(|p| run(&thin.clone().with_policy(p))));
    let other = (entry.notes)(&runs).join("\n");
    assert!(
        other.contains("its clock reads 28 of 29 ms (TTL − 1 ms), so it writes: 80 with fencing off. A margin under TTL × drift (6 ms) does not cover the drift"),
        "{other}"
    );
    let mut sc = Scenario::drift_margin();
    sc.client_drift = 100;
    let runs = deck::Runs(FencingPolicy::ALL.map(|p| run(&sc.clone().with_policy(p))));
    let other = (entry.notes)(&runs).join("\n");
    assert!(
        other.contains("counts 900 ms while 1000 pass") && other.contains("its clock 13 of 22 ms"),
        "{other}"
    );
}

#[test]
fn drift_and_margin_are_in_the_link_and_bounded() {
    let mut sc = Scenario::drift_margin();
    let plain = encode(&sc, 0);
    assert!(
        !plain.contains("&drift=") && !plain.contains("&margin="),
        "{plain}"
    );
    sc.client_drift = 50;
    sc.deadline_margin = 3;
    let hash = encode(&sc, 2);
    assert!(
        hash.contains("&drift=50") && hash.contains("&margin=3"),
        "{hash}"
    );
    assert_eq!(decode(&hash).map(|v| v.scenario), Ok(sc));
    // The browser test's what-if: no margin, and A's slow clock lets it write late.
    let bare = decode("#s=drift-margin&fence=off&margin=0").unwrap();
    let bare = run(&bare.scenario);
    assert_eq!(bare.summary.final_balance, 80);
    assert_eq!(bare.summary.late_writes_accepted, 1);
    let headline = decode("#s=gc-pause&drift=10&margin=5").unwrap().scenario;
    assert_eq!((headline.client_drift, headline.deadline_margin), (10, 5));
    for (bad, why) in [
        ("fast", "“fast” is not a whole number"),
        ("901", "901 per mille is too much"),
        ("-1", "-1 is negative"),
        ("1000", "1000 per mille is too much"),
        ("", "the value is empty"),
    ] {
        let err = decode(&format!("#s=drift-margin&drift={bad}")).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("Client clock drift must be between 0 per mille and 900 per mille ({why})")
        );
    }
    for (bad, why) in [
        ("soon".to_owned(), "“soon” is not a whole number".to_owned()),
        (
            (MAX_TIME + 1).to_string(),
            format!("{} ms is too long", MAX_TIME + 1),
        ),
    ] {
        let err = decode(&format!("#s=drift-margin&margin={bad}")).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("Deadline margin must be between 0 ms and 10 minutes ({why})")
        );
    }
    let mut wild = Scenario::drift_margin();
    wild.client_drift = MAX_CLIENT_DRIFT + 1;
    assert!(matches!(
        wild.validate(),
        Err(ScenarioError::OutOfRange {
            what: "client_drift",
            ..
        })
    ));
}
