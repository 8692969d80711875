//! On wasm32 this mounts the visualizer; natively it prints the headline trace, so the
//! story can be read (and diffed) without a browser, and `replay [SCENARIO…]` runs the deck
//! against real servers (see `src/replay/`).
#![forbid(unsafe_code)]

#[cfg(not(target_arch = "wasm32"))]
mod replay;

#[cfg(target_arch = "wasm32")]
fn main() {
    fencing_lab::ui::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("replay") {
        std::process::exit(replay::main(&args[1..]));
    }
    use fencing_lab::core::{run, FencingPolicy, Scenario};
    for policy in [FencingPolicy::Off, FencingPolicy::Strict] {
        let trace = run(&Scenario::gc_pause().with_policy(policy));
        println!("== fencing {} ==", policy.label());
        for e in &trace.events {
            println!("{}", e.narration);
        }
        println!("final balance {}\n", trace.summary.final_balance);
    }
}
