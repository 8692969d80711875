//! The "Say:" lines: what the presenter says out loud at each step. One function per topic
//! of step ([`super::words::Topic`]), in sibling files; [`super::Story`] says each line once.

use super::*;

mod lock;
mod process;
mod write;

pub(super) use lock::{expiry, grant, release, renewal};
pub(super) use process::{process, request};
pub(super) use write::write;

/// The setup step's Say line, in the scenario's own voice.
pub(super) fn opening(sc: &Scenario) -> String {
    if Voice::of(sc) == Voice::RowLock {
        return format!(
            "{} clients, one {} row, locked in the database that holds the balance. Watch a holder's transaction when it loses the lock.",
            sc.actors.len(),
            sc.resource
        );
    }
    format!(
        "{}, one {}: watch the lock's promise and the storage's check.",
        match sc.actors.len() {
            1 => "1 client".to_owned(),
            n => format!("{n} clients"),
        },
        sc.resource
    )
}

/// Another client whose write left before this step and reaches storage after it: its
/// sender may have stopped believing, but the write still runs.
fn write_on_its_way<'a>(c: &Ctx<'a>) -> Option<&'a str> {
    c.t.events[..c.i].iter().find_map(|s| match s.kind {
        EventKind::WriteSent { arrives_at, .. } if arrives_at > c.e.at => {
            s.actor.as_deref().filter(|a| *a != c.name)
        }
        _ => None,
    })
}

/// What is new about a step whose usual line the run has already said: a second client
/// reading the same status, polling again, queueing behind another.
pub(super) fn again(c: &Ctx) -> Option<String> {
    let (sc, e, name) = (c.sc, c.e, c.name);
    Some(match &e.kind {
        EventKind::JobChecked { done: false } if c.voice == Voice::RowLock => {
            "Nothing of the first holder's committed, so not done is the truth here.".to_owned()
        }
        EventKind::JobChecked { done: false } => {
            let job = sc.job.as_deref().unwrap_or("the job");
            match other_believers(e, name).as_slice() {
                [] => match write_on_its_way(c) {
                    Some(other) => format!("{other} has stopped, but its write is still on its way: {name} is not alone."),
                    None => format!("No one else believes it holds the lock, so {name} runs {job} alone."),
                },
                [one] => format!("{one} started it too and has not written: two clients now run it."),
                many => format!("{} started it too: {} clients now run it.", many.join(" and "), many.len() + 1),
            }
        }
        EventKind::AcquireRefused { holder, .. } if c.waiting_renewal(holder).is_some() => format!(
            "Refused again: the lock service waits out {holder}'s TTL; it cannot tell {holder} is cut off."
        ),
        EventKind::AcquireRefused { .. } => "Refused again: a live lease makes everyone wait out its TTL.".to_owned(),
        EventKind::Acquired { token_later: true, .. } => "Two leases now wait on INCRs: the first to land gets the lower token.".to_owned(),
        EventKind::LockWait { .. } if sc.lock.queue() => format!(
            "{name} queues behind the last waiter, not the holder: the queue, not a race of retries, picks who goes next."
        ),
        EventKind::Released { .. } => "A prompt release frees the lock now, instead of making the next client wait out the TTL.".to_owned(),
        EventKind::LockValueRead { .. } => "The same two-command release: safe only while nobody acquires in the gap.".to_owned(),
        EventKind::Extended { watchdog: Some(_), .. } => "While renewals get through, the lease outlives any TTL.".to_owned(),
        _ => return None,
    })
}

/// The fixed Say lines, keyed by what they answer (words in one table, as the leptos
/// examples keep theirs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line {
    /// A pause gives no warning; only a monotonic clock read afterwards shows it.
    NoWarning,
    /// A stall long enough for a lease to lapse stops the whole process.
    WholeProcessPause,
    /// Waking from a pause: still a believer.
    WakesUnaware,
    /// What an idempotency key stops, and what only the fence stops.
    IdempotencyAnswer,
    /// [`Line::IdempotencyAnswer`] in one sentence, for a step with more to say.
    IdempotencyShort,
    /// Equal tokens from two holders: no rule orders them.
    DuplicateTokens,
    /// When to use strict (>) and when same-epoch (≥).
    WhichRule,
    /// A deadline margin stopped a slow clock in time; the drift shown is exaggerated.
    MarginFixesDrift,
}

impl Line {
    pub fn text(self) -> &'static str {
        match self {
            Line::NoWarning => "No warning: a monotonic clock shows a pause only afterwards, and a pause can follow any check.",
            Line::WholeProcessPause => "A whole-process pause: no thread runs, not even a watchdog, so nothing renews the lease.",
            Line::WakesUnaware => "It still believes it holds the lock; only a monotonic clock would show the gap.",
            Line::IdempotencyAnswer => "A key per order would stop this duplicate, the same intent run twice; only the fence stops a stale holder's different write, such as a late result.",
            Line::MarginFixesDrift => "The margin stopped it: at least TTL × drift covers a slow clock. This drift is exaggerated for visibility; real clocks drift by tens of ppm. No margin covers a pause after the check.",
            Line::IdempotencyShort => "A key per order would stop this duplicate; only the fence stops a stale holder's different write.",
            Line::DuplicateTokens => "No rule can order duplicate tokens: this refusal is luck of arrival order.",
            Line::WhichRule => "Recommend strict (>) when each grant makes one write. Use same-epoch (≥) only together with an idempotency key, for retries or several writes within one grant.",
        }
    }
}
