//! The schedule explorer panel: renders the lab's exploration and pumps it a chunk at a
//! time (yielding to the browser between chunks) until it is finished.

use gloo_timers::callback::Timeout;
use leptos::prelude::*;

use super::split::{lazily, Failed};
use super::timers::{now_ms, Rearm};
use super::Dispatch;
use crate::lab::{Lab, Msg};
use crate::view::panels::{self as model, Count, ExplorerModel};

/// Milliseconds of work per chunk before yielding, so a frame is never blocked for long.
const CHUNK_MS: f64 = 12.0;

/// The page's side of a pump: when the exploration started, and how many schedules fit
/// in a chunk (re-estimated from each chunk's measured time).
#[derive(Clone, Copy)]
struct Pace {
    started: f64,
    budget: usize,
}

fn pump(
    lab: RwSignal<Lab>,
    dispatch: Dispatch,
    pace: StoredValue<Pace>,
    timer: StoredValue<Rearm, LocalStorage>,
) {
    let state = lab.with_untracked(|l| l.exploration().map(|x| (x.progress().0, x.finished())));
    let Some((done, false)) = state else {
        return;
    };
    let t0 = now_ms();
    if done == 0 {
        pace.update_value(|p| p.started = t0);
    }
    let Pace { started, budget } = pace.get_value();
    dispatch.msg(Msg::ExploreChunk {
        budget,
        elapsed_ms: t0 - started,
    });
    let t1 = now_ms();
    // Aim each chunk at CHUNK_MS: double while well under it, halve when over.
    let took = t1 - t0;
    let next = if took < CHUNK_MS / 2.0 {
        budget.saturating_mul(2).min(1 << 16)
    } else if took > CHUNK_MS {
        (budget / 2).max(16)
    } else {
        budget
    };
    pace.update_value(|p| p.budget = next);
    if lab.with_untracked(|l| l.exploration().is_some_and(|x| x.finished())) {
        // The last chunk's own time belongs in the figure shown.
        dispatch.msg(Msg::ExploreChunk {
            budget: 0,
            elapsed_ms: t1 - started,
        });
        return;
    }
    timer.update_value(|t| t.rearm(Timeout::new(0, move || pump(lab, dispatch, pace, timer))));
}

/// The explorer while it is open; its view code is a chunk of its own, fetched the first time.
#[component]
pub fn Explorer(lab: RwSignal<Lab>) -> impl IntoView {
    lazily(draw_explorer(), move |draw| draw(lab))
}

type DrawExplorer = fn(RwSignal<Lab>) -> AnyView;

#[leptos::wasm_split::wasm_split(explorer, fallible, wasm_split_path = ::leptos::wasm_split)]
fn draw_explorer() -> Result<DrawExplorer, Failed> {
    static STYLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    super::split::adopt_style(&STYLED, include_str!("../../assets/explorer.css"));
    Ok(|lab| view! { <ExplorerPanel lab /> }.into_any())
}

#[component]
fn ExplorerPanel(lab: RwSignal<Lab>) -> impl IntoView {
    let dispatch = expect_context::<Dispatch>();
    let m = Memo::new(move |_| {
        lab.with(|l| l.exploration().map(model::explorer))
            .unwrap_or_default()
    });
    // A new exploration (a new scenario) starts at 0 done: pump it.
    let fresh = Memo::new(move |_| m.with(|m| m.done == 0 && m.failed.is_none()));
    let pace = StoredValue::new(Pace {
        started: 0.0,
        budget: 64,
    });
    let timer = StoredValue::new_local(Rearm::default());
    Effect::new(move |_| {
        if fresh.get() {
            timer
                .update_value(|t| t.arm(Timeout::new(0, move || pump(lab, dispatch, pace, timer))));
        }
    });
    on_cleanup(move || timer.set_value(Rearm::default()));

    let cell = |id: &'static str, c: Count| {
        view! {
            <td class=if c.bad() { "num bad" } else { "num good" } data-testid=id>
                {c.0}
            </td>
        }
    };
    let rows = move || {
        m.with(|m: &ExplorerModel| {
            m.rows
                .iter()
                .map(|r| {
                    let code = r.policy.code();
                    let order = match r.order {
                        Some(c) => cell("order", c).into_any(),
                        None => view! {
                            <td
                                class="num na"
                                data-testid="order"
                                title="refused by the fencing rule"
                            >
                                "— by rule"
                            </td>
                        }
                        .into_any(),
                    };
                    let examples = r
                        .examples
                        .iter()
                        .enumerate()
                        .map(|(i, ex)| {
                            let (row, index) = (ex.row, ex.index);
                            view! {
                                <button
                                    class="ghost small"
                                    data-testid=format!("load-{code}-{i}")
                                    on:click=move |_| dispatch.msg(Msg::LoadExample { row, index })
                                >
                                    {ex.text.clone()}
                                </button>
                            }
                        })
                        .collect_view();
                    view! {
                        <tr data-testid=format!("explore-{code}")>
                            <td>
                                <b>{r.policy.option()}</b>
                            </td>
                            <td class="num">{r.explored}</td>
                            {cell("late", r.late)}
                            {cell("twice", r.twice)}
                            {order}
                            <td class="num" data-testid="two">
                                {r.two}
                            </td>
                        </tr>
                        // Its counterexamples on a line of their own under it: the table
                        // keeps to the drawer's width.
                        {(!r.examples.is_empty())
                            .then(|| {
                                view! {
                                    <tr class="examples">
                                        <td colspan="6">
                                            <span class="k">"Load a counterexample: "</span>
                                            {examples}
                                        </td>
                                    </tr>
                                }
                            })}
                    }
                })
                .collect_view()
        })
    };
    view! {
        <section class="explorer" data-testid="explorer" aria-label="Schedule explorer">
            <p class="fork-line">
                <b>"Schedule explorer: "</b>
                {move || m.with(|m| m.heading.clone())}
            </p>
            {move || m.with(|m| m.failed.clone()).map(|e| view! { <p class="warn">{e}</p> })}
            <progress
                data-testid="explore-progress"
                max=move || m.with(|m| m.total.to_string())
                value=move || m.with(|m| m.done.to_string())
            ></progress>
            {move || {
                m.with(|m| m.status.clone())
                    .map(|s| {
                        view! {
                            <span class="clock" data-testid="explore-status">
                                {s}
                            </span>
                        }
                    })
            }}
            <table class="log">
                <thead>
                    <tr>
                        <th>"fencing"</th>
                        <th>"explored"</th>
                        <th title=crate::core::story::SUPERSEDED>"late write accepted"</th>
                        <th>"job ran twice"</th>
                        <th>"out of token order"</th>
                        <th>"two believe they hold it"</th>
                    </tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
            <p class="fork-line" data-testid="explore-footnote">
                {move || m.with(|m| m.footnote.clone())}
            </p>
        </section>
    }
}
