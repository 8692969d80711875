//! The state of one run: the clock, the lock service, the ledger, the event queue and each
//! actor's place in its script, plus the trace recorded so far. Observing it (a
//! [`Snapshot`]) and recording an event happen here; what changes it is in
//! [`super::actor`] (an actor's steps) and [`super::engine`] (everything else).

use super::client::ClientState;
use super::clock::{Clock, Millis, SplitMix64};
use super::lease::{Fence, Lease, LeaseLock};
use super::ledger::FencingPolicy;
use super::ledger::Ledger;
use super::locks::{Locks, RowLocks};
use super::queue::{Class, Pending, Queue};
use super::redlock::Redlock;
use super::scenario::{LockKind, Scenario};
use super::trace::{EventKind, Grant, Lane, Snapshot, TraceEvent};

/// One actor: its client's own state ([`ClientState`]) and what the engine knows of it.
#[derive(Debug, Clone, Default)]
pub(super) struct ActorState {
    pub(super) client: ClientState,
    pub(super) done: bool,
    pub(super) paused: bool,
    /// Row lock: the server terminated this actor's session; every statement it sends fails.
    pub(super) session_gone: bool,
}

pub(super) struct Sim<'a> {
    pub(super) sc: &'a Scenario,
    pub(super) clock: Clock,
    pub(super) lock: Locks,
    pub(super) ledger: Ledger,
    pub(super) queue: Queue,
    pub(super) actors: Vec<ActorState>,
    pub(super) events: Vec<TraceEvent>,
    /// Every grant so far, in order.
    pub(super) grants: Vec<Grant>,
    /// The highest token of an accepted write so far, checked or not.
    pub(super) highest_accepted: Option<Fence>,
    /// Leases whose expiry was already recorded: a lease expires once.
    pub(super) expired: Vec<Fence>,
    /// The separate counter's next token ([`TokenSource::SeparateCounter`]).
    ///
    /// [`TokenSource::SeparateCounter`]: super::scenario::TokenSource::SeparateCounter
    pub(super) counter: u64,
    /// Renewal jitter and resume races, seeded by the scenario.
    pub(super) rng: SplitMix64,
    /// Leases a failed primary lost, until their TTL runs out.
    pub(super) lost: Vec<Lease>,
    /// The idempotency keys the outside provider has seen ([`Step::ProviderCall`]).
    ///
    /// [`Step::ProviderCall`]: super::scenario::Step::ProviderCall
    pub(super) provider_keys: Vec<String>,
}

impl<'a> Sim<'a> {
    /// The world at t=0: the account opened, no lease, nothing queued.
    pub(super) fn new(sc: &'a Scenario) -> Self {
        // Under a row lock no write carries a token: the transaction is the check.
        let policy = match sc.lock.row() {
            Some(_) => FencingPolicy::Off,
            None => sc.policy,
        };
        let mut ledger = Ledger::new(policy).with_check(sc.check);
        ledger.open(&sc.resource, sc.initial_balance);
        Sim {
            sc,
            clock: Clock::at(0),
            lock: match &sc.lock {
                LockKind::Row(_) => Locks::Row(RowLocks::new(sc.first_fence, sc.idle_timeout())),
                LockKind::Redlock(r) => Locks::Quorum(Redlock::new(r.nodes, sc.first_fence)),
                LockKind::Redis { .. } => Locks::One(LeaseLock::new(sc.first_fence)),
                LockKind::Service(o) => {
                    let l = LeaseLock::new(sc.first_fence).with_lock_delay(o.lock_delay);
                    match o.queue {
                        true => Locks::Fair(l, std::collections::VecDeque::new()),
                        false => Locks::One(l),
                    }
                }
            },
            ledger,
            queue: Queue::default(),
            actors: vec![ActorState::default(); sc.actors.len()],
            events: Vec::new(),
            grants: Vec::new(),
            highest_accepted: None,
            expired: Vec::new(),
            counter: sc.first_fence,
            rng: SplitMix64::new(sc.seed),
            lost: Vec::new(),
            provider_keys: Vec::new(),
        }
    }
}

impl Sim<'_> {
    pub(super) fn push(&mut self, t: Millis, class: Class, p: Pending) {
        self.queue.push(t, class, p);
    }

    /// `t`, or when the actor's pause ends if it is stalled then.
    pub(super) fn after_pauses(&self, actor: usize, t: Millis) -> Millis {
        super::client::after_pauses(&self.sc.actors[actor], t)
    }

    /// Schedules the actor's next step at `t`, or when its pause ends if it is stalled then.
    pub(super) fn schedule_step(&mut self, actor: usize, t: Millis) {
        let at = self.after_pauses(actor, t);
        self.push(at, Class::Step, Pending::Step { actor });
    }

    pub(super) fn now(&self) -> Millis {
        self.clock.now()
    }

    pub(super) fn name(&self, actor: usize) -> &str {
        &self.sc.actors[actor].name
    }

    pub(super) fn snapshot(&self) -> Snapshot {
        let now = self.now();
        let account = self.ledger.account(&self.sc.resource);
        Snapshot {
            at: now,
            holder: self.lock.holder(now, &self.sc.resource),
            balance: account.balance,
            last_fence: account.last_fence,
            last_write_fence: account.last_write_fence,
            result: account.result,
            believers: self
                .actors
                .iter()
                .zip(&self.sc.actors)
                .filter(|(s, _)| s.client.believes)
                .map(|(_, a)| a.name.clone())
                .collect(),
            lost_leases: self
                .lost
                .iter()
                .filter(|l| l.is_live(now))
                .cloned()
                .collect(),
            other_holders: self.lock.others(now, &self.sc.resource),
        }
    }

    /// The lock nodes `actor` can reach (every node of a single server).
    pub(super) fn reach(&self, actor: usize) -> Vec<usize> {
        match self.sc.lock.redlock() {
            None => Vec::new(),
            Some(r) => match r.reach.get(actor) {
                Some(nodes) if !nodes.is_empty() => nodes.clone(),
                _ => (0..r.nodes).collect(),
            },
        }
    }

    /// Records an event. One its actor says that restarts a row lock's idle clock (by core's
    /// rule, [`EventKind::restarts_idle_clock`], which the fold of a recorded run follows too)
    /// restarts it first, so the event's snapshot shows the new deadline.
    pub(super) fn emit(&mut self, actor: Option<usize>, lane: Lane, kind: EventKind) {
        if let Some(a) = actor.filter(|_| kind.restarts_idle_clock(&self.sc.lock)) {
            self.row_touch(a);
        }
        let snapshot = self.snapshot();
        self.events.push(TraceEvent {
            at: self.now(),
            actor: actor.map(|a| self.name(a).to_owned()),
            lane,
            kind,
            snapshot,
        });
    }

    /// Row lock: a statement of `actor`'s transaction finished, so its idle clock restarts.
    fn row_touch(&mut self, actor: usize) {
        let now = self.now();
        let name = self.name(actor).to_owned();
        if let Some(l) = self.lock.row().and_then(|r| r.touch(now, &name)) {
            if l.expires_at != Millis::MAX {
                let fence = l.fence;
                self.push(l.expires_at, Class::Expiry, Pending::Expiry { fence });
            }
        }
    }

    /// Emits on the actor's own lane.
    pub(super) fn say(&mut self, actor: usize, kind: EventKind) {
        self.emit(Some(actor), Lane::Actor(actor), kind);
    }
}
