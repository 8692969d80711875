//! Rehearse mode, the page as the interviewer: it asks a deck question, the candidate
//! answers aloud against two minutes, predicts how the run ends, and the page plays the run
//! with the reveal, marking each prediction right or wrong at the step that decides it.
//!
//! Pure, like the rest of the lab: every truth a prediction is scored against is read off
//! the entry's two real runs (fencing off and on), never written down here. The shell keeps
//! a [`Rehearsal`] and a [`Progress`] and changes them only with [`Rehearsal::update`] and
//! [`Progress::record`]; `rehearse_sheet` draws the night-before sheet.

use crate::core::deck::{self, DeckEntry};
use crate::core::{story, Trace, TraceEvent};
use crate::view::panels::deciding_step;

/// How long an answer should take, out loud, in an interview.
pub const ANSWER_SECS: u32 = 120;

/// Which of the entry's two runs a prediction is about, and which one the page plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Off,
    On,
}

/// What the candidate predicts before the run plays.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Prediction {
    /// The figure storage ends at with fencing off, as [`story::final_value`] writes it.
    pub off: String,
    /// The same with fencing on.
    pub on: String,
    /// The writes (indices into [`Choices::writes`]) storage refuses with fencing on; none
    /// ticked predicts that it refuses none.
    pub refused: Vec<usize>,
}

/// What the prediction form offers, from the runs themselves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choices {
    /// "balance", or "result row" / "claim row" for a job that publishes or claims.
    pub figure: &'static str,
    /// Every figure storage shows at any step of either run, the largest number first: the
    /// end is one of them.
    pub values: Vec<String>,
    /// Every write that reaches storage in the fencing-on run, in order, as "A's debit of
    /// 10 with token 33".
    pub writes: Vec<String>,
}

/// The write events of a run: the ones storage answers.
fn write_events(t: &Trace) -> impl Iterator<Item = (usize, &TraceEvent)> {
    t.events
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e.kind, crate::core::EventKind::WriteApplied { .. }))
}

/// "A's debit of 10 with token 33": a write, as the form and the marks name it.
fn write_label(e: &TraceEvent) -> String {
    let crate::core::EventKind::WriteApplied {
        fence,
        amount,
        publish,
        ..
    } = &e.kind
    else {
        return String::new();
    };
    let who = e.actor.as_deref().unwrap_or("a client");
    let what = match publish {
        Some(p) => format!("write of “{p}”"),
        None if *amount != 0 => format!("debit of {amount}"),
        None => "write".to_owned(),
    };
    let token = match fence {
        Some(f) => format!("with token {f}"),
        None => "without a token".to_owned(),
    };
    format!("{who}'s {what} {token}")
}

/// Whether storage refused write event `e`.
fn refused(e: &TraceEvent) -> bool {
    matches!(
        e.kind,
        crate::core::EventKind::WriteApplied { result: Err(_), .. }
    )
}

/// What the form offers for an entry's two runs.
pub fn choices(off: &Trace, on: &Trace) -> Choices {
    let mut values: Vec<String> = Vec::new();
    for t in [off, on] {
        let words = story::Story::of(t);
        for s in 0..=words.last() {
            let v = words.value(s);
            if !values.contains(&v) {
                values.push(v);
            }
        }
    }
    // Numbers largest first (a balance only goes down), words after, as they came.
    values.sort_by_key(|v| v.parse::<i64>().map_or((1, 0), |n| (0, -n)));
    let figure = if on.scenario.claims() {
        "claim row"
    } else if on.scenario.publishes() {
        "result row"
    } else {
        "balance"
    };
    Choices {
        figure,
        values,
        writes: write_events(on).map(|(_, e)| write_label(e)).collect(),
    }
}

/// One prediction, scored: what was said, what the run did, and the step that decides it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    /// Stable name, kept in [`Progress`]: `off`, `on` or `refused`.
    pub key: &'static str,
    /// "Fencing off: the balance ends at".
    pub what: String,
    pub said: String,
    pub truth: String,
    pub right: bool,
    /// The run that decides it, and its step.
    pub side: Side,
    pub step: usize,
}

impl Mark {
    /// Whether the run on screen has reached the step that decides this prediction: the
    /// mark is shown from then on (the fencing-off marks stay once the page moves on).
    pub fn decided(&self, playing: Side, step: usize) -> bool {
        match (self.side, playing) {
            (Side::Off, Side::On) => true,
            (mine, now) => mine == now && step >= self.step,
        }
    }
}

/// Scores `p` against the entry's runs with fencing off and on.
pub fn score(off: &Trace, on: &Trace, p: &Prediction) -> Vec<Mark> {
    let c = choices(off, on);
    let value = |key, side, t: &Trace, said: &str| {
        let truth = story::final_value(t);
        Mark {
            key,
            what: format!(
                "Fencing {}: the {} ends at",
                if side == Side::Off { "off" } else { "on" },
                c.figure
            ),
            right: said == truth,
            said: said.to_owned(),
            truth,
            side,
            step: deciding_step(t),
        }
    };
    vec![
        value("off", Side::Off, off, &p.off),
        value("on", Side::On, on, &p.on),
        refusals(on, &c.writes, &p.refused),
    ]
}

/// The refused-writes prediction: decided at the first write whose answer contradicts it,
/// or, if none does, at the step that decides the run.
fn refusals(on: &Trace, labels: &[String], ticked: &[usize]) -> Mark {
    let steps = story::Steps::of(on);
    let mut wrong_at = None;
    let mut truth = Vec::new();
    for (n, (i, e)) in write_events(on).enumerate() {
        let is_refused = refused(e);
        if is_refused {
            truth.push(format!("{} ({})", labels[n], e.result_code()));
        }
        if is_refused != ticked.contains(&n) && wrong_at.is_none() {
            wrong_at = Some(steps.showing(i));
        }
    }
    let said: Vec<&str> = ticked
        .iter()
        .filter_map(|&n| labels.get(n).map(String::as_str))
        .collect();
    let list = |items: Vec<String>| match items.is_empty() {
        true => "none".to_owned(),
        false => items.join("; "),
    };
    Mark {
        key: "refused",
        what: "Fencing on: storage refuses".to_owned(),
        said: list(said.into_iter().map(str::to_owned).collect()),
        truth: list(truth),
        right: wrong_at.is_none(),
        side: Side::On,
        step: wrong_at.unwrap_or_else(|| deciding_step(on)),
    }
}

/// Where a rehearsal is.
#[derive(Debug, Clone, PartialEq)]
pub enum Phase {
    /// Choosing how to rehearse (and which entries to print).
    Start,
    /// The question is asked; the candidate answers aloud. `since_ms` is the page's clock
    /// when it was asked.
    Ask { since_ms: f64 },
    /// Answered after `secs`; predicting.
    Predict { secs: u32 },
    /// The run plays with the reveal, `side` first off, then on.
    Reveal {
        secs: u32,
        marks: Vec<Mark>,
        side: Side,
    },
    /// The entry's push-back `index`, its answer `shown` once the candidate has had a go.
    PushBack { index: usize, shown: bool },
    /// The entry is done; `next` is the one to ask next, if any is left.
    Done { next: Option<&'static str> },
}

/// What the candidate does; the page's clock comes in with the messages that need it.
#[derive(Debug, Clone, PartialEq)]
pub enum RehearseMsg {
    /// The deck's path from the headline.
    Walk {
        now_ms: f64,
    },
    /// These entries, in this order.
    Entries {
        ids: Vec<String>,
        now_ms: f64,
    },
    Answered {
        now_ms: f64,
    },
    /// The prediction, scored against the runs ([`score`]).
    Predicted(Vec<Mark>),
    /// The fencing-off run has played: now the same run with fencing on.
    FencingOn,
    /// The run has played: on to the push-backs.
    PushBacks,
    ShowAnswer,
    /// The next push-back, then the end of the entry, then the next entry (`now_ms` starts
    /// its clock); after the last entry, back to the start.
    Next {
        now_ms: f64,
    },
    /// Back to the start.
    Stop,
}

/// One rehearsal: the entry asked, the ones still to come, and the phase.
#[derive(Debug, Clone, PartialEq)]
pub struct Rehearsal {
    phase: Phase,
    entry: Option<&'static str>,
    /// Entries still to ask, when the candidate picked them.
    queue: Vec<&'static str>,
    /// Entries asked in this rehearsal, in order.
    asked: Vec<&'static str>,
    /// Following the deck's path rather than a list.
    walking: bool,
}

impl Default for Rehearsal {
    fn default() -> Self {
        Self {
            phase: Phase::Start,
            entry: None,
            queue: Vec::new(),
            asked: Vec::new(),
            walking: false,
        }
    }
}

/// The deck's id for `id`, if it names an entry (as a `'static` str).
fn deck_id(id: &str) -> Option<&'static str> {
    deck::TITLES.iter().map(|(i, _)| *i).find(|i| *i == id)
}

impl Rehearsal {
    pub fn phase(&self) -> &Phase {
        &self.phase
    }

    /// The entry being asked.
    pub fn entry(&self) -> Option<&'static str> {
        self.entry
    }

    /// How many entries this rehearsal has asked so far, the current one included.
    pub fn asked(&self) -> usize {
        self.asked.len()
    }

    pub fn update(&mut self, msg: RehearseMsg, entry: Option<&DeckEntry>) {
        match msg {
            RehearseMsg::Walk { now_ms } => {
                *self = Self {
                    walking: true,
                    ..Self::default()
                };
                self.ask(deck::HEADLINE.id, now_ms);
            }
            RehearseMsg::Entries { ids, now_ms } => {
                *self = Self::default();
                self.queue = ids.iter().filter_map(|i| deck_id(i)).rev().collect();
                match self.queue.pop() {
                    Some(first) => self.ask(first, now_ms),
                    None => self.phase = Phase::Start,
                }
            }
            RehearseMsg::Answered { now_ms } => {
                if let Phase::Ask { since_ms } = self.phase {
                    let secs = ((now_ms - since_ms).max(0.0) / 1000.0).round() as u32;
                    self.phase = Phase::Predict { secs };
                }
            }
            RehearseMsg::Predicted(marks) => {
                if let Phase::Predict { secs } = self.phase {
                    self.phase = Phase::Reveal {
                        secs,
                        marks,
                        side: Side::Off,
                    };
                }
            }
            RehearseMsg::FencingOn => {
                if let Phase::Reveal { side, .. } = &mut self.phase {
                    *side = Side::On;
                }
            }
            RehearseMsg::PushBacks => {
                if matches!(self.phase, Phase::Reveal { .. }) {
                    self.push_back(0, entry);
                }
            }
            RehearseMsg::ShowAnswer => {
                if let Phase::PushBack { shown, .. } = &mut self.phase {
                    *shown = true;
                }
            }
            RehearseMsg::Next { now_ms } => match self.phase {
                Phase::PushBack { index, .. } => self.push_back(index + 1, entry),
                _ => self.next_entry(now_ms),
            },
            RehearseMsg::Stop => *self = Self::default(),
        }
    }

    fn ask(&mut self, id: &'static str, now_ms: f64) {
        self.entry = Some(id);
        self.asked.push(id);
        self.phase = Phase::Ask { since_ms: now_ms };
    }

    /// Push-back `index` of the entry, or, past its last, the end of the entry.
    fn push_back(&mut self, index: usize, entry: Option<&DeckEntry>) {
        self.phase = match entry {
            Some(e) if index < e.pushbacks.len() => Phase::PushBack {
                index,
                shown: false,
            },
            _ => Phase::Done {
                next: self.upcoming(entry),
            },
        };
    }

    /// The entry to ask after `entry`: the next one picked; or, on the deck's path, the
    /// first entry its push-backs point to that is not asked yet, else the first entry in
    /// the deck's order not asked yet.
    fn upcoming(&self, entry: Option<&DeckEntry>) -> Option<&'static str> {
        if !self.walking {
            return self.queue.last().copied();
        }
        let fresh = |id: &&'static str| !self.asked.contains(id);
        let invited = entry
            .into_iter()
            .flat_map(|e| e.pushbacks)
            .filter_map(|p| p.shows.and_then(deck_id));
        let mut all = deck::TITLES.iter().map(|(i, _)| *i);
        invited.clone().find(fresh).or_else(|| all.find(fresh))
    }

    /// On to the entry [`Phase::Done`] named, or back to the start after the last.
    fn next_entry(&mut self, now_ms: f64) {
        let Phase::Done { next } = self.phase else {
            return;
        };
        match next {
            Some(id) => {
                self.queue.retain(|q| *q != id);
                self.ask(id, now_ms);
            }
            None => *self = Self::default(),
        }
    }
}

/// One entry's rehearsals, as the browser keeps them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub id: &'static str,
    /// How many times its predictions were scored.
    pub tries: u32,
    /// The last try's wrong predictions ([`Mark::key`]s).
    pub wrong: Vec<&'static str>,
    /// The last try's answer time, in seconds (against [`ANSWER_SECS`]).
    pub secs: u32,
}

/// Every entry rehearsed, in the deck's order: what the page keeps in the browser's
/// localStorage (nothing leaves the page), as [`Progress::encode`] writes it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Progress {
    records: Vec<Record>,
}

/// The [`Mark::key`]s, as `'static` strs.
const KEYS: [&str; 3] = ["off", "on", "refused"];

impl Progress {
    pub fn records(&self) -> &[Record] {
        &self.records
    }

    pub fn of(&self, id: &str) -> Option<&Record> {
        self.records.iter().find(|r| r.id == id)
    }

    /// The entries whose last try got a prediction wrong, in the deck's order.
    pub fn wrong(&self) -> Vec<&'static str> {
        let wrong = self.records.iter().filter(|r| !r.wrong.is_empty());
        wrong.map(|r| r.id).collect()
    }

    /// A scored try of entry `id`, answered in `secs`.
    pub fn record(&mut self, id: &str, marks: &[Mark], secs: u32) {
        let Some(id) = deck_id(id) else {
            return;
        };
        let wrong = KEYS
            .into_iter()
            .filter(|k| marks.iter().any(|m| m.key == *k && !m.right))
            .collect();
        let tries = self.of(id).map_or(0, |r| r.tries) + 1;
        self.records.retain(|r| r.id != id);
        self.records.push(Record {
            id,
            tries,
            wrong,
            secs,
        });
        let order = |id: &str| deck::TITLES.iter().position(|(i, _)| *i == id);
        self.records.sort_by_key(|r| order(r.id));
    }

    /// One line per entry: `id tries secs wrong,keys`.
    pub fn encode(&self) -> String {
        let line = |r: &Record| format!("{} {} {} {}\n", r.id, r.tries, r.secs, r.wrong.join(","));
        self.records.iter().map(line).collect()
    }

    /// Reads [`Progress::encode`]'s text back; a line that does not read (an entry no longer
    /// in the deck, a number out of range, text edited by hand) is left out.
    pub fn decode(text: &str) -> Self {
        let mut p = Self::default();
        for line in text.lines() {
            let mut f = line.split(' ');
            let (Some(id), Some(tries), Some(secs)) = (f.next(), f.next(), f.next()) else {
                continue;
            };
            let (Some(id), Ok(tries), Ok(secs)) = (deck_id(id), tries.parse(), secs.parse()) else {
                continue;
            };
            let wrong = f.next().unwrap_or_default().split(',');
            let wrong = wrong.filter_map(|w| KEYS.into_iter().find(|k| *k == w));
            p.records.retain(|r| r.id != id);
            p.records.push(Record {
                id,
                tries,
                wrong: wrong.collect(),
                secs,
            });
        }
        p
    }
}

/// The narration's invitation to step, which the question screen has no use for.
const STEP_HINT: &str = " Press → or tap Step forward ▶ to begin.";

/// The scenario's setup, as the question screen shows it: the run's opening narration
/// without its invitation to step.
pub fn setup(t: &Trace) -> String {
    let opening = story::Story::of(t).narration(0);
    opening
        .strip_suffix(STEP_HINT)
        .unwrap_or(&opening)
        .to_owned()
}

/// "1:05": seconds as a clock shows them.
pub fn clock(secs: u32) -> String {
    format!("{}:{:02}", secs / 60, secs % 60)
}

#[cfg(test)]
#[path = "rehearse_tests.rs"]
mod tests;
