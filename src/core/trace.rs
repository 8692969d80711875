//! What a run produced: facts only. Each event says what happened and in what state the
//! world was left; the words for it are written elsewhere ([`super::story`]), and the
//! verdicts are read off the facts by [`super::audit`].

use serde::{Deserialize, Serialize};

use super::clock::Millis;
use super::lease::{Fence, Lease};
use super::ledger::{WriteError, WriteRecord};
use super::scenario::{PauseCause, ReleaseMode, Scenario, Step};

mod grant;
mod struck;
mod summary;
mod why;
pub use grant::{nth_grant, rolled_back, superseded, Grant};
pub(crate) use struck::fault_event;
pub use summary::{Recording, Summary};
pub(crate) use why::{cut_short_by_a_jump, ends_by_lock_clock, lease_ended_at};

/// Where an event is drawn on the timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Lane {
    /// The actor with this index in `Scenario::actors`.
    Actor(usize),
    Lease,
    Storage,
}

/// What the owner of a lease knew when the lock server let it go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Awareness {
    /// Frozen in a pause: it cannot know.
    Paused,
    /// Running, and still believes it holds the lease.
    Unaware,
    /// It had already stopped believing (released, gave up, or never knew of it).
    Knows,
}

/// Why a lease ended without a release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ExpiryCause {
    /// Its TTL ran out on the lock server's clock.
    Ttl,
    /// A forward step of the lock node's clock ended it early.
    ClockJump,
    /// A lease that a failed primary lost: only its holder still counted it, until its TTL.
    LostInFailover,
    /// A PostgreSQL row lock whose session sat idle in its transaction for
    /// `idle_in_transaction_session_timeout`: the server terminated the session (SQLSTATE
    /// 25P03), rolled its transaction back and released the lock.
    IdleTimeout,
}

/// Why a release deleted nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum NoopReason {
    /// The key now holds someone else's lease.
    OtherHolder { owner: String, fence: Fence },
    /// The caller's lease had already expired.
    Expired,
    /// The failed primary lost the caller's lease.
    Lost,
    /// The caller never held the lease.
    NeverHeld,
}

/// Why a write was not sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SkipReason {
    /// The actor never got a token.
    NoToken,
    /// A retry with nothing sent before.
    NothingToRetry,
}

/// What a provider call came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderOutcome {
    /// A new idempotency key: the provider charged.
    Charged,
    /// The key was already used: the provider returned the first call's result, no charge.
    Deduped,
    /// The caller's claim row was refused, so it never called.
    NotCalled,
}

/// A command a client sends to the lock service (what a [`Partition`] can leave unanswered).
///
/// [`Partition`]: super::scenario::Partition
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LockCommand {
    /// `SET NX PX` (the acquire script).
    Acquire,
    /// A watchdog's renewal, sent while the job works beside it.
    Renew,
    /// An explicit extend by the job itself.
    Extend,
    /// An `is_held` check.
    CheckHeld,
    /// The release (compare-and-delete, or the GET / DEL of the unsafe kinds).
    Release,
}

impl LockCommand {
    /// The lock command a step sends, if it sends one (a watchdog's renewal is found inside
    /// `Step::WorkRenewing`). The engine and the replay harness both drop these in a partition.
    pub fn sent_by(step: &Step) -> Option<Self> {
        match step {
            Step::Acquire { .. } => Some(LockCommand::Acquire),
            Step::CheckHeld => Some(LockCommand::CheckHeld),
            Step::Extend => Some(LockCommand::Extend),
            Step::Release => Some(LockCommand::Release),
            _ => None,
        }
    }

    /// The command in a few words: "renewal", "acquire", …
    pub fn noun(self) -> &'static str {
        match self {
            LockCommand::Acquire => "acquire",
            LockCommand::Renew => "renewal",
            LockCommand::Extend => "extend",
            LockCommand::CheckHeld => "is_held check",
            LockCommand::Release => "release",
        }
    }

    /// The short form of a timeline label: "renew", "acquire", …
    pub fn short(self) -> &'static str {
        match self {
            LockCommand::Acquire => "acquire",
            LockCommand::Renew => "renew",
            LockCommand::Extend => "extend",
            LockCommand::CheckHeld => "is_held",
            LockCommand::Release => "release",
        }
    }
}

/// The lease a clock step cut short.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shortened {
    pub owner: String,
    pub fence: Fence,
    /// When the lease was granted to end, which the holder's own clock still believes.
    pub granted_until: Millis,
    /// When it ends now on the lock node.
    pub ends_at: Millis,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum EventKind {
    Acquired {
        fence: Fence,
        expires_at: Millis,
        /// Redlock: the nodes that answered OK (empty for a single lock server).
        #[serde(default)]
        nodes: Vec<usize>,
        /// The grant carried no token: a separate counter hands one out a round trip later
        /// (`fence` is then only the lease's number).
        #[serde(default)]
        token_later: bool,
    },
    AcquireRefused {
        holder: String,
        /// When the lock is free again; `None` when the server still holds a lease past its
        /// TTL and its reply does not say until when (a recorded run: etcd revokes on its
        /// own schedule). A number when present, so every trace reads as before.
        until: Option<Millis>,
        retry_in: Millis,
        /// Redlock: the nodes that answered OK, too few for a majority (their keys are deleted again).
        #[serde(default)]
        nodes: Vec<usize>,
    },
    /// `SELECT … FOR UPDATE` found the row locked by `holder`'s transaction: the statement
    /// blocks in the row's lock queue (no refusal, no retry) until that transaction ends.
    LockWait {
        holder: String,
    },
    /// A statement on a session the server has terminated: the client gets the FATAL
    /// (SQLSTATE 25P03) and its connection is gone, so the actor stops.
    ConnectionLost,
    LeaseExpired {
        owner: String,
        fence: Fence,
        cause: ExpiryCause,
        owner_knew: Awareness,
    },
    PauseStarted {
        until: Millis,
        cause: PauseCause,
    },
    PauseEnded {
        /// The actor still believes it holds a lease the lock server no longer has.
        lease_gone: bool,
    },
    Checked {
        held: bool,
    },
    /// `Step::CheckDeadline`: the time since the actor's acquire (or last renewal) on its own
    /// clock, and its local deadline (TTL − margin); `ok` while `local < deadline`.
    DeadlineChecked {
        local: Millis,
        deadline: Millis,
        ok: bool,
    },
    GaveUp,
    WriteSent {
        fence: Option<Fence>,
        amount: i64,
        arrives_at: Millis,
    },
    /// The client stopped waiting for the reply; the request is still in flight.
    WriteTimedOut {
        fence: Option<Fence>,
        sent_at: Millis,
        arrives_at: Millis,
    },
    WriteApplied {
        fence: Option<Fence>,
        amount: i64,
        sent_at: Millis,
        result: Result<i64, WriteError>,
        /// The newest grant, if the lock made one after the writer's own: the writer's lease
        /// had been superseded by the time its write reached storage. Compared by grant, not
        /// by token value, so it also catches a rolled-back counter handing a token out twice.
        superseded_by: Option<Grant>,
        /// The highest token of a write storage had accepted before this one, checked or
        /// not (a barrier is not a write, so it does not count here).
        highest_accepted: Option<Fence>,
        /// For a publish, the result it writes (then `amount` is 0).
        publish: Option<String>,
    },
    WriteSkipped {
        reason: SkipReason,
    },
    Extended {
        fence: Fence,
        expires_at: Millis,
        /// `Some` when a watchdog renewed during work: its next renewal, if before the work ends.
        /// Written only when `Some`, so that `null` can say "a watchdog's last renewal".
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "present"
        )]
        watchdog: Option<Option<Millis>>,
        /// Redlock: the nodes that took the extension (empty for a single lock server);
        /// only their keys' expiries moved. Written only when any.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        nodes: Vec<usize>,
    },
    ExtendFailed {
        watchdog: bool,
        /// When the lease had ended, if it ended before this attempt.
        lease_ended_at: Option<Millis>,
    },
    Released {
        fence: Fence,
        via: ReleaseMode,
    },
    ReleaseNoop {
        via: ReleaseMode,
        reason: NoopReason,
        /// Redlock: the nodes where the script still found and deleted the caller's own key.
        /// The release runs on every node, but a minority of keys was no lock to release.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        deleted: Vec<usize>,
    },
    /// The GET half of a GET-then-DEL release: what the key held (`None`: nothing live).
    LockValueRead {
        owner: Option<String>,
        fence: Option<Fence>,
    },
    /// The unconditional DEL of a GET-then-DEL release removed another actor's live lease.
    DeletedOthersLease {
        owner: String,
        fence: Fence,
    },
    /// The last debit is resent unchanged because its reply was lost.
    Retried {
        fence: Option<Fence>,
        amount: i64,
        idempotency_key: Option<String>,
    },
    /// The lock node's clock stepped forward by `by`.
    LockClockJumped {
        by: Millis,
        shortened: Option<Shortened>,
    },
    /// The primary crashed and a replica without the lock keys took over; `lost` are the
    /// leases it had granted that were still live.
    Failover {
        lost: Vec<Lease>,
        /// The token the promoted replica will grant next.
        next_fence: Fence,
        /// The token counter went back with the lost keys (it lived on the same Redis).
        rolled_back: bool,
    },
    /// Storage's primary died and its standby, `lag` ms behind, was promoted: `lost` are the
    /// writes the primary had accepted (and acknowledged) that the standby never got.
    StorageFailover {
        lag: Millis,
        lost: Vec<WriteRecord>,
    },
    /// An epoch barrier written to storage (see `Ledger::barrier`).
    BarrierSet {
        fence: Fence,
        result: Result<(), WriteError>,
    },
    /// A call to a system that never sees the token: fencing cannot stop it.
    /// `lease_live`: whether the caller still held a live lease at that moment.
    SideEffect {
        what: String,
        lease_live: bool,
    },
    /// A call to a provider that never sees the token, with an idempotency key
    /// ([`Step::ProviderCall`](super::scenario::Step::ProviderCall)).
    ProviderCall {
        what: String,
        idempotency_key: String,
        outcome: ProviderOutcome,
        /// Whether the caller still held a live lease at that moment.
        lease_live: bool,
    },
    /// A separate counter handed out the token, a round trip after the lease was granted.
    TokenTaken {
        fence: Fence,
    },
    /// The job's status, read from storage under the lease: `done` when one of its
    /// debits has already landed (the actor then skips to its release).
    JobChecked {
        done: bool,
    },
    /// A paused worker woke with both its work finished and a renewal overdue: its two
    /// threads race, and `worker_first` says which ran first (drawn from the scenario seed).
    ResumeRace {
        worker_first: bool,
    },
    /// The client sent a lock command during a partition: it is dropped, never executed, and
    /// no reply will come. `timeout_at`: when the client's own timeout gives up on it
    /// (`None`: it waits for ever). A watchdog's renewal leaves the job working beside it.
    LockUnanswered {
        command: LockCommand,
        timeout_at: Option<Millis>,
    },
    /// The lock service is still answering the fleet's renewals sent at one instant
    /// ([`Herd`]): the client's command waits behind `ahead` of them, and runs there and is
    /// answered at `served_at`.
    ///
    /// [`Herd`]: super::scenario::Herd
    LockQueued {
        command: LockCommand,
        ahead: u32,
        served_at: Millis,
    },
    /// The client's lock-service member is on a minority side: it cannot reach a leader, so it
    /// refuses the command with "etcdserver: no leader" (a live member answers; only a stopped
    /// or unreachable one answers nothing). The client keeps retrying a keep-alive (renew,
    /// extend) and learns its lease is gone at `learns_at`, its lease deadline as it last
    /// heard it (clientv3 closes the keep-alive channel when no answer comes within the TTL,
    /// and `Session.Done()` fires); any other command it gives up on at its own timeout.
    LockNoLeader {
        command: LockCommand,
        learns_at: Option<Millis>,
    },
    /// The client gave up on a lock command it sent at `sent_at` and got no reply to (or, after
    /// [`EventKind::LockNoLeader`], no answer but refusals: for a keep-alive, at its lease deadline).
    /// `cancelled`: it stopped its job on that (a renewal or extend treated as failed, an
    /// is_held check as false). `wrote_at`: when its job had sent its last write, if it had.
    LockTimedOut {
        command: LockCommand,
        sent_at: Millis,
        cancelled: bool,
        wrote_at: Option<Millis>,
        /// When its lease had ended on the lock service, if it had (filled in from the
        /// lock's side: the client cannot see it).
        lease_ended_at: Option<Millis>,
    },
}

/// The state of the world right after an event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    pub at: Millis,
    /// The live lease, as the lock server sees it.
    pub holder: Option<Lease>,
    pub balance: i64,
    /// Storage high-water mark (only kept while fencing is on).
    pub last_fence: Option<Fence>,
    /// Token of the last accepted write, checked or not.
    pub last_write_fence: Option<Fence>,
    /// The result row's value, for a job that publishes.
    pub result: Option<String>,
    /// Actors that believe they hold the lease; more than one is the whole problem.
    pub believers: Vec<String>,
    /// Leases a failed primary granted and lost that are still within their TTL: their
    /// holders were told "OK", though the current primary has never heard of them.
    #[serde(default)]
    pub lost_leases: Vec<Lease>,
    /// Redlock: further clients that hold a majority of keys at once (the lock granted twice).
    #[serde(default)]
    pub other_holders: Vec<Lease>,
}

/// One entry of the trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceEvent {
    pub at: Millis,
    /// Who acted; `None` for the lock server's own events.
    pub actor: Option<String>,
    pub lane: Lane,
    pub kind: EventKind,
    pub snapshot: Snapshot,
}

impl TraceEvent {
    /// Stable result code: `ok`, `lock_held`, `stale_fence`, `not_holder`, …
    pub fn result_code(&self) -> &'static str {
        match &self.kind {
            EventKind::AcquireRefused { .. } => "lock_held",
            EventKind::LockWait { .. } => "lock_wait",
            EventKind::ConnectionLost => "session_ended",
            EventKind::WriteApplied { result: Err(e), .. } => e.code(),
            EventKind::DeadlineChecked { ok: false, .. } => "past_deadline",
            EventKind::Checked { held: false }
            | EventKind::ExtendFailed { .. }
            | EventKind::ReleaseNoop { .. } => "not_holder",
            EventKind::WriteSkipped { .. } | EventKind::GaveUp => "skipped",
            EventKind::WriteTimedOut { .. } | EventKind::LockTimedOut { .. } => "timeout",
            EventKind::LockUnanswered { .. } => "no_reply",
            EventKind::LockNoLeader { .. } => "no_leader",
            EventKind::LockQueued { .. } => "queued",
            EventKind::BarrierSet { result: Err(e), .. } => e.code(),
            EventKind::DeletedOthersLease { .. } => "deleted_other_lease",
            EventKind::SideEffect { .. } => "unfenced",
            EventKind::ProviderCall {
                outcome: ProviderOutcome::Charged,
                ..
            } => "charged",
            EventKind::ProviderCall {
                outcome: ProviderOutcome::Deduped,
                ..
            } => "deduped",
            EventKind::ProviderCall {
                outcome: ProviderOutcome::NotCalled,
                ..
            } => "not_called",
            EventKind::Failover { .. } => "failover",
            EventKind::StorageFailover { .. } => "storage_failover",
            EventKind::LockClockJumped { .. } => "clock_jump",
            _ => "ok",
        }
    }

    /// The token involved, if any.
    pub fn fence(&self) -> Option<Fence> {
        match &self.kind {
            EventKind::Acquired { fence, .. }
            | EventKind::LeaseExpired { fence, .. }
            | EventKind::Extended { fence, .. }
            | EventKind::Released { fence, .. }
            | EventKind::DeletedOthersLease { fence, .. }
            | EventKind::BarrierSet { fence, .. }
            | EventKind::TokenTaken { fence } => Some(*fence),
            EventKind::WriteSent { fence, .. }
            | EventKind::WriteTimedOut { fence, .. }
            | EventKind::WriteApplied { fence, .. }
            | EventKind::Retried { fence, .. }
            | EventKind::LockValueRead { fence, .. } => *fence,
            _ => None,
        }
    }

    /// An accepted write whose lease a newer grant had already superseded: a late write.
    pub fn is_late_write(&self) -> bool {
        matches!(
            &self.kind,
            EventKind::WriteApplied {
                result: Ok(_),
                superseded_by: Some(_),
                ..
            }
        )
    }

    /// An accepted write with a lower token than one storage had already accepted.
    pub fn is_out_of_order(&self) -> bool {
        matches!(
            &self.kind,
            EventKind::WriteApplied { fence: Some(f), result: Ok(_), highest_accepted: Some(h), .. } if f < h
        )
    }
}

/// How a lease span ended on the lease lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum LeaseEnd {
    Expired,
    Released,
    /// Still live at the end of the horizon.
    Open,
}

/// A lease as a band on the lease lane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LeaseSpan {
    pub owner: String,
    pub fence: Fence,
    pub from: Millis,
    pub to: Millis,
    pub end: LeaseEnd,
}

/// A complete run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trace {
    pub scenario: Scenario,
    /// The state before the first event (step 0).
    pub initial: Snapshot,
    pub events: Vec<TraceEvent>,
    /// The storage's append-only write log, in arrival order.
    pub writes: Vec<WriteRecord>,
    pub summary: Summary,
    /// Set when the events were observed on real servers rather than simulated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded: Option<Recording>,
}

impl Trace {
    /// Number of steps: 0 is the initial state, `len()` is after the last event.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The state after `step` events (clamped).
    pub fn snapshot_at(&self, step: usize) -> &Snapshot {
        match step.min(self.len()) {
            0 => &self.initial,
            n => &self.events[n - 1].snapshot,
        }
    }

    /// The event that produced step `step`, if any.
    pub fn event_at(&self, step: usize) -> Option<&TraceEvent> {
        step.checked_sub(1).and_then(|i| self.events.get(i))
    }

    /// The write log as it stands after `step` events.
    pub fn writes_until(&self, step: usize) -> &[WriteRecord] {
        let at = step.min(self.len());
        let n = self.events[..at]
            .iter()
            .filter(|e| matches!(e.kind, EventKind::WriteApplied { .. }))
            .count();
        &self.writes[..n]
    }

    /// Lease bands for the lease lane, derived from the events. A band is found by owner and
    /// token, newest first: a rolled-back counter can hand one token to two owners.
    pub fn lease_spans(&self) -> Vec<LeaseSpan> {
        let mut spans: Vec<LeaseSpan> = Vec::new();
        let band = |spans: &[LeaseSpan], owner: &str, fence: Fence| {
            spans
                .iter()
                .rposition(|s| s.fence == fence && s.owner == owner)
        };
        for e in &self.events {
            let actor = e.actor.as_deref().unwrap_or_default();
            let (owner, fence, end) = match &e.kind {
                EventKind::Acquired {
                    fence, expires_at, ..
                } => {
                    spans.push(LeaseSpan {
                        owner: actor.to_owned(),
                        fence: *fence,
                        from: e.at,
                        to: *expires_at,
                        end: LeaseEnd::Open,
                    });
                    continue;
                }
                EventKind::Extended {
                    fence, expires_at, ..
                } => {
                    if let Some(i) = band(&spans, actor, *fence) {
                        spans[i].to = *expires_at;
                    }
                    continue;
                }
                // A clock step moves the band's due end (its holder still believes the old one).
                EventKind::LockClockJumped {
                    shortened: Some(s), ..
                } => {
                    if let Some(i) = band(&spans, &s.owner, s.fence) {
                        spans[i].to = s.ends_at;
                    }
                    continue;
                }
                EventKind::Released { fence, .. } => (actor, *fence, LeaseEnd::Released),
                // A clock jump can end a lease before the `expires_at` it was granted with.
                EventKind::LeaseExpired { owner, fence, .. } => {
                    (owner.as_str(), *fence, LeaseEnd::Expired)
                }
                EventKind::DeletedOthersLease { owner, fence } => {
                    (owner.as_str(), *fence, LeaseEnd::Released)
                }
                _ => continue,
            };
            // An expiry ends the band due to end now, if there is one: the same owner can
            // hold the same token twice when a failover lost its first grant.
            let due = (end == LeaseEnd::Expired)
                .then(|| {
                    spans.iter().rposition(|s| {
                        s.fence == fence
                            && s.owner == owner
                            && s.end == LeaseEnd::Open
                            && s.to == e.at
                    })
                })
                .flatten();
            if let Some(i) = due.or_else(|| band(&spans, owner, fence)) {
                spans[i].to = e.at;
                spans[i].end = end;
            }
        }
        spans
    }

    /// Intervals during which two or more actors believed they held the lease.
    pub fn conflict_spans(&self) -> Vec<(Millis, Millis)> {
        self.spans_where(|s| s.believers.len() > 1)
    }

    /// For each actor, the intervals during which it believed it held the lease.
    pub fn belief_spans(&self, actor: usize) -> Vec<(Millis, Millis)> {
        let Some(name) = self.scenario.actors.get(actor).map(|a| a.name.as_str()) else {
            return Vec::new();
        };
        self.spans_where(|s| s.believers.iter().any(|b| b == name))
    }

    fn spans_where(&self, holds: impl Fn(&Snapshot) -> bool) -> Vec<(Millis, Millis)> {
        let mut spans = Vec::new();
        let mut open: Option<Millis> = None;
        for e in &self.events {
            match (open, holds(&e.snapshot)) {
                (None, true) => open = Some(e.at),
                (Some(from), false) => {
                    spans.push((from, e.at));
                    open = None;
                }
                _ => {}
            }
        }
        if let Some(from) = open {
            spans.push((from, self.scenario.horizon));
        }
        spans
    }
}

/// A field that is present, `null` included: `Some` of what it holds. With `#[serde(default)]`
/// an absent field is `None`, so an `Option<Option<_>>` keeps all three of its states.
fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}
