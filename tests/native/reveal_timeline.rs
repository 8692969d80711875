//! The timeline while the reveal is on (presenter mode): the event a step is about keeps its
//! label, only what has begun has words (and they take room), no two labels meet nor cross a
//! belief bar, and a label on a client's lane stays in that lane.

use fencing_lab::core::story::{run_label, Steps};
use fencing_lab::core::{deck, run, FencingPolicy, Scenario, Trace};
use fencing_lab::view::timeline::{
    model_in, revealed_in, Geometry, State, TimelineModel, Type, CONFLICT_LABEL, TOP,
};

/// Every deck entry, fencing off and on.
fn traces() -> Vec<(String, Trace)> {
    let mut out = Vec::new();
    for entry in deck::DECK {
        for policy in [FencingPolicy::Off, FencingPolicy::Strict] {
            let t = run(&(entry.build)().with_policy(policy));
            out.push((format!("{} {policy:?}", entry.id), t));
        }
    }
    out
}

type Rect = (f64, f64, f64, f64);

/// The boxes of the words drawn while revealing (markers not in the future, rows begun), as
/// the layout sizes them.
fn drawn_words(m: &TimelineModel, ty: Type) -> Vec<(String, Rect)> {
    let (size, band) = (ty.label(), ty.band());
    let chars = |s: &str| s.chars().count() as f64;
    let mut out = Vec::new();
    for k in m.markers.iter().filter(|k| k.state != State::Future) {
        if let Some(l) = &k.label {
            let reach = (chars(&l.text) * ty.char_w() + 0.48 * size) / 2.0 + 0.32 * size;
            let r = (
                l.x - reach,
                l.y - 1.04 * size,
                l.x + reach,
                l.y + 0.32 * size,
            );
            out.push((l.text.clone(), r));
        }
    }
    for b in m
        .bands
        .iter()
        .filter(|b| b.begun && !b.label.text.is_empty())
    {
        let (w, y) = (
            chars(&b.label.text) * ty.band_char_w(),
            b.label.y - 0.38 * band,
        );
        let r = (b.label.x, y - 0.62 * band, b.label.x + w, y + 0.62 * band);
        out.push((b.label.text.clone(), r));
    }
    for p in m.pauses.iter().filter(|p| p.begun) {
        let w = chars(&p.label.text) * ty.band_char_w();
        let r = (
            p.label.x,
            p.label.y - 0.8 * band,
            p.label.x + w,
            p.label.y + 0.25 * band,
        );
        out.push((p.label.text.clone(), r));
    }
    for c in m.conflicts.iter().filter(|c| c.begun) {
        if let Some(l) = &c.label {
            let w = (chars(CONFLICT_LABEL) * ty.char_w() + 0.48 * size) * 0.95;
            out.push((l.text.clone(), (l.x - 4.0, 0.0, l.x + w, TOP - 2.0)));
        }
    }
    out
}

fn apart(a: Rect, b: Rect) -> bool {
    a.2 <= b.0 + 1e-6 || b.2 <= a.0 + 1e-6 || a.3 <= b.1 + 1e-6 || b.3 <= a.1 + 1e-6
}

/// Presenting at every step: each event of the step that has words shows them; a marker
/// not yet reached has none; the words drawn never meet (large type and normal alike).
#[test]
fn revealing_the_step_s_event_keeps_its_label_and_no_words_meet() {
    let mut problems = Vec::new();
    for (id, t) in traces() {
        let steps = Steps::of(&t);
        for ty in [Type::Large, Type::Normal] {
            for step in 0..=steps.last() {
                let m = revealed_in(&t, step, true, ty);
                for k in &m.markers {
                    let wants = run_label(&t, &steps, k.event).is_some();
                    match k.state {
                        State::Current if wants && k.label.is_none() => problems.push(format!(
                            "{id} {ty:?} step {step}: event {} unlabelled",
                            k.event
                        )),
                        State::Future if k.label.is_some() => {
                            problems.push(format!("{id} {ty:?} step {step}: a future label"))
                        }
                        _ => {}
                    }
                }
                let words = drawn_words(&m, ty);
                // A client's belief bar, as far as it is drawn, is under no words.
                for b in m.beliefs.iter().map(|b| b.bar) {
                    let bar = (b.x, b.y, (b.x + b.w).min(m.cursor.x), b.y + b.h);
                    for (a, ra) in words.iter().filter(|(_, r)| !apart(*r, bar)) {
                        problems.push(format!(
                            "{id} {ty:?} step {step}: {a} across a belief {ra:?}"
                        ));
                    }
                }
                for (i, (a, ra)) in words.iter().enumerate() {
                    for (b, rb) in &words[i + 1..] {
                        if !apart(*ra, *rb) {
                            problems.push(format!("{id} {ty:?} step {step}: {a} on {b}"));
                        }
                    }
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A marker's words on a client's lane stay in it (their box's middle inside the lane), in
/// every layout: "acquire #34" under B's marker read as C's on the slim lanes of large type.
#[test]
fn a_label_on_a_client_lane_stays_in_that_lane() {
    for (id, t) in traces() {
        for ty in [Type::Large, Type::Normal] {
            let g = Geometry::typed(&t, ty);
            let last = Steps::of(&t).last();
            let models = (0..=last).map(|s| revealed_in(&t, s, true, ty));
            for m in models.chain([model_in(&t, last, true, ty)]) {
                for k in m.markers.iter().filter(|k| k.key.lane < g.actors) {
                    if let Some(l) = &k.label {
                        let mid = l.y - 0.36 * ty.label();
                        let lane = g.lane_mid(k.key.lane);
                        assert!(
                            (mid - lane).abs() <= g.lane_h() / 2.0,
                            "{id} {ty:?}: {} outside its lane",
                            l.text
                        );
                    }
                }
            }
        }
    }
}

/// A pause, a lease and the two-believers banner have words from the step they begin, not
/// before: at GC pause's step 3 (A freezes at t=5) the pause is named though none of its body
/// is left of the cursor yet.
#[test]
fn a_row_has_words_from_the_step_it_begins() {
    let t = run(&Scenario::gc_pause());
    let steps = Steps::of(&t);
    let started = (0..=steps.last())
        .find(|&s| revealed_in(&t, s, true, Type::Large).pauses[0].begun)
        .expect("the pause begins");
    let at = |s: usize| t.snapshot_at(steps.through(s)).at;
    assert_eq!((started, at(started)), (3, 5), "A freezes at step 3, t=5");
    let before = revealed_in(&t, started - 1, true, Type::Large);
    assert!(!before.pauses[0].begun);
    let end = revealed_in(&t, steps.last(), true, Type::Large);
    assert!(end.bands.iter().all(|b| b.begun) && end.conflicts.iter().all(|c| c.begun));
    let first = revealed_in(&t, 1, true, Type::Large);
    let begun: Vec<bool> = first.bands.iter().map(|b| b.begun).collect();
    assert_eq!(begun, [true, false], "A's grant is step 1; B's comes later");
    assert!(!first.conflicts[0].begun);
}

/// Redis failover: B's lease (granted by the promoted replica) lies under A's. A's words end
/// before B's band begins instead of running under it, in either type.
#[test]
fn a_lease_label_ends_before_a_lease_granted_after_it() {
    let t = run(&(deck::find("redis-failover").unwrap().build)().with_policy(FencingPolicy::Off));
    for ty in [Type::Normal, Type::Large] {
        let m = model_in(&t, Steps::of(&t).last(), true, ty);
        assert!(m.bands.len() >= 2);
        for a in m.bands.iter().filter(|b| !b.label.text.is_empty()) {
            let right = a.label.x + a.label.text.chars().count() as f64 * ty.band_char_w();
            for b in m.bands.iter().filter(|b| b.bar.x > a.bar.x) {
                assert!(
                    right <= b.bar.x,
                    "{ty:?}: {} runs under {}",
                    a.label.text,
                    b.label.text
                );
            }
        }
    }
}

/// Waiting on a lock: C is granted token 35 and gives it back in the same millisecond. Its
/// lease is drawn (a sliver) and named, at the step it happens and after.
#[test]
fn a_lease_held_for_no_time_is_drawn_and_named() {
    let t = run(&(deck::find("lock-queue").unwrap().build)().with_policy(FencingPolicy::Off));
    let steps = Steps::of(&t);
    for (ty, step) in [
        (Type::Large, 12),
        (Type::Large, steps.last()),
        (Type::Normal, steps.last()),
    ] {
        let m = revealed_in(&t, step, true, ty);
        let c = m.bands.iter().find(|b| b.key.0 == 2).expect("C's lease");
        assert!(c.begun && c.bar.w >= 4.0, "{ty:?} step {step}: {:?}", c.bar);
        assert!(
            c.label.text.starts_with('C'),
            "{ty:?} step {step}: {:?}",
            c.label
        );
    }
}
