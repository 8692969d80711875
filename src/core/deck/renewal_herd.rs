//! The deck's `renewal-herd` entry: many holders renewing on one schedule. The timeline
//! shows one of them; the herd chart beside it, and these notes, show all of them.

use super::super::herd::{renewal_herd, HerdReport};
use super::super::scenario::Herd;
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

/// The entry's fleet: the seed's 10k jobs, renewing 3 s before their 30 s leases end, on a
/// lock service that answers 2,000 commands a second: an assumed capacity (etcd v3
/// keep-alives do not go through Raft, so no write benchmark sizes them). Times scaled: 1 ms
/// is 1 s.
pub const FLEET: Herd = Herd {
    holders: HERD_HOLDERS as u32,
    per_ms: 2_000,
    renew_before: 3,
};

pub(super) const ENTRY: DeckEntry = DeckEntry {
    id: "renewal-herd",
    title: "The renewal herd",
    question:
        "Ten thousand jobs renew their leases on one schedule. What does the lock service see?",
    notes: |r| {
        let t = r.off();
        let [fixed, jittered] = renewal_herd_reports(&t.scenario);
        let (ttl, herd) = (t.scenario.lease_ttl, FLEET);
        let n = |v: u64| thousands(v);
        let (holders, rate) = (u64::from(herd.holders), u64::from(herd.per_ms));
        let (at, drain) = (herd.instant(ttl), herd.drain());
        let in_time = (rate * herd.renew_before).min(holders);
        let [off, strict, same] = r.balances();
        let third = ttl / 3;
        vec![
            format!("The fleet: {} jobs took their locks together (a deploy) on one lock service, each a {ttl} s lease, and renew on one fixed schedule, {} s before each lease ends. Times scaled: {ttl} ms here stands for {ttl} s. All {} renewals reach the service in the same second, t={at}.", n(holders), herd.renew_before, n(holders)),
            format!("The model assumes the service answers {} commands a second, one after another: the instant's queue takes {drain} s. A real fleet's renewals queue like this when the service slows against the fixed schedule: an overloaded leader or an fsync stall holds every renewal due meanwhile. Only the first {} renewals are answered within the {} s their leases had left; the other {} leases are lost at once. A's, the last, is answered at t={}, {} s after its lease ended.", n(rate), n(in_time), herd.renew_before, n(holders - in_time), at + drain, at + drain - ttl),
            format!("B, another worker for the same order, asks at t=29 and waits behind the queue too: at t={} A's lease is gone, and B gets 34 and debits. A's watchdog hears at t={0} and stops renewing, but nothing tells A's worker (Redisson's watchdog only stops renewing; etcd's Session.Done() closes, but the worker must check it): A debits with 33 at t=35. {off} off (the job ran twice), {strict} strict, {same} same-epoch: storage has seen 34.", at + drain),
            format!("The harm is the queue against the time left: {drain} s of queue, {} s of lease. Renew at a third of the TTL and {} s are left, twice the {third} s between renewals, so a queue that drains before the next round never outlasts a lease. With ±25% jitter the fleet's renewals spread over {} s: the chart beside the timeline (renewals at a third of the TTL) peaks at {} a second, not {}.", herd.renew_before, ttl - third, third / 2, n(u64::from(jittered.peak_per_ms)), n(u64::from(fixed.peak_per_ms))),
            "Fix the schedule (a third of the TTL, jittered; stagger first acquires, as with cache TTLs and cron) and self-cancel on a failed extend. A write made before the worker checks still needs the fence.".to_owned(),
        ]
    },
    build: Scenario::renewal_herd,
    pushbacks: &[
        PushBack {
            question: "Our lock service does 30,000 a second: this cannot happen.",
            answer: "At 30,000 a second the 10,000 take a third of a second, inside a 3 s margin. The same schedule loses leases from about 90,000 jobs, or whenever the service slows (an overloaded leader, an fsync stall). The rule holds at any rate: the queue must drain before the earliest lease ends, and renewing at a third of the TTL leaves 20 s.",
            source: "etcd docs: op-guide/performance; etcd docs: tuning (disk)",
            shows: None,
        },
        PushBack {
            question: "One lease per client, not one per lock.",
            answer: "That is how etcd and ZooKeeper work: many keys attach to one etcd lease and one keep-alive stream renews them all, and one ZooKeeper session's heartbeats keep all its ephemeral nodes. A process with 10k locks sends one renewal stream, not 10k; processes that start together still need jitter.",
            source: "etcd docs: lease; ZooKeeper docs: sessions",
            shows: None,
        },
        PushBack {
            question: "Use a longer TTL and renew less often.",
            answer: "Renewals fall in proportion, but takeover after a crash waits the whole TTL: recovery speed traded against lease churn. The harm comes from renewing late on a shared schedule; Redisson's watchdog renews every third of its 30 s lockWatchdogTimeout.",
            source: "Redisson docs: lockWatchdogTimeout; seed 004",
            shows: None,
        },
    ],
};

/// A count with thousands separated: "9,999".
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(d);
    }
    out
}

impl Scenario {
    /// One job of the fleet ([`FLEET`]): A holds the lock for a 35 ms job while its watchdog
    /// renews on the fleet's schedule, at t=27; the service answers it at t=32, after A's
    /// lease ended at 30, and A's worker, not told, debits at t=35. B asks at t=29, waits
    /// behind the queue, gets the lock at t=32 and debits at t=33.
    pub fn renewal_herd() -> Self {
        let a = actor(
            "A",
            0,
            vec![
                Step::Acquire { retry_every: 10 },
                Step::CheckDone,
                Step::WorkRenewing { ms: 35 },
                debit(10, None),
                Step::Release,
            ],
        );
        let b = writer("B", 29, 1, 5);
        Scenario {
            seed: RENEWAL_SEED,
            lock: LockKind::Service(ServiceOptions {
                herd: Some(FLEET),
                ..ServiceOptions::default()
            }),
            ..job_scenario("renewal-herd", "The renewal herd", vec![a, b], 100)
        }
    }
}
