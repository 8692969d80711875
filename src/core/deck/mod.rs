//! The scenario deck: one entry per interviewer follow-up, each a real scenario for the
//! same engine. The UI lists the deck and runs whichever entry is picked; all the scenario
//! logic is here and in the engine, none of it in the UI.
//!
//! Every builder sets `Scenario::id` to its entry's id, so a trace (or a shared URL) knows
//! which entry it came from.
//!
//! One file per entry: its `ENTRY` (question, notes, builder) and the builder's scenario.
//! This file keeps the [`DECK`] table, in presentation order, and the helpers the entries
//! share. A scenario that needs no new mechanism is one new file and one line here.

use super::clock::Millis;
use super::engine::run;
use super::fault::{Fault, FaultAt, Node};
use super::ledger::{FencingPolicy, StorageCheck, WriteError};
use super::scenario::{
    Actor, LockKind, Partition, Pause, PauseCause, RedisTokens, RedlockSetup, ReleaseMode, RowLock,
    Scenario, ServiceOptions, Step, IDLE_IN_TRANSACTION_TIMEOUT,
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
    /// What a senior interviewer asks next, 1 to 3, each answered and sourced: shown with
    /// the notes under "If they push back".
    pub pushbacks: &'static [PushBack],
}

/// A counter-question after a deck entry, with a short answer true of the real systems and
/// a source the candidate can cite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PushBack {
    pub question: &'static str,
    /// Two or three sentences.
    pub answer: &'static str,
    /// A seed file or a document: "redis.conf: appendfsync", "Kleppmann 2016".
    pub source: &'static str,
    /// The deck entry that shows the answer, if one does (the page links it as `#s=<id>`).
    pub shows: Option<&'static str>,
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

mod claim_row;
mod clock_jump;
mod cross_region;
mod delayed_packet;
mod drift_margin;
mod efficiency;
mod gc_pause;
mod handoff_barrier;
mod lock_delay;
mod lock_queue;
mod partition;
mod raft_partition;
mod redis_failover;
mod redis_restart;
mod renewal;
mod renewal_herd;
mod row_lock;
mod same_token_retry;
mod separate_counter;
mod sequencer;
mod storage_check;
mod storage_failover;
mod toctou;
mod unsafe_release;
mod uuid_token;

pub use claim_row::PROVIDER_KEY;
pub use cross_region::CROSS_REGION_RTT;
pub use efficiency::REPORT;
pub use lock_delay::LOCK_DELAY_SHORT_PAUSE;
pub use partition::{
    PARTITION_IN_FLIGHT, PARTITION_LOCK_TIMEOUT, PARTITION_LONG_TTL, PARTITION_QUICK_TIMEOUT,
    PARTITION_SEED,
};
pub use renewal::{RENEWAL_SEED, RENEWAL_WORKER_SEED};
pub use renewal_herd::{herd_horizon, renewal_herd_reports, thousands, FLEET, HERD_HOLDERS};
pub use row_lock::row_lock_wait;
pub use storage_failover::STANDBY_LAG;
pub use uuid_token::{UUID_OTHER_SEED, UUID_SEED};

/// Lists the entries once, in presentation order: [`DECK`] (every entry, with its builder
/// and notes) and [`TITLES`] (ids and titles only, for the scenario picker).
macro_rules! deck {
    ($($entry:ident),* $(,)?) => {
        /// Every deck entry, in presentation order.
        pub static DECK: &[DeckEntry] = &[$($entry::ENTRY),*];
        /// Each entry's id and title, in presentation order: what listing the deck needs,
        /// without the builders and notes (in the page, the deck past the headline is a
        /// chunk fetched when it is first needed; see [`find`]).
        pub static TITLES: &[(&str, &str)] = &[$(($entry::ENTRY.id, $entry::ENTRY.title)),*];
    };
}

deck!(
    gc_pause,
    toctou,
    same_token_retry,
    unsafe_release,
    delayed_packet,
    redis_failover,
    redis_restart,
    separate_counter,
    renewal,
    renewal_herd,
    cross_region,
    handoff_barrier,
    clock_jump,
    uuid_token,
    claim_row,
    lock_delay,
    efficiency,
    drift_margin,
    sequencer,
    partition,
    raft_partition,
    row_lock,
    lock_queue,
    storage_check,
    storage_failover,
);

/// The headline, the entry a page opens on.
pub static HEADLINE: DeckEntry = gc_pause::ENTRY;

/// The entry with this id, if this build has it. Natively every entry is linked in. In the
/// page only the headline is, and the rest once the shell has fetched them ([`provide`]):
/// the builders and notes of the deck's other entries are 26 KB of the page's wasm (gzip).
pub fn find(id: &str) -> Option<&'static DeckEntry> {
    let headline = || (id == HEADLINE.id).then_some(&HEADLINE);
    linked().iter().find(|e| e.id == id).or_else(headline)
}

/// Whether `id` names a deck entry that this build does not have yet: one [`provide`] brings.
pub fn needs_fetch(id: &str) -> bool {
    find(id).is_none() && TITLES.iter().any(|(t, _)| *t == id)
}

#[cfg(not(target_arch = "wasm32"))]
fn linked() -> &'static [DeckEntry] {
    DECK
}

/// The deck the page fetched, once it has.
#[cfg(target_arch = "wasm32")]
static FETCHED: std::sync::OnceLock<&'static [DeckEntry]> = std::sync::OnceLock::new();

#[cfg(target_arch = "wasm32")]
fn linked() -> &'static [DeckEntry] {
    FETCHED.get().copied().unwrap_or_default()
}

/// Hands the page the whole deck, from the chunk that holds it.
#[cfg(target_arch = "wasm32")]
pub fn provide(deck: &'static [DeckEntry]) {
    let _ = FETCHED.set(deck);
}

/// One deck entry run under every policy, in [`FencingPolicy::ALL`] order.
pub fn runs(entry: &DeckEntry) -> Runs {
    Runs(FencingPolicy::ALL.map(|p| run(&(entry.build)().with_policy(p))))
}

/// docs/deck.md's deck table, generated from the runs: balance and outcome per policy.
pub fn table() -> String {
    let mut out = String::from(
        "| # | id | question | off | strict | same-epoch |\n| --- | --- | --- | --- | --- | --- |\n",
    );
    for (i, entry) in DECK.iter().enumerate() {
        let cells = runs(entry)
            .0
            .map(|t| format!("**{}**: {}", story::final_value(&t), story::outcome(&t)));
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
    pub pushbacks: &'static [PushBack],
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
            pushbacks: e.pushbacks,
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
    let words = story::Story::of(t);
    let last = words.last();
    RunData {
        value: story::final_value(t),
        outcome: story::outcome(t),
        steps: last,
        say_words: (0..=last)
            .map(|s| words.say(s).split_whitespace().count())
            .sum(),
        codes,
    }
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

/// The one job of the account scenarios.
pub const HEADLINE_JOB: &str = "charge order 1";

/// A worker's job: take the lock (polling every 10 ms), read the job's status, work `work`
/// ms, then do `then` (its writes, and the release).
fn job(name: &str, start_at: Millis, work: Millis, then: Vec<Step>) -> Actor {
    let mut script = vec![
        Step::Acquire { retry_every: 10 },
        Step::CheckDone,
        Step::Work { ms: work },
    ];
    script.extend(then);
    actor(name, start_at, script)
}

/// The plain worker of most entries: its [`job`] debits 10, holds `hold` ms more, releases.
fn writer(name: &str, start_at: Millis, work: Millis, hold: Millis) -> Actor {
    let then = vec![debit(10, None), Step::Work { ms: hold }, Step::Release];
    job(name, start_at, work, then)
}

/// B as in the headline: polls from t=20, debits 10 five ms after it gets the lock.
fn headline_b() -> Actor {
    writer("B", 20, 5, 5)
}
