//! The watchdog: work that renews the lease while it runs, and what a failed extend does.

use super::*;

pub(super) fn extend_failed<B: Backend>(b: &mut B, now: Millis, watchdog: bool) -> Next {
    let lease_ended_at = b.lease_ended_at();
    b.state().cancel();
    let kind = EventKind::ExtendFailed {
        watchdog,
        lease_ended_at,
    };
    b.say(now, kind);
    Next::Stop
}

/// `Step::WorkRenewing`: the watchdog's next renewal, or the end of the work if that comes
/// first.
pub(super) fn schedule_renewal<B: Backend>(
    b: &mut B,
    sc: &Scenario,
    now: Millis,
    until: Millis,
) -> Next {
    let due = match sc.lock.herd() {
        // The fleet's fixed schedule: `renew_before` before the lease ends, no jitter.
        Some(herd) => {
            let from = b.state().lease_from.unwrap_or(now);
            from.saturating_add(herd.instant(sc.lease_ttl)).max(now)
        }
        None => {
            let every = b.with_rng(|rng| renewal_interval(sc.lease_ttl, Some(rng)));
            now.saturating_add(every)
        }
    };
    let st = b.state();
    if due < until && st.renew_sent.is_none() {
        st.renew_due = Some(due);
        Next::Again(due)
    } else {
        st.renew_due = None;
        Next::Again(until.max(now))
    }
}

/// Work with a watchdog that renews the lease while it runs.
pub(super) fn work_renewing<B: Backend>(
    b: &mut B,
    sc: &Scenario,
    me: usize,
    now: Millis,
    ms: Millis,
) -> Result<Next, B::Error> {
    let st = b.state();
    let Some(until) = st.work_until else {
        let until = now.saturating_add(ms);
        st.work_until = Some(until);
        return Ok(schedule_renewal(b, sc, now, until));
    };
    let mut renew = st.renew_due.is_some_and(|d| d <= now);
    if renew && until <= now {
        // Woken with the work done and a renewal overdue: the worker thread and the
        // watchdog race, and either may run first.
        let worker_first = b.with_rng(|rng| rng.next_u64() % 2 == 0);
        b.note(|| {
            format!(
                "{} at t={now}: woke with its work done and a renewal overdue; the seeded race puts the {} first",
                sc.actors[me].name,
                if worker_first { "worker" } else { "watchdog" }
            )
        });
        b.say(now, EventKind::ResumeRace { worker_first });
        renew = !worker_first;
    }
    if renew && !can_reach(&sc.faults, me, now) {
        // The watchdog's renewal is dropped; the worker carries on beside it.
        let st = b.state();
        st.renew_due = None;
        st.renew_sent = Some(now);
        unanswered(b, sc, me, LockCommand::Renew, now);
        return Ok(Next::Again(until.max(now)));
    }
    if !renew {
        let st = b.state();
        st.work_until = None;
        st.renew_due = None;
        return Ok(Next::At(now));
    }
    // Ownership-checked: only a client granted the lease (so holding its token) sees its
    // extend succeed.
    Ok(match b.extend(now)?.zip(b.state().fence) {
        Some(((expires_at, nodes), fence)) => {
            b.state().lease_from = Some(now);
            let next = schedule_renewal(b, sc, now, until);
            let st = b.state();
            let kind = EventKind::Extended {
                fence,
                expires_at,
                watchdog: Some(st.renew_due),
                nodes,
            };
            b.say(now, kind);
            next
        }
        None if sc.lock.herd().is_some() => {
            // The fleet's watchdog runs beside the worker and only stops renewing: nothing
            // tells the worker, which works on and writes under the lost lease.
            let lease_ended_at = b.lease_ended_at();
            b.state().renew_due = None;
            let kind = EventKind::ExtendFailed {
                watchdog: true,
                lease_ended_at,
            };
            b.say(now, kind);
            Next::Again(until)
        }
        None => {
            b.note(|| {
                format!(
                    "{} at t={now}: the watchdog's extend answered 0 (not the holder); the job self-cancels",
                    sc.actors[me].name
                )
            });
            extend_failed(b, now, true)
        }
    })
}
