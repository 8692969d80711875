//! The timeline's parts: the grid, and the keyed rows (bands, beliefs, conflicts, markers,
//! pause blocks), each row with its own memo, so a drag move updates only the rows that changed.

use super::*;

/// A row's memo: the row with this key in the model, or `None` once it is gone (its node is
/// about to be dropped by the `<For>`). Every row's memo reruns on every change of the model
/// (a drag move), so it compares the model's row with the one it holds in place and clones
/// only a row that changed: most rows of a move do not, and a clone allocates their strings.
pub(super) fn row<T, K>(
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
pub(super) fn field<T>(
    row: Memo<Option<T>>,
    f: fn(&T) -> String,
) -> impl Fn() -> String + Copy + 'static
where
    T: Send + Sync + 'static,
{
    move || row.with(|r| r.as_ref().map(f).unwrap_or_default())
}

/// Whether a row has an optional part (a label, a link).
pub(super) fn has<T>(row: Memo<Option<T>>, f: fn(&T) -> bool) -> Memo<bool>
where
    T: Send + Sync + 'static,
{
    Memo::new(move |_| row.with(|r| r.as_ref().is_some_and(f)))
}

/// Lanes and the time axis; they change only with the actors and the horizon, so they are
/// markup from a pure renderer.
#[component]
pub(in crate::ui) fn GridView(grid: Memo<Grid>) -> impl IntoView {
    view! { <g class="grid" inner_html=move || grid.with(model::grid_markup)></g> }
}

#[component]
pub(super) fn BandRow(
    model: Memo<TimelineModel>,
    key: (usize, usize),
    clip: Signal<Option<&'static str>>,
) -> impl IntoView {
    let b = row(model, |m| &m.bands, |b: &Band| b.key, key);
    view! {
        <rect
            class=field(b, Band::class)
            clip-path=clip
            x=field(b, |b| n(b.bar.x))
            y=field(b, |b| n(b.bar.y))
            width=field(b, |b| n(b.bar.w))
            height=field(b, |b| n(b.bar.h))
            rx="3"
        ></rect>
        <text
            class=field(b, |b| words("band-label", b.begun))
            x=field(b, |b| n(b.label.x))
            y=field(b, |b| n(b.label.y))
        >
            {field(b, |b| b.label.text.clone())}
        </text>
    }
}

#[component]
pub(super) fn BeliefRow(model: Memo<TimelineModel>, key: (usize, usize)) -> impl IntoView {
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
pub(super) fn ConflictRow(
    model: Memo<TimelineModel>,
    key: usize,
    clip: Signal<Option<&'static str>>,
) -> impl IntoView {
    let c = row(model, |m| &m.conflicts, |c: &Conflict| c.key, key);
    let labelled = has(c, |c| c.label.is_some());
    view! {
        <rect
            class="conflict"
            clip-path=clip
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
                            class=field(c, |c| words("conflict-label", c.begun))
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
pub(in crate::ui) type GrabWrite = Option<Callback<(Press, usize)>>;

/// A press on a marker: the start of a drag, or a double-click.
pub(in crate::ui) enum Press {
    Down(ev::PointerEvent),
    Double,
}

#[component]
pub(super) fn MarkerRow(model: Memo<TimelineModel>, key: Key, grab: GrabWrite) -> impl IntoView {
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
pub(super) fn label_x(m: &Marker) -> String {
    m.label.as_ref().map_or_else(String::new, |t| n(t.x - m.x))
}

pub(super) fn label_y(m: &Marker) -> String {
    m.label.as_ref().map_or_else(String::new, |t| n(t.y - m.y))
}

pub(super) fn label_text(m: &Marker) -> String {
    m.label
        .as_ref()
        .map_or_else(String::new, |t| t.text.clone())
}

/// A focusable pause block's name (a slider whose value is its start): its visible label
/// first, what a screen reader user and a sighted one both call it, then what the keys do.
pub(super) fn pause_name(p: &PauseBlock) -> String {
    format!(
        "{}'s {}: arrow keys move it, Shift with arrow keys resizes it, Delete removes it",
        p.name, p.label.text
    )
}

/// What a live pause block can do: start a drag and take a key while focused (and, with
/// the page's [`Dispatch`], be removed).
#[derive(Clone, Copy)]
pub(super) struct Live {
    pub(super) grab: Callback<(ev::PointerEvent, usize, Grip)>,
    pub(super) key: Callback<(ev::KeyboardEvent, usize)>,
}

/// A pause block. On the live timeline its first pause per actor is draggable: the block
/// moves it, the grip on its right edge resizes it, a double-click removes it. The block is
/// one group placed by `transform` at its body's corner, its parts at fixed offsets inside
/// it: a move rewrites that one attribute (a resize, the widths and the grip's offset).
#[component]
pub(super) fn PauseRow(
    model: Memo<TimelineModel>,
    key: (usize, usize),
    live: Option<Live>,
    clip: Signal<Option<&'static str>>,
) -> impl IntoView {
    let p = row(model, |m| &m.pauses, |p: &PauseBlock| (p.actor, p.nth), key);
    /// x, y, width and height of one of the block's boxes, inside its group.
    fn bar(
        p: Memo<Option<PauseBlock>>,
        part: fn(&PauseBlock) -> Bar,
    ) -> [impl Fn() -> String + Copy; 4] {
        // One closure type for every coordinate of every box (the part and the coordinate
        // are `fn`s), so their bindings share one instantiation, as `field`'s do.
        let at = move |f: fn(&Bar) -> f64| {
            move || {
                p.with(|p| {
                    p.as_ref()
                        .map(|p| n(f(&p.local(part(p)))))
                        .unwrap_or_default()
                })
            }
        };
        [at(|b| b.x), at(|b| b.y), at(|b| b.w), at(|b| b.h)]
    }
    let placed = field(p, |p| {
        let (x, y) = p.origin();
        format!("translate({},{})", n(x), n(y))
    });
    let body = bar(p, |p| p.body);
    let block = view! { <rect class="pause-body" x=body[0] y=body[1] width=body[2] height=body[3] rx="4"></rect> };
    // The block's words lie over it, outside the reveal's clip (the clip goes on a group
    // with no transform, in the drawing's own units): a pause that has begun is named whole,
    // even at the step it starts, when none of its body is left of the cursor yet.
    let label = view! {
        <text
            class=field(p, |p| words("pause-label", p.begun))
            x=field(p, |p| n(p.label.x))
            y=field(p, |p| n(p.label.y))
        >
            {field(p, |p| p.label.text.clone())}
        </text>
    };
    let draggable = p.with_untracked(|p| p.as_ref().is_some_and(|p| p.draggable));
    let shape = match live.filter(|_| draggable) {
        None => view! {
            <g class="pause" transform=placed>
                {block}
            </g>
        }
        .into_any(),
        Some(Live { grab, key: on_key }) => {
            let dispatch = expect_context::<Dispatch>();
            let name = p.with_untracked(|p| p.as_ref().map(|p| p.name.clone()).unwrap_or_default());
            let actor = key.0;
            let hit = bar(p, PauseBlock::hit);
            let grip_hit = bar(p, PauseBlock::grip_hit);
            let grip = bar(p, PauseBlock::grip);
            view! {
                <g class="pause-at" transform=placed>
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
                </g>
            }
            .into_any()
        }
    };
    view! {
        <g clip-path=clip>{shape}</g>
        {label}
    }
}
