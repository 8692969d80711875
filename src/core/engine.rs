//! The deterministic scenario engine: a discrete-event simulation over an injected
//! clock. Events at the same instant are ordered by a fixed class and then by
//! insertion, so one scenario always yields one trace. Stepping back in the UI is
//! indexing into that trace, never undoing.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::clock::{Clock, Millis, SplitMix64};
use super::lease::{renewal_interval, Acquire, Fence, Lease, LeaseLock};
use super::ledger::{FencingPolicy, Ledger, WriteError, WriteRecord, WriteRequest};
use super::scenario::{ReleaseMode, Scenario, Step, GET_DEL_GAP};

/// From this horizon on, narration counts in seconds ("t=15.0 s") instead of ms.
pub const SECONDS_FROM: Millis = 10_000;

/// Where an event is drawn on the timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Lane {
    /// The actor with this index in `Scenario::actors`.
    Actor(usize),
    Lease,
    Storage,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum EventKind {
    Acquired {
        fence: Fence,
        expires_at: Millis,
    },
    AcquireRefused {
        holder: String,
        until: Millis,
    },
    LeaseExpired {
        owner: String,
        fence: Fence,
    },
    PauseStarted {
        until: Millis,
    },
    PauseEnded,
    Checked {
        held: bool,
    },
    GaveUp,
    WriteSent {
        fence: Option<Fence>,
        amount: i64,
        arrives_at: Millis,
    },
    /// `overtaken`: accepted although a newer lock generation had already written (the violation).
    WriteApplied {
        fence: Option<Fence>,
        amount: i64,
        sent_at: Millis,
        result: Result<i64, WriteError>,
        overtaken: bool,
    },
    WriteSkipped,
    Extended {
        fence: Fence,
        expires_at: Millis,
    },
    ExtendFailed,
    Released {
        fence: Fence,
    },
    ReleaseNoop,
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
    },
    /// The lock node's clock stepped forward by `by`.
    LockClockJumped {
        by: Millis,
    },
    /// The primary crashed and a replica without the lock keys took over; `lost` are the
    /// leases it had granted that were still live.
    Failover {
        lost: Vec<Lease>,
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
    /// Actors that believe they hold the lease; more than one is the whole problem.
    pub believers: Vec<String>,
    /// Leases a failed primary granted and lost that are still within their TTL: their
    /// holders were told "OK", though the current primary has never heard of them.
    #[serde(default)]
    pub lost_leases: Vec<Lease>,
}

/// One entry of the trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceEvent {
    pub at: Millis,
    /// Who acted; `None` for the lock server's own expiry.
    pub actor: Option<String>,
    pub lane: Lane,
    pub kind: EventKind,
    pub narration: String,
    pub snapshot: Snapshot,
}

impl TraceEvent {
    /// Stable result code: `ok`, `lock_held`, `stale_fence`, `not_holder`, …
    pub fn result_code(&self) -> &'static str {
        match &self.kind {
            EventKind::AcquireRefused { .. } => "lock_held",
            EventKind::WriteApplied { result: Err(e), .. } => e.code(),
            EventKind::Checked { held: false }
            | EventKind::ExtendFailed
            | EventKind::ReleaseNoop => "not_holder",
            EventKind::WriteSkipped | EventKind::GaveUp => "skipped",
            EventKind::BarrierSet { result: Err(e), .. } => e.code(),
            EventKind::DeletedOthersLease { .. } => "deleted_other_lease",
            EventKind::SideEffect { .. } => "unfenced",
            EventKind::Failover { .. } => "failover",
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
            | EventKind::Released { fence }
            | EventKind::DeletedOthersLease { fence, .. }
            | EventKind::BarrierSet { fence, .. } => Some(*fence),
            EventKind::WriteSent { fence, .. }
            | EventKind::WriteApplied { fence, .. }
            | EventKind::Retried { fence, .. }
            | EventKind::LockValueRead { fence, .. } => *fence,
            _ => None,
        }
    }

    /// Short label for the timeline marker.
    pub fn label(&self) -> String {
        match &self.kind {
            EventKind::Acquired { fence, .. } => format!("acquire #{fence}"),
            EventKind::AcquireRefused { .. } => "lock_held".to_owned(),
            EventKind::LeaseExpired { fence, .. } => format!("#{fence} expires"),
            EventKind::PauseStarted { .. } => "pause".to_owned(),
            EventKind::PauseEnded => "wakes".to_owned(),
            EventKind::Checked { held } => format!("is_held = {held}"),
            EventKind::GaveUp => "gives up".to_owned(),
            EventKind::WriteSent { fence, amount, .. } => {
                format!("send −{amount} {}", token_label(*fence))
            }
            EventKind::WriteApplied {
                fence,
                amount,
                result,
                ..
            } => match result {
                Ok(_) => format!("−{amount} {} ok", token_label(*fence)),
                Err(e) => format!("−{amount} {} {}", token_label(*fence), e.code()),
            },
            EventKind::WriteSkipped => "no token: skip".to_owned(),
            EventKind::Extended { fence, .. } => format!("extend #{fence}"),
            EventKind::ExtendFailed => "extend failed".to_owned(),
            EventKind::Released { fence } => format!("release #{fence}"),
            EventKind::ReleaseNoop => "release no-op".to_owned(),
            EventKind::LockValueRead { fence, .. } => match fence {
                Some(f) => format!("GET → #{f}"),
                None => "GET → nil".to_owned(),
            },
            EventKind::DeletedOthersLease { owner, fence } => format!("DEL {owner}'s #{fence}"),
            EventKind::Retried { fence, amount } => {
                format!("retry −{amount} {}", token_label(*fence))
            }
            EventKind::LockClockJumped { by } => format!("clock +{by} ms"),
            EventKind::Failover { lost } => match lost.first() {
                Some(l) => format!("failover: #{} lost", l.fence),
                None => "failover".to_owned(),
            },
            EventKind::BarrierSet { fence, result } => match result {
                Ok(()) => format!("barrier #{fence}"),
                Err(e) => format!("barrier #{fence} {}", e.code()),
            },
            EventKind::SideEffect { .. } => "side effect (unfenced)".to_owned(),
        }
    }
}

/// "50 ms", or "15.0 s" when the scenario counts in seconds.
fn duration_text(secs: bool, ms: Millis) -> String {
    if secs {
        // Integer arithmetic: rounds to tenths like `{:.1}` without float formatting in the wasm.
        let tenths = (ms + 50) / 100;
        format!("{}.{} s", tenths / 10, tenths % 10)
    } else {
        format!("{ms} ms")
    }
}

fn token_label(fence: Option<Fence>) -> String {
    fence.map_or_else(|| "(no token)".to_owned(), |f| format!("#{f}"))
}

/// How a lease span ended on the lease lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LeaseEnd {
    Expired,
    Released,
    /// Still live at the end of the horizon.
    Open,
}

/// A lease as a band on the lease lane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaseSpan {
    pub owner: String,
    pub fence: Fence,
    pub from: Millis,
    pub to: Millis,
    pub end: LeaseEnd,
}

/// What a run amounts to, for the side-by-side comparison and the explorer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub final_balance: i64,
    pub accepted_writes: usize,
    pub rejected_writes: usize,
    /// Writes accepted although a newer lock generation had already written: the safety violation.
    pub stale_writes_accepted: usize,
    /// Most actors that believed at once that they held the lease.
    pub max_believers: usize,
    pub last_fence: Option<Fence>,
    pub last_write_fence: Option<Fence>,
    /// Most leases live at once: granted and neither expired, released nor deleted, counting
    /// those a failed primary lost. Above 1 only after a failover: two holders according to
    /// the lock service itself, not just two believers.
    #[serde(default)]
    pub max_live_leases: usize,
    /// Side effects (calls that carry no token) made by an actor without a live lease.
    #[serde(default)]
    pub unprotected_side_effects: usize,
}

impl Summary {
    /// The lock service itself granted the same lock to two clients at once.
    pub fn two_holders(&self) -> bool {
        self.max_live_leases > 1
    }

    /// Two clients believed they held the lock at the same time.
    pub fn conflict(&self) -> bool {
        self.max_believers > 1
    }

    /// Storage never accepted a write from an older lock generation.
    pub fn storage_safe(&self) -> bool {
        self.stale_writes_accepted == 0
    }
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

    /// Lease bands for the lease lane, derived from the events.
    pub fn lease_spans(&self) -> Vec<LeaseSpan> {
        let mut spans: Vec<LeaseSpan> = Vec::new();
        for e in &self.events {
            match &e.kind {
                EventKind::Acquired { fence, expires_at } => spans.push(LeaseSpan {
                    owner: e.actor.clone().unwrap_or_default(),
                    fence: *fence,
                    from: e.at,
                    to: *expires_at,
                    end: LeaseEnd::Open,
                }),
                EventKind::Extended { fence, expires_at } => {
                    if let Some(s) = spans.iter_mut().find(|s| s.fence == *fence) {
                        s.to = *expires_at;
                    }
                }
                EventKind::Released { fence } => {
                    if let Some(s) = spans.iter_mut().find(|s| s.fence == *fence) {
                        s.to = e.at;
                        s.end = LeaseEnd::Released;
                    }
                }
                // A clock jump can end a lease before the `expires_at` it was granted with.
                EventKind::LeaseExpired { fence, .. } => {
                    if let Some(s) = spans.iter_mut().find(|s| s.fence == *fence) {
                        s.to = e.at;
                        s.end = LeaseEnd::Expired;
                    }
                }
                EventKind::DeletedOthersLease { fence, .. } => {
                    if let Some(s) = spans.iter_mut().find(|s| s.fence == *fence) {
                        s.to = e.at;
                        s.end = LeaseEnd::Released;
                    }
                }
                _ => {}
            }
        }
        spans
    }

    /// Intervals during which two or more actors believed they held the lease.
    pub fn conflict_spans(&self) -> Vec<(Millis, Millis)> {
        let mut spans = Vec::new();
        let mut open: Option<Millis> = None;
        for e in &self.events {
            let conflict = e.snapshot.believers.len() > 1;
            match (open, conflict) {
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

    /// What the presenter can say out loud at `step`.
    pub fn talking_point(&self, step: usize) -> &'static str {
        let Some(e) = self.event_at(step) else {
            return match (step, super::deck::find(&self.scenario.id)) {
                (0, Some(entry)) if entry.id != "gc-pause" => entry.question,
                (0, _) => "Two clients, one account, one lease lock. Watch what the lock promises and what the storage checks.",
                _ => "",
            };
        };
        let fencing = self.scenario.policy.checks_fence();
        match &e.kind {
            EventKind::Acquired { fence, .. } if fence.0 > self.scenario.first_fence => {
                "Each successful acquire mints a bigger token. The old holder still has its old one."
            }
            EventKind::Acquired { .. } => {
                "A lease is a promise with a timer: nobody else should write until it runs out. Nothing enforces it at the storage."
            }
            EventKind::AcquireRefused { .. } => "SET NX works while the lease is live: nobody else gets it.",
            EventKind::LeaseExpired { .. } => {
                "The lock server cannot know the holder is frozen; it only knows the timer ran out."
            }
            EventKind::PauseStarted { .. } => {
                "GC, a page fault, VM migration, a slow disk: the process cannot tell it was stopped."
            }
            EventKind::PauseEnded => "It wakes with no idea time passed, and still believes it holds the lock.",
            EventKind::Checked { .. } => {
                "Checking is_held first does not help: the pause can land right after the check (TOCTOU)."
            }
            EventKind::GaveUp => "Giving up on a failed check is right, but it only covers pauses before the check.",
            EventKind::WriteSent { .. } => "A packet can sit in a queue long after the lease that sent it is gone.",
            EventKind::WriteApplied { result: Err(WriteError::StaleFence { .. }), .. } => {
                "Storage compares tokens and refuses the older generation. Safety comes from the check at the resource, not from the lock."
            }
            EventKind::WriteApplied { result: Err(_), .. } => {
                "An idempotency key stops the same intent twice; it is not a fence."
            }
            EventKind::WriteApplied { overtaken: true, .. } => {
                "Lost update: storage took a write from a lock generation that had already ended. The lease alone is not mutual exclusion."
            }
            EventKind::WriteApplied { .. } if fencing => "The write carries its token; storage keeps the highest token it has accepted.",
            EventKind::WriteApplied { .. } => "Storage is not checking tokens: it trusts whoever shows up.",
            EventKind::WriteSkipped => "No token, no write.",
            EventKind::Extended { .. } => "Renew at about a third of the TTL, with jitter, and check ownership atomically.",
            EventKind::ExtendFailed => "If renewal fails, stop working: self-cancel before the lease is gone.",
            EventKind::Released { .. } => "Release is compare-and-delete (a Lua script): it only deletes your own lease.",
            EventKind::ReleaseNoop => "With GET-then-DEL instead, this late release could have deleted someone else's lease.",
            EventKind::LockValueRead { .. } => {
                "GET then DEL is two commands: the key can change hands between them."
            }
            EventKind::DeletedOthersLease { .. } => {
                "The unconditional DEL deleted someone else's lease. Compare-and-delete in one Lua script cannot."
            }
            EventKind::Retried { .. } => {
                "A lost reply makes a retry look like a new request: same token, same idempotency key."
            }
            EventKind::LockClockJumped { .. } => {
                "Lease expiry trusts the lock node's clock. A clock step shortens every lease, and the holder cannot tell."
            }
            EventKind::Failover { .. } => {
                "Async replication: the primary said OK, then forgot. Now the lock service itself grants the lock twice."
            }
            EventKind::BarrierSet { result: Ok(()), .. } if fencing => {
                "Establish the new epoch at the resource before starting: the old token is refused even before the new holder writes."
            }
            EventKind::BarrierSet { result: Ok(()), .. } => "A barrier only helps if the storage checks tokens.",
            EventKind::BarrierSet { .. } => "A refused barrier means a newer epoch already started: do not start.",
            EventKind::SideEffect { lease_live: false, .. } => {
                "Fencing only protects what checks the token. This call did not, so the stale worker ran it anyway."
            }
            EventKind::SideEffect { .. } => {
                "A call outside the storage carries no token; only its own idempotency key could stop a repeat."
            }
        }
    }

    /// A time as the narration writes it: "55 ms", or "15.0 s" for long scenarios.
    pub fn time_label(&self, t: Millis) -> String {
        duration_text(self.scenario.horizon >= SECONDS_FROM, t)
    }

    /// For each actor, the intervals during which it believed it held the lease.
    pub fn belief_spans(&self, actor: usize) -> Vec<(Millis, Millis)> {
        let Some(name) = self.scenario.actors.get(actor).map(|a| a.name.as_str()) else {
            return Vec::new();
        };
        let mut spans = Vec::new();
        let mut open: Option<Millis> = None;
        for e in &self.events {
            let believes = e.snapshot.believers.iter().any(|b| b == name);
            match (open, believes) {
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

/// Order of simultaneous events: the world changes (clock step, expiry, failover) before
/// anyone acts at that instant. A clock step comes first because it can expire a lease on
/// the spot; an expiry comes before a failover so a lease ending at that instant is narrated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    ClockJump = 0,
    Expiry = 1,
    Failover = 2,
    PauseEnd = 3,
    PauseStart = 4,
    Delivery = 5,
    Step = 6,
}

#[derive(Debug, Clone)]
enum Pending {
    ClockJump {
        by: Millis,
    },
    Failover,
    Expiry {
        fence: Fence,
    },
    PauseStart {
        actor: usize,
        until: Millis,
    },
    PauseEnd {
        actor: usize,
    },
    Delivery {
        actor: usize,
        request: WriteRequest,
        sent_at: Millis,
    },
    Step {
        actor: usize,
    },
}

#[derive(Debug, Clone, Default)]
struct ActorState {
    pc: usize,
    fence: Option<Fence>,
    believes: bool,
    done: bool,
    paused: bool,
    /// The last debit sent, for `Step::Retry`.
    last_write: Option<WriteRequest>,
    /// GET-then-DEL: the GET saw our own value and the DEL is still to come.
    del_pending: bool,
    /// `Step::WorkRenewing`: when the work ends, and when the watchdog renews next.
    work_until: Option<Millis>,
    renew_due: Option<Millis>,
}

struct Sim<'a> {
    sc: &'a Scenario,
    clock: Clock,
    lock: LeaseLock,
    ledger: Ledger,
    queue: BTreeMap<(Millis, Class, u64), Pending>,
    seq: u64,
    actors: Vec<ActorState>,
    events: Vec<TraceEvent>,
    max_accepted: Option<Fence>,
    stale_accepted: usize,
    max_believers: usize,
    /// Leases whose expiry was already narrated: a lease expires once.
    expired: Vec<Fence>,
    /// Renewal jitter, seeded by the scenario.
    rng: SplitMix64,
    /// Leases a failed primary lost, until their TTL runs out.
    lost: Vec<Lease>,
    max_live_leases: usize,
    unprotected_side_effects: usize,
    /// How leases ended other than by expiry, to say where a late write came from.
    fates: BTreeMap<Fence, &'static str>,
    /// Narrate in seconds rather than ms.
    secs: bool,
}

/// Runs a scenario to its horizon. Pure: same scenario, same trace.
pub fn run(sc: &Scenario) -> Trace {
    let mut ledger = Ledger::new(sc.policy);
    ledger.open(&sc.resource, sc.initial_balance);
    let mut sim = Sim {
        sc,
        clock: Clock::at(0),
        lock: LeaseLock::new(sc.first_fence),
        ledger,
        queue: BTreeMap::new(),
        seq: 0,
        actors: vec![ActorState::default(); sc.actors.len()],
        events: Vec::new(),
        max_accepted: None,
        stale_accepted: 0,
        max_believers: 0,
        expired: Vec::new(),
        rng: SplitMix64::new(sc.seed),
        lost: Vec::new(),
        max_live_leases: 0,
        unprotected_side_effects: 0,
        fates: BTreeMap::new(),
        secs: sc.horizon >= SECONDS_FROM,
    };
    let initial = sim.snapshot();
    for j in &sc.lock_clock_jumps {
        sim.push(j.at, Class::ClockJump, Pending::ClockJump { by: j.by });
    }
    if let Some(t) = sc.failover_at {
        sim.push(t, Class::Failover, Pending::Failover);
    }
    for (i, a) in sc.actors.iter().enumerate() {
        for p in a.pauses.iter().filter(|p| p.duration > 0) {
            sim.push(
                p.start,
                Class::PauseStart,
                Pending::PauseStart {
                    actor: i,
                    until: p.end(),
                },
            );
        }
        if a.script.is_empty() {
            sim.actors[i].done = true;
        } else {
            sim.schedule_step(i, a.start_at);
        }
    }
    while let Some(((t, _, _), pending)) = sim.queue.pop_first() {
        if t > sc.horizon {
            break;
        }
        sim.clock.advance_to(t);
        sim.handle(pending);
    }
    let account = sim.ledger.account(&sc.resource);
    let writes = sim.ledger.log().to_vec();
    let summary = Summary {
        final_balance: account.balance,
        accepted_writes: writes.iter().filter(|w| w.accepted()).count(),
        rejected_writes: writes.iter().filter(|w| !w.accepted()).count(),
        stale_writes_accepted: sim.stale_accepted,
        max_believers: sim.max_believers,
        last_fence: account.last_fence,
        last_write_fence: account.last_write_fence,
        max_live_leases: sim.max_live_leases,
        unprotected_side_effects: sim.unprotected_side_effects,
    };
    Trace {
        scenario: sc.clone(),
        initial,
        events: sim.events,
        writes,
        summary,
    }
}

impl Sim<'_> {
    fn push(&mut self, t: Millis, class: Class, p: Pending) {
        self.seq += 1;
        self.queue.insert((t, class, self.seq), p);
    }

    /// Schedules the actor's next step at `t`, or when its pause ends if it is stalled then.
    fn schedule_step(&mut self, actor: usize, t: Millis) {
        let pauses = &self.sc.actors[actor].pauses;
        let mut at = t;
        while let Some(p) = pauses.iter().find(|p| p.contains(at)) {
            at = p.end();
        }
        self.push(at, Class::Step, Pending::Step { actor });
    }

    /// `Step::WorkRenewing`: the watchdog's next renewal, or the end of the work if that
    /// comes first.
    fn schedule_renewal(&mut self, actor: usize, until: Millis) {
        let now = self.now();
        let due = now.saturating_add(renewal_interval(self.sc.lease_ttl, Some(&mut self.rng)));
        let st = &mut self.actors[actor];
        if due < until {
            st.renew_due = Some(due);
            self.schedule_step(actor, due);
        } else {
            st.renew_due = None;
            self.schedule_step(actor, until.max(now));
        }
    }

    fn now(&self) -> Millis {
        self.clock.now()
    }

    fn name(&self, actor: usize) -> &str {
        &self.sc.actors[actor].name
    }

    /// A time inside a sentence: "30", or "15.0 s" (so "until t=30" / "until t=15.0 s").
    fn at(&self, t: Millis) -> String {
        if self.secs {
            duration_text(true, t)
        } else {
            t.to_string()
        }
    }

    /// A duration inside a sentence: "50 ms" or "15.0 s".
    fn dur(&self, ms: Millis) -> String {
        duration_text(self.secs, ms)
    }

    fn snapshot(&self) -> Snapshot {
        let now = self.now();
        let account = self.ledger.account(&self.sc.resource);
        Snapshot {
            at: now,
            holder: self.lock.holder(now, &self.sc.resource).cloned(),
            balance: account.balance,
            last_fence: account.last_fence,
            last_write_fence: account.last_write_fence,
            believers: self
                .actors
                .iter()
                .zip(&self.sc.actors)
                .filter(|(s, _)| s.believes)
                .map(|(_, a)| a.name.clone())
                .collect(),
            lost_leases: self
                .lost
                .iter()
                .filter(|l| l.is_live(now))
                .cloned()
                .collect(),
        }
    }

    fn emit(&mut self, actor: Option<usize>, lane: Lane, kind: EventKind, narration: String) {
        let snapshot = self.snapshot();
        self.max_believers = self.max_believers.max(snapshot.believers.len());
        let live = usize::from(snapshot.holder.is_some()) + snapshot.lost_leases.len();
        self.max_live_leases = self.max_live_leases.max(live);
        let stamp = if self.secs {
            format!("t={}", self.at(self.now()))
        } else {
            format!("t={} ms", self.now())
        };
        self.events.push(TraceEvent {
            at: self.now(),
            actor: actor.map(|a| self.name(a).to_owned()),
            lane,
            kind,
            narration: format!("{stamp} — {narration}"),
            snapshot,
        });
    }

    /// Emits on the actor's own lane.
    fn say(&mut self, actor: usize, kind: EventKind, narration: String) {
        self.emit(Some(actor), Lane::Actor(actor), kind, narration);
    }

    fn handle(&mut self, pending: Pending) {
        match pending {
            Pending::ClockJump { by } => self.clock_jump(by),
            Pending::Failover => self.failover(),
            Pending::Expiry { fence } => self.expire(fence),
            Pending::PauseStart { actor, until } => {
                if self.actors[actor].done {
                    return;
                }
                self.push(until, Class::PauseEnd, Pending::PauseEnd { actor });
                if self.actors[actor].paused {
                    return; // overlapping pauses read as one long stall
                }
                self.actors[actor].paused = true;
                let name = self.name(actor).to_owned();
                let belief = if self.actors[actor].believes {
                    format!(" {name} still believes it holds {}.", self.sc.resource)
                } else {
                    String::new()
                };
                let text = format!(
                    "{name} freezes in a {} stop-the-world pause (GC) until t={}.{belief}",
                    self.dur(until - self.now()),
                    self.at(until)
                );
                self.say(actor, EventKind::PauseStarted { until }, text);
            }
            Pending::PauseEnd { actor } => {
                let still_paused = self.sc.actors[actor]
                    .pauses
                    .iter()
                    .any(|p| p.contains(self.now()));
                if !self.actors[actor].paused || still_paused {
                    return;
                }
                self.actors[actor].paused = false;
                let name = self.name(actor).to_owned();
                let text = if self.actors[actor].believes
                    && !self.lock.is_held(self.now(), &self.sc.resource, &name)
                {
                    format!("{name} wakes up and carries on, unaware its lease is gone.")
                } else {
                    format!("{name} wakes up and carries on.")
                };
                self.say(actor, EventKind::PauseEnded, text);
            }
            Pending::Delivery {
                actor,
                request,
                sent_at,
            } => self.apply(actor, request, sent_at),
            Pending::Step { actor } => self.step(actor),
        }
    }

    /// The lock node's clock steps forward: the live lease loses `by` ms of real time.
    fn clock_jump(&mut self, by: Millis) {
        let now = self.now();
        let res = &self.sc.resource;
        let before = self.lock.holder(now, res).cloned();
        self.lock.clock_jump(now, by);
        let text = match before {
            Some(old) => {
                let new_end = self.lock.entry(res).map_or(now, |l| l.expires_at);
                self.push(new_end, Class::Expiry, Pending::Expiry { fence: old.fence });
                format!(
                    "The lock node's clock jumps forward {} (an NTP step). {owner}'s lease (token {fence}) now ends at t={new} instead of t={old}; as far as {owner} knows, it still runs until t={old}.",
                    self.dur(by),
                    owner = old.owner,
                    fence = old.fence,
                    new = self.at(new_end),
                    old = self.at(old.expires_at),
                )
            }
            None => format!(
                "The lock node's clock jumps forward {}; no lease is live, so nothing changes.",
                self.dur(by)
            ),
        };
        self.emit(None, Lane::Lease, EventKind::LockClockJumped { by }, text);
    }

    /// The primary fails over to a replica that never got the lock keys.
    fn failover(&mut self) {
        let now = self.now();
        let lost: Vec<Lease> = self
            .lock
            .failover()
            .into_iter()
            .filter(|l| l.is_live(now))
            .collect();
        self.lost.extend(lost.iter().cloned());
        for l in &lost {
            self.fates
                .insert(l.fence, "a lease the failed primary lost");
        }
        let res = &self.sc.resource;
        let text = match lost.first() {
            Some(l) => format!(
                "The lock server's primary crashes before replicating {owner}'s SET, and a replica with no {res} key is promoted. {owner} was told OK and still holds token {fence} until t={until}, yet the lock service will grant {res} again. Tokens come from a consensus store, so the next one is {next}.",
                owner = l.owner,
                fence = l.fence,
                until = self.at(l.expires_at),
                next = self.lock.next_fence(),
            ),
            None => "The lock server's primary crashes and a replica is promoted. No lease was live, so nothing is lost.".to_owned(),
        };
        self.emit(None, Lane::Lease, EventKind::Failover { lost }, text);
    }

    fn expire(&mut self, fence: Fence) {
        let now = self.now();
        if let Some(i) = self
            .lost
            .iter()
            .position(|l| l.fence == fence && l.expires_at == now)
        {
            let Lease { owner, fence, .. } = self.lost.remove(i);
            let text = format!(
                "{owner}'s lease (token {fence}) runs out by its TTL. Only {owner} knew of it: the failed primary lost it, so two leases were live until now."
            );
            self.emit(
                None,
                Lane::Lease,
                EventKind::LeaseExpired { owner, fence },
                text,
            );
            return;
        }
        let Some(lease) = self.lock.entry(&self.sc.resource) else {
            return;
        };
        if lease.fence != fence || lease.expires_at != now || self.expired.contains(&fence) {
            return; // released, extended, jumped or already expired
        }
        self.expired.push(fence);
        let owner = lease.owner.clone();
        let idx = self.sc.actor_index(&owner);
        let unaware = idx.is_some_and(|i| self.actors[i].believes);
        let tail = match idx {
            Some(i) if unaware && self.actors[i].paused => {
                format!(" {owner} is paused and does not know.")
            }
            _ if unaware => format!(" {owner} has not noticed."),
            _ => String::new(),
        };
        let text = format!("{owner}'s lease (token {fence}) expires; the lock is free.{tail}");
        self.emit(
            None,
            Lane::Lease,
            EventKind::LeaseExpired { owner, fence },
            text,
        );
    }

    /// Stops an actor for good: it no longer believes it holds anything.
    fn cancel(&mut self, actor: usize) {
        let st = &mut self.actors[actor];
        st.believes = false;
        st.done = true;
        st.work_until = None;
        st.renew_due = None;
    }

    /// Extends `actor`'s lease by the TTL (ownership checked atomically by the lock) and
    /// queues the new expiry; `None` when the actor no longer holds it.
    fn renew(&mut self, actor: usize, now: Millis) -> Option<(Fence, Millis)> {
        let sc = self.sc;
        let expires_at = self
            .lock
            .extend(now, &sc.resource, &sc.actors[actor].name, sc.lease_ttl)
            .ok()?;
        let fence = self.actors[actor].fence.unwrap_or(Fence(0));
        self.push(expires_at, Class::Expiry, Pending::Expiry { fence });
        Some((fence, expires_at))
    }

    fn step(&mut self, actor: usize) {
        let sc = self.sc;
        let a = &sc.actors[actor];
        let Some(step) = a.script.get(self.actors[actor].pc).cloned() else {
            self.actors[actor].done = true;
            return;
        };
        let now = self.now();
        let name = a.name.clone();
        let res = &sc.resource;
        let mut next = Some(now);
        match step {
            Step::Acquire { retry_every } => match self.lock.acquire(now, res, &name, sc.lease_ttl)
            {
                Acquire::Acquired { fence, expires_at } => {
                    let st = &mut self.actors[actor];
                    st.fence = Some(fence);
                    st.believes = true;
                    self.push(expires_at, Class::Expiry, Pending::Expiry { fence });
                    let text = format!(
                        "{name} acquires {res} (SET NX PX {}) and gets fencing token {fence}; the lease runs until t={}.",
                        sc.lease_ttl,
                        self.at(expires_at)
                    );
                    self.say(actor, EventKind::Acquired { fence, expires_at }, text);
                }
                Acquire::Held { holder, expires_at } => {
                    let text = format!(
                        "{name} tries to acquire {res}: refused (lock_held) — {holder}'s lease runs until t={}. Retrying in {}.",
                        self.at(expires_at),
                        self.dur(retry_every)
                    );
                    let kind = EventKind::AcquireRefused {
                        holder,
                        until: expires_at,
                    };
                    self.say(actor, kind, text);
                    self.schedule_step(actor, now.saturating_add(retry_every));
                    return; // same step again later
                }
            },
            Step::Work { ms } => next = Some(now.saturating_add(ms)),
            Step::CheckHeld => {
                let held = self.lock.is_held(now, res, &name);
                let text = if held {
                    format!("{name} checks is_held: true. It is about to write — but true now says nothing about a moment later.")
                } else {
                    format!("{name} checks is_held: false. Its lease is gone.")
                };
                self.say(actor, EventKind::Checked { held }, text);
                if !held {
                    self.cancel(actor);
                    let text = format!("{name} gives up without writing.");
                    self.say(actor, EventKind::GaveUp, text);
                    return;
                }
            }
            Step::Debit {
                amount,
                idempotency_key,
            } => match self.actors[actor].fence {
                None => {
                    let text = format!("{name} never got the lock, so it skips its write.");
                    self.say(actor, EventKind::WriteSkipped, text);
                }
                Some(fence) => {
                    let request = WriteRequest {
                        resource: res.clone(),
                        writer: name.clone(),
                        fence: Some(fence),
                        amount,
                        idempotency_key,
                    };
                    self.send(actor, request);
                }
            },
            Step::Retry => match self.actors[actor].last_write.clone() {
                None => {
                    let text =
                        format!("{name} has sent no debit yet, so there is nothing to retry.");
                    self.say(actor, EventKind::WriteSkipped, text);
                }
                Some(request) => {
                    let key = request.idempotency_key.as_deref().map_or_else(
                        || "no idempotency key".to_owned(),
                        |k| format!("idempotency key “{k}”"),
                    );
                    let text = format!(
                        "{name} never got the reply to its debit (it was lost on the way back), so it retries: same token {}, same {key}.",
                        request.fence.map_or_else(|| "none".to_owned(), |f| f.to_string())
                    );
                    let kind = EventKind::Retried {
                        fence: request.fence,
                        amount: request.amount,
                    };
                    self.say(actor, kind, text);
                    self.send(actor, request);
                }
            },
            Step::Extend => match self.renew(actor, now) {
                Some((fence, expires_at)) => {
                    let text = format!(
                        "{name} extends its lease (token {fence}) until t={}.",
                        self.at(expires_at)
                    );
                    self.say(actor, EventKind::Extended { fence, expires_at }, text);
                }
                None => {
                    self.cancel(actor);
                    let text = format!(
                        "{name} tries to extend: refused (not_holder). It self-cancels its job."
                    );
                    self.say(actor, EventKind::ExtendFailed, text);
                    return;
                }
            },
            Step::WorkRenewing { ms } => {
                let st = &self.actors[actor];
                let Some(until) = st.work_until else {
                    let until = now.saturating_add(ms);
                    self.actors[actor].work_until = Some(until);
                    self.schedule_renewal(actor, until);
                    return;
                };
                if st.renew_due.is_some_and(|d| d <= now) {
                    match self.renew(actor, now) {
                        Some((fence, expires_at)) => {
                            self.schedule_renewal(actor, until);
                            let next = match self.actors[actor].renew_due {
                                Some(d) => format!(
                                    "next renewal at t={} (a third of the TTL, ±25% jitter)",
                                    self.at(d)
                                ),
                                None => format!("the work ends at t={} first", self.at(until)),
                            };
                            let text = format!(
                                "{name}'s watchdog renews its lease (token {fence}) until t={}; {next}.",
                                self.at(expires_at)
                            );
                            self.say(actor, EventKind::Extended { fence, expires_at }, text);
                        }
                        None => {
                            self.cancel(actor);
                            let text = format!(
                                "{name}'s watchdog tries to renew: refused (not_holder) — the lease ran out before it could renew. The job self-cancels and does not write."
                            );
                            self.say(actor, EventKind::ExtendFailed, text);
                        }
                    }
                    return;
                }
                let st = &mut self.actors[actor];
                st.work_until = None;
                st.renew_due = None;
            }
            Step::Barrier => match self.actors[actor].fence {
                None => {
                    let text = format!(
                        "{name} never got the lock, so it has no token to write a barrier with."
                    );
                    self.say(actor, EventKind::WriteSkipped, text);
                }
                Some(fence) => {
                    let result = self.ledger.barrier(res, fence);
                    let account = self.ledger.account(res);
                    let text = match &result {
                        Ok(()) if sc.policy.checks_fence() => format!(
                            "Before {name} starts, the scheduler writes barrier token {fence} to {res}: last fence is now {}, the balance stays {}. Anything older is refused from here on.",
                            account.last_fence.map_or(0, |f| f.0),
                            account.balance
                        ),
                        Ok(()) => format!(
                            "Before {name} starts, the scheduler writes barrier token {fence} to {res}, but storage is not checking tokens: the barrier changes nothing."
                        ),
                        Err(e) => format!(
                            "The scheduler's barrier with token {fence} is rejected: {} (storage has already seen {}). {name} must not start.",
                            e.code(),
                            account.last_fence.map_or(0, |f| f.0)
                        ),
                    };
                    let refused = result.is_err();
                    if !refused {
                        // The new generation has written (even where storage ignores the
                        // token), so an older write accepted after this is a stale write.
                        self.max_accepted = self.max_accepted.max(Some(fence));
                    }
                    self.emit(
                        Some(actor),
                        Lane::Storage,
                        EventKind::BarrierSet { fence, result },
                        text,
                    );
                    if refused {
                        self.cancel(actor);
                        let text = format!("{name} gives up without writing.");
                        self.say(actor, EventKind::GaveUp, text);
                        return;
                    }
                }
            },
            Step::SideEffect { what } => {
                let lease_live = self.lock.is_held(now, res, &name);
                let text = if lease_live {
                    format!("{name} calls an outside system: {what}. No token goes with it; this time {name}'s lease is still live.")
                } else {
                    self.unprotected_side_effects += 1;
                    format!("{name} calls an outside system: {what}. Its lease is gone, but the call carries no token, so nothing refuses it: fencing does not protect this.")
                };
                self.say(actor, EventKind::SideEffect { what, lease_live }, text);
            }
            Step::Release => match sc.release {
                ReleaseMode::CompareAndDelete => self.release_cad(actor),
                ReleaseMode::GetThenDel if !self.actors[actor].del_pending => {
                    if self.get_before_del(actor) {
                        self.schedule_step(actor, now.saturating_add(GET_DEL_GAP));
                        return; // the DEL is the second half of this step
                    }
                }
                ReleaseMode::GetThenDel => self.unconditional_del(actor),
            },
        }
        self.actors[actor].pc += 1;
        if self.actors[actor].pc >= a.script.len() {
            self.actors[actor].done = true;
        } else if let Some(t) = next {
            self.schedule_step(actor, t);
        }
    }

    /// Sends a debit to storage: applied at once, or delivered after the actor's network delay.
    fn send(&mut self, actor: usize, request: WriteRequest) {
        let now = self.now();
        self.actors[actor].last_write = Some(request.clone());
        let delay = self.sc.actors[actor].network_delay;
        if delay == 0 {
            self.apply(actor, request, now);
            return;
        }
        let arrives_at = now.saturating_add(delay);
        let text =
            format!(
            "{} sends \"debit {}\" with token {}; the packet is delayed {} and arrives at t={}.",
            request.writer,
            request.amount,
            request.fence.map_or_else(|| "none".to_owned(), |f| f.to_string()),
            self.dur(delay),
            self.at(arrives_at)
        );
        let kind = EventKind::WriteSent {
            fence: request.fence,
            amount: request.amount,
            arrives_at,
        };
        self.say(actor, kind, text);
        self.push(
            arrives_at,
            Class::Delivery,
            Pending::Delivery {
                actor,
                request,
                sent_at: now,
            },
        );
    }

    /// The Lua compare-and-delete: one atomic "delete if still mine".
    fn release_cad(&mut self, actor: usize) {
        let now = self.now();
        let res = &self.sc.resource;
        let name = self.name(actor).to_owned();
        self.actors[actor].believes = false;
        match self.lock.release(now, res, &name) {
            Ok(fence) => {
                self.fates.insert(fence, "an already released lease");
                let text = format!(
                    "{name} releases {res} (compare-and-delete: token {fence} is still its own)."
                );
                self.say(actor, EventKind::Released { fence }, text);
            }
            Err(_) => {
                let whose = match (self.lock.holder(now, res), self.actors[actor].fence) {
                    (Some(l), _) => {
                        format!("the lease now belongs to {} (token {})", l.owner, l.fence)
                    }
                    (None, Some(f)) if self.lost.iter().any(|l| l.fence == f) => {
                        "the failed primary lost its lease".to_owned()
                    }
                    (None, Some(_)) => "its lease had already expired".to_owned(),
                    (None, None) => "it never held the lease".to_owned(),
                };
                let text = format!(
                    "{name} tries to release: a no-op, {whose}. Compare-and-delete deletes nothing."
                );
                self.say(actor, EventKind::ReleaseNoop, text);
            }
        }
    }

    /// The GET of GET-then-DEL. True when it saw the actor's own value, so a DEL follows.
    fn get_before_del(&mut self, actor: usize) -> bool {
        let now = self.now();
        let res = &self.sc.resource;
        let name = self.name(actor).to_owned();
        let live = self.lock.holder(now, res).cloned();
        let own = live.as_ref().is_some_and(|l| l.owner == name);
        let text = match &live {
            Some(l) if own => format!(
                "{name} releases the unsafe way: GET {res} returns its own value (token {}), so it will DEL next — two commands, with a gap between them.",
                l.fence
            ),
            Some(l) => format!(
                "{name} GETs {res}: the value is {}'s (token {}), not its own, so it does not DEL.",
                l.owner, l.fence
            ),
            None => format!("{name} GETs {res}: nil — its lease is already gone, so it does not DEL."),
        };
        let kind = EventKind::LockValueRead {
            owner: live.as_ref().map(|l| l.owner.clone()),
            fence: live.as_ref().map(|l| l.fence),
        };
        if own {
            self.actors[actor].del_pending = true;
        } else {
            self.actors[actor].believes = false;
        }
        self.say(actor, kind, text);
        own
    }

    /// The DEL of GET-then-DEL: it deletes whatever the key holds now.
    fn unconditional_del(&mut self, actor: usize) {
        let now = self.now();
        let res = &self.sc.resource;
        let name = self.name(actor).to_owned();
        let st = &mut self.actors[actor];
        st.del_pending = false;
        st.believes = false;
        let live = self.lock.holder(now, res).cloned();
        self.lock.delete(res);
        match live {
            Some(l) if l.owner == name => {
                self.fates.insert(l.fence, "an already released lease");
                let text = format!(
                    "{name} DELs {res}: still its own lease (token {}), so this time nothing went wrong.",
                    l.fence
                );
                self.say(actor, EventKind::Released { fence: l.fence }, text);
            }
            Some(l) => {
                self.fates.insert(l.fence, "a lease someone else deleted");
                let text = format!(
                    "{name} DELs {res} without checking again: it deletes {owner}'s live lease (token {fence}). The lock is free while {owner} is still working.",
                    owner = l.owner,
                    fence = l.fence
                );
                let kind = EventKind::DeletedOthersLease {
                    owner: l.owner,
                    fence: l.fence,
                };
                self.say(actor, kind, text);
            }
            None => {
                let text = format!(
                    "{name} DELs {res}: nothing live to delete, its lease had already expired."
                );
                self.say(actor, EventKind::ReleaseNoop, text);
            }
        }
    }

    /// The write reaches storage.
    fn apply(&mut self, actor: usize, request: WriteRequest, sent_at: Millis) {
        let now = self.now();
        let name = request.writer.clone();
        let fence = request.fence;
        let amount = request.amount;
        let policy = self.ledger.policy();
        let result = self.ledger.debit(now, request);
        let account = self.ledger.account(&self.sc.resource);
        let tok = fence.map_or_else(|| "none".to_owned(), |f| f.to_string());
        let overtaken =
            result.is_ok() && matches!((fence, self.max_accepted), (Some(f), Some(m)) if f < m);
        if overtaken {
            self.stale_accepted += 1;
        }
        let text = match &result {
            Ok(balance) => {
                let why = match (policy, overtaken) {
                    (FencingPolicy::Off, true) => format!(
                        " Storage does not check tokens, so a write from {} landed after token {}'s: lost update.",
                        fence
                            .and_then(|f| self.fates.get(&f))
                            .copied()
                            .unwrap_or("an expired lease"),
                        self.max_accepted.map_or(0, |f| f.0)
                    ),
                    (FencingPolicy::Off, false) => " Storage is not checking tokens.".to_owned(),
                    (_, _) => format!(" Last fence is now {}.", account.last_fence.map_or(0, |f| f.0)),
                };
                format!("{name}'s debit of {amount} with token {tok} is accepted. Balance {balance}.{why}")
            }
            Err(WriteError::StaleFence { token, last }) => format!(
                "{name}'s debit of {amount} with token {token} is rejected: stale_fence (storage has already seen {last}). Balance stays {}.",
                account.balance
            ),
            Err(WriteError::DuplicateIntent { key }) => format!(
                "{name}'s debit with idempotency key “{key}” is rejected: duplicate_intent — that intent already ran. Balance stays {}.",
                account.balance
            ),
            Err(WriteError::MissingFence) => format!(
                "{name}'s debit carries no token: rejected (missing_fence). Balance stays {}.",
                account.balance
            ),
        };
        if result.is_ok() {
            self.max_accepted = self.max_accepted.max(fence);
        }
        let kind = EventKind::WriteApplied {
            fence,
            amount,
            sent_at,
            result,
            overtaken,
        };
        self.emit(Some(actor), Lane::Storage, kind, text);
    }
}
