//! Hooks for `scripts/bench.sh`: the browser benchmark times these from JavaScript
//! (`window.wasmBindings`), so the figures are the wasm build's, in Chromium.

use wasm_bindgen::prelude::*;

use crate::core::explore::{explore, ExploreSpec};
use crate::core::Scenario;

/// Explores every placement of A's pause in the headline on a `grid` ms grid under all
/// three policies; returns `[schedules, late_writes_off, late_writes_strict]`.
#[wasm_bindgen]
pub fn bench_explore_headline(grid: u32) -> Result<Vec<f64>, JsValue> {
    let stats = explore(
        &Scenario::gc_pause(),
        ExploreSpec::all_policies(0, u64::from(grid)),
    )
    .map_err(|e| JsValue::from_str(&e))?;
    let schedules: usize = stats.iter().map(|s| s.explored).sum();
    let late = |i: usize| stats.get(i).map_or(0, |s| s.late_writes) as f64;
    Ok(vec![schedules as f64, late(0), late(1)])
}

/// Panics on purpose, so the browser test can check that a crash shows the red banner
/// instead of a blank page.
#[wasm_bindgen]
pub fn panic_for_test() {
    panic!("deliberate test panic");
}
