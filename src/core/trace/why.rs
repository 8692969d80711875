//! Why a lease ended, what its owner knew then, why a release deleted nothing, which
//! statements restart a row lock's idle clock, whether a pause ended with the lease gone, and
//! what a clock step cut short: one rule each, for the engine and for the fold of a recorded
//! run (`core::record`), so neither derives its own.

use super::super::clock::Millis;
use super::super::lease::{Fence, Lease};
use super::super::scenario::LockKind;
use super::{Awareness, EventKind, ExpiryCause, NoopReason, Shortened, TraceEvent};

impl Awareness {
    /// What the owner of a lease knows as the server lets it go: whether it still
    /// believes it holds it, and whether it is frozen in a pause.
    pub(crate) fn of(believes: bool, paused: bool) -> Self {
        match (believes, paused) {
            (true, true) => Self::Paused,
            (true, false) => Self::Unaware,
            (false, _) => Self::Knows,
        }
    }
}

impl ExpiryCause {
    /// Why a lease ran out: a row lock's session by its idle timeout, another lease by its
    /// TTL, sooner if its lock node's clock `jumped`.
    pub(crate) fn of(row_lock: bool, jumped: bool) -> Self {
        match (row_lock, jumped) {
            (true, _) => Self::IdleTimeout,
            (false, true) => Self::ClockJump,
            (false, false) => Self::Ttl,
        }
    }
}

impl NoopReason {
    /// Why a compare-and-delete deleted nothing: the key holds `holder`'s live lease, or
    /// the caller's own lease (`own`, `None` if it never had one) is gone, lost in a
    /// failover if `lost` says so, or else run out.
    pub(crate) fn of(
        holder: Option<Lease>,
        own: Option<Fence>,
        lost: impl Fn(Fence) -> bool,
    ) -> Self {
        match (holder, own) {
            (Some(l), _) => Self::OtherHolder {
                owner: l.owner,
                fence: l.fence,
            },
            (None, Some(f)) if lost(f) => Self::Lost,
            (None, Some(_)) => Self::Expired,
            (None, None) => Self::NeverHeld,
        }
    }
}

impl EventKind {
    /// Row lock: whether this event, said by the holder's client, is a statement of its
    /// transaction that finished (a job-status read, an accepted write), so its session's
    /// idle-in-transaction clock starts again. An extend says its new expiry itself; a
    /// refused write's reply ends no idle time the server counts.
    pub fn restarts_idle_clock(&self, lock: &LockKind) -> bool {
        lock.row().is_some()
            && matches!(
                self,
                EventKind::JobChecked { .. } | EventKind::WriteApplied { result: Ok(_), .. }
            )
    }

    /// A client's pause ended: its lease is gone if it still `believes` it holds the lock and
    /// the lock service does not hold it for it (`held`).
    pub fn pause_ended(believes: bool, held: bool) -> Self {
        EventKind::PauseEnded {
            lease_gone: believes && !held,
        }
    }
}

impl Shortened {
    /// What a lock node's clock step cut short: the lease of the lock service's `holder` just
    /// before it, if it now ends (`ends_at`, asked of that lease) sooner than granted. Only
    /// the holder's is told: it is the one the run's writes go out under (Redlock's other
    /// majorities are shown as other holders, not as cut short).
    pub fn of(holder: Option<Lease>, ends_at: impl FnOnce(&Lease) -> Millis) -> Option<Self> {
        let old = holder?;
        let ends_at = ends_at(&old);
        (ends_at != old.expires_at).then_some(Self {
            owner: old.owner,
            fence: old.fence,
            granted_until: old.expires_at,
            ends_at,
        })
    }
}

/// When `owner`'s newest lease ended, as the run's `events` so far say: the first event
/// since its grant (its own `Acquired`) that ends a lease of its (run out, deleted by
/// another's DEL, lost in a failover). By owner, not token: a separate counter's token is
/// not its lease's number, and a rolled-back counter hands one token out twice.
pub(crate) fn lease_ended_at(events: &[TraceEvent], owner: &str) -> Option<Millis> {
    let mine = |e: &TraceEvent| e.actor.as_deref() == Some(owner);
    let granted = events
        .iter()
        .rposition(|e| mine(e) && matches!(e.kind, EventKind::Acquired { .. }))?;
    events[granted..].iter().find_map(|e| match &e.kind {
        EventKind::LeaseExpired { owner: o, .. }
        | EventKind::DeletedOthersLease { owner: o, .. }
            if o == owner =>
        {
            Some(e.at)
        }
        EventKind::Failover { lost, .. } if lost.iter().any(|l| l.owner == owner) => Some(e.at),
        _ => None,
    })
}

/// Whether `lock`'s leases end by a lock node's clock (a key's PX), which a clock step on
/// that node moves; a row lock's idle-in-transaction timeout runs on PostgreSQL's own timer.
pub(crate) fn ends_by_lock_clock(lock: &LockKind) -> bool {
    lock.row().is_none()
}

/// Whether a clock step cut lease `fence` short, as the run's `events` so far say: its
/// expiry is then the jump's doing ([`ExpiryCause::of`]).
pub(crate) fn cut_short_by_a_jump(events: &[TraceEvent], fence: Fence) -> bool {
    events.iter().any(|e| {
        matches!(&e.kind, EventKind::LockClockJumped { shortened: Some(s), .. } if s.fence == fence)
    })
}
