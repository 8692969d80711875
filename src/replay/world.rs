//! One run's world: the faults that are the world's, not an actor's, made at their scenario
//! times on the run's lock service: a lock node's clock step (libfaketime), a replica cut
//! off from its primary, a failover, and a member cut off on the minority side. Which of them
//! a service has, and how, is its own ([`Service::fault`]).

use fencing_lab::core::{self, Millis, Scenario};

use super::lock::{Fault, Service, Stage};
use super::observed::{observe, Shared};
use super::run::{Env, AT_CLOCK_STEP, AT_FAILOVER};

/// What the world's thread acts on and reports to.
pub struct World<'a> {
    pub env: &'a Env<'a>,
    pub sc: &'a Scenario,
    pub service: &'a dyn Service,
    pub shared: &'a Shared,
}

impl World<'_> {
    /// What a service makes a fault on.
    fn stage(&self) -> Stage<'_> {
        let (sc, scale, shared) = (self.sc, self.env.scale, self.shared);
        Stage { sc, scale, shared }
    }

    /// Makes the world's faults at their times (on its own thread, beside the actors').
    pub fn run(&self) -> Result<(), String> {
        let (env, sc) = (self.env, self.sc);
        let mut faults: Vec<(Millis, Fault)> = Vec::new();
        let mut jumped: Millis = 0;
        for f in &sc.faults {
            match f.fault {
                core::Fault::ClockJump { by, .. } => {
                    jumped += by;
                    match faults.last_mut() {
                        // Steps at one instant are one step.
                        Some((t, Fault::ClockStep { by: b, jumped: j })) if *t == f.at => {
                            (*b, *j) = (*b + by, jumped)
                        }
                        _ => faults.push((f.at, Fault::ClockStep { by, jumped })),
                    }
                }
                core::Fault::Failover { lag } | core::Fault::Restart { lag } => {
                    faults.push((f.at, Fault::Failover));
                    let lag = lag.filter(|lag| *lag <= f.at);
                    faults.extend(lag.map(|lag| (f.at - lag, Fault::Cut)));
                }
                core::Fault::Partition { until, .. } if sc.minority() => faults.extend(
                    [(f.at, true), (until, false)].map(|(t, cut)| (t, Fault::Minority { cut })),
                ),
                // The client's own commands are dropped by its connection, not the world.
                core::Fault::Partition { .. } => {}
                // Not replayed: `not_reproducible` skips a storage failover.
                core::Fault::StorageFailover { .. } => {}
            }
        }
        faults.sort_unstable();
        for (t, fault) in faults.into_iter().filter(|(t, _)| *t <= sc.horizon) {
            let frac = match fault {
                Fault::ClockStep { .. } => AT_CLOCK_STEP,
                // After this instant's steps (or, with no lag, just before the failover).
                Fault::Cut if sc.replication_lag() == Some(0) => -0.4,
                Fault::Cut => 0.4,
                Fault::Failover | Fault::Minority { .. } => AT_FAILOVER,
            };
            env.sleep_until(t, frac);
            if let Some(note) = self.service.fault(&self.stage(), t, fault)? {
                observe(self.shared).notes.push(note);
            }
        }
        if let Some(note) = self.service.end_note() {
            observe(self.shared).notes.push(note);
        }
        Ok(())
    }
}
