//! The deterministic scenario engine: a discrete-event simulation over an injected
//! clock. Events at the same instant are ordered by a fixed class and then by
//! insertion, so one scenario always yields one trace. Stepping back in the UI is
//! indexing into that trace, never undoing.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::clock::{Clock, Millis};
use super::lease::{Acquire, Fence, Lease, LeaseLock};
use super::ledger::{FencingPolicy, Ledger, WriteError, WriteRecord, WriteRequest};
use super::scenario::{Scenario, Step};

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
            _ => "ok",
        }
    }

    /// The token involved, if any.
    pub fn fence(&self) -> Option<Fence> {
        match &self.kind {
            EventKind::Acquired { fence, .. }
            | EventKind::LeaseExpired { fence, .. }
            | EventKind::Extended { fence, .. }
            | EventKind::Released { fence } => Some(*fence),
            EventKind::WriteSent { fence, .. } | EventKind::WriteApplied { fence, .. } => *fence,
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
        }
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
}

impl Summary {
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
                EventKind::LeaseExpired { fence, .. } => {
                    if let Some(s) = spans.iter_mut().find(|s| s.fence == *fence) {
                        s.end = LeaseEnd::Expired;
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
            return if step == 0 {
                "Two clients, one account, one lease lock. Watch what the lock promises and what the storage checks."
            } else {
                ""
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
        }
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    Expiry = 0,
    PauseEnd = 1,
    PauseStart = 2,
    Delivery = 3,
    Step = 4,
}

#[derive(Debug, Clone)]
enum Pending {
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
    };
    let initial = sim.snapshot();
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

    fn now(&self) -> Millis {
        self.clock.now()
    }

    fn name(&self, actor: usize) -> &str {
        &self.sc.actors[actor].name
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
        }
    }

    fn emit(&mut self, actor: Option<usize>, lane: Lane, kind: EventKind, narration: String) {
        let snapshot = self.snapshot();
        self.max_believers = self.max_believers.max(snapshot.believers.len());
        self.events.push(TraceEvent {
            at: self.now(),
            actor: actor.map(|a| self.name(a).to_owned()),
            lane,
            kind,
            narration: format!("t={} ms — {narration}", self.now()),
            snapshot,
        });
    }

    fn handle(&mut self, pending: Pending) {
        match pending {
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
                    "{name} freezes in a {} ms stop-the-world pause (GC) until t={until}.{belief}",
                    until - self.now()
                );
                self.emit(
                    Some(actor),
                    Lane::Actor(actor),
                    EventKind::PauseStarted { until },
                    text,
                );
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
                self.emit(Some(actor), Lane::Actor(actor), EventKind::PauseEnded, text);
            }
            Pending::Delivery {
                actor,
                request,
                sent_at,
            } => self.apply(actor, request, sent_at),
            Pending::Step { actor } => self.step(actor),
        }
    }

    fn expire(&mut self, fence: Fence) {
        let now = self.now();
        let Some(lease) = self.lock.entry(&self.sc.resource) else {
            return;
        };
        if lease.fence != fence || lease.expires_at != now || self.expired.contains(&fence) {
            return; // released, extended or already expired
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
                        "{name} acquires {res} (SET NX PX {}) and gets fencing token {fence}; the lease runs until t={expires_at}.",
                        sc.lease_ttl
                    );
                    self.emit(
                        Some(actor),
                        Lane::Actor(actor),
                        EventKind::Acquired { fence, expires_at },
                        text,
                    );
                }
                Acquire::Held { holder, expires_at } => {
                    let text = format!(
                        "{name} tries to acquire {res}: refused (lock_held) — {holder}'s lease runs until t={expires_at}. Retrying in {retry_every} ms."
                    );
                    let kind = EventKind::AcquireRefused {
                        holder,
                        until: expires_at,
                    };
                    self.emit(Some(actor), Lane::Actor(actor), kind, text);
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
                self.emit(
                    Some(actor),
                    Lane::Actor(actor),
                    EventKind::Checked { held },
                    text,
                );
                if !held {
                    self.actors[actor].believes = false;
                    self.actors[actor].done = true;
                    let text = format!("{name} gives up without writing.");
                    self.emit(Some(actor), Lane::Actor(actor), EventKind::GaveUp, text);
                    return;
                }
            }
            Step::Debit {
                amount,
                idempotency_key,
            } => match self.actors[actor].fence {
                None => {
                    let text = format!("{name} never got the lock, so it skips its write.");
                    self.emit(
                        Some(actor),
                        Lane::Actor(actor),
                        EventKind::WriteSkipped,
                        text,
                    );
                }
                Some(fence) => {
                    let request = WriteRequest {
                        resource: res.clone(),
                        writer: name.clone(),
                        fence: Some(fence),
                        amount,
                        idempotency_key,
                    };
                    if a.network_delay == 0 {
                        self.apply(actor, request, now);
                    } else {
                        let arrives_at = now.saturating_add(a.network_delay);
                        let text = format!(
                            "{name} sends \"debit {amount}\" with token {fence}; the packet is delayed {} ms and arrives at t={arrives_at}.",
                            a.network_delay
                        );
                        let kind = EventKind::WriteSent {
                            fence: Some(fence),
                            amount,
                            arrives_at,
                        };
                        self.emit(Some(actor), Lane::Actor(actor), kind, text);
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
                }
            },
            Step::Extend => match self.lock.extend(now, res, &name, sc.lease_ttl) {
                Ok(expires_at) => {
                    let fence = self.actors[actor].fence.unwrap_or(Fence(0));
                    self.push(expires_at, Class::Expiry, Pending::Expiry { fence });
                    let text =
                        format!("{name} extends its lease (token {fence}) until t={expires_at}.");
                    self.emit(
                        Some(actor),
                        Lane::Actor(actor),
                        EventKind::Extended { fence, expires_at },
                        text,
                    );
                }
                Err(_) => {
                    self.actors[actor].believes = false;
                    self.actors[actor].done = true;
                    let text = format!(
                        "{name} tries to extend: refused (not_holder). It self-cancels its job."
                    );
                    self.emit(
                        Some(actor),
                        Lane::Actor(actor),
                        EventKind::ExtendFailed,
                        text,
                    );
                    return;
                }
            },
            Step::Release => {
                self.actors[actor].believes = false;
                match self.lock.release(now, res, &name) {
                    Ok(fence) => {
                        let text = format!("{name} releases {res} (compare-and-delete: token {fence} is still its own).");
                        self.emit(
                            Some(actor),
                            Lane::Actor(actor),
                            EventKind::Released { fence },
                            text,
                        );
                    }
                    Err(_) => {
                        let whose = match (self.lock.holder(now, res), self.actors[actor].fence) {
                            (Some(l), _) => {
                                format!("the lease now belongs to {} (token {})", l.owner, l.fence)
                            }
                            (None, Some(_)) => "its lease had already expired".to_owned(),
                            (None, None) => "it never held the lease".to_owned(),
                        };
                        let text = format!("{name} tries to release: a no-op, {whose}. Compare-and-delete deletes nothing.");
                        self.emit(
                            Some(actor),
                            Lane::Actor(actor),
                            EventKind::ReleaseNoop,
                            text,
                        );
                    }
                }
            }
        }
        self.actors[actor].pc += 1;
        if self.actors[actor].pc >= a.script.len() {
            self.actors[actor].done = true;
        } else if let Some(t) = next {
            self.schedule_step(actor, t);
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
                        " Storage does not check tokens, so a write from an expired lease landed after token {}'s: lost update.",
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
                "{name}'s debit with idempotency key {key:?} is rejected: duplicate_intent — that intent already ran. Balance stays {}.",
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
