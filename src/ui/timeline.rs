//! The timeline: one lane per client, then the lease and the storage. Everything drawn
//! is read off the trace; the pause blocks turn drags into `SetPause` messages.

use std::sync::Arc;

use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::markup::markup;
use super::Send;
use crate::core::{Pause, Trace};
use crate::lab::{moved, resized, Msg};
use crate::timeline::{render_grid, render_pauses, render_story, Geometry, VIEW_W};

#[derive(Clone, Copy)]
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
    /// The drawing's on-screen left edge and width at pointerdown (CSS px): it does not
    /// move during a drag, so a move needs no layout query. When the timeline is given less
    /// height than its width asks for, the drawing is scaled down and centred in the box
    /// (`preserveAspectRatio` meet), so these are the drawing's, not the element's.
    left: f64,
    width: f64,
    pause0: Pause,
}

impl Drag {
    /// Client x (CSS px) → SVG user units.
    fn units(&self, client_x: i32) -> f64 {
        (client_x as f64 - self.left) * VIEW_W as f64 / self.width.max(1.0)
    }
}

#[component]
pub fn Timeline(trace: Memo<Arc<Trace>>, step: Memo<usize>, send: Send) -> impl IntoView {
    let svg_ref = NodeRef::<leptos::svg::Svg>::new();
    let drag = StoredValue::new(None::<Drag>);
    let geometry = Memo::new(move |_| trace.with(|t| Geometry::of(t)));
    // Lanes and axis depend on the actors and the horizon only: a drag never redraws them.
    let lanes = Memo::new(move |_| {
        trace.with(|t| {
            let names: Vec<String> = t.scenario.actors.iter().map(|a| a.name.clone()).collect();
            (names, t.scenario.horizon)
        })
    });
    let grid = Memo::new(move |_| {
        lanes.track();
        trace.with_untracked(|t| render_grid(t))
    });
    // A memo, so a pointer move that changes nothing writes nothing to the DOM.
    let drawing = Memo::new(move |_| trace.with(|t| render_story(t, step.get(), false)));

    // One handler for every pause block: the pressed block says which actor and grip.
    let start_drag = move |e: ev::PointerEvent| {
        let Some(el) = e
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|el| el.closest("[data-grip]").ok().flatten())
        else {
            return;
        };
        let Some(actor) = el
            .get_attribute("data-actor")
            .and_then(|a| a.parse::<usize>().ok())
        else {
            return;
        };
        let grip = match el.get_attribute("data-grip").as_deref() {
            Some("resize") => Grip::Resize,
            _ => Grip::Move,
        };
        e.prevent_default();
        let _ = el.set_pointer_capture(e.pointer_id());
        let pause0 = trace.with_untracked(|t| {
            t.scenario
                .actors
                .get(actor)
                .and_then(|a| a.pauses.first().copied())
        });
        let rect = svg_ref
            .get_untracked()
            .map(|svg| svg.get_bounding_client_rect());
        if let (Some(pause0), Some(rect)) = (pause0, rect) {
            let view_h = geometry.get_untracked().height();
            let scale = (rect.width() / VIEW_W as f64).min(rect.height() / view_h.max(1.0));
            let drawn = VIEW_W as f64 * scale;
            let mut d = Drag {
                actor,
                grip,
                x0: 0.0,
                left: rect.left() + (rect.width() - drawn) / 2.0,
                width: drawn,
                pause0,
            };
            d.x0 = d.units(e.client_x());
            drag.set_value(Some(d));
        }
    };
    let move_drag = move |e: ev::PointerEvent| {
        let Some(d) = drag.get_value() else { return };
        let (horizon, current) = trace.with_untracked(|t| {
            (
                t.scenario.horizon,
                t.scenario.actors[d.actor].pauses.first().copied(),
            )
        });
        let delta = geometry
            .get_untracked()
            .scale
            .ms(d.units(e.client_x()) - d.x0);
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

    // The pause blocks are markup too; edits keep their nodes, and so a drag's capture.
    let pauses = Memo::new(move |_| trace.with(|t| render_pauses(t)));

    view! {
        <figure class="timeline-wrap">
            <svg
                node_ref=svg_ref
                class="timeline main"
                role="group"
                aria-label="Timeline"
                viewBox=move || geometry.get().view_box()
                on:pointerdown=start_drag
                on:pointermove=move_drag
                on:pointerup=end_drag
                on:pointercancel=end_drag
            >
                <g class="grid" use:markup=grid></g>
                <g class="drawing" use:markup=drawing></g>
                <g class="pause-blocks" use:markup=pauses></g>
            </svg>
        </figure>
    }
}
