//! Narration: Faults of the lock service and of the network to it.

use super::*;

/// The lock's own faults: a node's clock jumps, a primary or leader fails over.
pub(crate) fn fault(c: &Ctx) -> Option<String> {
    let (sc, e, _, res, _) = c.parts();
    Some(match &e.kind {
        EventKind::LockClockJumped { by, shortened } => {
            let clock = match sc.lock.redlock() {
                Some(_) => format!("Node {}'s clock", sc.jumping_node() + 1),
                None => "The lock node's clock".to_owned(),
            };
            let Some(s) = shortened else {
                let none = match c.voice {
                    Voice::Redlock => "it shortens no lock that anyone holds",
                    _ => "no lease is live, so nothing changes",
                };
                return Some(format!("{clock} jumps forward {}; {none}.", c.dur(*by)));
            };
            let (owner, was, now) = (&s.owner, c.at(s.granted_until), c.at(s.ends_at));
            let ended = match c.voice {
                Voice::Redlock => format!("{owner}'s key there expires at once, so {owner} holds a majority only until t={now} instead of t={was}; as far as {owner} knows, its lock is valid until about t={}: the TTL less Redlock's drift allowance (1% of the TTL plus 2 ms).", c.at(s.granted_until.saturating_sub(redlock_drift(sc.lease_ttl)))),
                _ => format!("{owner}'s lease{} now ends at t={now} instead of t={was}; as far as {owner} knows, it still runs until t={was}.", lease_token(sc, s.fence)),
            };
            format!("{clock} jumps forward {} (an NTP step). {ended}", c.dur(*by))
        }
        EventKind::StorageFailover { lag, lost } => storage_failover(c, *lag, lost),
        EventKind::Failover {
            lost, next_fence, ..
        } if sc.restart() => restarted(c, lost.first(), *next_fence),
        EventKind::Failover {
            lost,
            next_fence,
            rolled_back,
        } => match (sc.lock.token_source(), lost.first()) {
            // A replica that lags: did the holder's SET reach it before the crash?
            (TokenSource::SameRedis | TokenSource::SeparateCounter | TokenSource::RandomValue, _)
                if sc.replication_lag().is_some() =>
            {
                let lag = c.dur(sc.replication_lag().unwrap_or(0));
                let granted = |owner: &str| c.client(owner).granted_at.unwrap_or(0);
                let next = match (sc.lock.token_source(), rolled_back) {
                    (TokenSource::RandomValue, _) => String::new(),
                    (TokenSource::SameRedis, true) => format!(" The fence counter lived on the same Redis and lost that INCR too, so the next token handed out is {next_fence} again."),
                    (TokenSource::SameRedis, false) => format!(" The next token will be {next_fence}."),
                    _ => format!(" The separate counter survives either way: the next token is {next_fence}."),
                };
                match (lost.first(), &e.snapshot.holder) {
                    (Some(l), _) => format!(
                        "The Redis primary crashes, and its replica, {lag} behind, is promoted. {owner}'s SET at t={g} had not reached it yet, so the {res} key is gone. {owner} was told OK and still believes it holds the lease until t={until}, yet the lock service will grant {res} again.{next}",
                        owner = l.owner,
                        g = c.at(granted(&l.owner)),
                        until = c.at(l.expires_at),
                    ),
                    (None, Some(h)) if !e.snapshot.believers.contains(&h.owner) => format!(
                        "The Redis primary crashes, and its replica, {lag} behind, is promoted. It has {owner}'s SET from t={g} but not what came after it, such as {owner}'s release: {owner}'s key is back, and keeps the lock from everyone until t={until}, though {owner} no longer believes it holds it.{next}",
                        owner = h.owner,
                        g = c.at(granted(&h.owner)),
                        until = c.at(h.expires_at),
                    ),
                    (None, Some(h)) => format!(
                        "The Redis primary crashes, and its replica, {lag} behind, is promoted. {owner}'s SET at t={g} had reached it, so {owner}'s lease survives until t={until}.{next}",
                        owner = h.owner,
                        g = c.at(granted(&h.owner)),
                        until = c.at(h.expires_at),
                    ),
                    (None, None) => format!(
                        "The Redis primary crashes, and its replica, {lag} behind, is promoted. No lease was live, so nothing is lost."
                    ),
                }
            }
            (TokenSource::SameRedis, Some(l)) => {
                let counter = if *rolled_back {
                    format!(" The fence counter lived on the same Redis and lost its INCR too, so the next token handed out is {next_fence} again.")
                } else {
                    format!(" The next token will be {next_fence}.")
                };
                format!(
                    "The Redis primary crashes before replicating {owner}'s SET, and a replica without the {res} key is promoted. {owner} was told OK and still holds token {fence} until t={until}, yet the lock service will grant {res} again.{counter}",
                    owner = l.owner,
                    fence = l.fence,
                    until = c.at(l.expires_at),
                )
            }
            (TokenSource::SameRedis, None) => {
                "The Redis primary crashes and a replica is promoted. No lease was live, so nothing is lost.".to_owned()
            }
            (TokenSource::SeparateCounter, Some(l)) => format!(
                "The Redis primary crashes before replicating {owner}'s SET, and a replica without the {res} key is promoted. {owner} was told OK and still believes it holds the lease until t={until}, yet the lock service will grant {res} again. The separate counter survives the failover: the next token is {next_fence}.",
                owner = l.owner,
                until = c.at(l.expires_at),
            ),
            (TokenSource::SeparateCounter, None) => format!(
                "The Redis primary crashes and a replica is promoted. No lease was live, so nothing is lost; the separate counter goes on at {next_fence}."
            ),
            (TokenSource::RandomValue, Some(l)) => format!(
                "The Redis primary crashes before replicating {owner}'s SET, and a replica without the {res} key is promoted. {owner} was told OK and still believes it holds the lease until t={until}, yet the lock service will grant {res} again. There is no counter to roll back: each client draws its own random value.",
                owner = l.owner,
                until = c.at(l.expires_at),
            ),
            (TokenSource::RandomValue, None) => {
                "The Redis primary crashes and a replica is promoted. No lease was live, so nothing is lost.".to_owned()
            }
            (TokenSource::LockService | TokenSource::Counterfactual, _) => format!(
                "The lock service's leader crashes and another member takes over. It has the committed log, so every lease and the token counter survive; the next token will be {next_fence}."
            ),
        },
        _ => return None,
    })
}

/// A client cut off from the lock service: a command unanswered, a client timeout.
pub(crate) fn cut_off(c: &Ctx) -> Option<String> {
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

/// Storage's PostgreSQL primary dies and its standby is promoted: what the standby lacks.
fn storage_failover(c: &Ctx, lag: Millis, lost: &[WriteRecord]) -> String {
    let snap = &c.e.snapshot;
    let mark = match snap.last_fence {
        Some(f) => format!("the highest token it has seen is {f}"),
        None => "it has seen no token".to_owned(),
    };
    let standby = match lag {
        0 => "its synchronous standby is promoted".to_owned(),
        _ => format!(
            "its asynchronous standby, {} behind, is promoted (pg_promote)",
            c.dur(lag)
        ),
    };
    let what = |w: &WriteRecord| match w.request.fence {
        Some(f) => format!(
            "{}'s debit with token {f} (t={})",
            w.request.writer,
            c.at(w.at)
        ),
        None => format!("{}'s debit (t={})", w.request.writer, c.at(w.at)),
    };
    match lost {
        [] => format!("Storage's PostgreSQL primary dies, and {standby}: it has every acknowledged write, so nothing is lost: balance {}, and {mark}.", snap.balance),
        _ => format!(
            "Storage's PostgreSQL primary dies, and {standby}. It never got {}, acknowledged by the primary: balance {} again, and {mark}.",
            lost.iter().map(what).collect::<Vec<_>>().join(" or "),
            snap.balance
        ),
    }
}

/// The newest token a storage failover before this step forgot (a write the primary had
/// accepted that its standby never got), if one did.
pub(crate) fn forgotten(c: &Ctx) -> Option<Fence> {
    (c.t.events.iter().take(c.i))
        .filter_map(|e| match &e.kind {
            EventKind::StorageFailover { lost, .. } => {
                lost.iter().filter_map(|w| w.request.fence).max()
            }
            _ => None,
        })
        .max()
}

/// A failover that is the lock's Redis restarting ([`Scenario::restart`]): killed, and back
/// from a snapshot taken before the run, so it has neither the live lease nor its INCR.
fn restarted(c: &Ctx, lost: Option<&super::super::super::lease::Lease>, next: Fence) -> String {
    let sc = c.sc;
    let res = &sc.resource;
    let crash = "Redis is killed (kill -9) and restarts from its last snapshot, taken before the run: no AOF, so nothing written since was on disk.";
    match lost {
        Some(l) => format!(
            "{crash} {owner}'s SET was acknowledged from memory and never reached disk: the {res} key is gone, and the fence counter is back where the snapshot left it, so the next token is {next} again. {owner} still believes it holds the lease until t={until}.",
            owner = l.owner,
            until = instant(sc, l.expires_at),
        ),
        None if c.e.snapshot.holder.is_some() => format!(
            "{crash} The live lease was in the snapshot, so it survives."
        ),
        None => format!("{crash} No lease was live, so nothing is lost; the next token is {next}."),
    }
}

/// The drift allowance a Redlock client subtracts from a lock's validity (the reference
/// implementations' `int(ttl × 0.01) + 2` ms): what it believes it has is the TTL less this.
fn redlock_drift(ttl: Millis) -> Millis {
    ttl / 100 + 2
}
