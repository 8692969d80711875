//! Keeps the timeline's words apart: every label takes a box that touches no other box; and
//! where a marker's words may go (above or below it, in its lane) and in what order they are placed.

use super::{Geometry, Marker, Shape, State, Text, Type, LEFT, TOP, VIEW_W};

/// A box in user units: left, top, right, bottom.
pub type Rect = (f64, f64, f64, f64);

/// Keeps every label and marker on the timeline apart. Obstacles (markers, band labels) are
/// registered first; a marker label then takes the first of its candidate positions that
/// touches nothing (its own marker aside), or is left off (the marker keeps its tooltip and
/// the narration says it all). Every box is sized from the type's label size.
pub struct Labels {
    /// Each box with the event it belongs to, if any.
    taken: Vec<(Rect, Option<usize>)>,
    /// Marker labels' size and width per character, in user units.
    size: f64,
    char_w: f64,
    /// Where the plot begins: left of it are the lane names.
    left: f64,
}

impl Default for Labels {
    fn default() -> Self {
        Self {
            taken: Vec::new(),
            size: Type::Normal.label(),
            char_w: Type::Normal.char_w(),
            left: LEFT,
        }
    }
}

impl Labels {
    /// For the drawing `g`: the lane names and the time axis are taken from the start.
    pub fn new(g: &Geometry) -> Self {
        let mut labels = Self {
            taken: Vec::new(),
            size: g.ty.label(),
            char_w: g.ty.char_w(),
            left: g.left(),
        };
        labels.block((0.0, TOP, g.left() - 2.0, g.bottom()), None);
        // The tick labels, from their ascent (as Chromium measures a text's box).
        let ticks = g.tick_y() - 0.95 * g.ty.tick();
        labels.block((0.0, ticks, VIEW_W, g.height()), None);
        labels
    }

    /// Roughly the width of `text` at the marker label size, in user units.
    pub(super) fn width(&self, text: &str) -> f64 {
        text.chars().count() as f64 * self.char_w + 0.48 * self.size
    }

    /// The box of a marker label centred on `x` with its baseline at `y`, with a margin
    /// for the font's real ascent, descent and width (measured in Chromium).
    pub(super) fn label_box(&self, x: f64, y: f64, text: &str) -> Rect {
        let half = self.reach(text);
        (
            x - half,
            y - 1.04 * self.size,
            x + half,
            y + 0.32 * self.size,
        )
    }

    /// How far a label's box reaches either side of its centre.
    pub(super) fn reach(&self, text: &str) -> f64 {
        self.width(text) / 2.0 + 0.32 * self.size
    }

    pub fn block(&mut self, r: Rect, owner: Option<usize>) {
        self.taken.push((r, owner));
    }

    pub(super) fn free(&self, r: Rect, owner: Option<usize>) -> bool {
        !self.taken.iter().any(|(t, o)| {
            (owner.is_none() || *o != owner) && r.0 < t.2 && t.0 < r.2 && r.1 < t.3 && t.1 < r.3
        })
    }

    /// The first baseline in `ys` where a label of `text` centred on `x` is free and inside
    /// the drawing's right edge; taken.
    pub fn place(&mut self, owner: usize, x: f64, ys: &[f64], text: &str) -> Option<f64> {
        let inside = x + self.reach(text) <= VIEW_W;
        let spots = ys.iter().map(|&y| (x, y)).filter(|_| inside);
        self.take_first(owner, text, spots).map(|(_, y)| y)
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
        let half = self.width(text) / 2.0;
        let (left, right) = (self.left + self.reach(text), VIEW_W - self.reach(text));
        let sides = ys
            .iter()
            .flat_map(|&y| [(x + half, y), (x - half, y)])
            .filter(move |&(cx, _)| cx >= left && cx <= right);
        self.take_first(owner, text, sides)
    }

    /// For the label a step is about, when neither centred nor beside has room: on its
    /// marker's own line, right of it or else left of it, `gap` clear of its middle; taken.
    /// Returns the label's centre and baseline.
    pub fn place_level(
        &mut self,
        owner: usize,
        (x, y): (f64, f64),
        gap: f64,
        text: &str,
    ) -> Option<(f64, f64)> {
        let reach = self.reach(text);
        let line = y + 0.36 * self.size;
        let (left, right) = (self.left + reach, VIEW_W - reach);
        let sides = [x + gap + reach, x - gap - reach]
            .into_iter()
            .map(move |cx| (cx, line))
            .filter(move |&(cx, _)| cx >= left && cx <= right);
        self.take_first(owner, text, sides)
    }

    /// For the label a step is about, when no other place has room: slid along
    /// a baseline in `ys`, the nearest first, as far as to start or end a margin past `x`
    /// (so it still spans its marker), inside the drawing and clear of the lane names;
    /// taken. Returns the label's centre and baseline.
    pub fn place_near(
        &mut self,
        owner: usize,
        x: f64,
        ys: &[f64],
        text: &str,
    ) -> Option<(f64, f64)> {
        let reach = self.reach(text);
        let (left, right) = (self.left + reach, VIEW_W - reach);
        let steps = (reach / 4.0).ceil() as i32;
        let shifts = (0..=steps)
            .flat_map(|k| [k, -k])
            .map(|k| f64::from(k) * 4.0);
        let spots = shifts
            .flat_map(|d| ys.iter().map(move |&y| (x + d, y)))
            .filter(move |&(cx, _)| cx >= left && cx <= right);
        self.take_first(owner, text, spots)
    }

    /// The first of `spots` (a label's centre and baseline) where `text` is free of every
    /// box but `owner`'s own; taken.
    fn take_first(
        &mut self,
        owner: usize,
        text: &str,
        mut spots: impl Iterator<Item = (f64, f64)>,
    ) -> Option<(f64, f64)> {
        let (x, y) = spots.find(|&(x, y)| self.free(self.label_box(x, y, text), Some(owner)))?;
        self.block(self.label_box(x, y, text), Some(owner));
        Some((x, y))
    }
}

/// A marker's words and where they may go: its place in the markers, the baselines to try
/// (centred above or below it), the text.
pub(super) type Wanted = (usize, Vec<f64>, String);

/// Where a marker's label may sit: the baselines above or below it, clear of it (the label's
/// box aside). Writes label below first, everything else above; then the other side. On a
/// client's lane a label stays in that lane (its box's middle inside it): one reaching into
/// the next client's lane would read as that client's.
pub(super) fn baselines(g: &Geometry, lane: usize, shape: Shape, y: f64) -> Vec<f64> {
    let size = g.ty.label();
    let above = |gap: f64| y - gap - 0.32 * size;
    let below = |gap: f64| y + gap + 1.04 * size;
    let ys = match shape {
        Shape::Write => [below(14.0), above(10.0)],
        Shape::Expiry => [above(2.0), below(9.0)],
        Shape::Op => [above(8.0), below(11.0)],
    };
    let mid = g.lane_mid(lane);
    let in_lane = |ly: &f64| lane >= g.actors || (ly - 0.36 * size - mid).abs() <= g.lane_h() / 2.0;
    ys.into_iter().filter(in_lane).collect()
}

/// Places the words of the markers in state `only` (all of them if `None`), in event order:
/// centred above or below the marker where free; then, for those with no room there, beside
/// it (starting or ending at it), or, for the current step's, on its line or anywhere along
/// its row that still spans it. Only labels that had no place centred move, so every label
/// placed centred keeps its place; one with no place at all is left off (the marker keeps
/// its tooltip).
pub(super) fn label(
    markers: &mut [Marker],
    wanted: &[Wanted],
    only: Option<State>,
    labels: &mut Labels,
) {
    let slide = only == Some(State::Current);
    let mut left_off = Vec::new();
    for (k, ys, text) in wanted {
        let m = &mut markers[*k];
        if only.is_some_and(|s| s != m.state) {
            continue;
        }
        match labels.place(m.event, m.x, ys, text) {
            Some(y) => {
                m.label = Some(Text {
                    x: m.x,
                    y,
                    text: text.clone(),
                })
            }
            None => left_off.push((*k, ys, text)),
        }
    }
    for (k, ys, text) in left_off {
        let m = &mut markers[k];
        let placed = labels.place_beside(m.event, m.x, ys, text);
        let level = |labels: &mut Labels| {
            let gap = f64::from(m.ring) + 2.0;
            labels.place_level(m.event, (m.x, m.y), gap, text)
        };
        let near = |labels: &mut Labels| labels.place_near(m.event, m.x, ys, text);
        let placed = placed.or_else(|| slide.then(|| level(labels).or_else(|| near(labels)))?);
        if let Some((x, y)) = placed {
            m.label = Some(Text {
                x,
                y,
                text: text.clone(),
            });
        }
    }
}
