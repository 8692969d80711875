//! The address bar holds the current view, so copying it shares exactly this; a link that
//! is pasted or edited (`hashchange`) loads, or says what was wrong with it.

use gloo_timers::callback::Timeout;
use leptos::ev;
use leptos::prelude::*;

use std::cell::Cell;
use std::sync::Arc;

use super::timers::{now_ms, Rearm};
use super::Dispatch;
use crate::core::Trace;
use crate::lab::Msg;
use crate::share;

/// How long the URL waits after the last change before it is written.
const QUIET_MS: f64 = 120.0;

pub(super) fn location_hash() -> String {
    web_sys::window()
        .and_then(|w| w.location().hash().ok())
        .unwrap_or_default()
}

thread_local! {
    /// Whether a drag holds the address bar still, and the view's hash for its end to write
    /// ([`grab`], [`release`]; the hash is [`sync`]'s).
    static HOLD: Cell<(bool, Option<Memo<String>>)> = const { Cell::new((false, None)) };
}

/// A drag holds the pointer: the address bar waits for its end. A write
/// (`history.replaceState`, a millisecond or more in Chromium) that fell due while the
/// pointer paused would land among the drag's moves.
pub(super) fn grab() {
    HOLD.with(|h| h.set((true, h.get().1)));
}

/// The drag is over: the bar shows the view it left, now. (Also when the timeline goes in
/// the middle of a drag, so `try_`: the app may be going with it.)
pub(super) fn release() {
    let (held, hash) = HOLD.with(|h| h.replace((false, h.get().1)));
    let now = hash.filter(|_| held).and_then(|m| m.try_get_untracked());
    if let Some(h) = now.filter(|h| *h != location_hash()) {
        write(&h);
    }
}

fn held() -> bool {
    HOLD.with(|h| h.get().0)
}

/// Loads the page's own link, then keeps the address bar and the view in step until the
/// app goes away; a drag holds the bar still ([`grab`]).
/// Returns the view's hash, which the speaker view follows too.
pub(super) fn sync(
    dispatch: Dispatch,
    trace: Memo<Arc<Trace>>,
    step: Memo<usize>,
    embed: Memo<bool>,
) -> Memo<String> {
    restore(dispatch, &location_hash());
    let hash = Memo::new(move |_| {
        let (s, e) = (step.get(), embed.get());
        trace.with(|t| share::encode_view(&t.scenario, s, e))
    });
    // Written 120 ms after the last change: a drag makes a change every frame and browsers
    // throttle the history API. One timer at a time, re-armed for what is left of the
    // 120 ms when it fires early, so a drag does not set and clear a timer per move.
    let last_change = StoredValue::new(0.0_f64);
    let timer = StoredValue::new_local(Rearm::default());
    HOLD.with(|h| h.set((false, Some(hash))));
    Effect::new(move |_| {
        hash.track();
        if held() {
            return; // the drag's end writes it
        }
        last_change.set_value(now_ms());
        if timer.with_value(Rearm::idle) {
            write_later(hash, last_change, timer, QUIET_MS);
        }
    });
    on_cleanup(move || timer.set_value(Rearm::default()));
    // The link comes from the event, not the address bar: a write due at that moment may run
    // between the change and this handler, and would put the old view back in the bar.
    let on_hash = window_event_listener(ev::hashchange, move |e| {
        let url = e.new_url();
        let h = url.find('#').map_or("", |at| &url[at..]);
        if h != hash.get_untracked() {
            restore(dispatch, h);
        }
    });
    on_cleanup(move || on_hash.remove());
    hash
}

/// Writes the hash once it has been quiet for `QUIET_MS`, at most one timer at a time; not
/// while a drag holds the bar (its end writes it).
fn write_later(
    hash: Memo<String>,
    last_change: StoredValue<f64>,
    timer: StoredValue<Rearm, LocalStorage>,
    wait: f64,
) {
    let fire = move || {
        let quiet = now_ms() - last_change.get_value();
        if quiet < QUIET_MS && !held() {
            return write_later(hash, last_change, timer, QUIET_MS - quiet);
        }
        timer.update_value(Rearm::fired);
        if !held() {
            write(&hash.get_untracked());
        }
    };
    let next = Timeout::new(wait.ceil().max(1.0) as u32, fire);
    timer.update_value(|t| t.rearm(next));
}

/// Puts `hash` in the address bar, in place of the current entry.
fn write(hash: &str) {
    if let Some(history) = web_sys::window().and_then(|w| w.history().ok()) {
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(hash));
    }
}

/// Loads a shared link (once the deck entry it names is in: [`super::deck`]), or the default
/// scenario with a message saying what was wrong with it.
pub(super) fn restore(dispatch: Dispatch, hash: &str) {
    let (id, hash) = (share::named_entry(hash), hash.to_owned());
    super::deck::with_entry(dispatch, id, move || load(dispatch, &hash));
}

fn load(dispatch: Dispatch, hash: &str) {
    match share::decode(hash) {
        Ok(view) => dispatch.msg(Msg::Restore {
            scenario: view.scenario,
            step: view.step,
            embed: view.embed,
        }),
        Err(e) => {
            // A broken link in someone's frame still shows the run in the frame's layout.
            dispatch.msg(Msg::Restore {
                scenario: share::headline(),
                step: 0,
                embed: share::asks_for_embed(hash),
            });
            dispatch.msg(Msg::Refuse(share::not_loaded(&e)));
        }
    }
}
