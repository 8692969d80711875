//! The story's steps: one per event, except that a run of identical events back to back (the
//! same actor doing the same thing with the same answer: a retry loop against a held lock, a
//! watchdog's renewals) is one step, "B retries every ~10 ms: lock_held ×5". The trace keeps
//! every event; the words, the step controls, the step counter and the timeline all step
//! through this list, so they cannot disagree about what step 7 is.

use std::ops::Range;

use super::*;

/// The step list of one trace. Step 0 is the setup; step `k` shows one event or a run of
/// identical ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Steps {
    /// `ends[k]`: how many events have happened once step `k` is shown (`ends[0]` is 0).
    ends: Vec<usize>,
}

impl Steps {
    pub fn of(t: &Trace) -> Self {
        let mut ends = vec![0];
        for (i, e) in t.events.iter().enumerate() {
            let joins = i > 0 && same_again(&t.events[i - 1], e);
            match ends.last_mut() {
                Some(end) if joins => *end = i + 1,
                _ => ends.push(i + 1),
            }
        }
        Self { ends }
    }

    /// The last step: how many steps follow the setup one.
    pub fn last(&self) -> usize {
        self.ends.len() - 1
    }

    /// How many events have happened once `step` is shown (a step past the end shows all).
    pub fn through(&self, step: usize) -> usize {
        self.ends[step.min(self.last())]
    }

    /// The events `step` shows: none for the setup step, one, or a run of identical ones.
    pub fn events(&self, step: usize) -> Range<usize> {
        match step.min(self.last()) {
            0 => 0..0,
            s => self.ends[s - 1]..self.ends[s],
        }
    }

    /// The step that shows event `i`.
    pub fn showing(&self, i: usize) -> usize {
        self.ends.partition_point(|&end| end <= i)
    }
}

/// Whether `b` does again what `a`, the event just before it, did: the same actor, the same
/// command, the same answer. Only attempts that change nothing but a lease's end qualify (an
/// acquire refused by the same live lease or lock-delay, an extend of the same lease), so a
/// run of them hides nothing a later step depends on.
fn same_again(a: &TraceEvent, b: &TraceEvent) -> bool {
    if a.actor.is_none() || a.actor != b.actor {
        return false;
    }
    match (&a.kind, &b.kind) {
        (
            EventKind::AcquireRefused {
                holder: h1,
                until: u1,
                nodes: n1,
                ..
            },
            EventKind::AcquireRefused {
                holder: h2,
                until: u2,
                nodes: n2,
                ..
            },
        ) => {
            h1 == h2
                && u1 == u2
                && n1 == n2
                && a.snapshot.holder.is_some() == b.snapshot.holder.is_some()
        }
        (
            EventKind::Extended {
                fence: f1,
                watchdog: w1,
                ..
            },
            EventKind::Extended {
                fence: f2,
                watchdog: w2,
                ..
            },
        ) => f1 == f2 && w1.is_some() == w2.is_some(),
        _ => false,
    }
}

/// "twice", "3 times".
fn times(n: usize) -> String {
    match n {
        2 => "twice".to_owned(),
        n => format!("{n} times"),
    }
}

/// The narration of a run of identical events (`run` has two or more): what was done, how
/// often and how far apart, and the answer, once.
pub(super) fn repeated(c: &Ctx, run: Range<usize>) -> String {
    let (t, sc) = (c.t, c.sc);
    let (first, last) = (&t.events[run.start], &t.events[run.end - 1]);
    let n = run.len();
    let name = first.actor.clone().unwrap_or_default();
    // Mean gap, so a randomised interval reads as one figure; the stamp gives first and last.
    let every = format!(
        "{}, every ~{}",
        times(n),
        duration(sc, (last.at - first.at) / (n as Millis - 1))
    );
    match (&first.kind, &last.kind) {
        (EventKind::AcquireRefused { .. }, _) => {
            let (attempt, answer) = refusal(c);
            format!(
                "{name} {attempt} {every} ({}), with the same answer each time (×{n}): {answer}.",
                c.voice.retry_note()
            )
        }
        (
            EventKind::Extended { .. },
            EventKind::Extended {
                expires_at,
                watchdog,
                ..
            },
        ) => {
            let (who, why) = match watchdog {
                Some(_) => (
                    format!("{name}'s watchdog renews"),
                    " (a third of the TTL, ±25% jitter)",
                ),
                None => (format!("{name} extends"), ""),
            };
            let next = match watchdog {
                Some(Some(d)) => format!("; next renewal at t={}", instant(sc, *d)),
                Some(None) => "; the work ends before the next renewal is due".to_owned(),
                None => String::new(),
            };
            format!(
                "{who} its lease{} {every}{why}; each time {} (extend ×{n}). The lease now runs until t={}{next}.",
                extended_lease(c),
                c.voice.extend_checks(),
                instant(sc, *expires_at)
            )
        }
        // `same_again` joins nothing else; one event's sentence is still true of the first.
        _ => words::topic(&c.e.kind).narrate(c).unwrap_or_default(),
    }
}

/// The marker label of event `i` on the timeline: the first of a run of identical events
/// carries the run's count ("lock_held ×5"), the rest none (their step is the first's).
pub fn run_label(t: &Trace, steps: &Steps, i: usize) -> Option<String> {
    let run = steps.events(steps.showing(i));
    let text = marker_label(t, &t.events[i]);
    match run.len() {
        0 | 1 => Some(text),
        n if i == run.start => Some(format!("{text} ×{n}")),
        _ => None,
    }
}
