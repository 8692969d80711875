//! The page's keys: the lab's own map ([`key_to_msg`]), plus `p` (presenter mode, with
//! fullscreen) and `n` (the notes drawer), which are the shell's.

use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::Dispatch;
use crate::lab::{key_to_msg, Msg};

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

/// Presenter mode on or off, fullscreen with it.
pub(super) fn present(dispatch: Dispatch, presenting: Memo<bool>) {
    dispatch.msg(Msg::TogglePresent);
    toggle_fullscreen(presenting.get_untracked());
}

/// Listens for the page's keys, and for leaving fullscreen (Esc), which leaves presenter
/// mode too, until the app goes away.
pub(super) fn listen(dispatch: Dispatch, presenting: Memo<bool>) {
    let keys = window_event_listener(ev::keydown, move |e| {
        if e.ctrl_key() || e.meta_key() || e.alt_key() || typing_into_a_field(&e) {
            return;
        }
        match e.key().as_str() {
            "p" | "P" => present(dispatch, presenting),
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
    let fullscreen = window_event_listener_untyped("fullscreenchange", move |_| {
        let full = web_sys::window()
            .and_then(|w| w.document())
            .is_some_and(|d| d.fullscreen_element().is_some());
        if !full {
            dispatch.msg(Msg::StopPresenting);
        }
    });
    on_cleanup(move || fullscreen.remove());
}
