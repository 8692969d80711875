//! The words of storage's failover to its standby
//! ([`Fault::StorageFailover`](crate::core::Fault::StorageFailover)), and what it lets in
//! afterwards: the token it forgot.

use super::*;

/// Storage's PostgreSQL primary dies and its standby is promoted: what the standby lacks.
pub(super) fn narrate(c: &Ctx) -> Option<String> {
    let EventKind::StorageFailover { lag, lost } = &c.e.kind else {
        return None;
    };
    let lag = *lag;
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
    Some(match lost.as_slice() {
        [] => format!("Storage's PostgreSQL primary dies, and {standby}: it has every acknowledged write, so nothing is lost: balance {}, and {mark}.", snap.balance),
        _ => format!(
            "Storage's PostgreSQL primary dies, and {standby}. It never got {}, acknowledged by the primary: balance {} again, and {mark}.",
            lost.iter().map(what).collect::<Vec<_>>().join(" or "),
            snap.balance
        ),
    })
}

/// The newest token a storage failover before this step forgot (a write the primary had
/// accepted that its standby never got), if one did.
pub(in super::super) fn forgotten(c: &Ctx) -> Option<Fence> {
    (c.t.events.iter().take(c.i))
        .filter_map(|e| match &e.kind {
            EventKind::StorageFailover { lost, .. } => {
                lost.iter().filter_map(|w| w.request.fence).max()
            }
            _ => None,
        })
        .max()
}

/// What the failover means: what asynchronous replication forgets.
pub(super) fn say(c: &Ctx) -> Option<String> {
    let sc = c.sc;
    let s: &str = match &c.e.kind {
        EventKind::StorageFailover { lost, .. } if lost.is_empty() => {
            "Synchronous commit: the standby has every acknowledged write, and so the highest token."
        }
        EventKind::StorageFailover { .. } if sc.policy.checks_fence() => {
            "Asynchronous replication forgets the newest writes, and the high-water mark with them."
        }
        EventKind::StorageFailover { .. } => {
            "Asynchronous replication forgets the newest writes."
        }
        _ => return None,
    };
    Some(s.to_owned())
}

/// The failover's marker: the write the standby lacks, if one.
pub(super) fn label(_: &Scenario, e: &TraceEvent) -> String {
    match &e.kind {
        EventKind::StorageFailover { lost, .. } => match lost.first() {
            Some(w) => format!("standby promoted: {} lost", hash(w.request.fence)),
            None => "standby promoted".to_owned(),
        },
        _ => String::new(),
    }
}

/// The outcome's name for a job that ran twice because storage forgot one run's
/// acknowledged write (the account keeps one debit, so it is no double charge).
pub(super) fn twice(e: &TraceEvent) -> Option<&'static str> {
    match &e.kind {
        EventKind::StorageFailover { lost, .. } if !lost.is_empty() => {
            Some("an acknowledged write lost")
        }
        _ => None,
    }
}
