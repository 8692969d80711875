//! `renewal-herd`: ten thousand holders renewing on one schedule hit the lock service in the
//! same millisecond; jitter spreads the same renewals out. One of them is on the timeline.

use fencing_lab::core::deck::{self, herd_horizon, thousands, HERD_HOLDERS};
use fencing_lab::core::{
    renewal_herd, run, Awareness, EventKind, FencingPolicy, Herd, LockCommand, Scenario, Trace,
};

use crate::common;
use common::{w, writes};

fn run_as(policy: FencingPolicy) -> Trace {
    run(&Scenario::renewal_herd().with_policy(policy))
}

/// When `want` first happens to `who` (the lock's own events: `None`).
fn first(t: &Trace, who: Option<&str>, want: fn(&EventKind) -> bool) -> Option<u64> {
    let e = t
        .events
        .iter()
        .find(|e| e.actor.as_deref() == who && want(&e.kind));
    e.map(|e| e.at)
}

/// Review 2, N3: the herd's harm on the timeline. A's renewal, sent with the fleet's others at
/// one instant, is answered after its lease ran out; B, queued behind the herd too, gets the
/// lock; A's worker, not told, writes under the lost lease, and only the fence refuses it.
#[test]
fn the_last_renewal_of_the_herd_is_answered_after_its_lease_ran_out() {
    for policy in FencingPolicy::ALL {
        let t = run_as(policy);
        let queued = t.events.iter().find_map(|e| match e.kind {
            EventKind::LockQueued {
                command: LockCommand::Renew,
                ahead,
                served_at,
            } if e.actor.as_deref() == Some("A") => Some((e.at, ahead, served_at)),
            _ => None,
        });
        // 10,000 renewals 3 s before their 30 s leases end, answered 2,000 a second.
        assert_eq!(queued, Some((27, 9_999, 32)), "{policy:?}");
        let expired = first(
            &t,
            None,
            |k| matches!(k, EventKind::LeaseExpired { fence, owner_knew: Awareness::Unaware, .. } if fence.0 == 33),
        );
        assert_eq!(expired, Some(30));
        let late = t.events.iter().find_map(|e| match e.kind {
            EventKind::ExtendFailed {
                watchdog: true,
                lease_ended_at,
            } if e.actor.as_deref() == Some("A") => Some((e.at, lease_ended_at)),
            _ => None,
        });
        assert_eq!(
            late,
            Some((32, Some(30))),
            "the late reply, after the expiry"
        );
        let b_granted = first(
            &t,
            Some("B"),
            |k| matches!(k, EventKind::Acquired { fence, .. } if fence.0 == 34),
        );
        assert_eq!(
            b_granted,
            Some(32),
            "B's acquire waited behind the herd too"
        );
        let b_queued = first(&t, Some("B"), |k| {
            matches!(
                k,
                EventKind::LockQueued {
                    command: LockCommand::Acquire,
                    ahead: 6_000,
                    served_at: 32
                }
            )
        });
        assert_eq!(b_queued, Some(29));
        assert_eq!(t.summary.max_believers, 2, "A's worker was not told");
    }
    // The fence decides A's late write: refused by both checks, landing with fencing off.
    let stale = vec![w(33, "B", 34, "ok"), w(35, "A", 33, "stale_fence")];
    assert_eq!(writes(&run_as(FencingPolicy::Strict)), stale);
    assert_eq!(writes(&run_as(FencingPolicy::SameEpoch)), stale);
    let off = run_as(FencingPolicy::Off);
    assert_eq!(
        writes(&off),
        vec![w(33, "B", 34, "ok"), w(35, "A", 33, "ok")]
    );
    let balances = FencingPolicy::ALL.map(|p| run_as(p).summary.final_balance);
    assert_eq!(balances, [80, 90, 90]);
}

/// The fleet's numbers: only the renewals the service answers within the time left keep
/// their leases; a command reaching it after the backlog drained waits for nothing.
#[test]
fn the_fleet_queue_drains_at_the_service_rate() {
    let herd = deck::FLEET;
    assert_eq!((herd.instant(30), herd.drain()), (27, 5));
    assert_eq!(herd.served_at(30, 26), 26);
    assert_eq!(herd.served_at(30, 27), 32);
    assert_eq!(herd.served_at(30, 31), 32);
    assert_eq!(herd.served_at(30, 32), 32);
    assert_eq!(herd.ahead(30, 27), 9_999);
    assert_eq!(herd.ahead(30, 29), 6_000, "A's renewal among them");
    assert_eq!(herd.ahead(30, 31), 2_000);
    // At a third of the TTL the same queue drains long before the leases end.
    let early = Herd {
        renew_before: 20,
        ..herd
    };
    assert!(early.instant(30) + early.drain() < 30);
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
fn the_notes_give_the_fleets_numbers_and_the_chart_s_peaks() {
    let entry = deck::find("renewal-herd").expect("in the deck");
    let runs = deck::runs(entry);
    let notes = (entry.notes)(&runs).join("\n");
    let [fixed, jittered] = deck::renewal_herd_reports(&runs.off().scenario);
    for want in [
        "Times scaled: 30 ms here stands for 30 s",
        "All 10,000 renewals reach the service in the same second, t=27",
        "the instant's queue takes 5 s",
        "Only the first 6,000 renewals are answered within the 3 s",
        "the other 4,000 leases are lost at once",
        "A's, the last, is answered at t=32, 2 s after its lease ended",
        "80 off (the job ran twice), 90 strict, 90 same-epoch",
    ] {
        assert!(notes.contains(want), "{want}: {notes}");
    }
    assert_eq!(fixed.peak_per_ms, 10_000);
    let peak = format!(
        "peaks at {} a second, not 10,000",
        thousands(u64::from(jittered.peak_per_ms))
    );
    assert!(notes.contains(&peak), "{peak}: {notes}");
}
