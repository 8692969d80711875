//! The deck's `gc-pause` entry: GC pause.

use super::*;

pub(super) const ENTRY: DeckEntry = DeckEntry {
    id: "gc-pause",
    title: "GC pause",
    question: "Your lock has a TTL. What happens if the holder stalls longer than the TTL?",
    notes: |r| {
        let [off, strict, _] = r.balances();
        let (a, b) = (r.token(0), r.token(1));
        vec![
            format!("A takes the lease with token {a} and freezes in a GC pause longer than the TTL."),
            format!("The lease expires; B takes token {b}, finds the job not done, and charges. Both believe they hold the lock."),
            format!("Fencing off: A's late debit lands too, balance {off} — a double charge: the job ran twice. Each debit is atomic; nothing was lost."),
            format!("Fencing on: storage has seen {b}, so A's {a} is stale_fence, balance {strict} — only because B wrote first. Drag the pause to end at t=31: A's write arrives first, strict accepts it, and the job runs twice anyway."),
            {
                let keyed = run(&r.off().scenario.clone().keyed("order-1"));
                format!(
                    "What if… an idempotency key per order (both debits carry “order-1”): off ends at {} too. The key stops the same intent run twice; only the fence stops a stale holder's different write, such as a late result (handoff-barrier).",
                    keyed.summary.final_balance
                )
            },
        ]
    },
    build: Scenario::gc_pause,
    pushbacks: &[
        PushBack {
            question: "Just make the TTL longer than any pause.",
            answer: "No pause has a bound: a GC, a page fault, a SIGSTOP or a VM migration can outlast any TTL, and a delayed packet needs no pause at all. A longer TTL only slows takeover after a real crash; the fence is what refuses the late write.",
            source: "Kleppmann 2016; seed 000",
            shows: Some("delayed-packet"),
        },
    ],
};

impl Scenario {
    /// `self` with every debit carrying the idempotency key `key`: the same intent, deduped
    /// by storage whatever the fencing policy.
    pub fn keyed(mut self, key: &str) -> Self {
        for a in &mut self.actors {
            for s in &mut a.script {
                if let Step::Debit {
                    idempotency_key, ..
                } = s
                {
                    *idempotency_key = Some(key.to_owned());
                }
            }
        }
        self
    }
}
