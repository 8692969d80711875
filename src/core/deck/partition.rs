//! The deck's `partition` entry: Network partition.

use super::*;

/// How long `partition`'s client A waits for the lock service's reply (a command timeout as
/// long as the TTL: with a 30 s lease, a 30 s timeout).
pub const PARTITION_LOCK_TIMEOUT: Millis = 30;
/// `partition`'s what-if: a lock-command timeout shorter than what is left of the lease.
pub const PARTITION_QUICK_TIMEOUT: Millis = 10;
/// `partition`'s what-if: when A sends its debit, and how long it takes to reach storage.
pub const PARTITION_IN_FLIGHT: Millis = 25;
/// `partition`'s opposite choice: a TTL that outlasts the partition and the run.
pub const PARTITION_LONG_TTL: Millis = 600_000;
/// The seed of `partition`'s watchdog jitter: its first renewal lands by t=10.
pub const PARTITION_SEED: u64 = 8;

pub(super) const ENTRY: DeckEntry = DeckEntry {
    id: "partition",
    title: "Network partition",
    question: "The holder is cut off from the lock service, but not from storage. What breaks?",
    notes: |r| {
        let [off, strict, _] = r.balances();
        let (a, b) = (r.token(0), r.token(1));
        let t = r.off();
        let sc = t.scenario.clone();
        let p = sc.partitioned().unwrap_or(Partition {
            actor: 0,
            start: 0,
            end: 0,
        });
        let at = |want: fn(&EventKind) -> bool, who: &str| {
            t.events
                .iter()
                .find(|e| want(&e.kind) && e.actor.as_deref().is_none_or(|x| x == who))
                .map_or(0, |e| e.at)
        };
        let renewed = at(|k| matches!(k, EventKind::Extended { .. }), "A");
        let lost = at(|k| matches!(k, EventKind::LockUnanswered { .. }), "A");
        let expired = at(|k| matches!(k, EventKind::LeaseExpired { .. }), "A");
        let granted = t
            .events
            .iter()
            .find(|e| {
                matches!(e.kind, EventKind::Acquired { .. }) && e.actor.as_deref() == Some("B")
            })
            .map_or(0, |e| e.at);
        let learned = at(|k| matches!(k, EventKind::LockTimedOut { .. }), "A");
        let wrote = t
            .writes
            .iter()
            .find(|w| w.request.writer == "A")
            .map_or(0, |w| w.at);
        let timeout = sc.actors[0].lock_timeout.unwrap_or(0);
        // What if A's client gave up sooner, with and without a debit already on the wire.
        let off_run = |sc: Scenario| run(&sc.with_policy(FencingPolicy::Off));
        let quick = off_run(Scenario::partition_with(PARTITION_QUICK_TIMEOUT, None));
        let in_flight =
            || Scenario::partition_with(PARTITION_QUICK_TIMEOUT, Some(PARTITION_IN_FLIGHT));
        let sent = off_run(in_flight());
        let sent_strict = run(&in_flight().with_policy(FencingPolicy::Strict));
        let quick_stop = quick
            .events
            .iter()
            .find(|e| matches!(e.kind, EventKind::LockTimedOut { .. }))
            .map_or(0, |e| e.at);
        let landed = sent
            .writes
            .iter()
            .find(|w| w.request.writer == "A")
            .map_or(0, |w| w.at);
        // A's own deadline, counted from its last acknowledged renewal.
        let deadline = off_run(Scenario::partition_deadline());
        let stopped = deadline
            .events
            .iter()
            .find(|e| matches!(e.kind, EventKind::DeadlineChecked { ok: false, .. }))
            .map_or(0, |e| e.at);
        // The opposite choice: a lease that outlasts the partition.
        let long = run(&Scenario {
            lease_ttl: PARTITION_LONG_TTL,
            ..sc.clone()
        });
        let waits = long
            .events
            .iter()
            .filter(|e| {
                matches!(e.kind, EventKind::AcquireRefused { .. })
                    && e.actor.as_deref() == Some("B")
            })
            .count();
        let long_grant = long
            .events
            .iter()
            .find(|e| {
                matches!(e.kind, EventKind::Acquired { .. }) && e.actor.as_deref() == Some("B")
            })
            .map(|e| e.at);
        let first_try = sc.actors[1].start_at;
        vec![
            format!("A partition is not a pause: from t={} to t={} A is cut off from the lock service, not from storage, and keeps running. Its watchdog's renewal at t={renewed} got through; the one at t={lost} is dropped: no reply.", p.start, p.end),
            format!("The lock service cannot tell a cut-off holder from a dead one: A's lease ({a}) runs out at t={expired} and B gets {b} at t={granted} (availability). A debits with {a} at t={wrote}: fencing off it lands too, {off}, the job ran twice; strict refuses it as stale_fence, {strict}."),
            format!("A learned at t={learned}, when its {timeout} ms timeout gave up on the renewal sent at t={lost}: {} ms after its lease ended, {} ms after its write. With a {PARTITION_QUICK_TIMEOUT} ms timeout (under the {} ms left on the lease) it stops at t={quick_stop}, before writing ({} with fencing off), unless its debit is already on the wire (sent at t={PARTITION_IN_FLIGHT}, landing at t={landed}): {} off, {} strict.", learned.saturating_sub(expired), learned.saturating_sub(wrote), expired.saturating_sub(lost), quick.summary.final_balance, sent.summary.final_balance, sent_strict.summary.final_balance),
            format!("No reply needed: A's last acknowledged renewal was sent at t={renewed}, so it can count on its lease only until t={} (the lock service started that TTL no earlier). A deadline check before the debit (drift-margin's) stops it at t={stopped}: {} with fencing off. It cannot cover a pause or a slow packet after the check.", renewed + sc.lease_ttl, deadline.summary.final_balance),
            match long_grant {
                Some(g) => format!("The opposite choice, a lease that outlasts the partition (a TTL of {} ms): B is refused {waits} times and gets the lock only at t={g}, after the partition heals at t={} and A's release gets through. Safe, fencing off ({}), but B is locked out for {} ms: a lease that never runs out waits for its holder, cut off or dead.", PARTITION_LONG_TTL, p.end, long.summary.final_balance, g.saturating_sub(first_try)),
                None => format!("The opposite choice, a lease that outlasts the partition (a TTL of {} ms): B is refused {waits} times and never gets the lock in this run ({}).", PARTITION_LONG_TTL, long.summary.final_balance),
            },
        ]
    },
    build: Scenario::partition,
    pushbacks: &[
        PushBack {
            question: "Use a longer TTL so a short partition does not lose the lease.",
            answer: "Then a crashed or cut-off holder locks everyone out for the whole TTL, as the notes' long lease does to B. Short leases recover fast, and the fence makes them safe.",
            source: "seed 003 (recovery speed versus lease churn)",
            shows: None,
        },
        PushBack {
            question: "Stop at the lease's deadline, not the request's timeout.",
            answer: "Yes: a renewal timeout longer than the time left on the lease learns too late. Count the deadline from when the renewal was sent and stop there; etcd's own client counts from the reply, half a round trip after the server's. A write already sent still needs the fence.",
            source: "etcd clientv3 lease.go (its deadline runs from the keep-alive reply)",
            shows: Some("raft-partition"),
        },
    ],
};

impl Scenario {
    /// A cut off from the lock service, not from storage, from t=15 to t=65: A (33, lease
    /// until t=30) works 48 ms with a watchdog renewing every ~10 ms; its renewal at t=10
    /// gets through (lease until t=40), the next, at t=20, is dropped by the partition, and
    /// A's client waits [`PARTITION_LOCK_TIMEOUT`] for a reply. The lease runs out at 40, B
    /// gets 34 and debits at 45; A, never paused, debits with 33 at 48 and learns at 50.
    pub fn partition() -> Self {
        let mut a = actor(
            "A",
            0,
            vec![
                Step::Acquire { retry_every: 10 },
                Step::CheckDone,
                Step::WorkRenewing { ms: 48 },
                debit(10, None),
                Step::WorkRenewing { ms: 20 },
                Step::Release,
            ],
        );
        a.lock_timeout = Some(PARTITION_LOCK_TIMEOUT);
        Scenario {
            seed: PARTITION_SEED,
            faults: vec![FaultAt::cut_from_lock(Node::Client(0), 15, 65)],
            ..job_scenario("partition", "Network partition", vec![a, headline_b()], 100)
        }
    }

    /// `partition` with A's lock-command timeout `timeout`, and optionally A's debit sent at
    /// t=`in_flight` (its work cut short) and `PARTITION_IN_FLIGHT` ms on the way to storage.
    pub fn partition_with(timeout: Millis, in_flight: Option<Millis>) -> Self {
        let mut sc = Scenario::partition();
        let a = &mut sc.actors[0];
        a.lock_timeout = Some(timeout);
        if let Some(t) = in_flight {
            a.script[2] = Step::WorkRenewing { ms: t };
            a.network_delay = PARTITION_IN_FLIGHT;
        }
        sc
    }

    /// `partition` with a deadline check on A's own clock just before its debit: its lease
    /// counts from its last acknowledged renewal.
    pub fn partition_deadline() -> Self {
        let mut sc = Scenario::partition();
        sc.actors[0].script.insert(3, Step::CheckDeadline);
        sc
    }
}
