//! Native benchmark of the schedule explorer (plain `main`, `harness = false`).
//!
//! `CARGO_TARGET_DIR=/tmp/explore-target cargo bench --bench explore`
//!
//! Benches may read the clock; the core never does. Each figure is the median of 5 runs.
//! The budget it guards: ≥ 10,000 schedules of the headline scenario in ≤ 250 ms in
//! Chromium (wasm), so natively it should be far below that.

use std::hint::black_box;
use std::time::{Duration, Instant};

use fencing_lab::core::explore::{explore, ExploreSpec, Explorer, PolicyStats};
use fencing_lab::core::{run, Scenario};

const RUNS: usize = 5;

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn bench_explore(label: &str, base: &Scenario, grid: u64) -> Vec<PolicyStats> {
    let spec = ExploreSpec::all_policies(0, grid);
    let total = Explorer::new(base, spec.clone())
        .expect("valid spec")
        .total();
    let mut times = Vec::with_capacity(RUNS);
    let mut stats = Vec::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        stats = black_box(explore(black_box(base), spec.clone()).expect("valid spec"));
        times.push(t.elapsed());
    }
    let m = median(times);
    let secs = m.as_secs_f64();
    println!(
        "explore.native {label} grid={grid} schedules={total} median_ms={:.1} per_sec={:.0} us_per_schedule={:.2}",
        secs * 1e3,
        total as f64 / secs,
        secs * 1e6 / total as f64
    );
    for s in &stats {
        println!(
            "  policy={} explored={} late_writes={} ran_twice={} out_of_order={} two_believers={} examples={}",
            s.policy.code(),
            s.explored,
            s.late_writes,
            s.double_runs,
            s.out_of_order,
            s.two_believers,
            s.examples.len()
        );
    }
    stats
}

/// Chunked stepping, as the UI would drive it from animation frames: worst chunk time.
fn bench_chunks(base: &Scenario, grid: u64, chunk: usize) {
    let mut worst = Duration::ZERO;
    let mut chunks = 0;
    let mut ex = Explorer::new(base, ExploreSpec::all_policies(0, grid)).expect("valid spec");
    while !ex.is_finished() {
        let t = Instant::now();
        black_box(ex.step(chunk));
        worst = worst.max(t.elapsed());
        chunks += 1;
    }
    println!(
        "explore.native headline grid={grid} chunk={chunk} chunks={chunks} worst_chunk_ms={:.2}",
        worst.as_secs_f64() * 1e3
    );
}

/// One `core::run` of a scenario (trace with narration and snapshots), and a clone of it.
fn bench_run(label: &str, sc: &Scenario) {
    const REPS: u32 = 20_000;
    let mut runs = Vec::with_capacity(RUNS);
    let mut clones = Vec::with_capacity(RUNS);
    let events = run(sc).events.len();
    for _ in 0..RUNS {
        let t = Instant::now();
        for _ in 0..REPS {
            black_box(run(black_box(sc)));
        }
        runs.push(t.elapsed() / REPS);
        let t = Instant::now();
        for _ in 0..REPS {
            black_box(black_box(sc).clone());
        }
        clones.push(t.elapsed() / REPS);
    }
    println!(
        "run.native {label} events={events} run_median_ns={} scenario_clone_median_ns={}",
        median(runs).as_nanos(),
        median(clones).as_nanos()
    );
}

fn main() {
    let headline = Scenario::gc_pause();
    let mut delayed = Scenario::gc_pause();
    delayed.actors[0].pauses.clear();
    delayed.actors[0].network_delay = 40;

    bench_run("headline", &headline);
    bench_explore("headline", &headline, 1);
    bench_explore("headline", &headline, 5);
    bench_chunks(&headline, 1, 1_000);
    bench_explore("delayed", &delayed, 5);
}
