//! The deck's `lock-delay` entry: Chubby-style lock-delay.

use super::*;

/// The shorter pause of `lock-delay`'s notes: longer than the TTL, shorter than TTL + delay.
pub const LOCK_DELAY_SHORT_PAUSE: Millis = 40;

pub(super) const ENTRY: DeckEntry = DeckEntry {
    id: "lock-delay",
    title: "Chubby-style lock-delay",
    question:
        "Chubby waits a lock-delay before re-granting a lapsed lock. Does that make the lease safe?",
    notes: |r| {
        let [off, strict, _] = r.balances();
        let (a, b) = (r.token(0), r.token(1));
        let sc = r.off().scenario.clone();
        let (ttl, delay) = (sc.lease_ttl, sc.lock.lock_delay());
        let pause = sc.actors[0].pauses.first().map_or(0, |p| p.duration);
        let granted = r
            .off()
            .events
            .iter()
            .find(|e| {
                matches!(e.kind, EventKind::Acquired { .. }) && e.actor.as_deref() == Some("B")
            })
            .map_or(0, |e| e.at);
        // A pause shorter than TTL + lock-delay, with and without the delay (fencing off).
        let short = Pause {
            start: 5,
            duration: LOCK_DELAY_SHORT_PAUSE,
        };
        let with = run(&sc.clone().with_pause(0, short));
        let without = run(&Scenario {
            lock: LockKind::SERVICE,
            ..sc.with_pause(0, short)
        });
        vec![
            format!("A's lease ({ttl} ms, token {a}) lapses in a GC pause, without a release. The lock server then grants the lock to nobody for a lock-delay of {delay} ms, so B gets it only at t={granted}, with {b}."),
            format!("Narrower: a {} ms pause with fencing off is harmless with the delay (A writes before anyone else holds the lock and B finds the job done: {}), a double charge without it ({}).", LOCK_DELAY_SHORT_PAUSE, with.summary.final_balance, without.summary.final_balance),
            format!("Not closed: this pause is {pause} ms, longer than TTL + lock-delay ({} ms). Fencing off, A's late debit lands after B's: {off}, the job ran twice.", ttl + delay),
            format!("Fencing still rejects it: storage has seen {b}, A's {a} is stale_fence ({strict}). Chubby offers sequencers (tokens) to servers that can check them, and lock-delay only as the imperfect fallback for those that cannot."),
            "Lock-delay is for resources that cannot check a token: it buys time, not safety. Redis has none: SET NX succeeds the moment the key expires.".to_owned(),
        ]
    },
    build: Scenario::lock_delay,
    pushbacks: &[
        PushBack {
            question: "How long a delay?",
            answer: "Longer than the pauses and delays you expect: Chubby lets a client choose up to a minute, Consul's session lock-delay defaults to 15 s. It narrows the window and bounds nothing; Chubby offers sequencers to servers that can check them.",
            source: "Burrows 2006 (Chubby); Consul docs: sessions",
            shows: Some("sequencer"),
        },
    ],
};

impl Scenario {
    /// The headline with a Chubby-style lock-delay of 20 ms on a lock service that mints
    /// sequencers (tokens): A (33, lease until t=30) pauses 5..65, longer than TTL + delay;
    /// B is refused at 30 and 40 by the lock-delay, gets 34 at t=50 and debits at 55; A
    /// wakes at 65 and debits with 33.
    pub fn lock_delay() -> Self {
        let mut a = writer("A", 0, 10, 5);
        a.pauses.push(pause(5, 60));
        Scenario {
            lock: LockKind::Service(ServiceOptions {
                lock_delay: 20,
                queue: false,
                herd: None,
            }),
            ..job_scenario(
                "lock-delay",
                "Chubby-style lock-delay",
                vec![a, headline_b()],
                100,
            )
        }
    }
}
