//! The "Say:" lines: what the presenter says out loud at each step.

use super::*;

/// What to say out loud at `step`.
///
/// A line already said at an earlier step of the same run is not said again: the step says
/// what is new about it instead ([`say_again`]), so no click goes by with nothing to say.
/// `step` is a step of [`Steps`]: a run of identical events says its line once.
pub fn say(t: &Trace, step: usize) -> String {
    let steps = Steps::of(t);
    let step = step.min(steps.last());
    let mut shown: Vec<String> = Vec::with_capacity(step + 1);
    for k in 0..=step {
        let n = steps.through(k);
        let line = say_once(t, n);
        let line = match shown.iter().position(|s| *s == line) {
            None => line,
            Some(first) => say_again(t, n)
                .filter(|s| !shown.contains(s))
                .unwrap_or_else(|| same_point(t, steps.through(first))),
        };
        shown.push(line);
    }
    shown.pop().unwrap_or_default()
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

/// What is new about a step whose usual line the run has already said (`n` events shown):
/// a second client reading the same status, polling again, queueing behind another.
fn say_again(t: &Trace, n: usize) -> Option<String> {
    let i = n.checked_sub(1).filter(|&i| i < t.len())?;
    let (sc, e) = (&t.scenario, &t.events[i]);
    let name = e.actor.clone().unwrap_or_default();
    Some(match &e.kind {
        EventKind::JobChecked { done: false } if sc.lock.row().is_some() => {
            "Nothing of the first holder's committed, so not done is the truth here.".to_owned()
        }
        EventKind::JobChecked { done: false } => {
            let job = sc.job.as_deref().unwrap_or("the job");
            match other_believers(e, &name).as_slice() {
                [] => format!("No one else believes it holds the lock, so {name} runs {job} alone."),
                [one] => format!("{one} started it too and has not written: two clients now run it."),
                many => format!("{} started it too: {} clients now run it.", many.join(" and "), many.len() + 1),
            }
        }
        EventKind::AcquireRefused { holder, .. } if waiting_renewal(t, i, holder).is_some() => format!(
            "Refused again: the lock service waits out {holder}'s TTL; it cannot tell {holder} is cut off."
        ),
        EventKind::AcquireRefused { .. } => "Polling again: a live lease makes everyone wait out its TTL.".to_owned(),
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

/// [`say`] before repeats are collapsed, for the step after `step` events.
fn say_once(t: &Trace, step: usize) -> String {
    let sc = &t.scenario;
    if sc.lock.row().is_some() {
        if let Some(s) = row_say(t, step) {
            return s;
        }
    }
    let Some(i) = step.checked_sub(1).filter(|&i| i < t.len()) else {
        return format!(
            "{}, one {}: watch the lock's promise and the storage's check.",
            match sc.actors.len() {
                1 => "1 client".to_owned(),
                n => format!("{n} clients"),
            },
            sc.resource
        );
    };
    say_grant(t, i)
        .or_else(|| say_process(t, i))
        .or_else(|| say_lease(t, i))
        .or_else(|| say_fault(t, i))
        .unwrap_or_default()
}

/// The Say line for a grant, a refused acquire, a token taken late, a wait, a lost session.
fn say_grant(t: &Trace, i: usize) -> Option<String> {
    let (sc, e) = (&t.scenario, &t.events[i]);
    let voice = Voice::of(sc);
    let name = e.actor.clone().unwrap_or_default();
    let s: &str = match &e.kind {
        EventKind::Acquired {
            token_later: true, ..
        } => {
            "The lease is granted, but its token takes a second command: a pause can land in between."
        }
        EventKind::Acquired { fence, .. } => {
            let earlier = before(t, i).find_map(|p| match &p.kind {
                EventKind::Acquired { fence: f, .. } => Some((p.actor.clone().unwrap_or_default(), *f)),
                _ => None,
            });
            if let Some(line) = far_grant(t, i, earlier.as_ref()) {
                return Some(line);
            }
            return Some(match earlier {
                None if sc.lock.token_source() == TokenSource::RandomValue => "A random lock value makes release safe (compare-and-delete knows whose lease it is), but it is an owner ID, not a fencing token.".to_owned(),
                Some((who, f)) if sc.lock.token_source() == TokenSource::RandomValue => format!(
                    "{name}'s {fence} and {who}'s {f} are both unique, but neither says which grant is newer: storage comparing them orders the two holders by the luck of the draw."
                ),
                Some((who, _)) if sc.lock.token_source() == TokenSource::Counterfactual => format!(
                    "A majority said OK to {name} while {who} still believes it holds the lock, and Redlock gave neither a token: nothing downstream can tell their writes apart."
                ),
                None if asks_lock_service(sc) => "A lease is a promise with a timer. Here storage checks it: each write asks the lock service whether its lease is still live.".to_owned(),
                None => "A lease is a promise with a timer; nothing at the storage enforces it.".to_owned(),
                Some((who, f)) if f >= *fence => format!(
                    "Token {fence} again: {who} was given {f} before the {}, and the rolled-back counter hands it out once more. Two holders now carry tokens storage cannot order.",
                    if sc.restart() { "restart" } else { "failover" }
                ),
                Some((who, f)) => format!(
                    "Each grant gets a bigger token: {name} has {fence}; {who} still has {f}."
                ),
            });
        }
        // The live lease is someone else's: this INCR gave a superseded lease the newer token.
        EventKind::TokenTaken { fence } if e.snapshot.holder.as_ref().is_some_and(|h| h.owner != name) => {
            return Some(format!(
                "{name}'s superseded lease now carries the newest token, {fence}: storage will trust it over the real holder's."
            ))
        }
        EventKind::TokenTaken { .. } => {
            "A token taken after the grant goes to whoever reaches the counter first: a pause between SET and INCR can invert the order."
        }
        EventKind::AcquireRefused { .. }
            if voice != Voice::Redlock && sc.lock.lock_delay() > 0 && e.snapshot.holder.is_none() =>
        {
            "Lock-delay: after a lease lapses unreleased, nobody gets the lock for a while, so a slow holder can finish. It narrows the window; it cannot close it."
        }
        EventKind::AcquireRefused { .. } => voice.refuses_others(),
        EventKind::LockWait { .. } if sc.lock.queue() => {
            "Each waiter watches only its predecessor: a release wakes one client, not all of them."
        }
        EventKind::LockWait { .. } => "A blocking lock makes the next client wait instead of refusing it.",
        EventKind::ConnectionLost => "A terminated session takes its transaction with it: nothing it sends runs.",
        _ => return None,
    };
    Some(s.to_owned())
}

/// The Say line for a lease running out, and what the client's process does.
fn say_process(t: &Trace, i: usize) -> Option<String> {
    let (sc, e) = (&t.scenario, &t.events[i]);
    let voice = Voice::of(sc);
    let name = e.actor.clone().unwrap_or_default();
    let s: &str = match &e.kind {
        EventKind::LeaseExpired { cause, owner_knew, .. } => match (cause, owner_knew) {
            (ExpiryCause::Ttl, Awareness::Paused) => {
                "The lock server sees the TTL run out, not that the holder is stopped."
            }
            (ExpiryCause::Ttl, Awareness::Unaware)
                if matches!(&e.kind, EventKind::LeaseExpired { owner, .. } if waiting_renewal(t, i, owner).is_some()) =>
            {
                "The lock service cannot tell a cut-off holder from a dead one: the lease runs out while the holder still runs."
            }
            (ExpiryCause::Ttl, Awareness::Unaware) => {
                "The TTL ran out while the holder is still running and still believes it holds the lock."
            }
            (ExpiryCause::Ttl, Awareness::Knows) => "The lease ran out; its holder no longer relied on it.",
            (ExpiryCause::ClockJump, _) => voice.ended_by_jump(),
            (ExpiryCause::LostInFailover, _) if sc.restart() => {
                "This lease ended by its TTL, but the restart had already let a second client in."
            }
            (ExpiryCause::LostInFailover, _) => {
                "This lease ended by its TTL, but the failover had already let a second client in."
            }
            (ExpiryCause::IdleTimeout, _) => {
                "The server ended the holder's transaction, and with it the lock."
            }
        },
        EventKind::PauseStarted { cause: PauseCause::Gc, .. } => {
            Line::NoWarning.text()
        }
        EventKind::PauseStarted { cause: PauseCause::Stall, .. } => {
            Line::WholeProcessPause.text()
        }
        EventKind::PauseEnded { lease_gone: true } => {
            Line::WakesUnaware.text()
        }
        EventKind::PauseEnded { lease_gone: false } if e.snapshot.believers.contains(&name) => {
            "Its lease is still live, so this pause did no harm."
        }
        EventKind::PauseEnded { .. } => "It holds no lease now, so nothing depends on this pause.",
        EventKind::Checked { held: true } => {
            "Checking is_held first does not help: a pause can land right after the check (TOCTOU)."
        }
        EventKind::Checked { held: false } => {
            "Giving up on a failed check is right, but it only covers pauses before the check."
        }
        EventKind::DeadlineChecked { ok: true, .. } if lease_age(t, i) >= sc.lease_ttl => {
            "Its clock runs slow, so it believes the lease lasts longer than it does. A margin of at least TTL × drift would have stopped it here."
        }
        EventKind::DeadlineChecked { ok: true, .. } => {
            "The margin covers a clock that drifts by a bounded amount. It cannot cover a pause after the check, or a packet that arrives late."
        }
        EventKind::DeadlineChecked { ok: false, local, .. }
            if sc.client_drift > 0 && lease_age(t, i) >= sc.lease_ttl && *local < sc.lease_ttl =>
        {
            Line::MarginFixesDrift.text()
        }
        EventKind::DeadlineChecked { ok: false, .. } => {
            "Stopping at TTL − margin works when drift and pauses are bounded: this check came with too little lease left, so it stops."
        }
        EventKind::ProviderCall { outcome: ProviderOutcome::Charged, .. } => {
            "The provider never sees the token; it dedupes on the idempotency key. The key says \"this intent runs once\", not \"this lock generation may write\"."
        }
        EventKind::ProviderCall { outcome: ProviderOutcome::Deduped, .. } => {
            "Both lock generations got past the claim; only the provider's idempotency key kept this to one charge. A key stops a repeat of one intent, not a stale holder: that is the fence's job."
        }
        EventKind::ProviderCall { outcome: ProviderOutcome::NotCalled, .. } => {
            "The fenced claim stopped the stale holder before the call. A holder that goes stale between claim and call still calls; only the provider's key covers that."
        }
        EventKind::GaveUp => {
            let barrier = before(t, i).next().is_some_and(|p| {
                matches!(p.kind, EventKind::BarrierSet { result: Err(_), .. })
            });
            let claim = before(t, i).next().is_some_and(|p| {
                matches!(p.kind, EventKind::ProviderCall { outcome: ProviderOutcome::NotCalled, .. })
            });
            let deadline = before(t, i).next().is_some_and(|p| {
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
            let others = other_believers(e, &name);
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
        EventKind::WriteSent { .. } => {
            "A request can sit in a queue long after the lease that sent it is gone."
        }
        EventKind::WriteTimedOut { .. } => {
            "A timeout means \"I don't know\", not \"it failed\": a timed-out request may still execute."
        }
        EventKind::ResumeRace { .. } => {
            "After a pause, which thread runs first is a race: a self-cancel that has to win it is not a safety mechanism."
        }
        _ => return None,
    };
    Some(s.to_owned())
}

/// The Say line for a write reaching storage, and what becomes of a lease: extended, released, deleted.
fn say_lease(t: &Trace, i: usize) -> Option<String> {
    let (sc, e) = (&t.scenario, &t.events[i]);
    let voice = Voice::of(sc);
    let name = e.actor.clone().unwrap_or_default();
    let s: &str = match &e.kind {
        EventKind::WriteApplied { .. } => return Some(say_write(t, i)),
        EventKind::WriteSkipped { .. } => "No token, no write.",
        EventKind::Extended { watchdog: Some(_), .. } if voice.is_service() => {
            "Renew every third of the TTL, jittered: a keep-alive renews the lease by ID, never an expired one."
        }
        EventKind::Extended { watchdog: Some(_), .. } => {
            "Renew at about a third of the TTL, jittered, checking your value in the same atomic step."
        }
        EventKind::Extended { .. } => {
            "Extend with the ownership check in the same script; GET then PEXPIRE could extend someone else's lease."
        }
        EventKind::ExtendFailed { lease_ended_at: Some(t), .. } => {
            return Some(format!(
                "Self-cancelling is right, but it came after the lease had already ended at t={}: it stops the rest of the job, and cannot recall a write sent before the pause. Only the fence covers that.",
                instant(sc, *t)
            ))
        }
        EventKind::ExtendFailed { .. } => "If a renewal fails, stop the job at once.",
        EventKind::Released { via: ReleaseMode::CompareAndDelete, .. } if sc.lock.queue() => {
            // The next waiter's watch fires at once: its grant is the event after this one.
            let next = t.events.get(i + 1).filter(|n| {
                n.at == e.at && n.actor != e.actor && matches!(n.kind, EventKind::Acquired { .. })
            });
            return Some(match next.and_then(|n| n.actor.as_deref()) {
                Some(w) => format!("Deleting its node fires one watch: only {w} wakes, and takes the lock in queue order."),
                None => format!("Nobody waits behind {name}: its delete frees the lock and wakes no one."),
            });
        }
        EventKind::Released { via: ReleaseMode::CompareAndDelete, .. } => voice.own_release(),
        EventKind::Released { via: ReleaseMode::GetThenDel, .. } => {
            "GET then DEL worked this time only because nothing changed in the gap."
        }
        EventKind::Released { via: ReleaseMode::Del, .. } => {
            "A plain DEL deletes whatever the key holds; this time it was still this client's own lease."
        }
        EventKind::ReleaseNoop { via: ReleaseMode::CompareAndDelete, .. } if voice.is_service() => {
            voice.service_noop()
        }
        EventKind::ReleaseNoop { via: ReleaseMode::CompareAndDelete, deleted, .. } if !deleted.is_empty() => {
            "Redlock runs the release on every node, whatever the client believes it holds there. Deleting a minority of leftover keys releases nothing: the lock had already ended with its majority."
        }
        EventKind::ReleaseNoop { via: ReleaseMode::CompareAndDelete, reason: NoopReason::OtherHolder { .. }, .. } => {
            "Compare-and-delete saw someone else's value and deleted nothing; a plain DEL would have deleted their lease."
        }
        EventKind::ReleaseNoop { via: ReleaseMode::CompareAndDelete, .. } => {
            "Nothing to delete: the lease was already gone. Compare-and-delete is safe either way."
        }
        EventKind::ReleaseNoop { via: ReleaseMode::GetThenDel | ReleaseMode::Del, .. } => {
            "This time the key was empty; had someone acquired it in the gap, the DEL would have deleted their lease."
        }
        EventKind::LockValueRead { owner: Some(o), .. } if *o == name => {
            "GET then DEL is two commands: the key can change hands between them."
        }
        EventKind::LockValueRead { .. } => "The GET saw the key is no longer its own, so no DEL follows.",
        EventKind::DeletedOthersLease { owner, .. } => {
            return Some(format!(
                "The DEL removed {owner}'s live lease: another client can take the lock while {owner} works, two holders at once. Compare-and-delete cannot."
            ))
        }
        _ => return None,
    };
    Some(s.to_owned())
}

/// The Say line for a retry, the lock's own faults, a barrier, an outside call, a partition.
fn say_fault(t: &Trace, i: usize) -> Option<String> {
    let (sc, e) = (&t.scenario, &t.events[i]);
    let voice = Voice::of(sc);
    let fencing = sc.policy.checks_fence();
    let s: &str = match &e.kind {
        EventKind::Retried { .. } => {
            "A lost reply makes a retry look like a new request: same token, same idempotency key."
        }
        EventKind::LockClockJumped { shortened: Some(_), .. } => voice.clock_jump(),
        EventKind::LockClockJumped { .. } => "No lease was live, so this jump changes nothing.",
        EventKind::Failover { lost, .. } if sc.restart() && !lost.is_empty() => {
            "Acknowledged is not durable: Redis answered OK from memory. With no AOF, a restart forgets the lock and its counter; with appendfsync everysec, only an OS crash or power loss does."
        }
        EventKind::Failover { .. } if sc.restart() => "Nothing was live, so this restart loses nothing.",
        EventKind::Failover { lost, .. }
            if lost.is_empty()
                && sc.replication_lag().is_some()
                && e.snapshot.holder.as_ref().is_some_and(|h| !e.snapshot.believers.contains(&h.owner)) =>
        {
            "A lagging replica undoes the newest writes, a release and a grant among them: the lock is now held by a lease nobody believes in."
        }
        EventKind::Failover { lost, .. }
            if lost.is_empty() && sc.replication_lag().is_some() && e.snapshot.holder.is_some() =>
        {
            "The SET had reached the replica, so nothing is lost this time. With more lag than the SET's age it would be; WAIT narrows that window, but by Redis's own docs it does not make Redis strongly consistent."
        }
        EventKind::Failover { lost, .. } if lost.is_empty() => match sc.lock.token_source() {
            TokenSource::SeparateCounter => "No lease was live, so this failover loses nothing; the separate counter goes on.",
            TokenSource::LockService | TokenSource::Counterfactual => {
                "A consensus store commits a grant on a majority before it says OK, so a leader change loses nothing."
            }
            TokenSource::SameRedis | TokenSource::RandomValue => "No lease was live, so this failover loses nothing.",
        },
        EventKind::Failover { rolled_back: true, .. } => {
            "Asynchronous replication: the primary said OK, then forgot the lock and its token counter. The lock service itself will grant the lock twice."
        }
        EventKind::Failover { .. } => {
            "Asynchronous replication: the primary said OK, then forgot. The lock service itself will grant the lock twice."
        }
        EventKind::BarrierSet { result: Ok(()), .. } if fencing => {
            "Establish the new epoch at the resource before starting: the old token is refused even before the new holder writes."
        }
        EventKind::BarrierSet { result: Ok(()), .. } => "A barrier only helps if the storage checks tokens.",
        EventKind::BarrierSet { .. } => "A refused barrier means a newer epoch already started: do not start.",
        EventKind::SideEffect { what, lease_live } => {
            let again = before(t, i).any(|p| matches!(&p.kind, EventKind::SideEffect { what: w, .. } if w == what));
            match (again, lease_live) {
                (true, _) => "Charged twice, under every fencing policy: the payment API never sees a token. The provider's idempotency key, or a fenced claim row before each call (claim-row), could stop it.",
                (false, false) => "Fencing only protects what checks the token. This call did not, so the stale worker made it anyway.",
                (false, true) => "A call outside the storage carries no token: a repeat is stopped only by the provider's idempotency key, or by a fenced claim written before the call.",
            }
        }
        EventKind::LockUnanswered { timeout_at: None, .. } => {
            "Without a timeout the client waits for ever: it never learns that the lock service did not answer."
        }
        EventKind::LockUnanswered {
            command: LockCommand::Renew,
            ..
        } if sc.minority() => {
            "A minority can neither grant nor renew; the majority goes on without telling the holder."
        }
        EventKind::LockUnanswered {
            command: LockCommand::Renew,
            ..
        } => {
            "No reply is not a refusal: a dropped renewal looks like a slow one, and the lease counts down while the job works on."
        }
        EventKind::LockUnanswered { .. } => {
            "A partition is not a pause: the client keeps running, but nothing it sends to the lock service arrives, and it learns that only at its own timeout."
        }
        EventKind::LockTimedOut { .. } => return Some(say_lock_timeout(t, i)),
        _ => return None,
    };
    Some(s.to_owned())
}

/// The "Say:" line for a client giving up on an unanswered lock command.
fn say_lock_timeout(t: &Trace, i: usize) -> String {
    let sc = &t.scenario;
    let e = &t.events[i];
    let name = e.actor.clone().unwrap_or_default();
    let EventKind::LockTimedOut {
        command,
        sent_at,
        cancelled,
        wrote_at,
        lease_ended_at,
    } = &e.kind
    else {
        return String::new();
    };
    let dur = |ms: Millis| duration(sc, ms);
    let waited = e.at.saturating_sub(*sent_at);
    // What became of the write the job sent while the command waited, if it has arrived.
    let sent = wrote_at.filter(|w| w >= sent_at);
    let fate = sent.and_then(|w| write_fate(t, i, &name, w));
    match (command, cancelled, lease_ended_at) {
        (LockCommand::Renew | LockCommand::Extend, true, Some(end)) => {
            let left = end.saturating_sub(*sent_at);
            let fate = match fate {
                Some((Some(_), true)) => " Its write from the superseded lease had already landed, and nothing refused it.",
                Some((Some(_), false)) => " Its write from the superseded lease had already reached storage, and only the fence refused it.",
                Some((None, _)) => " Its write had landed before anyone else held the lock, so no harm came of it.",
                None if sent.is_some() => " Its write is still on its way, and no self-cancel can call it back.",
                None => "",
            };
            format!(
                "{name} learned only at its own timeout, {} after sending, though its lease had only {} left then: too late.{fate}",
                dur(waited),
                dur(left)
            )
        }
        (LockCommand::Renew | LockCommand::Extend, true, None) if sent.is_some() && fate.is_none() => {
            "The lease is still live, but the job's write is already on its way: a self-cancel stops what comes next, not what was sent. Only a check at storage can refuse it when it arrives.".to_owned()
        }
        (LockCommand::Renew | LockCommand::Extend, true, None) if sent.is_some() => {
            "The client stops while its lease is still live, and its write landed under it: this time the timeout was short enough.".to_owned()
        }
        (LockCommand::Renew | LockCommand::Extend, true, None) => {
            let left = e
                .snapshot
                .holder
                .as_ref()
                .filter(|l| l.owner == name)
                .map_or(0, |l| l.expires_at.saturating_sub(*sent_at));
            format!(
                "In time, this once: the {} timeout is shorter than the {} that was left on the lease, and the job had not written. A write already on its way, or a pause after the last check, would still get past it.",
                dur(waited),
                dur(left)
            )
        }
        (LockCommand::Acquire, _, _) => "A timed-out acquire is not a refusal either: the client cannot tell whether its SET ran. Here it did not: the partition dropped it.".to_owned(),
        (LockCommand::Release, _, _) => "The lock service never saw this release: whatever the client still held there stays until its TTL runs out.".to_owned(),
        (LockCommand::CheckHeld, true, _) => "No answer is not \"false\", but stopping is the safe reading of it.".to_owned(),
        _ => "The failure came after the job had stopped: there was nothing left for it to cancel.".to_owned(),
    }
}

/// The "Say:" line for a write reaching storage.
fn say_write(t: &Trace, i: usize) -> String {
    let sc = &t.scenario;
    let e = &t.events[i];
    let name = e.actor.clone().unwrap_or_default();
    let EventKind::WriteApplied {
        fence,
        result,
        superseded_by,
        highest_accepted,
        ..
    } = &e.kind
    else {
        return String::new();
    };
    let fencing = sc.policy.checks_fence();
    let late = superseded_by.is_some();
    let out_of_order = matches!((fence, highest_accepted), (Some(f), Some(h)) if f < h);
    let twice = sc.job.is_some() && result.is_ok() && accepted_before(t, i).next().is_some();
    let random = sc.lock.token_source() == TokenSource::RandomValue;
    match result {
        Err(WriteError::StaleFence { token, last }) if random && !late => format!(
            "Storage refused the real holder: {name}'s random {token} drew lower than the {last} a superseded holder wrote with. Random values are unique, not ordered."
        ),
        Err(WriteError::StaleFence { token, last }) if random => format!(
            "Refused, but by luck of the draw: {name}'s old {token} happens to be lower than {last}. Another draw would have let it through; the right answer came from a coin, not from an order."
        ),
        Ok(_) if late && fencing && random && highest_accepted.is_some() => {
            let newer = superseded_by.as_ref().map_or_else(String::new, |g| format!(", though {}'s is the newer grant", g.owner));
            format!(
                "By luck of the draw: {name}'s superseded {} is larger than the {} storage holds, so storage took it{newer}. A lower draw would have refused it, by the same luck. Unique is not ordered: a fencing token must only go up.",
                token(*fence),
                token(*highest_accepted)
            )
        }
        Err(WriteError::StaleFence { token, last }) if token == last => {
            let earlier = accepted_before(t, i).find(|p| p.fence() == Some(*token));
            match earlier.and_then(|p| p.actor.clone()) {
                Some(w) if w == name => format!("Strict refuses an equal token, and this storage checks the fence before the idempotency key: the retry gets stale_fence, not its first debit's stored result. {name} cannot tell which of its writes landed unless storage returns the last fence: {last} here, its own token, so its first debit did. Check the key first, or use same-epoch (≥) with the key, and the key answers the retry."),
                Some(w) => format!(
                    "{w} and {name} carry the same token {token}: storage cannot tell the two holders apart and refused whichever came second. {}",
                    Line::DuplicateTokens.text()
                ),
                None if before(t, i).any(|p| matches!(p.kind, EventKind::BarrierSet { result: Ok(()), .. })) => format!(
                    "Strict spends the barrier's epoch: its own holder is refused. {}",
                    Line::WhichRule.text()
                ),
                None => "Strict refuses a token equal to the last fence; same-epoch (≥) would admit it.".to_owned(),
            }
        }
        Err(WriteError::StaleFence { .. }) if sc.lock.token_source() == TokenSource::Counterfactual => "Counterfactual: with a token minted in the same step as each grant (an etcd revision, a ZooKeeper czxid), storage would refuse the older generation here. Redlock mints none, so the real run is the fencing-off column.".to_owned(),
        Err(WriteError::StaleFence { last, .. }) if !late => format!(
            "Storage refused the live lease's holder: {name}'s token is older than the {last} a superseded holder took later. A fence is only as good as its tokens' order."
        ),
        Err(WriteError::StaleFence { token, last }) if late && partitioned(sc, &name, e.at) => format!("{name} is still cut off and has not learned its lease is gone, but storage has seen {last}, so it refuses {token}: the check at the resource, not what the client knows."),
        Err(WriteError::StaleFence { token, last }) => refusal_credit(t, i, *token, *last),
        Err(WriteError::DuplicateIntent { .. }) => "The idempotency key stops the same intent twice and returns its original result; it is not a fence.".to_owned(),
        Err(WriteError::MissingFence) => "With fencing on, a write without a token is refused.".to_owned(),
        Err(WriteError::SessionTerminated) => "Its transaction no longer exists, so its write cannot run: no token is involved.".to_owned(),
        Err(WriteError::StaleSequencer { token, live: Some(l) })
            if e.snapshot.last_fence.is_none_or(|h| h < *l) =>
        {
            format!(
                "Storage has never seen {l}, so the highest-token check alone would take {name}'s {token}. Asking the lock service refuses it once its lease is not live. The price: a round trip per write, and storage depends on the lock service."
            )
        }
        Err(WriteError::StaleSequencer { live: None, .. }) => "Nobody holds the lock, and still the write is refused: the sequencer check asks whether this lease is live, not whether a newer one exists.".to_owned(),
        Err(WriteError::StaleSequencer { .. }) => "The lock service says this lease is no longer the live one, so storage refuses the write.".to_owned(),
        Ok(_) if late && fencing && sc.lock.token_source() == TokenSource::SeparateCounter => format!(
            "{name}'s superseded lease carries the newer token, so storage takes its write and will refuse the real holder's. Mint tokens atomically with the grant."
        ),
        Ok(_) if late && fencing => match superseded_by {
            Some(g) if Some(g.fence) == *fence => format!(
                "{name} and {} hold the same token {}: no fencing rule can order them. Tokens must come from a counter that never goes back.",
                g.owner, g.fence
            ),
            Some(g) => format!(
                "A highest-token check revokes {name} only once storage has seen {}; {name}'s write got there first. Establishing the new epoch before the new holder starts (a handoff barrier) closes this gap.",
                g.fence
            ),
            None => String::new(),
        },
        Ok(_) if twice && rewrote_same(t, i) => "Wasted work, no harm: the job ran twice, but a report recomputed from the same input rewrote the value already in the row. A lock for efficiency can live with that; the same pause with a debit is a double charge (gc-pause).".to_owned(),
        Ok(_) if twice && late && sc.claims() => format!("Duplicate claim: two holders claimed the job, and the row now names {name}, a superseded holder, which will call the provider too. Only the provider's idempotency key can stop a second charge now."),
        Ok(_) if twice && late && sc.publishes() => "Duplicate publish: the job ran twice, and the result row now holds the superseded worker's result. The lease alone is not mutual exclusion.".to_owned(),
        Ok(_) if twice && late && partitioned(sc, &name, e.at) => format!("Double charge, and nobody paused: {name}, cut off from the lock service but not from storage, wrote after its lease went to {}. {}", superseded_by.as_ref().map_or_else(String::new, |g| g.owner.clone()), Line::IdempotencyShort.text()),
        Ok(_) if twice && late => format!("Double charge. {}", Line::IdempotencyAnswer.text()),
        // The writer holds the live lease, so the higher token came from a superseded grant
        // that was minted its token later (a counter apart from the grant).
        Ok(_) if out_of_order && !late => {
            let tail = if twice {
                format!(" Both debits landed: a double charge. {}", Line::IdempotencyShort.text())
            } else {
                String::new()
            };
            format!("{name} holds the live lease, yet its token is lower than one storage took from a superseded holder: nothing at the resource checked.{tail}")
        }
        Ok(_) if out_of_order => "Storage took a lower token after a higher one: nothing at the resource noticed the older generation.".to_owned(),
        Ok(_) if late && sc.publishes() => format!("{name}'s stale result is now the published one. A first-wins idempotency key on the job would make it worse: it would keep {name}'s result and drop the new holder's. Only the fence could have refused it."),
        Ok(_) if late => "Storage took a write from a superseded lease. The lease alone is not mutual exclusion.".to_owned(),
        Ok(_) if twice && !fencing => {
            // A stale result that was the published one: its harm is the time it was live.
            let stale = accepted_before(t, i).next().filter(|p| sc.publishes() && p.is_late_write());
            if let Some(p) = stale {
                let who = p.actor.clone().unwrap_or_default();
                return format!(
                    "The job ran twice. {name}'s result replaces {who}'s, but {who}'s stale result was the published one from t={} to t={}: whoever read the row then got it.",
                    instant(sc, p.at),
                    instant(sc, e.at)
                );
            }
            let first = accepted_before(t, i).last().and_then(|p| p.actor.clone()).unwrap_or_default();
            // A debit's duplicate is an intent run twice: say what a key would and would not do.
            let key = if sc.publishes() {
                String::new()
            } else {
                format!(" {}", Line::IdempotencyShort.text())
            };
            format!(
                "The job has now run twice: storage is not checking tokens, so {first}'s write from a superseded lease landed as well as this one.{key}"
            )
        }
        Ok(_) if twice => {
            let first = accepted_before(t, i).last().and_then(|p| p.actor.clone()).unwrap_or_default();
            format!(
                "The job has now run twice although this token passed the check: {first}'s earlier write came from a superseded lease that storage could not yet refuse."
            )
        }
        Ok(_) if asks_lock_service(sc) => "The lock service says this lease is live, so the write lands. Here check and apply are one instant; in a real resource a lease that lapses between them still lands.".to_owned(),
        Ok(_) if sc.policy == FencingPolicy::SameEpoch
            && fence.is_some()
            && t.snapshot_at(i).last_fence == *fence =>
        {
            if before(t, i).any(|p| matches!(p.kind, EventKind::BarrierSet { result: Ok(()), .. })) {
                "Same-epoch (≥) admits a token equal to the last fence, so the barrier's owner can write. Strict (>) would refuse it: the barrier would have spent the epoch.".to_owned()
            } else {
                "Same-epoch (≥) admits a token equal to the last fence; strict (>) would refuse it.".to_owned()
            }
        }
        Ok(_) if fencing => "The write carries its token; storage keeps the highest token it has accepted.".to_owned(),
        Ok(_) => "Storage is not checking tokens: it trusts whoever shows up.".to_owned(),
    }
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
            Line::NoWarning => "No warning comes: a monotonic clock shows a pause only afterwards, and another can follow the read.",
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

/// The Say line of a grant from a lock service a round trip away ([`Scenario::lock_rtt`]):
/// what the round trip costs, and, for a later grant, the window it opens before storage
/// sees the new token.
fn far_grant(t: &Trace, i: usize, earlier: Option<&(String, Fence)>) -> Option<String> {
    let sc = &t.scenario;
    if sc.lock_rtt == 0 {
        return None;
    }
    let e = &t.events[i];
    let name = e.actor.as_deref().unwrap_or_default();
    Some(match (earlier, &e.kind) {
        (None, _) => format!(
            "Every acquire and renewal waits a round trip ({}) to the lock service in the other region: a global lock pays a WAN round trip per acquire.",
            duration(sc, sc.lock_rtt)
        ),
        (Some((who, f)), EventKind::Acquired { fence, .. }) => format!(
            "{name} has {fence}, but hears of it only a round trip later, and storage sees {fence} only with {name}'s first write. Until then a fence check still lets {who}'s {f} through."
        ),
        _ => return None,
    })
}

/// A refusal credited to what made it work: storage had already seen the newer token. Where
/// the order could have flipped, say what covers it.
fn refusal_credit(t: &Trace, i: usize, token: Fence, last: Fence) -> String {
    let name = t.events[i].actor.clone().unwrap_or_default();
    let barrier =
        before(t, i).any(|p| matches!(p.kind, EventKind::BarrierSet { result: Ok(()), .. }));
    if barrier {
        return format!(
            "Storage refuses {token} because the barrier set epoch {last} before the new holder started: the order cannot flip."
        );
    }
    let first = accepted_before(t, i)
        .find(|p| p.fence() == Some(last))
        .and_then(|p| p.actor.clone())
        .unwrap_or_default();
    format!(
        "Refused only because storage already saw {last} from {first}. Had {name}'s {token} arrived first, both would land; a handoff barrier, or one conditional write of status and fence, covers that."
    )
}
