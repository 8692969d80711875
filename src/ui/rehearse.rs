//! Rehearse mode's share of the first screen: the signal that the Rehearse button and the
//! `q` key flip, and the loader of its chunk. Everything else (the rehearsal, its scoring,
//! its stylesheet, the night-before sheet) is in the chunk, fetched the first time.

use leptos::prelude::*;

use super::split;
use crate::lab::Lab;

/// The rehearsal while it is open (an embedded view, which has none of the page's tools,
/// never opens it).
#[component]
pub(super) fn Rehearse(open: RwSignal<bool>, lab: RwSignal<Lab>) -> impl IntoView {
    let shown = Memo::new(move |_| open.get() && !lab.with(Lab::embedded));
    move || {
        shown
            .get()
            .then(|| split::lazily(draw_rehearsal(), move |draw| draw(open, lab)))
    }
}

type DrawRehearsal = fn(RwSignal<bool>, RwSignal<Lab>) -> AnyView;

#[leptos::wasm_split::wasm_split(rehearse, fallible, wasm_split_path = ::leptos::wasm_split)]
fn draw_rehearsal() -> Result<DrawRehearsal, split::Failed> {
    Ok(super::rehearse_panel::draw)
}
