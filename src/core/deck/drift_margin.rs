//! The deck's `drift-margin` entry: Client clock drift margin.

use super::*;

pub(super) const ENTRY: DeckEntry = DeckEntry {
    id: "drift-margin",
    title: "Client clock drift margin",
    question: "The client's clock runs slow. Is stopping at TTL − a margin safe?",
    notes: |r| {
        let [off, strict, _] = r.balances();
        let (a, b) = (r.token(0), r.token(1));
        let sc = r.off().scenario.clone();
        let (ttl, margin, drift) = (sc.lease_ttl, sc.deadline_margin, sc.client_drift);
        let checks: Vec<(Millis, Millis, Millis, bool)> = r
            .off()
            .events
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::DeadlineChecked {
                    local,
                    deadline,
                    ok,
                } => Some((e.at, local, deadline, ok)),
                _ => None,
            })
            .collect();
        // The same client without the pause, its job long enough to outlast the lease.
        let long = Scenario::drift_margin_long_job(&sc);
        let with = run(&long);
        let without = run(&Scenario {
            deadline_margin: 0,
            ..long.clone()
        });
        let check = |t: &Trace| {
            t.events
                .iter()
                .find_map(|e| match e.kind {
                    EventKind::DeadlineChecked { local, ok, .. } => Some((e.at, local, ok)),
                    _ => None,
                })
                .unwrap_or((0, 0, false))
        };
        let (long_at, long_local, _) = check(&with);
        let late_at = without
            .writes
            .iter()
            .find(|w| w.request.writer == sc.actors[0].name)
            .map_or(0, |w| w.at);
        let mut notes = vec![format!(
            "A's clock runs {drift}‰ slow against the lock server's: it counts {} ms while {} pass. A {ttl} ms lease (token {a}) looks longer to A than it is.",
            super::super::scenario::client_elapsed(1000, drift),
            1000
        )];
        notes.push(format!(
            "No pause, a job that checks at t={long_at}: A's clock reads {long_local} ms. Without a margin its deadline is {ttl} ms, so it writes at t={late_at}, {} ms after its lease ran out (fencing off: {}). With a margin of {margin} ms (TTL × drift is {} ms) it {}: {}.",
            late_at.saturating_sub(ttl),
            without.summary.final_balance,
            ttl * drift / 1000,
            if check(&with).2 { "still writes" } else { "stops" },
            with.summary.final_balance
        ));
        let paused_after = |at: Millis| sc.actors[0].pauses.iter().any(|p| p.start >= at);
        if let Some(&(at, local, deadline, true)) = checks.first().filter(|c| paused_after(c.0)) {
            notes.push(format!(
                "Here A checks at t={at} (its clock: {local} of {deadline} ms) and passes with time to spare, then a GC pause lands after the check. Fencing off, its late debit lands anyway: {off}, the job ran twice."
            ));
        }
        notes.push(format!(
            "Fencing refuses it: storage has seen {b}, A's {a} is stale_fence ({strict}). The margin is for a bounded drift; a pause after the check is unbounded, so the fence is still needed."
        ));
        notes.push("Redlock clients do the same: the validity time subtracts a drift allowance (TTL × 0.01 + 2 ms in the common implementations). It bounds drift, not pauses or late packets.".to_owned());
        notes
    },
    build: Scenario::drift_margin,
};

impl Scenario {
    /// A client whose clock runs 20% slow (`client_drift` 200) and who checks its local
    /// deadline, TTL − an 8 ms margin, before it debits: A (33, lease until t=30) works until
    /// t=15, when its clock reads 12 ms of its 22, and passes; a GC pause 16..56 lands after
    /// the check, B gets 34 at t=30 and debits at 35, and A debits with 33 at 56.
    pub fn drift_margin() -> Self {
        let mut a = actor(
            "A",
            0,
            vec![
                Step::Acquire { retry_every: 10 },
                Step::CheckDone,
                Step::Work { ms: 15 },
                Step::CheckDeadline,
                Step::Work { ms: 1 },
                debit(10, None),
                Step::Work { ms: 5 },
                Step::Release,
            ],
        );
        a.pauses.push(pause(16, 40));
        Scenario {
            client_drift: 200,
            deadline_margin: 8,
            ..job_scenario(
                "drift-margin",
                "Client clock drift margin",
                vec![a, headline_b()],
                100,
            )
        }
    }

    /// `drift-margin`'s what-if for the notes: `sc` (its drift and margin) without A's pause,
    /// A's job working until t=36 before its deadline check, past the TTL on the lock
    /// server's clock but only 28 ms on A's.
    pub fn drift_margin_long_job(sc: &Scenario) -> Self {
        let mut sc = sc.clone();
        let a = &mut sc.actors[0];
        a.pauses.clear();
        for s in &mut a.script {
            if let Step::Work { ms: 15 } = s {
                *s = Step::Work { ms: 36 };
            }
        }
        sc
    }
}
