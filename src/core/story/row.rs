//! A PostgreSQL row lock (`LockKind::RowLock`): the storage arbitrates itself, so its words differ.

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

/// How long the step's actor waited in the lock queue before this grant, if it waited, and
/// whose transaction ended to let it in (not necessarily the one it queued behind).
fn waited(c: &Ctx) -> Option<(Millis, String)> {
    let asked = c.client(c.name).waiting_since?;
    let ended = c.fx.last_ended.clone()?;
    Some((c.e.at.saturating_sub(asked), ended))
}

/// " at t=12" where the server terminated the actor's session, if it did.
fn terminated(c: &Ctx) -> String {
    c.client(c.name)
        .session_ended_at
        .map_or_else(String::new, |t| format!(" at t={}", c.at(t)))
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

/// What the step's actor's idle clock allows after a statement that ends at `expires_at`.
fn idle_clause(c: &Ctx, expires_at: Millis) -> String {
    match c.sc.idle_timeout() {
        Some(ms) if expires_at != Millis::MAX => format!(
            " If it sends no statement before t={}, {} of idling in its transaction end its session.",
            c.at(expires_at),
            c.dur(ms)
        ),
        _ => " No idle timeout is set: only its own COMMIT or ROLLBACK releases the lock.".to_owned(),
    }
}

/// A row lock granted: at once, or after a wait in the lock queue.
pub(super) fn row_granted(c: &Ctx, expires_at: Millis) -> String {
    let (sc, name, res) = (c.sc, c.name, c.res);
    match waited(c) {
        Some((w, holder)) => format!(
            "{name}'s SELECT … FOR UPDATE returns {}: {holder}'s transaction has ended, and {name}'s transaction now holds the row lock on {res}.{}{}",
            match w {
                0 => "without waiting longer".to_owned(),
                w => format!("after waiting {}", c.dur(w)),
            },
            idle_clause(c, expires_at),
            if c.client(name).paused {
                format!(" {name} is paused: it reads the reply when it wakes, while its idle clock runs.")
            } else {
                String::new()
            }
        ),
        None => format!(
            "{name} runs {}: the row is free, so {name}'s transaction takes its row lock, in the same database that holds the balance.{}",
            for_update(sc),
            idle_clause(c, expires_at)
        ),
    }
}

/// A statement blocked behind `holder`'s row lock.
pub(super) fn row_waits(c: &Ctx, holder: &str) -> String {
    let name = c.name;
    format!(
        "{name} runs {}: {holder}'s transaction holds the row lock, so {name}'s statement blocks in the lock queue. No refusal and no retry: it returns when {holder}'s transaction ends.",
        for_update(c.sc)
    )
}

/// PostgreSQL ending `owner`'s idle session, and with it its row lock.
pub(super) fn row_session_ended(c: &Ctx, owner: &str, owner_knew: Awareness) -> String {
    let sc = c.sc;
    let knew = match owner_knew {
        Awareness::Paused => format!(" {owner} is paused and cannot know."),
        Awareness::Unaware => format!(" {owner} has not noticed."),
        Awareness::Knows => String::new(),
    };
    format!(
        "PostgreSQL terminates {owner}'s session: idle in its transaction since t={}, it reached idle_in_transaction_session_timeout ({}), FATAL {IDLE_IN_TRANSACTION_TIMEOUT}. Its transaction is rolled back and its row lock released.{knew}",
        c.at(c.e.at.saturating_sub(sc.lease_ttl)),
        c.dur(sc.lease_ttl)
    )
}

/// The job's status read inside the transaction.
pub(super) fn row_job_checked(c: &Ctx, done: bool) -> String {
    let (name, job) = (c.name, c.sc.job.as_deref().unwrap_or("the job"));
    if done {
        format!("{name} reads the job's status in its transaction: done (a debit has committed), so it skips {job} and commits.")
    } else {
        format!("{name} reads the job's status in its transaction: not done (no debit has committed), so it starts {job}.")
    }
}

/// An UPDATE run inside the transaction that holds the row lock.
pub(super) fn row_updated(c: &Ctx, amount: i64, balance: i64) -> String {
    let name = c.name;
    format!(
        "{name}'s UPDATE accounts SET balance = balance − {amount} runs in its transaction, which holds the row lock: balance {balance}. No token goes with it: {}.",
        no_token_clause(c.sc)
    )
}

/// An UPDATE sent on a session PostgreSQL has terminated.
pub(super) fn row_update_refused(c: &Ctx, amount: i64) -> String {
    let name = c.name;
    format!(
        "{name} sends UPDATE accounts SET balance = balance − {amount} on its old connection, but PostgreSQL terminated that session{}: FATAL {IDLE_IN_TRANSACTION_TIMEOUT}, terminating connection due to idle-in-transaction timeout. The UPDATE never runs, and {name} stops. Balance stays {}.",
        terminated(c),
        c.e.snapshot.balance
    )
}

/// COMMIT: the transaction's writes land and its row lock goes.
pub(super) fn row_committed(c: &Ctx) -> String {
    let (name, res) = (c.name, c.res);
    if c.client(name).wrote_since_grant {
        format!("{name} COMMITs: its debit is durable, and its row lock on {res} is released.")
    } else {
        format!("{name} COMMITs: it wrote nothing, and its row lock on {res} is released.")
    }
}

/// Waking from a pause into a session the server terminated at `ended`.
pub(super) fn row_wakes(c: &Ctx, ended: Millis) -> String {
    let name = c.name;
    format!(
        "{name} wakes up and carries on, unaware that PostgreSQL terminated its session at t={}.",
        c.at(ended)
    )
}

/// The next statement on a terminated session.
pub(super) fn row_connection_lost(c: &Ctx) -> String {
    let name = c.name;
    format!(
        "{name} sends its next statement on the session PostgreSQL terminated{}: FATAL {IDLE_IN_TRANSACTION_TIMEOUT}, the connection is gone, and {name} stops.",
        terminated(c)
    )
}

/// The Say line of a row lock's grant: at once, or after a wait.
pub(super) fn row_granted_say(c: &Ctx) -> String {
    let (e, name) = (c.e, c.name);
    match waited(c) {
        None => "No lock server: the database that holds the balance arbitrates, and only one transaction at a time can hold this row's lock.".to_owned(),
        Some((w, holder)) => match other_believers(e, name).as_slice() {
            [] if w == 0 => format!(
                "{holder}'s transaction ended in the same instant {name} asked: no wait this time. A blocking lock costs a waiter only what is left of the holder's transaction."
            ),
            [] => format!(
                "{name} waited {} for the row, holding a connection the whole time: a blocking lock trades a refusal for a wait, and {holder}'s stall became {name}'s.",
                c.dur(w)
            ),
            [one, ..] => format!(
                "{one} still believes it holds the lock while {name} holds it: two believers, as with a lease. The difference: {one}'s transaction is gone, so nothing in it can commit."
            ),
        },
    }
}
