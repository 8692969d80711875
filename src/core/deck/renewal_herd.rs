//! The deck's `renewal-herd` entry: many holders renewing on one schedule. The timeline
//! shows one of them; the herd chart beside it, and these notes, show all of them.

use super::super::herd::{renewal_herd, HerdReport};
use super::*;

/// How many holders the entry's herd has: the seed's 10k jobs extending on one schedule.
pub const HERD_HOLDERS: usize = 10_000;

/// The span the herd is simulated over: four TTLs, a dozen renewal rounds.
pub fn herd_horizon(ttl: Millis) -> Millis {
    ttl.saturating_mul(4)
}

/// The entry's herd on `sc`'s TTL and seed, on a fixed schedule and with jitter.
pub fn renewal_herd_reports(sc: &Scenario) -> [HerdReport; 2] {
    let horizon = herd_horizon(sc.lease_ttl);
    [false, true].map(|jitter| renewal_herd(HERD_HOLDERS, sc.lease_ttl, jitter, sc.seed, horizon))
}

pub(super) const ENTRY: DeckEntry = DeckEntry {
    id: "renewal-herd",
    title: "The renewal herd",
    question:
        "Ten thousand jobs renew their leases on one schedule. What does the lock service see?",
    notes: |r| {
        let t = r.off();
        let [fixed, jittered] = renewal_herd_reports(&t.scenario);
        let ttl = t.scenario.lease_ttl;
        let renewed: Vec<String> = t
            .events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::Extended { .. }))
            .map(|e| e.at.to_string())
            .collect();
        let [off, strict, same] = r.balances();
        // Times scaled as seed 004 has them: each ms here is a second of a 30 s TTL.
        let every = ttl / 3;
        let average = fixed.holders as u64 / every.max(1);
        vec![
            format!("{} jobs, each holding its own lock on one lock service, renew every third of the TTL. Times scaled: {ttl} ms here stands for {ttl} s (seed 004's median TTL is about 30 s), so each ms below is a second. On average that is {average} renewals a second.", fixed.holders),
            format!("Started together (a deploy, a restart), on a fixed schedule all {} renew in the same instant, again every {every} s. With ±25% jitter the same work ({} renewals against {} in {} s) spreads out: the busiest second takes about {}, not {}. The chart beside the timeline draws both.", fixed.peak_per_ms, jittered.renewals, fixed.renewals, fixed.horizon, jittered.peak_per_ms, fixed.peak_per_ms),
            format!("Seed 004's cluster serves about 10k operations a second in all: the average adds {average} a second, but {} extends in one instant are a whole second's work at once. The extends at the back of the queue wait, and an extend answered after its lease ran out is a lost lease: the holder keeps working until it hears (partition).", fixed.peak_per_ms),
            format!("The timeline is one of those jobs: A's watchdog renews at t={}, each a little off the third, and B waits for A's release, then finds the job done: {off} off, {strict} strict, {same} same-epoch. The herd is a load problem, not a safety one, until a renewal comes back too late.", renewed.join(", ")),
            "Jitter each renewal (±25%) and stagger the first acquire when many jobs start together, as with cache TTLs and cron. Self-cancel on a failed extend, and keep the fence for a write already on its way.".to_owned(),
        ]
    },
    build: Scenario::renewal_herd,
    pushbacks: &[
        PushBack {
            question: "One lease per client, not one per lock.",
            answer: "That is how etcd and ZooKeeper work: many keys attach to one etcd lease and one keep-alive stream renews them all, and one ZooKeeper session's heartbeats keep all its ephemeral nodes. A process with 10k locks sends one renewal stream, not 10k; processes that start together still need jitter.",
            source: "etcd docs: lease; ZooKeeper docs: sessions",
            shows: None,
        },
        PushBack {
            question: "Use a longer TTL and renew less often.",
            answer: "Renewals fall in proportion, but takeover after a crash waits the whole TTL: recovery speed traded against lease churn. The spike comes from the shared schedule, not the rate, and jitter removes it at any TTL.",
            source: "seed 003 (trade-offs); seed 004",
            shows: None,
        },
    ],
};

impl Scenario {
    /// One job of the herd: A holds the lock for a 45 ms job while its watchdog renews
    /// every ~10 ms (jittered from the seed), debits and releases at t=45; B polls from
    /// t=40 every 10 ms, gets the lock at t=50 and finds the job done. Nobody pauses.
    pub fn renewal_herd() -> Self {
        let a = actor(
            "A",
            0,
            vec![
                Step::Acquire { retry_every: 10 },
                Step::CheckDone,
                Step::WorkRenewing { ms: 45 },
                debit(10, None),
                Step::Release,
            ],
        );
        let mut b = headline_b();
        b.start_at = 40;
        Scenario {
            seed: RENEWAL_SEED,
            ..job_scenario("renewal-herd", "The renewal herd", vec![a, b], 100)
        }
    }
}
