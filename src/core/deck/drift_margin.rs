//! The deck's `drift-margin` entry: Client clock drift margin.

use super::*;

pub(super) const ENTRY: DeckEntry = DeckEntry {
    id: "drift-margin",
    title: "Client clock drift margin",
    question: "The client's clock runs slow. Is stopping at TTL − a margin safe?",
    notes: |r| {
        let sc = r.off().scenario.clone();
        let (ttl, margin, drift) = (sc.lease_ttl, sc.deadline_margin, sc.client_drift);
        let covers = ttl * drift / 1000;
        let [off, ..] = r.balances();
        let mut notes = vec![format!(
            "A's clock runs {} slow against the lock server's, exaggerated for visibility (quartz drifts by tens of ppm, but a clock being corrected runs off by its slew: ntpd slews at most 500 ppm, chrony up to 83,333 ppm by default, its maxslewrate, and CLOCK_MONOTONIC is slewed too): it counts {} ms while 1000 pass. A {ttl} ms lease (token {}) looks longer to A than it is.",
            super::super::story::per_mille(drift),
            super::super::scenario::client_elapsed(1000, drift),
            r.token(0)
        )];
        let (at, local, deadline, ok) = deadline_check(r.off());
        notes.push(if ok {
            format!("Here A checks at t={at}: its clock reads {local} of {deadline} ms (TTL − {margin} ms), so it writes: {off} with fencing off. A margin under TTL × drift ({covers} ms) does not cover the drift.")
        } else {
            format!("Here A checks at t={at}: its clock reads {local} ms, past its deadline of {deadline} ms (TTL − {margin} ms), so it stops: {off} under every policy. A margin of at least TTL × drift ({covers} ms) covers the drift; size it for the slew your clock discipline allows, not for quartz.")
        });
        // The same run without a margin, and the same client with a pause after a check.
        let bare = Scenario {
            deadline_margin: 0,
            ..sc.clone()
        };
        let [bare_off, bare_on] = [FencingPolicy::Off, FencingPolicy::Strict]
            .map(|p| run(&bare.clone().with_policy(p)).summary.final_balance);
        let late_at = run(&bare)
            .writes
            .iter()
            .find(|w| w.request.writer == sc.actors[0].name)
            .map_or(0, |w| w.at);
        if margin > 0 && late_at > ttl {
            notes.push(format!(
                "What if… no margin (margin=0): its deadline is the TTL, {ttl} ms, so it writes at t={late_at}, {} ms after its lease ran out: {bare_off} with fencing off, {bare_on} with the fence.",
                late_at - ttl
            ));
        }
        let paused = Scenario::drift_margin_pause_after_check(&sc);
        let [p_off, p_on] = [FencingPolicy::Off, FencingPolicy::Strict]
            .map(|p| run(&paused.clone().with_policy(p)).summary.final_balance);
        let (p_at, p_local, p_deadline, _) = deadline_check(&run(&paused));
        let frozen = paused.actors[0].pauses.first().map_or(0, |p| p.duration);
        notes.push(format!(
            "What the margin cannot fix: a GC pause after a check that passes (A checks at t={p_at}, its clock {p_local} of {p_deadline} ms, then freezes for {frozen} ms). Fencing off, its late debit lands: {p_off}, the job ran twice; the fence refuses it: stale_fence ({p_on}). A margin bounds drift; a pause after the check is unbounded, so the fence is still needed."
        ));
        notes.push("Redlock clients do the same: the validity time subtracts a drift allowance (TTL × 0.01 + 2 ms in the common implementations). It bounds drift, not pauses or late packets.".to_owned());
        notes
    },
    build: Scenario::drift_margin,
    pushbacks: &[
        PushBack {
            question: "How big a margin?",
            answer: "At least the TTL times the worst rate error you allow (the slew cap: ntpd 500 ppm, chrony 83,333 ppm by default), plus the time a write takes to arrive; Redlock's implementations subtract 1% of the TTL plus 2 ms. It bounds drift; a pause after the check has no bound.",
            source: "Redis docs: distributed locks (Redlock); chrony.conf(5): maxslewrate",
            shows: Some("gc-pause"),
        },
    ],
};

impl Scenario {
    /// A client whose clock runs 20% slow (`client_drift` 200, exaggerated for visibility)
    /// and who checks its local deadline, TTL − an 8 ms margin, before it debits: A (33,
    /// lease until t=30) works until t=36, past its lease on the lock server's clock, but its
    /// clock reads 28 ms, under the TTL. The margin stops it (28 > 22); without one it would
    /// debit at t=37 with a lease that is gone. B gets 34 at t=30 and debits at 35.
    pub fn drift_margin() -> Self {
        let a = job(
            "A",
            0,
            36,
            vec![
                Step::CheckDeadline,
                Step::Work { ms: 1 },
                debit(10, None),
                Step::Work { ms: 5 },
                Step::Release,
            ],
        );
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

    /// `drift-margin`'s what-if for the notes, what the margin cannot fix: `sc` (its drift
    /// and margin) with A's job checking early, at t=15 (its clock: 12 of 22 ms), and a GC
    /// pause from t=16 to 56 after the check; A debits with 33 at 56.
    pub fn drift_margin_pause_after_check(sc: &Scenario) -> Self {
        let mut sc = sc.clone();
        let a = &mut sc.actors[0];
        a.pauses = vec![pause(16, 40)];
        for s in &mut a.script {
            if let Step::Work { ms: 36 } = s {
                *s = Step::Work { ms: 15 };
            }
        }
        sc
    }
}

/// The first deadline check of `t`: (at, local clock, deadline, went on), or zeros if none.
fn deadline_check(t: &Trace) -> (Millis, Millis, Millis, bool) {
    t.events
        .iter()
        .find_map(|e| match e.kind {
            EventKind::DeadlineChecked {
                local,
                deadline,
                ok,
            } => Some((e.at, local, deadline, ok)),
            _ => None,
        })
        .unwrap_or((0, 0, 0, false))
}
