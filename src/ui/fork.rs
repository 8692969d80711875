//! The fork: the stage draws the fork; the original runs as one row under it, at the stage's
//! scale and place (one cursor, the same x for the same time), its differing events ringed and
//! labelled; one line over the story's question names both runs. The ledger and the cards keep
//! their place. Its view code is a chunk of its own, fetched the first time.

use std::sync::Arc;

use leptos::prelude::*;

use super::split::{lazily, Failed};
use super::timeline::{reveal_clip, stage_type, Drawing};
use super::Stage;
use crate::core::{story, Trace};
use crate::lab::{Lab, Msg};
use crate::view::fork as diff;
use crate::view::timeline as chart;

/// The fork while it is open.
#[component]
pub fn Fork(lab: RwSignal<Lab>, trace: Memo<Arc<Trace>>, step: Memo<usize>) -> impl IntoView {
    lazily(draw_fork(), move |draw| draw(lab, trace, step))
}

type DrawFork = fn(RwSignal<Lab>, Memo<Arc<Trace>>, Memo<usize>) -> AnyView;

#[leptos::wasm_split::wasm_split(fork, fallible, wasm_split_path = ::leptos::wasm_split)]
fn draw_fork() -> Result<DrawFork, Failed> {
    static STYLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    super::split::adopt_style(&STYLED, include_str!("../../assets/fork.css"));
    Ok(|lab, trace, step| view! { <ForkPanel lab trace step /> }.into_any())
}

/// The original's reveal clip (its clipPath is `#revealed-original`).
const REVEALED: &str = "url(#revealed-original)";

/// "fencing strict · balance 90": how a run was fenced and how it ended.
fn run_words(t: &Trace) -> String {
    let what = if t.scenario.publishes() {
        "result"
    } else {
        "balance"
    };
    format!(
        "fencing {} · {what} {}",
        t.scenario.policy.short(),
        story::final_value(t)
    )
}

#[component]
fn ForkPanel(lab: RwSignal<Lab>, trace: Memo<Arc<Trace>>, step: Memo<usize>) -> impl IntoView {
    let original = Memo::new_with_compare(
        move |_| {
            lab.with(|l| {
                l.fork_of()
                    .cloned()
                    .unwrap_or_else(|| Arc::clone(l.trace()))
            })
        },
        |old, new| !matches!((old, new), (Some(a), Some(b)) if Arc::ptr_eq(a, b)),
    );
    let found = Memo::new(move |_| original.with(|o| trace.with(|t| diff::diff(o, t))));
    // The fork's differing events, marked on the page's own timeline while this is open.
    let marks = use_context::<Stage>().map(|s| s.marks);
    Effect::new(move |_| {
        if let Some(m) = marks {
            m.set(found.with(|d| d.fork.clone()));
        }
    });
    on_cleanup(move || {
        if let Some(m) = marks {
            m.set(Vec::new());
        }
    });
    let ty = stage_type();
    // The stage's drawing: the strip is as wide as it, so the same time is at the same x.
    let stage = Memo::new(move |_| trace.with(|t| chart::Geometry::typed(t, ty.get())));
    let drawn = Memo::new(move |_| {
        original.with(|o| {
            trace.with(|t| found.with(|d| diff::strip(o, t, step.get(), ty.get(), &d.original)))
        })
    });
    let h = chart::n(diff::STRIP_H);
    let strip_ref = NodeRef::<leptos::html::Figure>::new();
    Effect::new(move |_| {
        if let Some(strip) = strip_ref.get() {
            follow_stage(strip);
        }
    });
    // The reveal draws no more of the original than of the fork: nothing after the cursor.
    let clip = reveal_clip(Some(REVEALED));
    view! {
        <section class="fork" data-testid="fork" aria-label="Original and fork">
            <p class="fork-tag">
                // Presenter mode hides the tools row and its Close fork: the fork's own.
                <button
                    type="button"
                    class="fork-close"
                    on:click=move |_| lab.update(|l| l.update(Msg::ToggleFork))
                >
                    "Close fork"
                </button>
                <span data-testid="fork-current">
                    <b>"Fork: "</b>
                    {move || found.with(|d| d.caption())}
                </span>
                " "
                <span class="was" data-testid="fork-original">
                    <b>"Original: "</b>
                    {move || original.with(|t| run_words(t))}
                </span>
            </p>
            <figure node_ref=strip_ref class="fork-strip">
                <svg
                    class="timeline strip"
                    class:large=move || ty.get() == chart::Type::Large
                    class:reveal=move || clip().is_some()
                    role="img"
                    aria-label="Original timeline"
                    // The stage's drawing's scale and place: its box is the track above this
                    // row (the stage's svg is sized so in ui/timeline.rs, its 1 px border
                    // included; the strip's row and gaps take var(--strip-take), fork.css).
                    style:width=move || {
                        stage
                            .with(|g| {
                                let r = g.aspect_ratio();
                                format!(
                                    "calc((min(100cqh - var(--strip-take), 100cqw / ({r})) - 2px) * ({r}) + 2px)",
                                )
                            })
                    }
                    preserveAspectRatio="xMidYMid slice"
                    viewBox=move || drawn.with(|m| m.view_box.clone())
                >
                    <defs>
                        <clipPath id="revealed-original">
                            <rect
                                x="0"
                                y="0"
                                width=move || drawn.with(|m| chart::n(m.cursor.x))
                                height=h.clone()
                            ></rect>
                        </clipPath>
                    </defs>
                    <rect
                        class="lane lane0"
                        x="0"
                        y="0"
                        width=chart::n(chart::VIEW_W)
                        height=h
                    ></rect>
                    <text class="lane-name" x="8" y=chart::n(diff::STRIP_H / 2.0)>
                        "original"
                    </text>
                    <Drawing model=drawn live=false grab=None clip=REVEALED />
                </svg>
            </figure>
        </section>
    }
}

/// On a phone the stage's box scrolls sideways (under a finger, or to keep the cursor in view)
/// and the strip's box follows it, so the same time stays at the same x on both.
fn follow_stage(strip: web_sys::HtmlElement) {
    use wasm_bindgen::{closure::Closure, JsCast};
    let Some(stage) = document()
        .query_selector("main.app > figure.timeline-wrap")
        .ok()
        .flatten()
    else {
        return;
    };
    strip.set_scroll_left(stage.scroll_left());
    // The signature of leptos's own event handlers, whose glue the page already has.
    let follow = Closure::<dyn FnMut(web_sys::Event)>::new({
        let stage = stage.clone();
        move |_| strip.set_scroll_left(stage.scroll_left())
    });
    let _ = stage.add_event_listener_with_callback("scroll", follow.as_ref().unchecked_ref());
    let held = StoredValue::new_local(Some((stage, follow)));
    on_cleanup(move || {
        if let Some((stage, follow)) = held.try_update_value(Option::take).flatten() {
            let _ = stage
                .remove_event_listener_with_callback("scroll", follow.as_ref().unchecked_ref());
        }
    });
}
