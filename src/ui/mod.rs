//! The Leptos shell: turns input into [`Msg`]s and renders [`Lab`]. No lock or storage
//! logic lives here; every number on screen comes from the core's trace.

mod animation;
#[cfg(feature = "test-hooks")]
mod bench;
mod deck;
mod explorer;
mod export;
mod fork;
mod keys;
mod panels;
mod playback;
mod pointer;
mod recording;
mod rehearse;
mod rehearse_panel;
mod speaker;
mod split;
mod timeline;
mod timers;
mod tools;
mod url;
mod whatif;
mod words;

use gloo_timers::callback::Timeout;
use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;

use std::sync::Arc;

use crate::core::{FencingPolicy, Scenario, Trace};
use crate::lab::{Lab, Msg, ScenarioEdit};
use crate::share;
use crate::view::{options, Act};

use explorer::Explorer;
use fork::Fork;
use panels::{Compare, HerdPanel, Notes, Params, Storage, Story};
use playback::Playback;
use pointer::LaserPointer;
use recording::{ImportRecording, RecordedBanner};
use speaker::SpeakerView;
use timeline::Timeline;
use tools::Tools;
use whatif::WhatIf;

/// Entry point called by `main` on wasm32.
pub fn start() {
    install_panic_banner();
    // index.html's static first screen paints first: the app is drawn a frame later.
    let later = Closure::once_into_js(|| Timeout::new(0, mount).forget());
    let waiting = web_sys::window().map(|w| w.request_animation_frame(later.unchecked_ref()));
    if !matches!(waiting, Some(Ok(_))) {
        mount();
    }
}

/// Mounts the app; first, if the page's link names a deck entry past the headline, fetches
/// the deck, and if its run needs the story's far words, those ([`words`]), so the page
/// does not show the headline and then switch (if the fetch fails, the link's restore
/// tries again and says why).
fn mount() {
    let hash = url::location_hash();
    let id = share::named_entry(&hash).to_owned();
    deck::when_in(id, move |_| words::when_worded(&hash, mount_now));
}

/// Draws the app and takes index.html's static first screen away.
fn mount_now() {
    leptos::mount::mount_to_body(App);
    panels::fit_story(".app .story .lines");
    // index.html's static first screen, shown while the wasm loaded, goes in the same task
    // the app arrives, so nothing on screen shifts between them.
    if let Some(shell) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id("shell"))
    {
        shell.remove();
    }
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

/// How the page is being shown, for the parts that draw differently for an audience
/// (provided as context, not threaded through every component as props).
#[derive(Clone, Copy)]
pub(crate) struct Stage {
    /// Nothing after the current step is drawn (presenter mode, or `r`).
    pub reveal: Memo<bool>,
    /// Presenter mode: the timeline's type is large.
    pub presenting: Memo<bool>,
    /// The events (of the run on the page) marked as differing from the fork's original.
    pub marks: RwSignal<Vec<usize>>,
}

/// Sends messages to the lab; `Copy`, so every handler can hold one.
#[derive(Clone, Copy)]
pub(crate) struct Dispatch(RwSignal<Lab>);

impl Dispatch {
    pub(crate) fn msg(self, m: Msg) {
        words::update(self.0, m);
    }
}

#[component]
fn App() -> AnyView {
    let lab = RwSignal::new(Lab::default());
    let dispatch = Dispatch(lab);
    // Every part that sends messages reads it from the context, as leptos's examples do.
    provide_context(dispatch);
    // A new run counts as a change; the same run (a step) does not.
    let trace = Memo::new_with_compare(
        move |_| lab.with(|l| l.trace().clone()),
        |old, new| !matches!((old, new), (Some(a), Some(b)) if std::sync::Arc::ptr_eq(a, b)),
    );
    let step = Memo::new(move |_| lab.with(|l| l.step()));
    // What depends on the scenario alone (parameter fields, what-ifs) reads this, so
    // stepping through a run does not recompute it.
    let scenario = Memo::new(move |_| trace.with(|t| t.scenario.clone()));
    let playing = Memo::new(move |_| lab.with(|l| l.playing()));
    let speed = Memo::new(move |_| lab.with(|l| l.speed()));
    let presenting = Memo::new(move |_| lab.with(|l| l.presenting()));
    let reveal = Memo::new(move |_| lab.with(|l| l.revealing()));
    let marks = RwSignal::new(Vec::new());
    provide_context(Stage {
        reveal,
        presenting,
        marks,
    });
    let laser = Memo::new(move |_| lab.with(|l| l.laser()));
    let notes_shown = Memo::new(move |_| lab.with(|l| l.notes().is_some()));
    let exploring = Memo::new(move |_| lab.with(|l| l.exploration().is_some()));
    let forked = Memo::new(move |_| lab.with(|l| l.fork_of().is_some()));
    let notes_open = Memo::new(move |_| lab.with(|l| l.notes().is_some()));
    let herd = Memo::new(move |_| lab.with(|l| l.herd().cloned()));
    let error = Memo::new(move |_| lab.with(|l| l.error().map(str::to_owned)));
    let change = Memo::new(move |_| lab.with(|l| l.change().map(str::to_owned)));
    let embed = Memo::new(move |_| lab.with(|l| l.embedded()));

    let hash = url::sync(dispatch, trace, step, embed);
    let pair = speaker::follow(hash, move |h| url::restore(dispatch, h));
    let sheet = RwSignal::new(false);
    let rehearsing = RwSignal::new(false);
    let drawers = keys::Drawers {
        notes: notes_open,
        explorer: exploring,
    };
    let presenter = keys::listen(dispatch, presenting, [sheet, rehearsing], drawers, pair);
    timers::play_ticker(dispatch, playing, speed);

    let export = move |png: bool| export::export(dispatch, trace, png);
    let present = move || presenter.toggle();
    // Every button of the page's chrome carries an [`Act`] code; one handler on the app
    // reads it back.
    let on_click = move |e: ev::MouseEvent| {
        let act = e
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|el| el.closest("[data-act]").ok().flatten())
            .and_then(|b| b.get_attribute("data-act"))
            .and_then(|code| Act::from_code(&code));
        match act {
            Some(Act::Reset) => dispatch.msg(Msg::Reset),
            Some(Act::Back) => dispatch.msg(Msg::Back),
            Some(Act::Play) => dispatch.msg(Msg::TogglePlay),
            Some(Act::Forward) => dispatch.msg(Msg::Forward),
            Some(Act::Fork) => dispatch.msg(Msg::ToggleFork),
            Some(Act::Explore) => dispatch.msg(Msg::ToggleExplore),
            Some(Act::Svg) => export(false),
            Some(Act::Png) => export(true),
            Some(Act::Notes) => dispatch.msg(Msg::ToggleNotes),
            Some(Act::Present) => present(),
            Some(Act::Theme) => flip_theme(),
            Some(Act::Dismiss) => dispatch.msg(Msg::DismissError),
            Some(Act::Reveal) => dispatch.msg(Msg::ToggleReveal),
            Some(Act::Laser) => dispatch.msg(Msg::ToggleLaser),
            Some(Act::Speaker) => pair.open(dispatch),
            Some(Act::Keys) => sheet.update(|open| *open = !*open),
            Some(Act::Exit) => presenter.stop(),
            None => {}
        }
    };
    // The first screen first, in four short tasks instead of one long one: the header and
    // story; the timeline and playback a task later; then the parameters and buttons; then
    // the panels below them. Each part is appended below the last, so nothing drawn moves.
    let drawn = RwSignal::new(0_u8);
    Timeout::new(0, move || {
        drawn.set(1);
        Timeout::new(0, move || {
            drawn.set(2);
            Timeout::new(0, move || drawn.set(3)).forget();
        })
        .forget();
    })
    .forget();
    // Memos, so each part is drawn once: a closure on `drawn` itself would draw it again
    // at every later stage.
    let timeline_drawn = Memo::new(move |_| drawn.get() >= 1);
    let below = Memo::new(move |_| drawn.get() >= 2);
    let lowest = Memo::new(move |_| drawn.get() >= 3);
    // The page's chrome, which an embedded view leaves out.
    let full = Memo::new(move |_| !embed.get());
    if speaker::is_speaker() {
        return view! {
            <main class="app speaker-window" on:click=on_click>
                <SpeakerView lab trace step />
                <KeySheet open=sheet />
            </main>
        }
        .into_any();
    }
    view! {
        <main
            class="app"
            class:presenting=move || presenting.get()
            class:embed=move || embed.get()
            on:click=on_click
        >
            {move || { full.get().then(|| view! { <Header scenario trace presenting laser /> }) }}
            {move || {
                error
                    .get()
                    .map(|e| {
                        view! {
                            <div class="error" role="alert" data-testid="error">
                                <span>{e}</span>
                                <button data-act=Act::Dismiss.code()>"Dismiss"</button>
                            </div>
                        }
                    })
            }}
            {move || {
                full.get()
                    .then(|| {
                        view! {
                            <Story trace step />
                            <RecordedBanner trace />
                        }
                    })
            }}
            {move || {
                timeline_drawn
                    .get()
                    .then(|| {
                        view! {
                            <Timeline trace step />
                            <Playback trace step playing speed embed />
                        }
                    })
            }}
            {move || {
                (below.get() && full.get())
                    .then(|| {
                        view! {
                            <div class="row2">
                                <Params scenario />
                                <WhatIf scenario />
                                <Tools
                                    trace
                                    step
                                    forked
                                    exploring
                                    notes_shown
                                    presenting
                                    rehearsing
                                />
                            </div>
                        }
                    })
            }}
            {move || {
                (lowest.get() && full.get())
                    .then(|| {
                        // Panels open over the page, in a column at its right, never
                        // above the stage: the timeline keeps its size.
                        view! {
                            <div class="drawers">
                                <Notes lab />
                                {move || { exploring.get().then(|| view! { <Explorer lab /> }) }}
                                // The herd chart backs the notes' numbers: it opens with
                                // them, so it never covers the story on its own.
                                {move || notes_open.get().then(|| view! { <HerdPanel herd /> })}
                            </div>
                        }
                    })
            }}
            // The original under the fork, in the storage's place (ui/fork.rs).
            {move || {
                (lowest.get() && full.get() && forked.get())
                    .then(|| view! { <Fork lab trace step /> })
            }}
            {move || {
                lowest
                    .get()
                    .then(|| {
                        view! {
                            <div class="bottom">
                                <Storage trace step />
                                <Compare lab />
                            </div>
                        }
                    })
            }}
            {move || {
                (lowest.get() && full.get())
                    .then(|| {
                        view! {
                            <footer class="keys">
                                "Keys: ← → step · Space play · f fencing off/on · r reveal · p presenter (Esc leaves) · s speaker view · n notes · ? all keys · drag a pause (its right edge resizes; double-click removes) · drag a write at storage to delay its packets"
                            </footer>
                        }
                    })
            }}
            // What the last drag changed at storage: over the page, so it moves nothing.
            {move || {
                change
                    .get()
                    .map(|c| {
                        view! {
                            <p class="change-note" role="status" data-testid="change-note">
                                {c}
                            </p>
                        }
                    })
            }}
            <KeySheet open=sheet />
            <rehearse::Rehearse open=rehearsing lab />
            <LaserPointer on=laser />
        </main>
    }
    .into_any()
}

/// Presenter mode's toolbar, in the title's place: leave, the laser pointer, the speaker
/// view, the keys.
#[component]
fn PresenterBar(laser: Memo<bool>) -> impl IntoView {
    view! {
        <nav class="presenter-bar" aria-label="Presenter tools">
            <button
                data-act=Act::Exit.code()
                aria-keyshortcuts="Escape"
                title="Leave presenter mode (Esc)"
            >
                "✕ Exit"
            </button>
            <button
                data-act=Act::Laser.code()
                aria-keyshortcuts="l"
                aria-pressed=move || laser.get().to_string()
                title="Laser pointer (l)"
            >
                "Laser"
            </button>
            <button
                data-act=Act::Speaker.code()
                aria-label="Speaker view"
                aria-keyshortcuts="s"
                title="Speaker view in a second window (s)"
            >
                "Speaker"
            </button>
            <button data-act=Act::Keys.code() aria-keyshortcuts="?" title="All the keys (?)">
                "Keys"
            </button>
        </nav>
    }
}

/// The keys sheet (`?`), from the same table the README's controls come from; its code is
/// a chunk of its own, fetched the first time it opens.
#[component]
fn KeySheet(open: RwSignal<bool>) -> impl IntoView {
    move || {
        open.get()
            .then(|| split::lazily(draw_keys(), move |draw| draw(open)))
    }
}

type DrawKeys = fn(RwSignal<bool>) -> AnyView;

#[leptos::wasm_split::wasm_split(keys_sheet, fallible, wasm_split_path = ::leptos::wasm_split)]
fn draw_keys() -> Result<DrawKeys, split::Failed> {
    static STYLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    split::adopt_style(&STYLED, include_str!("../../assets/keys-sheet.css"));
    Ok(|open| {
        let rows = crate::lab::CONTROLS
            .iter()
            .map(|c| {
                format!(
                    "<tr><th scope=\"row\">{}</th><td>{}</td></tr>",
                    crate::view::timeline::esc(c.action),
                    crate::view::panels::how_markup(c.how)
                )
            })
            .collect::<String>();
        view! {
            <div
                class="sheet"
                role="dialog"
                aria-modal="true"
                aria-label="Keys"
                data-testid="keys-sheet"
            >
                <div class="sheet-head">
                    <h2>"Keys and controls"</h2>
                    <button on:click=move |_| open.set(false)>"Close (Esc)"</button>
                </div>
                // The rows scroll under the sheet's head; a fade at the bottom edge says
                // there are more (keys-sheet.css).
                <div class="sheet-body" role="region" tabindex="0" aria-label="All the keys">
                    <table class="sheet-table">
                        <tbody inner_html=rows></tbody>
                    </table>
                </div>
            </div>
        }
        .into_any()
    })
}

#[component]
fn Header(
    scenario: Memo<Scenario>,
    trace: Memo<Arc<Trace>>,
    presenting: Memo<bool>,
    laser: Memo<bool>,
) -> impl IntoView {
    let dispatch = expect_context::<Dispatch>();
    let policy = Memo::new(move |_| scenario.with(|sc| sc.policy));
    let current = Memo::new(move |_| scenario.with(|sc| sc.id.clone()));
    // The options never change: markup, set before the value.
    let scenario_options = options(
        (crate::core::deck::TITLES.iter().enumerate())
            .map(|(i, (id, title))| ((*id).to_owned(), format!("{}. {title}", i + 1), ""))
            .chain([(
                recording::PICK_RECORDING.to_owned(),
                "Import a recording…".to_owned(),
                "",
            )]),
    );
    let importing = RwSignal::new(false);
    let policy_options = options(
        FencingPolicy::ALL
            .into_iter()
            .map(|p| (p.code().to_owned(), p.option().to_owned(), p.label())),
    );
    view! {
        <header class="bar">
            <h1>"fencing-lab" <span class="sub">" — a lease is not a lock"</span></h1>
            // Presenting, the presenter's tools take the title's place.
            {move || presenting.get().then(|| view! { <PresenterBar laser /> })}
            <div class="bar-right">
                <ImportRecording trace open=importing />
                <label for="scenario" class="fencing-label">
                    "Scenario"
                </label>
                <select
                    id="scenario"
                    on:change:target=move |e| {
                        let v = e.target().value();
                        e.target().set_value(&current.get_untracked());
                        if v == recording::PICK_RECORDING {
                            importing.set(true);
                        } else {
                            deck::pick(dispatch, v);
                        }
                    }
                    inner_html=scenario_options
                    prop:value=move || current.get()
                ></select>
                <label for="fencing" class="fencing-label">
                    "Fencing"
                </label>
                <select
                    id="fencing"
                    class="fencing"
                    class:off=move || policy.get() == FencingPolicy::Off
                    on:change:target=move |e| {
                        if let Some(p) = FencingPolicy::from_code(&e.target().value()) {
                            dispatch.msg(ScenarioEdit::Policy(p).into());
                        }
                    }
                    inner_html=policy_options
                    prop:value=move || policy.get().code()
                ></select>
            </div>
        </header>
    }
}

/// Light/dark switch; the default follows the system setting.
fn flip_theme() {
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
}
