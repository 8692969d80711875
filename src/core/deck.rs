//! The scenario deck: one entry per interviewer follow-up, each a real scenario for the
//! same engine. The UI lists the deck and runs whichever entry is picked; all the scenario
//! logic is here and in the engine, none of it in the UI.
//!
//! Every builder sets `Scenario::id` to its entry's id, so a trace (or a shared URL) knows
//! which entry it came from.

use super::clock::Millis;
use super::ledger::FencingPolicy;
use super::scenario::{Actor, ClockJump, Pause, ReleaseMode, Scenario, Step};

/// One scenario of the deck, with what to say while it plays.
#[derive(Debug, Clone, Copy)]
pub struct DeckEntry {
    /// URL-safe slug, e.g. `"gc-pause"`; also stored in the built scenario's `id`.
    pub id: &'static str,
    pub title: &'static str,
    /// The interviewer follow-up this entry answers.
    pub question: &'static str,
    /// What to say out loud, 3–5 points.
    pub notes: &'static [&'static str],
    /// Builds the scenario (with its default fencing policy).
    pub build: fn() -> Scenario,
}

/// Every deck entry, in presentation order.
pub static DECK: &[DeckEntry] = &[
    DeckEntry {
        id: "gc-pause",
        title: "GC pause",
        question: "Your lock has a TTL. What happens if the holder stalls longer than the TTL?",
        notes: &[
            "A takes the lease with token 33 and freezes in a GC pause longer than the TTL.",
            "The lease expires; B takes token 34 and debits. Both believe they hold the lock.",
            "Fencing off: A's late debit lands too, balance 80 — a lost update.",
            "Fencing on: storage has seen 34, so A's 33 is stale_fence, balance 90.",
            "The lease is an optimisation; the token checked at the resource is the safety.",
        ],
        build: Scenario::gc_pause,
    },
    DeckEntry {
        id: "toctou",
        title: "Check is_held first",
        question: "Why not just check that you still hold the lock right before writing?",
        notes: &[
            "A checks is_held and gets true, then the pause lands between the check and the write.",
            "Check-then-act is a TOCTOU race: true now says nothing about a moment later.",
            "No check placed on the client can close the gap; the pause can always land after it.",
            "Fencing off: 80. Strict: A's 33 is stale_fence, 90. The check has to be at the storage.",
        ],
        build: Scenario::toctou,
    },
    DeckEntry {
        id: "same-token-retry",
        title: "Retry with the same token",
        question: "What if the reply is lost and the client retries? Is the token enough?",
        notes: &[
            "A's debit pay-1 lands, the reply is lost, A retries: same token 33, same key pay-1.",
            "Strict refuses the retry as stale_fence (33 is not > 33); same-epoch admits the token but the key stops it as duplicate_intent. Debited once either way.",
            "The key dedupes even with fencing off — it is the intent's identity, not a fence.",
            "Then A stalls, B writes with 34, and A sends a new intent (fresh key pay-3) with 33: off, it lands (70); with fencing, stale_fence (80).",
            "Tokens order lock generations; keys dedupe intents. You need both.",
        ],
        build: Scenario::same_token_retry,
    },
    DeckEntry {
        id: "unsafe-release",
        title: "Release by GET then DEL",
        question: "How do you release the lock? Is GET, compare, then DEL fine?",
        notes: &[
            "A GETs the key, sees its own value, then pauses before the DEL; its lease expires and B takes 34.",
            "A wakes and DELs unconditionally: it deletes B's lease, so C takes 35 while B still works. Two believers, B and C.",
            "Fencing on: C wrote with 35 first, so B's late 34 is stale_fence (80); off, it lands (70).",
            "Flip release to compare-and-delete (one Lua script): A's release is atomic, B's lease is never touched, and C waits its turn (70, no conflict).",
        ],
        build: Scenario::unsafe_release,
    },
    DeckEntry {
        id: "delayed-packet",
        title: "Delayed packet",
        question: "No pauses then: is the lease safe if the client never stalls?",
        notes: &[
            "A sends its debit while its lease is live and even releases cleanly; the packet sits in a queue for 40 ms.",
            "B takes the lock with 34 and debits; A's packet arrives afterwards.",
            "Nobody ever believed they held the lock at the same time, yet a finished lease's write lands last: off, 80.",
            "Strict: storage has seen 34, A's 33 is stale_fence, 90. Only the resource sees the real order.",
        ],
        build: Scenario::delayed_packet,
    },
    DeckEntry {
        id: "redis-failover",
        title: "Redis failover",
        question: "What if the Redis primary fails over? Use Redis replication for HA?",
        notes: &[
            "The primary acknowledges A's SET, then crashes before replicating it; the promoted replica has no key.",
            "B acquires the same key: the lock service itself now has two live leases, not just two believers.",
            "Fencing tokens come from a consensus store (etcd revision, ZooKeeper zxid), so B gets 34, not 33 again.",
            "Fencing on: A's 33 is stale_fence after B's 34 (90); off, 80. A token from INCR on the same Redis could roll back too.",
        ],
        build: Scenario::redis_failover,
    },
    DeckEntry {
        id: "renewal",
        title: "Renewal and self-cancel",
        question: "Long jobs outlive the TTL. How do you renew, and what if renewal fails?",
        notes: &[
            "A's watchdog renews at a third of the TTL with ±25% jitter, checking ownership atomically.",
            "A pause stops the watchdog too; the lease runs out and B takes 34 and debits.",
            "A wakes, its overdue renewal is refused (not_holder), and the job self-cancels without writing: 90 under every policy.",
            "Self-cancel only covers pauses before the check; a pause between a good renewal and the write still needs the fence.",
            "Jitter matters at scale: 10,000 holders renewing on a fixed schedule hit the lock server in the same millisecond.",
        ],
        build: Scenario::renewal,
    },
    DeckEntry {
        id: "handoff-barrier",
        title: "Job handoff with a barrier",
        question: "A scheduler reassigns a stuck job. How do you stop the old worker's late result?",
        notes: &[
            "A runs the job with token 41 and a 10 s lease, then stalls for 15 s; the scheduler hands the job to B with 42.",
            "Before B starts, the scheduler writes a barrier with 42 to the result row: last fence 42, result unchanged.",
            "A wakes and publishes with 41 — rejected stale_fence, even though B has not published yet.",
            "A's card charge runs anyway: the payment API never sees a token. Fencing protects only what checks it.",
            "A barrier needs same-epoch (≥): under strict (>) it spends 42's one write and B's own publish is refused too.",
        ],
        build: Scenario::handoff_barrier,
    },
    DeckEntry {
        id: "clock-jump",
        title: "Clock jump on the lock node",
        question: "Redlock uses several nodes and no fencing. Is that safe?",
        notes: &[
            "Redlock's TTLs assume bounded clock drift. Here the lock node's clock jumps 25 ms forward.",
            "A's key expires at t=10 in real time although A's own clock says its lease runs until t=30.",
            "B acquires and writes; A, neither paused nor slow, writes inside what it thinks is its lease.",
            "Off: 80. Strict: A's 33 is stale_fence, 90. Redlock mints no token, so this check is not even available.",
        ],
        build: Scenario::clock_jump,
    },
];

/// The entry with this id.
pub fn find(id: &str) -> Option<&'static DeckEntry> {
    DECK.iter().find(|e| e.id == id)
}

/// An actor without pauses or network delay.
fn actor(name: &str, start_at: Millis, script: Vec<Step>) -> Actor {
    Actor {
        name: name.to_owned(),
        start_at,
        pauses: Vec::new(),
        network_delay: 0,
        script,
    }
}

fn debit(amount: i64, key: Option<&str>) -> Step {
    Step::Debit {
        amount,
        idempotency_key: key.map(str::to_owned),
    }
}

fn pause(start: Millis, duration: Millis) -> Pause {
    Pause { start, duration }
}

/// The headline's shape: `acct:1` at 100, 30 ms leases, tokens from 33, fencing strict.
fn account_scenario(id: &str, title: &str, actors: Vec<Actor>, horizon: Millis) -> Scenario {
    Scenario {
        id: id.to_owned(),
        title: title.to_owned(),
        resource: "acct:1".to_owned(),
        initial_balance: 100,
        first_fence: 33,
        lease_ttl: 30,
        policy: FencingPolicy::Strict,
        actors,
        horizon,
        ..Scenario::default()
    }
}

/// The plain writer of most entries: take the lock (polling every 10 ms), work `work` ms,
/// debit 10, hold `hold` ms more, release.
fn writer(name: &str, start_at: Millis, work: Millis, hold: Millis) -> Actor {
    actor(
        name,
        start_at,
        vec![
            Step::Acquire { retry_every: 10 },
            Step::Work { ms: work },
            debit(10, None),
            Step::Work { ms: hold },
            Step::Release,
        ],
    )
}

/// B as in the headline: polls from t=20, debits 10 five ms after it gets the lock.
fn headline_b() -> Actor {
    writer("B", 20, 5, 5)
}

impl Scenario {
    /// A checks `is_held` at t=4 (true), the pause lands at t=5, right after the check;
    /// the rest is the headline: B writes with 34 at t=35, A writes with 33 at t=55.
    pub fn toctou() -> Self {
        let mut a = actor(
            "A",
            0,
            vec![
                Step::Acquire { retry_every: 10 },
                Step::Work { ms: 4 },
                Step::CheckHeld,
                Step::Work { ms: 1 },
                debit(10, None),
                Step::Work { ms: 5 },
                Step::Release,
            ],
        );
        a.pauses.push(pause(5, 50));
        account_scenario(
            "toctou",
            "Check is_held, then write",
            vec![a, headline_b()],
            100,
        )
    }

    /// A debits `pay-1` at t=0, loses the reply and retries it unchanged at t=5, then
    /// stalls 10..60. B takes 34 at t=30 and debits `pay-2`; at t=60 A sends a new intent
    /// `pay-3` with its old token 33.
    pub fn same_token_retry() -> Self {
        let mut a = actor(
            "A",
            0,
            vec![
                Step::Acquire { retry_every: 10 },
                debit(10, Some("pay-1")),
                Step::Work { ms: 5 },
                Step::Retry,
                Step::Work { ms: 5 },
                debit(10, Some("pay-3")),
                Step::Release,
            ],
        );
        a.pauses.push(pause(10, 50));
        let b = actor(
            "B",
            20,
            vec![
                Step::Acquire { retry_every: 10 },
                Step::Work { ms: 5 },
                debit(10, Some("pay-2")),
                Step::Work { ms: 5 },
                Step::Release,
            ],
        );
        account_scenario(
            "same-token-retry",
            "Lost reply, retry with the same token",
            vec![a, b],
            100,
        )
    }

    /// GET-then-DEL release: A debits at t=5 and GETs its own value; the pause (6..56)
    /// lands before the DEL. B holds 34 from t=30 and works until t=58; A's DEL at t=56
    /// deletes B's lease, C (polling from t=40) takes 35 and debits at t=57, B debits
    /// with 34 at t=58. Set `release` to `CompareAndDelete` for the safe version.
    pub fn unsafe_release() -> Self {
        let mut a = actor(
            "A",
            0,
            vec![
                Step::Acquire { retry_every: 10 },
                Step::Work { ms: 5 },
                debit(10, None),
                Step::Release,
            ],
        );
        a.pauses.push(pause(6, 50));
        let b = actor(
            "B",
            20,
            vec![
                Step::Acquire { retry_every: 10 },
                Step::Work { ms: 28 },
                debit(10, None),
                Step::Release,
            ],
        );
        let c = actor(
            "C",
            40,
            vec![
                Step::Acquire { retry_every: 4 },
                Step::Work { ms: 1 },
                debit(10, None),
                Step::Release,
            ],
        );
        Scenario {
            release: ReleaseMode::GetThenDel,
            ..account_scenario(
                "unsafe-release",
                "Release by GET then DEL",
                vec![a, b, c],
                100,
            )
        }
    }

    /// A sends its debit at t=5 with a 40 ms network delay and releases at once; B takes
    /// 34 at t=20 and debits at t=25; A's packet arrives at t=45. Nobody pauses.
    pub fn delayed_packet() -> Self {
        let mut a = actor(
            "A",
            0,
            vec![
                Step::Acquire { retry_every: 10 },
                Step::Work { ms: 5 },
                debit(10, None),
                Step::Release,
            ],
        );
        a.network_delay = 40;
        account_scenario(
            "delayed-packet",
            "Delayed packet",
            vec![a, headline_b()],
            100,
        )
    }

    /// The primary acknowledges A's lock (33, until t=30) and fails over at t=5 without
    /// having replicated it; B acquires at t=8 and gets 34 from the consensus-backed
    /// counter, debits at t=10; A debits with 33 at t=12. Two live leases from t=8 to t=30.
    pub fn redis_failover() -> Self {
        let a = writer("A", 0, 12, 5);
        let b = writer("B", 8, 2, 15);
        Scenario {
            failover_at: Some(5),
            ..account_scenario("redis-failover", "Redis failover", vec![a, b], 60)
        }
    }

    /// A works 60 ms (twice the TTL) while its watchdog renews every ~10 ms (jittered from
    /// `seed`); a 50 ms pause from t=35 stops the watchdog, the lease runs out, B takes 34
    /// and debits; A wakes at t=85, its renewal is refused and it self-cancels.
    pub fn renewal() -> Self {
        let mut a = actor(
            "A",
            0,
            vec![
                Step::Acquire { retry_every: 10 },
                Step::WorkRenewing { ms: 60 },
                debit(10, None),
                Step::Release,
            ],
        );
        a.pauses.push(pause(35, 50));
        Scenario {
            seed: 42,
            ..account_scenario(
                "renewal",
                "Renewal and self-cancel",
                vec![a, headline_b()],
                120,
            )
        }
    }

    /// A job scheduler in seconds: worker A runs invoice 7's payment job with token 41 and a
    /// 10 s lease, stalls from 1 s to 16 s; B gets the job with 42 at 10 s and the scheduler
    /// writes barrier 42 first. A wakes, charges the card (no token) and publishes with 41;
    /// B charges and publishes with 42 at 18 s. Fencing is same-epoch so that B's own
    /// publish passes the barrier it raised.
    pub fn handoff_barrier() -> Self {
        let charge = || Step::SideEffect {
            what: "charge the customer's card $100 (payment API)".to_owned(),
        };
        let mut a = actor(
            "A",
            0,
            vec![
                Step::Acquire { retry_every: 1_000 },
                Step::Work { ms: 1_000 },
                charge(),
                debit(100, None),
                Step::Release,
            ],
        );
        a.pauses.push(pause(1_000, 15_000));
        let b = actor(
            "B",
            10_000,
            vec![
                Step::Acquire { retry_every: 1_000 },
                Step::Barrier,
                Step::Work { ms: 8_000 },
                charge(),
                debit(100, None),
                Step::Release,
            ],
        );
        Scenario {
            id: "handoff-barrier".to_owned(),
            title: "Job handoff with a barrier".to_owned(),
            resource: "invoice:7".to_owned(),
            initial_balance: 100,
            first_fence: 41,
            lease_ttl: 10_000,
            policy: FencingPolicy::SameEpoch,
            actors: vec![a, b],
            horizon: 25_000,
            ..Scenario::default()
        }
    }

    /// The lock node's clock jumps 25 ms forward at t=10, so A's lease (33, granted until
    /// t=30) expires at once; B takes 34 at t=15 and debits at t=17; A, never paused,
    /// debits with 33 at t=20.
    pub fn clock_jump() -> Self {
        let a = writer("A", 0, 20, 5);
        let b = writer("B", 15, 2, 5);
        Scenario {
            lock_clock_jumps: vec![ClockJump { at: 10, by: 25 }],
            ..account_scenario("clock-jump", "Clock jump on the lock node", vec![a, b], 60)
        }
    }
}
