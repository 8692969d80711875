//! The grants of the lease, in order: which one a client's write went under, which superseded
//! it, and whether a failover's counter gave a token out again. One rule each, for the engine
//! and for the fold of a recorded run (`core::record`).

use serde::{Deserialize, Serialize};

use super::super::lease::Fence;
use super::super::scenario::TokenSource;

/// One grant of the lease.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    pub owner: String,
    pub fence: Fence,
}

/// Where `owner`'s `nth` grant (0: its first) is among every grant, in grant order: the
/// lease a client that had had `nth + 1` grants wrote under. (Not found by token: a
/// separate counter's token is not the lease's number, and a rolled-back counter can hand
/// the same token out twice.)
pub fn nth_grant(grants: &[Grant], owner: &str, nth: usize) -> Option<usize> {
    let of = (grants.iter().enumerate()).filter(|(_, g)| g.owner == owner);
    of.map(|(i, _)| i).nth(nth)
}

/// The grant that superseded grant `own`, if the lock made any after it: the newest one.
/// Compared by grant, not by token value (see `superseded_by` in
/// [`super::EventKind::WriteApplied`]).
pub fn superseded(grants: &[Grant], own: usize) -> Option<&Grant> {
    grants.get(own + 1..).and_then(|later| later.last())
}

/// Whether a failover whose lock mints `next` from now on rolled its token counter back:
/// it gives a token some grant already had. Random values have no counter to roll back (nor
/// an order to go back in).
pub fn rolled_back(
    source: TokenSource,
    next: Fence,
    granted: impl IntoIterator<Item = Fence>,
) -> bool {
    source != TokenSource::RandomValue && granted.into_iter().any(|g| next <= g)
}
