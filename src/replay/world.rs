//! One run's world: the faults that are the world's, not an actor's, made at their scenario
//! times on the run's lock service: a lock node's clock step (libfaketime), a replica cut
//! off from its primary, a failover, and a member cut off on the minority side. Which of them
//! a service has, and how, is its own ([`Service::fault`]). Storage's failover is made on
//! storage's own servers ([`Failover`]).

use fencing_lab::core::{self, Millis, Scenario};

use super::lock::{Fault, Service, Stage};
use super::observed::{observe, Shared};
use super::run::{Env, AT_CLOCK_STEP, AT_FAILOVER};
use super::standby::Failover;

/// What the world's thread acts on and reports to.
pub struct World<'a> {
    pub env: &'a Env<'a>,
    pub sc: &'a Scenario,
    pub service: &'a dyn Service,
    pub shared: &'a Shared,
    /// Storage's primary and standby, where storage fails over.
    pub storage: Option<&'a Failover>,
}

/// A fault the world makes: on the lock service, or on storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Made {
    Lock(Fault),
    /// The standby's stream is cut: it gets nothing committed from here on.
    StandbyCut,
    /// Storage's primary dies and its standby, `lag` behind, is promoted.
    StorageFailover {
        lag: Millis,
    },
}

impl World<'_> {
    fn storage(&self) -> Result<&Failover, String> {
        (self.storage).ok_or_else(|| "storage fails over, but has no standby".to_owned())
    }

    /// What a service makes a fault on.
    fn stage(&self) -> Stage<'_> {
        let (sc, scale, shared) = (self.sc, self.env.scale, self.shared);
        Stage { sc, scale, shared }
    }

    /// Makes the world's faults at their times (on its own thread, beside the actors').
    pub fn run(&self) -> Result<(), String> {
        let (env, sc) = (self.env, self.sc);
        for (t, fault) in schedule(sc).into_iter().filter(|(t, _)| *t <= sc.horizon) {
            let frac = match fault {
                Made::Lock(Fault::ClockStep { .. }) => AT_CLOCK_STEP,
                // After this instant's steps (or, with no lag, just before the failover).
                Made::Lock(Fault::Cut) if sc.replication_lag() == Some(0) => -0.4,
                Made::StandbyCut if sc.storage_crash().is_some_and(|(_, lag)| lag == 0) => -0.4,
                Made::Lock(Fault::Cut) | Made::StandbyCut => 0.4,
                Made::Lock(Fault::Failover | Fault::Minority { .. })
                | Made::StorageFailover { .. } => AT_FAILOVER,
            };
            env.sleep_until(t, frac);
            let note = match fault {
                Made::Lock(fault) => self.service.fault(&self.stage(), t, fault)?,
                Made::StandbyCut => Some(format!("t={t}: {}", self.storage()?.cut()?)),
                Made::StorageFailover { lag } => {
                    let (seen, note) = self.storage()?.fail_over(lag)?;
                    observe(self.shared).saw(t, None, seen);
                    Some(format!("t={t}: {note}"))
                }
            };
            if let Some(note) = note {
                observe(self.shared).notes.push(note);
            }
        }
        if let Some(note) = self.service.end_note() {
            observe(self.shared).notes.push(note);
        }
        Ok(())
    }
}

/// The world's faults in the order they are made: the scenario's, each as the servers make
/// it (a replica's or standby's lag is its stream cut that long before the failover).
fn schedule(sc: &Scenario) -> Vec<(Millis, Made)> {
    let mut faults: Vec<(Millis, Made)> = Vec::new();
    let mut jumped: Millis = 0;
    for f in &sc.faults {
        match f.fault {
            core::Fault::ClockJump { by, .. } => {
                jumped += by;
                match faults.last_mut() {
                    // Steps at one instant are one step.
                    Some((t, Made::Lock(Fault::ClockStep { by: b, jumped: j }))) if *t == f.at => {
                        (*b, *j) = (*b + by, jumped)
                    }
                    _ => faults.push((f.at, Made::Lock(Fault::ClockStep { by, jumped }))),
                }
            }
            core::Fault::Failover { lag } | core::Fault::Restart { lag } => {
                faults.push((f.at, Made::Lock(Fault::Failover)));
                let lag = lag.filter(|lag| *lag <= f.at);
                faults.extend(lag.map(|lag| (f.at - lag, Made::Lock(Fault::Cut))));
            }
            core::Fault::Partition { until, .. } if sc.minority() => faults.extend(
                [(f.at, true), (until, false)]
                    .map(|(t, cut)| (t, Made::Lock(Fault::Minority { cut }))),
            ),
            // The client's own commands are dropped by its connection, not the world.
            core::Fault::Partition { .. } => {}
            core::Fault::StorageFailover { lag } => faults.extend([
                (f.at.saturating_sub(lag), Made::StandbyCut),
                (f.at, Made::StorageFailover { lag }),
            ]),
        }
    }
    faults.sort_unstable();
    faults
}

#[cfg(test)]
mod tests {
    use super::*;
    use fencing_lab::core::{Fault as CoreFault, FaultAt};

    /// The standby's lag is its stream cut that long before the primary dies; with no lag
    /// (synchronous commit) the cut comes at the failover's instant, ahead of it.
    #[test]
    fn a_standby_lags_by_its_stream_cut_before_the_failover() {
        let mut sc = Scenario::storage_failover();
        let failover = Made::StorageFailover { lag: 15 };
        assert_eq!(schedule(&sc), [(30, Made::StandbyCut), (45, failover)]);
        let fault = CoreFault::StorageFailover { lag: 0 };
        sc.faults = vec![FaultAt { at: 45, fault }];
        let sync = Made::StorageFailover { lag: 0 };
        assert_eq!(schedule(&sc), [(45, Made::StandbyCut), (45, sync)]);
    }
}
