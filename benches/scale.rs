//! Core scale: the renewal herd from 100 to 10,000 holders, natively (plain `main`).
//!
//! `cargo bench --bench scale` — prints figures; nothing asserts a time. Each figure is the
//! median of 5 runs; the growth line compares 10,000 holders against 100.

use std::hint::black_box;
use std::time::{Duration, Instant};

use fencing_lab::core::renewal_herd;

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn main() {
    let ttl = 30_000;
    let horizon = 120_000;
    for jitter in [false, true] {
        let mut first = None;
        for holders in [100, 1_000, 10_000] {
            let mut times = Vec::new();
            let mut report = None;
            for _ in 0..5 {
                let t = Instant::now();
                report = Some(black_box(renewal_herd(
                    black_box(holders),
                    ttl,
                    jitter,
                    7,
                    horizon,
                )));
                times.push(t.elapsed());
            }
            let m = median(times);
            let r = report.expect("ran");
            let ms = m.as_secs_f64() * 1e3;
            println!(
                "scale.herd holders={holders} jitter={jitter} renewals={} peak_per_ms={} median_ms={ms:.2}",
                r.renewals, r.peak_per_ms
            );
            let base = *first.get_or_insert(ms);
            if holders == 10_000 {
                println!(
                    "scale.herd.growth_10000_over_100 jitter={jitter} ratio={:.1}",
                    ms / base
                );
            }
        }
    }
}
