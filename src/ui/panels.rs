//! The panels around the timeline, each rendering one typed model of [`crate::view::panels`]:
//! the story line, the storage side, the off/on comparison, the parameter fields,
//! the speaker notes and the renewal herd.

use std::sync::Arc;

use leptos::prelude::*;
use wasm_bindgen::prelude::wasm_bindgen;

use super::split::{lazily, Failed};
use super::Dispatch;
use crate::core::{deck, Scenario, Trace};
use crate::lab::{Herd, Lab, Msg, Param};
use crate::view::panels::{self as model, Field, FieldGroup, LogRow, ParamsModel, StorageModel};
use crate::view::timeline as chart;

/// The question being answered, the current narration and what to say out loud.
#[component]
pub fn Story(trace: Memo<Arc<Trace>>, step: Memo<usize>) -> impl IntoView {
    let m = Memo::new(move |_| trace.with(|t| model::story(t, step.get())));
    // The question changes with the deck entry, not with each step or drag: its own memo,
    // so its paragraph is not rebuilt when only the narration changes.
    let question = Memo::new(move |_| m.with(|m| m.question));
    view! {
        <section class="story" aria-live="polite">
            {move || {
                question
                    .get()
                    .map(|q| {
                        view! {
                            <p class="question" data-testid="question">
                                {q}
                            </p>
                        }
                    })
            }}
            <div class="lines">
                <p class="narration" data-testid="narration">
                    {move || m.with(|m| m.narration.clone())}
                </p>
                <p class="say">
                    <span class="say-k">"Say: "</span>
                    <span data-testid="talking-point">{move || m.with(|m| m.say.clone())}</span>
                </p>
            </div>
        </section>
    }
}

#[wasm_bindgen(inline_js = r#"
export function fit_story(selector) {
  const lines = document.querySelector(selector);
  if (!lines) return;
  const fit = () => {
    let p = 100;
    lines.style.removeProperty('--fit');
    while (lines.scrollHeight > lines.clientHeight + 1 && p > 60) lines.style.setProperty('--fit', p -= 4);
  };
  new MutationObserver(fit).observe(lines, { subtree: true, childList: true, characterData: true });
  new ResizeObserver(fit).observe(lines);
}
"#)]
extern "C" {
    /// Fits the story's words to the lines reserved for them (`.story .lines`, a box of fixed
    /// height): its type steps down (`--fit`, in percent; the CSS keeps each size at or above
    /// its floor, 18 px presenting) until nothing overflows, whenever the words change (a
    /// step) or the box does (presenter mode, the window's size). The observers' callbacks
    /// run before the page is painted, so a step never shows its words cut; and the box keeps
    /// its size, so nothing else moves. Called once, when the page is drawn.
    pub(super) fn fit_story(selector: &str);
}

/// Reads one text of the storage model.
fn text(m: Memo<StorageModel>, f: fn(&StorageModel) -> String) -> impl Fn() -> String + Copy {
    move || m.with(f)
}

/// Balance, fence, who holds and who believes, and the write log so far.
#[component]
pub fn Storage(trace: Memo<Arc<Trace>>, step: Memo<usize>) -> impl IntoView {
    let m = Memo::new(move |_| trace.with(|t| model::storage(t, step.get())));
    let rows = move || m.with(|m| (0..m.rows.len()).collect::<Vec<_>>());
    view! {
        <section class="ledger-panel" aria-label="Storage">
            <div class="metrics">
                <div class="metric">
                    <span class="k">{text(m, |m| m.figure.to_owned())}</span>
                    <span
                        class=move || if m.with(|m| m.words) { "v words" } else { "v" }
                        data-testid="balance"
                    >
                        {text(m, |m| m.value.clone())}
                    </span>
                </div>
                <div class="metric">
                    <span class="k">"Last fence"</span>
                    <span
                        class="v"
                        class:long=move || m.with(|m| model::long_figure(&m.fence))
                        data-testid="last-fence"
                    >
                        {text(m, |m| m.fence.clone())}
                    </span>
                    <span class="cap">{text(m, |m| m.fence_caption.to_owned())}</span>
                </div>
                <div class="metric small">
                    <span class="k">{text(m, |m| m.holder_source.to_owned())}</span>
                    <span
                        data-testid="holder"
                        class:below=move || m.with(|m| model::below_label(&m.holder))
                    >
                        {text(m, |m| m.holder.clone())}
                    </span>
                    <span class="k">"Believe they hold it"</span>
                    <span
                        data-testid="believers"
                        class:warn=move || m.with(|m| m.two_believe)
                        class:below=move || m.with(|m| model::below_label(&m.believers))
                    >
                        {text(m, |m| m.believers.clone())}
                    </span>
                </div>
            </div>
            <div class="log-scroll">
                <table class="log" data-testid="ledger">
                    <caption>"Write log (append-only; every attempt)"</caption>
                    <thead>
                        <tr>
                            <th class="time">"time"</th>
                            <th>"writer"</th>
                            <th class="num">"token"</th>
                            <th class="num">{text(m, |m| m.change.to_owned())}</th>
                            <th>"result"</th>
                            <th class="num">{text(m, |m| m.after.to_owned())}</th>
                        </tr>
                    </thead>
                    <tbody>
                        <For each=rows key=|k| *k children=move |k| view! { <LogLine m k /> } />
                    </tbody>
                </table>
            </div>
        </section>
    }
}

/// One write attempt of the log; rows only ever append as the steps go on.
#[component]
fn LogLine(m: Memo<StorageModel>, k: usize) -> impl IntoView {
    let r = Memo::new(move |_| m.with(|m| m.rows.get(k).cloned()));
    let cell =
        move |f: fn(&LogRow) -> String| move || r.with(|r| r.as_ref().map(f).unwrap_or_default());
    view! {
        <tr
            data-testid="ledger-row"
            class=move || {
                r.with(|r| match r {
                    Some(r) if r.lost => "accepted lost",
                    Some(r) if r.accepted => "accepted",
                    _ => "rejected",
                })
            }
        >
            <td class="time">{cell(|r| r.time.clone())}</td>
            <td>{cell(|r| r.writer.clone())}</td>
            <td class="num">{cell(|r| r.token.clone())}</td>
            <td class="num">{cell(|r| r.change.clone())}</td>
            <td class="verdict">{cell(|r| r.verdict.to_owned())}</td>
            <td class="num">{cell(|r| r.after.clone())}</td>
        </tr>
    }
}

/// What an outcome card says before the step that decides it, while the reveal is on.
const PENDING: (&str, &str) = ("?", "Revealed at the step that decides it.");

/// "fencing off → 80" beside "fencing on → 90", from the lab's two real runs.
#[component]
pub fn Compare(lab: RwSignal<Lab>) -> impl IntoView {
    let m = Memo::new(move |_| {
        lab.with(|l| {
            let (off, on) = l.compare();
            model::compare(off, on)
        })
    });
    // The reveal keeps the figures back, in place, until the step that decides them.
    let pending = Memo::new(move |_| {
        lab.with(|l| l.revealing() && l.step() < model::deciding_step(l.trace()))
    });
    let v = move || if m.with(|m| m.words) { "v words" } else { "v" };
    // A card's text and what it says while the reveal keeps it back, one over the other in
    // the same place: the card takes the size of the larger at every step, so neither card
    // moves when the figures show (only the one in view is visible, or read out).
    let held = move |f: fn(&model::CompareModel) -> String, waiting: &'static str| {
        view! {
            <span class="said" aria-hidden=move || pending.get().to_string()>
                {move || m.with(f)}
            </span>
            <span class="wait" aria-hidden=move || (!pending.get()).to_string()>
                {waiting}
            </span>
        }
    };
    // The cards' words fit their band like the story's (ui::panels::fit_story): a long
    // outcome steps the type down instead of running past the window's bottom.
    Effect::new(|_| fit_story(".app .compare"));
    // Each title keeps its arrow (a no-break space before it): a long policy wraps the
    // title, never the arrow alone onto a line.
    view! {
        <section
            class="compare"
            class:pending=move || pending.get()
            aria-label="Outcome with and without a fence check"
        >
            <div class="side off" data-testid="summary-off">
                <span class="k">"fencing off\u{a0}→"</span>
                <span class=v>{held(|m| m.off.value.clone(), PENDING.0)}</span>
                <span class="cap">{held(|m| m.off.outcome.clone(), PENDING.1)}</span>
            </div>
            <div class="side on" data-testid="summary-on">
                <span class="k">
                    {move || m.with(|m| format!("fencing on ({})\u{a0}→", m.on_policy))}
                </span>
                <span class=v>{held(|m| m.on.value.clone(), PENDING.0)}</span>
                <span class="cap">{held(|m| m.on.outcome.clone(), PENDING.1)}</span>
            </div>
        </section>
    }
}

/// Precise, keyboard-friendly editing of TTL, delays and pauses (the drag does the same).
#[component]
pub fn Params(scenario: Memo<Scenario>) -> impl IntoView {
    // The deck's own version of the scenario, to decide who gets a delay field: built once per pick.
    let id = Memo::new(move |_| scenario.with(|sc| sc.id.clone()));
    let base = Memo::new(move |_| id.with(|id| deck::find(id).map(|e| (e.build)())));
    let m = Memo::new(move |_| scenario.with(|sc| base.with(|b| model::params(sc, b.as_ref()))));
    view! {
        <section class="pauses" aria-label="Parameters">
            <For
                each=move || m.with(|m| m.groups.iter().map(FieldGroup::key).collect::<Vec<_>>())
                key=|k| *k
                children=move |key| view! { <Group m key scenario /> }
            />
        </section>
    }
}

#[component]
fn Group(
    m: Memo<ParamsModel>,
    key: (Param, Option<usize>),
    scenario: Memo<Scenario>,
) -> impl IntoView {
    let dispatch = expect_context::<Dispatch>();
    let g = Memo::new(move |_| m.with(|m| m.groups.iter().find(|g| g.key() == key).cloned()));
    let input = move |pick: fn(&FieldGroup) -> Option<&Field>| {
        let f = move || g.with(|g| g.as_ref().and_then(pick).cloned());
        let first = f();
        let (param, actor) = first
            .as_ref()
            .map_or((key.0, key.1), |f| (f.param, f.actor));
        view! {
            <input
                type="number"
                min=first.as_ref().map(|f| f.min.to_string())
                aria-label=first.as_ref().map(|f| f.label.clone())
                data-param=param.code()
                data-actor=actor.map(|a| a.to_string())
                prop:value=move || f().map(|f| f.value.to_string()).unwrap_or_default()
                on:change:target=move |e| {
                    dispatch
                        .msg(Msg::Field {
                            param,
                            actor,
                            text: e.target().value(),
                        });
                    if let Some(v) = scenario.with_untracked(|sc| param.value(sc, actor)) {
                        e.target().set_value(&v.to_string());
                    }
                }
            />
        }
    };
    let name = g.with_untracked(|g| match g {
        Some(FieldGroup::Delay { name, .. } | FieldGroup::Pause { name, .. }) => name.clone(),
        _ => String::new(),
    });
    match key.0 {
        Param::Ttl => view! {
            <span class="pause-edit">
                // "Lease TTL", or a row lock's "Idle timeout": the field's own label.
                {move || {
                    g.with(|g| match g {
                        Some(FieldGroup::Ttl(f)) => f.label.trim_end_matches(" (ms)").to_owned(),
                        _ => "Lease TTL".to_owned(),
                    })
                }} " "
                {input(|g| match g {
                    FieldGroup::Ttl(f) => Some(f),
                    _ => None,
                })} " ms"
            </span>
        }
        .into_any(),
        Param::Delay => view! {
            <span class="pause-edit">
                <b>{name}</b>
                "'s packets take "
                {input(|g| match g {
                    FieldGroup::Delay { field, .. } => Some(field),
                    _ => None,
                })}
                " ms"
            </span>
        }
        .into_any(),
        _ => view! {
            <span class="pause-edit">
                <b>{name}</b>
                " pauses at "
                {input(|g| match g {
                    FieldGroup::Pause { start, .. } => Some(start),
                    _ => None,
                })}
                " ms for "
                {input(|g| match g {
                    FieldGroup::Pause { length, .. } => Some(length),
                    _ => None,
                })}
                " ms"
            </span>
        }
        .into_any(),
    }
}

/// Speaker notes for the current deck entry, shown on demand (`n`); their view code (and
/// the notes' markup) is a chunk of its own, fetched the first time.
#[component]
pub fn Notes(lab: RwSignal<Lab>) -> impl IntoView {
    let shown = Memo::new(move |_| lab.with(|l| l.notes().is_some()));
    move || {
        shown
            .get()
            .then(|| lazily(draw_notes(), move |draw| draw(lab)))
    }
}

type DrawNotes = fn(RwSignal<Lab>) -> AnyView;

#[leptos::wasm_split::wasm_split(notes, fallible, wasm_split_path = ::leptos::wasm_split)]
fn draw_notes() -> Result<DrawNotes, Failed> {
    Ok(|lab| view! { <NotesPanel lab /> }.into_any())
}

#[component]
fn NotesPanel(lab: RwSignal<Lab>) -> impl IntoView {
    let notes = Memo::new_with_compare(
        move |_| lab.with(|l| l.notes().cloned()),
        |old, new| match (old, new) {
            (Some(Some(a)), Some(Some(b))) => !Arc::ptr_eq(a, b),
            (Some(None), Some(None)) => false,
            _ => true,
        },
    );
    move || {
        notes.get().map(|items| {
            // The notes change with the entry, so the entry's push-backs are read with them.
            let pushbacks = lab.with_untracked(|l| {
                crate::core::deck::find(&l.scenario().id).map_or(&[][..], |e| e.pushbacks)
            });
            view! {
                <aside
                    class="notes"
                    data-testid="notes"
                    aria-label="Speaker notes"
                    inner_html=crate::view::panels::notes_panel_markup(&items, pushbacks)
                ></aside>
            }
        })
    }
}

/// For the renewal scenario: the lab's two herd runs as bar charts, folded by default so
/// the page still fits a projector; one click opens the chart. Hundreds of bars that
/// change only with the TTL: the chart is markup from a pure renderer.
#[component]
pub fn HerdPanel(herd: Memo<Option<Arc<Herd>>>) -> impl IntoView {
    let shown = Memo::new(move |_| herd.with(Option::is_some));
    move || {
        shown
            .get()
            .then(|| lazily(draw_herd(), move |draw| draw(herd)))
    }
}

type DrawHerd = fn(Memo<Option<Arc<Herd>>>) -> AnyView;

/// The herd chart's view code, a chunk of its own: only the renewal entries show it.
#[leptos::wasm_split::wasm_split(herd_chart, fallible, wasm_split_path = ::leptos::wasm_split)]
fn draw_herd() -> Result<DrawHerd, Failed> {
    Ok(|herd| view! { <HerdChart herd /> }.into_any())
}

#[component]
fn HerdChart(herd: Memo<Option<Arc<Herd>>>) -> impl IntoView {
    move || {
        herd.get().map(|h| {
            let bars = chart::herd_markup(&chart::herd(&h.fixed, &h.jittered));
            view! {
                <details class="herd" data-testid="herd" aria-label="Thundering herd">
                    <summary class="fork-line">
                        <b>"Thundering herd: "</b>
                        <span data-testid="herd-caption">{h.caption()}</span>
                    </summary>
                    <svg
                        class="herd-chart"
                        viewBox="0 0 1000 150"
                        role="img"
                        aria-label="Renewals per bucket, fixed versus jittered"
                        inner_html=bars
                    ></svg>
                </details>
            }
        })
    }
}
