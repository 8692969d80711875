//! The pure share of one drag step, natively: `Lab::update(Edit(Pause))` (a full rerun of the
//! scenario and of the off/on comparison) plus every view model the page recomputes for it
//! (timeline, story, storage panel, parameter fields, comparison) and the URL hash. The
//! browser's share is measured by `tests/browser/bench.mjs`.
//!
//! `cargo bench --bench drag` — prints figures; nothing asserts a time.

use std::hint::black_box;
use std::time::Instant;

use fencing_lab::core::Scenario;
use fencing_lab::lab::{Lab, Msg, ScenarioEdit};
use fencing_lab::share;
use fencing_lab::view::geometry::moved;
use fencing_lab::view::{panels, timeline};

fn main() {
    let mut lab = Lab::new(Scenario::gc_pause());
    lab.update(Msg::Seek(usize::MAX));
    let pause0 = lab.scenario().actors[0].pauses[0];
    let horizon = lab.scenario().horizon;
    let moves = 20_000;
    let mut markers = 0;
    let mut per_move = Vec::with_capacity(moves);
    for i in 0..moves {
        let delta = (i % 40).min(40 - i % 40) as i64 - 10;
        let t = Instant::now();
        lab.update(Msg::Edit(ScenarioEdit::Pause {
            actor: 0,
            pause: Some(moved(pause0, delta, horizon)),
        }));
        let (tr, step) = (lab.trace(), lab.step());
        let (off, on) = lab.compare();
        let drawn = black_box(timeline::model(tr, step, true));
        black_box((
            panels::story(tr, step),
            panels::storage(tr, step),
            panels::params(&tr.scenario, None),
            panels::compare(off, on),
            share::encode(&tr.scenario, step),
        ));
        markers += drawn.markers.len();
        per_move.push(t.elapsed().as_secs_f64() * 1e6);
    }
    per_move.sort_by(f64::total_cmp);
    let q = |p: f64| per_move[((moves as f64 * p) as usize).min(moves - 1)];
    println!(
        "drag.native.pure_us p50={:.1} p95={:.1} markers_per_move={}",
        q(0.5),
        q(0.95),
        markers / moves
    );
}
