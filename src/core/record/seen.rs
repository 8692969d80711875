//! What a client sees of an event: [`Seen`], the event without the fields no client sees
//! (the fold derives them), [`Refusal`], storage's refusal as its reply says it, and
//! [`observations_of`], what clients could have seen of an engine run.

use std::collections::VecDeque;

use super::super::clock::Millis;
use super::super::lease::Fence;
use super::super::ledger::WriteError;
use super::super::scenario::ReleaseMode;
use super::super::trace::{EventKind, LockCommand, Trace, TraceEvent};
use super::Observation;

/// An event as far as a client (or the harness) can see it. Each variant but `Event` is an
/// event with fields no client sees (a refusal's holder, a noop's reason, a write's
/// `superseded_by`, …): they are left out here, and [`recorded`] derives them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// Seen in full.
    Event(EventKind),
    /// A refused acquire; who holds the lock, and until when, are the fold's.
    AcquireRefused { retry_in: Millis, nodes: Vec<usize> },
    /// A `SELECT … FOR UPDATE` that waited for the row; for whom is the fold's.
    LockWait,
    /// A pause ended; whether the lease is gone is the fold's.
    PauseEnded,
    /// A compare-and-delete that deleted nothing (but Redlock's leftover keys); why is the
    /// fold's. (A DEL that found no key says why itself, and is seen in full.)
    ReleaseNoop { deleted: Vec<usize> },
    /// A GET of the lock key that read another client's value: its owner; that lease's token
    /// is the fold's. (An empty key, or the client's own value with its own token, is seen in
    /// full.)
    LockValueRead { owner: String },
    /// An unconditional DEL that deleted `owner`'s lease; its token is the fold's.
    DeletedOthersLease { owner: String },
    /// An extend refused; when the lease ended is the fold's.
    ExtendFailed { watchdog: bool },
    /// A lock command's timeout; when the lease ended is the fold's.
    LockTimedOut {
        command: LockCommand,
        sent_at: Millis,
        cancelled: bool,
        wrote_at: Option<Millis>,
    },
    /// A failover, with the owners of the live keys the promoted replica lacked (a GET on
    /// each side before the promotion); their leases, and whether the counter rolled back,
    /// are the fold's.
    Failover {
        lost: Vec<String>,
        next_fence: Fence,
    },
    /// The lock node's clock stepped; whose lease it shortened is the fold's.
    LockClockJumped { by: Millis },
    /// Storage failed over to its standby, `lag` ms behind: the acknowledged writes (writer,
    /// token) the primary's write log has and the promoted standby's lacks; their records,
    /// and the account as the standby has it, are the fold's.
    StorageFailover {
        lag: Millis,
        lost: Vec<(String, Option<Fence>)>,
    },
    /// Storage's reply to a write; the grant that superseded the write's lease, and the
    /// highest token accepted before it, are the fold's.
    WriteApplied {
        fence: Option<Fence>,
        amount: i64,
        sent_at: Millis,
        /// The balance the debit left (`None` for a publish: it leaves the balance be).
        result: Result<Option<i64>, Refusal>,
        publish: Option<String>,
    },
    /// Storage's reply to a barrier.
    BarrierSet {
        fence: Fence,
        result: Result<(), Refusal>,
    },
}

/// Why storage refused a write, as its reply says: a stale token with the high-water mark it
/// met, a sequencer check with the token of the lease it found live (`None`: none was).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    StaleFence { token: Fence, last: Fence },
    MissingFence,
    StaleSequencer { token: Fence, live: Option<Fence> },
    DuplicateIntent { key: String, original_balance: i64 },
    SessionTerminated,
}

impl Refusal {
    /// The refusal storage answers with this code (`stale_fence`, …; see
    /// [`WriteError::code`]) to a write of `token` under idempotency key `key`; `n` is the
    /// balance in the reply, `mark` the high-water mark it names (a stale token's only), and
    /// `live` the lease the sequencer check found live.
    pub fn from_code(
        code: &str,
        (token, key): (Option<Fence>, Option<&str>),
        n: i64,
        (mark, live): (Option<Fence>, Option<Fence>),
    ) -> Option<Self> {
        Some(match code {
            "stale_fence" => Self::StaleFence {
                token: token?,
                last: mark?,
            },
            "missing_fence" => Self::MissingFence,
            "stale_sequencer" => Self::StaleSequencer {
                token: token?,
                live,
            },
            "session_ended" => Self::SessionTerminated,
            "duplicate_intent" => Self::DuplicateIntent {
                key: key?.to_owned(),
                original_balance: n,
            },
            _ => return None,
        })
    }
}

impl From<&WriteError> for Refusal {
    fn from(e: &WriteError) -> Self {
        match e.clone() {
            WriteError::StaleFence { token, last } => Self::StaleFence { token, last },
            WriteError::MissingFence => Self::MissingFence,
            WriteError::StaleSequencer { token, live } => Self::StaleSequencer { token, live },
            WriteError::DuplicateIntent {
                key,
                original_balance,
            } => Self::DuplicateIntent {
                key,
                original_balance,
            },
            WriteError::SessionTerminated => Self::SessionTerminated,
        }
    }
}

impl From<Refusal> for WriteError {
    /// The refusal as the trace has it: everything in it is storage's reply.
    fn from(r: Refusal) -> Self {
        match r {
            Refusal::StaleFence { token, last } => Self::StaleFence { token, last },
            Refusal::MissingFence => Self::MissingFence,
            Refusal::StaleSequencer { token, live } => Self::StaleSequencer { token, live },
            Refusal::DuplicateIntent {
                key,
                original_balance,
            } => Self::DuplicateIntent {
                key,
                original_balance,
            },
            Refusal::SessionTerminated => Self::SessionTerminated,
        }
    }
}

impl From<EventKind> for Seen {
    /// What a client sees of an event: the event without the fields the fold derives.
    fn from(kind: EventKind) -> Self {
        match kind {
            EventKind::AcquireRefused {
                retry_in, nodes, ..
            } => Seen::AcquireRefused { retry_in, nodes },
            EventKind::LockWait { .. } => Seen::LockWait,
            EventKind::PauseEnded { .. } => Seen::PauseEnded,
            // A DEL that found no key knows why itself (the lease ran out): seen in full.
            EventKind::ReleaseNoop {
                via: ReleaseMode::CompareAndDelete,
                deleted,
                ..
            } => Seen::ReleaseNoop { deleted },
            EventKind::DeletedOthersLease { owner, .. } => Seen::DeletedOthersLease { owner },
            EventKind::ExtendFailed { watchdog, .. } => Seen::ExtendFailed { watchdog },
            EventKind::LockTimedOut {
                command,
                sent_at,
                cancelled,
                wrote_at,
                ..
            } => Seen::LockTimedOut {
                command,
                sent_at,
                cancelled,
                wrote_at,
            },
            EventKind::Failover {
                lost, next_fence, ..
            } => Seen::Failover {
                lost: lost.into_iter().map(|l| l.owner).collect(),
                next_fence,
            },
            EventKind::LockClockJumped { by, .. } => Seen::LockClockJumped { by },
            EventKind::StorageFailover { lag, lost } => Seen::StorageFailover {
                lag,
                lost: (lost.into_iter())
                    .map(|w| (w.request.writer, w.request.fence))
                    .collect(),
            },
            EventKind::WriteApplied {
                fence,
                amount,
                sent_at,
                result,
                publish,
                ..
            } => Seen::WriteApplied {
                fence,
                amount,
                sent_at,
                result: match &result {
                    Ok(_) if publish.is_some() => Ok(None),
                    Ok(balance) => Ok(Some(*balance)),
                    Err(e) => Err(e.into()),
                },
                publish,
            },
            EventKind::BarrierSet { fence, result } => Seen::BarrierSet {
                fence,
                result: result.map_err(|e| (&e).into()),
            },
            // A GET's value comes whole: empty, or the client's own lease with its token
            // (another's value is said without it: `Backend::say_told`, `observations_of`).
            kind => Seen::Event(kind),
        }
    }
}

/// What a client could have seen of an engine run: its events without the fields
/// [`super::recorded`] derives, and without the engine's own expiries (the fold derives them),
/// each with what its client believed right after (its snapshot's). A pause is the
/// harness's doing (the replay takes the engine's), so it says no client's belief.
/// Used to check the fold against the engine, which must agree on every deck run.
pub fn observations_of(trace: &Trace) -> Vec<Observation> {
    let mut writes = trace.writes.iter();
    let actor = |e: &TraceEvent| (e.actor.as_deref()).and_then(|a| trace.scenario.actor_index(a));
    let mut grants = Grants::new(trace.scenario.actors.len());
    let believes = |e: &TraceEvent| {
        let pause = matches!(
            e.kind,
            EventKind::PauseStarted { .. } | EventKind::PauseEnded { .. }
        );
        let name = e.actor.as_ref().filter(|_| !pause)?;
        Some(e.snapshot.believers.contains(name))
    };
    (trace.events.iter())
        .filter(|e| !matches!(e.kind, EventKind::LeaseExpired { .. }))
        .map(|e| {
            let applied = matches!(e.kind, EventKind::WriteApplied { .. });
            let request = applied.then(|| writes.next().map(|w| w.request.clone()));
            Observation {
                at: e.at,
                actor: actor(e),
                seen: seen_by(e),
                request: request.flatten(),
                grant: actor(e).and_then(|i| grants.see(i, e)),
                believes: believes(e),
            }
        })
        .collect()
}

/// What the client of event `e` saw of it: a GET that read another's value, without that
/// lease's token (the client is told it by the fold); anything else as [`Seen::from`] has it.
fn seen_by(e: &TraceEvent) -> Seen {
    match &e.kind {
        EventKind::LockValueRead {
            owner: Some(owner), ..
        } if e.actor.as_ref() != Some(owner) => Seen::LockValueRead {
            owner: owner.clone(),
        },
        kind => kind.clone().into(),
    }
}

/// What each client of an engine run knew of its own grants as it went: how many it had
/// had, and, for each write still in flight (oldest first: every write of a client takes
/// the same network delay), how many it had had when it sent it.
struct Grants {
    had: Vec<usize>,
    in_flight: Vec<VecDeque<usize>>,
}

impl Grants {
    fn new(clients: usize) -> Self {
        Self {
            had: vec![0; clients],
            in_flight: vec![VecDeque::new(); clients],
        }
    }

    /// Client `i`'s event `e`: for a write with a token that reached storage, the grant it
    /// was sent under ([`super::super::client::ClientState::grant`]).
    fn see(&mut self, i: usize, e: &TraceEvent) -> Option<usize> {
        match e.kind {
            EventKind::Acquired { .. } => self.had[i] += 1,
            EventKind::WriteSent { .. } => self.in_flight[i].push_back(self.had[i]),
            EventKind::WriteApplied { fence, sent_at, .. } => {
                let had = match sent_at == e.at {
                    true => Some(self.had[i]),
                    false => self.in_flight[i].pop_front(),
                };
                return fence.and(had?.checked_sub(1));
            }
            _ => {}
        }
        None
    }
}
