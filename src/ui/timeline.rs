//! The timeline: one lane per client, then the lease and the storage. Everything drawn
//! is read off the trace; the pause blocks turn drags into `SetPause` messages.

use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::Send;
use crate::core::Pause;
use crate::lab::{moved, resized, Lab, Msg};
use crate::timeline::{n as f, render_grid, render_story, Geometry, VIEW_W};

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
    let geometry = Memo::new(move |_| trace.with(Geometry::of));
    let grid = Memo::new(move |_| trace.with(render_grid));
    // A memo, so a pointer move that changes nothing writes nothing to the DOM.
    let drawing = Memo::new(move |_| trace.with(|t| render_story(t, step.get(), false)));

    // Client x (CSS px) → SVG user units, through the element's current on-screen size.
    let to_units = move |client_x: i32| -> f64 {
        svg_ref.get_untracked().map_or(0.0, |svg| {
            let r = svg.get_bounding_client_rect();
            (client_x as f64 - r.left()) * VIEW_W as f64 / r.width().max(1.0)
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
        let delta = geometry
            .get_untracked()
            .scale
            .ms(to_units(e.client_x()) - d.x0);
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
        let g = geometry.get();
        trace.with(|t| {
            let p = t
                .scenario
                .actors
                .get(actor)
                .and_then(|a| a.pauses.first().copied());
            p.map(|p| (g.x(p.start), g.x(p.end()), p))
        })
    };

    view! {
            <figure class="timeline-wrap">
                <svg
                    node_ref=svg_ref
                    class="timeline main"
                    role="group"
                    aria-label="Timeline"
                    viewBox=move || geometry.get().view_box()
                    on:pointermove=move_drag
                    on:pointerup=end_drag
                    on:pointercancel=end_drag
                >
                    <g class="grid" inner_html=move || grid.get()></g>
                    <g class="drawing" inner_html=move || drawing.get()></g>
                    // Rebuilt only when the set of pausable actors changes, never during a drag,
                    // so each block (and its pointer capture) survives every re-render.
                    {move || pausable.get().into_iter().map(|entry| {
                        {
                            let (actor, name) = entry;
                            let y = geometry.get_untracked().lane_mid(actor) - 13.0;
                            let x = move || pause_of(actor).map_or(0.0, |(x, _, _)| x);
                            let w = move || pause_of(actor).map_or(0.0, |(x0, x1, _)| (x1 - x0).max(2.0));
                            let label = move || pause_of(actor).map_or(String::new(), |(_, _, p)| format!("GC pause {}", trace.with_untracked(|t| t.time_label(p.duration))));
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
    }).collect_view()}
                </svg>
            </figure>
        }
}
