//! Why a lease ended, what its owner knew then, and why a release deleted nothing: one rule
//! each, for the engine and for the fold of a recorded run (`core::record`), so neither
//! derives its own.

use super::super::lease::{Fence, Lease};
use super::{Awareness, ExpiryCause, NoopReason};

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
