//! The timeline drawing as SVG markup, computed from a trace: lanes, axis, lease bands,
//! belief bars, conflict windows and one marker per event.
//!
//! Pure and native (so it is unit-tested without a browser). The Leptos shell keeps one
//! `<g>` equal to it by applying [`crate::markup::diff`]'s edits, so a drag moves a few
//! attributes instead of rebuilding the drawing; only the draggable pause blocks are live
//! elements.

use std::fmt::Write;

use crate::core::story;
use crate::core::{EventKind, Lane, LeaseEnd, Millis, PauseCause, Trace};
use crate::lab::Scale;

pub const VIEW_W: i64 = 1000;
pub const LEFT: i64 = 78;
pub const PLOT_W: i64 = 900;
pub const TOP: i64 = 24;
/// Lane height; scenarios with three or more clients get slimmer lanes so the whole page
/// still fits a 1280×720 projector.
pub const LANE_H: i64 = 50;
pub const SLIM_LANE_H: i64 = 42;
pub const AXIS_H: i64 = 22;

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
                left: LEFT as f64,
                width: PLOT_W as f64,
                horizon: t.scenario.horizon,
            },
            actors: t.scenario.actors.len(),
        }
    }

    pub fn lanes(&self) -> usize {
        self.actors + 2
    }

    pub fn lane_h(&self) -> i64 {
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
        (TOP + self.lane_h() * i as i64) as f64 + self.lane_h() as f64 / 2.0
    }

    pub fn bottom(&self) -> f64 {
        (TOP + self.lane_h() * self.lanes() as i64) as f64
    }

    pub fn height(&self) -> f64 {
        self.bottom() + AXIS_H as f64
    }

    pub fn x(&self, t: Millis) -> f64 {
        self.scale.x(t)
    }

    pub fn view_box(&self) -> String {
        format!("0 0 {VIEW_W} {}", n(self.height()))
    }
}

/// A coordinate with one decimal, without pulling float formatting into the wasm.
pub fn n(v: f64) -> String {
    let tenths = (v * 10.0).round() as i64;
    let sign = if tenths < 0 { "-" } else { "" };
    let t = tenths.unsigned_abs();
    format!("{sign}{}.{}", t / 10, t % 10)
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

/// Colour slot per actor (CSS classes `c0`..`c4`).
pub fn colour(i: usize) -> usize {
    i % 5
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

/// Everything but the live pause blocks, for the trace at `step`.
pub fn render(t: &Trace, step: usize, with_pauses: bool) -> String {
    let mut out = render_grid(t);
    out.push_str(&render_story(t, step, with_pauses));
    out
}

/// Lanes and the time axis: they change only with the actors and the horizon, so a drag
/// never rewrites them.
pub fn render_grid(t: &Trace) -> String {
    let mut out = String::with_capacity(4 * 1024);
    grid(&mut out, t, &Geometry::of(t));
    out
}

/// What happened: bands, beliefs, conflicts, markers and the cursor.
pub fn render_story(t: &Trace, step: usize, with_pauses: bool) -> String {
    let g = Geometry::of(t);
    let mut out = String::with_capacity(8 * 1024);
    let marks = markers(t, &g);
    let mut labels = obstacles(&marks);
    spans(&mut out, t, &g, &mut labels);
    if with_pauses {
        pauses(&mut out, t, &g, false);
    }
    events(&mut out, t, &g, step, &marks, &mut labels);
    let x = g.x(t.snapshot_at(step).at);
    let _ = write!(
        out,
        r#"<g class="cursor"><line x1="{x}" x2="{x}" y1="{}" y2="{}"></line></g>"#,
        TOP - 4,
        n(g.bottom()),
        x = n(x)
    );
    out
}

fn grid(out: &mut String, t: &Trace, g: &Geometry) {
    let mut names: Vec<(&str, &str)> = t
        .scenario
        .actors
        .iter()
        .map(|a| (a.name.as_str(), "actor"))
        .collect();
    names.push(("lease", "infra"));
    names.push(("storage", "infra"));
    for (i, (name, kind)) in names.into_iter().enumerate() {
        let lane_h = g.lane_h();
        let y = TOP + lane_h * i as i64;
        let _ = write!(
            out,
            r#"<rect class="lane lane{}" x="0" y="{y}" width="{VIEW_W}" height="{lane_h}"></rect><text class="lane-name {kind}" x="12" y="{}">{}</text>"#,
            i % 2,
            y + lane_h / 2 + 6,
            esc(name)
        );
    }
    let step = tick_step(t.scenario.horizon);
    for k in 0..=t.scenario.horizon / step {
        let ms = k * step;
        let x = n(g.x(ms));
        let _ = write!(
            out,
            r#"<line class="tick" x1="{x}" x2="{x}" y1="{TOP}" y2="{}"></line><text class="tick-label" x="{x}" y="{}">{}</text>"#,
            n(g.bottom() + 4.0),
            n(g.bottom() + 20.0),
            tick_label(ms, step)
        );
    }
}

fn spans(out: &mut String, t: &Trace, g: &Geometry, labels: &mut Labels) {
    let lease_y = g.lane_mid(g.lane_index(Lane::Lease));
    for span in t.lease_spans() {
        let (x0, x1) = (g.x(span.from), g.x(span.to));
        let who = t.scenario.actor_index(&span.owner).unwrap_or(0);
        let end = match span.end {
            LeaseEnd::Expired => "expired",
            LeaseEnd::Released => "released",
            LeaseEnd::Open => "open",
        };
        // The label starts just inside the band, and steps right past any marker on it.
        let text = story::band_label(&t.scenario, &span.owner, span.fence);
        let w = text.chars().count() as f64 * 7.8;
        let band_box = |lx: f64| (lx, lease_y - 8.0, lx + w, lease_y + 8.0);
        let mut lx = x0 + 8.0;
        while !labels.free(band_box(lx), None) && lx + 4.0 < x1 {
            lx += 4.0;
        }
        labels.block(band_box(lx), None);
        let _ = write!(
            out,
            r#"<rect class="lease-band c{} {end}" x="{}" y="{}" width="{}" height="22" rx="3"></rect><text class="band-label" x="{}" y="{}">{}</text>"#,
            colour(who),
            n(x0),
            n(lease_y - 11.0),
            n((x1 - x0).max(1.0)),
            n(lx),
            n(lease_y + 5.0),
            esc(&text)
        );
    }
    for i in 0..t.scenario.actors.len() {
        let y = g.lane_mid(i) + 16.0;
        for (from, to) in t.belief_spans(i) {
            let (x0, x1) = (g.x(from), g.x(to));
            let _ = write!(
                out,
                r#"<rect class="belief c{}" x="{}" y="{}" width="{}" height="5" rx="2"></rect>"#,
                colour(i),
                n(x0),
                n(y),
                n((x1 - x0).max(1.0))
            );
        }
    }
    let h = (g.lane_h() * t.scenario.actors.len() as i64) as f64;
    let mut label_free_from = f64::MIN;
    for (from, to) in t.conflict_spans() {
        let (x0, x1) = (g.x(from), g.x(to));
        let _ = write!(
            out,
            r#"<rect class="conflict" x="{}" y="{TOP}" width="{}" height="{}"></rect>"#,
            n(x0),
            n((x1 - x0).max(1.0)),
            n(h)
        );
        if x0 >= label_free_from {
            let text = "two clients believe they hold the lock";
            let _ = write!(
                out,
                r#"<text class="conflict-label" x="{}" y="{}">{text}</text>"#,
                n(x0 + 4.0),
                TOP - 7
            );
            label_free_from = x0 + 4.0 + Labels::width(text) * 0.95;
        }
    }
}

/// The pause blocks on the live timeline: each actor's first pause carries what the shell
/// needs to drag it (`data-actor`, `data-grip`), a tooltip, and a resize handle on its
/// right edge. Edits keep these nodes in place, so a drag's pointer capture survives.
pub fn render_pauses(t: &Trace) -> String {
    let mut out = String::with_capacity(512);
    pauses(&mut out, t, &Geometry::of(t), true);
    out
}

fn pauses(out: &mut String, t: &Trace, g: &Geometry, live: bool) {
    for (i, a) in t.scenario.actors.iter().enumerate() {
        for (k, p) in a.pauses.iter().enumerate() {
            let (x0, x1) = (g.x(p.start), g.x(p.end()));
            let (y, w) = (g.lane_mid(i) - 13.0, (x1 - x0).max(2.0));
            let name = esc(&a.name);
            let drag = live && k == 0;
            if drag {
                let _ = write!(
                    out,
                    r#"<g class="pause" data-testid="pause-{name}" data-actor="{i}" data-grip="move"><title>{name}&#39;s pause: drag to move, drag the right edge to resize</title>"#
                );
            } else {
                out.push_str(r#"<g class="pause">"#);
            }
            if drag {
                // A finger needs a bigger target than the 26-unit block: at least 24 CSS px
                // down to a 768 px wide screen.
                let _ = write!(
                    out,
                    r#"<rect class="hit" x="{}" y="{}" width="{}" height="{}"></rect>"#,
                    n(x0),
                    n(y + 13.0 - HIT_H / 2.0),
                    n(w),
                    n(HIT_H)
                );
            }
            let _ = write!(
                out,
                r#"<rect class="pause-body" x="{}" y="{}" width="{}" height="26" rx="4"></rect><text class="pause-label" x="{}" y="{}">{} {}</text></g>"#,
                n(x0),
                n(y),
                n(w),
                n(x0 + 6.0),
                n(y + 17.5),
                match (live, a.pause_cause) {
                    (false, _) => "pause",
                    (true, PauseCause::Gc) => "GC pause",
                    (true, PauseCause::Stall) => "stall",
                },
                crate::core::story::time_label(&t.scenario, p.duration)
            );
            if drag {
                let _ = write!(
                    out,
                    r#"<g class="grip" data-testid="pause-{name}-resize" data-actor="{i}" data-grip="resize"><title>Resize {name}&#39;s pause</title><rect class="hit" x="{}" y="{}" width="{}" height="{}"></rect><rect class="pause-grip" x="{}" y="{}" width="10" height="26"></rect></g>"#,
                    n(x0 + w - HIT_W / 2.0),
                    n(y + 13.0 - HIT_H / 2.0),
                    n(HIT_W),
                    n(HIT_H),
                    n(x0 + w - 5.0),
                    n(y)
                );
            }
        }
    }
}

/// Touch targets around a pause block and its resize grip, in user units (a 768 px wide
/// timeline draws 1000 units in about 730 px, so these stay above 24 CSS px).
const HIT_H: f64 = 42.0;
const HIT_W: f64 = 34.0;

/// A box in user units: left, top, right, bottom.
type Rect = (f64, f64, f64, f64);

/// Keeps every label and marker on the timeline apart. Obstacles (markers, band labels) are
/// registered first; a marker label then takes the first of its candidate positions that
/// touches nothing (its own marker aside), or is left off (the marker keeps its tooltip and
/// the narration says it all).
#[derive(Default)]
struct Labels {
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

    fn block(&mut self, r: Rect, owner: Option<usize>) {
        self.taken.push((r, owner));
    }

    fn free(&self, r: Rect, owner: Option<usize>) -> bool {
        !self.taken.iter().any(|(t, o)| {
            (owner.is_none() || *o != owner) && r.0 < t.2 && t.0 < r.2 && r.1 < t.3 && t.1 < r.3
        })
    }

    /// The first baseline in `ys` where a label of `text` centred on `x` is free; taken.
    fn place(&mut self, owner: usize, x: f64, ys: &[f64], text: &str) -> Option<f64> {
        let y = ys
            .iter()
            .copied()
            .find(|&y| self.free(Self::label_box(x, y, text), Some(owner)))?;
        self.block(Self::label_box(x, y, text), Some(owner));
        Some(y)
    }
}

/// Where each drawn marker sits: (event index, x, y, radius). Pause starts and ends are
/// shown by the pause block instead.
fn markers(t: &Trace, g: &Geometry) -> Vec<(usize, f64, f64, f64)> {
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
            (i, g.x(e.at), y, if expiry { 5.0 } else { 8.0 })
        })
        .collect()
}

/// Every marker as an obstacle for labels.
fn obstacles(marks: &[(usize, f64, f64, f64)]) -> Labels {
    let mut labels = Labels::default();
    for &(i, x, y, r) in marks {
        labels.block((x - r, y - r, x + r, y + r), Some(i));
    }
    labels
}

/// Marker kind and verdict, which pick the CSS classes. `late`: an accepted write from a
/// superseded lease, or one out of token order.
fn classes(kind: &EventKind, late: bool) -> (&'static str, &'static str) {
    match kind {
        EventKind::WriteApplied { result: Ok(_), .. } if late => ("write", "late"),
        EventKind::WriteApplied { result: Ok(_), .. } => ("write", "ok"),
        EventKind::WriteApplied { result: Err(_), .. } => ("write", "rejected"),
        EventKind::AcquireRefused { .. }
        | EventKind::ReleaseNoop { .. }
        | EventKind::ExtendFailed { .. }
        | EventKind::WriteTimedOut { .. } => ("op", "refused"),
        EventKind::LeaseExpired { .. } => ("expiry", "ok"),
        EventKind::SideEffect { .. } => ("op", "unprotected"),
        EventKind::DeletedOthersLease { .. }
        | EventKind::Failover { .. }
        | EventKind::LockClockJumped { .. } => ("op", "danger"),
        EventKind::BarrierSet { result: Ok(()), .. } => ("write", "barrier"),
        EventKind::BarrierSet { result: Err(_), .. } => ("write", "rejected"),
        _ => ("op", "ok"),
    }
}

/// One marker per event; events after `step` are dimmed, the current one ringed.
fn events(
    out: &mut String,
    t: &Trace,
    g: &Geometry,
    step: usize,
    marks: &[(usize, f64, f64, f64)],
    labels: &mut Labels,
) {
    let storage_y = g.lane_mid(g.lane_index(Lane::Storage));
    for &(i, x, y, _) in marks {
        let e = &t.events[i];
        let state = match (i + 1).cmp(&step) {
            std::cmp::Ordering::Equal => "current",
            std::cmp::Ordering::Greater => "future",
            std::cmp::Ordering::Less => "past",
        };
        let expiry = matches!(e.kind, EventKind::LeaseExpired { .. });
        let who = e
            .actor
            .as_deref()
            .and_then(|a| t.scenario.actor_index(a))
            .unwrap_or(0);
        let (shape, verdict) = classes(&e.kind, e.is_late_write() || e.is_out_of_order());
        let _ = write!(
            out,
            r#"<g class="ev {state} {shape} {verdict} c{}" data-step="{}" data-result="{}"><title>{}</title>"#,
            colour(who),
            i + 1,
            e.result_code(),
            esc(&story::narration(t, i + 1))
        );
        if let EventKind::WriteApplied { sent_at, .. } = &e.kind {
            let _ = write!(
                out,
                r#"<line class="link {verdict}" x1="{}" y1="{}" x2="{}" y2="{}"></line>"#,
                n(g.x(*sent_at)),
                n(g.lane_mid(who)),
                n(x),
                n(storage_y - 10.0)
            );
        }
        let glyph = match verdict {
            "rejected" => "✗",
            "late" | "danger" => "!",
            "unprotected" => "$",
            "barrier" => "⊢",
            _ if shape == "write" => "✓",
            _ => "",
        };
        let (ring, dot) = if expiry { (9, 5) } else { (13, 8) };
        let _ = write!(
            out,
            r#"<circle class="ring" cx="{x}" cy="{y}" r="{ring}"></circle><circle class="dot" cx="{x}" cy="{y}" r="{dot}"></circle><text class="glyph" x="{x}" y="{}">{glyph}</text>"#,
            n(y + 4.5),
            x = n(x),
            y = n(y)
        );
        // Writes label below their marker first, everything else above; then the other side.
        let label = story::marker_label(t, e);
        let offsets: &[f64] = match (shape, expiry) {
            ("write", _) => &[27.0, -14.0],
            (_, true) => &[-6.0, 22.0],
            _ => &[-12.0, 24.0],
        };
        let ys: Vec<f64> = offsets.iter().map(|o| y + o).collect();
        if let Some(ly) = labels.place(i, x, &ys, &label) {
            let _ = write!(
                out,
                r#"<text class="ev-label" x="{}" y="{}">{}</text>"#,
                n(x),
                n(ly),
                esc(&label)
            );
        }
        out.push_str("</g>");
    }
}

/// The thundering herd as two bar charts (fixed schedule above, jittered below): renewals
/// the lock server takes per bucket, on one shared scale.
pub fn render_herd(fixed: &crate::core::HerdReport, jittered: &crate::core::HerdReport) -> String {
    const W: f64 = 1000.0;
    const LEFT: f64 = 150.0;
    const ROW: f64 = 64.0;
    let peak = fixed
        .peak_per_bucket()
        .max(jittered.peak_per_bucket())
        .max(1) as f64;
    let mut out = String::with_capacity(16 * 1024);
    for (row, (report, label, class)) in [
        (fixed, "fixed schedule", "fixed"),
        (jittered, "±25% jitter", "jittered"),
    ]
    .into_iter()
    .enumerate()
    {
        let base = 10.0 + ROW * (row as f64 + 1.0);
        let buckets = report.per_bucket.len().max(1) as f64;
        let bar_w = (W - LEFT - 10.0) / buckets;
        let _ = write!(
            out,
            r#"<text class="herd-label" x="8" y="{}">{label}</text><text class="herd-peak" x="8" y="{}">peak {} / {} ms</text>"#,
            n(base - 26.0),
            n(base - 8.0),
            report.peak_per_bucket(),
            report.bucket_ms
        );
        for (i, count) in report
            .per_bucket
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
        {
            let h = (ROW - 12.0) * f64::from(*count) / peak;
            let _ = write!(
                out,
                r#"<rect class="herd-bar {class}" x="{}" y="{}" width="{}" height="{}"></rect>"#,
                n(LEFT + bar_w * i as f64),
                n(base - h),
                n(bar_w.max(0.6)),
                n(h.max(0.6))
            );
        }
        let _ = write!(
            out,
            r#"<line class="tick" x1="{}" x2="{}" y1="{}" y2="{}"></line>"#,
            n(LEFT),
            n(W - 10.0),
            n(base),
            n(base)
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

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            esc(r#"<a href="x">&'"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }

    #[test]
    fn headline_marks_the_rejected_write() {
        let t = run(&Scenario::gc_pause());
        let svg = render(&t, t.len(), false);
        assert_eq!(
            svg.matches(r#"class="ev "#).count(),
            t.events.len() - 2,
            "no markers for pause start/end"
        );
        assert_eq!(svg.matches("write rejected").count(), 1);
        assert!(svg.contains(r#"data-result="stale_fence""#));
        assert!(svg.contains("A · token 33") && svg.contains("B · token 34"));
        assert_eq!(svg.matches(r#"class="conflict""#).count(), 1);
        let off = run(&Scenario::gc_pause().with_policy(FencingPolicy::Off));
        assert_eq!(
            render(&off, off.len(), false).matches("write late").count(),
            1
        );
    }

    #[test]
    fn herd_chart_draws_both_schedules() {
        let fixed = crate::core::renewal_herd(200, 30, false, 7, 120);
        let jittered = crate::core::renewal_herd(200, 30, true, 7, 120);
        let svg = render_herd(&fixed, &jittered);
        assert!(svg.contains("herd-bar fixed") && svg.contains("herd-bar jittered"));
        assert!(fixed.peak_per_bucket() > jittered.peak_per_bucket());
        assert!(svg.contains(&format!("peak {} /", fixed.peak_per_bucket())));
    }

    #[test]
    fn labels_never_overlap_a_label_or_another_marker() {
        let t = run(&Scenario::unsafe_release());
        let svg = render(&t, t.len(), false);
        assert!(
            svg.matches(r#"class="ev-label""#).count() < t.events.len(),
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
    fn live_pauses_carry_their_drag_handles() {
        let t = run(&Scenario::gc_pause());
        let svg = render_pauses(&t);
        assert!(svg.contains(r#"data-testid="pause-A" data-actor="0" data-grip="move""#));
        assert!(svg.contains(r#"data-testid="pause-A-resize" data-actor="0" data-grip="resize""#));
        assert!(svg.contains(">GC pause 50 ms</text>"));
        assert!(
            !render(&t, 0, true).contains("data-grip"),
            "the fork's copy is not draggable"
        );
    }

    #[test]
    fn a_stalled_job_is_not_drawn_as_a_gc_pause() {
        let t = run(&(crate::core::deck::find("handoff-barrier").unwrap().build)());
        assert_eq!(t.scenario.actors[0].pause_cause, PauseCause::Stall);
        let svg = render_pauses(&t);
        assert!(svg.contains(">stall 15.0 s</text>"), "{svg}");
        assert!(!svg.contains("GC"), "{svg}");
        assert!(!render(&t, t.len(), true).contains("GC pause"));
    }

    #[test]
    fn steps_dim_the_future() {
        let t = run(&Scenario::gc_pause());
        let svg = render(&t, 0, true);
        assert_eq!(svg.matches(r#"class="ev current"#).count(), 0);
        assert!(svg.contains(r#"class="pause""#));
        let svg = render(&t, 1, false);
        assert_eq!(svg.matches(r#"class="ev current"#).count(), 1);
    }
}
