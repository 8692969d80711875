//! The presenter's state machine: what is on screen, changed only by messages.
//!
//! Pure and native like the core (the crux pattern): the Leptos shell turns clicks,
//! drags and keys into [`Msg`]s and renders [`Lab`]; it never decides anything itself.

use std::sync::Arc;

use crate::core::{run, FencingPolicy, Millis, Pause, ReleaseMode, Scenario, TokenSource, Trace};

/// Everything the screen shows, derived from one scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Lab {
    /// Shared, so the shell's memos pass it on without copying every event.
    pub trace: Arc<Trace>,
    /// 0 = before the first event, `trace.len()` = after the last.
    pub step: usize,
    pub playing: bool,
    /// The last refused input, shown in the page; the state stays the last good one.
    pub error: Option<String>,
    /// The run as it was when the user forked, to compare side by side with the edited one.
    pub fork_of: Option<Arc<Trace>>,
}

/// Everything the user can do.
#[derive(Debug, Clone, PartialEq)]
pub enum Msg {
    Forward,
    Back,
    TogglePlay,
    /// One animation tick while playing.
    Tick,
    Reset,
    Seek(usize),
    SetPolicy(FencingPolicy),
    CyclePolicy,
    /// Move or resize an actor's pause (drag, or the number inputs).
    SetPause {
        actor: usize,
        pause: Pause,
    },
    /// Replace the whole scenario (picker, import).
    Load(Scenario),
    /// Restore a shared view: scenario and step.
    Restore {
        scenario: Scenario,
        step: usize,
    },
    SetTtl(Millis),
    /// Where tokens come from (not for Redlock, which mints none).
    SetTokenSource(TokenSource),
    /// How clients release the lock.
    SetRelease(ReleaseMode),
    /// Whether the handoff barrier runs.
    SetBarrier(bool),
    /// When the lock server's primary fails over, or never.
    SetFailover(Option<Millis>),
    SetDelay {
        actor: usize,
        delay: Millis,
    },
    /// Keep the current run as the original and edit a copy.
    Fork,
    Unfork,
    /// Show a refused input (e.g. a field that did not parse).
    Refuse(String),
    DismissError,
}

impl Default for Lab {
    fn default() -> Self {
        Self::new(Scenario::gc_pause())
    }
}

impl Lab {
    pub fn new(scenario: Scenario) -> Self {
        Self {
            trace: Arc::new(run(&scenario)),
            step: 0,
            playing: false,
            error: None,
            fork_of: None,
        }
    }

    pub fn scenario(&self) -> &Scenario {
        &self.trace.scenario
    }

    pub fn at_end(&self) -> bool {
        self.step >= self.trace.len()
    }

    pub fn update(&mut self, msg: Msg) {
        match msg {
            Msg::Forward => self.step = (self.step + 1).min(self.trace.len()),
            Msg::Back => self.step = self.step.saturating_sub(1),
            Msg::TogglePlay => {
                if !self.playing && self.at_end() {
                    self.step = 0; // Play at the end replays from the start
                }
                self.playing = !self.playing;
            }
            Msg::Tick => {
                if self.playing {
                    self.step = (self.step + 1).min(self.trace.len());
                    self.playing = !self.at_end();
                }
            }
            Msg::Reset => {
                self.step = 0;
                self.playing = false;
            }
            Msg::Seek(step) => self.step = step.min(self.trace.len()),
            Msg::SetPolicy(policy) => {
                let mut sc = self.scenario().clone();
                sc.policy = policy;
                self.replace(sc);
            }
            Msg::CyclePolicy => self.update(Msg::SetPolicy(self.scenario().policy.next())),
            Msg::SetPause { actor, pause } => match self.check_pause(actor, pause) {
                Ok(()) => {
                    let sc = self.scenario().clone().with_pause(actor, pause);
                    self.replace(sc);
                }
                Err(e) => self.error = Some(e),
            },
            Msg::Load(sc) => match sc.validate() {
                Ok(()) => {
                    *self = Lab::new(sc);
                }
                Err(e) => self.error = Some(format!("That scenario was not loaded: {e}.")),
            },
            Msg::Restore { scenario, step } => {
                self.update(Msg::Load(scenario));
                self.step = step.min(self.trace.len());
            }
            Msg::SetTokenSource(source) => {
                let mut sc = self.scenario().clone();
                if sc.redlock.is_some() {
                    self.error =
                        Some("Redlock mints no token: its token source cannot change.".to_owned());
                } else {
                    sc.token_source = source;
                    self.replace(sc);
                }
            }
            Msg::SetRelease(mode) => {
                let mut sc = self.scenario().clone();
                sc.release = mode;
                self.replace(sc);
            }
            Msg::SetBarrier(on) => {
                let mut sc = self.scenario().clone();
                sc.skip_barrier = !on;
                self.replace(sc);
            }
            Msg::SetFailover(at) => {
                let mut sc = self.scenario().clone();
                match at {
                    Some(t) if t > sc.horizon => {
                        self.error = Some(format!(
                            "The failover must come by t={}, the end of the timeline.",
                            crate::core::story::time_label(&sc, sc.horizon)
                        ));
                    }
                    _ => {
                        sc.failover_at = at;
                        self.replace_checked(sc);
                    }
                }
            }
            Msg::SetTtl(ttl) => {
                let mut sc = self.scenario().clone();
                sc.lease_ttl = ttl;
                self.replace_checked(sc);
            }
            Msg::SetDelay { actor, delay } => {
                let mut sc = self.scenario().clone();
                match sc.actors.get_mut(actor) {
                    Some(a) => {
                        a.network_delay = delay;
                        self.replace_checked(sc);
                    }
                    None => self.error = Some(format!("There is no actor number {actor}.")),
                }
            }
            Msg::Fork => self.fork_of = Some(self.trace.clone()),
            Msg::Unfork => self.fork_of = None,
            Msg::Refuse(why) => self.error = Some(why),
            Msg::DismissError => self.error = None,
        }
    }

    /// Re-runs with an edited scenario, keeping the viewer at the end if they were there.
    fn replace(&mut self, scenario: Scenario) {
        let was_at_end = self.at_end() && self.step > 0;
        self.trace = Arc::new(run(&scenario));
        self.step = if was_at_end {
            self.trace.len()
        } else {
            self.step.min(self.trace.len())
        };
        self.error = None;
    }

    /// Re-runs with an edited scenario only if it validates; otherwise says why and keeps the old one.
    fn replace_checked(&mut self, scenario: Scenario) {
        match scenario.validate() {
            Ok(()) => self.replace(scenario),
            Err(e) => self.error = Some(format!("Not applied: {e}.")),
        }
    }

    fn check_pause(&self, actor: usize, pause: Pause) -> Result<(), String> {
        let sc = self.scenario();
        let Some(a) = sc.actors.get(actor) else {
            return Err(format!("There is no actor number {actor}."));
        };
        if pause.end() > sc.horizon {
            return Err(format!(
                "{}'s pause must end by t={} ms (it would end at {} ms).",
                a.name,
                sc.horizon,
                pause.end()
            ));
        }
        Ok(())
    }
}

/// Keyboard map: ← → step, Space play, `.` forward (presenter clickers send it), `f` fencing.
pub fn key_to_msg(key: &str) -> Option<Msg> {
    match key {
        "ArrowRight" | "." | "PageDown" => Some(Msg::Forward),
        "ArrowLeft" | "," | "PageUp" => Some(Msg::Back),
        " " | "Spacebar" => Some(Msg::TogglePlay),
        "f" | "F" => Some(Msg::CyclePolicy),
        "Home" => Some(Msg::Reset),
        _ => None,
    }
}

/// Horizontal geometry of the timeline, in SVG user units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    pub left: f64,
    pub width: f64,
    pub horizon: Millis,
}

impl Scale {
    pub fn x(&self, t: Millis) -> f64 {
        self.left + self.width * (t.min(self.horizon) as f64) / (self.horizon.max(1) as f64)
    }

    /// Converts a horizontal distance in user units to whole milliseconds.
    pub fn ms(&self, dx: f64) -> i64 {
        (dx * self.horizon as f64 / self.width).round() as i64
    }
}

/// A pause moved by `delta` ms, kept inside `[0, horizon]` with its length unchanged.
pub fn moved(p: Pause, delta: i64, horizon: Millis) -> Pause {
    let max_start = horizon.saturating_sub(p.duration) as i64;
    Pause {
        start: (p.start as i64 + delta).clamp(0, max_start) as Millis,
        duration: p.duration,
    }
}

/// A pause resized from its right edge by `delta` ms: at least 1 ms, never past the horizon.
pub fn resized(p: Pause, delta: i64, horizon: Millis) -> Pause {
    let max_len = horizon.saturating_sub(p.start).max(1) as i64;
    Pause {
        start: p.start,
        duration: (p.duration as i64 + delta).clamp(1, max_len) as Millis,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stepping_is_clamped_and_back_is_indexing() {
        let mut lab = Lab::default();
        lab.update(Msg::Back);
        assert_eq!(lab.step, 0);
        for _ in 0..100 {
            lab.update(Msg::Forward);
        }
        assert_eq!(lab.step, lab.trace.len());
        assert_eq!(lab.trace.snapshot_at(lab.step).balance, 90);
        lab.update(Msg::Back);
        assert_eq!(lab.step, lab.trace.len() - 1);
    }

    #[test]
    fn policy_toggle_keeps_you_at_the_end() {
        let mut lab = Lab::default();
        lab.update(Msg::Seek(usize::MAX));
        lab.update(Msg::SetPolicy(FencingPolicy::Off));
        assert!(lab.at_end());
        assert_eq!(lab.trace.summary.final_balance, 80);
        lab.update(Msg::CyclePolicy);
        assert_eq!(lab.scenario().policy, FencingPolicy::Strict);
        assert_eq!(lab.trace.summary.final_balance, 90);
    }

    #[test]
    fn out_of_range_pause_is_refused_and_state_kept() {
        let mut lab = Lab::default();
        let before = lab.trace.clone();
        lab.update(Msg::SetPause {
            actor: 0,
            pause: Pause {
                start: 90,
                duration: 50,
            },
        });
        assert!(lab.error.as_deref().unwrap().contains("must end by"));
        assert_eq!(lab.trace, before);
        lab.update(Msg::SetPause {
            actor: 9,
            pause: Pause {
                start: 0,
                duration: 5,
            },
        });
        assert_eq!(lab.trace, before);
    }

    #[test]
    fn fork_keeps_the_original_while_the_copy_changes() {
        let mut lab = Lab::default();
        lab.update(Msg::Seek(usize::MAX));
        lab.update(Msg::Fork);
        lab.update(Msg::SetPolicy(FencingPolicy::Off));
        let original = lab.fork_of.as_ref().unwrap();
        assert_eq!(original.summary.final_balance, 90);
        assert_eq!(lab.trace.summary.final_balance, 80);
        lab.update(Msg::Unfork);
        assert!(lab.fork_of.is_none());
    }

    #[test]
    fn ttl_and_delay_edits_are_validated() {
        let mut lab = Lab::default();
        lab.update(Msg::SetTtl(0));
        assert!(lab.error.as_deref().unwrap().contains("lease_ttl"));
        assert_eq!(lab.scenario().lease_ttl, 30);
        lab.update(Msg::SetTtl(100));
        assert!(lab.error.is_none());
        assert_eq!(
            lab.trace.summary.final_balance, 90,
            "a 100 ms lease outlives the pause: B waits, then finds the job done"
        );
        assert!(!lab.trace.summary.conflict());
        assert_eq!(lab.trace.summary.duplicate_runs, 0);
        assert_eq!(lab.trace.summary.accepted_writes, 1);
        assert!(lab
            .trace
            .events
            .iter()
            .any(|e| e.actor.as_deref() == Some("B")
                && e.kind == crate::core::EventKind::JobChecked { done: true }));
        lab.update(Msg::SetDelay { actor: 7, delay: 1 });
        assert!(lab.error.is_some());
        lab.update(Msg::SetDelay { actor: 0, delay: 5 });
        assert_eq!(lab.scenario().actors[0].network_delay, 5);
    }

    #[test]
    fn restore_clamps_the_step() {
        let mut lab = Lab::default();
        lab.update(Msg::Restore {
            scenario: Scenario::gc_pause().with_policy(FencingPolicy::Off),
            step: 9_999,
        });
        assert!(lab.at_end());
        assert_eq!(lab.trace.summary.final_balance, 80);
    }

    #[test]
    fn play_runs_to_the_end_then_stops() {
        let mut lab = Lab::default();
        lab.update(Msg::TogglePlay);
        for _ in 0..lab.trace.len() {
            lab.update(Msg::Tick);
        }
        assert!(lab.at_end());
        assert!(!lab.playing);
        lab.update(Msg::TogglePlay);
        assert_eq!(lab.step, 0, "play at the end replays");
    }

    #[test]
    fn keys_map_to_messages() {
        assert_eq!(key_to_msg("ArrowRight"), Some(Msg::Forward));
        assert_eq!(key_to_msg("."), Some(Msg::Forward));
        assert_eq!(key_to_msg("ArrowLeft"), Some(Msg::Back));
        assert_eq!(key_to_msg(" "), Some(Msg::TogglePlay));
        assert_eq!(key_to_msg("f"), Some(Msg::CyclePolicy));
        assert_eq!(key_to_msg("q"), None);
    }

    #[test]
    fn drag_geometry_clamps() {
        let p = Pause {
            start: 5,
            duration: 50,
        };
        assert_eq!(moved(p, -100, 100).start, 0);
        assert_eq!(moved(p, 100, 100).start, 50);
        assert_eq!(resized(p, 1000, 100).duration, 95);
        assert_eq!(resized(p, -1000, 100).duration, 1);
        let s = Scale {
            left: 70.0,
            width: 900.0,
            horizon: 100,
        };
        assert_eq!(s.x(50), 520.0);
        assert_eq!(s.ms(90.0), 10);
    }
}
