//! The bundle's pure floor: everything the page computes, with nothing rendered.
//!
//! `scripts/bench.sh` builds this for wasm32 with the release profile, wasm-bindgen and
//! wasm-opt as trunk builds the app, and weighs it. It drives a [`Lab`] through every
//! [`Msg`] and builds every view model the page draws from (story, storage, comparison,
//! fork line, explorer, notes, parameters, timeline, URL), so the wasm holds the engine, the
//! deck's scenarios and their words, the explorer, the recording reader and the URL codec, but
//! no Leptos and no DOM code. The app cannot be smaller than this without dropping one of
//! those features, so the figure says how much of the bundle the budget must leave them.
//!
//! Natively, `cargo run --release --example pure_floor` runs the same driver over the deck
//! and prints how many trace events it saw, to show the driver really runs the product.
#![forbid(unsafe_code)]

use std::hint::black_box;

use fencing_lab::core::fault::SHAPES;
use fencing_lab::core::{FencingPolicy, Pause, ReleaseMode, StorageCheck, TokenSource};
use fencing_lab::lab::{key_to_msg, read_recording, Lab, Msg, Param, ScenarioEdit};
use fencing_lab::share;
use fencing_lab::view::{panels, timeline};

/// Applies one message per line of `script` (`word argument`) and builds every view model
/// after each; returns the number of trace events seen. The script comes from the caller, so
/// the optimizer cannot fold any of it away.
pub fn drive(script: &str) -> usize {
    // The page fetches the deck past the headline as a chunk; here all of it is linked in.
    #[cfg(target_arch = "wasm32")]
    fencing_lab::core::deck::provide(fencing_lab::core::DECK);
    let mut lab = Lab::new(fencing_lab::core::Scenario::gc_pause());
    let mut events = 0;
    for line in script.lines() {
        let (word, arg) = line.split_once(' ').unwrap_or((line, ""));
        let num = arg.parse::<u64>().unwrap_or(0);
        let msg = match word {
            "pick" => Msg::Pick(arg.to_string()),
            "link" => match share::decode(arg) {
                Ok(v) => Msg::Restore {
                    scenario: v.scenario,
                    step: v.step,
                    embed: v.embed,
                },
                Err(e) => Msg::Refuse(e.to_string()),
            },
            "import" => Msg::Import(Box::new(read_recording(arg))),
            "read" => {
                events += read_recording(arg).map_or(0, |t| t.len());
                continue;
            }
            "pause" => ScenarioEdit::Pause {
                actor: (num % 2) as usize,
                pause: Some(Pause {
                    start: num,
                    duration: num / 2 + 1,
                }),
            }
            .into(),
            "add-pause" => Msg::AddPause { actor: 1, at: num },
            "remove-pause" => Msg::RemovePause { actor: 0 },
            "clients" => ScenarioEdit::Clients(num as usize).into(),
            "edit" => {
                let (param, text) = arg.split_once(' ').unwrap_or((arg, ""));
                match Param::from_code(param) {
                    Some(param) => Msg::Field {
                        param,
                        actor: Some(0),
                        text: text.to_string(),
                    },
                    None => continue,
                }
            }
            "policy" => {
                ScenarioEdit::Policy(FencingPolicy::from_code(arg).unwrap_or(FencingPolicy::Off))
                    .into()
            }
            "cycle" => Msg::TogglePolicy,
            "ttl" => ScenarioEdit::Ttl(num).into(),
            "tokens" => ScenarioEdit::Tokens(if num > 0 {
                TokenSource::SeparateCounter
            } else {
                TokenSource::SameRedis
            })
            .into(),
            "release" => ScenarioEdit::Release(if num > 0 {
                ReleaseMode::CompareAndDelete
            } else {
                ReleaseMode::GetThenDel
            })
            .into(),
            "check" => ScenarioEdit::Check(if num > 0 {
                StorageCheck::Sequencer
            } else {
                StorageCheck::HighestToken
            })
            .into(),
            "barrier" => ScenarioEdit::Barrier(num > 0).into(),
            // A fault of the kind `num` picks, added where the design has it.
            "fault" => {
                let shape = &SHAPES[num as usize % SHAPES.len()];
                match ScenarioEdit::add_fault(lab.scenario(), shape) {
                    Ok(edit) => edit.into(),
                    Err(e) => Msg::Refuse(e.to_string()),
                }
            }
            "delay" => ScenarioEdit::Delay {
                actor: 0,
                delay: num,
            }
            .into(),
            "fork" => Msg::ToggleFork,
            "notes" => Msg::ToggleNotes,
            "present" => Msg::TogglePresent,
            "stop" => Msg::StopPresenting,
            "explore" => Msg::ToggleExplore,
            "chunk" => Msg::ExploreChunk {
                budget: num as usize,
                elapsed_ms: num as f64,
            },
            "example" => Msg::LoadExample {
                row: 0,
                index: num as usize,
            },
            "seek" => Msg::Seek(num as usize),
            "speed" => Msg::SetSpeed(num),
            "play" => Msg::TogglePlay,
            "tick" => Msg::Tick,
            "forward" => Msg::Forward,
            "back" => Msg::Back,
            "reset" => Msg::Reset,
            "dismiss" => Msg::DismissError,
            "key" => match key_to_msg(arg) {
                Some(msg) => msg,
                None => continue,
            },
            _ => Msg::Refuse(line.to_string()),
        };
        lab.update(msg);
        let trace = lab.trace().clone();
        let step = lab.step();
        black_box(panels::story(&trace, step));
        black_box(panels::storage(&trace, step));
        let (off, on) = lab.compare();
        black_box(panels::compare(off, on));
        if let Some(original) = lab.fork_of() {
            black_box(panels::fork_line(original));
        }
        if let Some(x) = lab.exploration() {
            black_box(panels::explorer(x));
            black_box(panels::explorer_footnote(x.stats()));
        }
        if let Some(notes) = lab.notes() {
            black_box(panels::notes_markup(notes));
        }
        black_box(lab.herd());
        black_box(panels::params(
            lab.scenario(),
            lab.fork_of().map(|t| &t.scenario),
        ));
        black_box(timeline::model(&trace, step, lab.playing()));
        black_box(timeline::grid_markup(&timeline::grid(&trace)));
        black_box(share::encode(lab.scenario(), step));
        black_box(lab.error());
        events += trace.len();
    }
    events
}

#[cfg(target_arch = "wasm32")]
mod wasm {
    use wasm_bindgen::prelude::*;

    /// The one export: what keeps [`super::drive`] and all it reaches in the wasm.
    #[wasm_bindgen]
    pub fn drive(script: &str) -> usize {
        super::drive(script)
    }
}

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    let mut script = String::new();
    for entry in fencing_lab::core::DECK {
        script += &format!("pick {}\nseek 99\npause 12\nfork\nttl 40\nfork\n", entry.id);
    }
    script += "explore\nchunk 200\nexample 0\nexplore\n";
    let link = share::encode(&fencing_lab::core::Scenario::gc_pause(), 7);
    script += &format!("link {link}\nkey ArrowRight\nedit ttl 45\nnotes\npresent\nstop\n");
    let recording = include_str!("../assets/recordings/gc-pause-strict.json").replace('\n', " ");
    script += &format!("read {recording}\nimport {recording}\n");
    println!("pure floor driver: {} trace events seen", drive(&script));
}
