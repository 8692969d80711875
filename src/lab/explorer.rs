//! The schedule explorer's state in the lab: which actor it varies, on which grid, and how
//! far it has run.

use crate::core::explore::{ExploreSpec, Explorer, PolicyStats};
use crate::core::{FencingPolicy, Millis, Scenario};

/// The schedule explorer over the scenario on screen: every placement of one actor's pause
/// (and delivery delay) on a grid, under each policy, run a chunk at a time.
#[derive(Debug, Clone)]
pub struct Exploration {
    /// The scenario with what the explorer varies blanked: a new key restarts it.
    pub(super) key: Scenario,
    /// The scenario counterexamples are applied to.
    base: Scenario,
    runner: Option<Explorer>,
    heading: String,
    failed: Option<String>,
    elapsed_ms: f64,
    ran: bool,
}

impl Exploration {
    /// The actor worth exploring: the first with a pause, else the first whose packets are delayed.
    fn subject(sc: &Scenario) -> usize {
        sc.actors
            .iter()
            .position(|a| !a.pauses.is_empty())
            .or_else(|| sc.actors.iter().position(|a| a.network_delay > 0))
            .unwrap_or(0)
    }

    /// The key ignores what the explorer itself varies (the subject's pause, the policy), so
    /// loading a counterexample keeps the table.
    pub(super) fn key(sc: &Scenario) -> Scenario {
        let mut sc = sc.clone();
        sc.policy = FencingPolicy::Strict;
        let who = Self::subject(&sc);
        if let Some(a) = sc.actors.get_mut(who) {
            a.pauses.clear();
        }
        sc
    }

    /// The finest grid (of a few) that keeps the run small enough to finish in a moment.
    pub fn start(sc: &Scenario) -> Self {
        let actor = Self::subject(sc);
        let mut last = String::from("nothing to explore");
        let mut runner = None;
        for parts in [100, 50, 25, 10, 5] {
            let grid = sc.horizon.div_ceil(parts).max(1);
            match Explorer::new(sc, ExploreSpec::all_policies(actor, grid)) {
                Ok(e) if e.total() <= 60_000 => {
                    runner = Some(e);
                    break;
                }
                Ok(e) => last = format!("{} schedules is too many", e.total()),
                Err(e) => last = e,
            }
        }
        let heading = runner.as_ref().map_or_else(String::new, |r| {
            let a = &sc.actors[actor];
            let delays = if a.network_delay > 0 {
                " and every delivery delay"
            } else {
                ""
            };
            format!(
                "Every placement of {}'s pause{delays} on a {} ms grid, under each policy: {} schedules.",
                a.name,
                r.spec().grid,
                r.total()
            )
        });
        Self {
            key: Self::key(sc),
            base: sc.clone(),
            failed: runner
                .is_none()
                .then(|| format!("Cannot explore this scenario: {last}.")),
            runner,
            heading,
            elapsed_ms: 0.0,
            ran: false,
        }
    }

    /// Runs up to `budget` more schedules; `elapsed_ms` is what the status line shows.
    pub fn run(&mut self, budget: usize, elapsed_ms: f64) {
        if let Some(r) = self.runner.as_mut() {
            if !r.is_finished() {
                r.step(budget);
            }
            self.elapsed_ms = elapsed_ms;
            self.ran = true;
        }
    }

    pub fn stats(&self) -> &[PolicyStats] {
        self.runner.as_ref().map_or(&[], |r| r.stats())
    }

    /// Schedules done and in all.
    pub fn progress(&self) -> (usize, usize) {
        self.runner
            .as_ref()
            .map_or((0, 0), |r| (r.done(), r.total()))
    }

    pub fn grid(&self) -> Millis {
        self.runner.as_ref().map_or(0, |r| r.spec().grid)
    }

    pub fn heading(&self) -> &str {
        &self.heading
    }

    pub fn failed(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    /// Whether a chunk has run (the status line shows from then on).
    pub fn started(&self) -> bool {
        self.ran
    }

    pub fn finished(&self) -> bool {
        self.runner.as_ref().is_none_or(Explorer::is_finished)
    }

    pub fn elapsed_ms(&self) -> f64 {
        self.elapsed_ms
    }

    /// The counterexample as a scenario to load.
    pub(super) fn example(&self, row: usize, index: usize) -> Option<Scenario> {
        let ex = self.stats().get(row)?.examples.get(index)?;
        Some(ex.schedule.apply(&self.base))
    }
}
