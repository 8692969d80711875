//! The drawing's rows read off a trace: the grid, lease bands, beliefs, conflicts, the
//! partition, pauses and one marker per event, each placed for the drawing's type.

use std::mem::Discriminant;

use super::labels::{baselines, label, Labels, Wanted};
use super::*;
use crate::core::fault_event;
use crate::core::story;
use crate::core::{PauseCause, ProviderOutcome, Trace};

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
    grid_in(t, Type::Normal)
}

/// [`grid`] in type `ty`.
pub fn grid_in(t: &Trace, ty: Type) -> Grid {
    let g = Geometry::typed(t, ty);
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
        tick_y: g.tick_y(),
        ty,
    }
}

/// The drawing at `step`. `live`: the main timeline, whose pauses are draggable and name
/// their cause; the fork's copy of the original is not.
pub fn model(t: &Trace, step: usize, live: bool) -> TimelineModel {
    model_in(t, step, live, Type::Normal)
}

/// [`model`] laid out for type `ty`: the whole run's words placed once, so that stepping
/// moves none of them (the future is drawn too, dimmed).
pub fn model_in(t: &Trace, step: usize, live: bool, ty: Type) -> TimelineModel {
    lay_out(t, step, live, ty, false)
}

/// [`model_in`] for the reveal, which draws nothing after the cursor: only what has begun
/// takes room for its words, and the current step's events are labelled first, so the
/// event a step is about keeps its label where older ones give way (move, shorten, or go).
pub fn revealed_in(t: &Trace, step: usize, live: bool, ty: Type) -> TimelineModel {
    lay_out(t, step, live, ty, true)
}

/// How far the run has got at the step drawn: `shown` events have happened. While the
/// reveal is on (`reveal`), what has not begun is not drawn, so its words take no room.
#[derive(Clone, Copy)]
struct Now {
    shown: usize,
    reveal: bool,
}

impl Now {
    /// Whether what event `first` begins has begun (`None`: it never does in this run).
    fn begun(self, first: Option<usize>) -> bool {
        first.is_some_and(|i| i < self.shown)
    }

    /// Where a row's words take their room: the drawing's `labels`, or, while the reveal
    /// hides the row, `spare` (nothing else is laid out there).
    fn room<'a>(
        self,
        begun: bool,
        labels: &'a mut Labels,
        spare: &'a mut Labels,
    ) -> &'a mut Labels {
        if self.reveal && !begun {
            spare
        } else {
            labels
        }
    }
}

/// The first event at or after `at`: what shows the run has reached that time.
fn first_from(t: &Trace, at: Millis) -> Option<usize> {
    t.events.iter().position(|e| e.at >= at)
}

fn lay_out(t: &Trace, step: usize, live: bool, ty: Type, reveal: bool) -> TimelineModel {
    let g = Geometry::typed(t, ty);
    let words = story::Story::of(t);
    let step = step.min(words.last());
    let now = Now {
        shown: words.steps().through(step),
        reveal,
    };
    let spots = spots(t, &g);
    let mut labels = Labels::new(&g);
    let mut spare = Labels::new(&g);
    for s in spots.iter().filter(|s| !reveal || now.begun(Some(s.event))) {
        labels.block((s.x - s.r, s.y - s.r, s.x + s.r, s.y + s.r), Some(s.event));
    }
    let beliefs = beliefs(t, &g);
    let cursor = g.x(t.snapshot_at(now.shown).at);
    // Presenting, no words across a client's belief bar (as far as it is drawn): in large
    // type a label under a marker would cover it.
    for b in beliefs.iter().filter(|_| reveal).map(|b| b.bar) {
        labels.block((b.x, b.y, (b.x + b.w).min(cursor), b.y + b.h), None);
    }
    let conflicts = conflicts(t, &g, now, (&mut labels, &mut spare));
    let pauses = pauses(t, &g, live, now, (&mut labels, &mut spare));
    let (mut markers, wanted) = markers(t, &g, (&words, step), &spots);
    // Normal: bands, the partition, then every marker's words in event order. The reveal:
    // the current step's words first, the older markers' last; the future markers are not
    // drawn, so they have none.
    if reveal {
        label(&mut markers, &wanted, Some(State::Current), &mut labels);
    }
    let bands = bands(t, &g, now, (&mut labels, &mut spare));
    let cut = cut(t, &g, now, (&mut labels, &mut spare));
    let older = reveal.then_some(State::Past);
    label(&mut markers, &wanted, older, &mut labels);
    // Rows in a fixed order (by owner, by lane; by time within one) rather than by time
    // alone, so a drag that makes two lanes' events trade places moves no node. Labels were
    // placed in event order above.
    let bands = grouped(bands, g.actors, |b| b.key.0);
    let markers = grouped(markers, g.lanes(), |m| m.key.lane);
    TimelineModel {
        view_box: g.view_box(),
        bands,
        beliefs,
        conflicts,
        markers,
        pauses,
        cut,
        cursor: Cursor {
            x: cursor,
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

fn bands(
    t: &Trace,
    g: &Geometry,
    now: Now,
    (labels, spare): (&mut Labels, &mut Labels),
) -> Vec<Band> {
    let lease_y = g.lane_mid(g.lane_index(Lane::Lease));
    let mut nth = vec![0_usize; t.scenario.actors.len() + 1];
    let spans = t.lease_spans();
    let starts: Vec<f64> = spans.iter().map(|s| g.x(s.from)).collect();
    // Every grant opens a band, in order: the k-th band begins with the k-th grant.
    let mut grants = t
        .events
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e.kind, EventKind::Acquired { .. }))
        .map(|(i, _)| i);
    spans
        .into_iter()
        .map(|span| {
            let (x0, x1) = (g.x(span.from), g.x(span.to));
            let who = t.scenario.actor_index(&span.owner).unwrap_or(0);
            let begun = now.begun(grants.next());
            // A label may run past its band's end, but not into a band that begins after
            // it, under it (one overlapping it, as after a failover) or beyond it.
            let next = starts.iter().copied().filter(|&s| s > x0);
            let limit = next.fold(f64::INFINITY, f64::min);
            let labels = now.room(begun, &mut *labels, &mut *spare);
            let texts = [
                story::band_label(&t.scenario, &span.owner, span.fence),
                story::band_label_short(&t.scenario, &span.owner, span.fence),
            ];
            let (text, lx) = band_label(labels, texts, (x0, x1, limit), lease_y, g.ty);
            let k = nth.get_mut(who).map_or(0, |c| {
                *c += 1;
                *c - 1
            });
            Band {
                key: (who, k),
                colour: colour(who),
                end: span.end,
                begun,
                bar: Bar {
                    x: x0,
                    y: lease_y - g.band_h() / 2.0,
                    // A lease granted and given back in the same millisecond is a sliver.
                    w: (x1 - x0).max(MIN_BAND_W),
                    h: g.band_h(),
                },
                label: Text {
                    x: lx,
                    y: lease_y + 0.38 * g.ty.band(),
                    text,
                },
            }
        })
        .collect()
}

/// The narrowest a lease band is drawn, in user units.
const MIN_BAND_W: f64 = 4.0;

/// Where a lease band's label goes, and which words: the full ones, or the short ones if
/// the full do not fit before `limit` (the next band's start). Each starts just inside the
/// band (from `x0`, up to `x1`) and steps right past any marker on it.
fn band_label(
    labels: &mut Labels,
    texts: [String; 2],
    (x0, x1, limit): (f64, f64, f64),
    y: f64,
    ty: Type,
) -> (String, f64) {
    let half_h = 0.62 * ty.band();
    let boxed = |lx: f64, w: f64| (lx, y - half_h, lx + w, y + half_h);
    // A band too short to hold its words may have them just past its end, a space clear of
    // the words before them.
    let free = |labels: &Labels, lx: f64, w: f64| {
        let gap = if lx > x0 + 8.0 && lx >= x1 {
            ty.band_char_w()
        } else {
            0.0
        };
        labels.free(boxed(lx - gap, w + gap), None)
    };
    let spot = |labels: &Labels, w: f64| {
        let mut lx = x0 + 8.0;
        while !free(labels, lx, w) && lx + 4.0 < x1.max(x0 + 8.0 + w) {
            lx += 4.0;
        }
        (free(labels, lx, w) && lx + w <= limit).then_some(lx)
    };
    let width = |text: &str| text.chars().count() as f64 * ty.band_char_w();
    let [full, short] = texts;
    let (text, lx) = match (spot(labels, width(&full)), spot(labels, width(&short))) {
        (Some(lx), _) => (full, lx),
        (None, Some(lx)) => (short, lx),
        // Neither fits before the next band: the short words past this band's end where
        // they touch nothing (the next band's label steps right of them), else none.
        (None, None) if labels.free(boxed(x0 + 8.0, width(&short)), None) => (short, x0 + 8.0),
        (None, None) => (String::new(), x0 + 8.0),
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

/// Conflict windows, the first of a run labelled above the lanes (the label an obstacle for
/// the markers' labels).
fn conflicts(
    t: &Trace,
    g: &Geometry,
    now: Now,
    (labels, spare): (&mut Labels, &mut Labels),
) -> Vec<Conflict> {
    let h = g.lane_h() * t.scenario.actors.len() as f64;
    let mut label_free_from = f64::MIN;
    t.conflict_spans()
        .into_iter()
        .enumerate()
        .map(|(k, (from, to))| {
            let (x0, x1) = (g.x(from), g.x(to));
            let begun = now.begun(first_from(t, from));
            let labels = now.room(begun, &mut *labels, &mut *spare);
            let label = (x0 >= label_free_from).then(|| {
                let w = labels.width(CONFLICT_LABEL) * 0.95;
                label_free_from = x0 + 4.0 + w;
                labels.block((x0, 0.0, x0 + 4.0 + w, TOP - 2.0), None);
                Text {
                    x: x0 + 4.0,
                    y: TOP - 7.0,
                    text: CONFLICT_LABEL.to_owned(),
                }
            });
            Conflict {
                key: k,
                begun,
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
fn cut(
    t: &Trace,
    g: &Geometry,
    now: Now,
    (labels, spare): (&mut Labels, &mut Labels),
) -> Option<Cut> {
    let sc = &t.scenario;
    let p = sc.partitioned()?;
    let begun = now.begun(first_from(t, p.start));
    let labels = now.room(begun, labels, spare);
    let name = &sc.actors.get(p.actor)?.name;
    let (x0, x1) = (g.x(p.start), g.x(p.end.min(sc.horizon)));
    let h = g.lane_h();
    let top = g.lane_mid(p.actor) - h / 2.0;
    let size = g.ty.label();
    let y = g.lane_mid(p.actor) + 0.4 * size;
    let label = CUT_LABELS.iter().find_map(|text| {
        let w = labels.width(text);
        let mut x = x0 + 4.0;
        while x + w <= x1 {
            let r = (x, y - 1.04 * size, x + w, y + 0.32 * size);
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
        begun,
        title: format!(
            "{name} cut off from the lock service (not from storage), t={} to t={}",
            story::instant(sc, p.start),
            story::instant(sc, p.end)
        ),
    })
}

/// The pause blocks; each label an obstacle for the markers' labels.
fn pauses(
    t: &Trace,
    g: &Geometry,
    live: bool,
    now: Now,
    (labels, spare): (&mut Labels, &mut Labels),
) -> Vec<PauseBlock> {
    let mut out = Vec::new();
    let size = g.ty.band();
    for (i, a) in t.scenario.actors.iter().enumerate() {
        for (k, p) in a.pauses.iter().enumerate() {
            let begun = now.begun(t.events.iter().position(|e| {
                matches!(e.kind, EventKind::PauseStarted { .. })
                    && e.at == p.start
                    && e.actor.as_deref() == Some(a.name.as_str())
            }));
            let labels = now.room(begun, &mut *labels, &mut *spare);
            let (x0, x1) = (g.x(p.start), g.x(p.end()));
            let (y, w) = (g.lane_mid(i) - 13.0, (x1 - x0).max(2.0));
            let cause = match (live, a.pause_cause) {
                (false, _) => "pause",
                (true, PauseCause::Gc) => "GC pause",
                (true, PauseCause::Stall) => "stall",
            };
            let text = format!("{cause} {}", story::time_label(&t.scenario, p.duration));
            let baseline = g.lane_mid(i) + 0.35 * size;
            let width = text.chars().count() as f64 * g.ty.band_char_w();
            labels.block(
                (
                    x0 + 6.0,
                    baseline - 0.8 * size,
                    x0 + 6.0 + width,
                    baseline + 0.25 * size,
                ),
                None,
            );
            out.push(PauseBlock {
                actor: i,
                nth: k,
                name: a.name.clone(),
                draggable: live && k == 0,
                begun,
                body: Bar {
                    x: x0,
                    y,
                    w,
                    h: 26.0,
                },
                label: Text {
                    x: x0 + 6.0,
                    y: baseline,
                    text,
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

/// Where a drawn event sits. Pause starts and ends are shown by the pause block instead.
struct Spot {
    event: usize,
    x: f64,
    y: f64,
    r: f64,
}

/// The events drawn as markers, with their index: a pause's start and end are drawn as its
/// block instead.
pub fn drawn(t: &Trace) -> impl Iterator<Item = (usize, &crate::core::TraceEvent)> {
    t.events.iter().enumerate().filter(|(_, e)| {
        !matches!(
            e.kind,
            EventKind::PauseStarted { .. } | EventKind::PauseEnded { .. }
        )
    })
}

fn spots(t: &Trace, g: &Geometry) -> Vec<Spot> {
    drawn(t)
        .map(|(i, e)| {
            let expiry = matches!(e.kind, EventKind::LeaseExpired { .. });
            // Expiries sit on the band's top edge so the next band's label stays readable.
            let y = g.lane_mid(g.lane_index(e.lane)) - if expiry { g.band_h() / 2.0 } else { 0.0 };
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
        EventKind::DeletedOthersLease { .. } | fault_event!() => (Shape::Op, Verdict::Danger),
        EventKind::BarrierSet { result: Ok(()), .. } => (Shape::Write, Verdict::Barrier),
        EventKind::BarrierSet { result: Err(_), .. } => (Shape::Write, Verdict::Rejected),
        _ => (Shape::Op, Verdict::Ok),
    }
}

/// One marker per drawn event; events after `step` (of `steps`) are dimmed, the current
/// step's ringed. A run of identical events shares one step and one label ("lock_held ×5").
/// Unlabelled: the words each wants come beside them, for [`label`] to place.
fn markers(
    t: &Trace,
    g: &Geometry,
    (words, step): (&story::Story, usize),
    spots: &[Spot],
) -> (Vec<Marker>, Vec<Wanted>) {
    let steps = words.steps();
    let storage_y = g.lane_mid(g.lane_index(Lane::Storage));
    let mut seen: Vec<(usize, Discriminant<EventKind>)> = Vec::with_capacity(spots.len());
    let mut wanted: Vec<Wanted> = Vec::new();
    let markers: Vec<Marker> = spots
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
            if let Some(text) = story::run_label(t, steps, i) {
                wanted.push((k, baselines(g, lane, shape, y), text));
            }
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
                tooltip: words.narration(shown),
                link,
                label: None,
                differs: false,
            }
        })
        .collect();
    (markers, wanted)
}
