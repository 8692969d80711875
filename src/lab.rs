//! The presenter's state machine: what is on screen, changed only by messages.
//!
//! Pure and native like the core (the crux pattern): the Leptos shell turns clicks,
//! drags, keys and timer ticks into [`Msg`]s and renders views of [`Lab`]; it never runs
//! the core or decides anything itself. Every field is private: only [`Lab::update`]
//! changes the state.

use std::sync::Arc;

use crate::core::explore::{ExploreSpec, Explorer, PolicyStats};
use crate::core::{
    deck, renewal_herd, run, FencingPolicy, HerdReport, Millis, Pause, ReleaseMode, Scenario,
    StorageCheck, TokenSource, Trace,
};

/// Everything the screen shows, derived from one scenario.
#[derive(Debug, Clone)]
pub struct Lab {
    /// Shared, so the shell's memos pass it on without copying every event.
    trace: Arc<Trace>,
    /// 0 = before the first event, `trace.len()` = after the last.
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
    SetPolicy(FencingPolicy),
    CyclePolicy,
    /// Move or resize an actor's pause, or draw one where it has none (drag, number inputs).
    SetPause {
        actor: usize,
        pause: Pause,
    },
    /// Give a client without a pause one, starting at `at` (the what-if button; a drag on
    /// an empty lane draws one with `SetPause`), [`NEW_PAUSE_MS`] long or up to the horizon.
    AddPause {
        actor: usize,
        at: Millis,
    },
    /// Take a client's pause away (double-click on it, or its remove button).
    RemovePause {
        actor: usize,
    },
    /// Add or drop clients, keeping 2 to 5: a new one copies the last one's script.
    SetClients(usize),
    /// A parameter field's new text, parsed here.
    Edit {
        param: Param,
        actor: Option<usize>,
        text: String,
    },
    /// Replace the whole scenario (picker, import).
    Load(Scenario),
    /// Pick a deck entry by id.
    Pick(String),
    /// Restore a shared view: scenario and step.
    Restore {
        scenario: Scenario,
        step: usize,
    },
    SetTtl(Millis),
    /// Where tokens come from (not for Redlock, which mints none).
    SetTokenSource(TokenSource),
    /// How clients release the lock.
    SetRelease(ReleaseMode),
    /// Whether the handoff barrier runs.
    SetBarrier(bool),
    /// How storage validates a token: the highest seen only, or a sequencer check with the
    /// lock service as well.
    SetCheck(StorageCheck),
    /// When the lock server's primary fails over, or never.
    SetFailover(Option<Millis>),
    /// How far the promoted Redis replica lags (`None`: cut off before the run).
    SetReplicationLag(Option<Millis>),
    SetDelay {
        actor: usize,
        delay: Millis,
    },
    /// Keep the current run as the original and edit a copy; again to close.
    ToggleFork,
    ToggleNotes,
    TogglePresent,
    /// Leaving fullscreen leaves presenter mode.
    StopPresenting,
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
    /// dropped as JSON: shown on the timeline until anything is changed.
    Import(String),
}

/// The largest recording the page reads: a deck run's is 20–60 KB.
pub const MAX_RECORDING: usize = 2_000_000;

/// Reads a recorded trace and checks it: valid JSON in the trace schema, marked as
/// recorded, a valid scenario, events in time order on lanes and actors that exist, and
/// self-consistent (folding its own observations gives back every event and snapshot, so
/// the words and verdicts drawn from it are true of it). Says what is wrong otherwise.
pub fn read_recording(text: &str) -> Result<Trace, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err(
            "Paste or drop a recorded trace (a .json file that `fencing-lab replay` writes) first."
                .to_owned(),
        );
    }
    if text.len() > MAX_RECORDING {
        return Err(format!(
            "That recording is {} KB; the page reads up to {} KB.",
            text.len() / 1000,
            MAX_RECORDING / 1000
        ));
    }
    let t: Trace = parse_trace(text).map_err(|e| format!("That is not a recorded trace: {e}."))?;
    let Some(rec) = t.recorded.clone() else {
        return Err(
            "That trace has no “recorded” field: it is not a recording from real servers."
                .to_owned(),
        );
    };
    t.scenario
        .validate()
        .map_err(|e| format!("The recording's scenario is not valid: {e}."))?;
    let sc = &t.scenario;
    let mut last = 0;
    for (i, e) in t.events.iter().enumerate() {
        let n = i + 1;
        if e.at < last || e.at > sc.horizon {
            return Err(format!(
                "Event {n} of the recording is at t={}, out of order or past the end (t={}).",
                e.at, sc.horizon
            ));
        }
        last = e.at;
        if let crate::core::Lane::Actor(a) = e.lane {
            if a >= sc.actors.len() {
                return Err(format!(
                    "Event {n} of the recording is on a lane with no client."
                ));
            }
        }
        if let Some(name) = &e.actor {
            if sc.actor_index(name).is_none() {
                return Err(format!(
                    "Event {n} of the recording names “{name}”, who is not in its scenario."
                ));
            }
        }
    }
    let account = crate::core::Account {
        balance: t.summary.final_balance,
        last_fence: t.summary.last_fence,
        last_write_fence: t.summary.last_write_fence,
        result: t
            .events
            .last()
            .map_or(t.initial.result.clone(), |e| e.snapshot.result.clone()),
    };
    let again = crate::core::recorded(sc, crate::core::observations_of(&t), account, rec);
    if let Some(i) = (0..t.events.len().max(again.events.len()))
        .find(|&i| t.events.get(i) != again.events.get(i))
    {
        return Err(format!(
            "The recording does not add up at event {}: its states or verdicts are not what its own events give.",
            i + 1
        ));
    }
    if again.writes != t.writes || again.summary != t.summary || again.initial != t.initial {
        return Err("The recording does not add up: its write log or summary is not what its own events give.".to_owned());
    }
    Ok(t)
}

/// `text` as a [`Trace`] through serde's derives, the same ones the replay writes it with.
/// An error names the path of the bad value (`events[3].kind`) and where it is in the text;
/// an unknown variant's list of every known one is left out.
fn parse_trace(text: &str) -> Result<Trace, String> {
    let mut de = serde_json::Deserializer::from_str(text);
    let t: Trace = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let what = short(e.inner());
        match e.path().to_string().as_str() {
            "." => what,
            path => format!("{path}: {what}"),
        }
    })?;
    de.end().map_err(|e| short(&e))?;
    Ok(t)
}

/// serde_json's message without an unknown variant's list of every known one.
fn short(e: &serde_json::Error) -> String {
    let what = e.to_string();
    match (what.find(", expected one of"), what.rfind(" at line ")) {
        (Some(cut), Some(at)) if cut < at => format!("{}{}", &what[..cut], &what[at..]),
        _ => what,
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

    pub fn at_end(&self) -> bool {
        self.step >= self.trace.len()
    }

    pub fn update(&mut self, msg: Msg) {
        match msg {
            Msg::Forward => self.step = (self.step + 1).min(self.trace.len()),
            Msg::Back => self.step = self.step.saturating_sub(1),
            Msg::TogglePlay => {
                if !self.playing && self.at_end() {
                    self.step = 0; // Play at the end replays from the start
                }
                self.playing = !self.playing;
            }
            Msg::Tick => {
                if self.playing {
                    self.step = (self.step + 1).min(self.trace.len());
                    self.playing = !self.at_end();
                }
            }
            Msg::SetSpeed(percent) => self.speed = percent.clamp(10, 1_000),
            Msg::Reset => {
                self.step = 0;
                self.playing = false;
            }
            Msg::Seek(step) => self.step = step.min(self.trace.len()),
            Msg::SetPolicy(policy) => {
                let mut sc = self.scenario().clone();
                sc.policy = policy;
                self.replace(sc);
            }
            Msg::CyclePolicy => self.update(Msg::SetPolicy(self.scenario().policy.next())),
            Msg::SetPause { actor, pause } => match self.check_pause(actor, pause) {
                Ok(()) => {
                    let sc = self.scenario().clone().with_pause(actor, pause);
                    self.replace(sc);
                }
                Err(e) => self.error = Some(e),
            },
            Msg::AddPause { actor, at } => match self.new_pause(actor, at) {
                Ok(pause) => {
                    let sc = self.scenario().clone().with_pause(actor, pause);
                    self.replace(sc);
                }
                Err(e) => self.error = Some(e),
            },
            Msg::RemovePause { actor } => {
                let mut sc = self.scenario().clone();
                match sc.actors.get_mut(actor) {
                    Some(a) if !a.pauses.is_empty() => {
                        a.pauses.clear();
                        self.replace(sc);
                    }
                    Some(a) => self.error = Some(format!("{} has no pause to remove.", a.name)),
                    None => self.error = Some(format!("There is no actor number {actor}.")),
                }
            }
            Msg::SetClients(n) => {
                if crate::core::CLIENTS.contains(&n) {
                    let sc = self.scenario().clone().with_clients(n);
                    self.replace_checked(sc);
                } else {
                    self.error = Some(format!(
                        "A scenario here has {} to {} clients.",
                        crate::core::CLIENTS.start(),
                        crate::core::CLIENTS.end()
                    ));
                }
            }
            Msg::Edit { param, actor, text } => {
                let msg = param.edit(self.scenario(), actor, &text);
                self.update(msg);
            }
            Msg::Load(sc) => match sc.validate() {
                Ok(()) => self.load(sc),
                Err(e) => self.error = Some(format!("That scenario was not loaded: {e}.")),
            },
            Msg::Pick(id) => match deck::find(&id) {
                Some(entry) => self.load((entry.build)()),
                None => self.error = Some(format!("There is no scenario “{id}” in the deck.")),
            },
            Msg::Restore { scenario, step } => {
                self.update(Msg::Load(scenario));
                self.step = step.min(self.trace.len());
            }
            Msg::SetTokenSource(source) => {
                let mut sc = self.scenario().clone();
                if sc.redlock.is_some() {
                    self.error =
                        Some("Redlock mints no token: its token source cannot change.".to_owned());
                } else {
                    sc.token_source = source;
                    self.replace(sc);
                }
            }
            Msg::SetRelease(mode) => {
                let mut sc = self.scenario().clone();
                sc.release = mode;
                self.replace(sc);
            }
            Msg::SetBarrier(on) => {
                let mut sc = self.scenario().clone();
                sc.skip_barrier = !on;
                self.replace(sc);
            }
            Msg::SetCheck(check) => {
                let mut sc = self.scenario().clone();
                sc.check = check;
                self.replace(sc);
            }
            Msg::SetFailover(at) => {
                let mut sc = self.scenario().clone();
                match at {
                    Some(t) if t > sc.horizon => {
                        self.error = Some(format!(
                            "The failover must come by t={}, the end of the timeline.",
                            crate::core::story::time_label(&sc, sc.horizon)
                        ));
                    }
                    _ => {
                        sc.failover_at = at;
                        self.replace_checked(sc);
                    }
                }
            }
            Msg::SetReplicationLag(lag) => {
                let mut sc = self.scenario().clone();
                sc.replication_lag = lag;
                self.replace_checked(sc);
            }
            Msg::SetTtl(ttl) => {
                let mut sc = self.scenario().clone();
                sc.lease_ttl = ttl;
                self.replace_checked(sc);
            }
            Msg::SetDelay { actor, delay } => {
                let mut sc = self.scenario().clone();
                match sc.actors.get_mut(actor) {
                    Some(a) => {
                        a.network_delay = delay;
                        self.replace_checked(sc);
                    }
                    None => self.error = Some(format!("There is no actor number {actor}.")),
                }
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
            Msg::TogglePresent => self.presenting = !self.presenting,
            Msg::StopPresenting => self.presenting = false,
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
                    self.step = self.trace.len();
                }
            }
            Msg::Refuse(why) => self.error = Some(why),
            Msg::DismissError => self.error = None,
            Msg::Import(text) => match read_recording(&text) {
                Ok(t) => {
                    self.load(t.scenario.clone());
                    self.trace = Arc::new(t);
                }
                Err(e) => self.error = Some(e),
            },
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

    /// Re-runs with an edited scenario, keeping the viewer at the end if they were there.
    fn replace(&mut self, scenario: Scenario) {
        let was_at_end = self.at_end() && self.step > 0;
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
            self.trace.len()
        } else {
            self.step.min(self.trace.len())
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

    /// The pause `AddPause` would give `actor`, or why not.
    fn new_pause(&self, actor: usize, at: Millis) -> Result<Pause, String> {
        let sc = self.scenario();
        let Some(a) = sc.actors.get(actor) else {
            return Err(format!("There is no actor number {actor}."));
        };
        if !a.pauses.is_empty() {
            return Err(format!(
                "{} already has a pause: drag it, or remove it first.",
                a.name
            ));
        }
        if at >= sc.horizon {
            return Err(format!(
                "A pause must start before t={} ms, the end of the timeline.",
                sc.horizon
            ));
        }
        Ok(Pause {
            start: at,
            duration: NEW_PAUSE_MS.min(sc.horizon - at),
        })
    }

    fn check_pause(&self, actor: usize, pause: Pause) -> Result<(), String> {
        let sc = self.scenario();
        let Some(a) = sc.actors.get(actor) else {
            return Err(format!("There is no actor number {actor}."));
        };
        if pause.end() > sc.horizon {
            return Err(format!(
                "{}'s pause must end by t={} ms (it would end at {} ms).",
                a.name,
                sc.horizon,
                pause.end()
            ));
        }
        Ok(())
    }
}

/// How long a new pause is before it is dragged to size.
pub const NEW_PAUSE_MS: Millis = 10;

/// The policy to show as "fencing on" beside `current`.
pub fn on_policy(current: FencingPolicy) -> FencingPolicy {
    match current {
        FencingPolicy::SameEpoch => FencingPolicy::SameEpoch,
        _ => FencingPolicy::Strict,
    }
}

/// Both sides of the comparison, each a real run; the side whose policy is the one on
/// screen is the run on screen, so only the other side is run again.
fn comparison(t: &Arc<Trace>) -> (Arc<Trace>, Arc<Trace>) {
    let side = |policy: FencingPolicy| {
        if t.scenario.policy == policy {
            Arc::clone(t)
        } else {
            Arc::new(run(&t.scenario.clone().with_policy(policy)))
        }
    };
    (side(FencingPolicy::Off), side(on_policy(t.scenario.policy)))
}

/// Many holders renewing on one fixed schedule hit the lock server in bursts; jitter
/// spreads them. Both are real runs of the core's herd simulation.
#[derive(Debug, Clone, PartialEq)]
pub struct Herd {
    pub holders: usize,
    pub ttl: Millis,
    pub seed: u64,
    pub fixed: HerdReport,
    pub jittered: HerdReport,
}

impl Herd {
    pub const HOLDERS: usize = 1_000;

    /// The herd shown beside `sc` (the renewal entry only), reusing `old` when the TTL and
    /// seed are the same, so a drag does not rerun it.
    fn beside(sc: &Scenario, old: Option<&Arc<Herd>>) -> Option<Arc<Herd>> {
        if sc.id != "renewal" {
            return None;
        }
        if let Some(h) = old.filter(|h| h.ttl == sc.lease_ttl && h.seed == sc.seed) {
            return Some(Arc::clone(h));
        }
        let horizon = sc.lease_ttl.saturating_mul(4);
        Some(Arc::new(Herd {
            holders: Self::HOLDERS,
            ttl: sc.lease_ttl,
            seed: sc.seed,
            fixed: renewal_herd(Self::HOLDERS, sc.lease_ttl, false, sc.seed, horizon),
            jittered: renewal_herd(Self::HOLDERS, sc.lease_ttl, true, sc.seed, horizon),
        }))
    }

    pub fn caption(&self) -> String {
        format!(
            "{} holders renewing every third of a {} ms TTL: the fixed schedule peaks at {} renewals per {} ms, jitter at {}.",
            self.holders,
            self.ttl,
            self.fixed.peak_per_bucket(),
            self.fixed.bucket_ms,
            self.jittered.peak_per_bucket()
        )
    }
}

/// The schedule explorer over the scenario on screen: every placement of one actor's pause
/// (and delivery delay) on a grid, under each policy, run a chunk at a time.
#[derive(Debug, Clone)]
pub struct Exploration {
    /// The scenario with what the explorer varies blanked: a new key restarts it.
    key: Scenario,
    /// The scenario counterexamples are applied to.
    base: Scenario,
    runner: Option<Explorer>,
    heading: String,
    failed: Option<String>,
    elapsed_ms: f64,
    ran: bool,
}

impl Exploration {
    /// The actor worth exploring: the first with a pause, else the first whose packets are delayed.
    fn subject(sc: &Scenario) -> usize {
        sc.actors
            .iter()
            .position(|a| !a.pauses.is_empty())
            .or_else(|| sc.actors.iter().position(|a| a.network_delay > 0))
            .unwrap_or(0)
    }

    /// The key ignores what the explorer itself varies (the subject's pause, the policy), so
    /// loading a counterexample keeps the table.
    fn key(sc: &Scenario) -> Scenario {
        let mut sc = sc.clone();
        sc.policy = FencingPolicy::Strict;
        let who = Self::subject(&sc);
        if let Some(a) = sc.actors.get_mut(who) {
            a.pauses.clear();
        }
        sc
    }

    /// The finest grid (of a few) that keeps the run small enough to finish in a moment.
    pub fn start(sc: &Scenario) -> Self {
        let actor = Self::subject(sc);
        let mut last = String::from("nothing to explore");
        let mut runner = None;
        for parts in [100, 50, 25, 10, 5] {
            let grid = sc.horizon.div_ceil(parts).max(1);
            match Explorer::new(sc, ExploreSpec::all_policies(actor, grid)) {
                Ok(e) if e.total() <= 60_000 => {
                    runner = Some(e);
                    break;
                }
                Ok(e) => last = format!("{} schedules is too many", e.total()),
                Err(e) => last = e,
            }
        }
        let heading = runner.as_ref().map_or_else(String::new, |r| {
            let a = &sc.actors[actor];
            let delays = if a.network_delay > 0 {
                " and every delivery delay"
            } else {
                ""
            };
            format!(
                "Every placement of {}'s pause{delays} on a {} ms grid, under each policy: {} schedules.",
                a.name,
                r.spec().grid,
                r.total()
            )
        });
        Self {
            key: Self::key(sc),
            base: sc.clone(),
            failed: runner
                .is_none()
                .then(|| format!("Cannot explore this scenario: {last}.")),
            runner,
            heading,
            elapsed_ms: 0.0,
            ran: false,
        }
    }

    /// Runs up to `budget` more schedules; `elapsed_ms` is what the status line shows.
    pub fn run(&mut self, budget: usize, elapsed_ms: f64) {
        if let Some(r) = self.runner.as_mut() {
            if !r.is_finished() {
                r.step(budget);
            }
            self.elapsed_ms = elapsed_ms;
            self.ran = true;
        }
    }

    pub fn stats(&self) -> &[PolicyStats] {
        self.runner.as_ref().map_or(&[], |r| r.stats())
    }

    /// Schedules done and in all.
    pub fn progress(&self) -> (usize, usize) {
        self.runner
            .as_ref()
            .map_or((0, 0), |r| (r.done(), r.total()))
    }

    pub fn grid(&self) -> Millis {
        self.runner.as_ref().map_or(0, |r| r.spec().grid)
    }

    pub fn heading(&self) -> &str {
        &self.heading
    }

    pub fn failed(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    /// Whether a chunk has run (the status line shows from then on).
    pub fn started(&self) -> bool {
        self.ran
    }

    pub fn finished(&self) -> bool {
        self.runner.as_ref().is_none_or(Explorer::is_finished)
    }

    pub fn elapsed_ms(&self) -> f64 {
        self.elapsed_ms
    }

    /// The counterexample as a scenario to load.
    fn example(&self, row: usize, index: usize) -> Option<Scenario> {
        let ex = self.stats().get(row)?.examples.get(index)?;
        Some(ex.schedule.apply(&self.base))
    }
}

/// A parameter field of the panel under the timeline. Its code is the field's
/// `data-param`; the shell hands back the typed value, never the string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Param {
    Ttl,
    Delay,
    PauseStart,
    PauseLength,
}

impl Param {
    pub const ALL: [Param; 4] = [
        Param::Ttl,
        Param::Delay,
        Param::PauseStart,
        Param::PauseLength,
    ];

    pub fn code(self) -> &'static str {
        match self {
            Param::Ttl => "ttl",
            Param::Delay => "delay",
            Param::PauseStart => "pause-start",
            Param::PauseLength => "pause-length",
        }
    }

    pub fn from_code(code: &str) -> Option<Param> {
        Param::ALL.into_iter().find(|p| p.code() == code)
    }

    /// The smallest value the field takes.
    pub fn min(self) -> u8 {
        match self {
            Param::Ttl | Param::PauseLength => 1,
            Param::Delay | Param::PauseStart => 0,
        }
    }

    /// What the field holds for `sc` (and `actor`); also what it shows again after a
    /// refused edit.
    pub fn value(self, sc: &Scenario, actor: Option<usize>) -> Option<u64> {
        let a = actor.and_then(|i| sc.actors.get(i));
        match self {
            Param::Ttl => Some(sc.lease_ttl),
            Param::Delay => a.map(|a| a.network_delay),
            Param::PauseStart => a.and_then(|a| a.pauses.first()).map(|p| p.start),
            Param::PauseLength => a.and_then(|a| a.pauses.first()).map(|p| p.duration),
        }
    }

    /// The message an edit of this field to `text` sends.
    fn edit(self, sc: &Scenario, actor: Option<usize>, text: &str) -> Msg {
        let value = text.trim().parse::<u64>();
        let pause = actor.and_then(|a| sc.actors.get(a)?.pauses.first().copied());
        match (self, value) {
            (Param::Ttl, Ok(v)) => Msg::SetTtl(v),
            (Param::Ttl, Err(_)) => Msg::Refuse("The lease TTL needs whole milliseconds.".into()),
            (Param::Delay, Ok(delay)) => Msg::SetDelay {
                actor: actor.unwrap_or(usize::MAX),
                delay,
            },
            (Param::Delay, Err(_)) => {
                Msg::Refuse("A network delay needs whole milliseconds.".to_owned())
            }
            (Param::PauseStart | Param::PauseLength, Ok(v)) => match (actor, pause) {
                (Some(actor), Some(p)) => Msg::SetPause {
                    actor,
                    pause: if self == Param::PauseStart {
                        Pause { start: v, ..p }
                    } else {
                        Pause { duration: v, ..p }
                    },
                },
                _ => Msg::Refuse("That client has no pause to edit.".to_owned()),
            },
            (Param::PauseStart | Param::PauseLength, Err(_)) => {
                Msg::Refuse("A pause needs whole, non-negative milliseconds.".to_owned())
            }
        }
    }
}

/// Which part of a pause block a drag holds: the block moves it, the right edge resizes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grip {
    Move,
    Resize,
}

impl Grip {
    pub fn code(self) -> &'static str {
        match self {
            Grip::Move => "move",
            Grip::Resize => "resize",
        }
    }

    pub fn from_code(code: &str) -> Option<Grip> {
        [Grip::Move, Grip::Resize]
            .into_iter()
            .find(|g| g.code() == code)
    }

    /// The pause `p` after dragging this grip by `delta` ms.
    pub fn apply(self, p: Pause, delta: i64, horizon: Millis) -> Pause {
        match self {
            Grip::Move => moved(p, delta, horizon),
            Grip::Resize => resized(p, delta, horizon),
        }
    }
}

/// One row of the presenter's controls: what to do, how, and the keys (`KeyboardEvent.key`
/// values) that do it. The README's table is [`controls_table`] (a test holds them to each
/// other, and the keys to [`key_to_msg`] and the shell's own `p` / `n`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Control {
    pub action: &'static str,
    pub how: &'static str,
    pub keys: &'static [&'static str],
}

/// Every control a presenter has, in the README's order.
pub const CONTROLS: [Control; 12] = [
    Control {
        action: "step forward / back",
        how: "`→` / `←`, or `.` (what presenter clickers send), or the buttons",
        keys: &["ArrowRight", "ArrowLeft", "."],
    },
    Control {
        action: "play / pause",
        how: "`Space` (Play at the end replays from the start); **Speed** 0.5× to 4×",
        keys: &[" "],
    },
    Control {
        action: "fencing off → strict → same-epoch",
        how: "`f`, or the **Fencing** select",
        keys: &["f"],
    },
    Control {
        action: "move / resize a pause",
        how: "drag the grey block / its right edge; or `Tab` to it and `←` / `→` (1 ms), `Shift` + `←` / `→` to resize; or type exact values",
        keys: &[],
    },
    Control {
        action: "add / remove a pause",
        how: "drag along an empty stretch of a client's lane / double-click the pause, or `Delete` on it; or **What if… → + pause / − pause**",
        keys: &[],
    },
    Control {
        action: "delay a client's packets",
        how: "drag a write's arrival at storage to the right (back, or a double-click, takes it off); or **What if… → + delay / − delay**, then type the exact value",
        keys: &[],
    },
    Control {
        action: "add / remove a client (2 to 5)",
        how: "**What if… → + client / − client**",
        keys: &[],
    },
    Control {
        action: "change the design",
        how: "**What if…**: tokens from, release, storage checks (the highest token, or the sequencer with the lock service too), handoff barrier, failover time, replica lag",
        keys: &[],
    },
    Control {
        action: "jump",
        how: "the scrubber; `Home` resets",
        keys: &["Home"],
    },
    Control {
        action: "presenter mode / speaker notes",
        how: "`p` / `n`",
        keys: &["p", "n"],
    },
    Control {
        action: "fork, explore, export",
        how: "**Fork**, **Explore**, **SVG** / **PNG**",
        keys: &[],
    },
    Control {
        action: "show a run recorded on real servers",
        how: "**Scenario → Import a recording…**: choose, drop or paste a file that `scripts/replay.sh` wrote",
        keys: &[],
    },
];

/// The README's controls table, as markdown.
pub fn controls_table() -> String {
    let mut out = String::from("| action | how |\n| --- | --- |\n");
    for c in CONTROLS {
        out.push_str(&format!("| {} | {} |\n", c.action, c.how));
    }
    out
}

/// Keyboard map: ← → step, Space play, `.` forward (presenter clickers send it), `f` fencing.
pub fn key_to_msg(key: &str) -> Option<Msg> {
    match key {
        "ArrowRight" | "." | "PageDown" => Some(Msg::Forward),
        "ArrowLeft" | "," | "PageUp" => Some(Msg::Back),
        " " | "Spacebar" => Some(Msg::TogglePlay),
        "f" | "F" => Some(Msg::CyclePolicy),
        "Home" => Some(Msg::Reset),
        _ => None,
    }
}

/// Horizontal geometry of the timeline, in SVG user units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    pub left: f64,
    pub width: f64,
    pub horizon: Millis,
}

impl Scale {
    pub fn x(&self, t: Millis) -> f64 {
        self.left + self.width * (t.min(self.horizon) as f64) / (self.horizon.max(1) as f64)
    }

    /// Converts a horizontal distance in user units to whole milliseconds.
    pub fn ms(&self, dx: f64) -> i64 {
        (dx * self.horizon as f64 / self.width).round() as i64
    }
}

/// A pause moved by `delta` ms, kept inside `[0, horizon]` with its length unchanged.
pub fn moved(p: Pause, delta: i64, horizon: Millis) -> Pause {
    let max_start = horizon.saturating_sub(p.duration) as i64;
    Pause {
        start: (p.start as i64 + delta).clamp(0, max_start) as Millis,
        duration: p.duration,
    }
}

/// A client's packet delay after dragging the arrival of its write (sent at `sent_at`) by
/// `delta` ms: never negative, and the write still lands by the horizon.
pub fn dragged_delay(delay0: Millis, delta: i64, sent_at: Millis, horizon: Millis) -> Millis {
    let max = horizon.saturating_sub(sent_at) as i64;
    (delay0 as i64 + delta).clamp(0, max) as Millis
}

/// A pause resized from its right edge by `delta` ms: at least 1 ms, never past the horizon.
pub fn resized(p: Pause, delta: i64, horizon: Millis) -> Pause {
    let max_len = horizon.saturating_sub(p.start).max(1) as i64;
    Pause {
        start: p.start,
        duration: (p.duration as i64 + delta).clamp(1, max_len) as Millis,
    }
}

/// A key pressed on a focused pause block: `←` / `→` move it 1 ms, with `Shift` they
/// shrink / grow it 1 ms from its right edge, `Delete` or `Backspace` removes it. `None` for
/// any other key, so the page's own keys (stepping) still work elsewhere.
pub fn pause_key(key: &str, shift: bool, actor: usize, p: Pause, horizon: Millis) -> Option<Msg> {
    let delta = match key {
        "ArrowLeft" => -1,
        "ArrowRight" => 1,
        "Delete" | "Backspace" => return Some(Msg::RemovePause { actor }),
        _ => return None,
    };
    let grip = if shift { Grip::Resize } else { Grip::Move };
    Some(Msg::SetPause {
        actor,
        pause: grip.apply(p, delta, horizon),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stepping_is_clamped_and_back_is_indexing() {
        let mut lab = Lab::default();
        lab.update(Msg::Back);
        assert_eq!(lab.step, 0);
        for _ in 0..100 {
            lab.update(Msg::Forward);
        }
        assert_eq!(lab.step, lab.trace.len());
        assert_eq!(lab.trace.snapshot_at(lab.step).balance, 90);
        lab.update(Msg::Back);
        assert_eq!(lab.step, lab.trace.len() - 1);
    }

    #[test]
    fn policy_toggle_keeps_you_at_the_end() {
        let mut lab = Lab::default();
        lab.update(Msg::Seek(usize::MAX));
        lab.update(Msg::SetPolicy(FencingPolicy::Off));
        assert!(lab.at_end());
        assert_eq!(lab.trace.summary.final_balance, 80);
        lab.update(Msg::CyclePolicy);
        assert_eq!(lab.scenario().policy, FencingPolicy::Strict);
        assert_eq!(lab.trace.summary.final_balance, 90);
    }

    #[test]
    fn out_of_range_pause_is_refused_and_state_kept() {
        let mut lab = Lab::default();
        let before = lab.trace.clone();
        lab.update(Msg::SetPause {
            actor: 0,
            pause: Pause {
                start: 90,
                duration: 50,
            },
        });
        assert!(lab.error.as_deref().unwrap().contains("must end by"));
        assert_eq!(lab.trace, before);
        lab.update(Msg::SetPause {
            actor: 9,
            pause: Pause {
                start: 0,
                duration: 5,
            },
        });
        assert_eq!(lab.trace, before);
    }

    #[test]
    fn fork_keeps_the_original_while_the_copy_changes() {
        let mut lab = Lab::default();
        lab.update(Msg::Seek(usize::MAX));
        lab.update(Msg::ToggleFork);
        lab.update(Msg::SetPolicy(FencingPolicy::Off));
        let original = lab.fork_of.as_ref().unwrap();
        assert_eq!(original.summary.final_balance, 90);
        assert_eq!(lab.trace.summary.final_balance, 80);
        lab.update(Msg::ToggleFork);
        assert!(lab.fork_of.is_none());
    }

    #[test]
    fn ttl_and_delay_edits_are_validated() {
        let mut lab = Lab::default();
        lab.update(Msg::SetTtl(0));
        assert!(lab.error.as_deref().unwrap().contains("lease_ttl"));
        assert_eq!(lab.scenario().lease_ttl, 30);
        lab.update(Msg::SetTtl(100));
        assert!(lab.error.is_none());
        assert_eq!(
            lab.trace.summary.final_balance, 90,
            "a 100 ms lease outlives the pause: B waits, then finds the job done"
        );
        assert!(!lab.trace.summary.conflict());
        assert_eq!(lab.trace.summary.duplicate_runs, 0);
        assert_eq!(lab.trace.summary.accepted_writes, 1);
        assert!(lab
            .trace
            .events
            .iter()
            .any(|e| e.actor.as_deref() == Some("B")
                && e.kind == crate::core::EventKind::JobChecked { done: true }));
        lab.update(Msg::SetDelay { actor: 7, delay: 1 });
        assert!(lab.error.is_some());
        lab.update(Msg::SetDelay { actor: 0, delay: 5 });
        assert_eq!(lab.scenario().actors[0].network_delay, 5);
    }

    #[test]
    fn restore_clamps_the_step() {
        let mut lab = Lab::default();
        lab.update(Msg::Restore {
            scenario: Scenario::gc_pause().with_policy(FencingPolicy::Off),
            step: 9_999,
        });
        assert!(lab.at_end());
        assert_eq!(lab.trace.summary.final_balance, 80);
    }

    #[test]
    fn play_runs_to_the_end_then_stops() {
        let mut lab = Lab::default();
        lab.update(Msg::TogglePlay);
        for _ in 0..lab.trace.len() {
            lab.update(Msg::Tick);
        }
        assert!(lab.at_end());
        assert!(!lab.playing);
        lab.update(Msg::TogglePlay);
        assert_eq!(lab.step, 0, "play at the end replays");
    }

    #[test]
    fn every_documented_key_does_something() {
        // `p` and `n` are the shell's own (fullscreen and the notes drawer).
        for c in CONTROLS {
            for k in c.keys {
                assert!(
                    key_to_msg(k).is_some() || matches!(*k, "p" | "n"),
                    "{}: {k:?}",
                    c.action
                );
            }
        }
        let documented: Vec<&str> = CONTROLS
            .iter()
            .flat_map(|c| c.keys.iter().copied())
            .collect();
        for k in ["ArrowRight", "ArrowLeft", ".", " ", "f", "Home"] {
            assert!(
                documented.contains(&k),
                "{k:?} is mapped but not in the table"
            );
        }
        assert!(controls_table().starts_with("| action | how |\n| --- | --- |\n| step forward"));
    }

    #[test]
    fn keys_map_to_messages() {
        assert_eq!(key_to_msg("ArrowRight"), Some(Msg::Forward));
        assert_eq!(key_to_msg("."), Some(Msg::Forward));
        assert_eq!(key_to_msg("ArrowLeft"), Some(Msg::Back));
        assert_eq!(key_to_msg(" "), Some(Msg::TogglePlay));
        assert_eq!(key_to_msg("f"), Some(Msg::CyclePolicy));
        assert_eq!(key_to_msg("q"), None);
    }

    #[test]
    fn the_comparison_is_two_real_runs_and_follows_edits() {
        let mut lab = Lab::default();
        let (off, on) = lab.compare();
        assert_eq!(
            (off.summary.final_balance, on.summary.final_balance),
            (80, 90)
        );
        assert!(
            Arc::ptr_eq(on, lab.trace()),
            "the side on screen is not rerun"
        );
        lab.update(Msg::SetTtl(100));
        let (off, on) = lab.compare();
        assert_eq!(
            (off.summary.final_balance, on.summary.final_balance),
            (90, 90)
        );
        lab.update(Msg::SetPolicy(FencingPolicy::SameEpoch));
        assert_eq!(lab.compare().1.scenario.policy, FencingPolicy::SameEpoch);
        lab.update(Msg::SetPolicy(FencingPolicy::Off));
        assert_eq!(lab.compare().1.scenario.policy, FencingPolicy::Strict);
    }

    #[test]
    fn field_edits_are_parsed_here_and_refusals_keep_the_value() {
        let mut lab = Lab::default();
        let edit = |param, actor, text: &str| Msg::Edit {
            param,
            actor,
            text: text.to_owned(),
        };
        lab.update(edit(Param::PauseStart, Some(0), " 12 "));
        assert_eq!(lab.scenario().actors[0].pauses[0].start, 12);
        lab.update(edit(Param::PauseLength, Some(0), "x"));
        assert!(lab.error().unwrap().contains("whole, non-negative"));
        assert_eq!(Param::PauseLength.value(lab.scenario(), Some(0)), Some(50));
        lab.update(edit(Param::Ttl, None, "45"));
        assert_eq!(lab.scenario().lease_ttl, 45);
        lab.update(edit(Param::PauseStart, Some(1), "3"));
        assert!(lab.error().unwrap().contains("no pause"), "B has no pause");
        for p in Param::ALL {
            assert_eq!(Param::from_code(p.code()), Some(p));
        }
        assert_eq!(Grip::from_code("resize"), Some(Grip::Resize));
        assert_eq!(Grip::from_code("x"), None);
    }

    #[test]
    fn the_explorer_runs_in_chunks_and_loads_a_counterexample() {
        let mut lab = Lab::default();
        lab.update(Msg::ToggleExplore);
        let x = lab.exploration().unwrap();
        assert!(
            x.heading().contains("Every placement of A's pause"),
            "{}",
            x.heading()
        );
        assert!(!x.started() && !x.finished());
        lab.update(Msg::ExploreChunk {
            budget: 100,
            elapsed_ms: 2.0,
        });
        assert_eq!(lab.exploration().unwrap().progress().0, 100);
        while !lab.exploration().unwrap().finished() {
            lab.update(Msg::ExploreChunk {
                budget: 4096,
                elapsed_ms: 9.0,
            });
        }
        let strict = &lab.exploration().unwrap().stats()[1];
        assert!(strict.late_writes > 0);
        let (done, total) = lab.exploration().unwrap().progress();
        assert_eq!(done, total);
        // Loading a counterexample keeps the table (it differs only in what is explored).
        let index = strict
            .examples
            .iter()
            .position(|e| e.verdict.is_harmful())
            .unwrap();
        lab.update(Msg::LoadExample { row: 1, index });
        assert!(lab.at_end());
        assert!(lab.trace().summary.late_writes_accepted > 0);
        assert_eq!(lab.scenario().policy, FencingPolicy::Strict);
        assert!(lab.exploration().unwrap().finished());
        // Another scenario starts afresh; closing drops it.
        lab.update(Msg::Pick("delayed-packet".to_owned()));
        assert_eq!(lab.exploration().unwrap().progress().0, 0);
        lab.update(Msg::ToggleExplore);
        assert!(lab.exploration().is_none());
    }

    #[test]
    fn notes_herd_and_presenting_live_in_the_lab() {
        let mut lab = Lab::default();
        assert!(lab.herd().is_none() && lab.notes().is_none());
        lab.update(Msg::ToggleNotes);
        assert!(!lab.notes().unwrap().is_empty());
        lab.update(Msg::Pick("renewal".to_owned()));
        let herd = Arc::clone(lab.herd().unwrap());
        assert!(herd.fixed.peak_per_bucket() > herd.jittered.peak_per_bucket());
        assert!(
            herd.caption().starts_with("1000 holders"),
            "{}",
            herd.caption()
        );
        assert!(lab.notes().unwrap().iter().any(|n| n.contains("renew")));
        // A drag reruns the scenario, not the herd.
        let p = lab.scenario().actors[0].pauses[0];
        lab.update(Msg::SetPause {
            actor: 0,
            pause: moved(p, 1, lab.scenario().horizon),
        });
        assert!(Arc::ptr_eq(&herd, lab.herd().unwrap()));
        lab.update(Msg::Pick("nope".to_owned()));
        assert!(lab.error().unwrap().contains("no scenario"));
        lab.update(Msg::TogglePresent);
        assert!(lab.presenting());
        lab.update(Msg::StopPresenting);
        assert!(!lab.presenting());
        lab.update(Msg::SetSpeed(400));
        assert_eq!(lab.speed(), 400);
    }

    #[test]
    fn a_pause_can_be_added_to_any_client_and_removed() {
        let mut lab = Lab::default();
        lab.update(Msg::AddPause { actor: 1, at: 40 });
        assert_eq!(
            lab.scenario().actors[1].pauses,
            vec![Pause {
                start: 40,
                duration: NEW_PAUSE_MS
            }]
        );
        assert!(lab.error().is_none());
        // B's debit lands at 35, before its pause at 40: storage ends as in the headline.
        assert_eq!(lab.trace().summary.final_balance, 90);
        lab.update(Msg::AddPause { actor: 1, at: 20 });
        assert!(lab.error().unwrap().contains("already has a pause"));
        lab.update(Msg::AddPause { actor: 0, at: 10 });
        assert!(lab.error().unwrap().contains("A already has a pause"));
        lab.update(Msg::RemovePause { actor: 0 });
        assert!(lab.scenario().actors[0].pauses.is_empty());
        assert_eq!(
            lab.trace().summary.final_balance,
            90,
            "without A's pause A finishes first and B skips the done job"
        );
        assert_eq!(lab.trace().summary.duplicate_runs, 0);
        lab.update(Msg::RemovePause { actor: 0 });
        assert!(lab.error().unwrap().contains("no pause to remove"));
        // Near the end, the new pause is cut at the horizon; at it, refused.
        lab.update(Msg::AddPause { actor: 0, at: 95 });
        assert_eq!(lab.scenario().actors[0].pauses[0].duration, 5);
        lab.update(Msg::RemovePause { actor: 0 });
        lab.update(Msg::AddPause { actor: 0, at: 100 });
        assert!(lab.error().unwrap().contains("must start before"));
        lab.update(Msg::AddPause { actor: 7, at: 1 });
        assert!(lab.error().unwrap().contains("no actor number 7"));
    }

    fn names(lab: &Lab) -> Vec<&str> {
        lab.scenario()
            .actors
            .iter()
            .map(|a| a.name.as_str())
            .collect()
    }

    #[test]
    fn keys_on_a_focused_pause_move_resize_and_remove_it() {
        let p = Pause {
            start: 5,
            duration: 50,
        };
        let set = |key, shift| match pause_key(key, shift, 0, p, 100) {
            Some(Msg::SetPause { actor: 0, pause }) => (pause.start, pause.duration),
            _ => panic!("{key} (shift {shift}) should set A's pause"),
        };
        assert_eq!(set("ArrowRight", false), (6, 50));
        assert_eq!(set("ArrowLeft", false), (4, 50));
        assert_eq!(set("ArrowRight", true), (5, 51));
        assert_eq!(set("ArrowLeft", true), (5, 49));
        // Clamped like a drag: never before 0, never past the horizon, never shorter than 1.
        let edge = |key, shift, p| match pause_key(key, shift, 0, p, 100) {
            Some(Msg::SetPause { pause, .. }) => (pause.start, pause.duration),
            _ => panic!("{key} should set the pause"),
        };
        assert_eq!(
            edge(
                "ArrowLeft",
                false,
                Pause {
                    start: 0,
                    duration: 50
                }
            ),
            (0, 50)
        );
        assert_eq!(
            edge(
                "ArrowRight",
                false,
                Pause {
                    start: 50,
                    duration: 50
                }
            ),
            (50, 50)
        );
        assert_eq!(
            edge(
                "ArrowLeft",
                true,
                Pause {
                    start: 5,
                    duration: 1
                }
            ),
            (5, 1)
        );
        for key in ["Delete", "Backspace"] {
            assert!(matches!(
                pause_key(key, false, 1, p, 100),
                Some(Msg::RemovePause { actor: 1 })
            ));
        }
        assert!(pause_key("f", false, 0, p, 100).is_none());
        // Through the lab, as the page sends it: the run follows and the link keeps it.
        let mut lab = Lab::default();
        lab.update(pause_key("ArrowRight", false, 0, p, 100).unwrap());
        assert_eq!(lab.scenario().actors[0].pauses[0].start, 6);
        lab.update(pause_key("Delete", false, 0, p, 100).unwrap());
        assert!(lab.scenario().actors[0].pauses.is_empty());
    }

    #[test]
    fn clients_can_be_added_and_removed_between_two_and_five() {
        let mut lab = Lab::default();
        lab.update(Msg::Seek(usize::MAX));
        lab.update(Msg::SetClients(3));
        assert_eq!(names(&lab), ["A", "B", "C"]);
        let (b, c) = (&lab.scenario().actors[1], &lab.scenario().actors[2]);
        assert_eq!((&c.script, c.start_at), (&b.script, b.start_at));
        assert!(c.pauses.is_empty());
        // C contends with B for the same lock; the job still runs once under strict fencing
        // and the deck's verdicts stand.
        assert_eq!(lab.trace().summary.final_balance, 90);
        assert!(lab
            .trace()
            .events
            .iter()
            .any(|e| e.actor.as_deref() == Some("C")));
        lab.update(Msg::SetClients(6));
        assert!(lab.error().unwrap().contains("2 to 5 clients"));
        assert_eq!(lab.scenario().actors.len(), 3);
        lab.update(Msg::SetClients(1));
        assert!(lab.error().is_some());
        lab.update(Msg::SetClients(5));
        assert_eq!(names(&lab), ["A", "B", "C", "D", "E"]);
        lab.update(Msg::SetClients(2));
        assert_eq!(lab.scenario(), &Scenario::gc_pause());
        assert!(lab.at_end(), "the viewer stays at the end");
    }

    #[test]
    fn a_dragged_arrival_sets_the_delay_within_the_run() {
        assert_eq!(dragged_delay(0, 25, 35, 100), 25, "drawn from nothing");
        assert_eq!(
            dragged_delay(25, -40, 35, 100),
            0,
            "dragged back past the send"
        );
        assert_eq!(dragged_delay(10, 500, 35, 100), 65, "lands by the horizon");
        let mut lab = Lab::new(deck::find("gc-pause").map(|e| (e.build)()).unwrap());
        lab.update(Msg::SetDelay {
            actor: 1,
            delay: dragged_delay(0, 25, 35, lab.scenario().horizon),
        });
        assert_eq!(lab.scenario().actors[1].network_delay, 25);
        assert_eq!(lab.error(), None);
    }

    #[test]
    fn drag_geometry_clamps() {
        let p = Pause {
            start: 5,
            duration: 50,
        };
        assert_eq!(moved(p, -100, 100).start, 0);
        assert_eq!(moved(p, 100, 100).start, 50);
        assert_eq!(resized(p, 1000, 100).duration, 95);
        assert_eq!(resized(p, -1000, 100).duration, 1);
        let s = Scale {
            left: 70.0,
            width: 900.0,
            horizon: 100,
        };
        assert_eq!(s.x(50), 520.0);
        assert_eq!(s.ms(90.0), 10);
    }
}

#[cfg(test)]
mod recording_tests {
    use super::*;

    const STRICT: &str = include_str!("../assets/recordings/gc-pause-strict.json");
    const OFF: &str = include_str!("../assets/recordings/gc-pause-off.json");

    #[test]
    fn a_recording_from_real_servers_is_shown_until_something_changes() {
        let mut lab = Lab::new(deck::find("toctou").map(|e| (e.build)()).unwrap());
        lab.update(Msg::Import(OFF.to_owned()));
        assert_eq!(lab.error(), None);
        let rec = lab.trace().recorded.clone().expect("recorded");
        assert_eq!(rec.label(), "recorded on Redis 7.0.15 · PostgreSQL 15.18");
        assert_eq!(lab.scenario().id, "gc-pause");
        assert_eq!(lab.step(), 0);
        // Redis let both in: the job ran twice.
        let s = &lab.trace().summary;
        assert_eq!(
            (s.final_balance, s.accepted_writes, s.duplicate_runs),
            (80, 2, 1)
        );
        lab.update(Msg::Forward);
        assert!(
            lab.trace().recorded.is_some(),
            "stepping keeps the recording"
        );
        lab.update(Msg::SetPolicy(FencingPolicy::Strict));
        assert!(lab.trace().recorded.is_none(), "a change simulates again");
        lab.update(Msg::Import(STRICT.to_owned()));
        let s = &lab.trace().summary;
        assert_eq!((s.final_balance, s.rejected_writes), (90, 1));
        assert_eq!(s.last_fence.map(|f| f.0), Some(34));
    }

    #[test]
    fn a_bad_recording_is_refused_with_a_reason_and_the_view_stays() {
        let mut lab = Lab::new(deck::find("toctou").map(|e| (e.build)()).unwrap());
        lab.update(Msg::Forward);
        let before = lab.trace().clone();
        let simulated = serde_json::to_string(&run(lab.scenario())).unwrap();
        let late = STRICT.replacen("\"at\": 40", "\"at\": 900", 1);
        let tampered = STRICT.replacen("\"balance\": 90", "\"balance\": 70", 1);
        for (text, says) in [
            ("", "Paste or drop"),
            ("{\"scenario\": 3", "not a recorded trace"),
            ("[1, 2]", "not a recorded trace"),
            (simulated.as_str(), "no “recorded” field"),
            (late.as_str(), "out of order or past the end"),
            (tampered.as_str(), "does not add up"),
        ] {
            lab.update(Msg::Import(text.to_owned()));
            let e = lab.error().unwrap_or_default().to_owned();
            assert!(e.contains(says), "{says}: {e}");
            assert!(Arc::ptr_eq(lab.trace(), &before), "{says}: the view stays");
            assert_eq!(lab.step(), 1);
        }
    }
}
