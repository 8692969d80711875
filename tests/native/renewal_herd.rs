//! `renewal-herd`: ten thousand holders renewing on one schedule hit the lock service in the
//! same millisecond; jitter spreads the same renewals out. One of them is on the timeline.

use fencing_lab::core::deck::{self, herd_horizon, HERD_HOLDERS};
use fencing_lab::core::{renewal_herd, run, EventKind, FencingPolicy, Scenario, Trace};

use crate::common;
use common::{w, writes};

fn run_as(policy: FencingPolicy) -> Trace {
    run(&Scenario::renewal_herd().with_policy(policy))
}

#[test]
fn one_job_of_the_herd_renews_on_a_jittered_third_and_runs_once() {
    for policy in FencingPolicy::ALL {
        let t = run_as(policy);
        let renewed: Vec<u64> = t
            .events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::Extended { .. }))
            .map(|e| e.at)
            .collect();
        assert!(renewed.len() >= 3, "{policy:?}: {renewed:?}");
        // A third of the 30 ms TTL, ±25%: each gap between 7 and 13 ms.
        let gaps: Vec<u64> = std::iter::once(renewed[0])
            .chain(renewed.windows(2).map(|p| p[1] - p[0]))
            .collect();
        assert!(gaps.iter().all(|g| (7..=13).contains(g)), "{gaps:?}");
        assert!(
            gaps.iter().any(|g| *g != 10),
            "jittered, not on the third: {gaps:?}"
        );
        // Nobody pauses: one holder at a time, B finds the job done, every policy agrees.
        assert_eq!(writes(&t), vec![w(45, "A", 33, "ok")], "{policy:?}");
        assert_eq!(t.summary.final_balance, 90);
        assert_eq!(t.summary.max_believers, 1);
        assert!(t.events.iter().any(
            |e| e.actor.as_deref() == Some("B") && matches!(e.kind, EventKind::Acquired { .. })
        ));
    }
}

#[test]
fn ten_thousand_on_one_schedule_land_in_one_millisecond_and_jitter_spreads_them() {
    let ttl = Scenario::renewal_herd().lease_ttl;
    let [fixed, jittered] =
        [false, true].map(|j| renewal_herd(HERD_HOLDERS, ttl, j, 9, herd_horizon(ttl)));
    assert_eq!(fixed.holders, 10_000);
    assert_eq!((fixed.peak_per_ms, fixed.peak_at), (10_000, 10));
    assert_eq!(
        fixed.renewals,
        10_000 * 12,
        "every holder, every 10 ms, for 120 ms"
    );
    assert!(
        jittered.peak_per_ms * 4 < fixed.peak_per_ms,
        "{}",
        jittered.peak_per_ms
    );
    assert!(jittered.renewals.abs_diff(fixed.renewals) < fixed.renewals / 10);
    assert_eq!(fixed.failed_renewals + jittered.failed_renewals, 0);
}

#[test]
fn the_notes_give_the_herds_computed_peaks_and_the_runs_renewals() {
    let entry = deck::find("renewal-herd").expect("in the deck");
    let runs = deck::runs(entry);
    let notes = (entry.notes)(&runs).join("\n");
    let [fixed, jittered] = deck::renewal_herd_reports(&runs.off().scenario);
    assert!(
        // Review 2, N3: the herd in seconds (one scaled ms is a second), not "at t=…".
        notes.contains(&format!(
            "all {} renew in the same instant",
            fixed.peak_per_ms
        )),
        "{notes}"
    );
    assert!(
        notes.contains(&format!(
            "takes about {}, not {}",
            jittered.peak_per_ms, fixed.peak_per_ms
        )),
        "{notes}"
    );
    assert!(notes.contains("t=11, 20, 31, 43"), "{notes}");
    assert!(
        notes.contains("90 off, 90 strict, 90 same-epoch"),
        "{notes}"
    );
}
