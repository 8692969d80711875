//! Original against fork: what was changed, how the outcome moved, and which events differ,
//! read off the two traces (nothing here re-runs a lock or a storage: an event differs when
//! the traces say it ended differently, or it happened in one run only). And the original
//! drawn at the fork's moment, so one cursor stands at the same time on both timelines.

use std::mem::{discriminant, Discriminant};

use crate::core::story::{self, Steps};
use crate::core::{EventKind, Millis, Pause, Scenario, Trace, TraceEvent};
use crate::view::timeline::{self, Geometry, TimelineModel, Type};

/// The two runs side by side.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ForkDiff {
    /// What the fork changed, each "now (was then)": "fencing off (was strict)".
    pub changes: Vec<String>,
    /// "balance 80 (was 90)", or "balance 90 (same)".
    pub outcome: String,
    /// The original's events (indices in its trace) that differ from the fork's, or that the
    /// fork does not have.
    pub original: Vec<usize>,
    /// The fork's events that differ from the original's, or that the original does not have.
    pub fork: Vec<usize>,
}

impl ForkDiff {
    /// The fork's caption after "Fork: ": what changed and where it ends.
    pub fn caption(&self) -> String {
        let mut words = self.changes.join(" · ");
        if words.is_empty() {
            words.push_str("nothing changed yet");
        }
        format!("{words} · {}", self.outcome)
    }
}

/// An event's identity across the two runs: who, what kind, and which occurrence of that
/// kind by that actor. Times are not in it: a fork that moves a pause moves its events.
type Identity<'a> = (Option<&'a str>, Discriminant<EventKind>, usize);

/// The drawn events (pause starts and ends are drawn as the pause block) with their identity.
fn identities(t: &Trace) -> Vec<(usize, Identity<'_>)> {
    let mut seen: Vec<(Option<&str>, Discriminant<EventKind>)> = Vec::new();
    timeline::drawn(t)
        .map(|(i, e)| {
            let who = (e.actor.as_deref(), discriminant(&e.kind));
            let nth = seen.iter().filter(|k| **k == who).count();
            seen.push(who);
            (i, (who.0, who.1, nth))
        })
        .collect()
}

/// How an event ended, as the trace says: its result code and whether it landed late.
fn ending(e: &TraceEvent) -> (&'static str, bool) {
    (e.result_code(), e.is_late_write() || e.is_out_of_order())
}

/// The events of `a` that `b` has not, or has ending otherwise.
fn differing(a: &Trace, b: &Trace) -> Vec<usize> {
    let theirs = identities(b);
    identities(a)
        .into_iter()
        .filter(|(i, id)| {
            theirs
                .iter()
                .find(|(_, other)| other == id)
                .is_none_or(|(j, _)| ending(&a.events[*i]) != ending(&b.events[*j]))
        })
        .map(|(i, _)| i)
        .collect()
}

pub fn diff(original: &Trace, fork: &Trace) -> ForkDiff {
    let what = if fork.scenario.publishes() {
        "result"
    } else {
        "balance"
    };
    let (now, then) = (story::final_value(fork), story::final_value(original));
    let outcome = if now == then {
        format!("{what} {now} (same)")
    } else {
        format!("{what} {now} (was {then})")
    };
    ForkDiff {
        changes: changes(&original.scenario, &fork.scenario),
        outcome,
        original: differing(original, fork),
        fork: differing(fork, original),
    }
}

/// What differs between the two scenarios, in the words of the page's controls.
fn changes(was: &Scenario, now: &Scenario) -> Vec<String> {
    let mut out = Vec::new();
    let time = |ms: Millis| story::time_label(now, ms);
    if was.policy != now.policy {
        out.push(format!(
            "fencing {} (was {})",
            now.policy.short(),
            was.policy.short()
        ));
    }
    if was.lease_ttl != now.lease_ttl {
        out.push(format!(
            "TTL {} (was {})",
            time(now.lease_ttl),
            time(was.lease_ttl)
        ));
    }
    if was.actors.len() != now.actors.len() {
        out.push(format!(
            "{} clients (was {})",
            now.actors.len(),
            was.actors.len()
        ));
    }
    let pause = |p: Option<&Pause>| {
        p.map_or_else(
            || "none".to_owned(),
            |p| format!("{}–{}", time(p.start), time(p.end())),
        )
    };
    for (a, b) in was.actors.iter().zip(&now.actors) {
        if a.pauses != b.pauses {
            out.push(format!(
                "{}'s pause {} (was {})",
                b.name,
                pause(b.pauses.first()),
                pause(a.pauses.first())
            ));
        }
        if a.network_delay != b.network_delay {
            out.push(format!(
                "{}'s packets +{} (was +{})",
                b.name,
                time(b.network_delay),
                time(a.network_delay)
            ));
        }
    }
    // Anything else (a what-if): said, not spelled out.
    let mut named = was.clone();
    named.policy = now.policy;
    named.lease_ttl = now.lease_ttl;
    if named.actors.len() == now.actors.len() {
        for (a, b) in named.actors.iter_mut().zip(&now.actors) {
            a.pauses.clone_from(&b.pauses);
            a.network_delay = b.network_delay;
        }
    }
    if named.actors.len() == now.actors.len() && named != *now {
        out.push("a what-if".to_owned());
    }
    out
}

/// The original's drawing at the moment the fork's `step` shows: every event up to that
/// time drawn as past, and the cursor at that time, so both cursors stand at one x (the two
/// runs share the horizon, so their geometry). `marked`: the events to mark as differing.
pub fn original_at(
    original: &Trace,
    fork: &Trace,
    step: usize,
    ty: Type,
    marked: &[usize],
) -> TimelineModel {
    let at = moment(fork, step);
    let steps = Steps::of(original);
    let shown = (0..=steps.last())
        .take_while(|&k| k == 0 || moment(original, k) <= at)
        .last()
        .unwrap_or(0);
    let mut m = timeline::model_in(original, shown, false, ty);
    m.cursor.x = Geometry::typed(original, ty).x(at);
    mark(&mut m, marked);
    m
}

/// The time `step` of `t` shows.
pub fn moment(t: &Trace, step: usize) -> Millis {
    t.snapshot_at(Steps::of(t).through(step)).at
}

/// Marks the markers of `marked` events as differing.
pub fn mark(m: &mut TimelineModel, marked: &[usize]) {
    for k in &mut m.markers {
        k.differs = marked.contains(&k.event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::{run, FencingPolicy};

    /// The headline with fencing strict, forked to off: A's late write is accepted instead of
    /// refused, the balance moves 90 → 80, and only that write differs.
    #[test]
    fn fencing_off_marks_the_write_that_now_lands() {
        let strict = run(&Scenario::gc_pause().with_policy(FencingPolicy::Strict));
        let off = run(&Scenario::gc_pause().with_policy(FencingPolicy::Off));
        let d = diff(&strict, &off);
        assert_eq!(d.changes, ["fencing off (was strict)"]);
        assert_eq!(d.outcome, "balance 80 (was 90)");
        assert_eq!(
            d.caption(),
            "fencing off (was strict) · balance 80 (was 90)"
        );
        let codes = |t: &Trace, ix: &[usize]| -> Vec<&str> {
            ix.iter().map(|&i| t.events[i].result_code()).collect()
        };
        assert_eq!(codes(&strict, &d.original), ["stale_fence"]);
        assert_eq!(codes(&off, &d.fork), ["ok"]);
        assert!(off.events[d.fork[0]].is_late_write());
        // The same run against itself: nothing differs.
        let same = diff(&off, &off);
        assert!(same.original.is_empty() && same.fork.is_empty() && same.changes.is_empty());
        assert_eq!(same.caption(), "nothing changed yet · balance 80 (same)");
    }

    /// A shorter pause (A's ends at t=31): A's write reaches storage before B's, so no write
    /// is refused; the change is named and the refused write marked on the original.
    #[test]
    fn a_shorter_pause_is_named_and_its_events_marked() {
        let sc = Scenario::gc_pause().with_policy(FencingPolicy::Strict);
        let short = sc.clone().with_pause(
            0,
            Pause {
                start: 5,
                duration: 26,
            },
        );
        let (a, b) = (run(&sc), run(&short));
        let d = diff(&a, &b);
        assert_eq!(d.changes, ["A's pause 5 ms–31 ms (was 5 ms–55 ms)"]);
        assert!(d
            .original
            .iter()
            .any(|&i| a.events[i].result_code() == "stale_fence"));
        assert!(!d.fork.is_empty());
    }

    /// One cursor: the original drawn at the fork's step has its cursor at the fork's time,
    /// and shows nothing after it.
    #[test]
    fn the_original_stands_at_the_forks_moment() {
        let strict = run(&Scenario::gc_pause().with_policy(FencingPolicy::Strict));
        let off = run(&Scenario::gc_pause().with_policy(FencingPolicy::Off));
        for step in 0..=Steps::of(&off).last() {
            let live = timeline::model_in(&off, step, true, Type::Normal);
            let orig = original_at(&strict, &off, step, Type::Normal, &[]);
            assert_eq!(orig.cursor.x, live.cursor.x, "step {step}");
            let at = moment(&off, step);
            for k in &orig.markers {
                let late = strict.events[k.event].at > at;
                assert_eq!(
                    k.state == timeline::State::Future,
                    late,
                    "step {step}: event {}",
                    k.event
                );
            }
        }
        let d = diff(&strict, &off);
        let marked = original_at(&strict, &off, 99, Type::Normal, &d.original);
        let flagged: Vec<_> = marked
            .markers
            .iter()
            .filter(|k| k.differs)
            .map(|k| k.event)
            .collect();
        assert_eq!(flagged, d.original);
        assert!(marked.markers.iter().any(|k| k.class().contains("differs")));
    }
}
