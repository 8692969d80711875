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
    self as model, n, Band, Belief, Conflict, Grid, Key, Marker, PauseBlock, TimelineModel, Type,
    VIEW_W,
};
use std::sync::Arc;

/// A row's memo: the row with this key in the model, or `None` once it is gone (its node is
/// about to be dropped by the `<For>`). Every row's memo reruns on every change of the model
/// (a drag move), so it compares the model's row with the one it holds in place and clones
/// only a row that changed: most rows of a move do not, and a clone allocates their strings.
fn row<T, K>(
    model: Memo<TimelineModel>,
    rows: fn(&TimelineModel) -> &[T],
    key_of: fn(&T) -> K,
    key: K,
) -> Memo<Option<T>>
where
    T: Clone + PartialEq + Send + Sync + 'static,
    K: PartialEq + Copy + Send + Sync + 'static,
{
    Memo::new_owning(move |held: Option<Option<T>>| {
        model.with(|m| {
            let now = rows(m).iter().find(|r| key_of(r) == key);
            match held {
                Some(held) if held.as_ref() == now => (held, false),
                _ => (now.cloned(), true),
            }
        })
    })
}

/// One attribute or text of a row, read through a plain `fn`: every binding of a row type
/// shares one instantiation, which keeps the wasm small.
fn field<T>(row: Memo<Option<T>>, f: fn(&T) -> String) -> impl Fn() -> String + Copy + 'static
where
    T: Send + Sync + 'static,
{
    move || row.with(|r| r.as_ref().map(f).unwrap_or_default())
}

/// Whether a row has an optional part (a label, a link).
fn has<T>(row: Memo<Option<T>>, f: fn(&T) -> bool) -> Memo<bool>
where
    T: Send + Sync + 'static,
{
    Memo::new(move |_| row.with(|r| r.as_ref().is_some_and(f)))
}

/// Lanes and the time axis; they change only with the actors and the horizon, so they are
/// markup from a pure renderer.
#[component]
pub(super) fn GridView(grid: Memo<Grid>) -> impl IntoView {
    view! { <g class="grid" inner_html=move || grid.with(model::grid_markup)></g> }
}

#[component]
fn BandRow(model: Memo<TimelineModel>, key: (usize, usize)) -> impl IntoView {
    let b = row(model, |m| &m.bands, |b: &Band| b.key, key);
    view! {
        <rect
            class=field(b, Band::class)
            x=field(b, |b| n(b.bar.x))
            y=field(b, |b| n(b.bar.y))
            width=field(b, |b| n(b.bar.w))
            height=field(b, |b| n(b.bar.h))
            rx="3"
        ></rect>
        <text class="band-label" x=field(b, |b| n(b.label.x)) y=field(b, |b| n(b.label.y))>
            {field(b, |b| b.label.text.clone())}
        </text>
    }
}

#[component]
fn BeliefRow(model: Memo<TimelineModel>, key: (usize, usize)) -> impl IntoView {
    let b = row(model, |m| &m.beliefs, |b: &Belief| b.key, key);
    view! {
        <rect
            class=field(b, |b| format!("belief c{}", b.colour))
            x=field(b, |b| n(b.bar.x))
            y=field(b, |b| n(b.bar.y))
            width=field(b, |b| n(b.bar.w))
            height=field(b, |b| n(b.bar.h))
            rx="2"
        ></rect>
    }
}

#[component]
fn ConflictRow(model: Memo<TimelineModel>, key: usize) -> impl IntoView {
    let c = row(model, |m| &m.conflicts, |c: &Conflict| c.key, key);
    let labelled = has(c, |c| c.label.is_some());
    view! {
        <rect
            class="conflict"
            x=field(c, |c| n(c.bar.x))
            y=field(c, |c| n(c.bar.y))
            width=field(c, |c| n(c.bar.w))
            height=field(c, |c| n(c.bar.h))
        ></rect>
        {move || {
            labelled
                .get()
                .then(|| {
                    view! {
                        <text
                            class="conflict-label"
                            x=field(c, |c| c.label.as_ref().map_or_else(String::new, |t| n(t.x)))
                            y=field(c, |c| c.label.as_ref().map_or_else(String::new, |t| n(t.y)))
                        >
                            {field(
                                c,
                                |c| c.label.as_ref().map_or_else(String::new, |t| t.text.clone()),
                            )}
                        </text>
                    }
                })
        }}
    }
}

/// On the live timeline, what a press on a marker does: on a write's arrival at storage it
/// grabs the writer's packet delay (the marker's event says which write); elsewhere nothing.
pub(super) type GrabWrite = Option<Callback<(Press, usize)>>;

/// A press on a marker: the start of a drag, or a double-click.
pub(super) enum Press {
    Down(ev::PointerEvent),
    Double,
}

#[component]
fn MarkerRow(model: Memo<TimelineModel>, key: Key, grab: GrabWrite) -> impl IntoView {
    let m = row(model, |t| &t.markers, |m: &Marker| m.key, key);
    let event = move || m.with_untracked(|m| m.as_ref().map(|m| m.event));
    let press = move |p: Press| {
        if let (Some(g), Some(s)) = (grab, event()) {
            g.run((p, s));
        }
    };
    // A row's key fixes its event kind, and so whether it is a write with a link.
    let linked = m.with_untracked(|m| m.as_ref().is_some_and(|m| m.link.is_some()));
    let labelled = has(m, |m| m.label.is_some());
    // The marker is one group placed by `transform`: a drag that moves it rewrites one
    // attribute, and its circles and glyph keep fixed local coordinates (no text layout).
    view! {
        <g
            class=field(m, Marker::class)
            transform=field(m, |m| format!("translate({},{})", n(m.x), n(m.y)))
            data-step=field(m, |m| m.step.to_string())
            data-result=field(m, |m| m.result.to_owned())
            on:pointerdown=move |e| press(Press::Down(e))
            on:dblclick=move |_| press(Press::Double)
        >
            <title>{field(m, |m| m.tooltip.clone())}</title>
            {linked
                .then(|| {
                    view! {
                        <line
                            class=field(m, |m| format!("link {}", m.verdict.code()))
                            x1=field(m, |m| m.link.map_or_else(String::new, |l| n(l.x1 - m.x)))
                            y1=field(m, |m| m.link.map_or_else(String::new, |l| n(l.y1 - m.y)))
                            x2=field(m, |m| m.link.map_or_else(String::new, |l| n(l.x2 - m.x)))
                            y2=field(m, |m| m.link.map_or_else(String::new, |l| n(l.y2 - m.y)))
                        ></line>
                    }
                })}
            <circle class="ring" r=field(m, |m| m.ring.to_string())></circle>
            <circle class="dot" r=field(m, |m| m.dot.to_string())></circle>
            <text class="glyph" y="4.5">
                {field(m, |m| m.glyph.to_owned())}
            </text>
            {move || {
                labelled
                    .get()
                    .then(|| {
                        view! {
                            <text class="ev-label" x=field(m, label_x) y=field(m, label_y)>
                                {field(m, label_text)}
                            </text>
                        }
                    })
            }}
        </g>
    }
}

/// Where a marker's label goes, relative to the marker (its group's `transform` places it).
fn label_x(m: &Marker) -> String {
    m.label.as_ref().map_or_else(String::new, |t| n(t.x - m.x))
}

fn label_y(m: &Marker) -> String {
    m.label.as_ref().map_or_else(String::new, |t| n(t.y - m.y))
}

fn label_text(m: &Marker) -> String {
    m.label
        .as_ref()
        .map_or_else(String::new, |t| t.text.clone())
}

/// A focusable pause block's name (a slider whose value is its start): its visible label
/// first, what a screen reader user and a sighted one both call it, then what the keys do.
fn pause_name(p: &PauseBlock) -> String {
    format!(
        "{}'s {}: arrow keys move it, Shift with arrow keys resizes it, Delete removes it",
        p.name, p.label.text
    )
}

/// What a live pause block can do: start a drag and take a key while focused (and, with
/// the page's [`Dispatch`], be removed).
#[derive(Clone, Copy)]
struct Live {
    grab: Callback<(ev::PointerEvent, usize, Grip)>,
    key: Callback<(ev::KeyboardEvent, usize)>,
}

/// A pause block. On the live timeline its first pause per actor is draggable: the block
/// moves it, the grip on its right edge resizes it, a double-click removes it.
#[component]
fn PauseRow(model: Memo<TimelineModel>, key: (usize, usize), live: Option<Live>) -> impl IntoView {
    let p = row(model, |m| &m.pauses, |p: &PauseBlock| (p.actor, p.nth), key);
    /// x, y, width and height of one of the block's boxes.
    fn bar(
        p: Memo<Option<PauseBlock>>,
        x: fn(&PauseBlock) -> String,
        y: fn(&PauseBlock) -> String,
        w: fn(&PauseBlock) -> String,
        h: fn(&PauseBlock) -> String,
    ) -> [impl Fn() -> String + Copy; 4] {
        [field(p, x), field(p, y), field(p, w), field(p, h)]
    }
    let body = bar(
        p,
        |p| n(p.body.x),
        |p| n(p.body.y),
        |p| n(p.body.w),
        |p| n(p.body.h),
    );
    let block = view! {
        <rect class="pause-body" x=body[0] y=body[1] width=body[2] height=body[3] rx="4"></rect>
        <text class="pause-label" x=field(p, |p| n(p.label.x)) y=field(p, |p| n(p.label.y))>
            {field(p, |p| p.label.text.clone())}
        </text>
    };
    let draggable = p.with_untracked(|p| p.as_ref().is_some_and(|p| p.draggable));
    match live.filter(|_| draggable) {
        None => view! { <g class="pause">{block}</g> }.into_any(),
        Some(Live { grab, key: on_key }) => {
            let dispatch = expect_context::<Dispatch>();
            let name = p.with_untracked(|p| p.as_ref().map(|p| p.name.clone()).unwrap_or_default());
            let actor = key.0;
            let hit = bar(
                p,
                |p| n(p.hit().x),
                |p| n(p.hit().y),
                |p| n(p.hit().w),
                |p| n(p.hit().h),
            );
            let grip_hit = bar(
                p,
                |p| n(p.grip_hit().x),
                |p| n(p.grip_hit().y),
                |p| n(p.grip_hit().w),
                |p| n(p.grip_hit().h),
            );
            let grip = bar(
                p,
                |p| n(p.grip().x),
                |p| n(p.grip().y),
                |p| n(p.grip().w),
                |p| n(p.grip().h),
            );
            view! {
                <g
                    class="pause"
                    data-testid=format!("pause-{name}")
                    data-actor=actor.to_string()
                    data-grip=Grip::Move.code()
                    tabindex="0"
                    role="slider"
                    aria-label=field(p, pause_name)
                    aria-valuemin="0"
                    aria-valuemax=field(p, |p| p.max_start.to_string())
                    aria-valuenow=field(p, |p| p.start.to_string())
                    aria-valuetext=field(p, |p| p.span.clone())
                    aria-keyshortcuts="ArrowLeft ArrowRight Shift+ArrowLeft Shift+ArrowRight Delete"
                    on:pointerdown=move |e| grab.run((e, actor, Grip::Move))
                    on:dblclick=move |_| dispatch.msg(Msg::RemovePause { actor })
                    on:keydown=move |e| on_key.run((e, actor))
                >
                    <title>
                        {format!(
                            "{name}'s pause: drag to move, drag the right edge to resize, double-click to remove",
                        )}
                    </title>
                    <rect class="hit" x=hit[0] y=hit[1] width=hit[2] height=hit[3]></rect>
                    {block}
                </g>
                <g
                    class="grip"
                    data-testid=format!("pause-{name}-resize")
                    data-actor=actor.to_string()
                    data-grip=Grip::Resize.code()
                    on:pointerdown=move |e| grab.run((e, actor, Grip::Resize))
                >
                    <title>{format!("Resize {name}'s pause")}</title>
                    <rect
                        class="hit"
                        x=grip_hit[0]
                        y=grip_hit[1]
                        width=grip_hit[2]
                        height=grip_hit[3]
                    ></rect>
                    <rect
                        class="pause-grip"
                        x=grip[0]
                        y=grip[1]
                        width=grip[2]
                        height=grip[3]
                    ></rect>
                </g>
            }
            .into_any()
        }
    }
}

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
    let clip = reveal_clip(clip);
    view! {
        <g class="drawing">
            <g class="timed" clip-path=clip>
                {move || {
                    cut.get()
                        .map(|c| {
                            view! {
                                <g class="cut">
                                    <title>{c.title.clone()}</title>
                                    <rect
                                        class="cut-body"
                                        x=n(c.body.x)
                                        y=n(c.body.y)
                                        width=n(c.body.w)
                                        height=n(c.body.h)
                                    ></rect>
                                    {c
                                        .label
                                        .map(|l| {
                                            view! {
                                                <text class="cut-label" x=n(l.x) y=n(l.y)>
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
                    children=move |key| view! { <BandRow model key /> }
                />
                <For
                    each=keys(|m| m.beliefs.iter().map(|b| b.key).collect())
                    key=|k| *k
                    children=move |key| view! { <BeliefRow model key /> }
                />
                <For
                    each=move || {
                        model.with(|m| m.conflicts.iter().map(|c| c.key).collect::<Vec<_>>())
                    }
                    key=|k| *k
                    children=move |key| view! { <ConflictRow model key /> }
                />
            </g>
            {(!live)
                .then(|| {
                    view! {
                        <g clip-path=clip>
                            <For
                                each=keys(|m| m.pauses.iter().map(|p| (p.actor, p.nth)).collect())
                                key=|k| *k
                                children=move |key| view! { <PauseRow model key live=None /> }
                            />
                        </g>
                    }
                })}
            <For
                each=move || model.with(|m| m.markers.iter().map(|m| m.key).collect::<Vec<_>>())
                key=|k| *k
                children=move |key| view! { <MarkerRow model key grab /> }
            />
            <g class="cursor">
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
    let drawn = Memo::new(move |_| {
        let mut m = trace.with(|t| model::model_in(t, step.get(), true, ty.get()));
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
    let end_drag = move |_e: ev::PointerEvent| drag.set_value(None);
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
    view! {
        <figure node_ref=wrap_ref class="timeline-wrap">
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
                <g class="pause-blocks" clip-path=clip>
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
                                <PauseRow model=drawn key live=Some(Live { grab, key: on_key }) />
                            }
                        }
                    />
                </g>
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
