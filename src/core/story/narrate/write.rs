//! Narration: Requests and writes reaching storage.

use super::*;

/// A request on its way to storage or to an outside system, and the barrier before a job.
pub(crate) fn request(c: &Ctx) -> Option<String> {
    let (sc, e, name, res, _) = c.parts();
    Some(match &e.kind {
        EventKind::WriteSent {
            fence,
            amount,
            arrives_at,
        } => format!(
            "{name} sends \"debit {amount}\" with token {}; the request takes {} and reaches storage at t={}.",
            token(*fence),
            c.dur(arrives_at - e.at),
            c.at(*arrives_at)
        ),
        EventKind::WriteTimedOut {
            sent_at,
            arrives_at,
            ..
        } => format!(
            "{name} gets no reply {} after sending and gives up on its request: the client timed out, treats the debit as failed, and moves on. The request is still in flight and reaches storage at t={}.",
            c.dur(e.at - sent_at),
            c.at(*arrives_at)
        ),
        EventKind::ProviderCall {
            what,
            idempotency_key,
            outcome,
            ..
        } => match outcome {
            ProviderOutcome::Charged => format!(
                "{name}'s claim was accepted, so it calls the provider: {what}, with idempotency key “{idempotency_key}”. The key is new to the provider, so it charges. The call carries no token."
            ),
            ProviderOutcome::Deduped => format!(
                "{name}'s claim was accepted too, so it calls the provider: {what}, with idempotency key “{idempotency_key}”. The provider has already run that key: it returns the first call's result and charges nothing."
            ),
            ProviderOutcome::NotCalled => format!(
                "{name}'s claim was refused, so it does not call the provider ({what}): no request is sent."
            ),
        },
        EventKind::WriteSkipped {
            reason: SkipReason::NoToken,
        } => format!("{name} never got the lock, so it has no token and skips its write."),
        EventKind::WriteSkipped {
            reason: SkipReason::NothingToRetry,
        } => format!("{name} has sent no debit yet, so there is nothing to retry."),
        EventKind::Retried {
            fence,
            idempotency_key,
            ..
        } => {
            let key = idempotency_key.as_deref().map_or_else(
                || "no idempotency key".to_owned(),
                |k| format!("idempotency key “{k}”"),
            );
            format!(
                "{name} never got the reply to its debit (it was lost on the way back), so it retries: same token {}, same {key}.",
                token(*fence)
            )
        }
        EventKind::BarrierSet { fence, result } => {
            let last = token(e.snapshot.last_fence);
            match result {
                Ok(()) if sc.policy.checks_fence() => format!(
                    "Before {name} starts, the scheduler that hands out jobs establishes epoch {fence} in {res}'s row, an atomic update that cannot lower the epoch: last fence is now {last}, nothing else changes. Anything older is refused from here on."
                ),
                Ok(()) => format!(
                    "Before {name} starts, the scheduler that hands out jobs writes epoch {fence} to {res}'s row, but storage is not checking tokens: the barrier changes nothing."
                ),
                Err(e) => format!(
                    "The scheduler's barrier with token {fence} is rejected: {} (storage has already seen {last}). {name} must not start.",
                    e.code()
                ),
            }
        }
        EventKind::SideEffect { what, lease_live } => {
            let again = c.fx.side_effect_again;
            let mut s = if *lease_live {
                format!("{name} calls an outside system: {what}. No token goes with it; this time {name}'s lease is still live.")
            } else {
                format!("{name} calls an outside system: {what}. Its lease is gone, but the call carries no token, so nothing refuses it.")
            };
            if again {
                s += " It is the second such call: whatever the fencing policy, this happened twice.";
            }
            s
        }
        _ => return None,
    })
}

/// A write reaching storage: accepted or refused, and why.
pub(crate) fn write_applied(c: &Ctx) -> Option<String> {
    let (sc, e, name, _, _) = c.parts();
    Some(match &e.kind {
        EventKind::WriteApplied {
            amount,
            result: Ok(balance),
            ..
        } if c.voice == Voice::RowLock => row_updated(c, *amount, *balance),
        EventKind::WriteApplied {
            amount,
            result: Err(WriteError::SessionTerminated),
            ..
        } if c.voice == Voice::RowLock => row_update_refused(c, *amount),
        EventKind::WriteApplied {
            fence,
            amount,
            result,
            superseded_by,
            highest_accepted,
            publish,
            ..
        } => {
            let tok = token(*fence);
            let balance = e.snapshot.balance;
            let publish = publish.clone();
            let (what, stays) = match &publish {
                Some(r) if sc.claims() => (
                    format!("claim “{r}”"),
                    match &e.snapshot.result {
                        Some(v) => format!("The claim row stays “{v}”."),
                        None => "The claim row stays empty.".to_owned(),
                    },
                ),
                Some(r) => (
                    format!("result “{r}”"),
                    match &e.snapshot.result {
                        Some(v) => format!("The result row stays “{v}”."),
                        None => "The result row stays empty.".to_owned(),
                    },
                ),
                None => (
                    format!("debit of {amount}"),
                    format!("Balance stays {balance}."),
                ),
            };
            let rule = match sc.policy {
                FencingPolicy::Off => "an unconditional UPDATE".to_owned(),
                FencingPolicy::Strict => format!("the conditional UPDATE (row epoch < {tok})"),
                FencingPolicy::SameEpoch => format!("the conditional UPDATE (row epoch ≤ {tok})"),
            };
            match result {
                Ok(balance) => {
                    let mut s = match &publish {
                        Some(_) if sc.claims() => format!(
                            "{name}'s {what} with token {tok} is written to the job's claim row by {rule}: the claim row now holds it."
                        ),
                        Some(_) => format!(
                            "{name}'s {what} with token {tok} is written by {rule}: the result row now holds it."
                        ),
                        None => format!(
                            "{name}'s {what} with token {tok} is accepted. Balance {balance}."
                        ),
                    };
                    if asks_lock_service(sc) {
                        s += &format!(" Before applying it, storage asked the lock service: {name}'s lease is still the live one.");
                    }
                    let fencing = sc.policy.checks_fence();
                    let mut said_order = false;
                    if let (Some(g), Some(f)) = (superseded_by, fence) {
                        let (n, o) = (g.fence, &g.owner);
                        if sc.lock.token_source() == TokenSource::SeparateCounter {
                            s += &format!(" {o} was granted the lease after {name}: this write comes from a superseded lease, though its token is the newer one.");
                        } else if g.fence == *f {
                            s += &format!(" {o} was granted the same token {n} after {name}: this write comes from a superseded lease, and storage cannot tell.");
                        } else if let (true, true, Some(h)) = (
                            fencing,
                            sc.lock.token_source() == TokenSource::RandomValue,
                            highest_accepted,
                        ) {
                            s += &format!(" {o} was granted the lock after {name}, with {n}, and storage holds {h}; {f} happens to be larger, so a write from a superseded lease passes the check, let in by the draw.");
                        } else if let Some(h) =
                            super::super::fault::forgotten(c).filter(|h| f < h)
                        {
                            let then = if fencing { format!(", so {f} passes the check") } else { String::new() };
                            s += &format!(" {o} was granted {h} and storage took its write, then failed over to a standby that never got it{then}: a write from a superseded lease.");
                            said_order = true;
                        } else if fencing && e.snapshot.last_fence <= Some(*f) {
                            s += &format!(" {o} has already been granted token {n}, but storage has not seen it yet, so {f} passes the check: a write from a superseded lease.");
                        } else if fencing
                            && sc.check == StorageCheck::ReadThenWrite
                            && *highest_accepted == Some(n)
                            && *f < n
                        {
                            s += &format!(" {o} had already been granted token {n}, and storage took it at this same instant: {name}'s SELECT of the last fence ran before {o}'s UPDATE committed, so it did not see {n} and {f} passed, and the UPDATE after it does not check again. A write from a superseded lease, landed out of token order.");
                            said_order = true;
                        } else if *highest_accepted == Some(n) && *f < n {
                            // One sentence for both facts about the same token.
                            s += &format!(" {o} had already been granted token {n}, and storage had already taken it: this write comes from a superseded lease and lands out of token order.");
                            said_order = true;
                        } else {
                            s += &format!(" {o} had already been granted token {n}: this write comes from a superseded lease.");
                        }
                    }
                    if let (Some(f), Some(h), false) = (fence, highest_accepted, said_order) {
                        if f < h {
                            s += &format!(" Storage had already accepted token {h}: this one landed out of token order.");
                        }
                    }
                    if fencing {
                        s += &format!(" Last fence is now {}.", token(e.snapshot.last_fence));
                    } else if sc.check == StorageCheck::Sequencer {
                        s += " Fencing is off: storage checks neither the token nor the sequencer.";
                    } else {
                        s += " Storage is not checking tokens.";
                    }
                    if rewrote_same(c) {
                        s += " The job has now run twice, but this run wrote the value the row already held: wasted work, no harm.";
                    } else if sc.claims() && c.accepted().next().is_some() {
                        s += " The job has now been claimed twice: a duplicate claim.";
                    } else if sc.job.is_some()
                        && c.accepted().next().is_some()
                        && super::super::fault::forgotten(c).is_some()
                    {
                        s += " The job has now run twice; the failover lost the other run's write.";
                    } else if sc.job.is_some() && c.accepted().next().is_some() {
                        s += &format!(" The job has now run twice: a {}.", twice_name(sc));
                    }
                    s
                }
                Err(WriteError::StaleFence { token, last }) if token == last => format!(
                    "{name}'s {what} with token {token} is rejected: stale_fence — the strict rule (token > last) refuses a token equal to the last fence, {last}. {stays}"
                ),
                Err(WriteError::StaleFence { token, last })
                    if sc.lock.token_source() == TokenSource::Counterfactual =>
                {
                    format!(
                        "Counterfactually, {name}'s {what} with token {token} would be rejected: stale_fence (storage has already seen {last}). {stays} With Redlock there is no token to check, so in reality it lands."
                    )
                }
                Err(WriteError::StaleFence { token, last }) => format!(
                    "{name}'s {what} with token {token} is rejected: stale_fence (storage has already seen {last}). {stays}"
                ),
                Err(WriteError::DuplicateIntent {
                    key,
                    original_balance,
                }) => format!(
                    "{name}'s debit with idempotency key “{key}” is not applied again: that intent already ran, so storage answers with its original result (balance {original_balance}) and {name} learns the first debit landed. Balance stays {balance}."
                ),
                Err(WriteError::MissingFence) => format!(
                    "{name}'s {what} carries no token: rejected (missing_fence). {stays}"
                ),
                Err(WriteError::SessionTerminated) => format!(
                    "{name}'s {what} cannot run: the server terminated its session and rolled its transaction back ({IDLE_IN_TRANSACTION_TIMEOUT}). {stays}"
                ),
                Err(WriteError::StaleSequencer { token, .. }) => {
                    let seen = match e.snapshot.last_fence {
                        None => "storage has seen no token yet".to_owned(),
                        Some(h) => format!("the highest token storage has seen is {h}"),
                    };
                    format!(
                        "{name}'s {what} with token {token} passes the fencing rule ({seen}), but storage then asks the lock service whether {name}'s lease is still the live one: it is not, {}. Rejected: stale_sequencer. {stays}",
                        live_lease(e, name)
                    )
                }
            }
        }
        _ => return None,
    })
}
