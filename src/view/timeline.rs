//! The timeline as a typed model, read off a trace: lanes, axis, lease bands, belief bars,
//! conflict windows, one marker per event, the pause blocks and the cursor.
//!
//! Pure and native: tests assert its fields. The Leptos shell renders it with keyed rows,
//! so every row has a stable [`Key`] (lane, kind, nth occurrence) and a marker keeps its
//! node while a drag moves it.

use std::mem::Discriminant;

use crate::core::story;
use crate::core::{EventKind, Lane, LeaseEnd, Millis, PauseCause, ProviderOutcome, Trace};
use crate::view::geometry::Scale;

pub const VIEW_W: f64 = 1000.0;
pub const LEFT: f64 = 78.0;
pub const PLOT_W: f64 = 900.0;
pub const TOP: f64 = 24.0;
/// Lane height; scenarios with three or more clients get slimmer lanes so the whole page
/// still fits a 1280×720 projector.
pub const LANE_H: f64 = 50.0;
pub const SLIM_LANE_H: f64 = 42.0;
pub const AXIS_H: f64 = 22.0;

/// Touch targets around a pause block and its resize grip, in user units (a 768 px wide
/// timeline draws 1000 units in about 730 px, so these stay above 24 CSS px).
pub const HIT_H: f64 = 42.0;
pub const HIT_W: f64 = 34.0;

/// Geometry of one trace's timeline, in SVG user units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Geometry {
    pub scale: Scale,
    pub actors: usize,
}

impl Geometry {
    pub fn of(t: &Trace) -> Self {
        Self {
            scale: Scale {
                left: LEFT,
                width: PLOT_W,
                horizon: t.scenario.horizon,
            },
            actors: t.scenario.actors.len(),
        }
    }

    pub fn lanes(&self) -> usize {
        self.actors + 2
    }

    pub fn lane_h(&self) -> f64 {
        if self.actors >= 3 {
            SLIM_LANE_H
        } else {
            LANE_H
        }
    }

    pub fn lane_index(&self, lane: Lane) -> usize {
        match lane {
            Lane::Actor(i) => i,
            Lane::Lease => self.actors,
            Lane::Storage => self.actors + 1,
        }
    }

    pub fn lane_mid(&self, i: usize) -> f64 {
        TOP + self.lane_h() * i as f64 + self.lane_h() / 2.0
    }

    pub fn bottom(&self) -> f64 {
        TOP + self.lane_h() * self.lanes() as f64
    }

    pub fn height(&self) -> f64 {
        self.bottom() + AXIS_H
    }

    pub fn x(&self, t: Millis) -> f64 {
        self.scale.x(t)
    }

    pub fn view_box(&self) -> String {
        format!("0 0 {} {}", n(VIEW_W), n(self.height()))
    }

    /// The drawing's width over its height, as a CSS ratio: the page sizes the SVG inside
    /// the stage's fixed box from it (container units), without laying out the drawing.
    pub fn aspect_ratio(&self) -> String {
        format!("{} / {}", n(VIEW_W), n(self.height()))
    }
}

/// A coordinate with one decimal, without pulling float formatting into the wasm.
pub fn n(v: f64) -> String {
    let tenths = (v * 10.0).round() as i64;
    let sign = if tenths < 0 { "-" } else { "" };
    let t = tenths.unsigned_abs();
    format!("{sign}{}.{}", t / 10, t % 10)
}

/// Colour slot per actor (CSS classes `c0`..`c4`).
pub fn colour(i: usize) -> usize {
    i % 5
}

/// A row's identity across re-renders: which lane, what kind of thing, and which
/// occurrence of that kind on that lane. Times and verdicts are not in it, so a drag that
/// moves a marker or flips its verdict keeps the row (and its DOM node).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    pub lane: usize,
    pub kind: Discriminant<EventKind>,
    pub nth: usize,
}

/// Lanes and the time axis: they change only with the actors and the horizon.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Grid {
    pub lanes: Vec<LaneRow>,
    pub ticks: Vec<Tick>,
    /// Where the lanes end and the axis begins.
    pub bottom: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LaneRow {
    pub name: String,
    /// A client's lane, or the lease's and the storage's.
    pub infra: bool,
    pub y: f64,
    pub h: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Tick {
    pub x: f64,
    pub label: String,
}

/// The drawing's moving parts at one step.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TimelineModel {
    pub view_box: String,
    pub bands: Vec<Band>,
    pub beliefs: Vec<Belief>,
    pub conflicts: Vec<Conflict>,
    pub markers: Vec<Marker>,
    /// Every pause; on the live timeline the first of each actor's is draggable.
    pub pauses: Vec<PauseBlock>,
    /// The window in which a client is cut off from the lock service, on its lane.
    pub cut: Option<Cut>,
    pub cursor: Cursor,
}

/// A partition drawn on the cut-off client's lane: its window, and a label if one fits.
#[derive(Debug, Clone, PartialEq)]
pub struct Cut {
    pub body: Bar,
    pub label: Option<Text>,
    /// What it is, in words (the band's tooltip).
    pub title: String,
}

/// The words inside a partition band, longest first (the first that fits is drawn).
pub const CUT_LABELS: [&str; 2] = ["cut off from lock service", "partition"];

#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Cursor {
    pub x: f64,
    pub y1: f64,
    pub y2: f64,
}

/// A box in user units.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Bar {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

/// Text at a point in user units.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Text {
    pub x: f64,
    pub y: f64,
    pub text: String,
}

/// One lease on the lease lane, owner's colour.
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    pub key: (usize, usize),
    pub colour: usize,
    pub end: LeaseEnd,
    pub bar: Bar,
    pub label: Text,
}

impl Band {
    pub fn class(&self) -> String {
        let end = match self.end {
            LeaseEnd::Expired => "expired",
            LeaseEnd::Released => "released",
            LeaseEnd::Open => "open",
        };
        format!("lease-band c{} {end}", self.colour)
    }
}

/// A client's belief that it holds the lock, under its lane.
#[derive(Debug, Clone, PartialEq)]
pub struct Belief {
    pub key: (usize, usize),
    pub colour: usize,
    pub bar: Bar,
}

/// A window in which two clients believe they hold the lock; the first of a run of them
/// carries the label.
#[derive(Debug, Clone, PartialEq)]
pub struct Conflict {
    pub key: usize,
    pub bar: Bar,
    pub label: Option<Text>,
}

pub const CONFLICT_LABEL: &str = "two clients believe they hold the lock";

/// Past, current or not yet reached, at the step on screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum State {
    #[default]
    Past,
    Current,
    Future,
}

/// What a marker stands for (CSS: `write`, `op`, `expiry`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Shape {
    Write,
    #[default]
    Op,
    Expiry,
}

/// How it went (CSS: `ok`, `late`, `rejected`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Verdict {
    #[default]
    Ok,
    /// Accepted from a superseded lease, or out of token order.
    Late,
    Rejected,
    Refused,
    Unprotected,
    Danger,
    Barrier,
}

impl Verdict {
    pub fn code(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Late => "late",
            Verdict::Rejected => "rejected",
            Verdict::Refused => "refused",
            Verdict::Unprotected => "unprotected",
            Verdict::Danger => "danger",
            Verdict::Barrier => "barrier",
        }
    }
}

/// From the client's lane to the storage: when a write was sent and where it landed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Link {
    pub x1: f64,
    pub y1: f64,
    pub x2: f64,
    pub y2: f64,
}

/// One event on its lane.
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    pub key: Key,
    /// The step that shows this event (of [`story::Steps`]).
    pub step: usize,
    /// The event's index in the trace.
    pub event: usize,
    pub x: f64,
    pub y: f64,
    pub ring: u8,
    pub dot: u8,
    pub state: State,
    pub shape: Shape,
    pub verdict: Verdict,
    pub colour: usize,
    pub glyph: &'static str,
    /// The event's result code (`stale_fence`, `lock_held`, ...).
    pub result: &'static str,
    /// The event's narration, for the tooltip.
    pub tooltip: String,
    pub link: Option<Link>,
    /// Centred above or below the marker, else beside it; left off where it would touch
    /// another label or marker.
    pub label: Option<Text>,
}

impl Marker {
    pub fn class(&self) -> String {
        let state = match self.state {
            State::Past => "past",
            State::Current => "current",
            State::Future => "future",
        };
        let shape = match self.shape {
            Shape::Write => "write",
            Shape::Op => "op",
            Shape::Expiry => "expiry",
        };
        format!(
            "ev {state} {shape} {} c{}",
            self.verdict.code(),
            self.colour
        )
    }
}

/// A pause block. `actor` and `nth` say which; only a live timeline's first pause per
/// actor is draggable.
#[derive(Debug, Clone, PartialEq)]
pub struct PauseBlock {
    pub actor: usize,
    pub nth: usize,
    pub name: String,
    pub draggable: bool,
    pub body: Bar,
    pub label: Text,
    /// Where it starts, and the latest start that keeps it inside the run: a keyboard user
    /// moves it like a slider's value.
    pub start: Millis,
    pub max_start: Millis,
    /// The same in words, e.g. "starts at 5 ms, lasts 50 ms".
    pub span: String,
}

impl PauseBlock {
    /// The block's touch target (drag to move).
    pub fn hit(&self) -> Bar {
        Bar {
            x: self.body.x,
            y: self.body.y + 13.0 - HIT_H / 2.0,
            w: self.body.w,
            h: HIT_H,
        }
    }

    /// The resize grip's touch target, on the right edge.
    pub fn grip_hit(&self) -> Bar {
        Bar {
            x: self.body.x + self.body.w - HIT_W / 2.0,
            y: self.body.y + 13.0 - HIT_H / 2.0,
            w: HIT_W,
            h: HIT_H,
        }
    }

    /// The visible grip.
    pub fn grip(&self) -> Bar {
        Bar {
            x: self.body.x + self.body.w - 5.0,
            y: self.body.y,
            w: 10.0,
            h: 26.0,
        }
    }
}

fn tick_step(horizon: Millis) -> Millis {
    let raw = (horizon / 10).max(1);
    [
        1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 60_000,
    ]
    .into_iter()
    .find(|s| *s >= raw)
    .unwrap_or(raw)
}

fn tick_label(ms: Millis, step: Millis) -> String {
    if step >= 1000 && ms % 1000 == 0 {
        format!("{} s", ms / 1000)
    } else {
        ms.to_string()
    }
}

/// Lanes and the axis.
pub fn grid(t: &Trace) -> Grid {
    let g = Geometry::of(t);
    let mut lanes: Vec<LaneRow> = t
        .scenario
        .actors
        .iter()
        .map(|a| (a.name.clone(), false))
        .chain([
            // A row lock lives in the storage itself: its lane is the row's lock.
            (
                if t.scenario.lock.row().is_some() {
                    "lock"
                } else {
                    "lease"
                }
                .to_owned(),
                true,
            ),
            ("storage".to_owned(), true),
        ])
        .enumerate()
        .map(|(i, (name, infra))| LaneRow {
            name,
            infra,
            y: TOP + g.lane_h() * i as f64,
            h: g.lane_h(),
        })
        .collect();
    lanes.shrink_to_fit();
    let step = tick_step(t.scenario.horizon);
    let ticks = (0..=t.scenario.horizon / step)
        .map(|k| Tick {
            x: g.x(k * step),
            label: tick_label(k * step, step),
        })
        .collect();
    Grid {
        lanes,
        ticks,
        bottom: g.bottom(),
    }
}

/// The drawing at `step`. `live`: the main timeline, whose pauses are draggable and name
/// their cause; the fork's copy of the original is not.
pub fn model(t: &Trace, step: usize, live: bool) -> TimelineModel {
    let g = Geometry::of(t);
    let spots = spots(t, &g);
    let mut labels = Labels::default();
    for s in &spots {
        labels.block((s.x - s.r, s.y - s.r, s.x + s.r, s.y + s.r), Some(s.event));
    }
    let bands = bands(t, &g, &mut labels);
    let cut = cut(t, &g, &mut labels);
    let steps = story::Steps::of(t);
    let step = step.min(steps.last());
    let markers = markers(t, &g, (&steps, step), &spots, &mut labels);
    // Rows in a fixed order (by owner, by lane; by time within one) rather than by time
    // alone, so a drag that makes two lanes' events trade places moves no node. Labels were
    // placed in event order above.
    let bands = grouped(bands, g.actors, |b| b.key.0);
    let markers = grouped(markers, g.lanes(), |m| m.key.lane);
    TimelineModel {
        view_box: g.view_box(),
        bands,
        beliefs: beliefs(t, &g),
        conflicts: conflicts(t, &g),
        markers,
        pauses: pauses(t, &g, live),
        cut,
        cursor: Cursor {
            x: g.x(t.snapshot_at(steps.through(step)).at),
            y1: TOP - 4.0,
            y2: g.bottom(),
        },
    }
}

/// `rows` grouped by `group` (0..groups), keeping their order within a group. (A pass per
/// group instead of a sort: these are a handful of rows, and a sort of them costs kilobytes
/// of wasm.)
fn grouped<T>(rows: Vec<T>, groups: usize, group: fn(&T) -> usize) -> Vec<T> {
    let mut slots: Vec<Option<T>> = rows.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(slots.len());
    for k in 0..groups.max(1) {
        for slot in slots.iter_mut() {
            if slot
                .as_ref()
                .is_some_and(|r| group(r).min(groups.max(1) - 1) == k)
            {
                out.extend(slot.take());
            }
        }
    }
    out
}

fn bands(t: &Trace, g: &Geometry, labels: &mut Labels) -> Vec<Band> {
    let lease_y = g.lane_mid(g.lane_index(Lane::Lease));
    let mut nth = vec![0_usize; t.scenario.actors.len() + 1];
    let spans = t.lease_spans();
    let starts: Vec<f64> = spans.iter().map(|s| g.x(s.from)).collect();
    spans
        .into_iter()
        .map(|span| {
            let (x0, x1) = (g.x(span.from), g.x(span.to));
            let who = t.scenario.actor_index(&span.owner).unwrap_or(0);
            // A label may run past its band's end, but not into the band that follows it.
            let next = starts.iter().copied().filter(|&s| s > x0 && s >= x1 - 0.5);
            let limit = next.fold(f64::INFINITY, f64::min);
            let texts = [
                story::band_label(&t.scenario, &span.owner, span.fence),
                story::band_label_short(&t.scenario, &span.owner, span.fence),
            ];
            let (text, lx) = band_label(labels, texts, (x0, x1, limit), lease_y);
            let k = nth.get_mut(who).map_or(0, |c| {
                *c += 1;
                *c - 1
            });
            Band {
                key: (who, k),
                colour: colour(who),
                end: span.end,
                bar: Bar {
                    x: x0,
                    y: lease_y - 11.0,
                    w: (x1 - x0).max(1.0),
                    h: 22.0,
                },
                label: Text {
                    x: lx,
                    y: lease_y + 5.0,
                    text,
                },
            }
        })
        .collect()
}

/// Where a lease band's label goes, and which words: the full ones, or the short ones if
/// the full do not fit before `limit` (the next band's start). Each starts just inside the
/// band (from `x0`, up to `x1`) and steps right past any marker on it.
fn band_label(
    labels: &mut Labels,
    texts: [String; 2],
    (x0, x1, limit): (f64, f64, f64),
    y: f64,
) -> (String, f64) {
    let boxed = |lx: f64, w: f64| (lx, y - 8.0, lx + w, y + 8.0);
    let spot = |labels: &Labels, w: f64| {
        let mut lx = x0 + 8.0;
        while !labels.free(boxed(lx, w), None) && lx + 4.0 < x1 {
            lx += 4.0;
        }
        (labels.free(boxed(lx, w), None) && lx + w <= limit).then_some(lx)
    };
    let width = |text: &str| text.chars().count() as f64 * 7.8;
    let [full, short] = texts;
    let (text, lx) = match (spot(labels, width(&full)), spot(labels, width(&short))) {
        (Some(lx), _) => (full, lx),
        (None, Some(lx)) => (short, lx),
        (None, None) => (full, x0 + 8.0),
    };
    labels.block(boxed(lx, width(&text)), None);
    (text, lx)
}

fn beliefs(t: &Trace, g: &Geometry) -> Vec<Belief> {
    (0..t.scenario.actors.len())
        .flat_map(|i| {
            let y = g.lane_mid(i) + 16.0;
            t.belief_spans(i)
                .into_iter()
                .enumerate()
                .map(move |(k, (from, to))| {
                    let (x0, x1) = (g.x(from), g.x(to));
                    Belief {
                        key: (i, k),
                        colour: colour(i),
                        bar: Bar {
                            x: x0,
                            y,
                            w: (x1 - x0).max(1.0),
                            h: 5.0,
                        },
                    }
                })
        })
        .collect()
}

fn conflicts(t: &Trace, g: &Geometry) -> Vec<Conflict> {
    let h = g.lane_h() * t.scenario.actors.len() as f64;
    let mut label_free_from = f64::MIN;
    t.conflict_spans()
        .into_iter()
        .enumerate()
        .map(|(k, (from, to))| {
            let (x0, x1) = (g.x(from), g.x(to));
            let label = (x0 >= label_free_from).then(|| {
                label_free_from = x0 + 4.0 + Labels::width(CONFLICT_LABEL) * 0.95;
                Text {
                    x: x0 + 4.0,
                    y: TOP - 7.0,
                    text: CONFLICT_LABEL.to_owned(),
                }
            });
            Conflict {
                key: k,
                bar: Bar {
                    x: x0,
                    y: TOP,
                    w: (x1 - x0).max(1.0),
                    h,
                },
                label,
            }
        })
        .collect()
}

/// The partition band on the cut-off client's lane, with its label on the lane's middle line
/// where it touches no marker (the markers' own labels then keep clear of it).
fn cut(t: &Trace, g: &Geometry, labels: &mut Labels) -> Option<Cut> {
    let sc = &t.scenario;
    let p = sc.partitioned()?;
    let name = &sc.actors.get(p.actor)?.name;
    let (x0, x1) = (g.x(p.start), g.x(p.end.min(sc.horizon)));
    let h = g.lane_h();
    let top = g.lane_mid(p.actor) - h / 2.0;
    let y = g.lane_mid(p.actor) + 5.0;
    let label = CUT_LABELS.iter().find_map(|text| {
        let w = Labels::width(text);
        let mut x = x0 + 4.0;
        while x + w <= x1 {
            let r = (x, y - 13.0, x + w, y + 4.0);
            // A little air on each side, so the text does not touch a marker's ring.
            if labels.free((r.0 - 4.0, r.1, r.2 + 4.0, r.3), None) {
                labels.block(r, None);
                return Some(Text {
                    x: x + 3.0,
                    y,
                    text: (*text).to_owned(),
                });
            }
            x += 4.0;
        }
        None
    });
    Some(Cut {
        body: Bar {
            x: x0,
            y: top + 2.0,
            w: (x1 - x0).max(2.0),
            h: h - 4.0,
        },
        label,
        title: format!(
            "{name} cut off from the lock service (not from storage), t={} to t={}",
            story::instant(sc, p.start),
            story::instant(sc, p.end)
        ),
    })
}

fn pauses(t: &Trace, g: &Geometry, live: bool) -> Vec<PauseBlock> {
    let mut out = Vec::new();
    for (i, a) in t.scenario.actors.iter().enumerate() {
        for (k, p) in a.pauses.iter().enumerate() {
            let (x0, x1) = (g.x(p.start), g.x(p.end()));
            let (y, w) = (g.lane_mid(i) - 13.0, (x1 - x0).max(2.0));
            let cause = match (live, a.pause_cause) {
                (false, _) => "pause",
                (true, PauseCause::Gc) => "GC pause",
                (true, PauseCause::Stall) => "stall",
            };
            out.push(PauseBlock {
                actor: i,
                nth: k,
                name: a.name.clone(),
                draggable: live && k == 0,
                body: Bar {
                    x: x0,
                    y,
                    w,
                    h: 26.0,
                },
                label: Text {
                    x: x0 + 6.0,
                    y: y + 17.5,
                    text: format!("{cause} {}", story::time_label(&t.scenario, p.duration)),
                },
                start: p.start,
                max_start: t.scenario.horizon.saturating_sub(p.duration),
                span: format!(
                    "starts at {}, lasts {}",
                    story::time_label(&t.scenario, p.start),
                    story::time_label(&t.scenario, p.duration)
                ),
            });
        }
    }
    out
}

/// A box in user units: left, top, right, bottom.
type Rect = (f64, f64, f64, f64);

/// Keeps every label and marker on the timeline apart. Obstacles (markers, band labels) are
/// registered first; a marker label then takes the first of its candidate positions that
/// touches nothing (its own marker aside), or is left off (the marker keeps its tooltip and
/// the narration says it all).
#[derive(Default)]
pub struct Labels {
    /// Each box with the event it belongs to, if any.
    taken: Vec<(Rect, Option<usize>)>,
}

impl Labels {
    /// Roughly the width of `text` at the marker label size, in user units.
    fn width(text: &str) -> f64 {
        text.chars().count() as f64 * 7.4 + 6.0
    }

    /// The box of a marker label centred on `x` with its baseline at `y`, with a margin
    /// for the font's real ascent, descent and width (measured in Chromium).
    fn label_box(x: f64, y: f64, text: &str) -> Rect {
        let half = Self::width(text) / 2.0 + 4.0;
        (x - half, y - 13.0, x + half, y + 4.0)
    }

    pub fn block(&mut self, r: Rect, owner: Option<usize>) {
        self.taken.push((r, owner));
    }

    fn free(&self, r: Rect, owner: Option<usize>) -> bool {
        !self.taken.iter().any(|(t, o)| {
            (owner.is_none() || *o != owner) && r.0 < t.2 && t.0 < r.2 && r.1 < t.3 && t.1 < r.3
        })
    }

    /// The first baseline in `ys` where a label of `text` centred on `x` is free; taken.
    pub fn place(&mut self, owner: usize, x: f64, ys: &[f64], text: &str) -> Option<f64> {
        self.take_first(owner, text, ys.iter().map(|&y| (x, y)))
            .map(|(_, y)| y)
    }

    /// For a label with no room centred on its marker: the first place, on a baseline in
    /// `ys`, where it starts at `x` (to the right) or ends there (to the left), inside the
    /// drawing and clear of the lane names; taken. Returns the label's centre and baseline.
    pub fn place_beside(
        &mut self,
        owner: usize,
        x: f64,
        ys: &[f64],
        text: &str,
    ) -> Option<(f64, f64)> {
        let half = Self::width(text) / 2.0;
        let inside = |&(cx, y): &(f64, f64)| {
            let r = Self::label_box(cx, y, text);
            r.0 >= LEFT && r.2 <= VIEW_W
        };
        let sides = ys.iter().flat_map(|&y| [(x + half, y), (x - half, y)]);
        self.take_first(owner, text, sides.filter(inside))
    }

    /// The first of `spots` (a label's centre and baseline) where `text` is free of every
    /// box but `owner`'s own; taken.
    fn take_first(
        &mut self,
        owner: usize,
        text: &str,
        mut spots: impl Iterator<Item = (f64, f64)>,
    ) -> Option<(f64, f64)> {
        let (x, y) = spots.find(|&(x, y)| self.free(Self::label_box(x, y, text), Some(owner)))?;
        self.block(Self::label_box(x, y, text), Some(owner));
        Some((x, y))
    }
}

/// Where a drawn event sits. Pause starts and ends are shown by the pause block instead.
struct Spot {
    event: usize,
    x: f64,
    y: f64,
    r: f64,
}

fn spots(t: &Trace, g: &Geometry) -> Vec<Spot> {
    t.events
        .iter()
        .enumerate()
        .filter(|(_, e)| {
            !matches!(
                e.kind,
                EventKind::PauseStarted { .. } | EventKind::PauseEnded { .. }
            )
        })
        .map(|(i, e)| {
            let expiry = matches!(e.kind, EventKind::LeaseExpired { .. });
            // Expiries sit on the band's top edge so the next band's label stays readable.
            let y = g.lane_mid(g.lane_index(e.lane)) - if expiry { 11.0 } else { 0.0 };
            Spot {
                event: i,
                x: g.x(e.at),
                y,
                r: if expiry { 5.0 } else { 8.0 },
            }
        })
        .collect()
}

/// Marker shape and verdict. `late`: an accepted write from a superseded lease, or one out
/// of token order.
fn classify(kind: &EventKind, late: bool) -> (Shape, Verdict) {
    match kind {
        EventKind::WriteApplied { result: Ok(_), .. } if late => (Shape::Write, Verdict::Late),
        EventKind::WriteApplied { result: Ok(_), .. } => (Shape::Write, Verdict::Ok),
        EventKind::WriteApplied { result: Err(_), .. } => (Shape::Write, Verdict::Rejected),
        EventKind::AcquireRefused { .. }
        | EventKind::LockWait { .. }
        | EventKind::ConnectionLost
        | EventKind::ReleaseNoop { .. }
        | EventKind::ExtendFailed { .. }
        | EventKind::WriteTimedOut { .. }
        | EventKind::LockUnanswered { .. }
        | EventKind::LockTimedOut { .. } => (Shape::Op, Verdict::Refused),
        EventKind::LeaseExpired { .. } => (Shape::Expiry, Verdict::Ok),
        EventKind::SideEffect { .. } => (Shape::Op, Verdict::Unprotected),
        // The provider charged nothing: a deduped key, or no call after a refused claim.
        EventKind::ProviderCall { outcome, .. } if *outcome != ProviderOutcome::Charged => {
            (Shape::Op, Verdict::Refused)
        }
        EventKind::DeletedOthersLease { .. }
        | EventKind::Failover { .. }
        | EventKind::LockClockJumped { .. } => (Shape::Op, Verdict::Danger),
        EventKind::BarrierSet { result: Ok(()), .. } => (Shape::Write, Verdict::Barrier),
        EventKind::BarrierSet { result: Err(_), .. } => (Shape::Write, Verdict::Rejected),
        _ => (Shape::Op, Verdict::Ok),
    }
}

/// One marker per drawn event; events after `step` (of `steps`) are dimmed, the current
/// step's ringed. A run of identical events shares one step and one label ("lock_held ×5").
fn markers(
    t: &Trace,
    g: &Geometry,
    (steps, step): (&story::Steps, usize),
    spots: &[Spot],
    labels: &mut Labels,
) -> Vec<Marker> {
    let storage_y = g.lane_mid(g.lane_index(Lane::Storage));
    let mut seen: Vec<(usize, Discriminant<EventKind>)> = Vec::with_capacity(spots.len());
    // Labels with no room centred above or below their marker (the marker's place in
    // `markers`, its baselines, the text), for the second pass.
    let mut left_off: Vec<(usize, [f64; 2], String)> = Vec::new();
    let mut markers: Vec<Marker> = spots
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let (i, x, y) = (s.event, s.x, s.y);
            let e = &t.events[i];
            let lane = g.lane_index(e.lane);
            let kind = std::mem::discriminant(&e.kind);
            let nth = seen.iter().filter(|k| **k == (lane, kind)).count();
            seen.push((lane, kind));
            let shown = steps.showing(i);
            let state = match shown.cmp(&step) {
                std::cmp::Ordering::Equal => State::Current,
                std::cmp::Ordering::Greater => State::Future,
                std::cmp::Ordering::Less => State::Past,
            };
            let who = e
                .actor
                .as_deref()
                .and_then(|a| t.scenario.actor_index(a))
                .unwrap_or(0);
            let (shape, verdict) = classify(&e.kind, e.is_late_write() || e.is_out_of_order());
            let link = match &e.kind {
                EventKind::WriteApplied { sent_at, .. } => Some(Link {
                    x1: g.x(*sent_at),
                    y1: g.lane_mid(who),
                    x2: x,
                    y2: storage_y - 10.0,
                }),
                _ => None,
            };
            let glyph = match verdict {
                Verdict::Rejected => "✗",
                Verdict::Late | Verdict::Danger => "!",
                Verdict::Unprotected => "$",
                Verdict::Barrier => "⊢",
                _ if shape == Shape::Write => "✓",
                _ => "",
            };
            let (ring, dot) = if shape == Shape::Expiry {
                (9, 5)
            } else {
                (13, 8)
            };
            // Writes label below their marker first, everything else above; then the other side.
            let text = story::run_label(t, steps, i);
            let offsets: &[f64] = match shape {
                Shape::Write => &[27.0, -14.0],
                Shape::Expiry => &[-6.0, 22.0],
                Shape::Op => &[-12.0, 24.0],
            };
            let ys = [y + offsets[0], y + offsets[1]];
            let label = text.and_then(|text| match labels.place(i, x, &ys, &text) {
                Some(ly) => Some(Text { x, y: ly, text }),
                None => {
                    left_off.push((k, ys, text));
                    None
                }
            });
            Marker {
                key: Key { lane, kind, nth },
                step: shown,
                event: i,
                x,
                y,
                ring,
                dot,
                state,
                shape,
                verdict,
                colour: colour(who),
                glyph,
                result: e.result_code(),
                tooltip: story::narration(t, shown),
                link,
                label,
            }
        })
        .collect();
    // Second pass: a label left off goes beside its marker (starting or ending at it)
    // where that is free. Only labels that had no place move, so every label placed
    // centred above or below keeps its place.
    for (k, ys, text) in left_off {
        let m = &mut markers[k];
        if let Some((x, y)) = labels.place_beside(m.event, m.x, &ys, &text) {
            m.label = Some(Text { x, y, text });
        }
    }
    markers
}

/// The thundering herd as two bar charts (fixed schedule above, jittered below): renewals
/// the lock server takes per bucket, on one shared scale.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HerdChart {
    pub rows: Vec<HerdRow>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct HerdRow {
    /// `fixed` or `jittered` (a CSS class too).
    pub class: &'static str,
    pub label: Text,
    pub peak: Text,
    pub bars: Vec<Bar>,
    /// The row's base line, from x1 to x2 at y.
    pub base: Link,
}

pub fn herd(fixed: &crate::core::HerdReport, jittered: &crate::core::HerdReport) -> HerdChart {
    const W: f64 = 1000.0;
    const LEFT: f64 = 150.0;
    const ROW: f64 = 64.0;
    let peak = fixed
        .peak_per_bucket()
        .max(jittered.peak_per_bucket())
        .max(1) as f64;
    let rows = [
        (fixed, "fixed schedule", "fixed"),
        (jittered, "±25% jitter", "jittered"),
    ]
    .into_iter()
    .enumerate()
    .map(|(row, (report, label, class))| {
        let base = 10.0 + ROW * (row as f64 + 1.0);
        let buckets = report.per_bucket.len().max(1) as f64;
        let bar_w = (W - LEFT - 10.0) / buckets;
        HerdRow {
            class,
            label: Text {
                x: 8.0,
                y: base - 26.0,
                text: label.to_owned(),
            },
            peak: Text {
                x: 8.0,
                y: base - 8.0,
                text: format!(
                    "peak {} / {} ms",
                    report.peak_per_bucket(),
                    report.bucket_ms
                ),
            },
            bars: report
                .per_bucket
                .iter()
                .enumerate()
                .filter(|(_, c)| **c > 0)
                .map(|(i, count)| {
                    let h = (ROW - 12.0) * f64::from(*count) / peak;
                    Bar {
                        x: LEFT + bar_w * i as f64,
                        y: base - h,
                        w: bar_w.max(0.6),
                        h: h.max(0.6),
                    }
                })
                .collect(),
            base: Link {
                x1: LEFT,
                y1: base,
                x2: W - 10.0,
                y2: base,
            },
        }
    })
    .collect();
    HerdChart { rows }
}

/// Escapes text for SVG/HTML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Lanes and ticks as SVG markup.
pub fn grid_markup(g: &Grid) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(4 * 1024);
    for (i, l) in g.lanes.iter().enumerate() {
        let _ = write!(
            out,
            r#"<rect class="lane lane{}" x="0" y="{}" width="{}" height="{}"></rect><text class="lane-name {}" x="12" y="{}">{}</text>"#,
            i % 2,
            n(l.y),
            n(VIEW_W),
            n(l.h),
            if l.infra { "infra" } else { "actor" },
            n(l.y + l.h / 2.0 + 6.0),
            esc(&l.name)
        );
    }
    for t in &g.ticks {
        let _ = write!(
            out,
            r#"<line class="tick" x1="{x}" x2="{x}" y1="{}" y2="{}"></line><text class="tick-label" x="{x}" y="{}">{}</text>"#,
            n(TOP),
            n(g.bottom + 4.0),
            n(g.bottom + 20.0),
            esc(&t.label),
            x = n(t.x)
        );
    }
    out
}

/// The herd chart as SVG markup (its texts are fixed words and numbers: nothing to escape).
pub fn herd_markup(chart: &HerdChart) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(16 * 1024);
    for r in &chart.rows {
        let _ = write!(
            out,
            r#"<text class="herd-label" x="{}" y="{}">{}</text><text class="herd-peak" x="{}" y="{}">{}</text>"#,
            n(r.label.x),
            n(r.label.y),
            r.label.text,
            n(r.peak.x),
            n(r.peak.y),
            r.peak.text
        );
        for b in &r.bars {
            let _ = write!(
                out,
                r#"<rect class="herd-bar {}" x="{}" y="{}" width="{}" height="{}"></rect>"#,
                r.class,
                n(b.x),
                n(b.y),
                n(b.w),
                n(b.h)
            );
        }
        let _ = write!(
            out,
            r#"<line class="tick" x1="{}" x2="{}" y1="{}" y2="{}"></line>"#,
            n(r.base.x1),
            n(r.base.x2),
            n(r.base.y1),
            n(r.base.y2)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::{run, FencingPolicy, Scenario};

    #[test]
    fn numbers_without_float_formatting() {
        assert_eq!(n(520.0), "520.0");
        assert_eq!(n(12.345), "12.3");
        assert_eq!(n(-3.06), "-3.1");
        assert_eq!(n(0.04), "0.0");
    }

    /// The page sizes the timeline's box by this ratio and fits the drawing into it: it must
    /// be the view box's own width over height, for 2 to 5 lanes of clients alike.
    #[test]
    fn the_box_takes_the_drawings_aspect_ratio() {
        for sc in [
            Scenario::gc_pause(),
            (crate::core::deck::find("unsafe-release").unwrap().build)(),
        ] {
            let g = Geometry::of(&run(&sc));
            let vb: Vec<String> = g.view_box().split(' ').map(str::to_owned).collect();
            assert_eq!(g.aspect_ratio(), format!("{} / {}", vb[2], vb[3]));
        }
        let two = Geometry::of(&run(&Scenario::gc_pause()));
        let three = Geometry::of(&run(&(crate::core::deck::find("unsafe-release")
            .unwrap()
            .build)()));
        assert!(
            three.height() > two.height(),
            "a third client's lane makes it taller"
        );
    }

    #[test]
    fn headline_marks_the_rejected_write() {
        let t = run(&Scenario::gc_pause());
        let m = model(&t, t.len(), true);
        assert_eq!(
            m.markers.len(),
            t.events.len() - 2,
            "no markers for pause start/end"
        );
        let rejected: Vec<_> = m
            .markers
            .iter()
            .filter(|k| k.verdict == Verdict::Rejected)
            .collect();
        assert_eq!(rejected.len(), 1);
        assert_eq!(rejected[0].shape, Shape::Write);
        assert_eq!(rejected[0].result, "stale_fence");
        assert_eq!(rejected[0].glyph, "✗");
        assert!(rejected[0].link.is_some());
        let bands: Vec<_> = m.bands.iter().map(|b| b.label.text.as_str()).collect();
        assert_eq!(bands, ["A · token 33", "B · token 34"]);
        assert_eq!(m.conflicts.len(), 1);
        assert_eq!(
            m.conflicts[0].label.as_ref().map(|l| l.text.as_str()),
            Some(CONFLICT_LABEL)
        );
        let off = run(&Scenario::gc_pause().with_policy(FencingPolicy::Off));
        let late = model(&off, off.len(), true)
            .markers
            .into_iter()
            .filter(|k| k.verdict == Verdict::Late)
            .count();
        assert_eq!(late, 1);
    }

    #[test]
    fn keys_are_unique_and_survive_a_drag() {
        let sc = Scenario::gc_pause();
        let a = model(&run(&sc), 99, true);
        let mut keys: Vec<_> = a.markers.iter().map(|m| m.key).collect();
        keys.dedup();
        assert_eq!(keys.len(), a.markers.len());
        let moved = sc.clone().with_pause(
            0,
            crate::core::Pause {
                start: 6,
                duration: 50,
            },
        );
        let b = model(&run(&moved), 99, true);
        let same = b
            .markers
            .iter()
            .filter(|m| a.markers.iter().any(|o| o.key == m.key))
            .count();
        assert_eq!(same, b.markers.len(), "a 1 ms nudge keeps every row");
        // Rows come by lane, then by step: a reorder across lanes moves no node.
        let order: Vec<_> = a.markers.iter().map(|m| (m.key.lane, m.step)).collect();
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(order, sorted);
        assert!(a.bands.windows(2).all(|w| w[0].key <= w[1].key));
        assert!(a.markers.iter().zip(&b.markers).any(|(x, y)| x.x != y.x));
    }

    #[test]
    fn herd_chart_draws_both_schedules() {
        let fixed = crate::core::renewal_herd(200, 30, false, 7, 120);
        let jittered = crate::core::renewal_herd(200, 30, true, 7, 120);
        let chart = herd(&fixed, &jittered);
        assert_eq!(chart.rows.len(), 2);
        assert_eq!(
            (chart.rows[0].class, chart.rows[1].class),
            ("fixed", "jittered")
        );
        assert!(chart.rows.iter().all(|r| !r.bars.is_empty()));
        assert!(fixed.peak_per_bucket() > jittered.peak_per_bucket());
        assert_eq!(
            chart.rows[0].peak.text,
            format!("peak {} / {} ms", fixed.peak_per_bucket(), fixed.bucket_ms)
        );
        let svg = herd_markup(&chart);
        let bars: usize = chart.rows.iter().map(|r| r.bars.len()).sum();
        assert_eq!(svg.matches("<rect ").count(), bars);
        assert_eq!(
            svg.matches(r#"class="herd-bar fixed""#).count(),
            chart.rows[0].bars.len()
        );
    }

    #[test]
    fn grid_markup_names_every_lane_escaped() {
        let mut sc = Scenario::gc_pause();
        sc.actors[1].name = "B<&>".to_owned();
        let svg = grid_markup(&grid(&run(&sc)));
        assert!(
            svg.contains(r#"class="lane-name actor" x="12" y="55.0">A</text>"#),
            "{svg}"
        );
        assert!(svg.contains(">B&lt;&amp;&gt;</text>"), "{svg}");
        assert_eq!(svg.matches(r#"class="tick-label""#).count(), 11);
        assert_eq!(
            esc(r#"<a href="x">&'"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }

    #[test]
    fn labels_never_overlap_a_label_or_another_marker() {
        let t = run(&Scenario::unsafe_release());
        let m = model(&t, t.len(), true);
        assert!(
            m.markers.iter().filter(|k| k.label.is_some()).count() < m.markers.len(),
            "crowded labels are left off"
        );
        let mut l = Labels::default();
        let rows = [50.0, 80.0];
        assert_eq!(l.place(0, 100.0, &rows, "lock_held"), Some(50.0));
        assert_eq!(l.place(1, 110.0, &rows, "lock_held"), Some(80.0));
        assert_eq!(
            l.place(2, 105.0, &rows, "lock_held"),
            None,
            "both rows taken"
        );
        assert_eq!(
            l.place(3, 400.0, &rows, "lock_held"),
            Some(50.0),
            "far enough away"
        );
        // A marker is an obstacle for every label but its own.
        l.block((592.0, 42.0, 608.0, 58.0), Some(9));
        assert_eq!(l.place(4, 600.0, &rows, "acquire #34"), Some(80.0));
        let mut own = Labels::default();
        own.block((592.0, 42.0, 608.0, 58.0), Some(9));
        assert_eq!(own.place(9, 600.0, &rows, "acquire #34"), Some(50.0));
    }

    #[test]
    fn a_label_with_no_room_centred_goes_beside_its_marker_inside_the_drawing() {
        let rows = [50.0, 80.0];
        let text = "release #34"; // 87.4 units wide
        let half = Labels::width(text) / 2.0;
        // Where it goes beside a marker at `x`, with `block` taken.
        let beside = |block: Option<Rect>, x: f64| {
            let mut l = Labels::default();
            if let Some(b) = block {
                l.block(b, None);
                assert_eq!(l.place(1, x, &rows, text), None, "no room centred");
            }
            l.place_beside(1, x, &rows, text)
        };
        // It starts at the marker, or else ends there; not at all if both sides are taken.
        let cases = [
            (Some((560.0, 0.0, 640.0, 100.0)), 600.0, None),
            (Some((590.0, 0.0, 610.0, 100.0)), 600.0, None),
            (Some((560.0, 0.0, 605.0, 100.0)), 610.0, Some(610.0 + half)),
            (Some((615.0, 0.0, 700.0, 100.0)), 610.0, Some(610.0 - half)),
            // Never over the lane names, nor past the right edge.
            (None, LEFT + 10.0, Some(LEFT + 10.0 + half)),
            (Some((LEFT + 20.0, 0.0, VIEW_W, 100.0)), LEFT + 10.0, None),
            (None, VIEW_W - 10.0, Some(VIEW_W - 10.0 - half)),
        ];
        for (block, x, centre) in cases {
            assert_eq!(
                beside(block, x),
                centre.map(|c| (c, 50.0)),
                "{block:?} at {x}"
            );
        }
    }

    #[test]
    fn labels_left_off_centred_go_beside_their_marker() {
        // In the headline, B's release has no room centred above or below; it goes beside.
        let t = run(&Scenario::gc_pause());
        let m = model(&t, t.len(), true);
        let beside = |marker: &Marker, label: &Text| {
            ((label.x - marker.x).abs() - Labels::width(&label.text) / 2.0).abs() < 1e-9
        };
        let release = m
            .markers
            .iter()
            .find(|k| story::marker_label(&t, &t.events[k.event]) == "release #34")
            .expect("B's release is drawn");
        let label = release.label.as_ref().expect("and labelled");
        assert!(beside(release, label), "{label:?} beside x={}", release.x);
        // Every label is centred on its marker, or starts or ends at it.
        for (marker, label) in m
            .markers
            .iter()
            .filter_map(|k| k.label.as_ref().map(|l| (k, l)))
        {
            assert!(label.x == marker.x || beside(marker, label), "{label:?}");
        }
    }

    #[test]
    fn a_partition_is_a_band_on_the_cut_off_lane_with_its_label_clear_of_markers() {
        let t = run(&Scenario::partition());
        let g = Geometry::of(&t);
        let m = model(&t, t.len(), true);
        let cut = m.cut.expect("the partition is drawn");
        assert_eq!((cut.body.x, cut.body.x + cut.body.w), (g.x(15), g.x(65)));
        let lane_top = g.lane_mid(0) - g.lane_h() / 2.0;
        assert!(cut.body.y >= lane_top && cut.body.y + cut.body.h <= lane_top + g.lane_h());
        assert_eq!(
            cut.title,
            "A cut off from the lock service (not from storage), t=15 to t=65"
        );
        let label = cut.label.expect("the label fits between A's markers");
        assert_eq!(label.text, CUT_LABELS[0]);
        let half = Labels::width(&label.text);
        for mk in &m.markers {
            let r = f64::from(mk.ring);
            let clear =
                mk.x + r < label.x || mk.x - r > label.x + half || (mk.y - label.y).abs() > 17.0;
            assert!(clear, "marker at {},{} under the label", mk.x, mk.y);
            if let Some(l) = &mk.label {
                let w = Labels::width(&l.text) / 2.0;
                let apart =
                    l.x + w < label.x || l.x - w > label.x + half || (l.y - label.y).abs() >= 17.0;
                assert!(apart, "{} overlaps the partition label", l.text);
            }
        }
        assert!(model(&run(&Scenario::gc_pause()), 0, true).cut.is_none());
    }

    #[test]
    fn live_pauses_are_draggable_and_name_their_cause() {
        let t = run(&Scenario::gc_pause());
        let live = model(&t, 0, true);
        assert_eq!(live.pauses.len(), 1);
        let p = &live.pauses[0];
        assert!(p.draggable);
        assert_eq!((p.actor, p.name.as_str()), (0, "A"));
        assert_eq!(p.label.text, "GC pause 50 ms");
        assert_eq!(p.grip().x, p.body.x + p.body.w - 5.0);
        // As a slider for the keyboard: its start, within 0..=horizon − length.
        assert_eq!((p.start, p.max_start), (5, t.scenario.horizon - 50));
        assert_eq!(p.span, "starts at 5 ms, lasts 50 ms");
        let copy = model(&t, 0, false);
        assert!(
            !copy.pauses[0].draggable,
            "the fork's copy is not draggable"
        );
        assert_eq!(copy.pauses[0].label.text, "pause 50 ms");
    }

    #[test]
    fn a_stalled_job_is_not_drawn_as_a_gc_pause() {
        let t = run(&(crate::core::deck::find("handoff-barrier").unwrap().build)());
        assert_eq!(t.scenario.actors[0].pause_cause, PauseCause::Stall);
        let m = model(&t, t.len(), true);
        assert_eq!(m.pauses[0].label.text, "stall 15.0 s");
        assert_eq!(m.pauses[0].span, "starts at 1.0 s, lasts 15.0 s");
    }

    #[test]
    fn steps_dim_the_future() {
        let t = run(&Scenario::gc_pause());
        let at = |step| {
            model(&t, step, true)
                .markers
                .iter()
                .filter(|m| m.state == State::Current)
                .count()
        };
        assert_eq!(at(0), 0);
        assert_eq!(at(1), 1);
        let m = model(&t, 1, true);
        assert!(m.markers.iter().skip(1).all(|k| k.state == State::Future));
        assert!(m.markers[0].class().starts_with("ev current op ok c0"));
    }

    #[test]
    fn grid_has_every_lane_and_tick() {
        let t = run(&Scenario::gc_pause());
        let g = grid(&t);
        let names: Vec<_> = g.lanes.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["A", "B", "lease", "storage"]);
        assert_eq!(g.ticks.len(), 11);
        assert_eq!(g.ticks[10].label, "100");
        assert_eq!(g.ticks[5].x, 78.0 + 450.0);
    }

    /// Back-to-back short leases (lock-queue: B holds 34 for 5 ms, then C gets 35): a label
    /// that would run into the next band takes its short form, so no two band labels meet.
    #[test]
    fn a_band_too_short_for_its_label_gets_the_short_one() {
        let sc = crate::core::deck::find("lock-queue")
            .map(|e| (e.build)())
            .unwrap();
        let m = model(&run(&sc), 0, false);
        let texts: Vec<_> = m.bands.iter().map(|b| b.label.text.as_str()).collect();
        assert_eq!(texts, ["A · token 33", "B·34", "C · token 35"]);
        let right = |b: &Band| b.label.x + Labels::width(&b.label.text);
        for pair in m.bands.windows(2) {
            assert!(right(&pair[0]) <= pair[1].label.x, "{texts:?}");
            assert!(right(&pair[0]) <= pair[1].bar.x + 0.5, "{texts:?}");
        }
    }
}
