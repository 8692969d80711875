//! Say: the client's own process, and its requests on their way.

use super::*;

/// What the client's own process does: pauses, checks, waits, giving up.
pub(crate) fn process(c: &Ctx) -> Option<String> {
    let (sc, e, name, voice) = (c.sc, c.e, c.name, c.voice);
    let s: &str = match &e.kind {
        EventKind::LockWait { .. } if voice == Voice::RowLock => {
            "Unlike SET NX, FOR UPDATE does not refuse: the second client queues for as long as the holder's transaction lives, unless lock_timeout is set."
        }
        EventKind::PauseEnded { lease_gone: false }
            if voice == Voice::RowLock && e.snapshot.believers.iter().any(|b| b == name) =>
        {
            "Its transaction still holds the row lock, so this pause did no harm."
        }
        EventKind::LockWait { .. } if sc.lock.queue() => {
            "Each waiter watches only its predecessor: a release wakes one client, not all of them."
        }
        EventKind::LockWait { .. } => "A blocking lock makes the next client wait instead of refusing it.",
        EventKind::ConnectionLost => "A terminated session takes its transaction with it: nothing it sends runs.",
        EventKind::PauseStarted { cause: PauseCause::Gc, .. } => {
            Line::NoWarning.text()
        }
        EventKind::PauseStarted { cause: PauseCause::Stall, .. } => {
            Line::WholeProcessPause.text()
        }
        EventKind::PauseEnded { lease_gone: true } => {
            Line::WakesUnaware.text()
        }
        EventKind::PauseEnded { lease_gone: false } if e.snapshot.believers.iter().any(|b| b == name) => {
            "Its lease is still live, so this pause did no harm."
        }
        EventKind::PauseEnded { .. } => "It holds no lease now, so nothing depends on this pause.",
        EventKind::Checked { held: true } => {
            "Checking is_held first does not help: a pause can land right after the check (TOCTOU)."
        }
        EventKind::Checked { held: false } => {
            "Giving up on a failed check is right, but it only covers pauses before the check."
        }
        EventKind::DeadlineChecked { ok: true, .. } if c.lease_age() >= sc.lease_ttl => {
            "Its clock runs slow, so it believes the lease lasts longer than it does. A margin of at least TTL × drift would have stopped it here."
        }
        EventKind::DeadlineChecked { ok: true, .. } => {
            "The margin covers a clock that drifts by a bounded amount. It cannot cover a pause after the check, or a packet that arrives late."
        }
        EventKind::DeadlineChecked { ok: false, local, .. }
            if sc.client_drift > 0 && c.lease_age() >= sc.lease_ttl && *local < sc.lease_ttl =>
        {
            Line::MarginFixesDrift.text()
        }
        EventKind::DeadlineChecked { ok: false, .. } => {
            "Stopping at TTL − margin works when drift and pauses are bounded: this check came with too little lease left, so it stops."
        }
        EventKind::GaveUp => {
            let previous = c.previous();
            let barrier = previous.is_some_and(|p| {
                matches!(p.kind, EventKind::BarrierSet { result: Err(_), .. })
            });
            let claim = previous.is_some_and(|p| {
                matches!(p.kind, EventKind::ProviderCall { outcome: ProviderOutcome::NotCalled, .. })
            });
            let deadline = previous.is_some_and(|p| {
                matches!(p.kind, EventKind::DeadlineChecked { ok: false, .. })
            });
            if claim {
                "A stale_fence is final, unlike a timeout: the claim did not happen and never will, so the worker stops instead of retrying."
            } else if deadline {
                "Stopping before the write leaves nothing in flight: no request of this client's can land late."
            } else if barrier {
                "A refused barrier means a newer epoch already started: do not start."
            } else {
                "Giving up on a failed check is right, but it only covers pauses before the check."
            }
        }
        EventKind::JobChecked { done: false } => {
            "Read, then act: the lock should let one holder in at a time."
        }
        EventKind::JobChecked { done: true } => {
            // Another client may still believe it holds the lock (a paused one that read the
            // status before the job ran): the check does nothing for it.
            let others = other_believers(e, name);
            return Some(match others.as_slice() {
                [] => "The job already ran, so this holder does nothing: with one holder at a time, the job runs once.".to_owned(),
                [one] => format!(
                    "The job already ran, so {name} does nothing. But {one} still believes it holds the lock: a status check only helps a client that reads it after the job ran."
                ),
                many => format!(
                    "The job already ran, so {name} does nothing. But {} still believe they hold the lock: a status check only helps a client that reads it after the job ran.",
                    many.join(" and ")
                ),
            });
        }
        EventKind::ResumeRace { .. } => {
            "After a pause, which thread runs first is a race: a self-cancel that has to win it is not a safety mechanism."
        }
        _ => return None,
    };
    Some(s.to_owned())
}

/// A request on its way, a retry, a barrier, an outside call.
pub(crate) fn request(c: &Ctx) -> Option<String> {
    let (sc, e) = (c.sc, c.e);
    let fencing = sc.policy.checks_fence();
    let s: &str = match &e.kind {
        EventKind::ProviderCall { outcome: ProviderOutcome::Charged, .. } => {
            "The provider never sees the token; it dedupes on the idempotency key. The key says \"this intent runs once\", not \"this lock generation may write\"."
        }
        EventKind::ProviderCall { outcome: ProviderOutcome::Deduped, .. } => {
            "Both lock generations got past the claim; only the provider's idempotency key kept this to one charge. A key stops a repeat of one intent, not a stale holder: that is the fence's job."
        }
        EventKind::ProviderCall { outcome: ProviderOutcome::NotCalled, .. } => {
            "The fenced claim stopped the stale holder before the call. A holder that goes stale between claim and call still calls; only the provider's key covers that."
        }
        EventKind::WriteSent { fence, arrives_at, .. } => {
            if let Some(other) = live_and_level(c, *fence, *arrives_at) {
                return Some(format!(
                    "{}'s request is on its way, inside its lease; {other}'s will reach storage at the same instant.",
                    c.name
                ));
            }
            "A request can sit in a queue long after the lease that sent it is gone."
        }
        EventKind::WriteTimedOut { .. } => {
            "A timeout means \"I don't know\", not \"it failed\": a timed-out request may still execute."
        }
        EventKind::WriteSkipped { .. } => "No token, no write.",
        EventKind::Retried { .. } => {
            "A lost reply makes a retry look like a new request: same token, same idempotency key."
        }
        EventKind::BarrierSet { result: Ok(()), .. } if fencing => {
            "Establish the new epoch at the resource before starting: the old token is refused even before the new holder writes."
        }
        EventKind::BarrierSet { result: Ok(()), .. } => "A barrier only helps if the storage checks tokens.",
        EventKind::BarrierSet { .. } => "A refused barrier means a newer epoch already started: do not start.",
        EventKind::SideEffect { lease_live, .. } => {
            let again = c.fx.side_effect_again;
            match (again, lease_live) {
                (true, _) => "Charged twice, under every fencing policy: the payment API never sees a token. The provider's idempotency key, or a fenced claim row before each call (claim-row), could stop it.",
                (false, false) => "Fencing only protects what checks the token. This call did not, so the stale worker made it anyway.",
                (false, true) => "A call outside the storage carries no token: a repeat is stopped only by the provider's idempotency key, or by a fenced claim written before the call.",
            }
        }
        _ => return None,
    };
    Some(s.to_owned())
}

/// Who else's write reaches storage at `arrives_at`, when this request's own lease (`fence`)
/// is still live then: the race there is two arrivals at once, not a late request.
fn live_and_level<'a>(c: &Ctx<'a>, fence: Option<Fence>, arrives_at: Millis) -> Option<&'a str> {
    let lapsed = c.t.events.iter().any(|x| {
        x.at <= arrives_at
            && matches!(&x.kind, EventKind::LeaseExpired { owner, fence: f, .. }
                if owner == c.name && Some(*f) == fence)
    });
    if lapsed || fence.is_none() {
        return None;
    }
    c.t.writes
        .iter()
        .find(|w| w.at == arrives_at && w.request.writer != c.name)
        .map(|w| w.request.writer.as_str())
}
