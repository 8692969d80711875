//! The words of a partition ([`Fault::Partition`](crate::core::Fault::Partition)): it strikes
//! no event of its own, so its words are its clients' (a lock command with no reply, no
//! leader, a client's own timeout), the story's cut-off topic.

use super::*;

/// A client cut off from the lock service: a command unanswered, a client timeout.
pub(in super::super) fn narrate(c: &Ctx) -> Option<String> {
    let (sc, e, name, res, _) = c.parts();
    Some(match &e.kind {
        EventKind::LockUnanswered {
            command,
            timeout_at,
        } => {
            let lease = e
                .snapshot
                .holder
                .as_ref()
                .filter(|l| l.owner == name)
                .map(|l| (l.fence, l.expires_at));
            let what = match (command, lease) {
                (LockCommand::Renew, Some((f, _))) => {
                    format!("{name}'s watchdog sends a renewal{}", lease_token(sc, f))
                }
                (LockCommand::Renew, None) => format!("{name}'s watchdog sends a renewal"),
                (LockCommand::Acquire, _) => format!("{name} sends its acquire for {res}"),
                (LockCommand::Extend, _) => format!("{name} sends an extend of its lease"),
                (LockCommand::CheckHeld, _) => format!("{name} sends an is_held check"),
                (LockCommand::Release, _) => format!("{name} sends its release of {res}"),
            };
            let end = sc.partitioned().map_or(e.at, |p| p.end);
            let wait = match timeout_at {
                Some(t) => format!(
                    "{name}'s client waits for one until t={} ({} timeout)",
                    c.at(*t),
                    c.dur(t - e.at)
                ),
                None => format!("{name}'s client has no timeout: it will wait for ever"),
            };
            let rest = match (command, lease) {
                (LockCommand::Renew, Some((_, until))) => format!(
                    "; the job works on, and the lease still ends at t={}.",
                    c.at(until)
                ),
                (LockCommand::Renew, None) => "; the job works on.".to_owned(),
                _ => "; it does nothing else meanwhile.".to_owned(),
            };
            if sc.minority() {
                return Some(format!(
                    "{what} to member 1, which is on the minority side until t={}: without a quorum it can commit no {}, so no reply comes and the majority never sees it. {wait}{rest}",
                    c.at(end),
                    command.noun()
                ));
            }
            format!(
                "{what}, but a partition cuts {name} off from the lock service until t={}: the {} is dropped, never executed, and no reply comes. {wait}{rest}",
                c.at(end),
                command.noun()
            )
        }
        EventKind::LockNoLeader { command, learns_at } => {
            let end = sc.partitioned().map_or(e.at, |p| p.end);
            let mut s = format!(
                "{name}'s client sends a {} to member 1, which is on the minority side until t={}: it has no leader to pass it to, so it answers \"etcdserver: no leader\", and the majority never sees it.",
                command.noun(),
                c.at(end)
            );
            s += &match (command, learns_at) {
                (LockCommand::Renew | LockCommand::Extend, Some(t)) => format!(
                    " The client retries its keep-alive; if none is answered by t={}, its lease deadline (its last answered renewal plus the TTL), it closes the keep-alive and Session.Done() fires. The job works on meanwhile.",
                    c.at(*t)
                ),
                (_, Some(t)) => format!(" The client retries until its own timeout at t={}.", c.at(*t)),
                (_, None) => " The client retries, with no timeout.".to_owned(),
            };
            s
        }
        EventKind::LockTimedOut {
            command,
            sent_at,
            cancelled,
            wrote_at,
            lease_ended_at,
        } => {
            let mut s = match command {
                LockCommand::Renew | LockCommand::Extend if sc.minority() => format!(
                    "{name}'s keep-alive has had no answer but \"no leader\" since t={}: at its lease deadline its client closes the keep-alive and Session.Done() fires.",
                    c.at(*sent_at)
                ),
                _ => format!(
                    "{name}'s client gives up on the {} it sent at t={}: no reply in {}.",
                    command.noun(),
                    c.at(*sent_at),
                    c.dur(e.at - sent_at)
                ),
            };
            s += &match (command, cancelled) {
                (LockCommand::Renew | LockCommand::Extend, true) => {
                    " The job self-cancels.".to_owned()
                }
                (LockCommand::CheckHeld, true) => {
                    " It treats the check as false and gives up.".to_owned()
                }
                (LockCommand::Renew | LockCommand::Extend | LockCommand::CheckHeld, false) => {
                    " Its job has already stopped, so there is nothing left to cancel.".to_owned()
                }
                (LockCommand::Acquire, _) => {
                    " It treats the acquire as refused and will try again.".to_owned()
                }
                (LockCommand::Release, _) => " It moves on without knowing whether its key was deleted (it was not: the partition dropped the command).".to_owned(),
            };
            if let Some(end) = lease_ended_at {
                s += &format!(" Its lease had ended at t={}.", c.at(*end));
            } else if let Some(l) = e.snapshot.holder.as_ref().filter(|l| l.owner == name) {
                s += &format!(
                    " Its lease still runs until t={} on the lock service.",
                    c.at(l.expires_at)
                );
            }
            let sent_since = wrote_at.filter(|w| *w >= *sent_at);
            match (sent_since, sent_since.and_then(|w| write_fate(c, w))) {
                (Some(w), Some((Some(o), _))) if *cancelled => s += &format!(
                    " Too late for its write, sent at t={} after the lease went to {o}: a self-cancel cannot call it back.",
                    c.at(w)
                ),
                (Some(w), Some((None, _))) => s += &format!(
                    " Its write, sent at t={}, had reached storage before anyone else was granted the lock.",
                    c.at(w)
                ),
                (Some(w), None) if *cancelled => s += &format!(
                    " Its write, sent at t={}, is still on its way: a self-cancel cannot call it back.",
                    c.at(w)
                ),
                (None, _) if *cancelled && lease_ended_at.is_none() => {
                    s += " The job has not written since: it stops in time."
                }
                _ => {}
            }
            s
        }
        _ => return None,
    })
}

/// A lock command with no reply, and a client giving up on one.
pub(in super::super) fn say(c: &Ctx) -> Option<String> {
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
