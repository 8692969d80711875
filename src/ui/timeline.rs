//! The timeline: one lane per client, then the lease and the storage, rendered from the
//! typed [`TimelineModel`]. Every moving part is a keyed row with its own memo, so a drag
//! updates a few attributes of the rows that changed; the pause blocks turn drags into
//! `SetPause` messages.

use leptos::ev;
use leptos::prelude::*;

use super::{Dispatch, Stage};
use crate::core::{Millis, Pause, Trace};
use crate::lab::{pause_key, Msg, ScenarioEdit};
use crate::view::geometry::{dragged_delay, Grip};
use crate::view::timeline::{
    self as model, n, Band, Bar, Belief, Conflict, Grid, Key, Marker, PauseBlock, TimelineModel,
    Type, VIEW_W,
};
use std::sync::Arc;

mod rows;
use rows::*;
pub(super) use rows::{GrabWrite, GridView};

/// Bands, beliefs, conflicts, (the copy's pauses), markers and the cursor. `clip`: the
/// clipPath (`url(#…)`) that hides what lies after the cursor while the reveal is on; none
/// for an export, which draws the whole run.
#[component]
pub(super) fn Drawing(
    model: Memo<TimelineModel>,
    live: bool,
    grab: GrabWrite,
    #[prop(optional)] clip: Option<&'static str>,
) -> impl IntoView {
    let keys = |f: fn(&TimelineModel) -> Vec<(usize, usize)>| move || model.with(f);
    let cut = Memo::new(move |_| model.with(|m| m.cut.clone()));
    // The reveal clips the shapes, never the words: what has begun keeps its label whole
    // (and what has not is hidden by its `future` class).
    let clip = Signal::derive(reveal_clip(clip));
    view! {
        <g class="drawing">
            {move || {
                cut.get()
                    .map(|c| {
                        view! {
                            <g class="cut">
                                <title>{c.title.clone()}</title>
                                <rect
                                    class="cut-body"
                                    clip-path=clip
                                    x=n(c.body.x)
                                    y=n(c.body.y)
                                    width=n(c.body.w)
                                    height=n(c.body.h)
                                ></rect>
                                {c
                                    .label
                                    .map(|l| {
                                        view! {
                                            <text class=words("cut-label", c.begun) x=n(l.x) y=n(l.y)>
                                                {l.text}
                                            </text>
                                        }
                                    })}
                            </g>
                        }
                    })
            }}
            <For
                each=keys(|m| m.bands.iter().map(|b| b.key).collect())
                key=|k| *k
                children=move |key| view! { <BandRow model key clip /> }
            /> <g class="timed" clip-path=clip>
                <For
                    each=keys(|m| m.beliefs.iter().map(|b| b.key).collect())
                    key=|k| *k
                    children=move |key| view! { <BeliefRow model key /> }
                />
            </g>
            <For
                each=move || {
                    model.with(|m| m.conflicts.iter().map(|c| c.key).collect::<Vec<_>>())
                }
                key=|k| *k
                children=move |key| view! { <ConflictRow model key clip /> }
            />
            {(!live)
                .then(|| {
                    view! {
                        <For
                            each=keys(|m| m.pauses.iter().map(|p| (p.actor, p.nth)).collect())
                            key=|k| *k
                            children=move |key| view! { <PauseRow model key live=None clip /> }
                        />
                    }
                })}
            <For
                each=move || model.with(|m| m.markers.iter().map(|m| m.key).collect::<Vec<_>>())
                key=|k| *k
                children=move |key| view! { <MarkerRow model key grab /> }
            /> <g class="cursor">
                <line
                    x1=move || model.with(|m| n(m.cursor.x))
                    x2=move || model.with(|m| n(m.cursor.x))
                    y1=move || model.with(|m| n(m.cursor.y1))
                    y2=move || model.with(|m| n(m.cursor.y2))
                ></line>
            </g>
        </g>
    }
}

/// A label's classes: `future` for one whose row has not begun (the reveal hides it).
fn words(class: &str, begun: bool) -> String {
    match begun {
        true => class.to_owned(),
        false => format!("{class} future"),
    }
}

/// The live timeline's reveal clip (its clipPath is `#revealed`).
const REVEALED: &str = "url(#revealed)";

/// The timeline's type: large while presenting (and the layout made for it).
pub(super) fn stage_type() -> Memo<Type> {
    let presenting = use_context::<Stage>().map(|s| s.presenting);
    Memo::new(move |_| match presenting.is_some_and(|p| p.get()) {
        true => Type::Large,
        false => Type::Normal,
    })
}

/// The clip (`url(#…)`, a clipPath ending at the cursor) while the reveal is on: on the
/// live timeline and the fork's original, never on an export (`None`).
pub(super) fn reveal_clip(clip: Option<&'static str>) -> impl Fn() -> Option<&'static str> + Copy {
    let reveal = use_context::<Stage>()
        .filter(|_| clip.is_some())
        .map(|s| s.reveal);
    move || clip.filter(|_| reveal.is_some_and(|r| r.get()))
}

/// What a drag holds: a pause by one of its grips, or a client's packet delay (by the
/// arrival of one of its writes, sent at `sent_at`).
#[derive(Clone, Copy)]
enum Held {
    Pause { grip: Grip, pause0: Pause },
    Delay { sent_at: Millis, delay0: Millis },
}

#[derive(Clone, Copy)]
struct Drag {
    actor: usize,
    held: Held,
    /// Pointer position at pointerdown, in SVG user units.
    x0: f64,
    /// The drawing's on-screen left edge and width at pointerdown (CSS px): it does not
    /// move during a drag, so a move needs no layout query. When the timeline is given less
    /// height than its width asks for, the drawing is scaled down and centred in the box
    /// (`preserveAspectRatio` meet), so these are the drawing's, not the element's.
    left: f64,
    width: f64,
}

impl Drag {
    /// Client x (CSS px) → SVG user units.
    fn units(&self, client_x: i32) -> f64 {
        (client_x as f64 - self.left) * VIEW_W / self.width.max(1.0)
    }
}

#[component]
pub fn Timeline(trace: Memo<Arc<Trace>>, step: Memo<usize>) -> impl IntoView {
    let dispatch = expect_context::<Dispatch>();
    let svg_ref = NodeRef::<leptos::svg::Svg>::new();
    let wrap_ref = NodeRef::<leptos::html::Figure>::new();
    let drag = StoredValue::new(None::<Drag>);
    let ty = stage_type();
    // Beside a fork, the events that differ from the original's.
    let marks = use_context::<Stage>().map(|s| s.marks);
    let geometry = Memo::new(move |_| trace.with(|t| model::Geometry::typed(t, ty.get())));
    // Lanes and axis depend on the actors, the horizon and the type only: a drag never
    // redraws them.
    let grid = Memo::new(move |_| trace.with(|t| model::grid_in(t, ty.get())));
    // A memo, so a pointer move that changes nothing writes nothing to the DOM.
    // While the reveal is on, laid out for what has happened so far (ui::reveal_clip hides
    // the rest): the current step's words come first.
    let reveal = use_context::<Stage>().map(|s| s.reveal);
    let drawn = Memo::new(move |_| {
        let lay_out = match reveal.is_some_and(|r| r.get()) {
            true => model::revealed_in,
            false => model::model_in,
        };
        let mut m = trace.with(|t| lay_out(t, step.get(), true, ty.get()));
        if let Some(marks) = marks {
            marks.with(|ks| crate::view::fork::mark(&mut m, ks));
        }
        m
    });

    // Where the drawing sits on screen (CSS px): left, top and scale. When the timeline is
    // given less height than its width asks for, the drawing is scaled down and centred in
    // the box (`preserveAspectRatio` meet), so these are the drawing's, not the element's.
    let placed = move || {
        let rect = svg_ref.get_untracked()?.get_bounding_client_rect();
        let view_h = geometry.get_untracked().height();
        let scale = (rect.width() / VIEW_W).min(rect.height() / view_h.max(1.0));
        Some((
            rect.left() + (rect.width() - VIEW_W * scale) / 2.0,
            rect.top() + (rect.height() - view_h * scale) / 2.0,
            scale,
        ))
    };
    // The element pressed keeps the pointer for the whole drag.
    let start = move |e: &ev::PointerEvent, actor: usize, held: Held| {
        e.prevent_default();
        if let Some(el) = e
            .current_target()
            .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(t).ok())
        {
            let _ = el.set_pointer_capture(e.pointer_id());
        }
        if let Some((left, _, scale)) = placed() {
            let mut d = Drag {
                actor,
                held,
                x0: 0.0,
                left,
                width: VIEW_W * scale,
            };
            d.x0 = d.units(e.client_x());
            drag.set_value(Some(d));
            // The address bar waits for the drag's end.
            super::url::grab();
        }
    };
    // Starts dragging `grip` of `actor`'s pause (`pause0`, or the one it has); the element
    // pressed keeps the pointer.
    let begin = move |e: &ev::PointerEvent, actor: usize, grip: Grip, pause0: Option<Pause>| {
        let pause0 = pause0.or_else(|| {
            trace.with_untracked(|t| {
                t.scenario
                    .actors
                    .get(actor)
                    .and_then(|a| a.pauses.first().copied())
            })
        });
        if let Some(pause0) = pause0 {
            start(e, actor, Held::Pause { grip, pause0 });
        }
    };
    // A write's arrival at storage: drag it right to delay its writer's packets (by as
    // much as it moved), back to take the delay off; a double-click takes it off too.
    let grab_write = Callback::new(move |(press, event): (Press, usize)| {
        let found = trace.with_untracked(|t| {
            let ev = t.events.get(event)?;
            let crate::core::EventKind::WriteApplied { sent_at, .. } = ev.kind else {
                return None;
            };
            let actor = t.scenario.actor_index(ev.actor.as_deref()?)?;
            Some((actor, sent_at, t.scenario.actors[actor].network_delay))
        });
        match (found, press) {
            (Some((actor, _, delay)), Press::Double) if delay > 0 => {
                dispatch.msg(ScenarioEdit::Delay { actor, delay: 0 }.into())
            }
            (Some((actor, sent_at, delay0)), Press::Down(e)) => {
                start(&e, actor, Held::Delay { sent_at, delay0 })
            }
            _ => {}
        }
    });
    let grab = Callback::new(move |(e, actor, grip): (ev::PointerEvent, usize, Grip)| {
        begin(&e, actor, grip, None)
    });
    // A key on a focused pause block; it goes no further (← → would step the story).
    let on_key = Callback::new(move |(e, actor): (ev::KeyboardEvent, usize)| {
        let found = trace.with_untracked(|t| {
            let p = t.scenario.actors.get(actor)?.pauses.first().copied()?;
            pause_key(&e.key(), e.shift_key(), actor, p, t.scenario.horizon)
        });
        if let Some(m) = found {
            e.prevent_default();
            e.stop_propagation();
            dispatch.msg(m);
        }
    });
    // A drag from an empty stretch of a client's lane (one without a pause) draws a pause
    // from where it was pressed to the pointer. A plain click adds nothing, so a stray click
    // while presenting does not change the story.
    let press_lane = move |e: ev::PointerEvent| {
        if drag.get_value().is_some() {
            return; // a pause block took this press
        }
        let Some((left, top, scale)) = placed() else {
            return;
        };
        let g = geometry.get_untracked();
        let x = (e.client_x() as f64 - left) / scale.max(1e-9);
        let y = (e.client_y() as f64 - top) / scale.max(1e-9);
        let lane = (y - model::TOP) / g.lane_h();
        if !(0.0..g.actors as f64).contains(&lane) || x < g.left() {
            return;
        }
        let actor = lane as usize;
        let free = trace.with_untracked(|t| t.scenario.actors[actor].pauses.is_empty());
        let at = g.scale.ms(x - g.left()).max(0) as u64;
        if free && at < g.scale.horizon {
            let drawn_from = Pause {
                start: at,
                duration: 0,
            };
            begin(&e, actor, Grip::Resize, Some(drawn_from));
        }
    };
    let move_drag = move |e: ev::PointerEvent| {
        let Some(d) = drag.get_value() else { return };
        let (horizon, current, delay) = trace.with_untracked(|t| {
            let a = &t.scenario.actors[d.actor];
            (
                t.scenario.horizon,
                a.pauses.first().copied(),
                a.network_delay,
            )
        });
        let delta = geometry
            .get_untracked()
            .scale
            .ms(d.units(e.client_x()) - d.x0);
        let (grip, pause0) = match d.held {
            Held::Pause { grip, pause0 } => (grip, pause0),
            Held::Delay { sent_at, delay0 } => {
                let new = dragged_delay(delay0, delta, sent_at, horizon);
                if new != delay {
                    dispatch.msg(
                        ScenarioEdit::Delay {
                            actor: d.actor,
                            delay: new,
                        }
                        .into(),
                    );
                }
                return;
            }
        };
        let pause = grip.apply(pause0, delta, horizon);
        // A pause being drawn appears once the pointer has moved right of the press.
        let drawing_nothing = current.is_none() && delta < 1;
        if Some(pause) != current && !drawing_nothing {
            dispatch.msg(
                ScenarioEdit::Pause {
                    actor: d.actor,
                    pause: Some(pause),
                }
                .into(),
            );
        }
    };
    let end_drag = move |_e: ev::PointerEvent| {
        drag.set_value(None);
        super::url::release();
    };
    // Gone in the middle of a drag, it lets the address bar go too.
    on_cleanup(super::url::release);
    // On a phone a finger pans the drawing's box (`touch-action` on the <svg>; Chromium
    // reads it from no element inside), except on what it drags: a pause, its edge, a write.
    let hold_still = move |e: ev::TouchEvent| {
        let on_handle = e
            .target()
            .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(t).ok())
            .and_then(|el| el.closest(".pause, .grip, .ev.write").ok().flatten());
        if on_handle.is_some() {
            e.prevent_default();
        }
    };
    // A step keeps its cursor in the part of the drawing shown (on a phone the drawing is
    // wider than its box, which scrolls sideways). Only a step: a drag never scrolls it.
    Effect::new(move |_| {
        step.track();
        // A drag that gains or loses events moves the last step, but is not a step (and
        // the box's sizes read here would force a layout in the middle of its render).
        if drag.get_value().is_some() {
            return;
        }
        let x = drawn.with_untracked(|m| m.cursor.x);
        if let Some(wrap) = wrap_ref.get_untracked() {
            keep_in_view(&wrap, x);
        }
    });

    let clip = reveal_clip(Some(REVEALED));
    let shapes = Signal::derive(clip);
    // How far the box is scrolled sideways, in drawing units (a phone's box scrolls; a
    // larger screen's never does): the lanes' names are pinned that far in.
    let scrolled = RwSignal::new(0.0);
    let on_scroll = move |_| {
        if let Some(w) = wrap_ref.get_untracked() {
            let whole = f64::from(w.scroll_width()).max(1.0);
            scrolled.set(f64::from(w.scroll_left()) / whole * VIEW_W);
        }
    };
    let pinned = move || {
        let left = geometry.with(|g| g.left()) - 4.0;
        grid.with(|g| model::lanes_markup(g, left))
    };
    view! {
        <figure node_ref=wrap_ref class="timeline-wrap" on:scroll=on_scroll>
            <svg
                node_ref=svg_ref
                class="timeline main"
                class:reveal=move || clip().is_some()
                class:large=move || ty.get() == Type::Large
                // The box is the stage's (fixed); the drawing, as large as the box allows
                // at its own aspect ratio, is the SVG inside it, so its edge is the
                // drawing's and a pointer maps to time the same way at any box size.
                style:width=move || {
                    geometry.with(|g| format!("min(100cqw, calc(100cqh * ({})))", g.aspect_ratio()))
                }
                style:height=move || {
                    geometry.with(|g| format!("min(100cqh, calc(100cqw / ({})))", g.aspect_ratio()))
                }
                role="group"
                aria-label="Timeline"
                viewBox=move || drawn.with(|m| m.view_box.clone())
                on:pointerdown=press_lane
                on:pointermove=move_drag
                on:pointerup=end_drag
                on:pointercancel=end_drag
                on:touchstart=hold_still
            >
                <defs>
                    <clipPath id="revealed">
                        <rect
                            x="0"
                            y="0"
                            width=move || drawn.with(|m| n(m.cursor.x))
                            height=move || geometry.with(|g| n(g.height()))
                        ></rect>
                    </clipPath>
                </defs>
                <GridView grid />
                <Drawing model=drawn live=true grab=Some(grab_write) clip=REVEALED />
                <g class="pause-blocks">
                    <For
                        each=move || {
                            drawn
                                .with(|m| {
                                    m.pauses.iter().map(|p| (p.actor, p.nth)).collect::<Vec<_>>()
                                })
                        }
                        key=|k| *k
                        children=move |key| {
                            view! {
                                <PauseRow
                                    model=drawn
                                    key
                                    live=Some(Live { grab, key: on_key })
                                    clip=shapes
                                />
                            }
                        }
                    />
                </g>
                <svg
                    class="pinned-names"
                    aria-hidden="true"
                    x=move || n(scrolled.get())
                    overflow="visible"
                    inner_html=pinned
                ></svg>
            </svg>
        </figure>
    }
}

/// Scrolls `wrap` so that x (SVG user units) sits in the middle half of the part shown,
/// centred if it was outside it; nothing when the drawing fits its box.
fn keep_in_view(wrap: &web_sys::HtmlElement, x: f64) {
    let (shown, whole) = (
        f64::from(wrap.client_width()),
        f64::from(wrap.scroll_width()),
    );
    if whole <= shown {
        return;
    }
    let at = x / VIEW_W * whole;
    let left = f64::from(wrap.scroll_left());
    if at < left + shown / 4.0 || at > left + shown * 0.75 {
        wrap.set_scroll_left((at - shown / 2.0) as i32);
    }
}
