//! The presenter's state machine: what is on screen, changed only by messages.
//!
//! Pure and native like the core (the crux pattern): the Leptos shell turns clicks,
//! drags, keys and timer ticks into [`Msg`]s and renders views of [`Lab`]; it never runs
//! the core or decides anything itself. Every field is private: only [`Lab::update`]
//! changes the state.
//!
//! Every change to the scenario is a [`ScenarioEdit`] (`edit`), the same one the URL reads
//! and writes and the What if… panel offers; beside the presenter state here live the
//! explorer's state, the renewal herd, the recording import, and the controls (fields,
//! keys and the README's table).

use std::sync::Arc;

use crate::core::{deck, run, story, FencingPolicy, Millis, Scenario, Trace};

pub mod bounds;
mod controls;
pub(crate) mod edit;
mod explorer;
mod faults;
mod herd;
mod recording;
pub mod rehearse;
pub mod rehearse_sheet;
#[cfg(test)]
mod tests;

pub use bounds::{Refusal, Setting, Unit, BOUNDS};
pub use controls::{controls_table, key_to_msg, pause_key, Control, Param, CONTROLS};
pub use edit::{EditError, ParseError, ScenarioEdit, NEW_DELAY_MS, NEW_PAUSE_MS};
pub use explorer::Exploration;
pub use faults::{fault_applies, fault_fields, fault_label, FaultField};
pub use herd::Herd;
pub use recording::{read_recording, MAX_RECORDING};

/// Everything the screen shows, derived from one scenario.
#[derive(Debug, Clone)]
pub struct Lab {
    /// Shared, so the shell's memos pass it on without copying every event.
    trace: Arc<Trace>,
    /// A step of the story's [`Steps`]: 0 = before the first event, [`Lab::last_step`] =
    /// after the last (a run of identical events is one step).
    step: usize,
    playing: bool,
    /// Play's speed in percent of normal.
    speed: u64,
    /// The last refused input, shown in the page; the state stays the last good one.
    error: Option<String>,
    /// The run as it was when the user forked, to compare side by side with the edited one.
    fork_of: Option<Arc<Trace>>,
    /// The same scenario with fencing off and on, for the comparison under the timeline.
    compare: (Arc<Trace>, Arc<Trace>),
    /// The renewal herd beside the renewal scenario.
    herd: Option<Arc<Herd>>,
    /// The schedule explorer, while it is open.
    exploration: Option<Exploration>,
    /// The deck entry's speaker notes, while they are shown.
    notes: Option<Arc<Vec<String>>>,
    presenting: bool,
    /// The reveal: nothing after the current step is drawn and the off/on cards wait for
    /// the step that decides them. On with presenter mode; `r` toggles it anywhere.
    reveal: bool,
    /// What the last drag changed at storage, in one line, until the next step or load.
    change: Option<String>,
    /// The laser pointer (presenter mode only): a fading trail under the mouse or finger.
    laser: bool,
    /// Shown inside another page's frame (`&embed`): the run, its steps, the ledger and the
    /// off/on cards, with none of the page's own tools.
    embed: bool,
}

/// Everything the user (or the page's timers) can do.
#[derive(Debug, Clone, PartialEq)]
pub enum Msg {
    Forward,
    Back,
    TogglePlay,
    /// One animation tick while playing.
    Tick,
    /// Play's speed, in percent of normal.
    SetSpeed(u64),
    Reset,
    Seek(usize),
    /// Change the scenario on screen (a what-if, a drag, a field), under the edit's own
    /// rules; the run follows.
    Edit(ScenarioEdit),
    /// Fencing off ↔ on (strict): the presenter's one key for the headline's two endings;
    /// same-epoch is picked in the select.
    TogglePolicy,
    /// Give a client without a pause one, starting at `at` (the what-if button; a drag on
    /// an empty lane draws one with an edit), [`NEW_PAUSE_MS`] long or up to the horizon.
    AddPause {
        actor: usize,
        at: Millis,
    },
    /// Take a client's pause away (double-click on it, or its remove button).
    RemovePause {
        actor: usize,
    },
    /// A parameter field's new text, parsed here.
    Field {
        param: Param,
        actor: Option<usize>,
        text: String,
    },
    /// Replace the whole scenario (picker, import).
    Load(Scenario),
    /// Pick a deck entry by id.
    Pick(String),
    /// Restore a shared view: scenario, step, and whether it is shown embedded.
    Restore {
        scenario: Scenario,
        step: usize,
        embed: bool,
    },
    /// Keep the current run as the original and edit a copy; again to close.
    ToggleFork,
    ToggleNotes,
    TogglePresent,
    /// Leaving fullscreen leaves presenter mode.
    StopPresenting,
    /// The reveal on or off (`r`).
    ToggleReveal,
    /// The laser pointer on or off; only while presenting (leaving presenter mode puts it away).
    ToggleLaser,
    /// Open (and start) or close the schedule explorer.
    ToggleExplore,
    /// Run up to `budget` more schedules; `elapsed_ms` is the page's clock since the
    /// exploration started (the lab keeps no time of its own).
    ExploreChunk {
        budget: usize,
        elapsed_ms: f64,
    },
    /// Load the explorer's counterexample `index` of table row `row`, at its end.
    LoadExample {
        row: usize,
        index: usize,
    },
    /// Show a refused input (e.g. a field that did not parse).
    Refuse(String),
    DismissError,
    /// A trace recorded on real servers (`fencing-lab replay` writes them), pasted or
    /// dropped as JSON, as [`read_recording`] read it (the shell reads it: in the page the
    /// reader is a wasm chunk fetched on first use): shown on the timeline until anything
    /// is changed, or its error.
    Import(Box<Result<Trace, String>>),
}

impl Msg {
    /// Opens one of the page's tools (fork, explorer, notes, presenter mode, laser), which
    /// an embedded view does not have.
    fn opens_a_tool(&self) -> bool {
        matches!(
            self,
            Msg::ToggleFork
                | Msg::ToggleExplore
                | Msg::ToggleNotes
                | Msg::TogglePresent
                | Msg::ToggleLaser
                | Msg::ExploreChunk { .. }
                | Msg::LoadExample { .. }
                | Msg::Import(_)
        )
    }
}

impl From<ScenarioEdit> for Msg {
    fn from(edit: ScenarioEdit) -> Self {
        Msg::Edit(edit)
    }
}

impl Default for Lab {
    fn default() -> Self {
        Self::new(Scenario::gc_pause())
    }
}

impl Lab {
    pub fn new(scenario: Scenario) -> Self {
        let trace = Arc::new(run(&scenario));
        Self {
            compare: comparison(&trace),
            herd: Herd::beside(&scenario, None),
            trace,
            step: 0,
            playing: false,
            speed: 100,
            error: None,
            fork_of: None,
            exploration: None,
            notes: None,
            presenting: false,
            reveal: false,
            change: None,
            laser: false,
            embed: false,
        }
    }

    pub fn trace(&self) -> &Arc<Trace> {
        &self.trace
    }

    pub fn scenario(&self) -> &Scenario {
        &self.trace.scenario
    }

    pub fn step(&self) -> usize {
        self.step
    }

    pub fn playing(&self) -> bool {
        self.playing
    }

    pub fn speed(&self) -> u64 {
        self.speed
    }

    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    pub fn fork_of(&self) -> Option<&Arc<Trace>> {
        self.fork_of.as_ref()
    }

    /// Fencing off, and fencing on (the policy on screen if it checks, else strict).
    pub fn compare(&self) -> (&Arc<Trace>, &Arc<Trace>) {
        (&self.compare.0, &self.compare.1)
    }

    pub fn herd(&self) -> Option<&Arc<Herd>> {
        self.herd.as_ref()
    }

    pub fn exploration(&self) -> Option<&Exploration> {
        self.exploration.as_ref()
    }

    pub fn notes(&self) -> Option<&Arc<Vec<String>>> {
        self.notes.as_ref()
    }

    pub fn presenting(&self) -> bool {
        self.presenting
    }

    /// What the last drag changed at storage, if anything.
    pub fn change(&self) -> Option<&str> {
        self.change.as_deref()
    }

    /// Whether the future is hidden (see [`Lab::reveal`]'s field).
    pub fn revealing(&self) -> bool {
        self.reveal
    }

    pub fn laser(&self) -> bool {
        self.laser
    }

    pub fn embedded(&self) -> bool {
        self.embed
    }

    pub fn at_end(&self) -> bool {
        self.step >= self.last_step()
    }

    /// The run's last step: the step controls, the counter and the words all count these.
    pub fn last_step(&self) -> usize {
        story::Steps::of(&self.trace).last()
    }

    pub fn update(&mut self, msg: Msg) {
        // An embedded view has none of the page's tools: their keys (p, n) do nothing.
        if self.embed && msg.opens_a_tool() {
            return;
        }
        // A drag's note stays while the drag goes on (its edits, the play ticks), and goes
        // with anything else: a step, a load, another tool.
        if !matches!(
            msg,
            Msg::Edit(_)
                | Msg::AddPause { .. }
                | Msg::RemovePause { .. }
                | Msg::Field { .. }
                | Msg::Tick
                | Msg::ExploreChunk { .. }
        ) {
            self.change = None;
        }
        match msg {
            Msg::Forward => self.step = (self.step + 1).min(self.last_step()),
            Msg::Back => self.step = self.step.saturating_sub(1),
            Msg::TogglePlay => {
                if !self.playing && self.at_end() {
                    self.step = 0; // Play at the end replays from the start
                }
                self.playing = !self.playing;
            }
            Msg::Tick => {
                if self.playing {
                    self.step = (self.step + 1).min(self.last_step());
                    self.playing = !self.at_end();
                }
            }
            Msg::SetSpeed(percent) => self.speed = percent.clamp(10, 1_000),
            Msg::Reset => {
                self.step = 0;
                self.playing = false;
            }
            Msg::Seek(step) => self.step = step.min(self.last_step()),
            Msg::Edit(edit) => match edit.apply(self.scenario()) {
                Ok(sc) => {
                    let before = Arc::clone(&self.trace);
                    self.replace_checked(sc);
                    let moved = matches!(
                        edit,
                        ScenarioEdit::Pause { .. } | ScenarioEdit::Delay { .. }
                    );
                    if moved && self.error.is_none() {
                        self.change = crate::view::panels::change_note(&before, &self.trace);
                    }
                }
                Err(e) => self.refuse(&e),
            },
            Msg::TogglePolicy => {
                let next = match self.scenario().policy {
                    FencingPolicy::Off => FencingPolicy::Strict,
                    _ => FencingPolicy::Off,
                };
                self.update(Msg::Edit(ScenarioEdit::Policy(next)));
            }
            Msg::AddPause { actor, at } => {
                let edit = ScenarioEdit::add_pause(self.scenario(), actor, at);
                self.edit_or_refuse(edit);
            }
            Msg::RemovePause { actor } => {
                let edit = ScenarioEdit::remove_pause(self.scenario(), actor);
                self.edit_or_refuse(edit);
            }
            Msg::Field { param, actor, text } => match param.edit(self.scenario(), actor, &text) {
                Ok(edit) => self.update(Msg::Edit(edit)),
                Err(why) => self.error = Some(why),
            },
            Msg::Load(sc) => match sc.validate() {
                Ok(()) => self.load(sc),
                Err(e) => self.error = Some(format!("That scenario was not loaded: {e}.")),
            },
            Msg::Pick(id) => match deck::find(&id) {
                Some(entry) => self.pick((entry.build)()),
                None => self.error = Some(format!("There is no scenario “{id}” in the deck.")),
            },
            Msg::Restore {
                scenario,
                step,
                embed,
            } => {
                self.update(Msg::Load(scenario));
                self.step = step.min(self.last_step());
                self.embed(embed);
            }
            Msg::ToggleFork => {
                self.fork_of = match self.fork_of {
                    Some(_) => None,
                    None => Some(self.trace.clone()),
                }
            }
            Msg::ToggleNotes => {
                self.notes = match self.notes {
                    Some(_) => None,
                    None => Some(self.deck_notes()),
                }
            }
            Msg::TogglePresent => {
                self.presenting = !self.presenting;
                self.reveal = self.presenting;
                self.laser &= self.presenting;
            }
            Msg::StopPresenting => {
                self.presenting = false;
                self.reveal = false;
                self.laser = false;
            }
            Msg::ToggleReveal => self.reveal = !self.reveal,
            Msg::ToggleLaser => self.laser = self.presenting && !self.laser,
            Msg::ToggleExplore => {
                self.exploration = match self.exploration {
                    Some(_) => None,
                    None => Some(Exploration::start(self.scenario())),
                }
            }
            Msg::ExploreChunk { budget, elapsed_ms } => {
                if let Some(x) = self.exploration.as_mut() {
                    x.run(budget, elapsed_ms);
                }
            }
            Msg::LoadExample { row, index } => {
                let picked = self
                    .exploration
                    .as_ref()
                    .and_then(|x| x.example(row, index));
                if let Some(sc) = picked {
                    self.update(Msg::Load(sc));
                    self.step = self.last_step();
                }
            }
            Msg::Refuse(why) => self.error = Some(why),
            Msg::DismissError => self.error = None,
            Msg::Import(read) => match *read {
                Ok(t) => {
                    self.load(t.scenario.clone());
                    self.trace = Arc::new(t);
                }
                Err(e) => self.error = Some(e),
            },
        }
    }

    /// In or out of another page's frame; going in puts the page's tools away.
    fn embed(&mut self, on: bool) {
        self.embed = on;
        if on {
            self.fork_of = None;
            self.exploration = None;
            self.notes = None;
            self.presenting = false;
            self.reveal = false;
            self.laser = false;
        }
    }

    /// A deck entry picked from the menu: it keeps the presenter's fencing choice (the
    /// entries are told under every policy), unless the entry cannot run with it, and then
    /// the page says why it changed.
    fn pick(&mut self, entry: Scenario) {
        let chosen = self.scenario().policy;
        let kept = entry.clone().with_policy(chosen);
        match kept.validate() {
            Ok(()) => self.load(kept),
            Err(why) => {
                let own = entry.policy;
                self.load(entry);
                self.error = Some(format!(
                    "Fencing is {} for this scenario, not {}: {why}.",
                    own.label(),
                    chosen.label()
                ));
            }
        }
    }

    /// A new scenario: back to its start, no fork; notes and the explorer follow it.
    fn load(&mut self, scenario: Scenario) {
        let entry_changed = scenario.id != self.scenario().id;
        self.replace(scenario);
        self.step = 0;
        self.playing = false;
        self.fork_of = None;
        if entry_changed && self.notes.is_some() {
            self.notes = Some(self.deck_notes());
        }
    }

    /// Re-runs with an edited scenario, keeping the viewer at the end if they were there,
    /// else on the same event (by identity, not index: a drag that moves a pause reorders
    /// the events, and the narration must not jump to an unrelated one).
    fn replace(&mut self, scenario: Scenario) {
        let was_at_end = self.at_end() && self.step > 0;
        let old = Arc::clone(&self.trace);
        self.herd = Herd::beside(&scenario, self.herd.as_ref());
        // A scenario that differs in what the explorer varies keeps its exploration.
        if let Some(x) = &self.exploration {
            if x.key != Exploration::key(&scenario) {
                self.exploration = Some(Exploration::start(&scenario));
            }
        }
        self.trace = Arc::new(run(&scenario));
        self.compare = comparison(&self.trace);
        self.step = if was_at_end {
            self.last_step()
        } else {
            same_event_step(&old, self.step, &self.trace).unwrap_or(self.step.min(self.last_step()))
        };
        self.error = None;
    }

    /// Re-runs with an edited scenario only if it validates; otherwise says why and keeps the old one.
    fn replace_checked(&mut self, scenario: Scenario) {
        match scenario.validate() {
            Ok(()) => self.replace(scenario),
            Err(e) => self.error = Some(format!("Not applied: {e}.")),
        }
    }

    /// The speaker notes of the deck entry on screen, written from the entry's three runs.
    fn deck_notes(&self) -> Arc<Vec<String>> {
        Arc::new(
            deck::find(&self.scenario().id)
                .map(|e| (e.notes)(&deck::runs(e)))
                .unwrap_or_default(),
        )
    }

    /// An edit a gesture asked for, or why it cannot be made.
    fn edit_or_refuse(&mut self, edit: Result<ScenarioEdit, EditError>) {
        match edit {
            Ok(edit) => self.update(Msg::Edit(edit)),
            Err(e) => self.refuse(&e),
        }
    }

    /// Shows why an edit was not made, as a sentence; the state stays the last good one.
    fn refuse(&mut self, e: &EditError) {
        let text = e.to_string();
        let mut chars = text.chars();
        let first = chars.next().map(|c| c.to_uppercase().collect::<String>());
        self.error = Some(format!("{}{}.", first.unwrap_or_default(), chars.as_str()));
    }
}

/// The step of `new` that shows the event step `step` of `old` ended on: the same actor's
/// n-th event of the same kind. `None` at the setup step, or if the event is gone.
fn same_event_step(old: &Trace, step: usize, new: &Trace) -> Option<usize> {
    let through = story::Steps::of(old).through(step);
    let last = old.events.get(through.checked_sub(1)?)?;
    let same = |a: &crate::core::TraceEvent, b: &crate::core::TraceEvent| {
        a.actor == b.actor && std::mem::discriminant(&a.kind) == std::mem::discriminant(&b.kind)
    };
    let nth = old.events[..through]
        .iter()
        .filter(|e| same(e, last))
        .count();
    let at = (new.events.iter().enumerate())
        .filter(|(_, e)| same(e, last))
        .nth(nth - 1)?
        .0;
    Some(story::Steps::of(new).showing(at))
}

/// The policy to show as "fencing on" beside `current`.
pub fn on_policy(current: FencingPolicy) -> FencingPolicy {
    match current {
        FencingPolicy::SameEpoch => FencingPolicy::SameEpoch,
        _ => FencingPolicy::Strict,
    }
}

/// Both sides of the comparison, each a real run; the side whose policy is the one on
/// screen is the run on screen, so only the other side is run again.
pub fn comparison(t: &Arc<Trace>) -> (Arc<Trace>, Arc<Trace>) {
    let side = |policy: FencingPolicy| {
        if t.scenario.policy == policy {
            Arc::clone(t)
        } else {
            Arc::new(run(&t.scenario.clone().with_policy(policy)))
        }
    };
    (side(FencingPolicy::Off), side(on_policy(t.scenario.policy)))
}
