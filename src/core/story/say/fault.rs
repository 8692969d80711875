//! Say: the lock's own faults, and a client cut off from the lock service.

use super::*;

/// A clock jump or a failover of the lock.
pub(crate) fn fault(c: &Ctx) -> Option<String> {
    let (sc, e, voice) = (c.sc, c.e, c.voice);
    let s: &str = match &e.kind {
        EventKind::LockClockJumped { shortened: Some(_), .. } => voice.clock_jump(),
        EventKind::LockClockJumped { .. } => "No lease was live, so this jump changes nothing.",
        EventKind::StorageFailover { lost, .. } if lost.is_empty() => {
            "Synchronous commit: the standby has every acknowledged write, and so the highest token."
        }
        EventKind::StorageFailover { .. } if sc.policy.checks_fence() => {
            "Asynchronous replication forgets the newest writes, and the high-water mark with them."
        }
        EventKind::StorageFailover { .. } => {
            "Asynchronous replication forgets the newest writes."
        }
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
        _ => return None,
    };
    Some(s.to_owned())
}

/// A lock command with no reply, and a client giving up on one.
pub(crate) fn cut_off(c: &Ctx) -> Option<String> {
    let (sc, e) = (c.sc, c.e);
    let s: &str = match &e.kind {
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
        EventKind::LockNoLeader { .. } => {
            "A live minority member refuses: \"no leader\"; the client knows its lease deadline."
        }
        EventKind::LockTimedOut { .. } if sc.minority() => return Some(session_done(c)),
        EventKind::LockTimedOut { .. } => return Some(lock_timeout(c)),
        _ => return None,
    };
    Some(s.to_owned())
}

/// The "Say:" line for a minority client's session ending at its lease deadline.
fn session_done(c: &Ctx) -> String {
    let EventKind::LockTimedOut {
        sent_at, wrote_at, ..
    } = &c.e.kind
    else {
        return String::new();
    };
    let check = format!("{} learned at its lease deadline", c.name);
    match wrote_at.filter(|w| w < &c.e.at && w >= sent_at) {
        Some(w) => format!(
            "{check}, not its own timeout; its write had left at t={}, after its last check. No check covers what comes after it: only the fence can refuse it.",
            c.at(w)
        ),
        None => format!("{check}, not its own timeout, and had not written: it stops in time."),
    }
}

/// The "Say:" line for a client giving up on an unanswered lock command.
fn lock_timeout(c: &Ctx) -> String {
    let (sc, e, name) = (c.sc, c.e, c.name);
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
    let fate = sent.and_then(|w| write_fate(c, w));
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
