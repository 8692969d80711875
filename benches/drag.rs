//! The pure share of one drag step, natively: `Lab::update(Edit(Pause))` (a full rerun of the
//! scenario and of the off/on comparison) plus every view model the page recomputes for it
//! (timeline, story, storage panel, parameter fields, comparison) and the URL hash. The
//! browser's share is measured by `tests/browser/bench.mjs`.
//!
//! `cargo bench --bench drag` — prints figures; nothing asserts a time.

use std::hint::black_box;
use std::time::Instant;

use fencing_lab::core::{story, Scenario};
use fencing_lab::lab::{Lab, Msg, ScenarioEdit};
use fencing_lab::share;
use fencing_lab::view::geometry::moved;
use fencing_lab::view::{panels, timeline};

/// The parts of one move, in the order the page recomputes them.
const PARTS: [&str; 7] = [
    "update", "timeline", "story", "storage", "params", "compare", "share",
];

/// The p50 and p95 of `xs` (sorted here).
fn quantiles(xs: &mut [f64]) -> (f64, f64) {
    xs.sort_by(f64::total_cmp);
    let q = |p: f64| xs[((xs.len() as f64 * p) as usize).min(xs.len() - 1)];
    (q(0.5), q(0.95))
}

fn main() {
    let mut lab = Lab::new(Scenario::gc_pause());
    lab.update(Msg::Seek(usize::MAX));
    let pause0 = lab.scenario().actors[0].pauses[0];
    let horizon = lab.scenario().horizon;
    let moves = 20_000;
    let mut markers = 0;
    let mut per_move = Vec::with_capacity(moves);
    let mut parts: Vec<Vec<f64>> = vec![Vec::with_capacity(moves); PARTS.len()];
    let mut story_words = Vec::with_capacity(moves);
    for i in 0..moves {
        let delta = (i % 40).min(40 - i % 40) as i64 - 10;
        let t = Instant::now();
        let mut lap = t;
        let mut split = |k: usize| {
            let now = Instant::now();
            parts[k].push((now - lap).as_secs_f64() * 1e6);
            lap = now;
        };
        lab.update(Msg::Edit(ScenarioEdit::Pause {
            actor: 0,
            pause: Some(moved(pause0, delta, horizon)),
        }));
        split(0);
        let (tr, step) = (lab.trace(), lab.step());
        let (off, on) = lab.compare();
        let drawn = black_box(timeline::model(tr, step, true));
        split(1);
        black_box(panels::story(tr, step));
        split(2);
        black_box(panels::storage(tr, step));
        split(3);
        black_box(panels::params(&tr.scenario, None));
        split(4);
        black_box(panels::compare(off, on));
        split(5);
        black_box(share::encode(&tr.scenario, step));
        split(6);
        markers += drawn.markers.len();
        per_move.push(t.elapsed().as_secs_f64() * 1e6);
        // The words alone, as the timeline's tooltips and the story panel ask for them
        // (outside the move's time): what the story costs of a move.
        let w = Instant::now();
        let words = story::Story::of(tr);
        for k in 0..=words.last() {
            black_box(words.narration(k));
        }
        black_box(words.say(step));
        story_words.push(w.elapsed().as_secs_f64() * 1e6);
    }
    let (p50, p95) = quantiles(&mut per_move);
    println!(
        "drag.native.pure_us p50={p50:.1} p95={p95:.1} markers_per_move={}",
        markers / moves
    );
    // Where a move's time goes: each part's own p50 and p95 (they do not add up to the
    // whole's quantiles).
    for (name, xs) in PARTS.iter().zip(&mut parts) {
        let (p50, p95) = quantiles(xs);
        println!("drag.native.part.{name}_us p50={p50:.1} p95={p95:.1}");
    }
    let (p50, p95) = quantiles(&mut story_words);
    println!("drag.native.story_words_us p50={p50:.1} p95={p95:.1}");
}
