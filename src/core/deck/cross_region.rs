//! The deck's `cross-region` entry: one lock service for every region, a WAN round trip
//! away from its clients, while storage stays near them.

use super::*;
use crate::core::client::request_half;

/// The entry's round trip between the clients and the lock service (ms).
pub const CROSS_REGION_RTT: Millis = 20;

pub(super) const ENTRY: DeckEntry = DeckEntry {
    id: "cross-region",
    title: "A lock service in another region",
    question: "Why not run one global lock service for every region?",
    notes: |r| {
        let sc = &r.off().scenario;
        let (rtt, ttl) = (sc.lock_rtt, sc.lease_ttl);
        let (a, b) = (r.token(0), r.token(1));
        let [off, strict, same] = r.balances();
        let t = r.strict();
        let started = first_at(t, "A", |k| matches!(k, EventKind::JobChecked { .. }));
        let (a_granted, a_until) = t
            .events
            .iter()
            .find_map(|e| match e.kind {
                EventKind::Acquired { expires_at, .. } if e.actor.as_deref() == Some("A") => {
                    Some((e.at, expires_at))
                }
                _ => None,
            })
            .unwrap_or_default();
        let a_sent = a_granted.saturating_sub(request_half(rtt));
        let granted = first_at(t, "B", |k| matches!(k, EventKind::Acquired { .. }));
        let heard = first_at(t, "B", |k| matches!(k, EventKind::JobChecked { .. }));
        let wrote = t
            .writes
            .iter()
            .find(|w| w.request.writer == "A")
            .map_or(0, |w| w.at);
        let windows: Vec<String> = [0, rtt / 2, rtt]
            .into_iter()
            .map(|rtt| {
                let t = run(&Scenario::cross_region_with(rtt));
                format!("{rtt} ms: {}", window(&t))
            })
            .collect();
        vec![
            format!("The lock service is in another region, a {rtt} ms round trip from its clients; storage is near them. Every acquire costs that round trip before the job can start (A starts at t={started}), and a watchdog renewal sent a third into the {ttl} ms lease is confirmed only {} ms into it.", ttl / 3 + rtt),
            format!("A asks at t={a_sent}; the lock service grants {a} when the request arrives, at t={a_granted}, so there the lease runs to t={a_until}, while A, counting from its send (as Redlock's clients do), believes it ends at t={}. A freezes in a GC pause past both; B is granted {b} at t={granted} but hears of it at t={heard}. A wakes and its {a} reaches storage at t={wrote}, before any write with {b}: strict and same-epoch accept it ({strict}, {same}), a write from a superseded lease. Off: {off}. B then finds the job done.", a_sent + ttl),
            format!("The window in which storage has not yet seen the new token, from B's grant to its first write, grows with the round trip. Strict, by round trip: {}.", windows.join("; ")),
            "Inside a region consensus costs ~5–10 ms per acquire; across regions every acquire and renewal pays a WAN round trip, and each one widens that window. Run one lock service per region, next to the clients and the storage it guards.".to_owned(),
            "Where the gap matters, close it at the resource: a barrier that establishes the new token first (handoff-barrier) or a sequencer check with the lock service (sequencer), each a round trip of its own.".to_owned(),
        ]
    },
    build: Scenario::cross_region,
    pushbacks: &[
        PushBack {
            question: "A region is cut off: who can acquire?",
            answer: "Only the side that reaches the lock: here, with one Redis, its own region; with etcd or ZooKeeper, the side with a majority of the members. The other side stalls instead of both proceeding. A holder there keeps running until it learns its lease is gone, and the fence refuses its late writes.",
            source: "seed 003 (safety versus availability)",
            shows: Some("raft-partition"),
        },
        PushBack {
            question: "Then give each region its own lock.",
            answer: "Fine for data only one region writes. For data both regions write, two locks are two owners; pin each resource to one authority, and fence its writes there.",
            source: "seed 003 (state the invariant and its enforcement point)",
            shows: None,
        },
    ],
};

impl Scenario {
    /// The headline's race with the lock service a [`CROSS_REGION_RTT`] round trip away:
    /// each lock command runs there half a round trip after it is sent, and its answer
    /// takes the other half back. A asks at t=0 and is granted 33 at t=10 (lease until
    /// t=40), works 30 ms and pauses 25..65; B polls from t=22 every 10 ms, is granted 34
    /// at t=62 and hears of it at t=72, after A's stale debit at t=65 has reached storage.
    pub fn cross_region() -> Self {
        Scenario::cross_region_with(CROSS_REGION_RTT)
    }

    /// `cross-region` with a round trip of `rtt` ms to the lock service (0: one region).
    pub fn cross_region_with(rtt: Millis) -> Self {
        let mut a = writer("A", 0, 30, 5);
        a.pauses.push(pause(25, 40));
        // B starts 2 ms after A's status read at a 20 ms round trip, so that the replay on
        // real servers sees the two in the simulated order.
        let mut b = headline_b();
        b.start_at = 22;
        Scenario {
            lock_rtt: rtt,
            ..job_scenario(
                "cross-region",
                "A lock service in another region",
                vec![a, b],
                120,
            )
        }
    }
}

/// When `who` first did what `want` matches in `t` (0 if never).
fn first_at(t: &Trace, who: &str, want: fn(&EventKind) -> bool) -> Millis {
    t.events
        .iter()
        .find(|e| e.actor.as_deref() == Some(who) && want(&e.kind))
        .map_or(0, |e| e.at)
}

/// B's grant, B's first write (or that it had none) and what became of A's late write.
fn window(t: &Trace) -> String {
    let granted = first_at(t, "B", |k| matches!(k, EventKind::Acquired { .. }));
    let b = t.writes.iter().find(|w| w.request.writer == "B");
    let a = t.writes.iter().find(|w| w.request.writer == "A");
    let verdict = a.map_or_else(
        || "A wrote nothing".to_owned(),
        |w| {
            let token = w.request.fence.map_or(0, |f| f.0);
            let code = w.result.as_ref().err().map_or("accepted", WriteError::code);
            format!("A's {token} {code}")
        },
    );
    match b {
        Some(w) => format!(
            "B granted at t={granted}, first write at t={}, {verdict} ({})",
            w.at, t.summary.final_balance
        ),
        None => format!(
            "B granted at t={granted}, {verdict} before B wrote anything ({})",
            t.summary.final_balance
        ),
    }
}
