//! Say: acquiring the lock, and a lease ending, renewed or released.

use super::*;

/// A grant, a refused acquire, or a token taken after the grant.
pub(crate) fn grant(c: &Ctx) -> Option<String> {
    let (sc, e, name, voice) = (c.sc, c.e, c.name, c.voice);
    let s: &str = match &e.kind {
        EventKind::Acquired { .. } if voice == Voice::RowLock => return Some(row_granted_say(c)),
        EventKind::Acquired {
            token_later: true, ..
        } => {
            "The lease is granted, but its token takes a second command: a pause can land in between."
        }
        EventKind::Acquired { fence, .. } => {
            let earlier = c.fx.prior_grant.clone();
            if let Some(line) = far_grant(c, earlier.as_ref()) {
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
        _ => return None,
    };
    Some(s.to_owned())
}

/// A lease that ended without a release.
pub(crate) fn expiry(c: &Ctx) -> Option<String> {
    let (sc, e, voice) = (c.sc, c.e, c.voice);
    let s: &str = match &e.kind {
        EventKind::LeaseExpired {
            owner,
            cause: ExpiryCause::IdleTimeout,
            ..
        } if voice == Voice::RowLock => return Some(format!(
            "The idle timeout is a lease too. But lock and data live in one system, so ending the lock also ends {owner}'s transaction: nothing it did survives."
        )),
        EventKind::LeaseExpired { cause, owner_knew, .. } => match (cause, owner_knew) {
            (ExpiryCause::Ttl, Awareness::Paused) if sc.lock.queue() || sc.lock.lock_delay() > 0 => {
                "The lock server sees the session time out, not that the holder is stopped."
            }
            (ExpiryCause::Ttl, Awareness::Paused) => {
                "The lock server sees the TTL run out, not that the holder is stopped."
            }
            (ExpiryCause::Ttl, Awareness::Unaware)
                if matches!(&e.kind, EventKind::LeaseExpired { owner, .. } if c.waiting_renewal(owner).is_some()) =>
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
        _ => return None,
    };
    Some(s.to_owned())
}

/// A lease renewed, or a renewal that failed.
pub(crate) fn renewal(c: &Ctx) -> Option<String> {
    let (sc, e, voice) = (c.sc, c.e, c.voice);
    let s: &str = match &e.kind {
        EventKind::Extended { watchdog: Some(_), .. } if voice.is_service() => {
            "A keep-alive every third of the TTL renews the lease by ID, never an expired one."
        }
        EventKind::Extended { watchdog: Some(_), .. } => {
            "Renew at about a third of the TTL, jittered, checking your value in the same atomic step."
        }
        EventKind::Extended { .. } => {
            "Extend with the ownership check in the same script; GET then PEXPIRE could extend someone else's lease."
        }
        EventKind::LockQueued { command: LockCommand::Renew, served_at, .. } => {
            let herd = sc.lock.herd()?;
            return Some(format!(
                "One schedule, one instant: the last renewal waits {}, but its lease had {} left.",
                duration(sc, served_at.saturating_sub(e.at)),
                duration(sc, herd.renew_before)
            ));
        }
        EventKind::LockQueued { .. } => {
            "The herd delays every command, not only renewals."
        }
        EventKind::ExtendFailed { watchdog: true, .. } if sc.lock.herd().is_some() => {
            "An extend answered after the lease had already ended is a lost lease, and the worker is not told."
        }
        EventKind::ExtendFailed { lease_ended_at: Some(t), .. } => {
            // What the late self-cancel misses: a write already out, or the race it won.
            let before = &c.t.events[..c.i];
            let sent = before.iter().any(|x| {
                matches!(x.kind, EventKind::WriteSent { .. }) && x.actor.as_deref() == Some(c.name)
            });
            let raced = before.iter().any(|x| {
                matches!(x.kind, EventKind::ResumeRace { worker_first: false })
                    && x.actor.as_deref() == Some(c.name)
            });
            let missed = match (sent, raced) {
                (false, true) => "had the worker run first, its debit would have gone out",
                _ => "it stops the rest of the job, and cannot recall a write sent before the pause",
            };
            return Some(format!(
                "Self-cancelling is right, but it came after the lease had already ended at t={}: {missed}. Only the fence covers that.",
                instant(sc, *t)
            ));
        }
        EventKind::ExtendFailed { .. } => "If a renewal fails, stop the job at once.",
        _ => return None,
    };
    Some(s.to_owned())
}

/// A release, and reading or deleting the lock's value.
pub(crate) fn release(c: &Ctx) -> Option<String> {
    let (sc, e, name, voice) = (c.sc, c.e, c.name, c.voice);
    let s: &str = match &e.kind {
        EventKind::Released { .. } if voice == Voice::RowLock => {
            "COMMIT makes the writes durable and releases the row lock in one step: there is no separate release to get wrong."
        }
        EventKind::Released { via: ReleaseMode::CompareAndDelete, .. } if sc.lock.queue() => {
            // The next waiter's watch fires at once: its grant is the event after this one.
            let next = c.next().filter(|n| {
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

/// The Say line of a grant from a lock service a round trip away ([`Scenario::lock_rtt`]):
/// what the round trip costs, and, for a later grant, the window it opens before storage
/// sees the new token.
fn far_grant(c: &Ctx, earlier: Option<&(String, Fence)>) -> Option<String> {
    let (sc, e, name) = (c.sc, c.e, c.name);
    sent_far(c.t, c.i)?;
    Some(match (earlier, &e.kind) {
        (None, _) => format!(
            "Every lock command waits a round trip ({}) to the lock service in the other region: a global lock pays a WAN round trip per acquire.",
            duration(sc, sc.lock_rtt)
        ),
        (Some((who, f)), EventKind::Acquired { fence, .. }) => format!(
            "{name} has {fence} on the lock service, but hears of it only half a round trip later, and storage sees {fence} only with {name}'s first write. Until then a fence check still lets {who}'s {f} through."
        ),
        _ => return None,
    })
}
