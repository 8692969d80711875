//! On wasm32 this mounts the visualizer; natively it prints the headline trace, so the
//! story can be read (and diffed) without a browser, and `replay [--jobs N] [SCENARIO…]`
//! runs the deck against real servers (see `src/replay/`).
#![forbid(unsafe_code)]

#[cfg(all(not(target_arch = "wasm32"), feature = "replay"))]
mod replay;

#[cfg(target_arch = "wasm32")]
fn main() {
    fencing_lab::ui::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    use fencing_lab::core::{deck, run, story, FencingPolicy, Scenario};
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("replay") {
        #[cfg(feature = "replay")]
        std::process::exit(replay::main(&args[1..]));
        #[cfg(not(feature = "replay"))]
        {
            eprintln!("fencing-lab was built without the replay: run scripts/replay.sh (cargo run --profile replay --features replay -- replay)");
            std::process::exit(2);
        }
    }
    if args.first().map(String::as_str) == Some("controls") {
        // The README's controls table, from `lab::CONTROLS`.
        print!("{}", fencing_lab::lab::controls_table());
        return;
    }
    if args.first().map(String::as_str) == Some("deck") {
        match args.get(1).map(String::as_str) {
            // The deck as data, for the native and browser tests.
            Some("--json") => match serde_json::to_string_pretty(&deck::data()) {
                Ok(json) => println!("{json}"),
                Err(e) => {
                    eprintln!("fencing-lab deck --json: {e}");
                    std::process::exit(1);
                }
            },
            // docs/deck.md's deck table, regenerated from the runs.
            None => print!("{}", deck::table()),
            Some(other) => {
                eprintln!(
                    "fencing-lab deck: unknown option {other:?}; usage: fencing-lab deck [--json]"
                );
                std::process::exit(2);
            }
        }
        return;
    }
    // `story ID [POLICY]`: one deck entry's words, step by step; default: the headline.
    let scenario = match args.first().map(String::as_str) {
        Some("story") => match args.get(1).and_then(|id| deck::find(id)) {
            Some(e) => (e.build)(),
            None => {
                eprintln!("usage: fencing-lab story <deck id> [off|strict|same-epoch]");
                std::process::exit(2);
            }
        },
        _ => Scenario::gc_pause(),
    };
    // The deck spells the policy `same-epoch`, the page's link `same_epoch`: both work.
    let policies = match args.get(2) {
        None => vec![FencingPolicy::Off, FencingPolicy::Strict],
        Some(p) => match FencingPolicy::from_code(&p.replace('-', "_")) {
            Some(p) => vec![p],
            None => {
                eprintln!(
                    "fencing-lab story: unknown fencing policy {p:?}; use off, strict or same-epoch"
                );
                std::process::exit(2);
            }
        },
    };
    for policy in policies {
        let trace = run(&scenario.clone().with_policy(policy));
        println!("== fencing {} ==", policy.label());
        let words = story::Story::of(&trace);
        for step in 0..=words.last() {
            println!("{}", words.narration(step));
            println!("    Say: {}", words.say(step));
        }
        println!(
            "final {}: {}\n",
            story::final_value(&trace),
            story::outcome(&trace)
        );
    }
    if let Some(entry) = args.get(1).and_then(|id| deck::find(id)) {
        // The speaker notes, written from the entry's three runs.
        println!("== notes ==");
        for note in (entry.notes)(&deck::runs(entry)) {
            println!("- {note}");
        }
    }
}
