//! The words of the lock server's failover ([`Fault::Failover`](crate::core::Fault::Failover)):
//! a Redis replica promoted, or a lock service's leader replaced.

use super::*;

/// What a Redis failover's time stands for: the run's is fast, and Sentinel's default waits
/// 30 s before it even starts one.
const SENTINEL: &str =
    " A real Sentinel first waits down-after-milliseconds (30 s by default): this one is tuned fast.";

/// The failover: what the promoted replica (or new leader) lacks, and the next token.
pub(super) fn narrate(c: &Ctx) -> Option<String> {
    let (sc, e, _, res, _) = c.parts();
    let EventKind::Failover {
        lost,
        next_fence,
        rolled_back,
    } = &e.kind
    else {
        return None;
    };
    let words = match (sc.lock.token_source(), lost.first()) {
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
    };
    Some(match sc.lock.token_source() {
        TokenSource::LockService | TokenSource::Counterfactual => words,
        _ => words + SENTINEL,
    })
}

/// What the failover means: what asynchronous replication forgot, or why nothing is lost.
pub(super) fn say(c: &Ctx) -> Option<String> {
    let (sc, e) = (c.sc, c.e);
    let s: &str = match &e.kind {
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

/// The failover's marker: the lease it lost, if one (with a separate counter a lease's number
/// is not its token, so the lease goes unnumbered).
pub(super) fn label(sc: &Scenario, e: &TraceEvent) -> String {
    let EventKind::Failover { lost, .. } = &e.kind else {
        return String::new();
    };
    match lost.first() {
        Some(_) if sc.lock.token_source() == TokenSource::SeparateCounter => {
            "failover: lease lost".to_owned()
        }
        Some(l) => format!("failover: #{} lost", l.fence),
        None => "failover".to_owned(),
    }
}
