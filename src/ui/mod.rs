//! The Leptos shell: turns input into [`Msg`]s and renders [`Lab`]. No lock or storage
//! logic lives here; every number on screen comes from the core's trace.

mod ledger;
mod timeline;

use std::time::Duration;

use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::core::{FencingPolicy, Pause};
use crate::lab::{key_to_msg, Lab, Msg};

use ledger::{Compare, LedgerPanel};
use timeline::Timeline;

/// Entry point called by `main` on wasm32.
pub fn start() {
    install_panic_banner();
    leptos::mount::mount_to_body(App);
}

/// A panic shows a visible banner (and a readable console message) instead of a blank page.
fn install_panic_banner() {
    std::panic::set_hook(Box::new(|info| {
        console_error_panic_hook::hook(info);
        let banner = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.get_element_by_id("fatal"));
        if let Some(el) = banner {
            el.set_text_content(Some(&format!(
                "fencing-lab hit a bug and stopped: {info}. Reload the page."
            )));
            let _ = el.remove_attribute("hidden");
        }
    }));
}

/// Sends a message to the lab; `Copy`, so every handler can hold one.
#[derive(Clone, Copy)]
pub(crate) struct Send(RwSignal<Lab>);

impl Send {
    pub(crate) fn msg(self, m: Msg) {
        self.0.update(|l| l.update(m));
    }
}

fn typing_into_a_field(e: &web_sys::KeyboardEvent) -> bool {
    e.target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|el| matches!(el.tag_name().as_str(), "INPUT" | "SELECT" | "TEXTAREA"))
}

#[component]
fn App() -> impl IntoView {
    let lab = RwSignal::new(Lab::default());
    let send = Send(lab);
    let trace = Memo::new(move |_| lab.with(|l| l.trace.clone()));
    let step = Memo::new(move |_| lab.with(|l| l.step));
    let playing = Memo::new(move |_| lab.with(|l| l.playing));
    let speed = RwSignal::new(1.0_f64);

    let keys = window_event_listener(ev::keydown, move |e| {
        if e.ctrl_key() || e.meta_key() || e.alt_key() || typing_into_a_field(&e) {
            return;
        }
        if let Some(m) = key_to_msg(&e.key()) {
            e.prevent_default();
            send.msg(m);
        }
    });
    on_cleanup(move || keys.remove());

    // Play: one tick per interval; the interval is cleared whenever playing or speed changes.
    Effect::new(move |_| {
        if playing.get() {
            let every = Duration::from_millis((900.0 / speed.get()) as u64);
            if let Ok(handle) = set_interval_with_handle(move || send.msg(Msg::Tick), every) {
                on_cleanup(move || handle.clear());
            }
        }
    });

    let narration = move || {
        let s = step.get();
        trace.with(|t| match t.event_at(s) {
            Some(e) => e.narration.clone(),
            None => format!(
                "Balance {} on {}. {} clients share a {} ms lease lock. Press → (or Step forward) to begin.",
                t.scenario.initial_balance,
                t.scenario.resource,
                t.scenario.actors.len(),
                t.scenario.lease_ttl
            ),
        })
    };
    let talking_point = move || trace.with(|t| t.talking_point(step.get()).to_owned());
    let policy = Memo::new(move |_| trace.with(|t| t.scenario.policy));
    let clock = move || {
        let s = step.get();
        trace.with(|t| format!("step {s} / {} · t = {} ms", t.len(), t.snapshot_at(s).at))
    };

    view! {
        <div class="app">
            <header class="bar">
                <h1>
                    "fencing-lab" <span class="sub">" — a lease is not a lock; a fencing token is"</span>
                </h1>
                <div class="bar-right">
                    <label for="fencing" class="fencing-label">"Fencing"</label>
                    <select
                        id="fencing"
                        class="fencing"
                        class:off=move || policy.get() == FencingPolicy::Off
                        on:change:target=move |e| {
                            if let Some(p) = FencingPolicy::from_code(&e.target().value()) {
                                send.msg(Msg::SetPolicy(p));
                            }
                        }
                        prop:value=move || policy.get().code()
                    >
                        {FencingPolicy::ALL
                            .into_iter()
                            .map(|p| view! { <option value=p.code()>{p.label()}</option> })
                            .collect_view()}
                    </select>
                    <ThemeToggle/>
                </div>
            </header>
            {move || {
                lab.with(|l| l.error.clone())
                    .map(|e| {
                        view! {
                            <div class="error" role="alert" data-testid="error">
                                <span>{e}</span>
                                <button on:click=move |_| send.msg(Msg::DismissError)>"Dismiss"</button>
                            </div>
                        }
                    })
            }}
            <section class="story" aria-live="polite">
                <p class="narration" data-testid="narration">{narration}</p>
                <p class="say">
                    <span class="say-k">"Say: "</span>
                    <span data-testid="talking-point">{talking_point}</span>
                </p>
            </section>
            <Timeline lab send/>
            <section class="controls" aria-label="Playback">
                <button on:click=move |_| send.msg(Msg::Reset)>"Reset"</button>
                <button on:click=move |_| send.msg(Msg::Back) aria-keyshortcuts="ArrowLeft">
                    <span aria-hidden="true">"◀ "</span>
                    "Step back"
                </button>
                <button
                    class="primary"
                    on:click=move |_| send.msg(Msg::TogglePlay)
                    aria-keyshortcuts="Space"
                >
                    {move || if playing.get() { "Pause" } else { "Play" }}
                </button>
                <button on:click=move |_| send.msg(Msg::Forward) aria-keyshortcuts="ArrowRight">
                    "Step forward"
                    <span aria-hidden="true">" ▶"</span>
                </button>
                <label class="inline">
                    "Speed "
                    <select on:change:target=move |e| {
                        if let Ok(v) = e.target().value().parse::<f64>() {
                            speed.set(v);
                        }
                    }>
                        <option value="0.5">"0.5×"</option>
                        <option value="1" selected>"1×"</option>
                        <option value="2">"2×"</option>
                        <option value="4">"4×"</option>
                    </select>
                </label>
                <input
                    class="scrubber"
                    type="range"
                    aria-label="Scrubber"
                    min="0"
                    prop:max=move || trace.with(|t| t.len().to_string())
                    prop:value=move || step.get().to_string()
                    on:input:target=move |e| {
                        if let Ok(v) = e.target().value().parse::<usize>() {
                            send.msg(Msg::Seek(v));
                        }
                    }
                />
                <span class="clock" data-testid="clock">{clock}</span>
            </section>
            <div class="row2">
                <PauseEditor lab send/>
                <span class="keys">
                    "Keys: ← → step · Space play · . forward · f fencing · drag a pause (its right edge resizes)"
                </span>
            </div>
            <div class="bottom">
                <LedgerPanel lab/>
                <Compare lab/>
            </div>
        </div>
    }
}

/// Precise, keyboard-friendly editing of each pause (the drag does the same thing).
#[component]
fn PauseEditor(lab: RwSignal<Lab>, send: Send) -> impl IntoView {
    let pauses = Memo::new(move |_| {
        lab.with(|l| {
            l.scenario()
                .actors
                .iter()
                .enumerate()
                .filter_map(|(i, a)| a.pauses.first().map(|p| (i, a.name.clone(), *p)))
                .collect::<Vec<_>>()
        })
    });
    let set = move |actor: usize, start: Option<&str>, duration: Option<&str>| {
        let Some(cur) =
            pauses.with_untracked(|ps| ps.iter().find(|(i, _, _)| *i == actor).map(|(_, _, p)| *p))
        else {
            return;
        };
        let parse =
            |s: Option<&str>, dflt: u64| s.map(|s| s.trim().parse::<u64>()).unwrap_or(Ok(dflt));
        match (parse(start, cur.start), parse(duration, cur.duration)) {
            (Ok(start), Ok(duration)) => send.msg(Msg::SetPause {
                actor,
                pause: Pause { start, duration },
            }),
            _ => lab.update(|l| {
                l.error = Some("A pause needs whole, non-negative milliseconds.".to_owned())
            }),
        }
    };
    view! {
        <section class="pauses" aria-label="Pauses">
            <For each=move || pauses.get() key=|(i, _, _)| *i let:entry>
                {
                    let (actor, name, _) = entry;
                    let field = move |tracked: bool, pick: fn(&Pause) -> u64| {
                        let read = |ps: &Vec<(usize, String, Pause)>| {
                            ps.iter().find(|(i, _, _)| *i == actor).map_or(0, |(_, _, p)| pick(p)).to_string()
                        };
                        if tracked { pauses.with(read) } else { pauses.with_untracked(read) }
                    };
                    let start = move || field(true, |p| p.start);
                    let duration = move || field(true, |p| p.duration);
                    // After a refused edit the field shows the last good value again.
                    let start_now = move || field(false, |p| p.start);
                    let duration_now = move || field(false, |p| p.duration);
                    view! {
                        <span class="pause-edit">
                            <b>{name.clone()}</b>
                            " pauses at "
                            <input
                                type="number"
                                min="0"
                                aria-label=format!("{name} pause start (ms)")
                                prop:value=start
                                on:change:target=move |e| {
                                    set(actor, Some(&e.target().value()), None);
                                    e.target().set_value(&start_now());
                                }
                            />
                            " ms for "
                            <input
                                type="number"
                                min="1"
                                aria-label=format!("{name} pause length (ms)")
                                prop:value=duration
                                on:change:target=move |e| {
                                    set(actor, None, Some(&e.target().value()));
                                    e.target().set_value(&duration_now());
                                }
                            />
                            " ms"
                        </span>
                    }
                }
            </For>
        </section>
    }
}

/// Light/dark switch; the default follows the system setting.
#[component]
fn ThemeToggle() -> impl IntoView {
    let flip = move |_| {
        let Some(root) = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.document_element())
        else {
            return;
        };
        let dark_now = match root.get_attribute("data-theme").as_deref() {
            Some("dark") => true,
            Some(_) => false,
            None => web_sys::window()
                .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
                .is_some_and(|m| m.matches()),
        };
        let _ = root.set_attribute("data-theme", if dark_now { "light" } else { "dark" });
    };
    view! { <button class="ghost" on:click=flip>"Theme"</button> }
}
