//! The page's keys: the lab's own map ([`key_to_msg`]), plus the shell's: `p` (presenter
//! mode, with fullscreen), `Esc` (closes what is open, the top first, else leaves presenter
//! mode: [`escape`]), `n` (the notes drawer; while presenting,
//! the speaker view, so notes never reach the shared screen), `s` (the speaker view), `?`
//! (the keys sheet) and `q` (rehearse).

use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::speaker::Pair;
use super::timers::now_ms;
use super::Dispatch;
use crate::lab::{key_to_msg, Msg};

fn typing_into_a_field(e: &web_sys::KeyboardEvent) -> bool {
    e.target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|el| matches!(el.tag_name().as_str(), "INPUT" | "SELECT" | "TEXTAREA"))
}

/// How long after a `p` fullscreen may still be going on its account: an exit then is the
/// page's own (a quick `p p`'s first), not the viewer's.
const SETTLE_MS: f64 = 1000.0;

/// Presenter mode, with fullscreen following it where the browser allows. The viewer
/// leaving fullscreen (Esc) ends presenting too; fullscreen goes a moment late, so an exit
/// within [`SETTLE_MS`] of a `p` is taken as that `p`'s.
#[derive(Clone, Copy)]
pub(super) struct Presenter {
    dispatch: Dispatch,
    presenting: Memo<bool>,
    /// When `p` was last pressed (ms, [`now_ms`]).
    pressed: StoredValue<f64>,
}

impl Presenter {
    /// Presenter mode on or off, fullscreen with it.
    pub(super) fn toggle(self) {
        self.dispatch.msg(Msg::TogglePresent);
        self.pressed.set_value(now_ms());
        let doc = document();
        let full = doc.fullscreen_element().is_some();
        match self.presenting.get_untracked() {
            true if !full => {
                if let Some(root) = doc.document_element() {
                    let _ = root.request_fullscreen();
                }
            }
            false if full => doc.exit_fullscreen(),
            _ => {}
        }
    }

    /// Out of presenter mode (Esc, the toolbar's Exit), and out of fullscreen with it.
    pub(super) fn stop(self) {
        self.dispatch.msg(Msg::StopPresenting);
        let doc = document();
        if doc.fullscreen_element().is_some() {
            doc.exit_fullscreen();
        }
    }

    /// Fullscreen came or went: left again if presenting ended before it came; the viewer's
    /// exit ends presenting.
    fn changed(self) {
        let doc = document();
        let (presenting, full) = (self.presenting.get_untracked(), doc.fullscreen_element());
        let settled = now_ms() - self.pressed.get_value() > SETTLE_MS;
        match full {
            Some(_) if !presenting => doc.exit_fullscreen(),
            None if presenting && settled => self.dispatch.msg(Msg::StopPresenting),
            _ => {}
        }
        hold_escape(presenting && doc.fullscreen_element().is_some());
    }
}

#[wasm_bindgen::prelude::wasm_bindgen(inline_js = r#"
export function hold_escape(on) {
  const k = navigator.keyboard;
  if (!k || !k.lock) return;
  if (on) k.lock(['Escape']).catch(() => {}); else k.unlock();
}
"#)]
extern "C" {
    /// Fullscreen, a browser takes Esc for itself and leaves fullscreen (and so presenter
    /// mode) whatever is open. Where it has the Keyboard Lock API (Chromium), the page asks
    /// for Esc while presenting fullscreen, so Esc closes the top thing open first
    /// ([`escape`]); holding Esc still leaves fullscreen, and the browser says so.
    fn hold_escape(on: bool);
}

/// The drawers in the column at the page's right: whether each is open.
#[derive(Clone, Copy)]
pub(super) struct Drawers {
    pub(super) notes: Memo<bool>,
    pub(super) explorer: Memo<bool>,
}

/// What `Esc` closes, one thing a press, the top one first: the keys sheet, the rehearsal,
/// a menu of the tools row (Export…, What if…), the explorer, the notes; only when nothing
/// is open does it leave presenter mode; a modal dialog's Esc is its own. Presenting, the tools row and the drawers are not
/// on screen (style.css), so they are left as they are, for when presenting ends.
fn escape(presenter: Presenter, [sheet, rehearsing]: [RwSignal<bool>; 2], drawers: Drawers) {
    // A modal <dialog> (the recording's import) closes on Esc by itself.
    if matches!(document().query_selector("dialog[open]"), Ok(Some(_))) {
        return;
    }
    let toggle = |m: Msg| presenter.dispatch.msg(m);
    match () {
        _ if sheet.get_untracked() => sheet.set(false),
        _ if rehearsing.get_untracked() => rehearsing.set(false),
        _ if presenter.presenting.get_untracked() => presenter.stop(),
        _ if close_a_menu() => {}
        _ if drawers.explorer.get_untracked() => toggle(Msg::ToggleExplore),
        _ if drawers.notes.get_untracked() => toggle(Msg::ToggleNotes),
        _ => {}
    }
}

/// Closes an open menu of the tools row (Export…, What if…), if there is one.
fn close_a_menu() -> bool {
    let open = document()
        .query_selector(".app .row2 details[open]")
        .ok()
        .flatten();
    open.is_some_and(|menu| menu.remove_attribute("open").is_ok())
}

/// Listens for the page's keys, and for fullscreen coming and going (the viewer leaving
/// fullscreen leaves presenter mode too), until the app goes away.
pub(super) fn listen(
    dispatch: Dispatch,
    presenting: Memo<bool>,
    open: [RwSignal<bool>; 2],
    drawers: Drawers,
    pair: Pair,
) -> Presenter {
    let [sheet, rehearsing] = open;
    let presenter = Presenter {
        dispatch,
        presenting,
        pressed: StoredValue::new(f64::NEG_INFINITY),
    };
    let keys = window_event_listener(ev::keydown, move |e| {
        if e.ctrl_key() || e.meta_key() || e.alt_key() {
            return;
        }
        // Esc closes a menu or a drawer from one of its own fields too.
        if e.key() == "Escape" {
            return escape(presenter, open, drawers);
        }
        if typing_into_a_field(&e) {
            return;
        }
        match e.key().as_str() {
            "p" | "P" => presenter.toggle(),
            "q" | "Q" => rehearsing.update(|open| *open = !*open),
            "?" => sheet.update(|open| *open = !*open),
            "s" | "S" => pair.open(dispatch),
            "n" | "N" if presenting.get_untracked() => pair.open(dispatch),
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
    let fullscreen =
        window_event_listener_untyped("fullscreenchange", move |_| presenter.changed());
    on_cleanup(move || fullscreen.remove());
    presenter
}
