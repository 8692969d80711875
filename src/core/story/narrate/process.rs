//! Narration: The client's process: pauses, checks and giving up.

use super::*;

/// What the client's own process does: pauses, checks, giving up, waiting, waking.
pub(crate) fn process(c: &Ctx) -> Option<String> {
    let (sc, e, name, res, _) = c.parts();
    let ended = c.client(name).session_ended_at;
    Some(match &e.kind {
        EventKind::LockWait { holder } if c.voice == Voice::RowLock => row_waits(c, holder),
        EventKind::JobChecked { done } if c.voice == Voice::RowLock => row_job_checked(c, *done),
        EventKind::ConnectionLost if c.voice == Voice::RowLock => row_connection_lost(c),
        EventKind::PauseEnded { lease_gone: true } if c.voice == Voice::RowLock && ended.is_some() => {
            row_wakes(c, ended.unwrap_or_default())
        }
        EventKind::PauseStarted { until, cause } => {
            let what = match cause {
                PauseCause::Gc => format!(
                    "{name} freezes in a {} stop-the-world GC pause until t={}.",
                    c.dur(until - e.at),
                    c.at(*until)
                ),
                PauseCause::Stall => format!(
                    "{name}'s whole process freezes for {} (a long collector pause or a VM freeze) until t={}: no thread runs, so nothing renews its lease.",
                    c.dur(until - e.at),
                    c.at(*until)
                ),
            };
            if e.snapshot.believers.iter().any(|b| b == name) {
                format!("{what} {name} still believes it holds {res}.")
            } else {
                what
            }
        }
        EventKind::PauseEnded { lease_gone: true } => {
            format!("{name} wakes up and carries on, unaware its lease is gone.")
        }
        EventKind::LockWait { holder } if sc.lock.queue() => format!(
            "{name} joins the queue for {res}, held by {holder}: it creates its sequential node and watches only the one just before it. No polling: it waits until that node is gone."
        ),
        EventKind::LockWait { holder } => format!(
            "{name} asks for {res}, held by {holder}: it waits in the lock's queue until {holder} lets go."
        ),
        EventKind::ConnectionLost => format!(
            "{name} sends its next statement, but the server has terminated its session: FATAL {IDLE_IN_TRANSACTION_TIMEOUT}, and its connection is gone. {name} stops."
        ),
        EventKind::PauseEnded { lease_gone: false } => format!("{name} wakes up and carries on."),
        EventKind::Checked { held: true } => format!(
            "{name} checks is_held: true. It is about to write — but true now says nothing about a moment later."
        ),
        EventKind::Checked { held: false } => {
            format!("{name} checks is_held: false. Its lease is gone.")
        }
        EventKind::DeadlineChecked { local, deadline, ok } => {
            let real = c.lease_age();
            let clock = match sc.client_drift {
                // A far lock service: the client counts from its send, the server from the
                // request's arrival, half a round trip later.
                _ if sc.lock_rtt > 0 => format!(
                    "its own clock{} reads {} since it asked for its lease ({} in real time; the lock server granted it {} ago)",
                    match sc.client_drift {
                        0 => String::new(),
                        d => format!(", running {} slow,", per_mille(d)),
                    },
                    c.dur(*local),
                    c.dur(real + request_half(sc.lock_rtt)),
                    c.dur(real)
                ),
                0 => format!("its own clock reads {} since its lease began", c.dur(*local)),
                d => format!(
                    "its own clock, running {} slow, reads {} since its lease began ({} on the lock server's clock)",
                    per_mille(d),
                    c.dur(*local),
                    c.dur(real)
                ),
            };
            let rule = format!(
                "its deadline is TTL − margin = {} − {} = {}",
                c.dur(sc.lease_ttl),
                c.dur(sc.deadline_margin),
                c.dur(*deadline)
            );
            if *ok {
                let gone = if real >= sc.lease_ttl {
                    format!(
                        " But the lease ran out on the lock server {} ago: the slow clock hides that.",
                        c.dur(real - sc.lease_ttl)
                    )
                } else {
                    String::new()
                };
                format!(
                    "{name} checks its local deadline (no round trip): {clock}; {rule}, so it has {} left and goes on to write.{gone}",
                    c.dur(deadline - local)
                )
            } else {
                // What the margin fixed: the slow clock alone would have let it write.
                let saved = if sc.client_drift > 0 && real >= sc.lease_ttl && *local < sc.lease_ttl {
                    format!(
                        " Its lease ran out on the lock server {} ago: without the margin its deadline would be the TTL, {}, and at {} it would have gone on to write.",
                        c.dur(real - sc.lease_ttl),
                        c.dur(sc.lease_ttl),
                        c.dur(*local)
                    )
                } else {
                    String::new()
                };
                format!("{name} checks its local deadline (no round trip): {clock}; {rule}, and it is past it, so it stops before writing.{saved}")
            }
        }
        EventKind::GaveUp
            if c.previous().is_some_and(|p| {
                matches!(
                    p.kind,
                    EventKind::ProviderCall {
                        outcome: ProviderOutcome::NotCalled,
                        ..
                    }
                )
            }) =>
        {
            format!("{name} stops: a newer lock generation owns the job.")
        }
        EventKind::GaveUp => format!("{name} gives up without writing."),
        EventKind::JobChecked { done } => {
            let job = sc.job.as_deref().unwrap_or("the job");
            if *done {
                format!("{name} reads the job's status in storage: done (a debit has landed), so it skips {job} and releases.")
            } else {
                format!("{name} reads the job's status in storage: not done yet, so it starts {job}.")
            }
        }
        EventKind::ResumeRace { worker_first } => {
            let first = if *worker_first {
                "the worker runs first and goes on with the job"
            } else {
                "the watchdog runs first and tries to renew"
            };
            format!(
                "{name} wakes with its work finished and a renewal overdue. Its worker and watchdog threads race; this time {first}."
            )
        }
        _ => return None,
    })
}
