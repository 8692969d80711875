//! The pure share of one drag step, natively: `Lab::update(SetPause)` (a full rerun of
//! the scenario) plus every piece of markup the page recomputes for it (timeline, story,
//! storage panel, parameter fields, the off/on comparison with its two extra runs, and
//! the URL hash). The browser's share is measured by `tests/browser/bench.mjs`.
//!
//! `cargo bench --bench drag` — prints figures; nothing asserts a time.

use std::hint::black_box;
use std::time::Instant;

use fencing_lab::core::{run, FencingPolicy, Scenario};
use fencing_lab::lab::{moved, Lab, Msg};
use fencing_lab::{panels, share, timeline};

fn main() {
    let mut lab = Lab::new(Scenario::gc_pause());
    lab.update(Msg::Seek(usize::MAX));
    let pause0 = lab.scenario().actors[0].pauses[0];
    let horizon = lab.scenario().horizon;
    let moves = 20_000;
    let mut bytes = 0;
    let mut per_move = Vec::with_capacity(moves);
    for i in 0..moves {
        let delta = (i % 40).min(40 - i % 40) as i64 - 10;
        let t = Instant::now();
        lab.update(Msg::SetPause {
            actor: 0,
            pause: moved(pause0, delta, horizon),
        });
        let tr = &lab.trace;
        let sc = tr.scenario.clone();
        let off = run(&sc.clone().with_policy(FencingPolicy::Off));
        let on = run(&sc.clone().with_policy(panels::on_policy(sc.policy)));
        let out = [
            timeline::render_story(tr, lab.step, false),
            panels::story(tr, lab.step, "question"),
            panels::ledger(tr, lab.step),
            panels::params(&sc, None),
            panels::compare(&off, &on),
            share::encode(&sc, lab.step),
        ];
        bytes += black_box(out).iter().map(String::len).sum::<usize>();
        per_move.push(t.elapsed().as_secs_f64() * 1e6);
    }
    per_move.sort_by(f64::total_cmp);
    let q = |p: f64| per_move[((moves as f64 * p) as usize).min(moves - 1)];
    println!(
        "drag.native.pure_us p50={:.1} p95={:.1} markup_bytes_per_move={}",
        q(0.5),
        q(0.95),
        bytes / moves
    );
}
