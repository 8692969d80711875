//! The Leptos shell: turns input into [`Msg`]s and renders [`Lab`]. No lock or storage
//! logic lives here; every number on screen comes from the core's trace.

#[cfg(feature = "test-hooks")]
mod bench;
mod explorer;
mod export;
mod panels;
mod recording;
mod timeline;

use gloo_timers::callback::{Interval, Timeout};

use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use std::sync::Arc;

use crate::core::{deck, FencingPolicy, Millis, Scenario, Trace};
use crate::lab::{key_to_msg, Lab, Msg};
use crate::share;
use crate::view::{options, Act};

use explorer::ExplorerPanel;
use panels::{Compare, Fork, HerdPanel, Notes, Params, Storage, Story};
use recording::{ImportRecording, RecordedBanner};
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

/// Sends messages to the lab; `Copy`, so every handler can hold one.
#[derive(Clone, Copy)]
pub(crate) struct Dispatch(RwSignal<Lab>);

impl Dispatch {
    pub(crate) fn msg(self, m: Msg) {
        self.0.update(|l| l.update(m));
    }
}

fn typing_into_a_field(e: &web_sys::KeyboardEvent) -> bool {
    e.target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|el| matches!(el.tag_name().as_str(), "INPUT" | "SELECT" | "TEXTAREA"))
}

fn toggle_fullscreen(on: bool) {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    if on {
        if let Some(root) = doc.document_element() {
            let _ = root.request_fullscreen();
        }
    } else if doc.fullscreen_element().is_some() {
        doc.exit_fullscreen();
    }
}

fn location_hash() -> String {
    web_sys::window()
        .and_then(|w| w.location().hash().ok())
        .unwrap_or_default()
}

/// How long the URL waits after the last change before it is written.
const QUIET_MS: f64 = 120.0;

/// The page's clock, in milliseconds (the shell's only source of time).
pub(crate) fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// A gloo timer that re-arms itself (the URL writer, the explorer's pump). A timer re-armed
/// from its own callback must outlive that call, so the one being replaced moves to `spent`
/// (dropping the one before it, long fired) instead of being dropped while it runs.
/// Dropping both on cleanup cancels what is pending.
#[derive(Default)]
pub(crate) struct Rearm {
    current: Option<Timeout>,
    spent: Option<Timeout>,
}

impl Rearm {
    /// From inside the current timer's own callback.
    pub(crate) fn rearm(&mut self, next: Timeout) {
        self.spent = self.current.replace(next);
    }

    /// From outside any timer callback: a pending timer is cancelled.
    pub(crate) fn arm(&mut self, next: Timeout) {
        self.current = Some(next);
    }

    /// The current timer has fired and nothing follows it (called from its callback).
    fn fired(&mut self) {
        self.spent = self.current.take();
    }
}

/// Writes the hash once it has been quiet for `QUIET_MS`, at most one timer at a time.
fn write_hash_later(
    hash: Memo<String>,
    last_change: StoredValue<f64>,
    timer: StoredValue<Rearm, LocalStorage>,
    wait: f64,
) {
    let fire = move || {
        let quiet = now_ms() - last_change.get_value();
        if quiet < QUIET_MS {
            return write_hash_later(hash, last_change, timer, QUIET_MS - quiet);
        }
        timer.update_value(Rearm::fired);
        let h = hash.get_untracked();
        if let Some(history) = web_sys::window().and_then(|w| w.history().ok()) {
            let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&h));
        }
    };
    let next = Timeout::new(wait.ceil().max(1.0) as u32, fire);
    timer.update_value(|t| t.rearm(next));
}

/// Loads a shared link, or the default scenario with a message saying what was wrong with it.
fn restore(dispatch: Dispatch, hash: &str) {
    match share::decode(hash) {
        Ok(view) => dispatch.msg(Msg::Restore {
            scenario: view.scenario,
            step: view.step,
        }),
        Err(e) => {
            dispatch.msg(Msg::Load(crate::core::Scenario::gc_pause()));
            dispatch.msg(Msg::Refuse(format!(
                "This link could not be loaded: {e}. Showing the default scenario."
            )));
        }
    }
}

#[component]
fn App() -> impl IntoView {
    let lab = RwSignal::new(Lab::default());
    let dispatch = Dispatch(lab);
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
    let notes_shown = Memo::new(move |_| lab.with(|l| l.notes().is_some()));
    let exploring = Memo::new(move |_| lab.with(|l| l.exploration().is_some()));
    let forked = Memo::new(move |_| lab.with(|l| l.fork_of().is_some()));
    let herd = Memo::new(move |_| lab.with(|l| l.herd().cloned()));
    let error = Memo::new(move |_| lab.with(|l| l.error().map(str::to_owned)));

    restore(dispatch, &location_hash());
    // The address bar always holds the current view, so copying it shares exactly this.
    let hash = Memo::new(move |_| {
        let s = step.get();
        trace.with(|t| share::encode(&t.scenario, s))
    });
    // Written 120 ms after the last change: a drag makes a change every frame and browsers
    // throttle the history API. One timer at a time, re-armed for what is left of the
    // 120 ms when it fires early, so a drag does not set and clear a timer per move.
    let last_change = StoredValue::new(0.0_f64);
    let timer = StoredValue::new_local(Rearm::default());
    Effect::new(move |_| {
        hash.track();
        last_change.set_value(now_ms());
        if timer.with_value(|t| t.current.is_none()) {
            write_hash_later(hash, last_change, timer, QUIET_MS);
        }
    });
    on_cleanup(move || timer.set_value(Rearm::default()));
    let on_hash = window_event_listener(ev::hashchange, move |_| {
        let h = location_hash();
        if h != hash.get_untracked() {
            restore(dispatch, &h);
        }
    });
    on_cleanup(move || on_hash.remove());

    let present = move || {
        dispatch.msg(Msg::TogglePresent);
        toggle_fullscreen(presenting.get_untracked());
    };
    let keys = window_event_listener(ev::keydown, move |e| {
        if e.ctrl_key() || e.meta_key() || e.alt_key() || typing_into_a_field(&e) {
            return;
        }
        match e.key().as_str() {
            "p" | "P" => present(),
            "n" | "N" => dispatch.msg(Msg::ToggleNotes),
            key => {
                if let Some(m) = key_to_msg(key) {
                    e.prevent_default();
                    dispatch.msg(m);
                }
            }
        }
    });
    on_cleanup(move || keys.remove());
    // Leaving fullscreen (Esc) leaves presenter mode too.
    let fullscreen = window_event_listener_untyped("fullscreenchange", move |_| {
        let full = web_sys::window()
            .and_then(|w| w.document())
            .is_some_and(|d| d.fullscreen_element().is_some());
        if !full {
            dispatch.msg(Msg::StopPresenting);
        }
    });
    on_cleanup(move || fullscreen.remove());

    // Play: one tick per interval (a gloo Interval, cancelled when dropped); the Effect's
    // cleanup drops it whenever playing or speed changes, and when the App goes away.
    let ticker = StoredValue::new_local(None::<Interval>);
    Effect::new(move |_| {
        ticker.set_value(None);
        if playing.get() {
            let every = (90_000 / speed.get().max(1)) as u32;
            ticker.set_value(Some(Interval::new(every, move || dispatch.msg(Msg::Tick))));
        }
    });
    on_cleanup(move || ticker.set_value(None));

    let export = move |png: bool| {
        let name = trace.with_untracked(|t| t.scenario.id.clone());
        if let Err(e) = export::save_timeline(&name, png) {
            dispatch.msg(Msg::Refuse(e));
        }
    };
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
            None => {}
        }
    };
    let clock = move || {
        let s = step.get();
        trace.with(|t| {
            format!(
                "step {s} / {} · t = {}",
                t.len(),
                crate::core::story::time_label(&t.scenario, t.snapshot_at(s).at)
            )
        })
    };
    let pressed = |m: Memo<bool>| move || m.get().to_string();
    // The scrubber's end moves only when a run gains or loses steps, not on every drag.
    let steps = Memo::new(move |_| trace.with(|t| t.len()));

    view! {
        <main class="app" class:presenting=move || presenting.get() on:click=on_click>
            <Header scenario trace dispatch />
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
            <Story trace step />
            <Notes lab />
            <RecordedBanner trace />
            <Timeline trace step dispatch />
            <section class="controls" aria-label="Playback">
                <button data-act=Act::Reset.code()>"Reset"</button>
                <button data-act=Act::Back.code() aria-keyshortcuts="ArrowLeft">
                    <span aria-hidden="true">"◀ "</span>
                    "Step back"
                </button>
                <button class="primary" data-act=Act::Play.code() aria-keyshortcuts="Space">
                    {move || if playing.get() { "Pause" } else { "Play" }}
                </button>
                <button data-act=Act::Forward.code() aria-keyshortcuts="ArrowRight">
                    "Step forward"
                    <span aria-hidden="true">" ▶"</span>
                </button>
                <label class="inline">
                    "Speed "
                    <select
                        on:change:target=move |e| {
                            if let Ok(v) = e.target().value().parse::<u64>() {
                                dispatch.msg(Msg::SetSpeed(v));
                            }
                        }
                        inner_html=options(
                            [("50", "0.5×"), ("100", "1×"), ("200", "2×"), ("400", "4×")]
                                .map(|(v, l)| (v.to_owned(), l.to_owned(), "")),
                        )
                        prop:value=move || speed.get().to_string()
                    ></select>
                </label>
                <input
                    class="scrubber"
                    type="range"
                    aria-label="Scrubber"
                    min="0"
                    prop:max=move || steps.get().to_string()
                    prop:value=move || step.get().to_string()
                    on:input:target=move |e| {
                        if let Ok(v) = e.target().value().parse::<usize>() {
                            dispatch.msg(Msg::Seek(v));
                        }
                    }
                />
                <span class="clock" data-testid="clock">
                    {clock}
                </span>
            </section>
            <div class="row2">
                <Params scenario dispatch />
                <WhatIf scenario dispatch />
                <span class="row2-right">
                    <button
                        class="ghost"
                        data-act=Act::Fork.code()
                        title="Keep this run, then change a parameter and compare"
                    >
                        {move || if forked.get() { "Close fork" } else { "Fork" }}
                    </button>
                    <button
                        class="ghost"
                        data-act=Act::Explore.code()
                        aria-pressed=pressed(exploring)
                    >
                        "Explore"
                    </button>
                    <button
                        class="ghost"
                        data-act=Act::Svg.code()
                        title="Export the timeline as SVG"
                    >
                        "SVG"
                    </button>
                    <button
                        class="ghost"
                        data-act=Act::Png.code()
                        title="Export the timeline as PNG"
                    >
                        "PNG"
                    </button>
                    <button
                        class="ghost"
                        data-act=Act::Notes.code()
                        aria-pressed=pressed(notes_shown)
                    >
                        "Notes"
                    </button>
                    <button
                        class="ghost"
                        data-act=Act::Present.code()
                        aria-pressed=pressed(presenting)
                    >
                        "Present"
                    </button>
                    <button
                        class="ghost"
                        data-act=Act::Theme.code()
                        aria-label="Theme"
                        title="Light / dark"
                    >
                        "◐"
                    </button>
                </span>
            </div>
            {move || forked.get().then(|| view! { <Fork lab trace step /> })}
            {move || exploring.get().then(|| view! { <ExplorerPanel lab dispatch /> })}
            <HerdPanel herd />
            <div class="bottom">
                <Storage trace step />
                <Compare lab />
            </div>
            <footer class="keys">
                "Keys: ← → step · Space play · . forward (clicker) · f fencing · p presenter · n notes · drag a pause (its right edge resizes; double-click removes) · drag along an empty lane to draw one · drag a write at storage to delay its packets"
            </footer>
        </main>
    }
}

#[component]
fn Header(scenario: Memo<Scenario>, trace: Memo<Arc<Trace>>, dispatch: Dispatch) -> impl IntoView {
    let policy = Memo::new(move |_| scenario.with(|sc| sc.policy));
    let current = Memo::new(move |_| scenario.with(|sc| sc.id.clone()));
    // The options never change: markup, set before the value.
    let scenario_options = options(
        deck::DECK
            .iter()
            .enumerate()
            .map(|(i, e)| (e.id.to_owned(), format!("{}. {}", i + 1, e.title), ""))
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
            <div class="bar-right">
                <ImportRecording trace dispatch open=importing />
                <label for="scenario" class="fencing-label">
                    "Scenario"
                </label>
                <select
                    id="scenario"
                    on:change:target=move |e| {
                        let v = e.target().value();
                        if v == recording::PICK_RECORDING {
                            importing.set(true);
                            e.target().set_value(&current.get_untracked());
                        } else {
                            dispatch.msg(Msg::Pick(v));
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
                            dispatch.msg(Msg::SetPolicy(p));
                        }
                    }
                    inner_html=policy_options
                    prop:value=move || policy.get().code()
                ></select>
            </div>
        </header>
    }
}

/// How long a new packet delay is (the field beside it then takes the exact value).
const NEW_DELAY_MS: u64 = 10;

/// The what-ifs an interviewer asks for, folded behind one summary so the page still fits:
/// where tokens come from, what storage checks (the highest token, or the sequencer with the
/// lock service too), how clients release, whether the handoff barrier runs, and when
/// (or whether) the lock server fails over. Each is a `Msg`; the lab reruns the core.
#[component]
fn WhatIf(scenario: Memo<Scenario>, dispatch: Dispatch) -> impl IntoView {
    use crate::core::{ReleaseMode, Step, StorageCheck, TokenSource};
    let tokens = Memo::new(move |_| scenario.with(|sc| sc.token_source));
    let check = Memo::new(move |_| scenario.with(|sc| sc.check));
    let release = Memo::new(move |_| scenario.with(|sc| sc.release));
    // Redlock mints no token and has no single primary to fail over; a row lock has no lock
    // server at all, no token and no release but its COMMIT.
    let single =
        Memo::new(move |_| scenario.with(|sc| sc.redlock.is_none() && sc.row_lock.is_none()));
    let leased = Memo::new(move |_| scenario.with(|sc| sc.row_lock.is_none()));
    let barrier = Memo::new(move |_| {
        scenario.with(|sc| {
            sc.actors
                .iter()
                .any(|a| a.script.contains(&Step::Barrier))
                .then_some(!sc.skip_barrier)
        })
    });
    let failover = Memo::new(move |_| scenario.with(|sc| sc.failover_at));
    // Each client, and whether it has a pause: the keyboard's way to add or remove one (a
    // drag along an empty stretch of a lane, or a double-click on a pause, does the same).
    let clients = Memo::new(move |_| {
        scenario.with(|sc| {
            sc.actors
                .iter()
                .enumerate()
                .map(|(i, a)| (i, a.name.clone(), !a.pauses.is_empty(), a.network_delay > 0))
                .collect::<Vec<_>>()
        })
    });
    let mid = Memo::new(move |_| scenario.with(|sc| sc.horizon / 2));
    let count = Memo::new(move |_| scenario.with(|sc| sc.actors.len()));
    let (fewest, most) = (*crate::core::CLIENTS.start(), *crate::core::CLIENTS.end());
    // A replica's lag matters only for a failover of a Redis that holds the lock.
    let lagging = Memo::new(move |_| {
        scenario.with(|sc| {
            sc.failover_at.is_some()
                && sc.redlock.is_none()
                && sc.token_source != TokenSource::LockService
        })
    });
    let lag = Memo::new(move |_| scenario.with(|sc| sc.replication_lag));
    view! {
        <details class="whatif" data-testid="whatif">
            <summary>"What if…"</summary>
            <span class="whatif-body">
                <button
                    class="ghost small"
                    aria-label="Remove a client"
                    disabled=move || count.get() <= fewest
                    on:click=move |_| dispatch.msg(Msg::SetClients(count.get_untracked() - 1))
                >
                    "− client"
                </button>
                <button
                    class="ghost small"
                    aria-label="Add a client"
                    disabled=move || most <= count.get()
                    on:click=move |_| dispatch.msg(Msg::SetClients(count.get_untracked() + 1))
                >
                    "+ client"
                </button>
                {move || {
                    clients
                        .get()
                        .into_iter()
                        .map(|(actor, name, paused, _)| {
                            let (msg, label, text) = if paused {
                                (
                                    Msg::RemovePause { actor },
                                    format!("Remove {name}'s pause"),
                                    format!("− pause {name}"),
                                )
                            } else {
                                (
                                    Msg::AddPause {
                                        actor,
                                        at: mid.get_untracked(),
                                    },
                                    format!("Add a pause for {name}"),
                                    format!("+ pause {name}"),
                                )
                            };
                            view! {
                                <button
                                    class="ghost small"
                                    aria-label=label
                                    on:click=move |_| dispatch.msg(msg.clone())
                                >
                                    {text}
                                </button>
                            }
                        })
                        .collect_view()
                }}
                {move || {
                    clients
                        .get()
                        .into_iter()
                        .map(|(actor, name, _, delayed)| {
                            let (delay, label, text) = if delayed {
                                (
                                    0,
                                    format!("Remove {name}'s packet delay"),
                                    format!("− delay {name}"),
                                )
                            } else {
                                (
                                    NEW_DELAY_MS,
                                    format!("Delay {name}'s packets"),
                                    format!("+ delay {name}"),
                                )
                            };
                            view! {
                                <button
                                    class="ghost small"
                                    aria-label=label
                                    on:click=move |_| dispatch.msg(Msg::SetDelay { actor, delay })
                                >
                                    {text}
                                </button>
                            }
                        })
                        .collect_view()
                }}
                {move || {
                    single
                        .get()
                        .then(|| {
                            view! {
                                <Choice
                                    label="Tokens from"
                                    title=None
                                    options=options(
                                        TokenSource::CHOICES
                                            .map(|t| (t.code().to_owned(), t.option().to_owned(), "")),
                                    )
                                    value=Signal::derive(move || tokens.get().code())
                                    pick=|c| TokenSource::from_code(c).map(Msg::SetTokenSource)
                                    dispatch
                                />
                            }
                        })
                }}
                {move || {
                    leased
                        .get()
                        .then(|| {
                            view! {
                                <Choice
                                    label="Storage checks"
                                    title=Some(
                                        "Fencing on: storage checks the token against the highest it has seen, or also asks the lock service whether the write's lease is still the live one (a sequencer check). Fencing off checks nothing.",
                                    )
                                    options=options(
                                        StorageCheck::ALL
                                            .map(|c| (c.code().to_owned(), c.option().to_owned(), "")),
                                    )
                                    value=Signal::derive(move || check.get().code())
                                    pick=|c| StorageCheck::from_code(c).map(Msg::SetCheck)
                                    dispatch
                                />
                            }
                        })
                }}
                {move || {
                    leased
                        .get()
                        .then(|| {
                            view! {
                                <Choice
                                    label="Release"
                                    title=None
                                    options=options(
                                        ReleaseMode::ALL
                                            .map(|m| (m.code().to_owned(), m.option().to_owned(), "")),
                                    )
                                    value=Signal::derive(move || release.get().code())
                                    pick=|c| ReleaseMode::from_code(c).map(Msg::SetRelease)
                                    dispatch
                                />
                            }
                        })
                }}
                {move || {
                    barrier
                        .get()
                        .map(|on| {
                            view! {
                                <label class="inline">
                                    <input
                                        type="checkbox"
                                        aria-label="Handoff barrier"
                                        prop:checked=on
                                        on:change:target=move |e| {
                                            dispatch.msg(Msg::SetBarrier(e.target().checked()))
                                        }
                                    />
                                    " handoff barrier"
                                </label>
                            }
                        })
                }}
                {move || {
                    single
                        .get()
                        .then(|| {
                            view! {
                                <OptionalMs
                                    label="Failover at "
                                    aria="Failover at (ms)"
                                    placeholder="never"
                                    title=None
                                    value=failover
                                    set=Msg::SetFailover
                                    bad="A failover time needs whole milliseconds (empty: never)."
                                    dispatch
                                />
                            }
                        })
                }}
                {move || {
                    lagging
                        .get()
                        .then(|| {
                            view! {
                                <OptionalMs
                                    label="replica lag "
                                    aria="Replica lag (ms)"
                                    placeholder="cut"
                                    title=Some(
                                        "How far the promoted replica is behind the primary; empty: cut off before the run",
                                    )
                                    value=lag
                                    set=Msg::SetReplicationLag
                                    bad="A replica lag needs whole milliseconds (empty: replication cut before the run)."
                                    dispatch
                                />
                            }
                        })
                }}
            </span>
        </details>
    }
}

/// A what-if select of one design choice: the options are markup from a pure renderer, and
/// the picked value goes back through its type's `from_code` (`pick`) as a message.
#[component]
fn Choice(
    label: &'static str,
    title: Option<&'static str>,
    options: String,
    value: Signal<&'static str>,
    pick: fn(&str) -> Option<Msg>,
    dispatch: Dispatch,
) -> impl IntoView {
    view! {
        <label class="inline" title=title>
            {label}
            " "
            <select
                aria-label=label
                on:change:target=move |e| {
                    if let Some(m) = pick(&e.target().value()) {
                        dispatch.msg(m);
                    }
                }
                inner_html=options
                prop:value=move || value.get()
            ></select>
        </label>
    }
}

/// A what-if field for a time that may be unset (ms): empty sends `set(None)`; anything
/// but whole milliseconds is refused with `bad`, and the field shows the value in force.
#[component]
fn OptionalMs(
    label: &'static str,
    aria: &'static str,
    placeholder: &'static str,
    title: Option<&'static str>,
    value: Memo<Option<Millis>>,
    set: fn(Option<Millis>) -> Msg,
    bad: &'static str,
    dispatch: Dispatch,
) -> impl IntoView {
    let shown = move || value.get().map(|t| t.to_string()).unwrap_or_default();
    view! {
        <label class="inline">
            {label}
            <input
                type="number"
                min="0"
                placeholder=placeholder
                aria-label=aria
                title=title
                prop:value=shown
                on:change:target=move |e| {
                    let msg = match e.target().value().trim() {
                        "" => set(None),
                        t => {
                            t.parse::<Millis>()
                                .map_or_else(|_| Msg::Refuse(bad.to_owned()), |ms| set(Some(ms)))
                        }
                    };
                    dispatch.msg(msg);
                    e.target().set_value(&shown());
                }
            /> " ms"
        </label>
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
