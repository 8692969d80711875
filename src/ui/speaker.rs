//! The speaker view (`s`), as reveal.js and Google Slides have it: a second window for the
//! presenter's own screen with the question, the Say line, the next step, the notes and a
//! timer, while the shared screen shows only the stage.
//!
//! The two windows follow each other through the view they would share as a link: each
//! posts its view's hash to the other (`postMessage`, which also works between windows
//! opened from the single offline file), and loads the other's when it differs. Nothing
//! else crosses: a message that does not come from the paired window is ignored, and a
//! hash is read by the same decoder as any pasted link.

use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen::JsValue;

use std::sync::Arc;

use super::split::{lazily, Failed};
use super::Dispatch;
use crate::core::Trace;
use crate::lab::{Lab, Msg};

/// The speaker window's name: `window.open` gives it, and the page reads it back to know
/// which of the two it is.
const NAME: &str = "fencing-lab-speaker";

/// Whether this window is the speaker view.
pub(super) fn is_speaker() -> bool {
    window().name().is_ok_and(|n| n == NAME)
}

/// The other window of the pair: the speaker view this page opened, or, in the speaker
/// view, the page that opened it.
#[derive(Clone, Copy)]
pub(super) struct Pair {
    other: StoredValue<Option<web_sys::Window>, LocalStorage>,
    /// The last hash the other window sent: not sent back, so two quick steps cannot
    /// bounce an older view between the windows.
    received: StoredValue<String>,
}

impl Pair {
    /// Opens the speaker view (or brings it forward), on this page's own address and view.
    /// A browser that blocks the window gets a message saying so.
    pub(super) fn open(self, dispatch: Dispatch) {
        // In the speaker view, `s` brings the page forward instead (the name would reload
        // this very window).
        if is_speaker() {
            self.other.with_value(|w| w.as_ref().map(|w| w.focus()));
            return;
        }
        let href = window().location().href().unwrap_or_default();
        let opened = window()
            .open_with_url_and_target_and_features(&href, NAME, "popup,width=980,height=760")
            .ok()
            .flatten();
        match opened {
            Some(w) => {
                let _ = w.focus();
                self.other.set_value(Some(w));
            }
            None => dispatch.msg(Msg::Refuse(BLOCKED.to_owned())),
        }
    }

    /// Sends this window's view to the other one, unless it is the one just received.
    fn post(self, hash: &str) {
        if self.received.with_value(|r| r == hash) {
            return;
        }
        self.other.with_value(|w| {
            if let Some(w) = w.as_ref().filter(|w| !w.closed().unwrap_or(true)) {
                let _ = w.post_message(&JsValue::from_str(hash), "*");
            }
        });
    }

    /// The other window's view, if `e` comes from it and is one.
    fn read(self, e: &web_sys::MessageEvent) -> Option<String> {
        let from = e.source()?;
        let ours = self.other.with_value(|w| {
            w.as_ref()
                .is_some_and(|w| js_sys::Object::is(&from, w.as_ref()))
        });
        let hash = e.data().as_string()?;
        (ours && hash.starts_with('#') && hash.len() <= crate::share::MAX_HASH_LEN).then_some(hash)
    }
}

const BLOCKED: &str =
    "The browser blocked the speaker window: allow pop-ups for this page, then press s again.";

/// Keeps this window and its pair on the same view (step, scenario, fencing, edits) until
/// the app goes away; `load` loads a view the other window sent.
pub(super) fn follow(hash: Memo<String>, load: impl Fn(&str) + 'static) -> Pair {
    // The opener is another window's object: `instanceof Window` (what `dyn_into` asks)
    // is false across windows, so it is taken as the window it is.
    let opener = window()
        .opener()
        .ok()
        .filter(|o| is_speaker() && o.is_object())
        .map(|o| o.unchecked_into::<web_sys::Window>());
    let pair = Pair {
        other: StoredValue::new_local(opener),
        received: StoredValue::new(String::new()),
    };
    Effect::new(move |_| hash.with(|h| pair.post(h)));
    let heard = window_event_listener(ev::message, move |e| {
        if let Some(h) = pair.read(&e) {
            pair.received.set_value(h.clone());
            if h != hash.get_untracked() {
                load(&h);
            }
        }
    });
    on_cleanup(move || heard.remove());
    // The speaker view asks for the page's view as soon as it is up, in case the page
    // moved on while it opened.
    if is_speaker() {
        pair.post(&hash.get_untracked());
    }
    pair
}

/// The speaker view's page; its view code is a chunk of its own, which only the speaker
/// window fetches.
#[component]
pub(super) fn SpeakerView(
    lab: RwSignal<Lab>,
    trace: Memo<Arc<Trace>>,
    step: Memo<usize>,
) -> impl IntoView {
    lazily(draw_speaker(), move |draw| draw(lab, trace, step))
}

type DrawSpeaker = fn(RwSignal<Lab>, Memo<Arc<Trace>>, Memo<usize>) -> AnyView;

#[leptos::wasm_split::wasm_split(speaker, fallible, wasm_split_path = ::leptos::wasm_split)]
fn draw_speaker() -> Result<DrawSpeaker, Failed> {
    static STYLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    super::split::adopt_style(&STYLED, include_str!("../../assets/speaker.css"));
    Ok(|lab, trace, step| view! { <SpeakerPage lab trace step /> }.into_any())
}

#[component]
fn SpeakerPage(lab: RwSignal<Lab>, trace: Memo<Arc<Trace>>, step: Memo<usize>) -> impl IntoView {
    use super::panels::{Compare, Notes};
    let dispatch = expect_context::<Dispatch>();
    use super::timeline::Timeline;
    use crate::view::panels as model;

    // The notes are what this window is for: on from the start.
    if lab.with_untracked(|l| l.notes().is_none()) {
        dispatch.msg(Msg::ToggleNotes);
    }
    let now = Memo::new(move |_| trace.with(|t| model::story(t, step.get())));
    let next = Memo::new(move |_| {
        let s = step.get();
        trace.with(|t| {
            (s < crate::core::story::Steps::of(t).last()).then(|| model::story(t, s + 1).narration)
        })
    });
    let counter = move || {
        let s = step.get();
        trace.with(|t| format!("step {s} / {}", crate::core::story::Steps::of(t).last()))
    };
    view! {
        <section class="speaker" aria-label="Speaker view">
            <header class="speaker-bar">
                <h1>"Speaker view"</h1>
                <span class="speaker-step" data-testid="speaker-step">
                    {counter}
                </span>
                <Elapsed />
            </header>
            <p class="question" data-testid="speaker-question">
                {move || now.with(|m| m.question.unwrap_or_default())}
            </p>
            <div class="speaker-now">
                <p class="narration" data-testid="speaker-narration">
                    {move || now.with(|m| m.narration.clone())}
                </p>
                <p class="say">
                    <span class="say-k">"Say: "</span>
                    <span data-testid="speaker-say">{move || now.with(|m| m.say.clone())}</span>
                </p>
            </div>
            <p class="speaker-next" data-testid="speaker-next">
                <b>"Next: "</b>
                {move || next.get().unwrap_or_else(|| "the run is over.".to_owned())}
            </p>
            <Timeline trace step />
            <Compare lab />
            <Notes lab />
        </section>
    }
}

/// Minutes and seconds since the speaker view opened; a click starts again from zero.
#[component]
fn Elapsed() -> impl IntoView {
    let started = StoredValue::new(super::timers::now_ms());
    let seconds = RwSignal::new(0_u64);
    let tick = gloo_timers::callback::Interval::new(1_000, move || {
        seconds.set(((super::timers::now_ms() - started.get_value()) / 1_000.0) as u64)
    });
    let tick = StoredValue::new_local(Some(tick));
    on_cleanup(move || tick.set_value(None));
    let restart = move |_| {
        started.set_value(super::timers::now_ms());
        seconds.set(0);
    };
    view! {
        <button
            class="ghost speaker-timer"
            data-testid="speaker-timer"
            title="Time since the speaker view opened; click to start again"
            on:click=restart
        >
            {move || format!("{}:{:02}", seconds.get() / 60, seconds.get() % 60)}
        </button>
    }
}
