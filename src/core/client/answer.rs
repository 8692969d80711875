//! What the lock answers a client, as far as its backend can tell. An answer carries only
//! what the client acts on, plus the facts no client sees (who keeps the lock from it, why a
//! release deleted nothing, another client's token in the key) as the backend's
//! [`Backend::Told`]: the simulator's books tell them; a real server's answer does not, and
//! the fold derives them from the recording ([`super::super::record`]).

use super::super::lease::Acquire;
use super::*;

/// The answer to an acquire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer<By> {
    /// The lease is the client's: its token, and when the lock service lets it run out.
    Granted { fence: Fence, expires_at: Millis },
    /// Refused: the lock is held (or kept by a lapsed lease's lock-delay), by `by`.
    Refused(By),
}

/// An acquire's answer, with the Redlock nodes that answered OK (none on one server).
pub type Acquired<By> = (Answer<By>, Vec<usize>);

/// Who keeps the lock from a refused acquire, and until when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldBy {
    pub holder: String,
    pub until: Millis,
}

impl From<Acquire> for Answer<HeldBy> {
    /// The simulated lock's answer, which tells who holds it.
    fn from(answer: Acquire) -> Self {
        match answer {
            Acquire::Acquired { fence, expires_at } => Self::Granted { fence, expires_at },
            Acquire::Held { holder, expires_at } => Self::Refused(HeldBy {
                holder,
                until: expires_at,
            }),
        }
    }
}

/// What the lock key holds, as a GET reads it or a DEL deleted it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyValue<F> {
    /// No key: the lease ran out, or was deleted.
    Empty,
    /// The client's own value: the lease it was granted last, whose token it knows.
    Own { owner: String, fence: Fence },
    /// Another client's value; that lease's token is `fence`, as far as the backend tells.
    Others { owner: String, fence: F },
}

/// A compare-and-delete's answer: our lease's token, or why nothing was released (as far as
/// the backend tells) and the Redlock nodes where a leftover key of ours was still deleted.
pub type Release<Why> = Result<Fence, (Why, Vec<usize>)>;
