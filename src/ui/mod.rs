//! The Leptos shell: turns input into [`Msg`]s and renders [`Lab`]. No lock or storage
//! logic lives here; every number on screen comes from the core's trace.

mod bench;
mod explorer;
mod export;
mod ledger;
mod markup;
mod timeline;

use gloo_timers::callback::{Interval, Timeout};

use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::core::{deck, FencingPolicy, Pause, Scenario};
use crate::lab::{key_to_msg, Lab, Msg};
use crate::share;

use explorer::ExplorerPanel;
use ledger::{Compare, LedgerPanel};
use markup::markup;
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

/// The page's own view state (not the story): presenter mode and the notes drawer.
#[derive(Clone, Copy)]
struct Chrome {
    presenting: RwSignal<bool>,
    notes: RwSignal<bool>,
    explore: RwSignal<bool>,
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

/// The URL writer's gloo timer. A timer re-armed from its own callback must outlive that
/// call, so the one being replaced moves to `spent` (dropping the one before it, long fired)
/// instead of being dropped while it runs. Dropping both on cleanup cancels a pending write.
#[derive(Default)]
struct HashTimer {
    current: Option<Timeout>,
    spent: Option<Timeout>,
}

/// Writes the hash once it has been quiet for `QUIET_MS`, at most one timer at a time.
fn write_hash_later(
    hash: Memo<String>,
    last_change: StoredValue<f64>,
    timer: StoredValue<HashTimer, LocalStorage>,
    wait: f64,
) {
    let fire = move || {
        let quiet = now_ms() - last_change.get_value();
        if quiet < QUIET_MS {
            return write_hash_later(hash, last_change, timer, QUIET_MS - quiet);
        }
        timer.update_value(|t| t.spent = t.current.take());
        let h = hash.get_untracked();
        if let Some(history) = web_sys::window().and_then(|w| w.history().ok()) {
            let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&h));
        }
    };
    let next = Timeout::new(wait.ceil().max(1.0) as u32, fire);
    timer.update_value(|t| t.spent = t.current.replace(next));
}

/// Loads a shared link, or the default scenario with a message saying what was wrong with it.
fn restore(send: Send, hash: &str) {
    match share::decode(hash) {
        Ok(view) => send.msg(Msg::Restore {
            scenario: view.scenario,
            step: view.step,
        }),
        Err(e) => {
            send.msg(Msg::Load(crate::core::Scenario::gc_pause()));
            send.msg(Msg::Refuse(format!(
                "This link could not be loaded: {e}. Showing the default scenario."
            )));
        }
    }
}

#[component]
fn App() -> impl IntoView {
    let lab = RwSignal::new(Lab::default());
    let send = Send(lab);
    let chrome = Chrome {
        presenting: RwSignal::new(false),
        notes: RwSignal::new(false),
        explore: RwSignal::new(false),
    };
    // A new run counts as a change; the same run (a step) does not.
    let trace = Memo::new_with_compare(
        move |_| lab.with(|l| l.trace.clone()),
        |old, new| !matches!((old, new), (Some(a), Some(b)) if std::sync::Arc::ptr_eq(a, b)),
    );
    let step = Memo::new(move |_| lab.with(|l| l.step));
    // What depends on the scenario alone (herd, comparison, parameter fields, explorer)
    // reads this, so stepping through a run does not recompute it.
    let scenario = Memo::new(move |_| lab.with(|l| l.scenario().clone()));
    let playing = Memo::new(move |_| lab.with(|l| l.playing));
    // Steps per 100 s of wall time ÷ 100: percent of normal speed, kept integral.
    let speed = RwSignal::new(100_u64);

    restore(send, &location_hash());
    // The address bar always holds the current view, so copying it shares exactly this.
    let hash = Memo::new(move |_| {
        let s = step.get();
        trace.with(|t| share::encode(&t.scenario, s))
    });
    // Written 120 ms after the last change: a drag makes a change every frame and browsers
    // throttle the history API. One timer at a time, re-armed for what is left of the
    // 120 ms when it fires early, so a drag does not set and clear a timer per move.
    let last_change = StoredValue::new(0.0_f64);
    let timer = StoredValue::new_local(HashTimer::default());
    Effect::new(move |_| {
        hash.track();
        last_change.set_value(now_ms());
        if timer.with_value(|t| t.current.is_none()) {
            write_hash_later(hash, last_change, timer, QUIET_MS);
        }
    });
    on_cleanup(move || timer.set_value(HashTimer::default()));
    let on_hash = window_event_listener(ev::hashchange, move |_| {
        let h = location_hash();
        if h != hash.get_untracked() {
            restore(send, &h);
        }
    });
    on_cleanup(move || on_hash.remove());

    let keys = window_event_listener(ev::keydown, move |e| {
        if e.ctrl_key() || e.meta_key() || e.alt_key() || typing_into_a_field(&e) {
            return;
        }
        match e.key().as_str() {
            "p" | "P" => {
                let on = !chrome.presenting.get_untracked();
                chrome.presenting.set(on);
                toggle_fullscreen(on);
            }
            "n" | "N" => chrome.notes.update(|n| *n = !*n),
            key => {
                if let Some(m) = key_to_msg(key) {
                    e.prevent_default();
                    send.msg(m);
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
            chrome.presenting.set(false);
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
            ticker.set_value(Some(Interval::new(every, move || send.msg(Msg::Tick))));
        }
    });
    on_cleanup(move || ticker.set_value(None));

    let entry = Memo::new(move |_| trace.with(|t| deck::find(&t.scenario.id).map(|e| e.id)));
    let story = Memo::new(move |_| {
        let question = entry
            .get()
            .and_then(deck::find)
            .map(|e| e.question)
            .unwrap_or_default();
        trace.with(|t| crate::panels::story(t, step.get(), question))
    });
    let forked = Memo::new(move |_| lab.with(|l| l.fork_of.is_some()));
    let export = move |png: bool| {
        let name = entry.get_untracked().unwrap_or("scenario");
        if let Err(e) = export::save_timeline(name, png) {
            send.msg(Msg::Refuse(e));
        }
    };
    // Every button of the page's chrome is static markup with a `data-act`; one handler
    // on the app dispatches them (a closure per button would cost wasm for nothing).
    let on_click = move |e: ev::MouseEvent| {
        let act = e
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|el| el.closest("[data-act]").ok().flatten())
            .and_then(|b| b.get_attribute("data-act"));
        match act.as_deref() {
            Some("reset") => send.msg(Msg::Reset),
            Some("back") => send.msg(Msg::Back),
            Some("play") => send.msg(Msg::TogglePlay),
            Some("forward") => send.msg(Msg::Forward),
            Some("fork") => send.msg(if forked.get_untracked() {
                Msg::Unfork
            } else {
                Msg::Fork
            }),
            Some("explore") => chrome.explore.update(|x| *x = !*x),
            Some("svg") => export(false),
            Some("png") => export(true),
            Some("notes") => chrome.notes.update(|n| *n = !*n),
            Some("present") => {
                let on = !chrome.presenting.get_untracked();
                chrome.presenting.set(on);
                toggle_fullscreen(on);
            }
            Some("theme") => flip_theme(),
            Some("dismiss") => send.msg(Msg::DismissError),
            _ => {}
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

    view! {
        <main class="app" class:presenting=move || chrome.presenting.get() on:click=on_click>
            <Header lab send/>
            {move || {
                lab.with(|l| l.error.clone())
                    .map(|e| {
                        view! {
                            <div class="error" role="alert" data-testid="error">
                                <span>{e}</span>
                                <button data-act="dismiss">"Dismiss"</button>
                            </div>
                        }
                    })
            }}
            <section class="story" aria-live="polite" use:markup=story></section>
            <Notes entry chrome/>
            <Timeline trace step send/>
            <section class="controls" aria-label="Playback">
                <button data-act="reset">"Reset"</button>
                <button data-act="back" aria-keyshortcuts="ArrowLeft">
                    <span aria-hidden="true">"◀ "</span>
                    "Step back"
                </button>
                <button class="primary" data-act="play" aria-keyshortcuts="Space">
                    {move || if playing.get() { "Pause" } else { "Play" }}
                </button>
                <button data-act="forward" aria-keyshortcuts="ArrowRight">
                    "Step forward"
                    <span aria-hidden="true">" ▶"</span>
                </button>
                <label class="inline">
                    "Speed "
                    <select on:change:target=move |e| {
                        if let Ok(v) = e.target().value().parse::<u64>() {
                            speed.set(v);
                        }
                    }>
                        <option value="50">"0.5×"</option>
                        <option value="100" selected>"1×"</option>
                        <option value="200">"2×"</option>
                        <option value="400">"4×"</option>
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
                <PauseEditor scenario send/>
                <WhatIf scenario send/>
                <span class="row2-right">
                    <button class="ghost" data-act="fork" title="Keep this run, then change a parameter and compare">
                        {move || if forked.get() { "Close fork" } else { "Fork" }}
                    </button>
                    <button class="ghost" data-act="explore" aria-pressed=move || chrome.explore.get().to_string()>
                        "Explore"
                    </button>
                    <button class="ghost" data-act="svg" title="Export the timeline as SVG">"SVG"</button>
                    <button class="ghost" data-act="png" title="Export the timeline as PNG">"PNG"</button>
                <button class="ghost" data-act="notes" aria-pressed=move || chrome.notes.get().to_string()>
                        "Notes"
                    </button>
                    <button class="ghost" data-act="present" aria-pressed=move || chrome.presenting.get().to_string()>
                        "Present"
                    </button>
                    <button class="ghost" data-act="theme" aria-label="Theme" title="Light / dark">
                        "◐"
                    </button>
                </span>
            </div>
            {move || forked.get().then(|| view! { <ForkPanel lab/> })}
            {move || chrome.explore.get().then(|| view! { <ExplorerPanel scenario send/> })}
            {move || (entry.get() == Some("renewal")).then(|| view! { <HerdPanel scenario/> })}
            <div class="bottom">
                <LedgerPanel lab/>
                <Compare trace/>
            </div>
            <footer class="keys">
                "Keys: ← → step · Space play · . forward (clicker) · f fencing · p presenter · n notes · drag a pause (its right edge resizes)"
            </footer>
        </main>
    }
}

#[component]
fn Header(lab: RwSignal<Lab>, send: Send) -> impl IntoView {
    let policy = Memo::new(move |_| lab.with(|l| l.scenario().policy));
    let current = Memo::new(move |_| lab.with(|l| l.scenario().id.clone()));
    // The options never change: plain markup, set before the value.
    let scenario_options: String = deck::DECK
        .iter()
        .enumerate()
        .map(|(i, e)| {
            format!(
                r#"<option value="{}">{}. {}</option>"#,
                e.id,
                i + 1,
                crate::timeline::esc(e.title)
            )
        })
        .collect();
    let policy_options: String = FencingPolicy::ALL
        .into_iter()
        .map(|p| {
            format!(
                r#"<option value="{}" title="{}">{}</option>"#,
                p.code(),
                p.label(),
                p.option()
            )
        })
        .collect();
    view! {
        <header class="bar">
            <h1>
                "fencing-lab" <span class="sub">" — a lease is not a lock"</span>
            </h1>
            <div class="bar-right">
                <label for="scenario" class="fencing-label">"Scenario"</label>
                <select
                    id="scenario"
                    on:change:target=move |e| {
                        if let Some(entry) = deck::find(&e.target().value()) {
                            send.msg(Msg::Load((entry.build)()));
                        }
                    }
                    inner_html=scenario_options
                    prop:value=move || current.get()
                ></select>
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
                    inner_html=policy_options
                    prop:value=move || policy.get().code()
                ></select>
            </div>
        </header>
    }
}

/// Speaker notes for the current deck entry, shown on demand (`n`).
#[component]
fn Notes(entry: Memo<Option<&'static str>>, chrome: Chrome) -> impl IntoView {
    move || {
        // Only while shown: the notes are written from the entry's three runs.
        let notes = match (chrome.notes.get(), entry.get().and_then(deck::find)) {
            (true, Some(e)) => (e.notes)(&deck::runs(e)),
            _ => Vec::new(),
        };
        let items: String = notes
            .iter()
            .map(|n| format!("<li>{}</li>", crate::timeline::esc(n)))
            .collect();
        chrome.notes.get().then(|| {
            view! {
                <aside class="notes" data-testid="notes" aria-label="Speaker notes">
                    <ul inner_html=items></ul>
                </aside>
            }
        })
    }
}

/// For the renewal scenario: many holders renewing on one fixed schedule hit the lock server
/// in bursts; jitter spreads them. Both are real runs of the core's herd simulation.
#[component]
fn HerdPanel(scenario: Memo<Scenario>) -> impl IntoView {
    const HOLDERS: usize = 1_000;
    let chart = Memo::new(move |_| {
        scenario.with(|sc| {
            let horizon = sc.lease_ttl.saturating_mul(4);
            let fixed = crate::core::renewal_herd(HOLDERS, sc.lease_ttl, false, sc.seed, horizon);
            let jittered = crate::core::renewal_herd(HOLDERS, sc.lease_ttl, true, sc.seed, horizon);
            let caption = format!(
                "{HOLDERS} holders renewing every third of a {} ms TTL: the fixed schedule peaks at {} renewals per {} ms, jitter at {}.",
                sc.lease_ttl,
                fixed.peak_per_bucket(),
                fixed.bucket_ms,
                jittered.peak_per_bucket()
            );
            (crate::timeline::render_herd(&fixed, &jittered), caption)
        })
    });
    let bars = Memo::new(move |_| chart.with(|c| c.0.clone()));
    view! {
        // Folded by default, so the page still fits a projector; one click opens the chart.
        <details class="herd" data-testid="herd" aria-label="Thundering herd">
            <summary class="fork-line"><b>"Thundering herd: "</b><span data-testid="herd-caption">{move || chart.get().1}</span></summary>
            <svg class="herd-chart" viewBox="0 0 1000 150" role="img" aria-label="Renewals per bucket, fixed versus jittered" use:markup=bars></svg>
        </details>
    }
}

/// The original run (kept at fork time) beside the edited one.
#[component]
fn ForkPanel(lab: RwSignal<Lab>) -> impl IntoView {
    let html = Memo::new(move |_| {
        lab.with(|l| {
            let original = l.fork_of.as_ref().unwrap_or(&l.trace);
            crate::panels::fork(original, &l.trace, l.step)
        })
    });
    view! { <section class="fork" data-testid="fork" aria-label="Original and fork" use:markup=html></section> }
}

/// Precise, keyboard-friendly editing of TTL, delays and pauses (the drag does the same).
/// The fields are markup from [`crate::panels::params`]; one change handler reads which.
#[component]
fn PauseEditor(scenario: Memo<Scenario>, send: Send) -> impl IntoView {
    // The deck's own version of the scenario, to mark edited values: built once per pick.
    let id = Memo::new(move |_| scenario.with(|sc| sc.id.clone()));
    let base = Memo::new(move |_| id.with(|id| deck::find(id).map(|e| (e.build)())));
    let html = Memo::new(move |_| {
        scenario.with(|sc| base.with(|b| crate::panels::params(sc, b.as_ref())))
    });
    let on_change = move |e: ev::Event| {
        let Some(input) = e
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
        else {
            return;
        };
        let param = input.get_attribute("data-param").unwrap_or_default();
        let actor = input
            .get_attribute("data-actor")
            .and_then(|a| a.parse::<usize>().ok());
        let current = |sc: &Scenario| crate::panels::param_value(sc, &param, actor);
        let pause = actor.and_then(|a| {
            scenario.with_untracked(|sc| sc.actors.get(a).and_then(|x| x.pauses.first().copied()))
        });
        let msg = match (param.as_str(), input.value().trim().parse::<u64>()) {
            ("ttl", Ok(v)) => Msg::SetTtl(v),
            ("ttl", Err(_)) => Msg::Refuse("The lease TTL needs whole milliseconds.".to_owned()),
            ("delay", Ok(delay)) => Msg::SetDelay {
                actor: actor.unwrap_or(usize::MAX),
                delay,
            },
            ("delay", Err(_)) => {
                Msg::Refuse("A network delay needs whole milliseconds.".to_owned())
            }
            ("pause-start" | "pause-length", Ok(v)) => match (actor, pause) {
                (Some(actor), Some(p)) => {
                    let pause = if param == "pause-start" {
                        Pause { start: v, ..p }
                    } else {
                        Pause { duration: v, ..p }
                    };
                    Msg::SetPause { actor, pause }
                }
                _ => return,
            },
            ("pause-start" | "pause-length", Err(_)) => {
                Msg::Refuse("A pause needs whole, non-negative milliseconds.".to_owned())
            }
            _ => return,
        };
        send.msg(msg);
        // A refused edit leaves the scenario (and so the markup) unchanged: show the last good value.
        if let Some(v) = scenario.with_untracked(current) {
            input.set_value(&v.to_string());
        }
    };
    view! { <section class="pauses" aria-label="Parameters" on:change=on_change use:markup=html></section> }
}

/// The what-ifs an interviewer asks for, folded behind one summary so the page still fits:
/// where tokens come from, how clients release, whether the handoff barrier runs, and when
/// (or whether) the lock server fails over. Each is a `Msg`; the core reruns.
#[component]
fn WhatIf(scenario: Memo<Scenario>, send: Send) -> impl IntoView {
    use crate::core::{ReleaseMode, Step, TokenSource};
    let knobs = Memo::new(move |_| {
        scenario.with(|sc| {
            let barrier = sc.actors.iter().any(|a| a.script.contains(&Step::Barrier));
            (
                sc.token_source,
                sc.release,
                barrier.then_some(!sc.skip_barrier),
                sc.redlock.is_none().then_some(sc.failover_at),
            )
        })
    });
    let token_options: String = TokenSource::CHOICES
        .into_iter()
        .map(|t| format!(r#"<option value="{}">{}</option>"#, t.code(), t.option()))
        .collect();
    let release_options: String = ReleaseMode::ALL
        .into_iter()
        .map(|m| format!(r#"<option value="{}">{}</option>"#, m.code(), m.option()))
        .collect();
    let failover_value = move || {
        knobs
            .get()
            .3
            .flatten()
            .map(|t| t.to_string())
            .unwrap_or_default()
    };
    view! {
        <details class="whatif" data-testid="whatif">
            <summary>"What if…"</summary>
            <span class="whatif-body">
                {move || {
                    (knobs.get().3.is_some()).then(|| {
                        view! {
                            <label class="inline">
                                "Tokens from "
                                <select
                                    aria-label="Tokens from"
                                    on:change:target=move |e| {
                                        if let Some(t) = TokenSource::from_code(&e.target().value()) {
                                            send.msg(Msg::SetTokenSource(t));
                                        }
                                    }
                                    inner_html=token_options.clone()
                                    prop:value=move || knobs.get().0.code()
                                ></select>
                            </label>
                        }
                    })
                }}
                <label class="inline">
                    "Release "
                    <select
                        aria-label="Release"
                        on:change:target=move |e| {
                            if let Some(m) = ReleaseMode::from_code(&e.target().value()) {
                                send.msg(Msg::SetRelease(m));
                            }
                        }
                        inner_html=release_options
                        prop:value=move || knobs.get().1.code()
                    ></select>
                </label>
                {move || {
                    knobs.get().2.map(|on| {
                        view! {
                            <label class="inline">
                                <input
                                    type="checkbox"
                                    aria-label="Handoff barrier"
                                    prop:checked=on
                                    on:change:target=move |e| send.msg(Msg::SetBarrier(e.target().checked()))
                                />
                                " handoff barrier"
                            </label>
                        }
                    })
                }}
                {move || {
                    (knobs.get().3.is_some()).then(|| {
                        view! {
                            <label class="inline">
                                "Failover at "
                                <input
                                    type="number"
                                    min="0"
                                    placeholder="never"
                                    aria-label="Failover at (ms)"
                                    prop:value=failover_value
                                    on:change:target=move |e| {
                                        let v = e.target().value();
                                        let msg = match v.trim() {
                                            "" => Msg::SetFailover(None),
                                            t => match t.parse::<u64>() {
                                                Ok(ms) => Msg::SetFailover(Some(ms)),
                                                Err(_) => Msg::Refuse("A failover time needs whole milliseconds (empty: never).".to_owned()),
                                            },
                                        };
                                        send.msg(msg);
                                        e.target().set_value(&failover_value());
                                    }
                                />
                                " ms"
                            </label>
                        }
                    })
                }}
            </span>
        </details>
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
