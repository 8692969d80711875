//! Original against fork: what was changed, how the outcome moved, and which events differ,
//! read off the two traces (nothing here re-runs a lock or a storage: an event differs when
//! the traces say it ended differently, or it happened in one run only). And the original
//! drawn at the fork's moment, so one cursor stands at the same time on both timelines.

use std::mem::{discriminant, Discriminant};

use crate::core::story::{self, Steps};
use crate::core::{EventKind, Millis, Pause, Scenario, Trace, TraceEvent};
use crate::view::timeline::{self, Geometry, Text, TimelineModel, Type};

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

/// The original's strip: its height in user units. The page shows the middle of it (its box
/// is sliced at the stage's scale, ui/fork.rs), about 20 units; the row runs along its middle.
pub const STRIP_H: f64 = 40.0;

/// A strip label's size in `Large` (presenting): the strip is drawn at the stage's scale, which
/// the fork's row takes a tenth of, so its words are set larger to stay ≥ 18 CSS px at 1024×768.
pub const STRIP_LARGE: f64 = 21.0;

/// A strip label's size in user units.
pub fn strip_type(ty: Type) -> f64 {
    match ty {
        Type::Normal => ty.label(),
        Type::Large => STRIP_LARGE,
    }
}

/// The original as one row under the fork's stage, at the stage's scale (the same x for the
/// same time, the cursor at the fork's moment): its events as small markers on the row, the
/// differing ones (`marked`) ringed and labelled beside their marker where the label covers
/// no other differing marker and no other label.
pub fn strip(
    original: &Trace,
    fork: &Trace,
    step: usize,
    ty: Type,
    marked: &[usize],
) -> TimelineModel {
    let mut m = original_at(original, fork, step, ty, marked);
    let mid = STRIP_H / 2.0;
    let size = strip_type(ty);
    let char_w = ty.char_w() * size / ty.label();
    let left = Geometry::typed(original, ty).left();
    // The spans (x from, x to) taken by labels so far.
    let mut taken: Vec<(f64, f64)> = Vec::new();
    // The differing markers' places: a label covers none but its own (it is drawn over the
    // others, which the stage shows whole).
    let dots: Vec<(usize, f64)> = m
        .markers
        .iter()
        .filter(|k| k.differs)
        .map(|k| (k.event, k.x))
        .collect();
    let steps = Steps::of(original);
    for k in &mut m.markers {
        k.y = mid;
        k.link = None;
        (k.ring, k.dot) = if k.shape == timeline::Shape::Expiry {
            (7, 4)
        } else {
            (8, 6)
        };
        let text = k
            .differs
            .then(|| story::run_label(original, &steps, k.event))
            .flatten();
        k.label = text.and_then(|text| {
            let w = text.chars().count() as f64 * char_w;
            let gap = f64::from(k.ring) + 4.0;
            // Right of the marker, else left of it; never over the name or another label.
            [k.x + gap, k.x - gap - w]
                .into_iter()
                .find(|&x0| {
                    x0 >= left
                        && x0 + w <= timeline::VIEW_W - 4.0
                        && taken.iter().all(|&(a, b)| x0 + w < a || x0 > b)
                        && dots
                            .iter()
                            .all(|&(e, x)| e == k.event || x + 10.0 < x0 || x - 10.0 > x0 + w)
                })
                .map(|x0| {
                    taken.push((x0, x0 + w));
                    Text {
                        x: x0 + w / 2.0,
                        y: mid + 0.3 * size,
                        text,
                    }
                })
        });
    }
    // Drawn last, so a differing event's label reads over the markers its row runs across.
    let (differ, same): (Vec<_>, Vec<_>) = m.markers.into_iter().partition(|k| k.differs);
    m.markers = same;
    m.markers.extend(differ);
    m.bands.clear();
    m.beliefs.clear();
    m.conflicts.clear();
    m.pauses.clear();
    m.cut = None;
    m.cursor.y1 = 0.0;
    m.cursor.y2 = STRIP_H;
    m.view_box = format!(
        "0 0 {} {}",
        timeline::n(timeline::VIEW_W),
        timeline::n(STRIP_H)
    );
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

    /// The strip: the original's markers on one row at the stage's x, the cursor at the
    /// fork's moment, and only the differing write labelled ("−10 #33 stale_fence").
    #[test]
    fn the_strip_is_one_row_at_the_stages_scale() {
        let strict = run(&Scenario::gc_pause().with_policy(FencingPolicy::Strict));
        let off = run(&Scenario::gc_pause().with_policy(FencingPolicy::Off));
        let d = diff(&strict, &off);
        for ty in [Type::Normal, Type::Large] {
            let last = Steps::of(&off).last();
            let s = strip(&strict, &off, last, ty, &d.original);
            let whole = timeline::model_in(&strict, Steps::of(&strict).last(), false, ty);
            assert_eq!(s.markers.len(), whole.markers.len());
            assert!(s.markers.last().is_some_and(|k| k.differs));
            for k in &s.markers {
                let w = whole.markers.iter().find(|w| w.event == k.event).unwrap();
                assert_eq!(k.x, w.x);
                assert_eq!(k.y, STRIP_H / 2.0);
                assert!(k.link.is_none() && f64::from(k.ring) <= STRIP_H / 4.0);
            }
            let labelled: Vec<_> = s
                .markers
                .iter()
                .filter_map(|k| k.label.as_ref().map(|l| (k.differs, l.text.as_str())))
                .collect();
            assert_eq!(labelled, [(true, "−10 #33 stale_fence")], "{ty:?}");
            assert!(s.bands.is_empty() && s.pauses.is_empty() && s.conflicts.is_empty());
            let live = timeline::model_in(&off, last, true, ty);
            assert_eq!(s.cursor.x, live.cursor.x);
            assert_eq!((s.cursor.y1, s.cursor.y2), (0.0, STRIP_H));
        }
    }

    /// A longer TTL changes many events: each label on the strip lies clear of every other
    /// differing marker and of the other labels.
    #[test]
    fn the_strips_labels_cover_no_other_difference() {
        let strict = run(&Scenario::gc_pause().with_policy(FencingPolicy::Strict));
        let mut long = Scenario::gc_pause().with_policy(FencingPolicy::Strict);
        long.lease_ttl = 70;
        let long = run(&long);
        let d = diff(&strict, &long);
        assert!(d.original.len() > 3, "{:?}", d.original);
        for ty in [Type::Normal, Type::Large] {
            let s = strip(&strict, &long, 99, ty, &d.original);
            let cw = ty.char_w() * strip_type(ty) / ty.label();
            let spans: Vec<_> = s
                .markers
                .iter()
                .filter_map(|k| k.label.as_ref().map(|l| (k.event, l)))
                .map(|(e, l)| {
                    let half = l.text.chars().count() as f64 * cw / 2.0;
                    (e, l.x - half, l.x + half)
                })
                .collect();
            assert!(!spans.is_empty());
            for &(e, a, b) in &spans {
                for k in s.markers.iter().filter(|k| k.differs && k.event != e) {
                    assert!(
                        k.x + 10.0 < a || k.x - 10.0 > b,
                        "{ty:?}: event {e}'s label on {}",
                        k.event
                    );
                }
                for &(f, c, d) in &spans {
                    assert!(f == e || b < c || a > d, "{ty:?}: labels of {e} and {f}");
                }
            }
        }
    }
}
