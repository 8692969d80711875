//! The timeline as a typed model, read off a trace: lanes, axis, lease bands, belief bars,
//! conflict windows, one marker per event, the pause blocks and the cursor.
//!
//! Pure and native: tests assert its fields. The Leptos shell renders it with keyed rows,
//! so every row has a stable [`Key`] (lane, kind, nth occurrence) and a marker keeps its
//! node while a drag moves it.

//!
//! Split by what each part lays out: [`layout`] reads the trace into the drawing's rows,
//! [`labels`] keeps their words apart, [`herd`] draws the renewal herd; this file holds the
//! model's types, the geometry and the type scale they share, and the grid's markup.

use std::mem::Discriminant;

use crate::core::{EventKind, Lane, LeaseEnd, Millis, Trace};
use crate::view::geometry::Scale;

mod herd;
mod labels;
mod layout;

pub use herd::{herd, herd_markup, HerdChart, HerdRow};
pub use labels::Labels;
pub use layout::{drawn, grid, grid_in, model, model_in, revealed_in};

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

/// The drawing's type scale. Its words are sized in user units, so on screen a label is its
/// size times the drawing's scale. Presenter mode takes `Large`: 19 units, which the stage's
/// box at 1024×768 draws at 0.97 px a unit or more (≥ 18 CSS px), and the layout follows it
/// (taller lanes, a wider name column, label boxes and offsets grown to match).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Type {
    #[default]
    Normal,
    Large,
}

impl Type {
    /// A marker label's size (the partition's and every label's in `Large`), in user units.
    pub fn label(self) -> f64 {
        match self {
            Type::Normal => 12.5,
            Type::Large => 19.0,
        }
    }

    /// A lease band's and a pause block's label size.
    pub fn band(self) -> f64 {
        match self {
            Type::Normal => 13.0,
            Type::Large => 19.0,
        }
    }

    /// A marker label's width per character, roughly (DejaVu Sans at weight 600 in
    /// Chromium; digits run widest).
    pub fn char_w(self) -> f64 {
        match self {
            Type::Normal => 7.4,
            Type::Large => 12.4,
        }
    }

    /// A lease band's label width per character (weight 700).
    pub fn band_char_w(self) -> f64 {
        match self {
            Type::Normal => 7.8,
            Type::Large => 12.6,
        }
    }

    /// A tick label's size.
    pub fn tick(self) -> f64 {
        match self {
            Type::Normal => 12.0,
            Type::Large => 19.0,
        }
    }
}

/// Geometry of one trace's timeline, in SVG user units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Geometry {
    pub scale: Scale,
    pub actors: usize,
    pub ty: Type,
}

impl Geometry {
    pub fn of(t: &Trace) -> Self {
        Self::typed(t, Type::Normal)
    }

    /// In type `ty`: the lane names' column widens with their size, the plot takes the rest.
    pub fn typed(t: &Trace, ty: Type) -> Self {
        let left = match ty {
            Type::Normal => LEFT,
            Type::Large => 108.0,
        };
        Self {
            scale: Scale {
                left,
                width: PLOT_W - (left - LEFT),
                horizon: t.scenario.horizon,
            },
            actors: t.scenario.actors.len(),
            ty,
        }
    }

    /// Where the plot begins, right of the lane names.
    pub fn left(&self) -> f64 {
        self.scale.left
    }

    pub fn lanes(&self) -> usize {
        self.actors + 2
    }

    /// In `Large`, lanes are as tall as two rows of its labels allow while the drawing
    /// keeps its 1024×768 scale: at most 275 units high for five lanes.
    pub fn lane_h(&self) -> f64 {
        match (self.ty, self.actors >= 3) {
            (Type::Normal, false) => LANE_H,
            (Type::Normal, true) => SLIM_LANE_H,
            (Type::Large, false) => 56.0,
            (Type::Large, true) => 45.0,
        }
    }

    /// The time axis under the lanes: the tick labels' height and air.
    pub fn axis_h(&self) -> f64 {
        match self.ty {
            Type::Normal => AXIS_H,
            Type::Large => 26.0,
        }
    }

    /// A lease band's height on the lease lane.
    pub fn band_h(&self) -> f64 {
        match self.ty {
            Type::Normal => 22.0,
            Type::Large => 28.0,
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
        self.bottom() + self.axis_h()
    }

    /// The tick labels' baseline, under the lanes.
    pub fn tick_y(&self) -> f64 {
        self.bottom()
            + match self.ty {
                Type::Normal => 20.0,
                Type::Large => 22.0,
            }
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

/// `v` rounded to the tenth of a unit that [`n`] writes.
fn tenth(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
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
    /// The tick labels' baseline.
    pub tick_y: f64,
    /// The type its names and ticks are set in.
    pub ty: Type,
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
    /// Whether the cursor has reached it (the reveal shows its words from then on, whole).
    pub begun: bool,
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
    /// Whether its grant has happened by the step drawn (the reveal shows its words from
    /// then on, whole, and its bar up to the cursor).
    pub begun: bool,
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
    /// Whether the cursor has reached it (the reveal shows its words from then on, whole).
    pub begun: bool,
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
    /// Beside a fork: it ended otherwise in the other run, or happened in this one only.
    pub differs: bool,
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
            "ev {state} {shape} {} c{}{}",
            self.verdict.code(),
            self.colour,
            if self.differs { " differs" } else { "" }
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
    /// Whether it has started by the step drawn: the reveal shows its words from then on,
    /// whole, even at the step it starts (when none of its body is left of the cursor).
    pub begun: bool,
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
    /// Where the block's group is placed: its body's top-left, to the tenth of a unit that
    /// [`n`] writes. Its parts sit at fixed offsets inside the group, so a move of the pause
    /// rewrites the group's one `transform` instead of every part's `x`.
    pub fn origin(&self) -> (f64, f64) {
        (tenth(self.body.x), tenth(self.body.y))
    }

    /// A box of the block (its body, a touch target, the grip) inside its group. Corners go
    /// by tenths, so origin + offset lands where the box's own `x` and `y` would have.
    pub fn local(&self, b: Bar) -> Bar {
        let (x, y) = self.origin();
        Bar {
            x: tenth(b.x) - x,
            y: tenth(b.y) - y,
            ..b
        }
    }

    /// The label's anchor inside the group.
    pub fn label_at(&self) -> (f64, f64) {
        let (x, y) = self.origin();
        (tenth(self.label.x) - x, tenth(self.label.y) - y)
    }

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
    let mut out = lanes_markup(g, VIEW_W);
    for t in &g.ticks {
        let _ = write!(
            out,
            r#"<line class="tick" x1="{x}" x2="{x}" y1="{}" y2="{}"></line><text class="tick-label" x="{x}" y="{}">{}</text>"#,
            n(TOP),
            n(g.bottom + 4.0),
            n(g.tick_y),
            esc(&t.label),
            x = n(t.x)
        );
    }
    out
}

/// The lanes' names on their lanes' ground, `width` units wide: the grid's, and what a
/// phone pins at the box's left edge while the drawing scrolls sideways under it.
pub fn lanes_markup(g: &Grid, width: f64) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(4 * 1024);
    for (i, l) in g.lanes.iter().enumerate() {
        let _ = write!(
            out,
            r#"<rect class="lane lane{}" x="0" y="{}" width="{}" height="{}"></rect><text class="lane-name {}" x="12" y="{}">{}</text>"#,
            i % 2,
            n(l.y),
            n(width),
            n(l.h),
            if l.infra { "infra" } else { "actor" },
            n(l.y + l.h / 2.0 + if g.ty == Type::Large { 7.0 } else { 6.0 }),
            esc(&l.name)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::labels::Rect;
    use super::*;
    use crate::core::{run, FencingPolicy, Scenario};
    use crate::core::{story, PauseCause};

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
        let half = Labels::default().width(text) / 2.0;
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
            ((label.x - marker.x).abs() - Labels::default().width(&label.text) / 2.0).abs() < 1e-9
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
        let half = Labels::default().width(&label.text);
        for mk in &m.markers {
            let r = f64::from(mk.ring);
            let clear =
                mk.x + r < label.x || mk.x - r > label.x + half || (mk.y - label.y).abs() > 17.0;
            assert!(clear, "marker at {},{} under the label", mk.x, mk.y);
            if let Some(l) = &mk.label {
                let w = Labels::default().width(&l.text) / 2.0;
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
        // Inside its group, placed at the body's corner: every part where its own
        // coordinates put it, to the tenth `n` writes.
        let (x, y) = p.origin();
        assert_eq!(n(x), n(p.body.x));
        for b in [p.body, p.hit(), p.grip_hit(), p.grip()] {
            let l = p.local(b);
            assert_eq!(
                (n(x + l.x), n(y + l.y), l.w, l.h),
                (n(b.x), n(b.y), b.w, b.h)
            );
        }
        let (lx, ly) = p.label_at();
        assert_eq!((n(x + lx), n(y + ly)), (n(p.label.x), n(p.label.y)));
        assert_eq!(
            p.local(p.body),
            Bar {
                x: 0.0,
                y: 0.0,
                ..p.body
            }
        );
        // A move changes where the group is placed, and nothing inside it.
        let sc = t.scenario.clone().with_pause(
            0,
            crate::core::Pause {
                start: 17,
                duration: 50,
            },
        );
        let q = &model(&run(&sc), 0, true).pauses[0];
        assert_ne!(q.origin(), p.origin());
        let drawn = |b: Bar| [b.x, b.y, b.w, b.h].map(n);
        for part in [PauseBlock::hit, PauseBlock::grip_hit, PauseBlock::grip] {
            assert_eq!(drawn(q.local(part(q))), drawn(p.local(part(p))));
        }
        let (a, b) = (q.label_at(), p.label_at());
        assert_eq!((n(a.0), n(a.1)), (n(b.0), n(b.1)));
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
        let right = |b: &Band| b.label.x + Labels::default().width(&b.label.text);
        for pair in m.bands.windows(2) {
            assert!(right(&pair[0]) <= pair[1].label.x, "{texts:?}");
            assert!(right(&pair[0]) <= pair[1].bar.x + 0.5, "{texts:?}");
        }
    }

    /// Presenting (`Large`): 19-unit labels in a drawing no taller than 275 units, so the
    /// stage's 988×267 px box at 1024×768 draws each at 18 px or more; and in every deck
    /// entry, no marker label, band label or pause label overlaps another, nor runs off the
    /// drawing or over the lane names.
    #[test]
    fn large_type_fits_the_projector_and_nothing_overlaps() {
        assert!(Type::Large.label() * 267.0 / 275.0 >= 18.0);
        for entry in crate::core::deck::DECK {
            for policy in [FencingPolicy::Off, FencingPolicy::Strict] {
                let t = run(&(entry.build)().with_policy(policy));
                let g = Geometry::typed(&t, Type::Large);
                assert!(
                    g.height() <= 275.0,
                    "{}: {} units high",
                    entry.id,
                    g.height()
                );
                let m = model_in(&t, t.len(), true, Type::Large);
                let sizer = Labels::new(&g);
                let mut boxes: Vec<(String, Rect)> = Vec::new();
                for k in &m.markers {
                    if let Some(l) = &k.label {
                        boxes.push((l.text.clone(), sizer.label_box(l.x, l.y, &l.text)));
                    }
                }
                for b in m.bands.iter().filter(|b| !b.label.text.is_empty()) {
                    let w = b.label.text.chars().count() as f64 * Type::Large.band_char_w();
                    let y = b.label.y - 0.38 * Type::Large.band();
                    boxes.push((
                        b.label.text.clone(),
                        (b.label.x, y - 11.7, b.label.x + w, y + 11.7),
                    ));
                }
                for (i, (a, ra)) in boxes.iter().enumerate() {
                    assert!(
                        ra.0 >= g.left() - 2.0 && ra.2 <= VIEW_W,
                        "{}: {a} off the plot",
                        entry.id
                    );
                    for (b, rb) in &boxes[i + 1..] {
                        let apart = ra.2 <= rb.0 || rb.2 <= ra.0 || ra.3 <= rb.1 || rb.3 <= ra.1;
                        assert!(apart, "{} {policy:?}: {a} on {b}", entry.id);
                    }
                }
                assert!(boxes.len() >= 4, "{}: labelled", entry.id);
            }
        }
    }
}
