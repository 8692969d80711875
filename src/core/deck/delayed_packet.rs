//! The deck's `delayed-packet` entry: Delayed request.

use super::*;

pub(super) const ENTRY: DeckEntry = DeckEntry {
    id: "delayed-packet",
    title: "Delayed request",
    question: "No pauses then: is the lease safe if the client never stalls?",
    notes: |r| {
        let [off, strict, _] = r.balances();
        let (a, b) = (r.token(0), r.token(1));
        let timeout = run(&Scenario::with_request_timeout(
            r.off().scenario.clone(),
            10,
        ));
        vec![
            "Kleppmann's delayed packet: A sends its debit while its lease is live; the request sits in the network for 40 ms. A never pauses and never releases.".to_owned(),
            format!("The lease expires with the packet in flight; B takes the lock with {b}, finds the job not done and charges. A's request lands afterwards, from a lease that is gone."),
            format!("Off: the job ran twice ({off}). Strict: storage has seen {b}, A's {a} is stale_fence ({strict}). Only the resource sees the real order."),
            format!(
                "What if… A's client times out after 10 ms and releases: a timed-out request may still execute ({} off). That hazard is not the lease's: a perfect mutex shares it, and the fence still refuses it.",
                timeout.summary.final_balance
            ),
        ]
    },
    build: Scenario::delayed_packet,
    pushbacks: &[
        PushBack {
            question: "Put a deadline in the request and let storage drop it.",
            answer: "That trades the token for a clock: storage compares its own clock with a deadline the client's clock set, so skew or a clock step moves the window. A token needs no clock, storage only compares two numbers.",
            source: "Kleppmann 2016 (timing assumptions)",
            shows: Some("clock-jump"),
        },
        PushBack {
            question: "TCP delivers in order, so a late packet cannot overtake B's write.",
            answer: "Order holds only within one connection: A's and B's writes travel on different connections, and a retry on a new connection can reorder A's own writes. Kleppmann cites packets delayed about 90 s in a GitHub incident.",
            source: "Kleppmann 2016; seed 000",
            shows: None,
        },
    ],
};

impl Scenario {
    /// `delayed-packet`'s what-if: A's client gives up after a 10 ms timeout, treats the
    /// debit as failed and releases at t=15; the request still lands at t=45.
    pub fn delayed_packet_timeout() -> Self {
        Scenario::with_request_timeout(Scenario::delayed_packet(), 10)
    }

    /// `sc` with its first client's request timeout set to `ms`.
    pub fn with_request_timeout(mut sc: Scenario, ms: Millis) -> Self {
        if let Some(a) = sc.actors.first_mut() {
            a.request_timeout = Some(ms);
            // The client that gives up treats the request as failed and lets the lock go.
            if a.script.last() != Some(&Step::Release) {
                a.script.push(Step::Release);
            }
        }
        sc
    }

    /// Kleppmann's delayed packet: A sends its debit at t=5 while its lease (33, until t=30)
    /// is live; the request takes 40 ms. A never pauses and does not release: the lease
    /// expires at t=30 with the packet in flight, B takes 34, finds the job not done and
    /// debits at t=35, and A's request reaches storage at t=45, after B's write.
    pub fn delayed_packet() -> Self {
        let mut a = job("A", 0, 5, vec![debit(10, None)]);
        a.network_delay = 40;
        job_scenario(
            "delayed-packet",
            "Delayed packet",
            vec![a, headline_b()],
            100,
        )
    }
}
