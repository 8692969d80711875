//! The verdicts of a run, read off the engine's facts by an observer that takes no part in
//! the run. Each verdict is a count that some schedule can make non-zero under some policy,
//! except where the doc says that a policy rules it out by construction.

use super::ledger::{Account, WriteRecord};
use super::scenario::Scenario;
use super::trace::{EventKind, ProviderOutcome, Summary, TraceEvent};

/// What the events and the write log amount to.
pub fn summarize(
    sc: &Scenario,
    events: &[TraceEvent],
    writes: &[WriteRecord],
    account: &Account,
) -> Summary {
    let accepted = writes.iter().filter(|w| w.accepted()).count();
    let side_effects = || {
        events.iter().filter_map(|e| match &e.kind {
            EventKind::SideEffect { lease_live, .. } => Some(*lease_live),
            _ => None,
        })
    };
    let provider = |want: ProviderOutcome| {
        events
            .iter()
            .filter(
                |e| matches!(&e.kind, EventKind::ProviderCall { outcome, .. } if *outcome == want),
            )
            .count()
    };
    Summary {
        final_balance: account.balance,
        accepted_writes: accepted,
        rejected_writes: writes.len() - accepted,
        late_writes_accepted: events.iter().filter(|e| e.is_late_write()).count(),
        out_of_order_writes: events.iter().filter(|e| e.is_out_of_order()).count(),
        duplicate_runs: if sc.job.is_some() {
            accepted.saturating_sub(1)
        } else {
            0
        },
        max_believers: events
            .iter()
            .map(|e| e.snapshot.believers.len())
            .max()
            .unwrap_or(0),
        last_fence: account.last_fence,
        last_write_fence: account.last_write_fence,
        max_live_leases: events
            .iter()
            .map(|e| {
                usize::from(e.snapshot.holder.is_some())
                    + e.snapshot.lost_leases.len()
                    + e.snapshot.other_holders.len()
            })
            .max()
            .unwrap_or(0),
        harmless_reruns: harmless_reruns(writes),
        provider_charges: provider(ProviderOutcome::Charged),
        provider_deduped: provider(ProviderOutcome::Deduped),
        unprotected_side_effects: side_effects().filter(|live| !live).count(),
        side_effects: side_effects().count(),
    }
}

/// Accepted publishes after the first that wrote the value already in the result row: the
/// job ran again but left storage as one run left it (wasted work, no wrong final state).
fn harmless_reruns(writes: &[WriteRecord]) -> usize {
    let mut row: Option<&str> = None;
    let mut landed = 0usize;
    let mut same = 0usize;
    for w in writes.iter().filter(|w| w.accepted()) {
        let Some(value) = w.request.publish.as_deref() else {
            continue;
        };
        if landed > 0 && row == Some(value) {
            same += 1;
        }
        landed += 1;
        row = Some(value);
    }
    same
}
