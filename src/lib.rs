//! fencing-lab: why a lease lock is not mutual exclusion, and why a fencing token checked
//! by storage is. The [`core`] is pure Rust and runs natively; the UI only renders its trace.
#![forbid(unsafe_code)]

pub mod core;
pub mod lab;
pub mod share;
pub mod view;

#[cfg(target_arch = "wasm32")]
pub mod ui;
