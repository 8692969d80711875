//! The deck's `lock-queue` entry: waiting on a lock. Spin-retry on Redis against a fair
//! queue (ZooKeeper's lock recipe, etcd's mutex), and what a queue does not fix.

use super::*;

pub(super) const ENTRY: DeckEntry = DeckEntry {
    id: "lock-queue",
    title: "Waiting on a lock",
    question: "How would you support waiting on a lock?",
    notes: |r| {
        let [off, strict, _] = r.balances();
        let t = r.strict();
        let grants = order(t);
        let spin = run(&Scenario {
            lock: LockKind::default(),
            ..t.scenario.clone()
        });
        let refusals = spin
            .events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::AcquireRefused { .. }))
            .count();
        let (a, b) = (r.token(0), r.token(1));
        vec![
            format!("A holds acct:1 with {a}; B asks at t=12 and C at t=21. In a fair queue each creates an ephemeral sequential node (ZooKeeper's lock recipe) or a key ordered by its create revision (etcd's mutex) and watches only the one before it: no polling, and a release wakes one waiter, not all of them."),
            format!("Grants in the queue: {}. The token is the node's sequence number or the key's create revision, so queue order is token order.", grants.join(", ")),
            format!("What if… spin-retry on Redis (SET NX, retry every 10 ms): {} refused tries, and grants {}. C asked later but its timer fired first: no order, and every waiter keeps hitting the lock service (with a pub/sub wake-up, each release wakes all of them at once).", refusals, order(&spin).join(", ")),
            format!("What a queue does not fix: A, the head, freezes in a GC pause. Its session times out at t=30, its node goes, and B's watch fires: B holds {b} while A still believes. A wakes and debits with {a}: off {off}, the job ran twice; strict refuses it as stale_fence ({strict})."),
            "Fairness and no herd are the queue's; one holder at a time is still nobody's. Keep the fence.".to_owned(),
        ]
    },
    build: Scenario::lock_queue,
    pushbacks: &[
        PushBack {
            question: "Why not have every waiter watch the lock node?",
            answer: "Then every release wakes every waiter, a herd that all re-read the children. ZooKeeper's lock recipe has each waiter watch only the node just before its own, so a release wakes one.",
            source: "ZooKeeper docs: recipes (locks)",
            shows: None,
        },
        PushBack {
            question: "Does a fair queue remove the need for a fence?",
            answer: "No: a waiter's turn comes when its predecessor's node is gone, and a session expiry removes a paused holder's node too. Queue order is token order, so the fence still refuses the paused one.",
            source: "ZooKeeper docs: recipes (locks)",
            shows: Some("gc-pause"),
        },
    ],
};

/// Who got the lock, in order, with the token: "B 34 at t=30".
fn order(t: &Trace) -> Vec<String> {
    t.events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Acquired { fence, .. } => Some(format!(
                "{} {fence} at t={}",
                e.actor.clone().unwrap_or_default(),
                e.at
            )),
            _ => None,
        })
        .collect()
}

impl Scenario {
    /// A fair queue on the lock service: A (33, session timeout 30 ms) works and freezes
    /// 5..55; B joins the queue at t=12, C at t=21. A's session expires at t=30 and B gets
    /// 34, debits at 35 and releases at 40; C gets 35 and finds the job done. A wakes and
    /// debits with 33 at 55 (its script ends there).
    pub fn lock_queue() -> Self {
        let mut a = actor(
            "A",
            0,
            vec![
                Step::Acquire { retry_every: 10 },
                Step::Work { ms: 10 },
                debit(10, None),
            ],
        );
        a.pauses.push(pause(5, 50));
        // B and C release as soon as they have debited.
        let [b, c] = [("B", 12), ("C", 21)].map(|(name, at)| {
            let mut w = writer(name, at, 5, 0);
            w.script.retain(|s| *s != Step::Work { ms: 0 });
            w
        });
        Scenario {
            lock: LockKind::Service(ServiceOptions {
                lock_delay: 0,
                queue: true,
                herd: None,
            }),
            ..job_scenario("lock-queue", "Waiting on a lock", vec![a, b, c], 100)
        }
    }
}
