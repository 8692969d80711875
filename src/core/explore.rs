//! The schedule explorer: instead of one hand-placed pause, try *every* placement of one
//! actor's pause on a time grid (and, when the scenario sends packets, every delivery
//! delay), under each fencing policy, and count the schedules that go wrong.
//!
//! Four verdicts per schedule, straight from the audit's [`Summary`]:
//!
//! - `late_write`: storage accepted a write whose token a newer grant had already
//!   superseded. Fencing by highest-seen token still lets these through when the late write
//!   reaches storage before the newer token does, so every policy can count some.
//! - `double_run`: the job's debits landed from two lock generations: it ran twice.
//! - `out_of_order`: storage accepted a lower token after a higher one. A fencing policy
//!   refuses this by its own rule, so it is informative only with fencing off.
//! - `two_believers`: two clients believed at once that they held the lease
//!   (`max_believers > 1`). No storage check can prevent this; fencing only limits the harm.
//!
//! The explorer is a resumable state machine ([`Explorer::step`] runs at most `budget`
//! schedules and returns), so the UI can spread a large exploration over animation frames
//! without freezing the page. It is pure and reads no clock: the same base scenario and
//! [`ExploreSpec`] always enumerate the same schedules in the same order with the same counts.
//!
//! Enumeration order (deterministic): delivery delay (outermost, only for scenarios with
//! messages), then the pause (none first, then by start, then by duration, ascending), then
//! the policy in [`ExploreSpec::policies`] order (innermost). Policy innermost means that a
//! partial exploration has covered the same schedules under every policy, so the per-policy
//! counts can be compared at any moment.

use serde::Serialize;

use super::clock::Millis;
use super::engine::run;
use super::ledger::FencingPolicy;
use super::scenario::{Pause, Scenario};
use super::trace::Summary;

/// Most schedules one exploration may run (all policies together).
pub const MAX_SCHEDULES: usize = 200_000;

/// Per policy, how many violating schedules of each kind are kept as loadable examples.
pub const EXAMPLES_PER_KIND: usize = 20;

/// What to explore.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExploreSpec {
    /// Index in `Scenario::actors` of the actor whose pause (and packet delay) is varied.
    pub actor: usize,
    /// Grid step in ms for pause starts, pause durations and delivery delays.
    pub grid: Millis,
    /// The fencing policies to run every schedule under, in this order.
    pub policies: Vec<FencingPolicy>,
}

impl ExploreSpec {
    /// Every placement of `actor`'s pause on a `grid` ms grid, under every policy.
    pub fn all_policies(actor: usize, grid: Millis) -> Self {
        Self {
            actor,
            grid,
            policies: FencingPolicy::ALL.to_vec(),
        }
    }
}

/// One point of the enumeration: enough to rebuild the exact scenario with [`Schedule::apply`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Schedule {
    /// The actor whose pause and delay this schedule sets.
    pub actor: usize,
    pub policy: FencingPolicy,
    /// The actor's only pause; `None` is the schedule without a pause.
    pub pause: Option<Pause>,
    /// The actor's one-way write delay; `None` keeps the base scenario's (scenarios without
    /// messages do not enumerate delays).
    pub network_delay: Option<Millis>,
}

impl Schedule {
    /// The base scenario with this schedule's policy, and with the actor's pauses replaced by
    /// exactly this schedule's pause (or none) and its delay set. Other actors are untouched.
    pub fn apply(&self, base: &Scenario) -> Scenario {
        let mut sc = base.clone();
        self.write_into(&mut sc);
        sc
    }

    /// [`Schedule::apply`] in place, reusing `sc`'s allocations.
    fn write_into(&self, sc: &mut Scenario) {
        sc.policy = self.policy;
        if let Some(a) = sc.actors.get_mut(self.actor) {
            a.pauses.clear();
            a.pauses.extend(self.pause);
            if let Some(d) = self.network_delay {
                a.network_delay = d;
            }
        }
    }
}

/// How one schedule went.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Verdict {
    /// Storage accepted a write whose token was already superseded by a newer grant.
    pub late_write: bool,
    /// The job ran twice: its debits landed from two lock generations.
    pub double_run: bool,
    /// Storage accepted a lower token after a higher one.
    pub out_of_order: bool,
    /// Two clients believed at once that they held the lease.
    pub two_believers: bool,
}

impl Verdict {
    pub fn of(summary: &Summary) -> Self {
        Self {
            late_write: summary.late_writes_accepted > 0,
            double_run: summary.duplicate_runs > 0,
            out_of_order: summary.out_of_order_writes > 0,
            two_believers: summary.max_believers > 1,
        }
    }

    /// Harm at the storage: a late write accepted, the job run twice, or tokens out of order.
    pub fn is_harmful(&self) -> bool {
        self.late_write || self.double_run || self.out_of_order
    }

    /// No violation at all.
    pub fn is_clean(&self) -> bool {
        !self.is_harmful() && !self.two_believers
    }
}

/// Runs one scenario and classifies it. The explorer's only call into the engine.
pub fn classify(sc: &Scenario) -> Verdict {
    Verdict::of(&run(sc).summary)
}

/// A violating schedule kept so the UI can load it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Example {
    pub schedule: Schedule,
    pub verdict: Verdict,
}

/// The counts for one policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PolicyStats {
    pub policy: FencingPolicy,
    /// Schedules run so far under this policy.
    pub explored: usize,
    /// Schedules in which storage accepted a write from a superseded lease.
    pub late_writes: usize,
    /// Schedules in which the job ran twice.
    pub double_runs: usize,
    /// Schedules in which storage accepted a lower token after a higher one.
    pub out_of_order: usize,
    /// Schedules in which two clients believed they held the lease.
    pub two_believers: usize,
    /// In enumeration order: the first [`EXAMPLES_PER_KIND`] harmful schedules and the
    /// first [`EXAMPLES_PER_KIND`] with two believers (one schedule can be both, and is then
    /// listed once).
    pub examples: Vec<Example>,
    /// Schedules with any harm at the storage (late write, double run or out of order).
    pub harmful: usize,
}

impl PolicyStats {
    fn new(policy: FencingPolicy) -> Self {
        Self {
            policy,
            explored: 0,
            late_writes: 0,
            double_runs: 0,
            out_of_order: 0,
            two_believers: 0,
            harmful: 0,
            examples: Vec::new(),
        }
    }

    fn record(&mut self, schedule: Schedule, verdict: Verdict) {
        self.explored += 1;
        // Examples are kept before the counters move, so "the first N" reads off the counters.
        let keep = (verdict.is_harmful() && self.harmful < EXAMPLES_PER_KIND)
            || (verdict.two_believers && self.two_believers < EXAMPLES_PER_KIND);
        if keep {
            self.examples.push(Example { schedule, verdict });
        }
        self.harmful += usize::from(verdict.is_harmful());
        self.late_writes += usize::from(verdict.late_write);
        self.double_runs += usize::from(verdict.double_run);
        self.out_of_order += usize::from(verdict.out_of_order);
        self.two_believers += usize::from(verdict.two_believers);
    }
}

/// The enumeration itself, as an iterator of schedules in the documented order.
#[derive(Debug, Clone)]
pub struct Schedules {
    actor: usize,
    grid: Millis,
    policies: Vec<FencingPolicy>,
    /// Grid slots in the horizon: pauses are `[s, s + d)` in slots with `d ≥ 1`, `s + d ≤ slots`.
    slots: u64,
    /// Whether delivery delays `0, grid, …, slots·grid` are enumerated.
    delays: bool,
    // Cursor: the next schedule to yield.
    delay: u64,
    /// `None`, or `(start, duration)` in slots.
    pause: Option<(u64, u64)>,
    policy: usize,
    finished: bool,
}

impl Schedules {
    fn new(base: &Scenario, spec: &ExploreSpec) -> Self {
        Self {
            actor: spec.actor,
            grid: spec.grid,
            policies: spec.policies.clone(),
            slots: base.horizon / spec.grid,
            delays: base.actors.iter().any(|a| a.network_delay > 0),
            delay: 0,
            pause: None,
            policy: 0,
            finished: spec.policies.is_empty(),
        }
    }

    /// The next pause in order after `p`, or `None` past the last one.
    fn next_pause(&self, p: Option<(u64, u64)>) -> Option<Option<(u64, u64)>> {
        match p {
            None if self.slots >= 1 => Some(Some((0, 1))),
            None => None,
            Some((s, d)) if s + d < self.slots => Some(Some((s, d + 1))),
            Some((s, _)) if s + 1 < self.slots => Some(Some((s + 1, 1))),
            Some(_) => None,
        }
    }

    fn advance(&mut self) {
        self.policy += 1;
        if self.policy < self.policies.len() {
            return;
        }
        self.policy = 0;
        if let Some(p) = self.next_pause(self.pause) {
            self.pause = p;
            return;
        }
        self.pause = None;
        if self.delays && self.delay < self.slots {
            self.delay += 1;
        } else {
            self.finished = true;
        }
    }
}

impl Iterator for Schedules {
    type Item = Schedule;

    fn next(&mut self) -> Option<Schedule> {
        if self.finished {
            return None;
        }
        let g = self.grid;
        let schedule = Schedule {
            actor: self.actor,
            policy: self.policies[self.policy],
            pause: self.pause.map(|(s, d)| Pause {
                start: s * g,
                duration: d * g,
            }),
            network_delay: self.delays.then_some(self.delay * g),
        };
        self.advance();
        Some(schedule)
    }
}

/// A resumable exploration.
#[derive(Debug, Clone)]
pub struct Explorer {
    base: Scenario,
    spec: ExploreSpec,
    /// Scratch copy that each schedule is written into, so a step allocates no scenario.
    work: Scenario,
    cursor: Schedules,
    total: usize,
    done: usize,
    stats: Vec<PolicyStats>,
}

impl Explorer {
    /// Validates the base scenario and the spec; refuses (with a message) an exploration
    /// larger than [`MAX_SCHEDULES`].
    pub fn new(base: &Scenario, spec: ExploreSpec) -> Result<Self, String> {
        base.validate()
            .map_err(|e| format!("the scenario is invalid: {e}"))?;
        if spec.actor >= base.actors.len() {
            return Err(format!(
                "actor {} does not exist: the scenario has {} actor(s)",
                spec.actor,
                base.actors.len()
            ));
        }
        if spec.grid == 0 {
            return Err("the grid must be at least 1 ms".to_owned());
        }
        if spec.grid > base.horizon {
            return Err(format!(
                "the grid ({} ms) is longer than the horizon ({} ms): no pause fits",
                spec.grid, base.horizon
            ));
        }
        if spec.policies.is_empty() {
            return Err("choose at least one fencing policy".to_owned());
        }
        for (i, p) in spec.policies.iter().enumerate() {
            if spec.policies[..i].contains(p) {
                return Err(format!("fencing policy {} is listed twice", p.short()));
            }
        }
        let cursor = Schedules::new(base, &spec);
        let total = count(cursor.slots, cursor.delays, spec.policies.len());
        let total = match usize::try_from(total) {
            Ok(t) if t <= MAX_SCHEDULES => t,
            _ => {
                return Err(format!(
                    "a {} ms grid over {} ms gives {total} schedules, more than the {MAX_SCHEDULES} allowed; use a coarser grid",
                    spec.grid, base.horizon
                ))
            }
        };
        let stats = spec
            .policies
            .iter()
            .copied()
            .map(PolicyStats::new)
            .collect();
        Ok(Self {
            base: base.clone(),
            work: base.clone(),
            spec,
            cursor,
            total,
            done: 0,
            stats,
        })
    }

    pub fn base(&self) -> &Scenario {
        &self.base
    }

    pub fn spec(&self) -> &ExploreSpec {
        &self.spec
    }

    /// Schedules this exploration runs in all.
    pub fn total(&self) -> usize {
        self.total
    }

    /// Schedules run so far.
    pub fn done(&self) -> usize {
        self.done
    }

    pub fn is_finished(&self) -> bool {
        self.done >= self.total
    }

    /// Every schedule of this exploration in order, from the first (independent of progress).
    pub fn schedules(&self) -> Schedules {
        Schedules::new(&self.base, &self.spec)
    }

    /// Runs up to `budget` more schedules and returns how many ran (0 once finished).
    pub fn step(&mut self, budget: usize) -> usize {
        let mut ran = 0;
        while ran < budget {
            let Some(schedule) = self.cursor.next() else {
                break;
            };
            schedule.write_into(&mut self.work);
            let verdict = classify(&self.work);
            // Policies are few (≤ 3), so a scan beats keeping a second cursor in sync.
            if let Some(s) = self.stats.iter_mut().find(|s| s.policy == schedule.policy) {
                s.record(schedule, verdict);
            }
            ran += 1;
        }
        self.done += ran;
        ran
    }

    /// Per policy, in spec order: the counts so far.
    pub fn stats(&self) -> &[PolicyStats] {
        &self.stats
    }

    pub fn run_to_end(&mut self) {
        while self.step(usize::MAX) > 0 {}
    }

    pub fn into_stats(self) -> Vec<PolicyStats> {
        self.stats
    }
}

/// `policies · (slots·(slots+1)/2 + 1) · (slots + 1 if delays)`: the pause placements with
/// `d ≥ 1, s + d ≤ slots` number `Σ_{d=1..slots} (slots − d + 1)`, plus the one without a pause.
fn count(slots: u64, delays: bool, policies: usize) -> u128 {
    let n = u128::from(slots);
    let pauses = n * (n + 1) / 2 + 1;
    let delays = if delays { n + 1 } else { 1 };
    pauses * delays * policies as u128
}

/// Explores to the end in one call (natively, or for small specs).
pub fn explore(base: &Scenario, spec: ExploreSpec) -> Result<Vec<PolicyStats>, String> {
    let mut explorer = Explorer::new(base, spec)?;
    explorer.run_to_end();
    Ok(explorer.into_stats())
}
