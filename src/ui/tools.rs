//! The tools row of the full page: fork, explore, the Export… menu (SVG, PNG, Animation,
//! the embed code), notes, the reveal, rehearse, presenter mode and the theme. An embedded view has none of it.

use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsCast;

use std::sync::Arc;

use super::animation::AnimationExport;
use super::export;
use super::split;
use crate::core::Trace;
use crate::share;
use crate::view::Act;

/// The buttons, and a line saying what the last export or copy came to.
#[component]
pub(super) fn Tools(
    trace: Memo<Arc<Trace>>,
    step: Memo<usize>,
    forked: Memo<bool>,
    exploring: Memo<bool>,
    notes_shown: Memo<bool>,
    presenting: Memo<bool>,
    rehearsing: RwSignal<bool>,
) -> impl IntoView {
    let pressed = |m: Memo<bool>| move || m.get().to_string();
    let reveal = expect_context::<super::Stage>().reveal;
    let status = RwSignal::new(String::new());
    // (frames done, frames in all) while an animation encodes.
    let progress = RwSignal::new(None::<(usize, usize)>);
    // The embed code last copied, shown so it can be copied by hand too.
    let code = RwSignal::new(None::<String>);
    let menu_opened = RwSignal::new(false);
    let menu = NodeRef::<leptos::html::Details>::new();
    view! {
        <span class="row2-right">
            <button
                class="ghost"
                data-act=Act::Fork.code()
                title="Keep this run, then change a parameter and compare"
            >
                {move || if forked.get() { "Close fork" } else { "Fork" }}
            </button>
            <button class="ghost" data-act=Act::Explore.code() aria-pressed=pressed(exploring)>
                "Explore"
            </button>
            // The menu's buttons are drawn the first time it opens, from a chunk of their own.
            <details
                class="export-menu"
                node_ref=menu
                on:toggle=move |_| {
                    if !menu_opened.get_untracked() {
                        menu_opened.set(true);
                    }
                }
            >
                <summary>"Export…"</summary>
                <div class="export-body">
                    {move || {
                        menu_opened
                            .get()
                            .then(|| {
                                split::lazily(
                                    draw_export_menu(),
                                    move |draw| draw(trace, step, status, progress, code, menu),
                                )
                            })
                    }}
                </div>
            </details>
            <button class="ghost" data-act=Act::Notes.code() aria-pressed=pressed(notes_shown)>
                "Notes"
            </button>
            <button
                class="ghost"
                data-act=Act::Reveal.code()
                aria-keyshortcuts="r"
                aria-pressed=pressed(reveal)
                title="Draw nothing after the current step (r)"
            >
                "Reveal"
            </button>
            <button
                class="ghost"
                aria-keyshortcuts="q"
                aria-pressed=move || rehearsing.get().to_string()
                title="Rehearse: the page asks, you answer (q)"
                on:click=move |_| rehearsing.update(|open| *open = !*open)
            >
                "Rehearse"
            </button>
            <button class="ghost" data-act=Act::Present.code() aria-pressed=pressed(presenting)>
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
        <p
            class="tool-status"
            class:shown=move || !status.get().is_empty()
            role="status"
            data-testid="tool-status"
        >
            <span>{move || status.get()}</span>
            {move || {
                progress
                    .get()
                    .map(|(done, all)| {
                        view! {
                            <progress
                                aria-label="Encoding the animation"
                                max=all.to_string()
                                value=done.to_string()
                            ></progress>
                        }
                    })
            }}
            {move || {
                code.get()
                    .map(|c| {
                        view! {
                            <input
                                class="embed-code"
                                readonly
                                aria-label="Embed code"
                                prop:value=c
                                on:focus:target=move |e| e.target().select()
                            />
                        }
                    })
            }}
            {move || {
                (!status.get().is_empty() && progress.get().is_none())
                    .then(|| {
                        view! {
                            <button
                                class="small"
                                on:click=move |_| {
                                    status.set(String::new());
                                    code.set(None);
                                }
                            >
                                "Close"
                            </button>
                        }
                    })
            }}
        </p>
    }
}

/// Export… closes like any menu: after one of its actions (SVG, PNG, the embed code; the
/// Animation once its file is made, as its stage is drawn inside the menu), and on a click
/// outside it. Esc closes it too (ui::keys).
fn close_like_a_menu(
    menu: NodeRef<leptos::html::Details>,
    progress: RwSignal<Option<(usize, usize)>>,
) {
    let close = move || {
        if let Some(m) = menu.get_untracked() {
            m.set_open(false);
        }
    };
    let clicks = window_event_listener(leptos::ev::click, move |e| {
        let target = e
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok());
        let within = |sel: &str| {
            target
                .as_ref()
                .is_some_and(|t| t.closest(sel).ok().flatten().is_some())
        };
        let encoding = progress.get_untracked().is_some();
        let action = within(".export-body button") && !within("[data-keeps-menu]");
        if !encoding && (action || !within(".export-menu")) {
            close();
        }
    });
    on_cleanup(move || clicks.remove());
    // The Animation's file is made (or not): the menu's work is done.
    Effect::new(move |was_encoding: Option<bool>| {
        let encoding = progress.get().is_some();
        if was_encoding == Some(true) && !encoding {
            close();
        }
        encoding
    });
}

type DrawExportMenu = fn(
    Memo<Arc<Trace>>,
    Memo<usize>,
    RwSignal<String>,
    RwSignal<Option<(usize, usize)>>,
    RwSignal<Option<String>>,
    NodeRef<leptos::html::Details>,
) -> AnyView;

/// The Export… menu's buttons: SVG, PNG, Animation and the embed code.
#[leptos::wasm_split::wasm_split(export_menu, fallible, wasm_split_path = ::leptos::wasm_split)]
fn draw_export_menu() -> Result<DrawExportMenu, split::Failed> {
    Ok(|trace, step, status, progress, code, menu| {
        // Its closing rules come with its buttons: nothing to close before it first opens.
        close_like_a_menu(menu, progress);
        let copy = move |_| copy_embed(trace, step, status, code);
        view! {
            {[(Act::Svg, "SVG"), (Act::Png, "PNG")]
                .map(|(act, format)| {
                    view! {
                        <button
                            class="ghost"
                            data-act=act.code()
                            title=format!("Export the timeline as {format}")
                        >
                            {format}
                        </button>
                    }
                })}
            <AnimationExport trace status progress />
            <button
                class="ghost"
                on:click=copy
                title="Copy an <iframe> that shows this run in your own page"
            >
                "Copy embed code"
            </button>
        }
        .into_any()
    })
}

/// Copies the `<iframe>` for the view on screen, and says what to do with it; a page opened
/// from a file says that the code needs the page hosted.
fn copy_embed(
    trace: Memo<Arc<Trace>>,
    step: Memo<usize>,
    status: RwSignal<String>,
    code: RwSignal<Option<String>>,
) {
    let location = web_sys::window().map(|w| w.location());
    let href = location
        .as_ref()
        .and_then(|l| l.href().ok())
        .unwrap_or_default();
    let protocol = location.and_then(|l| l.protocol().ok()).unwrap_or_default();
    let page = href.split('#').next().unwrap_or_default().to_owned();
    let snippet =
        trace.with_untracked(|t| share::embed_code(&page, &t.scenario, step.get_untracked()));
    spawn_local(async move {
        status.set(match export::copy_text(&snippet).await {
            Ok(_) => share::embed_note(&protocol).to_owned(),
            Err(e) => format!(
                "The clipboard refused ({}): copy the code from the box.",
                export::reason(&e)
            ),
        });
        code.set(Some(snippet));
    });
}
