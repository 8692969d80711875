//! A PostgreSQL row lock (`Scenario::row_lock`): the storage arbitrates itself, so its words differ.

use super::*;

/// `SELECT … FOR UPDATE` on the scenario's row, as the narration quotes it.
fn for_update(sc: &Scenario) -> String {
    format!(
        "BEGIN; SELECT … FROM accounts WHERE id = '{}' FOR UPDATE",
        sc.resource
    )
}

/// The idle-in-transaction timeout setting, in words.
fn idle_setting(sc: &Scenario) -> String {
    match sc.idle_timeout() {
        Some(ms) => format!("idle_in_transaction_session_timeout = {}", duration(sc, ms)),
        None => "no idle_in_transaction_session_timeout (0: never)".to_owned(),
    }
}

/// What the fencing policy does here: nothing, since no write carries a token.
fn no_token_clause(sc: &Scenario) -> String {
    match sc.policy {
        FencingPolicy::Off => "fencing is off, and nothing here needs it".to_owned(),
        p => format!(
            "fencing is set to {}, but there is no token to compare: the row lock is the check",
            p.short()
        ),
    }
}

/// When the server terminated `owner`'s session, if it did before event `i`.
fn terminated_at(t: &Trace, i: usize, owner: &str) -> Option<Millis> {
    before(t, i).find_map(|p| match &p.kind {
        EventKind::LeaseExpired {
            owner: o,
            cause: ExpiryCause::IdleTimeout,
            ..
        } if o == owner => Some(p.at),
        _ => None,
    })
}

/// How long event `i`'s actor waited in the lock queue before this grant, if it waited, and
/// whose transaction ended to let it in (not necessarily the one it queued behind).
fn waited(t: &Trace, i: usize) -> Option<(Millis, String)> {
    let e = &t.events[i];
    let asked = before(t, i)
        .take_while(|p| !(p.actor == e.actor && matches!(p.kind, EventKind::Acquired { .. })))
        .find(|p| p.actor == e.actor && matches!(p.kind, EventKind::LockWait { .. }))?;
    let ended = before(t, i).find_map(|p| match &p.kind {
        EventKind::Released { .. } => p.actor.clone(),
        EventKind::LeaseExpired { owner, .. } => Some(owner.clone()),
        _ => None,
    })?;
    Some((e.at.saturating_sub(asked.at), ended))
}

/// Whether `name` is frozen in a pause at event `i`.
fn is_paused(t: &Trace, i: usize, name: &str) -> bool {
    before(t, i + 1)
        .filter(|p| p.actor.as_deref() == Some(name))
        .find_map(|p| match p.kind {
            EventKind::PauseStarted { .. } => Some(true),
            EventKind::PauseEnded { .. } => Some(false),
            _ => None,
        })
        .unwrap_or(false)
}

/// The opening line of a row-lock scenario.
pub(super) fn row_opening(sc: &Scenario) -> String {
    format!(
        "Balance {} on {res}. {} clients lock {res}'s own row in the PostgreSQL that holds the balance ({}), with {}. No lock server, no token: the fencing policy ({}) has nothing to check. Press → or tap Step forward ▶ to begin.",
        sc.initial_balance,
        sc.actors.len(),
        for_update(sc),
        idle_setting(sc),
        sc.policy.short(),
        res = sc.resource,
    )
}

/// A timeline label of a row-lock scenario, where it differs from [`label`].
pub(super) fn row_label(e: &TraceEvent) -> Option<String> {
    Some(match &e.kind {
        EventKind::Acquired { .. } => "row locked".to_owned(),
        EventKind::LeaseExpired {
            cause: ExpiryCause::IdleTimeout,
            ..
        } => format!("idle timeout {IDLE_IN_TRANSACTION_TIMEOUT}"),
        EventKind::Released { .. } => "COMMIT".to_owned(),
        EventKind::WriteApplied {
            amount,
            result: Ok(_),
            ..
        } => format!("UPDATE −{amount} ok"),
        EventKind::WriteApplied {
            amount,
            result: Err(e),
            ..
        } => match e {
            WriteError::SessionTerminated => {
                format!("UPDATE −{amount}: {IDLE_IN_TRANSACTION_TIMEOUT}")
            }
            e => format!("UPDATE −{amount}: {}", e.code()),
        },
        _ => return None,
    })
}

/// The narration of event `i` of a row-lock scenario, where it differs from [`sentence`].
pub(super) fn row_sentence(t: &Trace, i: usize) -> Option<String> {
    let sc = &t.scenario;
    let e = &t.events[i];
    let name = e.actor.clone().unwrap_or_default();
    let res = &sc.resource;
    let at = |t: Millis| instant(sc, t);
    let dur = |ms: Millis| duration(sc, ms);
    let idle_clause = |expires_at: Millis| {
        match sc.idle_timeout() {
        Some(ms) if expires_at != Millis::MAX => format!(
            " If it sends no statement before t={}, {} of idling in its transaction end its session.",
            at(expires_at),
            dur(ms)
        ),
        _ => " No idle timeout is set: only its own COMMIT or ROLLBACK releases the lock.".to_owned(),
    }
    };
    Some(match &e.kind {
        EventKind::Acquired { expires_at, .. } => match waited(t, i) {
            Some((w, holder)) => format!(
                "{name}'s SELECT … FOR UPDATE returns {}: {holder}'s transaction has ended, and {name}'s transaction now holds the row lock on {res}.{}{}",
                match w {
                    0 => "without waiting longer".to_owned(),
                    w => format!("after waiting {}", dur(w)),
                },
                idle_clause(*expires_at),
                if is_paused(t, i, &name) {
                    format!(" {name} is paused: it reads the reply when it wakes, while its idle clock runs.")
                } else {
                    String::new()
                }
            ),
            None => format!(
                "{name} runs {}: the row is free, so {name}'s transaction takes its row lock, in the same database that holds the balance.{}",
                for_update(sc),
                idle_clause(*expires_at)
            ),
        },
        EventKind::LockWait { holder } => format!(
            "{name} runs {}: {holder}'s transaction holds the row lock, so {name}'s statement blocks in the lock queue. No refusal and no retry: it returns when {holder}'s transaction ends.",
            for_update(sc)
        ),
        EventKind::LeaseExpired {
            owner,
            cause: ExpiryCause::IdleTimeout,
            owner_knew,
            ..
        } => {
            let knew = match owner_knew {
                Awareness::Paused => format!(" {owner} is paused and cannot know."),
                Awareness::Unaware => format!(" {owner} has not noticed."),
                Awareness::Knows => String::new(),
            };
            format!(
                "PostgreSQL terminates {owner}'s session: idle in its transaction since t={}, it reached idle_in_transaction_session_timeout ({}), FATAL {IDLE_IN_TRANSACTION_TIMEOUT}. Its transaction is rolled back and its row lock released.{knew}",
                at(e.at.saturating_sub(sc.lease_ttl)),
                dur(sc.lease_ttl)
            )
        }
        EventKind::JobChecked { done: false } => format!(
            "{name} reads the job's status in its transaction: not done (no debit has committed), so it starts {}.",
            sc.job.as_deref().unwrap_or("the job")
        ),
        EventKind::JobChecked { done: true } => format!(
            "{name} reads the job's status in its transaction: done (a debit has committed), so it skips {} and commits.",
            sc.job.as_deref().unwrap_or("the job")
        ),
        EventKind::WriteApplied {
            amount,
            result: Ok(balance),
            ..
        } => format!(
            "{name}'s UPDATE accounts SET balance = balance − {amount} runs in its transaction, which holds the row lock: balance {balance}. No token goes with it: {}.",
            no_token_clause(sc)
        ),
        EventKind::WriteApplied {
            amount,
            result: Err(WriteError::SessionTerminated),
            ..
        } => {
            let when = terminated_at(t, i, &name)
                .map_or_else(String::new, |t| format!(" at t={}", at(t)));
            format!(
                "{name} sends UPDATE accounts SET balance = balance − {amount} on its old connection, but PostgreSQL terminated that session{when}: FATAL {IDLE_IN_TRANSACTION_TIMEOUT}, terminating connection due to idle-in-transaction timeout. The UPDATE never runs, and {name} stops. Balance stays {}.",
                e.snapshot.balance
            )
        }
        EventKind::Released { .. } => {
            let since = before(t, i)
                .take_while(|p| {
                    !(p.actor == e.actor && matches!(p.kind, EventKind::Acquired { .. }))
                })
                .any(|p| {
                    p.actor == e.actor
                        && matches!(p.kind, EventKind::WriteApplied { result: Ok(_), .. })
                });
            if since {
                format!("{name} COMMITs: its debit is durable, and its row lock on {res} is released.")
            } else {
                format!("{name} COMMITs: it wrote nothing, and its row lock on {res} is released.")
            }
        }
        EventKind::PauseEnded { lease_gone: true } => match terminated_at(t, i, &name) {
            Some(x) => format!(
                "{name} wakes up and carries on, unaware that PostgreSQL terminated its session at t={}.",
                at(x)
            ),
            None => return None,
        },
        EventKind::ConnectionLost => {
            let when = terminated_at(t, i, &name)
                .map_or_else(String::new, |t| format!(" at t={}", at(t)));
            format!(
                "{name} sends its next statement on the session PostgreSQL terminated{when}: FATAL {IDLE_IN_TRANSACTION_TIMEOUT}, the connection is gone, and {name} stops."
            )
        }
        _ => return None,
    })
}

/// The "Say:" line at `step` of a row-lock scenario, where it differs from [`say`].
pub(super) fn row_say(t: &Trace, step: usize) -> Option<String> {
    let sc = &t.scenario;
    let Some(e) = t.event_at(step) else {
        return Some(format!(
            "{} clients, one {} row, locked in the database that holds the balance. Watch a holder's transaction when it loses the lock.",
            sc.actors.len(),
            sc.resource
        ));
    };
    let i = step - 1;
    let name = e.actor.clone().unwrap_or_default();
    Some(match &e.kind {
        EventKind::Acquired { .. } => match waited(t, i) {
            None => "No lock server: the database that holds the balance arbitrates, and only one transaction at a time can hold this row's lock.".to_owned(),
            Some((w, holder)) => {
                let others = other_believers(e, &name);
                match others.as_slice() {
                    [] if w == 0 => format!(
                        "{holder}'s transaction ended in the same instant {name} asked: no wait this time. A blocking lock costs a waiter only what is left of the holder's transaction."
                    ),
                    [] => format!(
                        "{name} waited {} for the row, holding a connection the whole time: a blocking lock trades a refusal for a wait, and {holder}'s stall became {name}'s.",
                        duration(sc, w)
                    ),
                    [one, ..] => format!(
                        "{one} still believes it holds the lock while {name} holds it: two believers, as with a lease. The difference: {one}'s transaction is gone, so nothing in it can commit."
                    ),
                }
            }
        },
        EventKind::LockWait { .. } => "Unlike SET NX, FOR UPDATE does not refuse: the second client queues for as long as the holder's transaction lives, unless lock_timeout is set.".to_owned(),
        EventKind::LeaseExpired {
            owner,
            cause: ExpiryCause::IdleTimeout,
            ..
        } => format!(
            "The idle timeout is a lease too. But lock and data live in one system, so ending the lock also ends {owner}'s transaction: nothing it did survives."
        ),
        EventKind::WriteApplied { result: Ok(_), .. } => {
            "Lock and write in one transaction: no token is needed while the transaction holds the row, whatever the fencing policy says.".to_owned()
        }
        EventKind::WriteApplied {
            result: Err(WriteError::SessionTerminated),
            ..
        } => format!(
            "Storage will not run {name}'s write because its transaction no longer exists, not because of a token: the same under off, strict and same-epoch."
        ),
        EventKind::Released { .. } => {
            "COMMIT makes the writes durable and releases the row lock in one step: there is no separate release to get wrong.".to_owned()
        }
        EventKind::PauseEnded { lease_gone: false } if e.snapshot.believers.contains(&name) => {
            "Its transaction still holds the row lock, so this pause did no harm.".to_owned()
        }
        EventKind::ConnectionLost => {
            "A terminated session takes its transaction with it: nothing it sends runs.".to_owned()
        }
        _ => return None,
    })
}
