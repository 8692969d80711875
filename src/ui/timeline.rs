//! The timeline: one lane per client, then the lease and the storage. Everything drawn
//! is read off the trace; the pause blocks turn drags into `SetPause` messages.

use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::Send;
use crate::core::{EventKind, Lane, LeaseEnd, Pause, Trace};
use crate::lab::{moved, resized, Lab, Msg, Scale};

const VIEW_W: f64 = 1000.0;
const LEFT: f64 = 78.0;
const PLOT_W: f64 = 900.0;
const TOP: f64 = 24.0;
const LANE_H: f64 = 50.0;
const AXIS_H: f64 = 22.0;

fn f(v: f64) -> String {
    format!("{v:.1}")
}

fn lane_count(t: &Trace) -> usize {
    t.scenario.actors.len() + 2
}

fn lane_index(t: &Trace, lane: Lane) -> usize {
    let n = t.scenario.actors.len();
    match lane {
        Lane::Actor(i) => i,
        Lane::Lease => n,
        Lane::Storage => n + 1,
    }
}

fn lane_mid(i: usize) -> f64 {
    TOP + LANE_H * i as f64 + LANE_H / 2.0
}

fn scale(t: &Trace) -> Scale {
    Scale {
        left: LEFT,
        width: PLOT_W,
        horizon: t.scenario.horizon,
    }
}

/// Colour slot per actor (CSS classes `c0`..`c4`).
fn colour(i: usize) -> String {
    format!("c{}", i % 5)
}

#[derive(Clone, Copy, PartialEq)]
enum Grip {
    Move,
    Resize,
}

#[derive(Clone, Copy)]
struct Drag {
    actor: usize,
    grip: Grip,
    /// Pointer position at pointerdown, in SVG user units.
    x0: f64,
    pause0: Pause,
}

#[component]
pub fn Timeline(lab: RwSignal<Lab>, send: Send) -> impl IntoView {
    let trace = Memo::new(move |_| lab.with(|l| l.trace.clone()));
    let step = Memo::new(move |_| lab.with(|l| l.step));
    let svg_ref = NodeRef::<leptos::svg::Svg>::new();
    let drag = StoredValue::new(None::<Drag>);
    let height = move || trace.with(|t| TOP + LANE_H * lane_count(t) as f64 + AXIS_H);

    // Client x (CSS px) → SVG user units, through the element's current on-screen size.
    let to_units = move |client_x: i32| -> f64 {
        svg_ref.get_untracked().map_or(0.0, |svg| {
            let r = svg.get_bounding_client_rect();
            (client_x as f64 - r.left()) * VIEW_W / r.width().max(1.0)
        })
    };

    let start_drag = move |e: ev::PointerEvent, actor: usize, grip: Grip| {
        e.prevent_default();
        e.stop_propagation();
        if let Some(el) = e
            .current_target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        {
            let _ = el.set_pointer_capture(e.pointer_id());
        }
        let pause0 = lab.with_untracked(|l| l.scenario().actors[actor].pauses.first().copied());
        if let Some(pause0) = pause0 {
            drag.set_value(Some(Drag {
                actor,
                grip,
                x0: to_units(e.client_x()),
                pause0,
            }));
        }
    };
    let move_drag = move |e: ev::PointerEvent| {
        let Some(d) = drag.get_value() else { return };
        let (horizon, current) = lab.with_untracked(|l| {
            (
                l.scenario().horizon,
                l.scenario().actors[d.actor].pauses.first().copied(),
            )
        });
        let sc = Scale {
            left: LEFT,
            width: PLOT_W,
            horizon,
        };
        let delta = sc.ms(to_units(e.client_x()) - d.x0);
        let pause = match d.grip {
            Grip::Move => moved(d.pause0, delta, horizon),
            Grip::Resize => resized(d.pause0, delta, horizon),
        };
        if Some(pause) != current {
            send.msg(Msg::SetPause {
                actor: d.actor,
                pause,
            });
        }
    };
    let end_drag = move |_e: ev::PointerEvent| drag.set_value(None);

    // Draggable pause blocks are keyed by actor so the element (and its pointer capture)
    // survives every re-render during a drag.
    let pausable = Memo::new(move |_| {
        trace.with(|t| {
            t.scenario
                .actors
                .iter()
                .enumerate()
                .filter(|(_, a)| !a.pauses.is_empty())
                .map(|(i, a)| (i, a.name.clone()))
                .collect::<Vec<_>>()
        })
    });
    let pause_of = move |actor: usize| {
        trace.with(|t| {
            let p = t
                .scenario
                .actors
                .get(actor)
                .and_then(|a| a.pauses.first().copied());
            p.map(|p| (scale(t).x(p.start), scale(t).x(p.end()), p))
        })
    };

    view! {
        <figure class="timeline-wrap">
            <svg
                node_ref=svg_ref
                class="timeline"
                role="group"
                aria-label="Timeline"
                viewBox=move || format!("0 0 {VIEW_W} {}", f(height()))
                on:pointermove=move_drag
                on:pointerup=end_drag
                on:pointercancel=end_drag
            >
                {move || trace.with(background)}
                {move || trace.with(|t| events(t, step.get()))}
                <For each=move || pausable.get() key=|(i, _)| *i let:entry>
                    {
                        let (actor, name) = entry;
                        let y = lane_mid(actor) - 13.0;
                        let x = move || pause_of(actor).map_or(0.0, |(x, _, _)| x);
                        let w = move || pause_of(actor).map_or(0.0, |(x0, x1, _)| (x1 - x0).max(2.0));
                        let label = move || pause_of(actor).map_or(String::new(), |(_, _, p)| format!("GC pause {} ms", p.duration));
                        view! {
                            <g class="pause" data-testid=format!("pause-{name}")
                                on:pointerdown=move |e| start_drag(e, actor, Grip::Move)
                                on:pointermove=move_drag
                                on:pointerup=end_drag
                                on:pointercancel=end_drag
                            >
                                <title>{format!("{name}'s pause: drag to move, drag the right edge to resize")}</title>
                                <rect class="pause-body" x=move || f(x()) y=f(y) width=move || f(w()) height="26" rx="4"></rect>
                                <text class="pause-label" x=move || f(x() + 6.0) y=f(y + 17.5)>{label}</text>
                            </g>
                            <rect
                                class="pause-grip"
                                data-testid=format!("pause-{name}-resize")
                                x=move || f(x() + w() - 5.0)
                                y=f(y)
                                width="10"
                                height="26"
                                on:pointerdown=move |e| start_drag(e, actor, Grip::Resize)
                                on:pointermove=move_drag
                                on:pointerup=end_drag
                                on:pointercancel=end_drag
                            >
                                <title>{format!("Resize {name}'s pause")}</title>
                            </rect>
                        }
                    }
                </For>
                {move || cursor(&trace.get(), step.get())}
            </svg>
        </figure>
    }
}

/// Lanes, axis, lease bands, belief bars and conflict windows: everything but the markers.
fn background(t: &Trace) -> impl IntoView + use<> {
    let s = scale(t);
    let n = lane_count(t);
    let bottom = TOP + LANE_H * n as f64;
    let mut names: Vec<(String, String)> = t
        .scenario
        .actors
        .iter()
        .map(|a| (a.name.clone(), "actor".to_owned()))
        .collect();
    names.push(("lease".to_owned(), "infra".to_owned()));
    names.push(("storage".to_owned(), "infra".to_owned()));
    let lanes = names
        .into_iter()
        .enumerate()
        .map(|(i, (name, kind))| {
            let y = TOP + LANE_H * i as f64;
            view! {
                <rect class=format!("lane lane{}", i % 2) x="0" y=f(y) width=f(VIEW_W) height=f(LANE_H)></rect>
                <text class=format!("lane-name {kind}") x="12" y=f(y + LANE_H / 2.0 + 6.0)>{name}</text>
            }
        })
        .collect_view();
    let step_ms = tick_step(t.scenario.horizon);
    let ticks = (0..=t.scenario.horizon / step_ms)
        .map(|k| {
            let ms = k * step_ms;
            let x = s.x(ms);
            view! {
                <line class="tick" x1=f(x) x2=f(x) y1=f(TOP) y2=f(bottom + 4.0)></line>
                <text class="tick-label" x=f(x) y=f(bottom + 20.0)>{ms.to_string()}</text>
            }
        })
        .collect_view();
    let conflicts = t
        .conflict_spans()
        .into_iter()
        .map(|(from, to)| {
            let (x0, x1) = (s.x(from), s.x(to));
            let h = LANE_H * t.scenario.actors.len() as f64;
            view! {
                <rect class="conflict" x=f(x0) y=f(TOP) width=f((x1 - x0).max(1.0)) height=f(h)></rect>
                <text class="conflict-label" x=f(x0 + 4.0) y=f(TOP - 7.0)>"two clients believe they hold the lock"</text>
            }
        })
        .collect_view();
    let lease_y = lane_mid(lane_index(t, Lane::Lease));
    let leases = t
        .lease_spans()
        .into_iter()
        .map(|span| {
            let (x0, x1) = (s.x(span.from), s.x(span.to));
            let who = t.scenario.actor_index(&span.owner).unwrap_or(0);
            let end = match span.end {
                LeaseEnd::Expired => "expired",
                LeaseEnd::Released => "released",
                LeaseEnd::Open => "open",
            };
            view! {
                <rect class=format!("lease-band {} {end}", colour(who)) x=f(x0) y=f(lease_y - 11.0) width=f((x1 - x0).max(1.0)) height="22" rx="3"></rect>
                <text class="band-label" x=f(x0 + 8.0) y=f(lease_y + 5.0)>{format!("{} · token {}", span.owner, span.fence)}</text>
            }
        })
        .collect_view();
    let beliefs = (0..t.scenario.actors.len())
        .map(|i| {
            let y = lane_mid(i) + 16.0;
            t.belief_spans(i)
                .into_iter()
                .map(|(from, to)| {
                    let (x0, x1) = (s.x(from), s.x(to));
                    view! {
                        <rect class=format!("belief {}", colour(i)) x=f(x0) y=f(y) width=f((x1 - x0).max(1.0)) height="5" rx="2"></rect>
                    }
                })
                .collect_view()
        })
        .collect_view();
    view! {
        <g class="bg">
            {lanes}
            {ticks}
            <text class="axis-label" x=f(LEFT + PLOT_W) y=f(bottom + 20.0) text-anchor="end"></text>
            {leases}
            {beliefs}
            {conflicts}
        </g>
    }
}

fn tick_step(horizon: u64) -> u64 {
    let raw = (horizon / 10).max(1);
    [
        1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 60_000,
    ]
    .into_iter()
    .find(|s| *s >= raw)
    .unwrap_or(raw)
}

/// One marker per event; events after the current step are dimmed, the current one ringed.
fn events(t: &Trace, step: usize) -> impl IntoView + use<> {
    let s = scale(t);
    let storage_y = lane_mid(lane_index(t, Lane::Storage));
    t.events
        .iter()
        .enumerate()
        .filter(|(_, e)| !matches!(e.kind, EventKind::PauseStarted { .. } | EventKind::PauseEnded))
        .map(|(i, e)| {
            let state = if i + 1 == step {
                "current"
            } else if i + 1 > step {
                "future"
            } else {
                "past"
            };
            let x = s.x(e.at);
            let expiry = matches!(e.kind, EventKind::LeaseExpired { .. });
            // Expiries sit on the band's top edge so the next band's label stays readable.
            let y = lane_mid(lane_index(t, e.lane)) - if expiry { 11.0 } else { 0.0 };
            let who = e.actor.as_deref().and_then(|a| t.scenario.actor_index(a)).unwrap_or(0);
            let (shape, verdict) = match &e.kind {
                EventKind::WriteApplied { result: Ok(_), overtaken: true, .. } => ("write", "overtaken"),
                EventKind::WriteApplied { result: Ok(_), .. } => ("write", "ok"),
                EventKind::WriteApplied { result: Err(_), .. } => ("write", "rejected"),
                EventKind::AcquireRefused { .. } | EventKind::ReleaseNoop | EventKind::ExtendFailed => ("op", "refused"),
                EventKind::LeaseExpired { .. } => ("expiry", "ok"),
                _ => ("op", "ok"),
            };
            let link = match &e.kind {
                EventKind::WriteApplied { sent_at, .. } => {
                    let from_y = lane_mid(who);
                    Some(view! {
                        <line class=format!("link {verdict}") x1=f(s.x(*sent_at)) y1=f(from_y) x2=f(x) y2=f(storage_y - 10.0)></line>
                    })
                }
                _ => None,
            };
            let glyph = match verdict {
                "rejected" => "✗",
                "overtaken" => "!",
                _ if shape == "write" => "✓",
                _ => "",
            };
            let label_y = if shape == "write" { y + 27.0 } else { y - 12.0 };
            let (ring, dot) = if expiry { ("9", "5") } else { ("13", "8") };
            view! {
                <g class=format!("ev {state} {shape} {verdict} {}", colour(who)) data-step=(i + 1).to_string() data-result=e.result_code()>
                    <title>{e.narration.clone()}</title>
                    {link}
                    <circle class="ring" cx=f(x) cy=f(y) r=ring></circle>
                    <circle class="dot" cx=f(x) cy=f(y) r=dot></circle>
                    <text class="glyph" x=f(x) y=f(y + 4.5)>{glyph}</text>
                    <text class="ev-label" x=f(x) y=f(label_y)>{e.label()}</text>
                </g>
            }
        })
        .collect_view()
}

/// The "now" line at the current step's time.
fn cursor(t: &Trace, step: usize) -> impl IntoView + use<> {
    let x = scale(t).x(t.snapshot_at(step).at);
    let bottom = TOP + LANE_H * lane_count(t) as f64;
    view! {
        <g class="cursor">
            <line x1=f(x) x2=f(x) y1=f(TOP - 4.0) y2=f(bottom)></line>
        </g>
    }
}
