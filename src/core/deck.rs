//! The scenario deck: one entry per interviewer follow-up, each a real scenario for the
//! same engine. The UI lists the deck and runs whichever entry is picked; all the scenario
//! logic is here and in the engine, none of it in the UI.
//!
//! Every builder sets `Scenario::id` to its entry's id, so a trace (or a shared URL) knows
//! which entry it came from.

use super::clock::Millis;
use super::engine::run;
use super::ledger::{FencingPolicy, StorageCheck, WriteError};
use super::scenario::{
    Actor, ClockJump, Partition, Pause, PauseCause, RedlockSetup, ReleaseMode, RowLock, Scenario,
    Step, TokenSource, IDLE_IN_TRANSACTION_TIMEOUT,
};
use super::story;
use super::trace::{EventKind, Trace};
use serde::Serialize;

/// One scenario of the deck, with what to say while it plays.
#[derive(Debug, Clone, Copy)]
pub struct DeckEntry {
    /// URL-safe slug, e.g. `"gc-pause"`; also stored in the built scenario's `id`.
    pub id: &'static str,
    pub title: &'static str,
    /// The interviewer follow-up this entry answers.
    pub question: &'static str,
    /// What to say out loud, 3–5 points, written from the entry's three runs (off, strict,
    /// same-epoch, as [`runs`] returns them) so every figure in them is computed.
    pub notes: fn(&Runs) -> Vec<String>,
    /// Builds the scenario (with its default fencing policy).
    pub build: fn() -> Scenario,
}

/// A deck entry run under off, strict and same-epoch.
pub struct Runs(pub [Trace; 3]);

impl Runs {
    pub fn off(&self) -> &Trace {
        &self.0[0]
    }
    pub fn strict(&self) -> &Trace {
        &self.0[1]
    }
    pub fn same_epoch(&self) -> &Trace {
        &self.0[2]
    }
    /// Final balances off / strict / same-epoch.
    fn balances(&self) -> [i64; 3] {
        [0, 1, 2].map(|i| self.0[i].summary.final_balance)
    }
    /// The `n`th token handed out in the strict run (0-based), as text: by a grant, or by
    /// a separate counter after one.
    fn token(&self, n: usize) -> String {
        self.strict()
            .events
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::Acquired {
                    fence,
                    token_later: false,
                    ..
                }
                | EventKind::TokenTaken { fence } => Some(fence.to_string()),
                _ => None,
            })
            .nth(n)
            .unwrap_or_default()
    }
}

/// Every deck entry, in presentation order.
pub static DECK: &[DeckEntry] = &[
    DeckEntry {
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
    },
    DeckEntry {
        id: "toctou",
        title: "Check is_held first",
        question: "Why not just check that you still hold the lock right before writing?",
        notes: |r| {
            let [off, strict, _] = r.balances();
            let a = r.token(0);
            vec![
                "A checks is_held and gets true, then the pause lands between the check and the write.".to_owned(),
                "Check-then-act is a TOCTOU race: true now says nothing about a moment later.".to_owned(),
                "No check placed on the client can close the gap; the pause can always land after it.".to_owned(),
                format!("Fencing off: {off}, the job ran twice. Strict: A's {a} is stale_fence, {strict}. The check has to be at the storage."),
            ]
        },
        build: Scenario::toctou,
    },
    DeckEntry {
        id: "same-token-retry",
        title: "Retry with the same token",
        question: "What if the reply is lost and the client retries? Is the token enough?",
        notes: |r| {
            let [off, strict, same] = r.balances();
            let a = r.token(0);
            vec![
                format!("A's debit pay-1 lands, the reply is lost, A retries: same token {a}, same key pay-1."),
                format!("Strict refuses the retry as stale_fence ({a} is not > {a}), and A cannot tell whether pay-1 landed: this storage checks the fence before the key, so the refusal is ambiguous. Same-epoch admits the token; the key returns the original result, so A learns it landed. A storage that looked the key up first would answer the retry under strict too."),
                format!("The key dedupes even with fencing off: it is the intent's identity, not a fence. Every column ends at {off}, {strict}, {same}: charged once."),
                "Which rule: same-epoch (≥) when a grant makes several writes (a retry, the barrier's own epoch), with an idempotency key per write; strict (>) only when each grant makes one write and retries are deduped by key before the fence check.".to_owned(),
                "Tokens order lock generations; keys dedupe intents. You need both: a stale holder's new intent is the fence's to refuse (gc-pause).".to_owned(),
            ]
        },
        build: Scenario::same_token_retry,
    },
    DeckEntry {
        id: "unsafe-release",
        title: "Release by GET then DEL",
        question: "How do you release the lock? Is GET, compare, then DEL fine?",
        notes: |r| {
            let [off, strict, _] = r.balances();
            let (b, c) = (r.token(1), r.token(2));
            vec![
                format!("A GETs the key, sees its own value, then pauses before the DEL; its lease expires and B takes {b} and starts order 1."),
                format!("A wakes and DELs unconditionally: it deletes B's live lease, so C takes {c} while B still works. The harm: two holders at once, B and C, both running order 1."),
                format!("Off: both charge ({off}), a double charge. Fencing on: C wrote with {c} first, so B's late {b} is stale_fence ({strict}): the fence contains the damage, it does not restore B's lease."),
                {
                    let cad = run(&Scenario {
                        release: ReleaseMode::CompareAndDelete,
                        ..Scenario::unsafe_release()
                    });
                    format!(
                        "What if… Release: compare-and-delete. One atomic script: A's release completes before its pause, and a late one would see B's value and delete nothing. No conflict, {} under every policy.",
                        cad.summary.final_balance
                    )
                },
            ]
        },
        build: Scenario::unsafe_release,
    },
    DeckEntry {
        id: "delayed-packet",
        title: "Delayed request",
        question: "No pauses then: is the lease safe if the client never stalls?",
        notes: |r| {
            let [off, strict, _] = r.balances();
            let (a, b) = (r.token(0), r.token(1));
            let timeout = run(&Scenario::with_request_timeout(r.off().scenario.clone(), 10));
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
    },
    DeckEntry {
        id: "redis-failover",
        title: "Redis failover",
        question: "What if the Redis primary fails over? Use Redis replication for HA?",
        notes: |r| {
            let [off, strict, same] = r.balances();
            let (a, b) = (r.token(0), r.token(1));
            vec![
                "The primary acknowledges A's SET, then crashes before replicating it; the promoted replica has no key.".to_owned(),
                "B acquires the same key: the lock service itself has now granted it twice, and both grants are unexpired: not just two believers.".to_owned(),
                format!("The token came from INCR on the same Redis, so the counter rolled back too: A has {a} and B gets {b}. Storage cannot tell them apart."),
                format!("Off: {off}. Strict refuses the second equal token ({strict}) — by luck of arrival order. Same-epoch admits both: {same}, the job ran twice."),
                {
                    let etcd = run(&Scenario {
                        token_source: TokenSource::LockService,
                        ..Scenario::redis_failover()
                    });
                    format!(
                        "What if… tokens from etcd / ZooKeeper: lease and token survive the leader change, B waits and finds the job done ({} under every policy). That fixes the failover only: a pause or a partition still needs the fence.",
                        etcd.summary.final_balance
                    )
                },
            ]
        },
        build: Scenario::redis_failover,
    },
    DeckEntry {
        id: "separate-counter",
        title: "Token from a separate counter",
        question: "Why not SET the lock, then INCR a fencing counter kept somewhere safe?",
        notes: |r| {
            let [off, strict, _] = r.balances();
            let (first, second) = (r.token(0), r.token(1));
            vec![
                "A's SET NX PX answers OK; its INCR on the separate counter is one more round trip, and A freezes in between.".to_owned(),
                format!("A's lease expires; B's SET answers OK and B's INCR runs first: B gets {first}."),
                format!("A wakes and INCRs: {second}. The older lease now carries the newer token."),
                format!("Strict: A's write with {second} lands first, and B, the real holder, is refused stale_fence with {first} ({strict}). Off: both land ({off})."),
                "Take the token in the same atomic step as the grant (the acquire script's INCR, an etcd revision), never after it.".to_owned(),
            ]
        },
        build: Scenario::separate_counter,
    },
    DeckEntry {
        id: "renewal",
        title: "Renewal and self-cancel",
        question: "Long jobs outlive the TTL. How do you renew, and what if renewal fails?",
        notes: |r| {
            let [off, _, _] = r.balances();
            let b = r.token(1);
            let worker = run(&Scenario {
                seed: RENEWAL_WORKER_SEED,
                ..r.off().scenario.clone()
            });
            let fenced = run(&Scenario {
                seed: RENEWAL_WORKER_SEED,
                ..r.strict().scenario.clone()
            });
            vec![
                "A's watchdog renews at about a third of the TTL with ±25% jitter, checking ownership atomically.".to_owned(),
                format!("The pause lands after the last good renewal; the lease runs out and B takes {b} and charges."),
                format!("A wakes with its work done and a renewal overdue: worker and watchdog race. Here the watchdog runs first, the extend answers 0 and the job self-cancels ({off} off). What if… the worker runs first (another seed): its debit lands, {} off, {} strict.", worker.summary.final_balance, fenced.summary.final_balance),
                "Self-cancel on a failed renewal stops the rest of a job; it cannot stop a write that is already on its way. That needs the fence.".to_owned(),
                "Jitter matters at scale: holders renewing on a fixed schedule hit the lock server in the same millisecond.".to_owned(),
            ]
        },
        build: Scenario::renewal,
    },
    DeckEntry {
        id: "handoff-barrier",
        title: "Job handoff with a barrier",
        question:
            "A scheduler reassigns a stuck job. How do you stop the old worker's late result?",
        notes: |r| {
            let (a, b) = (r.token(0), r.token(1));
            vec![
                format!("A runs job 7 with token {a} and a 10 s lease, then its whole process freezes for 15 s (a long collector pause or a VM freeze); the scheduler hands the job to B with {b}."),
                format!("Before B starts, the scheduler establishes epoch {b} in the job's result row, with an atomic update that cannot lower it; B then publishes with a conditional write requiring epoch {b}."),
                format!("A wakes and publishes its result with {a}: rejected stale_fence under strict and same-epoch, even though B has not published yet. Off, A's result lands and B's overwrites it: a duplicate publish."),
                "A's late result is a different write, not a repeat of B's: no idempotency key on the job catches it. Only the fence does.".to_owned(),
                {
                    let bare = run(&Scenario {
                        skip_barrier: true,
                        ..Scenario::handoff_barrier()
                    });
                    format!(
                        "Strict (>) spends the barrier: B's own write with {b} is refused too, so use same-epoch (≥) here, with an idempotency key per write. What if… no barrier: A's {a} reaches the row before B's {b} and passes the check ({}).",
                        story::outcome(&bare)
                    )
                },
            ]
        },
        build: Scenario::handoff_barrier,
    },
    DeckEntry {
        id: "clock-jump",
        title: "Redlock and a clock jump",
        question: "Redlock uses five nodes and a majority. Is that safe without fencing?",
        notes: |r| {
            let [off, strict, _] = r.balances();
            let a = r.token(0);
            vec![
                "Five Redis nodes; A reaches nodes 1–3 and locks a majority. B reaches only nodes 3–5 and backs off with 2 of 5.".to_owned(),
                "Node 3's clock jumps 25 ms forward: A's key there expires, though A's own clock says its lock runs until t=30.".to_owned(),
                "B now gets nodes 3–5, a majority. Node 3 counted in both majorities: A and B both believe they hold the lock, and neither paused.".to_owned(),
                format!("Off: {off}, the job ran twice. Redlock mints no token, so that is what really happens."),
                format!("The strict column is counterfactual: with a token minted in the same step as each grant (an etcd revision, a ZooKeeper czxid), A's {a} would be stale_fence ({strict}). Kleppmann's point: Redlock cannot give you that token, and a counter INCRed after the grant is no substitute (separate-counter)."),
            ]
        },
        build: Scenario::clock_jump,
    },
    DeckEntry {
        id: "uuid-token",
        title: "A random value as the token",
        question: "Why not use the lock's random value (a UUID) as the fencing token?",
        notes: |r| {
            let [off, strict, same] = r.balances();
            let (a, b) = (r.token(0), r.token(1));
            let fence = |t: &Trace| {
                t.summary
                    .last_fence
                    .map_or_else(|| "none".to_owned(), |f| f.to_string())
            };
            let base = || r.strict().scenario.clone();
            let other = run(&Scenario {
                seed: UUID_OTHER_SEED,
                ..base()
            });
            let draws: Vec<String> = other
                .events
                .iter()
                .filter_map(|e| match e.kind {
                    EventKind::Acquired { fence, .. } => {
                        Some(format!("{} {fence}", e.actor.clone().unwrap_or_default()))
                    }
                    _ => None,
                })
                .collect();
            let first = run(&base().with_pause(
                0,
                Pause {
                    start: 5,
                    duration: 26,
                },
            ));
            let refused = first
                .writes
                .iter()
                .find(|w| !w.accepted())
                .map_or_else(String::new, |w| w.request.writer.clone());
            vec![
                format!("The headline schedule, but each client's token is the random value it SETs (a UUID in production): A drew {a}, B drew {b}. Unique, not ordered."),
                format!("Fencing off: both debits land, balance {off}: the double charge of the headline. The random value changed nothing."),
                format!("Strict and same-epoch compare {b} with A's late {a}: A's is larger, so storage accepts the superseded write by luck of the draw (strict {strict}, same-epoch {same}; last fence {}).", fence(r.strict())),
                format!("Another draw ({}): A's late debit is refused ({}) — the right answer by the same luck. Back to the first draw (A {a}, B {b}), with A's pause ending at t=31: A's stale write lands first and {refused}, the real holder, is refused stale_fence ({}).", draws.join(", "), other.summary.final_balance, first.summary.final_balance),
                "A random value is an owner ID: it makes compare-and-delete safe. A fencing token is a number that only goes up, minted with the grant.".to_owned(),
            ]
        },
        build: Scenario::uuid_token,
    },
    DeckEntry {
        id: "claim-row",
        title: "Fenced claim row before a provider call",
        question: "The payment provider never sees your token. How do you stop a stale worker charging the card?",
        notes: |r| {
            let (a, b) = (r.token(0), r.token(1));
            let claim = |t: &Trace| story::final_value(t);
            let provider = |t: &Trace| (t.summary.provider_charges, t.summary.provider_deduped);
            let (off_c, off_d) = provider(r.off());
            let (on_c, on_d) = provider(r.strict());
            vec![
                format!("Before calling the provider, the job writes a claim row carrying its token, a conditional write like any fenced write; it calls only if the claim is accepted. A has {a}, B has {b}."),
                format!("Fencing off: A wakes after B has charged, its claim lands too (the row now says “{}”), and A calls the provider as well: {} charge, {} call deduped by the idempotency key “{}”.", claim(r.off()), off_c, off_d, PROVIDER_KEY),
                format!("Strict: storage has seen {b}, A's late claim with {a} is stale_fence, and A never calls: {on_c} charge, {on_d} deduped. The row says “{}”.", claim(r.strict())),
                "The idempotency key says \"this intent runs once\": it saved the card with fencing off, but it cannot tell an old lock generation from a new one. The fence says \"this generation may write\": it cannot reach the provider, so it guards the claim row in front of it.".to_owned(),
                "You want both: the fence on the claim stops a holder that is already stale when it claims; the key stops a retry from charging twice, and a holder that went stale between its claim and its call.".to_owned(),
            ]
        },
        build: Scenario::claim_row,
    },
    DeckEntry {
        id: "lock-delay",
        title: "Chubby-style lock-delay",
        question: "Chubby waits a lock-delay before re-granting a lapsed lock. Does that make the lease safe?",
        notes: |r| {
            let [off, strict, _] = r.balances();
            let (a, b) = (r.token(0), r.token(1));
            let sc = r.off().scenario.clone();
            let (ttl, delay) = (sc.lease_ttl, sc.lock_delay);
            let pause = sc.actors[0].pauses.first().map_or(0, |p| p.duration);
            let granted = r
                .off()
                .events
                .iter()
                .find(|e| matches!(e.kind, EventKind::Acquired { .. }) && e.actor.as_deref() == Some("B"))
                .map_or(0, |e| e.at);
            // A pause shorter than TTL + lock-delay, with and without the delay (fencing off).
            let short = Pause { start: 5, duration: LOCK_DELAY_SHORT_PAUSE };
            let with = run(&sc.clone().with_pause(0, short));
            let without = run(&Scenario { lock_delay: 0, ..sc.with_pause(0, short) });
            vec![
                format!("A's lease ({ttl} ms, token {a}) lapses in a GC pause, without a release. The lock server then grants the lock to nobody for a lock-delay of {delay} ms, so B gets it only at t={granted}, with {b}."),
                format!("Narrower: a {} ms pause with fencing off is harmless with the delay (A writes before anyone else holds the lock and B finds the job done: {}), a double charge without it ({}).", LOCK_DELAY_SHORT_PAUSE, with.summary.final_balance, without.summary.final_balance),
                format!("Not closed: this pause is {pause} ms, longer than TTL + lock-delay ({} ms). Fencing off, A's late debit lands after B's: {off}, the job ran twice.", ttl + delay),
                format!("Fencing still rejects it: storage has seen {b}, A's {a} is stale_fence ({strict}). Chubby offers sequencers (tokens) to servers that can check them, and lock-delay only as the imperfect fallback for those that cannot."),
                "Lock-delay is for resources that cannot check a token: it buys time, not safety. Redis has none: SET NX succeeds the moment the key expires.".to_owned(),
            ]
        },
        build: Scenario::lock_delay,
    },
    DeckEntry {
        id: "efficiency",
        title: "Efficiency or correctness?",
        question: "Is your lock for efficiency or for correctness?",
        notes: |r| {
            let (a, b) = (r.token(0), r.token(1));
            let off = &r.off().summary;
            let report = story::final_value(r.off());
            let headline = runs(find("gc-pause").expect("gc-pause is in the deck"));
            vec![
                "Kleppmann's first question: is the lock for efficiency (a second run only wastes work) or for correctness (a second run corrupts data)?".to_owned(),
                format!("Same schedule as the headline: A takes {a}, freezes in a GC pause past its TTL, B takes {b}, finds the report not built yet and rebuilds it; A wakes and rebuilds it too."),
                if off.duplicate_runs > 0 {
                    format!("Fencing off: {} rebuilds landed, the job ran twice, and the row holds \"{report}\" either way: {} of them rewrote the value already there. Wasted work, no harm.", off.accepted_writes, off.harmless_reruns)
                } else {
                    format!("Fencing off: only one rebuild landed (\"{report}\"); nothing ran twice in this schedule.")
                },
                format!("Contrast gc-pause: the same pause with a debit is a double charge, {} instead of {}. The job, not the lock, decides whether a duplicate matters.", headline.off().summary.final_balance, headline.strict().summary.final_balance),
                format!("Fencing still works here (strict: {}), but it buys little: Kleppmann's best-effort lock is enough when a duplicate only costs work, as here, where every run computes the same value from the same input and the second only overwrites it.", story::outcome(r.strict())),
            ]
        },
        build: Scenario::efficiency,
    },
    DeckEntry {
        id: "drift-margin",
        title: "Client clock drift margin",
        question: "The client's clock runs slow. Is stopping at TTL − a margin safe?",
        notes: |r| {
            let sc = r.off().scenario.clone();
            let (ttl, margin, drift) = (sc.lease_ttl, sc.deadline_margin, sc.client_drift);
            let covers = ttl * drift / 1000;
            let [off, ..] = r.balances();
            let mut notes = vec![format!(
                "A's clock runs {} slow against the lock server's, exaggerated for visibility (real quartz drifts by tens of ppm, and NTP slews a clock by at most 500 ppm): it counts {} ms while 1000 pass. A {ttl} ms lease (token {}) looks longer to A than it is.",
                super::story::per_mille(drift),
                super::scenario::client_elapsed(1000, drift),
                r.token(0)
            )];
            let (at, local, deadline, ok) = deadline_check(r.off());
            notes.push(if ok {
                format!("Here A checks at t={at}: its clock reads {local} of {deadline} ms (TTL − {margin} ms), so it writes: {off} with fencing off. A margin under TTL × drift ({covers} ms) does not cover the drift.")
            } else {
                format!("Here A checks at t={at}: its clock reads {local} ms, past its deadline of {deadline} ms (TTL − {margin} ms), so it stops: {off} under every policy. A margin of at least TTL × drift ({covers} ms) covers the drift.")
            });
            // The same run without a margin, and the same client with a pause after a check.
            let bare = Scenario { deadline_margin: 0, ..sc.clone() };
            let [bare_off, bare_on] = [FencingPolicy::Off, FencingPolicy::Strict]
                .map(|p| run(&bare.clone().with_policy(p)).summary.final_balance);
            let late_at = run(&bare)
                .writes
                .iter()
                .find(|w| w.request.writer == sc.actors[0].name)
                .map_or(0, |w| w.at);
            if margin > 0 && late_at > ttl {
                notes.push(format!(
                    "What if… no margin (margin=0): its deadline is the TTL, {ttl} ms, so it writes at t={late_at}, {} ms after its lease ran out: {bare_off} with fencing off, {bare_on} with the fence.",
                    late_at - ttl
                ));
            }
            let paused = Scenario::drift_margin_pause_after_check(&sc);
            let [p_off, p_on] = [FencingPolicy::Off, FencingPolicy::Strict]
                .map(|p| run(&paused.clone().with_policy(p)).summary.final_balance);
            let (p_at, p_local, p_deadline, _) = deadline_check(&run(&paused));
            let frozen = paused.actors[0].pauses.first().map_or(0, |p| p.duration);
            notes.push(format!(
                "What the margin cannot fix: a GC pause after a check that passes (A checks at t={p_at}, its clock {p_local} of {p_deadline} ms, then freezes for {frozen} ms). Fencing off, its late debit lands: {p_off}, the job ran twice; the fence refuses it: stale_fence ({p_on}). A margin bounds drift; a pause after the check is unbounded, so the fence is still needed."
            ));
            notes.push("Redlock clients do the same: the validity time subtracts a drift allowance (TTL × 0.01 + 2 ms in the common implementations). It bounds drift, not pauses or late packets.".to_owned());
            notes
        },
        build: Scenario::drift_margin,
    },
    DeckEntry {
        id: "sequencer",
        title: "Sequencer check with the lock service",
        question: "Storage hasn't seen the newer token yet. Can it still refuse the stale holder?",
        notes: |r| {
            let (a, b) = (r.token(0), r.token(1));
            let [off, strict, same] = r.balances();
            let at = |t: &Trace, who: &str| t.writes.iter().find(|w| w.request.writer == who).map_or(0, |w| w.at);
            let granted = r
                .strict()
                .events
                .iter()
                .find(|e| matches!(e.kind, EventKind::Acquired { .. }) && e.actor.as_deref() == Some("B"))
                .map_or(0, |e| e.at);
            let code = |t: &Trace| {
                t.writes
                    .iter()
                    .find(|w| w.request.writer == "A")
                    .map_or("ok", |w| w.result.as_ref().err().map_or("ok", WriteError::code))
            };
            // The same schedule with only the highest-token check.
            let plain = |t: &Trace| run(&Scenario { check: StorageCheck::HighestToken, ..t.scenario.clone() });
            let (p_strict, p_same) = (plain(r.strict()), plain(r.same_epoch()));
            let woke = r.off().scenario.actors[0].pauses.first().map_or(0, |p| p.end());
            let expired = r
                .off()
                .events
                .iter()
                .find(|e| matches!(e.kind, EventKind::LeaseExpired { .. }))
                .map_or(0, |e| e.at);
            let word = |c: &'static str| if c == "ok" { "accepted" } else { c };
            let both_took = code(&p_strict) == "ok" && code(&p_same) == "ok";
            vec![
                format!("A's GC pause ends at t={woke} this time: A's lease (token {a}) ran out at t={expired} and B got {b} at t={granted}, but A's debit reaches storage at t={}, before B's at t={}.", at(r.off(), "A"), at(r.off(), "B")),
                format!(
                    "Highest token alone, this schedule: A's {a} is {} under strict ({}) and {} under same-epoch ({}).{}",
                    word(code(&p_strict)),
                    p_strict.summary.final_balance,
                    word(code(&p_same)),
                    p_same.summary.final_balance,
                    if both_took { format!(" Storage has not seen {b} yet, so nothing tells it A was superseded; B's debit lands too.") } else { String::new() }
                ),
                format!("Sequencer check: storage also asks the lock service whether A's lease is still the live one. B holds {b}, so A's {a} is {} (strict {strict}, same-epoch {same}), though storage never saw {b}. Fencing off checks nothing, sequencer included: {off}.", code(r.strict())),
                "The price: a round trip to the lock service per protected write (or a session keeping a cache of the lock coherent, as Chubby's servers may), and a write now fails whenever storage cannot reach the lock service.".to_owned(),
                "The model checks and applies at one instant. A real resource applies a moment after the answer, and a lease that lapses in between still lands: the check narrows the window to that gap. A check in the write's own transaction (an etcd Txn comparing the lock key's create revision, when etcd is the resource) has none.".to_owned(),
            ]
        },
        build: Scenario::sequencer,
    },
    DeckEntry {
        id: "partition",
        title: "Network partition",
        question: "The holder is cut off from the lock service, but not from storage. What breaks?",
        notes: |r| {
            let [off, strict, _] = r.balances();
            let (a, b) = (r.token(0), r.token(1));
            let t = r.off();
            let sc = t.scenario.clone();
            let p = sc.partition.unwrap_or(Partition { actor: 0, start: 0, end: 0 });
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
                .find(|e| matches!(e.kind, EventKind::Acquired { .. }) && e.actor.as_deref() == Some("B"))
                .map_or(0, |e| e.at);
            let learned = at(|k| matches!(k, EventKind::LockTimedOut { .. }), "A");
            let wrote = t.writes.iter().find(|w| w.request.writer == "A").map_or(0, |w| w.at);
            let timeout = sc.actors[0].lock_timeout.unwrap_or(0);
            // What if A's client gave up sooner, with and without a debit already on the wire.
            let off_run = |sc: Scenario| run(&sc.with_policy(FencingPolicy::Off));
            let quick = off_run(Scenario::partition_with(PARTITION_QUICK_TIMEOUT, None));
            let in_flight = || Scenario::partition_with(PARTITION_QUICK_TIMEOUT, Some(PARTITION_IN_FLIGHT));
            let sent = off_run(in_flight());
            let sent_strict = run(&in_flight().with_policy(FencingPolicy::Strict));
            let quick_stop = quick
                .events
                .iter()
                .find(|e| matches!(e.kind, EventKind::LockTimedOut { .. }))
                .map_or(0, |e| e.at);
            let landed = sent.writes.iter().find(|w| w.request.writer == "A").map_or(0, |w| w.at);
            // A's own deadline, counted from its last acknowledged renewal.
            let deadline = off_run(Scenario::partition_deadline());
            let stopped = deadline
                .events
                .iter()
                .find(|e| matches!(e.kind, EventKind::DeadlineChecked { ok: false, .. }))
                .map_or(0, |e| e.at);
            // The opposite choice: a lease that outlasts the partition.
            let long = run(&Scenario { lease_ttl: PARTITION_LONG_TTL, ..sc.clone() });
            let waits = long
                .events
                .iter()
                .filter(|e| matches!(e.kind, EventKind::AcquireRefused { .. }) && e.actor.as_deref() == Some("B"))
                .count();
            let long_grant = long
                .events
                .iter()
                .find(|e| matches!(e.kind, EventKind::Acquired { .. }) && e.actor.as_deref() == Some("B"))
                .map(|e| e.at);
            let first_try = sc.actors[1].start_at;
            vec![
                format!("A partition is not a pause: from t={} to t={} A is cut off from the lock service, not from storage, and keeps running. Its watchdog's renewal at t={renewed} got through; the one at t={lost} is dropped: no reply.", p.start, p.end),
                format!("The lock service cannot tell a cut-off holder from a dead one: A's lease ({a}) runs out at t={expired} and B gets {b} at t={granted} (availability). A debits with {a} at t={wrote}: fencing off it lands too, {off}, the job ran twice; strict refuses it as stale_fence, {strict}."),
                format!("A learned at t={learned}, when its {timeout} ms timeout gave up on the renewal sent at t={lost}: {} ms after its lease ended, {} ms after its write. With a {PARTITION_QUICK_TIMEOUT} ms timeout (under the {} ms left on the lease) it stops at t={quick_stop}, before writing ({} with fencing off), unless its debit is already on the wire (sent at t={PARTITION_IN_FLIGHT}, landing at t={landed}): {} off, {} strict.", learned.saturating_sub(expired), learned.saturating_sub(wrote), expired.saturating_sub(lost), quick.summary.final_balance, sent.summary.final_balance, sent_strict.summary.final_balance),
                format!("No reply needed: A's last acknowledged renewal was sent at t={renewed}, so it can count on its lease only until t={} (the lock service started that TTL no earlier). A deadline check before the debit (drift-margin's) stops it at t={stopped}: {} with fencing off. It cannot cover a pause or a slow packet after the check.", renewed + sc.lease_ttl, deadline.summary.final_balance),
                match long_grant {
                    Some(g) => format!("The opposite choice, a lease that outlasts the partition ({} s): B is refused {waits} times and gets the lock only at t={g}, after the partition heals at t={} and A's release gets through. Safe, fencing off ({}), but B is locked out for {} ms: a lease that never runs out waits for its holder, cut off or dead.", PARTITION_LONG_TTL / 1000, p.end, long.summary.final_balance, g.saturating_sub(first_try)),
                    None => format!("The opposite choice, a lease that outlasts the partition ({} s): B is refused {waits} times and never gets the lock in this run ({}).", PARTITION_LONG_TTL / 1000, long.summary.final_balance),
                },
            ]
        },
        build: Scenario::partition,
    },
    DeckEntry {
        id: "row-lock",
        title: "SELECT … FOR UPDATE as the lock",
        question: "Why not lock the row itself in Postgres, with SELECT … FOR UPDATE?",
        notes: |r| {
            let [off, strict, same] = r.balances();
            let sc = r.strict().scenario.clone();
            let ttl = sc.lease_ttl;
            let t = r.strict();
            let ended = t
                .events
                .iter()
                .find(|e| matches!(e.kind, EventKind::LeaseExpired { .. }))
                .map_or(0, |e| e.at);
            let refused = t
                .writes
                .iter()
                .find(|w| !w.accepted())
                .map_or_else(String::new, |w| format!("at t={}", w.at));
            let no_timeout = run(&Scenario {
                row_lock: Some(RowLock {
                    idle_timeout: false,
                }),
                ..sc.clone()
            });
            let slow = run(&Scenario::row_lock_slow_job(&sc));
            let slow_failed = slow
                .writes
                .iter()
                .find(|w| !w.accepted())
                .map_or_else(String::new, |w| w.request.writer.clone());
            let slow_work = Scenario::row_lock_slow_job(&sc).actors[0]
                .script
                .iter()
                .find_map(|s| match s {
                    Step::Work { ms } => Some(*ms),
                    _ => None,
                })
                .unwrap_or(0);
            let no_timeout_wait = row_lock_wait(&no_timeout, "B");
            let commit = no_timeout
                .events
                .iter()
                .find(|e| e.actor.as_deref() == Some("A") && matches!(e.kind, EventKind::Released { .. }))
                .map_or(0, |e| e.at);
            vec![
                format!("The lock is the account's own row: A runs SELECT … FOR UPDATE in the PostgreSQL that holds the balance and freezes in a GC pause; B's SELECT … FOR UPDATE is not refused, it waits in the row's lock queue. With idle_in_transaction_session_timeout = {ttl} ms, PostgreSQL terminates A's session at t={ended} ({IDLE_IN_TRANSACTION_TIMEOUT}), rolls its transaction back and releases the row. B's statement returns after {} ms; B finds the job not done, debits and commits ({strict}).", row_lock_wait(t, "B")),
                format!("A's UPDATE ({refused}) fails: its transaction no longer exists. That is what stops it, not a token, so every fencing policy ends the same: off {off}, strict {strict}, same-epoch {same}. Lock and data in one system: losing the lock loses the transaction."),
                format!("Costs. With no timeout nothing ends A's hold: B waits {no_timeout_wait} ms, until A wakes and commits at t={commit}, then finds the job done ({}). The holder keeps a connection and the row lock for the whole job, blocking every other writer of that row (plain reads still run), and its open transaction holds back VACUUM.", no_timeout.summary.final_balance),
                format!("The timeout is itself a lease: a healthy job that works {slow_work} ms between statements is killed the same way ({slow_failed}'s UPDATE fails; balance {}). And it only covers writes in this database: a payment API call cannot be rolled back (claim-row).", slow.summary.final_balance),
                format!("No held lock at all, when one statement can check and write: UPDATE accounts SET balance = balance − 10, order_1_charged = true WHERE id = '{}' AND NOT order_1_charged. The row lock lasts only that statement, and a second run matches no row (UPDATE 0): a no-op.", sc.resource),
            ]
        },
        build: Scenario::row_lock,
    },
];

/// How long `actor` waited in the row's lock queue in `t`: from its blocked `SELECT … FOR
/// UPDATE` to the grant (0 if it never waited).
pub fn row_lock_wait(t: &Trace, actor: &str) -> Millis {
    let mine = |e: &&super::trace::TraceEvent| e.actor.as_deref() == Some(actor);
    let asked = t
        .events
        .iter()
        .filter(mine)
        .find(|e| matches!(e.kind, EventKind::LockWait { .. }));
    let granted = t
        .events
        .iter()
        .filter(mine)
        .find(|e| matches!(e.kind, EventKind::Acquired { .. }));
    match (asked, granted) {
        (Some(a), Some(g)) => g.at.saturating_sub(a.at),
        _ => 0,
    }
}

/// The entry with this id.
pub fn find(id: &str) -> Option<&'static DeckEntry> {
    DECK.iter().find(|e| e.id == id)
}

/// One deck entry run under every policy, in [`FencingPolicy::ALL`] order.
pub fn runs(entry: &DeckEntry) -> Runs {
    Runs(FencingPolicy::ALL.map(|p| run(&(entry.build)().with_policy(p))))
}

/// The README's deck table, generated from the runs: balance and outcome per policy.
pub fn table() -> String {
    let mut out = String::from(
        "| # | id | question | off | strict | same-epoch |\n| --- | --- | --- | --- | --- | --- |\n",
    );
    for (i, entry) in DECK.iter().enumerate() {
        let cells = runs(entry).0.map(|t| {
            let cf = if story::counterfactual(&t) {
                "(counterfactual: Redlock mints no token) "
            } else {
                ""
            };
            format!("{cf}**{}**: {}", story::final_value(&t), story::outcome(&t))
        });
        out += &format!(
            "| {} | `{}` | {} | {} | {} | {} |\n",
            i + 1,
            entry.id,
            entry.question,
            cells[0],
            cells[1],
            cells[2]
        );
    }
    out
}

/// The deck as data (`fencing-lab deck --json`): what the native and browser tests read
/// instead of their own copies of the ids, the count and the outcome tables.
#[derive(Debug, Clone, Serialize)]
pub struct DeckData {
    pub count: usize,
    pub entries: Vec<EntryData>,
}

/// One deck entry as data.
#[derive(Debug, Clone, Serialize)]
pub struct EntryData {
    pub id: &'static str,
    pub title: &'static str,
    pub question: &'static str,
    /// One run per fencing policy, keyed by the policy's code.
    pub runs: PolicyRuns,
}

/// A deck entry's three runs, by policy code (as the page's `fence=` spells them).
#[derive(Debug, Clone, Serialize)]
pub struct PolicyRuns {
    pub off: RunData,
    pub strict: RunData,
    pub same_epoch: RunData,
}

/// What one run ends with, as the page shows it.
#[derive(Debug, Clone, Serialize)]
pub struct RunData {
    /// The storage's headline figure at the end (the balance, or the result row).
    pub value: String,
    /// [`story::outcome`]: the comparison panel's caption.
    pub outcome: String,
    /// Steps after the setup one (a run of identical events is one step: [`story::Steps`]).
    pub steps: usize,
    /// Words of all the run's Say lines.
    pub say_words: usize,
    /// The distinct result codes of the run's timeline markers other than `ok`, in order of
    /// first appearance.
    pub codes: Vec<&'static str>,
}

/// [`DeckData`] for the whole deck.
pub fn data() -> DeckData {
    let entries: Vec<EntryData> = DECK
        .iter()
        .map(|e| EntryData {
            id: e.id,
            title: e.title,
            question: e.question,
            runs: {
                let [off, strict, same_epoch] = runs(e).0.map(|t| run_data(&t));
                PolicyRuns {
                    off,
                    strict,
                    same_epoch,
                }
            },
        })
        .collect();
    DeckData {
        count: entries.len(),
        entries,
    }
}

fn run_data(t: &Trace) -> RunData {
    let mut codes: Vec<&'static str> = Vec::new();
    for code in t.events.iter().map(|e| e.result_code()) {
        if code != "ok" && !codes.contains(&code) {
            codes.push(code);
        }
    }
    let last = story::Steps::of(t).last();
    RunData {
        value: story::final_value(t),
        outcome: story::outcome(t),
        steps: last,
        say_words: (0..=last)
            .map(|s| story::say(t, s).split_whitespace().count())
            .sum(),
        codes,
    }
}

/// The first deadline check of `t`: (at, local clock, deadline, went on), or zeros if none.
fn deadline_check(t: &Trace) -> (Millis, Millis, Millis, bool) {
    t.events
        .iter()
        .find_map(|e| match e.kind {
            EventKind::DeadlineChecked {
                local,
                deadline,
                ok,
            } => Some((e.at, local, deadline, ok)),
            _ => None,
        })
        .unwrap_or((0, 0, 0, false))
}

/// An actor without pauses or network delay.
fn actor(name: &str, start_at: Millis, script: Vec<Step>) -> Actor {
    Actor {
        name: name.to_owned(),
        start_at,
        script,
        ..Actor::default()
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

/// [`account_scenario`] where every client runs the same job, "charge order 1": whoever
/// holds the lock reads the job's status and charges only if it is not done yet.
fn job_scenario(id: &str, title: &str, actors: Vec<Actor>, horizon: Millis) -> Scenario {
    Scenario {
        job: Some(HEADLINE_JOB.to_owned()),
        ..account_scenario(id, title, actors, horizon)
    }
}

/// The seed of `uuid-token`: A's random value draws larger than B's.
pub const UUID_SEED: u64 = 2;
/// Another draw for `uuid-token`, where A's random value is the smaller one.
pub const UUID_OTHER_SEED: u64 = 1;

/// The shorter pause of `lock-delay`'s notes: longer than the TTL, shorter than TTL + delay.
pub const LOCK_DELAY_SHORT_PAUSE: Millis = 40;

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

/// The seed of `renewal`: renewals at t=11, 20 and 31, and on waking the watchdog runs
/// first, so the failed renewal (extend answers 0) shows on screen.
pub const RENEWAL_SEED: u64 = 9;
/// `renewal`'s what-if: the same renewals, but on waking the worker runs first and writes.
pub const RENEWAL_WORKER_SEED: u64 = 11;

/// The idempotency key of `claim-row`'s provider call: one per intent (the order's charge).
pub const PROVIDER_KEY: &str = "order-1-charge";

/// The value every rebuild of `efficiency`'s report writes: recomputed from the same input.
pub const REPORT: &str = "12 orders";

/// The one job of the account scenarios.
pub const HEADLINE_JOB: &str = "charge order 1";

/// The plain worker of most entries: take the lock (polling every 10 ms), read the job's
/// status, work `work` ms, debit 10, hold `hold` ms more, release.
fn writer(name: &str, start_at: Millis, work: Millis, hold: Millis) -> Actor {
    actor(
        name,
        start_at,
        vec![
            Step::Acquire { retry_every: 10 },
            Step::CheckDone,
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
    /// The headline's race with A waking after B's grant but before B's debit, tokens from
    /// the lock service, and storage checking each write's sequencer with it: A (33, lease
    /// until t=30) pauses 5..45; B gets 34 at t=30 and works 20 ms, so A's 33 reaches
    /// storage at t=45, before storage has seen 34 (B's debit comes at t=50). The
    /// highest-token check alone takes it; the sequencer check does not. Every time is a
    /// multiple of 5 ms, and B holds the lock when A writes even if it gets it one retry
    /// later (t=40): etcd sweeps expired leases only about every 500 ms, 5 ms on its replay.
    pub fn sequencer() -> Self {
        let mut a = writer("A", 0, 10, 5);
        a.pauses.push(pause(5, 40));
        Scenario {
            token_source: TokenSource::LockService,
            check: StorageCheck::Sequencer,
            ..job_scenario(
                "sequencer",
                "Sequencer check with the lock service",
                vec![a, writer("B", 20, 20, 5)],
                100,
            )
        }
    }

    /// The headline's schedule with the lock a PostgreSQL row lock on the account's own row
    /// ([`RowLock`]), `idle_in_transaction_session_timeout` 30 ms: A locks the row at t=0,
    /// reads the job's status and pauses 5..55; B's `SELECT … FOR UPDATE` at t=20 waits. At
    /// t=30 the server terminates A's session and B's statement returns; B debits and commits
    /// at 35. A wakes at 55 and its UPDATE fails: its session is gone.
    pub fn row_lock() -> Self {
        let worker = |name: &str, start_at: Millis, work: Millis| {
            actor(
                name,
                start_at,
                vec![
                    Step::Acquire { retry_every: 10 },
                    Step::CheckDone,
                    Step::Work { ms: work },
                    debit(10, None),
                    Step::Release,
                ],
            )
        };
        let mut a = worker("A", 0, 10);
        a.pauses.push(pause(5, 50));
        Scenario {
            row_lock: Some(RowLock { idle_timeout: true }),
            ..job_scenario(
                "row-lock",
                "SELECT … FOR UPDATE as the lock",
                vec![a, worker("B", 20, 5)],
                100,
            )
        }
    }

    /// `row-lock`'s what-if for the notes: `sc` without A's pause, A working 40 ms (longer
    /// than the idle timeout) between its status read and its UPDATE: a healthy slow job.
    pub fn row_lock_slow_job(sc: &Scenario) -> Self {
        let mut sc = sc.clone();
        let a = &mut sc.actors[0];
        a.pauses.clear();
        for s in &mut a.script {
            if let Step::Work { ms } = s {
                *ms = 40;
            }
        }
        sc
    }

    /// The headline schedule (A 30 ms lease, pause 5..55; B takes the lock at t=30 and
    /// debits at 35; A debits at 55) with each client's random SET value as its token,
    /// drawn from [`UUID_SEED`]: A's value is the larger, so a highest-token check takes
    /// A's superseded write.
    pub fn uuid_token() -> Self {
        Scenario {
            id: "uuid-token".to_owned(),
            title: "A random value as the token".to_owned(),
            token_source: TokenSource::RandomValue,
            seed: UUID_SEED,
            ..Scenario::gc_pause()
        }
    }

    /// The headline's schedule for a job whose duplicate is harmless: rebuilding the daily
    /// report, which recomputes the same value from the same input and overwrites the row.
    /// A (33, lease until t=30) pauses 5..55; B gets 34 at t=30, finds the report not built
    /// and publishes [`REPORT`] at 35; A wakes and publishes the same [`REPORT`] at 55.
    pub fn efficiency() -> Self {
        let rebuild = |name: &str, start_at: Millis, work: Millis| {
            actor(
                name,
                start_at,
                vec![
                    Step::Acquire { retry_every: 10 },
                    Step::CheckDone,
                    Step::Work { ms: work },
                    Step::Publish {
                        result: REPORT.to_owned(),
                    },
                    Step::Work { ms: 5 },
                    Step::Release,
                ],
            )
        };
        let mut a = rebuild("A", 0, 10);
        a.pauses.push(pause(5, 50));
        Scenario {
            id: "efficiency".to_owned(),
            title: "Efficiency or correctness?".to_owned(),
            resource: "report:daily".to_owned(),
            initial_balance: 0,
            first_fence: 33,
            lease_ttl: 30,
            policy: FencingPolicy::Strict,
            actors: vec![a, rebuild("B", 20, 5)],
            horizon: 100,
            job: Some("the daily report rebuild".to_owned()),
            ..Scenario::default()
        }
    }

    /// A client whose clock runs 20% slow (`client_drift` 200, exaggerated for visibility)
    /// and who checks its local deadline, TTL − an 8 ms margin, before it debits: A (33,
    /// lease until t=30) works until t=36, past its lease on the lock server's clock, but its
    /// clock reads 28 ms, under the TTL. The margin stops it (28 > 22); without one it would
    /// debit at t=37 with a lease that is gone. B gets 34 at t=30 and debits at 35.
    pub fn drift_margin() -> Self {
        let a = actor(
            "A",
            0,
            vec![
                Step::Acquire { retry_every: 10 },
                Step::CheckDone,
                Step::Work { ms: 36 },
                Step::CheckDeadline,
                Step::Work { ms: 1 },
                debit(10, None),
                Step::Work { ms: 5 },
                Step::Release,
            ],
        );
        Scenario {
            client_drift: 200,
            deadline_margin: 8,
            ..job_scenario(
                "drift-margin",
                "Client clock drift margin",
                vec![a, headline_b()],
                100,
            )
        }
    }

    /// `drift-margin`'s what-if for the notes, what the margin cannot fix: `sc` (its drift
    /// and margin) with A's job checking early, at t=15 (its clock: 12 of 22 ms), and a GC
    /// pause from t=16 to 56 after the check; A debits with 33 at 56.
    pub fn drift_margin_pause_after_check(sc: &Scenario) -> Self {
        let mut sc = sc.clone();
        let a = &mut sc.actors[0];
        a.pauses = vec![pause(16, 40)];
        for s in &mut a.script {
            if let Step::Work { ms: 36 } = s {
                *s = Step::Work { ms: 15 };
            }
        }
        sc
    }

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
            partition: Some(Partition {
                actor: 0,
                start: 15,
                end: 65,
            }),
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

    /// The headline with a Chubby-style lock-delay of 20 ms on a lock service that mints
    /// sequencers (tokens): A (33, lease until t=30) pauses 5..65, longer than TTL + delay;
    /// B is refused at 30 and 40 by the lock-delay, gets 34 at t=50 and debits at 55; A
    /// wakes at 65 and debits with 33.
    pub fn lock_delay() -> Self {
        let mut a = writer("A", 0, 10, 5);
        a.pauses.push(pause(5, 60));
        Scenario {
            lock_delay: 20,
            token_source: TokenSource::LockService,
            ..job_scenario(
                "lock-delay",
                "Chubby-style lock-delay",
                vec![a, headline_b()],
                100,
            )
        }
    }

    /// The headline's schedule for a job that charges a card through a provider that never
    /// sees the token: each worker writes a fenced claim row, then (only if the claim was
    /// accepted) calls the provider with the idempotency key [`PROVIDER_KEY`]. A holds 33 and
    /// pauses 5..55; B takes 34 at t=30, claims and calls at 35; A claims and calls at 55.
    pub fn claim_row() -> Self {
        let worker = |name: &str, start_at: Millis, work: Millis| {
            actor(
                name,
                start_at,
                vec![
                    Step::Acquire { retry_every: 10 },
                    Step::CheckDone,
                    Step::Work { ms: work },
                    Step::Claim {
                        what: format!("claimed by {name}"),
                    },
                    Step::ProviderCall {
                        what: "charge the card $10 (payment API)".to_owned(),
                        idempotency_key: PROVIDER_KEY.to_owned(),
                    },
                    Step::Work { ms: 5 },
                    Step::Release,
                ],
            )
        };
        let mut a = worker("A", 0, 10);
        a.pauses.push(pause(5, 50));
        let b = worker("B", 20, 5);
        Scenario {
            resource: "order:1".to_owned(),
            initial_balance: 0,
            ..job_scenario(
                "claim-row",
                "Fenced claim row before a provider call",
                vec![a, b],
                100,
            )
        }
    }

    /// A checks `is_held` at t=4 (true), the pause lands at t=5, right after the check;
    /// the rest is the headline: B writes with 34 at t=35, A writes with 33 at t=55.
    pub fn toctou() -> Self {
        let mut a = actor(
            "A",
            0,
            vec![
                Step::Acquire { retry_every: 10 },
                Step::CheckDone,
                Step::Work { ms: 4 },
                Step::CheckHeld,
                Step::Work { ms: 1 },
                debit(10, None),
                Step::Work { ms: 5 },
                Step::Release,
            ],
        );
        a.pauses.push(pause(5, 50));
        job_scenario(
            "toctou",
            "Check is_held, then write",
            vec![a, headline_b()],
            100,
        )
    }

    /// A debits `pay-1` at t=0, loses the reply and retries it unchanged at t=5 (same token
    /// 33, same key), then releases. The scenario ends there: its point is the retry.
    pub fn same_token_retry() -> Self {
        let a = actor(
            "A",
            0,
            vec![
                Step::Acquire { retry_every: 10 },
                debit(10, Some("pay-1")),
                Step::Work { ms: 5 },
                Step::Retry,
                Step::Work { ms: 5 },
                Step::Release,
            ],
        );
        account_scenario(
            "same-token-retry",
            "Lost reply, retry with the same token",
            vec![a],
            100,
        )
    }

    /// GET-then-DEL release: A finishes other work and GETs its own value at t=5; the pause
    /// (6..54) lands before the DEL. B takes 34 at t=30, finds order 1 not charged and
    /// works until t=59; A's DEL at t=54 deletes B's lease, so C (polling from t=48 every
    /// 8 ms) takes 35 at t=56, finds order 1 still not charged and charges at t=57: two
    /// holders at once, both running the same job. Clients that depend on each other act
    /// at least 2 ms apart, so the replay on real servers sees the same order. Set
    /// `release` to `CompareAndDelete` for the safe version.
    pub fn unsafe_release() -> Self {
        let mut a = actor(
            "A",
            0,
            vec![
                Step::Acquire { retry_every: 10 },
                Step::Work { ms: 5 },
                Step::Release,
            ],
        );
        a.pauses.push(pause(6, 48));
        let b = actor(
            "B",
            30,
            vec![
                Step::Acquire { retry_every: 10 },
                Step::CheckDone,
                Step::Work { ms: 29 },
                debit(10, None),
                Step::Release,
            ],
        );
        let c = actor(
            "C",
            48,
            vec![
                Step::Acquire { retry_every: 8 },
                Step::CheckDone,
                Step::Work { ms: 1 },
                debit(10, None),
                Step::Work { ms: 3 },
                Step::Release,
            ],
        );
        Scenario {
            release: ReleaseMode::GetThenDel,
            ..job_scenario(
                "unsafe-release",
                "Release by GET then DEL",
                vec![a, b, c],
                100,
            )
        }
    }

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

    /// Kleppmann's delayed packet: A sends its debit at t=5 while its lease (33, until t=30)
    /// is live; the request takes 40 ms. A never pauses and does not release: the lease
    /// expires at t=30 with the packet in flight, B takes 34, finds the job not done and
    /// debits at t=35, and A's request reaches storage at t=45, after B's write.
    pub fn delayed_packet() -> Self {
        let mut a = actor(
            "A",
            0,
            vec![
                Step::Acquire { retry_every: 10 },
                Step::CheckDone,
                Step::Work { ms: 5 },
                debit(10, None),
            ],
        );
        a.network_delay = 40;
        job_scenario(
            "delayed-packet",
            "Delayed packet",
            vec![a, headline_b()],
            100,
        )
    }

    /// The primary acknowledges A's lock (33, until t=30) and fails over at t=5 without
    /// having replicated it, nor the INCR of its token; B acquires at t=8 and gets 33 again
    /// from the rolled-back counter, debits at t=10; A debits with 33 at t=12. Two live
    /// leases from t=8 to t=30. With `token_source: LockService` nothing is lost.
    pub fn redis_failover() -> Self {
        let a = writer("A", 0, 12, 5);
        let b = writer("B", 8, 2, 15);
        Scenario {
            failover_at: Some(5),
            token_source: TokenSource::SameRedis,
            ..job_scenario("redis-failover", "Redis failover", vec![a, b], 60)
        }
    }

    /// A's SET answers OK at t=0 and it freezes (1..41) before its INCR on the separate
    /// counter; its lease expires at 30, B's SET answers OK at 30 and B's INCR at 31 takes
    /// 33. A wakes at 41, INCRs 34 and charges at once; B charges with 33 at 46.
    pub fn separate_counter() -> Self {
        let mut a = actor(
            "A",
            0,
            vec![
                Step::Acquire { retry_every: 10 },
                Step::CheckDone,
                debit(10, None),
                Step::Release,
            ],
        );
        a.pauses.push(pause(1, 40));
        let b = writer("B", 20, 15, 5);
        Scenario {
            token_source: TokenSource::SeparateCounter,
            ..job_scenario(
                "separate-counter",
                "Token from a separate counter",
                vec![a, b],
                100,
            )
        }
    }

    /// A works 60 ms (twice the TTL) while its watchdog renews every ~10 ms (jittered from
    /// `seed`); a 50 ms pause from t=35 stops the watchdog and the lease runs out at t=61.
    /// B, polling from t=45 every 16 ms, takes 34 at t=61 and debits; A wakes at t=85, its
    /// watchdog runs first, the extend script answers 0 and the job self-cancels.
    pub fn renewal() -> Self {
        let mut a = actor(
            "A",
            0,
            vec![
                Step::Acquire { retry_every: 10 },
                Step::CheckDone,
                Step::WorkRenewing { ms: 60 },
                debit(10, None),
                Step::Release,
            ],
        );
        a.pauses.push(pause(35, 50));
        let mut b = headline_b();
        b.start_at = 45;
        b.script[0] = Step::Acquire { retry_every: 16 };
        Scenario {
            seed: RENEWAL_SEED,
            ..job_scenario("renewal", "Renewal and self-cancel", vec![a, b], 120)
        }
    }

    /// A job scheduler in seconds (the seed's worked example): worker A runs job 7 with token
    /// 41 and a 10 s lease, and its whole process freezes from 1 s to 16 s; B gets the job
    /// with 42 at 10 s and the scheduler first establishes epoch 42 in the job's result row.
    /// A wakes and publishes its late result with 41; B publishes with 42 at 18 s, a
    /// conditional write on the result row. Fencing is same-epoch so that B's own publish
    /// passes the epoch the scheduler set for it. (A card charge belongs to claim-row.)
    pub fn handoff_barrier() -> Self {
        let mut a = actor(
            "A",
            0,
            vec![
                Step::Acquire { retry_every: 1_000 },
                Step::CheckDone,
                Step::Work { ms: 1_000 },
                Step::Publish {
                    result: "result by A".to_owned(),
                },
                Step::Release,
            ],
        );
        a.pauses.push(pause(1_000, 15_000));
        a.pause_cause = PauseCause::Stall;
        let b = actor(
            "B",
            10_000,
            vec![
                Step::Acquire { retry_every: 1_000 },
                Step::Barrier,
                Step::CheckDone,
                Step::Work { ms: 8_000 },
                Step::Publish {
                    result: "result by B".to_owned(),
                },
                Step::Release,
            ],
        );
        Scenario {
            id: "handoff-barrier".to_owned(),
            title: "Job handoff with a barrier".to_owned(),
            resource: "job:7".to_owned(),
            initial_balance: 0,
            first_fence: 41,
            lease_ttl: 10_000,
            policy: FencingPolicy::SameEpoch,
            actors: vec![a, b],
            horizon: 25_000,
            job: Some("job 7".to_owned()),
            ..Scenario::default()
        }
    }

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
            lock_clock_jumps: vec![ClockJump { at: 10, by: 25 }],
            redlock: Some(RedlockSetup {
                nodes: 5,
                reach: vec![vec![0, 1, 2], vec![2, 3, 4]],
                jumping_node: 2,
            }),
            token_source: TokenSource::Counterfactual,
            ..job_scenario("clock-jump", "Redlock and a clock jump", vec![a, b], 60)
        }
    }
}
