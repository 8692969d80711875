//! [`Story`]: a trace's words, computed once. The facts and the steps are read off the trace
//! in one pass each; every phrase reads the facts of its own step through a [`Ctx`]; one
//! match over the event kinds ([`topic`]) says which phrase functions word an event, so a
//! new kind of event does not compile until it has words.

use std::cell::OnceCell;

use super::*;

/// One trace's story: its steps, its facts and its Say lines.
#[derive(Debug, Clone)]
pub struct Story<'a> {
    trace: &'a Trace,
    steps: Steps,
    /// Read off the trace the first time a phrase needs them (a step's figure does not).
    facts: OnceCell<Facts>,
    /// The Say line of each step, a repeat already replaced by what is new about it:
    /// worked out for every step the first time one is asked for.
    says: OnceCell<Vec<String>>,
}

impl<'a> Story<'a> {
    pub fn of(trace: &'a Trace) -> Self {
        Story {
            trace,
            steps: Steps::of(trace),
            facts: OnceCell::new(),
            says: OnceCell::new(),
        }
    }

    /// The step list the words step through.
    pub fn steps(&self) -> &Steps {
        &self.steps
    }

    /// The last step: how many steps follow the setup one.
    pub fn last(&self) -> usize {
        self.steps.last()
    }

    /// The facts of event `i`'s step.
    pub fn facts(&self, i: usize) -> Option<&StepFacts> {
        self.all_facts().steps.get(i + 1)
    }

    /// The narration sentence for `step`, stamped with its time: a run of identical events
    /// is one sentence, stamped with the run's first and last times.
    pub fn narration(&self, step: usize) -> String {
        let (t, sc) = (self.trace, &self.trace.scenario);
        let run = self.steps.events(step);
        let Some(e) = t.events.get(run.start).filter(|_| !run.is_empty()) else {
            return opening(sc);
        };
        let last = run.end - 1;
        let times = match t.events[last].at {
            end if end != e.at => format!("{}–{}", instant(sc, e.at), instant(sc, end)),
            _ => instant(sc, e.at),
        };
        let stamp = if secs(sc) {
            format!("t={times}")
        } else {
            format!("t={times} ms")
        };
        let s = if run.len() > 1 {
            repeated(&self.ctx(run.start), run)
        } else {
            let c = self.ctx(last);
            topic(&c.e.kind).narrate(&c).unwrap_or_default()
        };
        format!("{stamp} — {s}{}", reply_at(t, last))
    }

    /// What to say out loud at `step`. A line already said at an earlier step is not said
    /// again: the step says what is new about it instead, so no click goes by with nothing
    /// to say. A run of identical events says its line once.
    pub fn say(&self, step: usize) -> String {
        let says = self.says.get_or_init(|| self.say_lines());
        says[step.min(self.last())].clone()
    }

    /// The storage's headline figure after `step`: the balance, or the result row of a job
    /// that publishes ("—" while empty).
    pub fn value(&self, step: usize) -> String {
        value_at(self.trace, self.steps.through(step))
    }

    /// The facts of every step, read off the trace once.
    fn all_facts(&self) -> &Facts {
        self.facts.get_or_init(|| facts(self.trace))
    }

    /// What every phrase of event `i` reads.
    pub(super) fn ctx(&self, i: usize) -> Ctx<'_> {
        let (t, sc) = (self.trace, &self.trace.scenario);
        let e = &t.events[i];
        let all = self.all_facts();
        let fx = &all.steps[i + 1];
        Ctx {
            t,
            i,
            sc,
            e,
            name: e.actor.as_deref().unwrap_or_default(),
            res: &sc.resource,
            fx,
            voice: Voice::of(sc),
            writes: &all.writes[..fx.writes_before],
        }
    }

    /// Every step's Say line, in one pass: a line said before is replaced by what is new
    /// about its step, or, failing that, by where the point was made.
    fn say_lines(&self) -> Vec<String> {
        let mut shown: Vec<String> = Vec::with_capacity(self.last() + 1);
        for k in 0..=self.last() {
            let n = self.steps.through(k);
            let line = self.say_once(n);
            let line = match shown.iter().position(|s| *s == line) {
                None => line,
                Some(first) => n
                    .checked_sub(1)
                    .and_then(|i| say::again(&self.ctx(i)))
                    .filter(|s| !shown.contains(s))
                    .unwrap_or_else(|| same_point(self.trace, self.steps.through(first))),
            };
            shown.push(line);
        }
        shown
    }

    /// The Say line for the step after `n` events, before repeats are replaced.
    fn say_once(&self, n: usize) -> String {
        match n.checked_sub(1) {
            None => say::opening(&self.trace.scenario),
            Some(i) => {
                let c = self.ctx(i);
                topic(&c.e.kind).say(&c).unwrap_or_default()
            }
        }
    }
}

/// The last resort for a repeated line (an edited run can repeat what the deck's runs do
/// not): where the point was made, so the presenter can point back to it.
fn same_point(t: &Trace, first: usize) -> String {
    let at = first
        .checked_sub(1)
        .and_then(|i| t.events.get(i))
        .map_or(0, |e| e.at);
    format!(
        "Nothing new here: the point made at t={} holds.",
        instant(&t.scenario, at)
    )
}

/// What every phrase of one step reads: the trace, the event and its facts.
#[derive(Clone, Copy)]
pub(super) struct Ctx<'a> {
    pub(super) t: &'a Trace,
    pub(super) i: usize,
    pub(super) sc: &'a Scenario,
    pub(super) e: &'a TraceEvent,
    pub(super) name: &'a str,
    pub(super) res: &'a str,
    pub(super) fx: &'a StepFacts,
    /// The lock's own wording.
    pub(super) voice: Voice,
    /// The events where a write reached storage before this step, oldest first.
    writes: &'a [usize],
}

/// [`Ctx`]'s fields as the phrases name them: scenario, event, actor, resource, facts.
type Parts<'a> = (
    &'a Scenario,
    &'a TraceEvent,
    &'a str,
    &'a str,
    &'a StepFacts,
);

impl<'a> Ctx<'a> {
    /// The fields, for a phrase to bind the ones it uses in one line.
    pub(super) fn parts(&self) -> Parts<'a> {
        (self.sc, self.e, self.name, self.res, self.fx)
    }

    /// A time inside the sentence ("30", or "15.0 s").
    pub(super) fn at(&self, t: Millis) -> String {
        instant(self.sc, t)
    }

    /// A duration ("50 ms", or "15.0 s").
    pub(super) fn dur(&self, ms: Millis) -> String {
        duration(self.sc, ms)
    }

    /// A lease by both its fields ("value rnd-A, token 33"), where the step names one.
    pub(super) fn fields(&self, l: &Option<LeaseFacts>) -> String {
        l.as_ref()
            .map_or_else(String::new, |l| lease_fields(self.sc, l))
    }

    /// The lock value of the step's lease ("rnd-A"), or nothing.
    pub(super) fn value(&self) -> &str {
        self.fx.lease.as_ref().map_or("", |l| l.value.as_str())
    }

    /// The event just before this step's, if any.
    pub(super) fn previous(&self) -> Option<&'a TraceEvent> {
        self.i.checked_sub(1).map(|p| &self.t.events[p])
    }

    /// The event just after this step's, if any.
    pub(super) fn next(&self) -> Option<&'a TraceEvent> {
        self.t.events.get(self.i + 1)
    }

    /// Client `name`'s history before this step.
    pub(super) fn client(&self, name: &str) -> ClientFacts {
        let slot = self.sc.actors.iter().position(|a| a.name == name);
        slot.and_then(|k| self.fx.clients.get(k).copied())
            .unwrap_or_default()
    }

    /// The writes that reached storage before this step, oldest first.
    pub(super) fn writes(&self) -> impl DoubleEndedIterator<Item = &'a TraceEvent> + 'a {
        let t = self.t;
        self.writes.iter().map(move |&k| &t.events[k])
    }

    /// The writes storage accepted before this step, newest first.
    pub(super) fn accepted(&self) -> impl Iterator<Item = &'a TraceEvent> + 'a {
        self.writes()
            .rev()
            .filter(|e| matches!(e.kind, EventKind::WriteApplied { result: Ok(_), .. }))
    }

    /// How long, on the lock server's clock, the actor has held its lease (since its grant
    /// or last renewal).
    pub(super) fn lease_age(&self) -> Millis {
        self.client(self.name)
            .renewed_at
            .map_or(0, |at| self.e.at.saturating_sub(at))
    }

    /// The renewal `owner` sent without a reply that it still waits for: when it was sent,
    /// and when its client's timeout gives up on it (`None`: no timeout).
    pub(super) fn waiting_renewal(&self, owner: &str) -> Option<(Millis, Option<Millis>)> {
        self.client(owner).renewal_waiting
    }
}

/// Which phrase functions word an event.
#[derive(Debug, Clone, Copy)]
pub(super) enum Topic {
    /// Acquiring the lock.
    Grant,
    /// A lease ending without a release.
    Expiry,
    /// A lease renewed, or a renewal failing.
    Renewal,
    /// A release, and reading or deleting the lock's value.
    Release,
    /// The client's own process: pauses, checks, waits, giving up.
    Process,
    /// A request on its way, a retry, a barrier, an outside call.
    Request,
    /// A write reaching storage.
    Write,
    /// A fault that struck: a clock jump, a failover, … ([`fault_event`]).
    Fault,
    /// A client cut off from the lock service.
    CutOff,
}

/// The one match over every kind of event: which [`Topic`] words it.
pub(super) fn topic(kind: &EventKind) -> Topic {
    match kind {
        EventKind::Acquired { .. }
        | EventKind::AcquireRefused { .. }
        | EventKind::TokenTaken { .. } => Topic::Grant,
        EventKind::LeaseExpired { .. } => Topic::Expiry,
        EventKind::Extended { .. }
        | EventKind::ExtendFailed { .. }
        | EventKind::LockQueued { .. } => Topic::Renewal,
        EventKind::Released { .. }
        | EventKind::ReleaseNoop { .. }
        | EventKind::LockValueRead { .. }
        | EventKind::DeletedOthersLease { .. } => Topic::Release,
        EventKind::PauseStarted { .. }
        | EventKind::PauseEnded { .. }
        | EventKind::LockWait { .. }
        | EventKind::ConnectionLost
        | EventKind::Checked { .. }
        | EventKind::DeadlineChecked { .. }
        | EventKind::GaveUp
        | EventKind::JobChecked { .. }
        | EventKind::ResumeRace { .. } => Topic::Process,
        EventKind::WriteSent { .. }
        | EventKind::WriteTimedOut { .. }
        | EventKind::ProviderCall { .. }
        | EventKind::WriteSkipped { .. }
        | EventKind::Retried { .. }
        | EventKind::BarrierSet { .. }
        | EventKind::SideEffect { .. } => Topic::Request,
        EventKind::WriteApplied { .. } => Topic::Write,
        fault_event!() => Topic::Fault,
        EventKind::LockUnanswered { .. }
        | EventKind::LockNoLeader { .. }
        | EventKind::LockTimedOut { .. } => Topic::CutOff,
    }
}

impl Topic {
    /// The narration sentence of the step `c` is about. The topics the headline never has
    /// are worded in [`far`].
    pub(super) fn narrate(self, c: &Ctx) -> Option<String> {
        match self {
            Topic::Grant => narrate::grant::grant(c),
            Topic::Expiry => narrate::lease::expiry(c),
            Topic::Release => narrate::lease::release(c),
            Topic::Process => narrate::process::process(c),
            Topic::Write => narrate::write::write_applied(c),
            Topic::Renewal | Topic::Request | Topic::Fault | Topic::CutOff => far::narrate(self, c),
        }
    }

    /// The Say line of the step `c` is about.
    fn say(self, c: &Ctx) -> Option<String> {
        match self {
            Topic::Grant => say::grant(c),
            Topic::Expiry => say::expiry(c),
            Topic::Release => say::release(c),
            Topic::Process => say::process(c),
            Topic::Write => say::write(c),
            Topic::Renewal | Topic::Request | Topic::Fault | Topic::CutOff => far::say(self, c),
        }
    }
}
