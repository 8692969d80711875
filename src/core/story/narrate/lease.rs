//! Narration: A lease ending, renewed or released.

use super::*;

/// A lease that ended without a release: by its TTL, a clock jump, an idle timeout or a failover.
pub(crate) fn expiry(c: &Ctx) -> Option<String> {
    let (sc, e, _, res, _) = c.parts();
    Some(match &e.kind {
        EventKind::LeaseExpired {
            owner,
            cause: ExpiryCause::IdleTimeout,
            owner_knew,
            ..
        } if c.voice == Voice::RowLock => row_session_ended(c, owner, *owner_knew),
        EventKind::LeaseExpired {
            owner,
            fence,
            cause,
            owner_knew,
        } => {
            let knew = match (owner_knew, c.waiting_renewal(owner)) {
                (Awareness::Unaware, Some((sent, Some(until)))) => format!(
                    " {owner} is still running, cut off from the lock service: its renewal sent at t={} got no reply, and its client waits for one until t={}.",
                    c.at(sent),
                    c.at(until)
                ),
                (Awareness::Unaware, Some((sent, None))) => format!(
                    " {owner} is still running, cut off from the lock service: its renewal sent at t={} got no reply, and its client waits for one with no timeout.",
                    c.at(sent)
                ),
                (Awareness::Paused, _) => format!(" {owner} is paused and cannot know."),
                (Awareness::Unaware, None) => format!(" {owner} has not noticed."),
                (Awareness::Knows, _) => String::new(),
            };
            let tk = lease_token(sc, *fence);
            match cause {
                ExpiryCause::Ttl if sc.lock.lock_delay() > 0 => format!(
                    // Chubby: a session's lease times out when no KeepAlive arrives; its locks go with it.
                    "{owner}'s lease{tk} expires: its session timed out on the lock server, with no release, so the lock-delay starts: nobody gets {res} for {} more, until t={}.{knew}",
                    c.dur(sc.lock.lock_delay()),
                    c.at(e.at.saturating_add(sc.lock.lock_delay()))
                ),
                ExpiryCause::Ttl => format!(
                    "{owner}'s lease{tk} expires: its {}, so the lock is free.{knew}",
                    // ZooKeeper's queue: a session timeout, and its ephemeral node goes with it.
                    if sc.lock.queue() {
                        "session timed out on the lock server, which deleted its node"
                    } else {
                        "TTL ran out on the lock server"
                    }
                ),
                ExpiryCause::ClockJump if c.voice == Voice::Redlock => format!(
                    "{owner}'s Redlock lease{tk} ends early: its key on node {} expired by the jumped clock, so {owner} no longer holds a majority of nodes.{knew}",
                    sc.jumping_node() + 1
                ),
                ExpiryCause::ClockJump => format!(
                    "{owner}'s lease{tk} expires early, by the lock node's jumped clock, so the lock is free.{knew}"
                ),
                ExpiryCause::IdleTimeout => format!(
                    "The server terminates {owner}'s session (idle in its transaction too long), rolls its transaction back and releases its lock.{knew}"
                ),
                ExpiryCause::LostInFailover => {
                    let other = e.snapshot.holder.as_ref().filter(|l| l.owner != *owner);
                    let overlap = match other {
                        Some(l) => format!(
                            " Until now, {owner}'s lost lease and {}'s lease{} were both live.",
                            l.owner, lease_token(sc, l.fence)
                        ),
                        None => String::new(),
                    };
                    let server = if sc.restart() {
                        "The restarted Redis"
                    } else {
                        "The promoted replica"
                    };
                    format!(
                        "{owner}'s lease{tk} runs out by its TTL. {server} never had it, so only {owner} still counted it.{overlap}"
                    )
                }
            }
        }
        _ => return None,
    })
}

/// An extend or watchdog renewal, and one that fails.
pub(crate) fn renewal(c: &Ctx) -> Option<String> {
    let (_, e, name, _, fx) = c.parts();
    Some(match &e.kind {
        EventKind::Extended {
            fence,
            expires_at,
            watchdog: None,
            ..
        } if c.voice.is_service() => format!(
            "{name} keeps its lease alive (token {fence}) until t={}: {}.",
            c.at(*expires_at),
            c.voice.extend_checks()
        ),
        EventKind::Extended {
            expires_at,
            watchdog: None,
            ..
        } => format!(
            "{name} extends its lease ({}) until t={}: {}.",
            c.fields(&fx.lease),
            c.at(*expires_at),
            c.voice.extend_checks()
        ),
        EventKind::Extended {
            expires_at,
            watchdog: Some(next),
            ..
        } => {
            let lease = extended_lease(c);
            // etcd's client sends a keep-alive every third of the TTL, unjittered.
            let etcd = c.voice == Voice::LockService && !c.sc.lock.queue()
                && next.is_none_or(|d| d.saturating_sub(c.e.at) == c.sc.lease_ttl / 3);
            let next = match next {
                Some(d) if etcd => format!("next at t={} (a third of the TTL)", c.at(*d)),
                Some(d) => format!(
                    "next renewal at t={} (a third of the TTL, ±25% jitter)",
                    c.at(*d)
                ),
                None => "the work ends before the next renewal is due".to_owned(),
            };
            let who = if etcd { "etcd client" } else { "watchdog" };
            format!(
                "{name}'s {who} renews its lease{lease} until t={}; {next}.",
                c.at(*expires_at)
            )
        }
        EventKind::LockQueued {
            command,
            ahead,
            served_at,
        } => return queued(c, *command, *ahead, *served_at),
        EventKind::ExtendFailed {
            watchdog: true,
            lease_ended_at: Some(ended),
        } if c.sc.lock.herd().is_some() => format!(
            "{name}'s renewal is answered now, after its lease ended at t={}: not_holder. Its watchdog stops; nothing tells its worker.",
            c.at(*ended)
        ),
        EventKind::ExtendFailed {
            watchdog,
            lease_ended_at,
        } => {
            let who = if *watchdog {
                format!("{name}'s watchdog tries to renew")
            } else {
                format!("{name} tries to extend")
            };
            let when = match lease_ended_at {
                Some(t) => format!(" — its lease had already ended at t={}", c.at(*t)),
                None => String::new(),
            };
            format!("{who}: the extend script answers 0 (not_holder){when}. The job self-cancels and does not write.")
        }
        _ => return None,
    })
}

/// A lock command waiting behind the fleet's renewals ([`crate::core::Herd`]).
fn queued(c: &Ctx, command: LockCommand, ahead: u32, served_at: Millis) -> Option<String> {
    let (sc, _, name, _, _) = c.parts();
    let herd = sc.lock.herd()?;
    let fleet = match command {
        LockCommand::Renew => format!(
            ", sent with the fleet's {} before their leases end,",
            c.dur(herd.renew_before)
        ),
        _ => String::new(),
    };
    Some(format!(
        "{name}'s {}{fleet} waits behind {ahead} renewals; the lock service answers {} per ms, one after another: {name}'s at t={}.",
        command.noun(),
        herd.per_ms,
        c.at(served_at)
    ))
}

/// A release, one that finds nothing of its own, a GET, and a DEL of another's lease.
pub(crate) fn release(c: &Ctx) -> Option<String> {
    let (sc, e, name, res, fx) = c.parts();
    Some(match &e.kind {
        EventKind::Released { .. } if c.voice == Voice::RowLock => row_committed(c),
        EventKind::Released {
            via: ReleaseMode::CompareAndDelete,
            ..
        } if c.voice == Voice::Chubby => format!(
            "{name} releases {res}: the lock service checks the lock is still its own and frees it at once, with no lock-delay."
        ),
        EventKind::Released {
            fence,
            via: ReleaseMode::CompareAndDelete,
        } if c.voice == Voice::LockService && sc.lock.queue() => format!(
            "{name} releases {res}: it deletes its own sequential node (token {fence}); a watch on that node, if any, fires."
        ),
        EventKind::Released {
            fence,
            via: ReleaseMode::CompareAndDelete,
        } if c.voice == Voice::LockService => format!(
            "{name} releases {res}: it deletes its lock key in a transaction that checks the key is still its own (token {fence}), and revokes its lease."
        ),
        EventKind::Released {
            via: ReleaseMode::CompareAndDelete,
            ..
        } => {
            let whereat = if c.voice == Voice::Redlock {
                " on each node it reaches"
            } else {
                ""
            };
            format!(
                "{name} releases {res} with compare-and-delete (one Lua script){whereat}: the key still holds its own value, {}, so it is deleted.{}",
                fx.lease.as_ref().map_or("", |l| l.value.as_str()),
                value_not_token(sc, &fx.lease)
            )
        }
        EventKind::Released {
            via: ReleaseMode::Del,
            ..
        } => format!(
            "{name} releases {res} with a plain DEL, no check at all: the key still held its own lease ({}), so this time nothing went wrong.",
            c.fields(&fx.lease)
        ),
        EventKind::Released {
            via: ReleaseMode::GetThenDel,
            ..
        } => format!(
            "{name} DELs {res}: the key still held its own lease ({}), so this time nothing went wrong.",
            c.fields(&fx.lease)
        ),
        EventKind::ReleaseNoop {
            via: ReleaseMode::CompareAndDelete,
            deleted,
            ..
        } if !deleted.is_empty() => {
            let n = sc.lock.redlock().map_or(1, |r| r.nodes);
            format!(
                "{name} releases with compare-and-delete on every node it reaches. Its leftover keys on {} ({} of {n}) are deleted, which only clears them before their PX runs out: its lock had already ended with its majority, so no lock was left to release.",
                node_list(deleted),
                deleted.len()
            )
        }
        EventKind::ReleaseNoop { via, reason, .. } => {
            let why = match reason {
                NoopReason::OtherHolder { owner, fence } => {
                    format!("the lease now belongs to {owner}{}", lease_token(sc, *fence))
                }
                NoopReason::Expired => "its lease had already expired".to_owned(),
                NoopReason::Lost => "the failed primary lost its lease".to_owned(),
                NoopReason::NeverHeld => "it never held the lease".to_owned(),
            };
            match via {
                ReleaseMode::CompareAndDelete if !c.voice.is_service() => {
                    if let (NoopReason::OtherHolder { owner, .. }, Some(l), Some(mine)) = (reason, &fx.lease, &fx.own) {
                        let same = match (l.token, mine.token) {
                            (Some(a), Some(b)) if a == b && sc.lock.token_source() != TokenSource::RandomValue => {
                                format!(" Both leases carry token {a}: only the value tells them apart.")
                            }
                            _ => String::new(),
                        };
                        return Some(format!(
                            "{name} tries to release: compare-and-delete finds {owner}'s value {} in the key, not its own {}, so it deletes nothing.{same}",
                            l.value, mine.value
                        ));
                    }
                    format!("{name} tries to release: a no-op, {why}. Compare-and-delete deletes nothing.")
                }
                ReleaseMode::CompareAndDelete => {
                    format!("{name} tries to release: a no-op, {why}. The checked release frees nothing.")
                }
                ReleaseMode::GetThenDel | ReleaseMode::Del => {
                    format!("{name} DELs {res}: nothing live to delete, {why}.")
                }
            }
        }
        EventKind::LockValueRead { owner, fence } => match (owner, fence) {
            (Some(o), Some(_)) if *o == name => format!(
                "{name} releases the unsafe way: GET {res} returns its own value ({}), so it will DEL next — two commands, with a gap between them.",
                c.fields(&fx.lease)
            ),
            (Some(o), _) => format!(
                "{name} GETs {res}: the value is {o}'s ({}), not its own, so it does not DEL.",
                c.fields(&fx.lease)
            ),
            (None, _) => {
                format!("{name} GETs {res}: nil — its lease is already gone, so it does not DEL.")
            }
        },
        EventKind::DeletedOthersLease { owner, .. } => format!(
            "{name} DELs {res} without checking {}: it deletes {owner}'s live lease ({}). The lock is free while {owner} is still working.",
            if sc.release == ReleaseMode::Del { "whose it is" } else { "again" },
            c.fields(&fx.lease)
        ),
        _ => return None,
    })
}
