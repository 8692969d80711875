//! The night-before sheet: for each chosen deck entry, the question, the two-line answer
//! (how the run ends with fencing off and on, and why), the push-backs with their answers
//! and sources, and a small timeline drawn in black on white, so that it prints in black
//! and white. Pure: the page prints what [`sheet_markup`] writes.

use crate::core::deck::{self, DeckEntry};
use crate::core::{EventKind, FencingPolicy, Millis, Trace};
use crate::view::panels::compare;
use crate::view::timeline::esc;

/// One entry of the sheet, every line of it from the entry's runs.
#[derive(Debug, Clone, PartialEq)]
pub struct SheetEntry {
    /// The entry's place in the deck, from 1.
    pub number: usize,
    pub question: &'static str,
    /// "Fencing off → 80: double charge: …" and "Fencing on (strict) → 90: …".
    pub answer: [String; 2],
    pub pushbacks: &'static [crate::core::deck::PushBack],
    /// The fencing-on run as an SVG.
    pub figure: String,
}

/// [`SheetEntry`] for `entry`, from its runs with fencing off and on (the entry's own policy
/// if it checks tokens, else strict).
pub fn sheet_entry(entry: &DeckEntry) -> SheetEntry {
    let runs = deck::runs(entry);
    let on = match (entry.build)().policy {
        FencingPolicy::SameEpoch => runs.same_epoch(),
        _ => runs.strict(),
    };
    let cards = compare(runs.off(), on);
    SheetEntry {
        number: deck::TITLES
            .iter()
            .position(|(id, _)| *id == entry.id)
            .map_or(0, |i| i + 1),
        question: entry.question,
        answer: [
            format!("Fencing off → {}: {}", cards.off.value, cards.off.outcome),
            format!(
                "Fencing on ({}) → {}: {}",
                cards.on_policy, cards.on.value, cards.on.outcome
            ),
        ],
        pushbacks: entry.pushbacks,
        figure: figure(on),
    }
}

/// The sheet's markup: one `<article>` per entry (the print stylesheet gives each half a
/// page).
pub fn sheet_markup(entries: &[SheetEntry]) -> String {
    let mut out = String::new();
    for e in entries {
        out += &format!(
            "<article class=\"sheet-entry\"><h2>{}. {}</h2><p class=\"sheet-answer\">{}<br>{}</p>{}",
            e.number,
            esc(e.question),
            esc(&e.answer[0]),
            esc(&e.answer[1]),
            e.figure
        );
        if !e.pushbacks.is_empty() {
            out += "<h3>If they push back</h3><ul>";
            for p in e.pushbacks {
                out += &format!(
                    "<li><b>{}</b> {} <small>Source: {}</small></li>",
                    esc(p.question),
                    esc(p.answer),
                    esc(p.source)
                );
            }
            out += "</ul>";
        }
        out += "</article>";
    }
    out
}

/// The figure's size, in its own units.
const WIDTH: f64 = 480.0;
const LANE: f64 = 18.0;
const LEFT: f64 = 64.0;

/// A small timeline of run `t` in black and white: a lane per client with its leases (a
/// white band, "token 33") and its pauses (hatched), and a storage lane with each write's
/// answer (✓ accepted, ✗ refused, with the token).
pub fn figure(t: &Trace) -> String {
    let sc = &t.scenario;
    let names: Vec<&str> = sc.actors.iter().map(|a| a.name.as_str()).collect();
    let end = t.events.last().map_or(sc.horizon, |e| e.at).max(1);
    let x = |at: Millis| LEFT + (at.min(end) as f64) * (WIDTH - LEFT - 8.0) / end as f64;
    let lane_of = |who: &str| names.iter().position(|n| *n == who);
    let y = |lane: usize| 6.0 + lane as f64 * LANE;
    let storage = names.len();
    let height = y(storage + 1) + 8.0;
    let mut out = format!(
        "<svg class=\"sheet-figure\" viewBox=\"0 0 {WIDTH} {height}\" role=\"img\" aria-label=\"Timeline of the run with fencing on\"><defs><pattern id=\"hatch-{}\" width=\"4\" height=\"4\" patternUnits=\"userSpaceOnUse\"><path d=\"M0 4L4 0\" stroke=\"black\" stroke-width=\"0.8\"/></pattern></defs>",
        esc(&sc.id)
    );
    for (i, name) in names.iter().chain(["storage"].iter()).enumerate() {
        out += &format!(
            "<text x=\"2\" y=\"{:.1}\" font-size=\"9\">{}</text><line x1=\"{LEFT}\" x2=\"{WIDTH}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"black\" stroke-width=\"0.4\"/>",
            y(i) + 11.0,
            esc(name),
            y(i) + LANE - 2.0,
            y(i) + LANE - 2.0
        );
    }
    for span in t.lease_spans() {
        let Some(lane) = lane_of(&span.owner) else {
            continue;
        };
        out += &format!(
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"12\" fill=\"white\" stroke=\"black\" stroke-width=\"0.8\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"8\">token {}</text>",
            x(span.from),
            y(lane) + 2.0,
            (x(span.to) - x(span.from)).max(1.0),
            x(span.from) + 2.0,
            y(lane) + 11.0,
            span.fence
        );
    }
    out += &pauses(t, &x, &|who| lane_of(who).map(y));
    for e in &t.events {
        let EventKind::WriteApplied { fence, result, .. } = &e.kind else {
            continue;
        };
        let mark = if result.is_ok() { "✓" } else { "✗" };
        let token = fence.map_or_else(|| "—".to_owned(), |f| f.to_string());
        out += &format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"9\">{mark}{token}</text>",
            x(e.at) - 3.0,
            y(storage) + 11.0
        );
    }
    out += &format!(
        "<text x=\"{LEFT}\" y=\"{:.1}\" font-size=\"8\">0</text><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"8\" text-anchor=\"end\">{}</text></svg>",
        height - 1.0,
        WIDTH,
        height - 1.0,
        esc(&crate::core::story::time_label(sc, end))
    );
    out
}

/// Each pause in the run, hatched on its client's lane (`lane_y` gives the lane's top).
fn pauses(t: &Trace, x: &dyn Fn(Millis) -> f64, lane_y: &dyn Fn(&str) -> Option<f64>) -> String {
    let mut out = String::new();
    for e in &t.events {
        let (EventKind::PauseStarted { until, .. }, Some(who)) = (&e.kind, e.actor.as_deref())
        else {
            continue;
        };
        let Some(top) = lane_y(who) else {
            continue;
        };
        out += &format!(
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"4\" fill=\"url(#hatch-{})\" stroke=\"black\" stroke-width=\"0.4\"><title>pause</title></rect>",
            x(e.at),
            top + 13.0,
            (x(*until) - x(e.at)).max(1.0),
            esc(&t.scenario.id)
        );
    }
    out
}
