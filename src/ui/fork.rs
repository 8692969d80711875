//! The fork: the original run's timeline under the fork's, at the same size, each under a
//! line that says which run it is; one cursor (the original stands at the fork's moment) and the events that
//! differ marked on both. Its view code is a chunk of its own, fetched the first time.

use std::sync::Arc;

use leptos::prelude::*;

use super::split::{lazily, Failed};
use super::timeline::{reveal_clip, stage_type, Drawing, GridView};
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
    let geometry = Memo::new(move |_| original.with(|t| chart::Geometry::typed(t, ty.get())));
    let grid = Memo::new(move |_| original.with(|t| chart::grid_in(t, ty.get())));
    let drawn = Memo::new(move |_| {
        original.with(|o| {
            trace.with(|t| {
                found.with(|d| diff::original_at(o, t, step.get(), ty.get(), &d.original))
            })
        })
    });
    let ratio = move || geometry.with(|g| g.aspect_ratio());
    // The reveal draws no more of the original than of the fork: nothing after the cursor.
    let clip = reveal_clip(Some(REVEALED));
    view! {
        <section class="fork" data-testid="fork" aria-label="Original and fork">
            <p class="fork-tag now" data-testid="fork-current">
                // Presenter mode hides the tools row and its Close fork: the fork's own.
                <button
                    type="button"
                    class="fork-close"
                    on:click=move |_| lab.update(|l| l.update(Msg::ToggleFork))
                >
                    "Close fork"
                </button>
                <b>"Fork: "</b>
                {move || found.with(|d| d.caption())}
            </p>
            <p class="fork-tag" data-testid="fork-original">
                <b>"Original: "</b>
                {move || original.with(|t| run_words(t))}
            </p>
            <figure class="timeline-wrap fork-original">
                <svg
                    class="timeline original"
                    class:large=move || ty.get() == chart::Type::Large
                    class:reveal=move || clip().is_some()
                    role="img"
                    aria-label="Original timeline"
                    style:width=move || format!("min(100cqw, calc(100cqh * ({})))", ratio())
                    style:height=move || format!("min(100cqh, calc(100cqw / ({})))", ratio())
                    viewBox=move || drawn.with(|m| m.view_box.clone())
                >
                    <defs>
                        <clipPath id="revealed-original">
                            <rect
                                x="0"
                                y="0"
                                width=move || drawn.with(|m| chart::n(m.cursor.x))
                                height=move || geometry.with(|g| chart::n(g.height()))
                            ></rect>
                        </clipPath>
                    </defs>
                    <GridView grid />
                    <Drawing model=drawn live=false grab=None clip=REVEALED />
                </svg>
            </figure>
        </section>
    }
}
