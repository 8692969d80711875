//! The deck's `clock-jump` entry: Redlock and a clock jump.

use super::*;

pub(super) const ENTRY: DeckEntry = DeckEntry {
    id: "clock-jump",
    title: "Redlock and a clock jump",
    question: "Redlock uses five nodes and a majority. Is that safe without fencing?",
    notes: |r| {
        let [off, strict, _] = r.balances();
        let a = r.token(0);
        vec![
            "Five Redis nodes; A reaches nodes 1–3 and locks a majority. B reaches only nodes 3–5 and backs off with 2 of 5.".to_owned(),
            "Node 3's clock jumps 25 ms forward: A's key there expires, though by A's own clock its lock is valid until about t=28 (the TTL less Redlock's drift allowance, 1% of the TTL plus 2 ms). The allowance covers clock rates, not a step.".to_owned(),
            "B now gets nodes 3–5, a majority. Node 3 counted in both majorities: A and B both believe they hold the lock, and neither paused.".to_owned(),
            format!("Off: {off}, the job ran twice. Redlock mints no token, so that is what really happens."),
            format!("The strict column is counterfactual: with a token minted in the same step as each grant (an etcd revision, a ZooKeeper czxid), A's {a} would be stale_fence ({strict}). Kleppmann's point: Redlock cannot give you that token, and a counter INCRed after the grant is no substitute (separate-counter)."),
        ]
    },
    build: Scenario::clock_jump,
    pushbacks: &[
        PushBack {
            question: "Slew the clocks, don't step them.",
            answer: "antirez's answer: configure NTP to slew, so no node's clock jumps. That removes this schedule, but Redlock still assumes bounded pauses and mints no token, so a GC pause past the TTL breaks it the same way.",
            source: "antirez 2016, Is Redlock safe?; Kleppmann 2016",
            shows: Some("gc-pause"),
        },
        PushBack {
            question: "Redlock subtracts elapsed time and drift before using the lock.",
            answer: "That check runs once, right after acquiring; a pause or a clock step after it is not covered. The validity time is what the client believes, not what the nodes enforce.",
            source: "Redis docs: distributed locks (Redlock)",
            shows: Some("toctou"),
        },
    ],
};

impl Scenario {
    /// Kleppmann's Redlock counterexample on five nodes: A reaches nodes 1–3 (4 and 5 are cut
    /// off from it) and locks a majority at t=0 until t=30. B reaches only nodes 3–5; its
    /// first try at t=5 gets 2 of 5 and backs off. At t=10 node 3's clock jumps 25 ms forward
    /// and A's key there expires, so at t=15 B locks nodes 3–5, a majority, and charges at
    /// t=17; A, never paused, charges at t=20. Redlock mints no token: the tokens are
    /// counterfactual.
    pub fn clock_jump() -> Self {
        let a = writer("A", 0, 20, 5);
        let b = writer("B", 5, 2, 5);
        Scenario {
            faults: vec![FaultAt {
                at: 10,
                fault: Fault::ClockJump { node: 2, by: 25 },
            }],
            lock: LockKind::Redlock(RedlockSetup {
                nodes: 5,
                reach: vec![vec![0, 1, 2], vec![2, 3, 4]],
            }),
            ..job_scenario("clock-jump", "Redlock and a clock jump", vec![a, b], 60)
        }
    }
}
