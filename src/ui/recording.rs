//! Import a trace recorded on real servers: paste it, drop its file, or choose it. The text
//! is read and checked by [`read_recording`](crate::lab::read_recording), which the page
//! fetches as a wasm chunk of its own the first time (`wasm_split`: serde's derives for the
//! recording format are 52 KB gzip that opening the page need not wait for), and what it
//! read goes to the lab (`Msg::Import`).

use std::sync::Arc;

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::split::Failed;
use super::Dispatch;
use crate::core::Trace;
use crate::lab::Msg;

/// Reads `file` as text, then hands it to the lab.
fn read_file(file: web_sys::File, dispatch: Dispatch) {
    let Ok(reader) = web_sys::FileReader::new() else {
        dispatch.msg(Msg::Refuse("This browser cannot read files.".to_owned()));
        return;
    };
    let r = reader.clone();
    let onload = wasm_bindgen::closure::Closure::once_into_js(move || {
        match r.result().ok().and_then(|v| v.as_string()) {
            Some(text) => import(text, dispatch),
            None => dispatch.msg(Msg::Refuse(
                "That file could not be read as text.".to_owned(),
            )),
        }
    });
    reader.set_onload(Some(onload.unchecked_ref()));
    if reader.read_as_text(&file).is_err() {
        dispatch.msg(Msg::Refuse("That file could not be read.".to_owned()));
    }
}

/// The value of the Scenario picker's last option, which opens this panel.
pub const PICK_RECORDING: &str = "recording";

/// The import panel: a dialog over the page (it takes no room from the timeline), opened
/// from the Scenario picker, closed by its button or once a recording is shown. Not modal,
/// so the page's own message banner stays in reach.
#[component]
pub fn ImportRecording(trace: Memo<Arc<Trace>>, open: RwSignal<bool>) -> impl IntoView {
    // Its code is a chunk of its own, fetched the first time it opens.
    move || {
        open.get()
            .then(|| super::split::lazily(draw_import(), move |draw| draw(trace, open)))
    }
}

type DrawImport = fn(Memo<Arc<Trace>>, RwSignal<bool>) -> AnyView;

#[leptos::wasm_split::wasm_split(import_panel, fallible, wasm_split_path = ::leptos::wasm_split)]
fn draw_import() -> Result<DrawImport, Failed> {
    static STYLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    super::split::adopt_style(&STYLED, include_str!("../../assets/import.css"));
    Ok(|trace, open| view! { <ImportPanel trace open /> }.into_any())
}

#[component]
fn ImportPanel(trace: Memo<Arc<Trace>>, open: RwSignal<bool>) -> impl IntoView {
    let dispatch = expect_context::<Dispatch>();
    let text = RwSignal::new(String::new());
    let panel = NodeRef::<leptos::html::Dialog>::new();
    let shown = Memo::new(move |_| trace.with(|t| t.recorded.is_some()));
    // Closes once a recording comes on screen (not when opened over one already shown).
    Effect::new(move |was: Option<bool>| {
        let now = shown.get();
        if now && was == Some(false) {
            open.set(false);
        }
        now
    });
    Effect::new(move |_| {
        let Some(d) = panel.get() else { return };
        if open.get() {
            d.show();
        } else {
            d.close();
        }
    });
    let on_drop = move |e: web_sys::DragEvent| {
        let file = e
            .data_transfer()
            .and_then(|d| d.files())
            .and_then(|f| f.get(0));
        if let Some(f) = file {
            e.prevent_default();
            read_file(f, dispatch);
        }
    };
    view! {
        <dialog class="import" node_ref=panel aria-label="Import a recording">
            <div class="import-body">
                <h2>"Import a recording"</h2>
                <p class="hint">
                    "A run recorded on real servers: " <code>"bash scripts/replay.sh"</code>
                    " writes one per scenario and policy to " <code>"target/replay/recorded/"</code>
                    " (samples in " <code>"assets/recordings/"</code>
                    "). Paste it, drop its file here, or choose it."
                </p>
                <textarea
                    aria-label="Recorded trace (JSON)"
                    rows="3"
                    placeholder="{ \"scenario\": …, \"events\": …, \"recorded\": … }"
                    prop:value=move || text.get()
                    on:input:target=move |e| text.set(e.target().value())
                    on:dragover=|e: web_sys::DragEvent| e.prevent_default()
                    on:drop=on_drop
                ></textarea>
                <div class="import-row">
                    <button on:click=move |_| {
                        import(text.get_untracked(), dispatch)
                    }>"Show recording"</button>
                    <label class="inline">
                        "or a file "
                        <input
                            type="file"
                            accept=".json,application/json"
                            aria-label="Recording file"
                            on:change:target=move |e| {
                                if let Some(f) = e.target().files().and_then(|f| f.get(0)) {
                                    read_file(f, dispatch);
                                }
                            }
                        />
                    </label>
                    <button class="ghost" on:click=move |_| open.set(false)>
                        "Close"
                    </button>
                </div>
            </div>
        </dialog>
    }
}

/// Says, over the timeline, that what is drawn happened on real servers.
#[component]
pub fn RecordedBanner(trace: Memo<Arc<Trace>>) -> impl IntoView {
    let label = Memo::new(move |_| {
        trace.with(|t| {
            t.recorded
                .as_ref()
                .map(|r| format!("{} · {}", r.label(), r.timing))
        })
    });
    move || {
        label.get().map(|l| {
            view! {
                <p class="recorded" role="status" data-testid="recorded">
                    <strong>{l}</strong>
                    " — not a simulation. Change anything and it is simulated again."
                </p>
            }
        })
    }
}

const NOT_FETCHED: &str =
    "The recording reader could not be fetched from the page's server. Try again.";

/// The recording reader, split off the page's wasm: the first call fetches its chunk.
#[leptos::wasm_split::wasm_split(recording_reader, fallible, wasm_split_path = ::leptos::wasm_split)]
fn read(text: String) -> Result<Trace, Failed> {
    Ok(crate::lab::read_recording(&text)?)
}

/// Reads `text` (once the reader's chunk is in), then hands what it read to the lab.
fn import(text: String, dispatch: Dispatch) {
    leptos::task::spawn_local(async move {
        let read = read(text).await.map_err(|e| match e {
            Failed::Said(why) => why,
            Failed::NotFetched => NOT_FETCHED.to_owned(),
        });
        // Its deck entry too, which its link and notes are written against. Without it the
        // recording still shows: the fetch is tried again when a link or the picker needs it.
        if let Ok(t) = &read {
            let _ = super::deck::fetch_for(&t.scenario.id).await;
        }
        dispatch.msg(Msg::Import(Box::new(read)));
    });
}
