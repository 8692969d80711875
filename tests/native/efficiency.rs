//! `efficiency`: Kleppmann's opener. The headline's pause, with a job whose second run only
//! rewrites the value the first one wrote (a report recomputed from the same input): the job
//! runs twice with fencing off, but the final state is the one a single run leaves.

use fencing_lab::core::deck::{self, REPORT};
use fencing_lab::core::story;
use fencing_lab::core::{run, Fence, FencingPolicy, Scenario, Step, Trace};
use fencing_lab::share::{decode, encode};

use crate::common;
use common::{w, write_step, writes};

fn run_as(policy: FencingPolicy) -> Trace {
    run(&Scenario::efficiency().with_policy(policy))
}

/// Step `n` (1-based) at which the write by `who` is shown.
#[test]
fn fencing_off_the_job_runs_twice_and_the_row_holds_one_runs_value() {
    let off = run_as(FencingPolicy::Off);
    assert_eq!(writes(&off), [w(35, "B", 34, "ok"), w(55, "A", 33, "ok")]);
    let s = &off.summary;
    assert_eq!(s.accepted_writes, 2);
    assert_eq!(s.duplicate_runs, 1, "two lock generations both ran the job");
    assert_eq!(s.late_writes_accepted, 1);
    assert_eq!(s.harmless_reruns, 1, "A's run rewrote B's value");
    assert_eq!(story::final_value(&off), REPORT);
    assert_eq!(
        story::outcome(&off),
        "wasted work, no harm: job ran twice — A's 33 landed from a superseded lease, after 34"
    );
    let step = write_step(&off, "A");
    assert_eq!(step, 11, "the browser test steps to A's rebuild");
    let words = story::Story::of(&off).narration(step);
    assert!(words.contains("wasted work, no harm"), "{words}");
    let say = story::Story::of(&off).say(step);
    assert!(say.contains("double charge (gc-pause)"), "{say}");
    // B's first write is not a rerun.
    let b = story::Story::of(&off).narration(write_step(&off, "B"));
    assert!(!b.contains("run twice"), "{b}");
}

#[test]
fn fenced_a_s_late_rebuild_is_refused() {
    for policy in [FencingPolicy::Strict, FencingPolicy::SameEpoch] {
        let t = run_as(policy);
        assert_eq!(
            writes(&t),
            [w(35, "B", 34, "ok"), w(55, "A", 33, "stale_fence")],
            "{policy:?}"
        );
        assert_eq!(t.summary.accepted_writes, 1);
        assert_eq!(t.summary.duplicate_runs, 0);
        assert_eq!(t.summary.harmless_reruns, 0);
        assert_eq!(t.summary.last_fence, Some(Fence(34)));
        assert_eq!(story::final_value(&t), REPORT);
        assert_eq!(
            story::outcome(&t),
            "A's 33 refused: stale_fence; last fence 34"
        );
    }
}

#[test]
fn the_verdict_comes_from_the_values_written() {
    // Same schedule, but A's rebuild computes a different report (its input changed while it
    // was paused): now the second run leaves a state one run would not, a duplicate publish.
    let mut sc = Scenario::efficiency().with_policy(FencingPolicy::Off);
    for s in &mut sc.actors[0].script {
        if let Step::Publish { result } = s {
            *result = "11 orders".to_owned();
        }
    }
    let t = run(&sc);
    assert_eq!(t.summary.duplicate_runs, 1);
    assert_eq!(t.summary.harmless_reruns, 0);
    assert_eq!(story::final_value(&t), "11 orders");
    assert!(
        story::outcome(&t).starts_with("duplicate publish: job ran twice"),
        "{}",
        story::outcome(&t)
    );
    // The headline's debits are never harmless: each one changes the balance.
    let headline = run(&Scenario::gc_pause().with_policy(FencingPolicy::Off));
    assert_eq!(headline.summary.duplicate_runs, 1);
    assert_eq!(headline.summary.harmless_reruns, 0);
    assert!(story::outcome(&headline).starts_with("double charge"));
}

#[test]
fn notes_quote_the_runs() {
    let entry = deck::find("efficiency").unwrap();
    let notes = (entry.notes)(&deck::runs(entry)).join("\n");
    for figure in [
        "efficiency",
        "correctness",
        "A takes 33",
        "B takes 34",
        "2 rebuilds landed",
        "1 of them rewrote",
        REPORT,
        "80 instead of 90",
        "(strict: A's 33 refused: stale_fence; last fence 34)",
    ] {
        assert!(notes.contains(figure), "{figure}: {notes}");
    }
    // Figures follow the runs: with A's pause ending before B's grant, nothing runs twice.
    let sc = Scenario::efficiency().with_pause(
        0,
        fencing_lab::core::Pause {
            start: 5,
            duration: 10,
        },
    );
    let runs = deck::Runs(FencingPolicy::ALL.map(|p| run(&sc.clone().with_policy(p))));
    let other = (entry.notes)(&runs).join("\n");
    assert!(other.contains("only one rebuild landed"), "{other}");
}

#[test]
fn the_scenario_round_trips_through_its_link() {
    let sc = Scenario::efficiency();
    let hash = encode(&sc, 0);
    assert!(hash.starts_with("#s=efficiency&fence=strict"), "{hash}");
    assert_eq!(decode(&hash).map(|v| v.scenario), Ok(sc.clone()));
    let moved = sc.with_pause(
        0,
        fencing_lab::core::Pause {
            start: 5,
            duration: 60,
        },
    );
    let hash = encode(&moved, 4);
    let view = decode(&hash).unwrap();
    assert_eq!(view.scenario, moved);
    assert_eq!(view.step, 4);
}
