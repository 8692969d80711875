//! The what-ifs an interviewer asks for, folded behind one summary so the page still fits:
//! clients, pauses and packet delays, where tokens come from, what storage checks, how
//! clients release, whether the handoff barrier runs, how far away the lock service is, and
//! the run's faults, any kind on any entry, each field of each (its kind's row of
//! [`SHAPES`]). Each is a [`ScenarioEdit`], shown only where [`ScenarioEdit::applies_to`]
//! says it changes something; the lab reruns the core.

use leptos::prelude::*;

use super::split::{lazily, Failed};
use super::Dispatch;
use crate::core::fault::{ValueKind, SHAPES};
use crate::core::{Millis, ReleaseMode, Scenario, StorageCheck, TokenSource};
use crate::lab::{
    fault_applies, fault_fields, fault_label, FaultField, Msg, Param, ScenarioEdit, NEW_DELAY_MS,
};
use crate::view::options;

/// The summary, and the what-ifs once it is opened: their view code is a chunk of its own
/// ([`lazily`]), fetched the first time.
#[component]
pub(super) fn WhatIf(scenario: Memo<Scenario>) -> impl IntoView {
    let open = RwSignal::new(false);
    view! {
        <details
            class="whatif"
            data-testid="whatif"
            on:toggle:target=move |e| open.set(e.target().has_attribute("open"))
        >
            <summary>"What if…"</summary>
            {move || { open.get().then(|| lazily(draw_what_ifs(), move |draw| draw(scenario))) }}
        </details>
    }
}

/// Draws the what-ifs.
type DrawWhatIfs = fn(Memo<Scenario>) -> AnyView;

/// The what-ifs' view, split off the page's wasm.
#[leptos::wasm_split::wasm_split(what_ifs, fallible, wasm_split_path = ::leptos::wasm_split)]
fn draw_what_ifs() -> Result<DrawWhatIfs, Failed> {
    static STYLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    super::split::adopt_style(&STYLED, include_str!("../../assets/whatif.css"));
    Ok(|scenario| view! { <WhatIfBody scenario /> }.into_any())
}

#[component]
fn WhatIfBody(scenario: Memo<Scenario>) -> impl IntoView {
    let dispatch = expect_context::<Dispatch>();
    // Whether the edit `probe` makes of the scenario on screen applies to it.
    let offered = move |probe: fn(&Scenario) -> ScenarioEdit| {
        Memo::new(move |_| scenario.with(|sc| probe(sc).applies_to(sc)))
    };
    let tokens_shown = offered(|sc| ScenarioEdit::Tokens(sc.lock.token_source()));
    let check_shown = offered(|sc| ScenarioEdit::Check(sc.check));
    let release_shown = offered(|sc| ScenarioEdit::Release(sc.release));
    let barrier_shown = offered(|sc| ScenarioEdit::Barrier(!sc.skip_barrier));
    let rtt_shown = offered(|sc| ScenarioEdit::LockRtt(sc.lock_rtt));
    let fewer = offered(|sc| ScenarioEdit::Clients(sc.actors.len().saturating_sub(1)));
    let more = offered(|sc| ScenarioEdit::Clients(sc.actors.len() + 1));
    let tokens = Memo::new(move |_| scenario.with(|sc| sc.lock.token_source()));
    let check = Memo::new(move |_| scenario.with(|sc| sc.check));
    let release = Memo::new(move |_| scenario.with(|sc| sc.release));
    let barrier_on = Memo::new(move |_| scenario.with(|sc| !sc.skip_barrier));
    let rtt = Memo::new(move |_| scenario.with(|sc| Some(sc.lock_rtt)));
    let count = Memo::new(move |_| scenario.with(|sc| sc.actors.len()));
    let clients = move || view! { <ClientButtons scenario /> };
    let clients_by = move |more: bool| {
        let n = count.get_untracked();
        dispatch.msg(ScenarioEdit::Clients(if more { n + 1 } else { n - 1 }).into());
    };
    view! {
        <span class="whatif-body">
            <button
                class="ghost small"
                aria-label="Remove a client"
                disabled=move || !fewer.get()
                on:click=move |_| clients_by(false)
            >
                "− client"
            </button>
            <button
                class="ghost small"
                aria-label="Add a client"
                disabled=move || !more.get()
                on:click=move |_| clients_by(true)
            >
                "+ client"
            </button>
            {clients}
            {move || {
                tokens_shown
                    .get()
                    .then(|| {
                        view! {
                            <Choice
                                label="Tokens from"
                                title=None
                                options=options(
                                    TokenSource::CHOICES
                                        .map(|t| (t.code().to_owned(), t.option().to_owned(), "")),
                                )
                                value=Signal::derive(move || tokens.get().code())
                                pick=|c| TokenSource::from_code(c).map(ScenarioEdit::Tokens)
                            />
                        }
                    })
            }}
            {move || {
                check_shown
                    .get()
                    .then(|| {
                        view! {
                            <Choice
                                label="Storage checks"
                                title=Some(
                                    "Fencing on: storage checks the token against the highest it has seen, or also asks the lock service whether the write's lease is still the live one (a sequencer check). Fencing off checks nothing.",
                                )
                                options=options(
                                    StorageCheck::ALL
                                        .map(|c| (c.code().to_owned(), c.option().to_owned(), "")),
                                )
                                value=Signal::derive(move || check.get().code())
                                pick=|c| StorageCheck::from_code(c).map(ScenarioEdit::Check)
                            />
                        }
                    })
            }}
            {move || {
                release_shown
                    .get()
                    .then(|| {
                        view! {
                            <Choice
                                label="Release"
                                title=None
                                options=options(
                                    ReleaseMode::ALL
                                        .map(|m| (m.code().to_owned(), m.option().to_owned(), "")),
                                )
                                value=Signal::derive(move || release.get().code())
                                pick=|c| ReleaseMode::from_code(c).map(ScenarioEdit::Release)
                            />
                        }
                    })
            }}
            {move || {
                barrier_shown
                    .get()
                    .then(|| {
                        view! {
                            <label class="inline">
                                <input
                                    type="checkbox"
                                    aria-label="Handoff barrier"
                                    prop:checked=move || barrier_on.get()
                                    on:change:target=move |e| {
                                        dispatch
                                            .msg(ScenarioEdit::Barrier(e.target().checked()).into())
                                    }
                                />
                                " handoff barrier"
                            </label>
                        }
                    })
            }}
            {move || {
                rtt_shown
                    .get()
                    .then(|| {
                        view! {
                            <OptionalMs
                                label="lock service round trip "
                                aria="Lock service round trip (ms)"
                                placeholder="0"
                                title=Some(
                                    "The round trip between the clients and the lock service: 0 in one region, a WAN round trip across regions",
                                )
                                value=rtt
                                param=Param::LockRtt
                            />
                        }
                    })
            }}
            <Faults scenario />
        </span>
    }
}

/// Each client's pause and packet-delay buttons: the keyboard's way to add or remove them
/// (a drag along an empty stretch of a lane, a double-click on a pause, or a drag of a
/// write's arrival at storage does the same).
#[component]
fn ClientButtons(scenario: Memo<Scenario>) -> impl IntoView {
    let dispatch = expect_context::<Dispatch>();
    let clients = Memo::new(move |_| {
        scenario.with(|sc| {
            sc.actors
                .iter()
                .enumerate()
                .map(|(i, a)| (i, a.name.clone(), !a.pauses.is_empty(), a.network_delay > 0))
                .collect::<Vec<_>>()
        })
    });
    let mid = Memo::new(move |_| scenario.with(|sc| sc.horizon / 2));
    let button = move |msg: Msg, label: String, text: String| {
        view! {
            <button
                class="ghost small"
                aria-label=label
                on:click=move |_| dispatch.msg(msg.clone())
            >
                {text}
            </button>
        }
    };
    let pauses = move || {
        clients
            .get()
            .into_iter()
            .map(|(actor, name, paused, _)| {
                if paused {
                    button(
                        Msg::RemovePause { actor },
                        format!("Remove pause {name}"),
                        format!("− pause {name}"),
                    )
                } else {
                    let at = mid.get_untracked();
                    button(
                        Msg::AddPause { actor, at },
                        format!("Add pause {name}"),
                        format!("+ pause {name}"),
                    )
                }
            })
            .collect_view()
    };
    let delays = move || {
        clients
            .get()
            .into_iter()
            .map(|(actor, name, _, delayed)| {
                let (delay, label, text) = if delayed {
                    (
                        0,
                        format!("Remove packet delay {name}"),
                        format!("− delay {name}"),
                    )
                } else {
                    (
                        NEW_DELAY_MS,
                        format!("Add packet delay {name}"),
                        format!("+ delay {name}"),
                    )
                };
                button(ScenarioEdit::Delay { actor, delay }.into(), label, text)
            })
            .collect_view()
    };
    view! {
        {pauses}
        {delays}
    }
}

/// A what-if select of one design choice: the options are markup from a pure renderer, and
/// the picked value goes back through its type's `from_code` (`pick`) as an edit.
#[component]
fn Choice(
    label: &'static str,
    title: Option<&'static str>,
    options: String,
    value: Signal<&'static str>,
    pick: fn(&str) -> Option<ScenarioEdit>,
) -> impl IntoView {
    let dispatch = expect_context::<Dispatch>();
    view! {
        <label class="inline" title=title>
            {label}
            " "
            <select
                aria-label=label
                on:change:target=move |e| {
                    if let Some(edit) = pick(&e.target().value()) {
                        dispatch.msg(edit.into());
                    }
                }
                inner_html=options
                prop:value=move || value.get()
            ></select>
        </label>
    }
}

/// A what-if field for a time that may be unset (ms): the lab reads the text as `param`
/// (empty unsets it; a bad value is refused with its range), and the field shows the value
/// in force.
#[component]
fn OptionalMs(
    label: &'static str,
    aria: &'static str,
    placeholder: &'static str,
    title: Option<&'static str>,
    value: Memo<Option<Millis>>,
    param: Param,
) -> impl IntoView {
    let dispatch = expect_context::<Dispatch>();
    let shown = move || value.get().map(|t| t.to_string()).unwrap_or_default();
    view! {
        <label class="inline">
            {label}
            <input
                type="number"
                min="0"
                placeholder=placeholder
                aria-label=aria
                title=title
                prop:value=shown
                on:change:target=move |e| {
                    dispatch
                        .msg(Msg::Field {
                            param,
                            actor: None,
                            text: e.target().value(),
                        });
                    e.target().set_value(&shown());
                }
            /> " ms"
        </label>
    }
}

/// The run's faults, a row each (its kind's words, its `at` and its own fields, a Remove
/// button), and "Add fault" with the kinds the design can be given. The rows are drawn
/// again only when a fault comes, goes or changes place, so a field keeps its focus as the
/// run follows what is typed in it.
#[component]
fn Faults(scenario: Memo<Scenario>) -> impl IntoView {
    let dispatch = expect_context::<Dispatch>();
    let rows = Memo::new(move |_| {
        scenario.with(|sc| {
            let kinds = sc.faults.iter().map(|f| f.fault.shape().code);
            kinds.enumerate().collect::<Vec<_>>()
        })
    });
    let kinds = Memo::new(move |_| {
        scenario.with(|sc| {
            let offered = SHAPES.iter().filter(|s| fault_applies(sc, s));
            let items = offered.map(|s| (s.code.to_owned(), s.words.to_owned(), ""));
            options(items.collect::<Vec<_>>())
        })
    });
    let picker = NodeRef::<leptos::html::Select>::new();
    let add = move |_| {
        let picked = picker
            .get_untracked()
            .map(|p| p.value())
            .unwrap_or_default();
        let Some(shape) = SHAPES.iter().find(|s| s.code == picked) else {
            return;
        };
        let edit = scenario.with_untracked(|sc| ScenarioEdit::add_fault(sc, shape));
        match edit {
            Ok(edit) => dispatch.msg(edit.into()),
            Err(e) => dispatch.msg(Msg::Refuse(format!("{e}."))),
        }
    };
    view! {
        <fieldset class="faults">
            <legend>"Faults"</legend>
            {move || {
                rows.get()
                    .into_iter()
                    .map(|(index, _)| view! { <FaultRow scenario index /> })
                    .collect_view()
            }}
            <span class="fault-add">
                <select
                    aria-label="Fault to add"
                    node_ref=picker
                    inner_html=move || kinds.get()
                ></select>
                <button class="ghost small" on:click=add>
                    "Add fault"
                </button>
            </span>
        </fieldset>
    }
}

/// One fault's row: its fields (each a number in ms or a select) and its Remove button.
#[component]
fn FaultRow(scenario: Memo<Scenario>, index: usize) -> impl IntoView {
    let dispatch = expect_context::<Dispatch>();
    let fields = Memo::new(move |_| scenario.with(|sc| fault_fields(sc, index)));
    let words = move || {
        let label = |sc: &Scenario| {
            let f = sc.faults.get(index)?;
            Some(fault_label(sc, index, f.fault.shape()))
        };
        scenario.with(label).unwrap_or_default()
    };
    let remove = move |_| dispatch.msg(ScenarioEdit::Fault { index, fault: None }.into());
    let inputs = (0..fields.with_untracked(Vec::len))
        .map(|k| view! { <FaultInput scenario fields index k /> })
        .collect_view();
    view! {
        <div class="fault" role="group" aria-label=words>
            <span class="fault-kind">{words}</span>
            {inputs}
            <button
                class="ghost small"
                aria-label=move || format!("Remove {}", words())
                on:click=remove
            >
                "Remove"
            </button>
        </div>
    }
}

/// Field `k` of a fault's row: what is typed or picked is read as the field's edit (a bad
/// value is refused with its range, and the field shows the value in force again).
#[component]
fn FaultInput(
    scenario: Memo<Scenario>,
    fields: Memo<Vec<FaultField>>,
    index: usize,
    k: usize,
) -> impl IntoView {
    let dispatch = expect_context::<Dispatch>();
    let (name, kind) = fields.with_untracked(|f| (f[k].name, f[k].kind));
    let text = move || fields.with(|f| f.get(k).map(|f| f.text.clone()).unwrap_or_default());
    let label = move || fields.with(|f| f.get(k).map(|f| f.label.clone()).unwrap_or_default());
    let send = move |value: String| {
        let edit = scenario.with_untracked(|sc| ScenarioEdit::fault_field(sc, index, name, &value));
        dispatch.msg(edit.map_or_else(Msg::Refuse, Msg::Edit));
    };
    // The value in force, which a field shows again after a refused edit.
    let now = move || fields.with_untracked(|f| f.get(k).map(|f| f.text.clone()));
    let short = fields.with_untracked(|f| f[k].short);
    if matches!(kind, ValueKind::Node | ValueKind::LockNode) {
        let choices = move || {
            fields.with(|f| {
                let o = f.get(k).map(|f| f.options.clone()).unwrap_or_default();
                options(o.into_iter().map(|(v, w)| (v, w, "")).collect::<Vec<_>>())
            })
        };
        return view! {
            <label class="inline">
                {short}
                <select
                    aria-label=label
                    inner_html=choices
                    prop:value=text
                    on:change:target=move |e| {
                        send(e.target().value());
                        e.target().set_value(&now().unwrap_or_default());
                    }
                ></select>
            </label>
        }
        .into_any();
    }
    let least = fields.with_untracked(|f| f[k].least.to_string());
    let placeholder = (kind == ValueKind::MsOrCut).then_some("cut");
    let title = (kind == ValueKind::MsOrCut)
        .then_some("Empty: the replica (or snapshot) has none of the run's writes");
    view! {
        <label class="inline">
            {short}
            <input
                type="number"
                min=least
                placeholder=placeholder
                title=title
                aria-label=move || format!("{} (ms)", label())
                prop:value=text
                on:change:target=move |e| {
                    send(e.target().value());
                    e.target().set_value(&now().unwrap_or_default());
                }
            /> " ms"
        </label>
    }
    .into_any()
}
