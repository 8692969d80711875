//! A scenario is plain data: who does what, when they stall, how slow their packets
//! are and how the storage checks tokens. The engine turns it into a trace. By concern, in
//! `scenario/`: the lock kind (`lock.rs`), the faults' views and edits (`faults.rs`), why a
//! scenario is refused (`validate.rs`), and its JSON form (`wire.rs`).

use std::fmt;

use serde::{Deserialize, Serialize};

use super::clock::{Millis, SplitMix64};
use super::fault::{Fault, FaultAt, Node};
use super::ledger::{FencingPolicy, StorageCheck};

mod faults;
mod lock;
mod validate;
mod wire;
pub use lock::{Herd, LockKind, RedisTokens, ServiceOptions};
use validate::in_range;
pub use validate::ScenarioError;
pub use wire::ScenarioWire;

/// Upper bounds that keep an edited or imported scenario small enough to simulate instantly.
pub const MAX_ACTORS: usize = 16;
/// How many clients a presenter can set on the page: a lock needs contention, and five
/// client lanes still fit a projector.
pub const CLIENTS: std::ops::RangeInclusive<usize> = 2..=5;
/// The names new clients take, in order (the first not already used).
const CLIENT_NAMES: [&str; 5] = ["A", "B", "C", "D", "E"];
pub const MAX_STEPS: usize = 64;
pub use super::clock::MAX_TIME;
/// Slowest client clock, per mille slow (900: it counts 1 ms in 10).
pub const MAX_CLIENT_DRIFT: u64 = 900;
/// Longest side-effect description and scenario id.
pub const MAX_LABEL: usize = 80;

/// A stop-the-world stall of one actor: it does nothing in `[start, start + duration)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pause {
    pub start: Millis,
    pub duration: Millis,
}

impl Pause {
    pub fn end(&self) -> Millis {
        self.start.saturating_add(self.duration)
    }

    pub fn contains(&self, t: Millis) -> bool {
        self.start <= t && t < self.end()
    }
}

/// One instruction of an actor's script.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// Try to take the lease with the scenario TTL; while it is held, retry every `retry_every` ms.
    Acquire { retry_every: Millis },
    /// Local work (read, compute) that takes time but touches nothing shared.
    Work { ms: Millis },
    /// `is_held` check; an actor that finds it lost the lease gives up.
    CheckHeld,
    /// A check of the client's own deadline, on its own clock (no round trip): the time since
    /// its acquire (or last renewal) as its clock measures it, running
    /// [`Scenario::client_drift`] per mille slow, against TTL − [`Scenario::deadline_margin`].
    /// At or past the deadline the actor gives up.
    CheckDeadline,
    /// Send a debit with the actor's token (and optional idempotency key).
    Debit {
        amount: i64,
        idempotency_key: Option<String>,
    },
    /// Extend the lease by the scenario TTL; on failure the actor self-cancels.
    Extend,
    /// Release the lease the way [`Scenario::release`] says: compare-and-delete (the Lua
    /// script) or the unsafe GET, then DEL one round trip later.
    Release,
    /// Resend the actor's last debit unchanged (same token, same idempotency key): its reply
    /// was lost, so the client cannot tell whether it landed.
    Retry,
    /// Local work for `ms` while a watchdog renews the lease every third of the TTL
    /// (±25% jitter drawn from [`Scenario::seed`]); a refused renewal self-cancels the job.
    WorkRenewing { ms: Millis },
    /// Write the actor's token to storage as an epoch barrier before starting work: it raises
    /// the high-water mark without changing the balance, so older tokens are refused from now on.
    Barrier,
    /// A call to a system that never sees the token (a payment API, an email): fencing cannot
    /// stop it, so it runs whether or not the lease is still live.
    SideEffect { what: String },
    /// Write the job's result to its result row, carrying the actor's token: a conditional
    /// write (`UPDATE … SET result = $r, epoch = $tok WHERE job = $id AND epoch < $tok`, or
    /// `<=` under same-epoch). Unlike a debit it sets a value; the balance is untouched.
    Publish { result: String },
    /// Read the job's status in storage (a plain read, no token): if one of its debits has
    /// already landed, the job is done, so skip ahead to the next `Release`. This is what
    /// makes a second holder a re-run rather than a second job.
    CheckDone,
    /// Write a claim row for the job before an outside call, carrying the actor's token: the
    /// same conditional write as [`Step::Publish`] (`… SET claimed_by = $me, epoch = $tok
    /// WHERE job = $id AND epoch < $tok`). The claim is what the fence protects: the outside
    /// system never sees the token.
    Claim { what: String },
    /// A call to a provider that never sees the token (a payment API), made only if the
    /// actor's last claim was accepted (otherwise the actor gives up without calling). It
    /// carries an idempotency key the provider dedupes on: the first call with a key charges,
    /// a later one returns the first one's result and charges nothing. The key says "this
    /// intent runs once"; it is not a fence.
    ProviderCall {
        what: String,
        idempotency_key: String,
    },
}

/// What stops an actor in a [`Pause`]: only the words differ, the stall is the same.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PauseCause {
    /// A stop-the-world garbage-collection pause.
    #[default]
    Gc,
    /// The job hangs (a slow call, a page fault, a SIGSTOP, a VM migration).
    Stall,
}

/// Where fencing tokens come from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenSource {
    /// One Lua script on the lock's own Redis: `SET key val NX PX ttl` and, if it answered OK,
    /// `INCR` a fence counter. Token and lease are granted together, but the counter is only
    /// as durable as that Redis: an asynchronous failover can roll it back.
    #[default]
    SameRedis,
    /// Lease and token from one linearizable store: the lock key's revision in etcd, the
    /// sequential znode's number in ZooKeeper. A leader change keeps both.
    LockService,
    /// `SET key val NX PX ttl`, then, one round trip ([`COUNTER_GAP`]) later, `INCR` on a
    /// separate counter that survives failover. The token is not tied to the grant: a pause
    /// between the two hands an older lease a newer token.
    SeparateCounter,
    /// None at all: Redlock mints no token. The tokens in the trace are what a separate
    /// linearizable counter would have handed out, shown only to ask what a fence would do.
    Counterfactual,
    /// The lock's random value (the `val` of `SET key val NX PX ttl`, a UUID in production)
    /// used as the token: unique per grant, but not ordered, so storage comparing tokens
    /// orders the generations by the luck of the draw ([`random_token`]).
    RandomValue,
}

/// Lowest and highest [`random_token`]: six digits, short enough for a timeline label (a
/// real UUID has 122 random bits; what matters here is only that the values are unordered).
pub const RANDOM_TOKENS: std::ops::RangeInclusive<u64> = 100_000..=999_999;

/// The random value actor `actor` SETs for its `nth` grant (0-based) under
/// [`TokenSource::RandomValue`]: drawn from the scenario `seed`, so a run (and its replay on
/// a real Redis) is reproducible, and independent of every other draw of the run.
pub fn random_token(seed: u64, actor: usize, nth: usize) -> u64 {
    let stream = ((actor as u64 + 1) << 32) | nth as u64;
    let mut rng = SplitMix64::new(seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    rng.between(*RANDOM_TOKENS.start(), *RANDOM_TOKENS.end())
}

impl TokenSource {
    /// The sources a presenter can pick between (Redlock's counterfactual comes with Redlock).
    pub const CHOICES: [TokenSource; 4] = [
        TokenSource::SameRedis,
        TokenSource::SeparateCounter,
        TokenSource::RandomValue,
        TokenSource::LockService,
    ];

    /// Stable identifier (URL hash, select values).
    pub fn code(self) -> &'static str {
        match self {
            TokenSource::SameRedis => "same_redis",
            TokenSource::LockService => "lock_service",
            TokenSource::SeparateCounter => "separate_counter",
            TokenSource::Counterfactual => "counterfactual",
            TokenSource::RandomValue => "random",
        }
    }

    /// Parses [`TokenSource::code`].
    pub fn from_code(code: &str) -> Option<Self> {
        [
            Self::SameRedis,
            Self::SeparateCounter,
            Self::LockService,
            Self::Counterfactual,
            Self::RandomValue,
        ]
        .into_iter()
        .find(|t| t.code() == code)
    }

    /// The option text in the Tokens control.
    pub fn option(self) -> &'static str {
        match self {
            TokenSource::SameRedis => "INCR on the same Redis",
            TokenSource::LockService => "etcd / ZooKeeper",
            TokenSource::SeparateCounter => "a separate counter, after the SET",
            TokenSource::Counterfactual => "none (Redlock)",
            TokenSource::RandomValue => "the SET's random value (a UUID)",
        }
    }
}

/// Redlock instead of one Redis: `nodes` independent nodes, a client holds the lock while a
/// majority holds its key. `reach[i]` lists the nodes actor `i` can reach (all when missing
/// or empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedlockSetup {
    pub nodes: usize,
    pub reach: Vec<Vec<usize>>,
}

/// Most Redlock nodes.
pub const MAX_NODES: usize = 9;

/// How [`Step::Release`] deletes the lock key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReleaseMode {
    /// One atomic Lua script: delete only if the value is still mine.
    #[default]
    CompareAndDelete,
    /// `GET`, compare in the client, then an unconditional `DEL` one round trip
    /// ([`GET_DEL_GAP`]) later: a pause in between deletes whoever holds the key by then.
    GetThenDel,
    /// A plain `DEL` with no check at all: whoever holds the key loses it.
    Del,
}

impl ReleaseMode {
    pub const ALL: [ReleaseMode; 3] = [
        ReleaseMode::CompareAndDelete,
        ReleaseMode::GetThenDel,
        ReleaseMode::Del,
    ];

    /// Stable identifier (URL hash, select values).
    pub fn code(self) -> &'static str {
        match self {
            ReleaseMode::CompareAndDelete => "cad",
            ReleaseMode::GetThenDel => "get_del",
            ReleaseMode::Del => "del",
        }
    }

    /// Parses [`ReleaseMode::code`].
    pub fn from_code(code: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.code() == code)
    }

    /// The option text in the Release control.
    pub fn option(self) -> &'static str {
        match self {
            ReleaseMode::CompareAndDelete => "compare-and-delete (Lua)",
            ReleaseMode::GetThenDel => "GET, then DEL",
            ReleaseMode::Del => "plain DEL",
        }
    }
}

/// Time between the SET reply and the INCR of [`TokenSource::SeparateCounter`].
pub const COUNTER_GAP: Millis = 1;

/// Time between the GET reply and the DEL of [`ReleaseMode::GetThenDel`].
pub const GET_DEL_GAP: Millis = 1;

/// A forward step of the lock node's clock as the JSON lists it (`lock_clock_jumps`; the
/// model's is [`Fault::ClockJump`]): every TTL it is counting down loses `by` ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockJump {
    pub at: Millis,
    pub by: Millis,
}

/// The lock is a row lock in the same PostgreSQL that holds the account, instead of a lease
/// on a lock server: `Step::Acquire` is `BEGIN; SELECT … FROM accounts WHERE id = $id FOR
/// UPDATE`, which waits in the row's lock queue while another transaction holds it (no
/// refusal, no retry); `Step::CheckDone` and `Step::Debit` are statements in that
/// transaction, and `Step::Release` is its `COMMIT`. With `idle_timeout`, the server runs
/// `idle_in_transaction_session_timeout` = [`Scenario::lease_ttl`]: a session idle in its
/// transaction for that long (counted from its last statement) is terminated, its
/// transaction rolled back and its row lock released; its next statement fails with SQLSTATE
/// [`IDLE_IN_TRANSACTION_TIMEOUT`]. Writes carry no token: the transaction is the check, so
/// the fencing policy has nothing to compare.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowLock {
    /// Whether `idle_in_transaction_session_timeout` is set (to the TTL); off, it is 0 and a
    /// stalled holder keeps the row lock until it commits.
    pub idle_timeout: bool,
}

/// SQLSTATE of PostgreSQL's "terminating connection due to idle-in-transaction timeout".
pub const IDLE_IN_TRANSACTION_TIMEOUT: &str = "25P03";

/// One client.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Actor {
    pub name: String,
    pub start_at: Millis,
    #[serde(default)]
    pub pauses: Vec<Pause>,
    /// One-way delay of this actor's writes to the storage.
    #[serde(default)]
    pub network_delay: Millis,
    pub script: Vec<Step>,
    /// What the pauses are, for the words.
    #[serde(default)]
    pub pause_cause: PauseCause,
    /// How long the client waits for a write's reply before giving up on it; the request
    /// itself may still be delivered and executed later. `None`: it waits for the reply.
    pub request_timeout: Option<Millis>,
    /// How long the client waits for the lock service's reply to a command (acquire, renew,
    /// extend, is_held, release) before treating it as failed. Only a [`Partition`] leaves a
    /// command unanswered. `None`: it waits for ever (a connection with no read timeout).
    pub lock_timeout: Option<Millis>,
}

/// A network partition between one client and the lock service, as the JSON spells it and
/// the words read it (the model's is a [`Fault::Partition`]): from `start` until `end`
/// every lock command the client sends (acquire, renew, extend, is_held, release) is dropped,
/// so it is never executed and no reply comes; the client learns only at its own
/// [`Actor::lock_timeout`]. Storage stays reachable, and the client keeps running.
///
/// Dropped, not delayed: the model delivers nothing sent in the window, even after the
/// partition heals. Over TCP the kernel would retransmit, so a command could still arrive
/// after the heal; in the deck's run the only one, A's renewal, would then find the key no
/// longer A's and extend nothing. The replay never sends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Partition {
    /// The index of the cut-off client in `Scenario::actors`.
    pub actor: usize,
    pub start: Millis,
    pub end: Millis,
}

impl Partition {
    /// Whether the window is open at `t` (`start` ≤ t < `end`).
    pub fn contains(&self, t: Millis) -> bool {
        self.start <= t && t < self.end
    }
}

/// Everything needed to reproduce a run. `Default` is an empty (invalid) scenario, there
/// for struct-update syntax: `Scenario { actors, ..Scenario::default() }`. Its JSON is
/// [`ScenarioWire`]'s, the layout recordings have always had.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "ScenarioWire", into = "ScenarioWire")]
pub struct Scenario {
    /// The deck entry this scenario was built from (`"gc-pause"`, …); empty for a hand-made one.
    pub id: String,
    pub title: String,
    pub resource: String,
    pub initial_balance: i64,
    pub first_fence: u64,
    pub lease_ttl: Millis,
    pub policy: FencingPolicy,
    pub actors: Vec<Actor>,
    /// The span the timeline shows; nothing is simulated past it.
    pub horizon: Millis,
    /// How `Step::Release` deletes the key.
    pub release: ReleaseMode,
    /// Which lock the clients take, with what only that lock has.
    pub lock: LockKind,
    /// What goes wrong in the world, and when (sorted by time): partitions, a failover or a
    /// restart of the lock server, clock jumps of a lock node.
    pub faults: Vec<FaultAt>,
    /// `Step::Barrier` is skipped: the new holder starts without first establishing its
    /// epoch at the resource (the what-if of the handoff).
    pub skip_barrier: bool,
    /// Seed of the renewal jitter (and of which resuming thread runs first), so a run
    /// replays exactly.
    pub seed: u64,
    /// How storage validates a write's token besides the fencing rule: only against the
    /// highest token it has seen, or also with the lock service (a sequencer check). With
    /// fencing off storage checks nothing, so this changes nothing then.
    pub check: StorageCheck,
    /// How slow every client's own clock runs against the lock server's, per mille (200: it
    /// counts 4 ms while 5 pass). Only `Step::CheckDeadline` reads a client's clock.
    pub client_drift: u64,
    /// How much earlier than the TTL a client stops (`Step::CheckDeadline`): its local
    /// deadline is TTL − margin after its acquire, on its own clock.
    pub deadline_margin: Millis,
    /// The one job every actor's debits carry out, if they all run the same job (`Step::CheckDone`
    /// reads whether it is done). Two of its debits landing means the job ran twice.
    pub job: Option<String>,
    /// The round trip between every client and the lock service (ms): 0 when they share a
    /// region, a WAN round trip when the lock service is in another. A lock command runs on
    /// the lock service at its step's instant; the client's next step waits this long for
    /// the reply. Storage stays near the clients.
    pub lock_rtt: Millis,
}

fn is_zero(t: &Millis) -> bool {
    *t == 0
}

/// How long `real` ms last on a client clock running `drift` per mille slow (rounded down).
pub fn client_elapsed(real: Millis, drift: u64) -> Millis {
    real.saturating_mul(1000 - drift.min(1000)) / 1000
}

impl Scenario {
    /// Whether the job's writes publish a result (a row's value) rather than debit a balance.
    pub fn publishes(&self) -> bool {
        self.actors.iter().any(|a| {
            a.script
                .iter()
                .any(|s| matches!(s, Step::Publish { .. } | Step::Claim { .. }))
        })
    }

    /// The PostgreSQL idle-in-transaction timeout of a row lock, if one is set.
    pub fn idle_timeout(&self) -> Option<Millis> {
        self.lock
            .row()
            .filter(|r| r.idle_timeout)
            .map(|_| self.lease_ttl)
    }

    /// Whether the job's writes are claim rows written before an outside call.
    pub fn claims(&self) -> bool {
        self.actors
            .iter()
            .any(|a| a.script.iter().any(|s| matches!(s, Step::Claim { .. })))
    }

    /// The headline: A takes `acct:1` for 30 ms with token 33, stalls in a 50 ms GC pause,
    /// its lease expires, B takes token 34 and debits 10, then A wakes and debits 10.
    pub fn gc_pause() -> Self {
        let writer = |name: &str, start_at: Millis, work: Millis| Actor {
            name: name.to_owned(),
            start_at,
            script: vec![
                Step::Acquire { retry_every: 10 },
                Step::CheckDone,
                Step::Work { ms: work },
                Step::Debit {
                    amount: 10,
                    idempotency_key: None,
                },
                Step::Work { ms: 5 },
                Step::Release,
            ],
            ..Actor::default()
        };
        let mut a = writer("A", 0, 10);
        a.pauses.push(Pause {
            start: 5,
            duration: 50,
        });
        let b = writer("B", 20, 5);
        Scenario {
            id: "gc-pause".to_owned(),
            title: "GC pause".to_owned(),
            resource: "acct:1".to_owned(),
            initial_balance: 100,
            first_fence: 33,
            lease_ttl: 30,
            policy: FencingPolicy::Strict,
            actors: vec![a, b],
            horizon: 100,
            job: Some("charge order 1".to_owned()),
            ..Scenario::default()
        }
    }

    /// The same scenario under another fencing policy.
    pub fn with_policy(mut self, policy: FencingPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// The scenario with `n` clients. An extra client copies the last one (script, start,
    /// network delay, pause cause) under the first free name of A–E, without its pauses, so
    /// it contends for the same lock at the same moments; fewer clients drops the last ones.
    /// `n` outside [`CLIENTS`] is left to the caller to refuse.
    pub fn with_clients(mut self, n: usize) -> Self {
        self.actors.truncate(n.max(1));
        while self.actors.len() < n {
            let Some(last) = self.actors.last() else {
                break;
            };
            let Some(name) = CLIENT_NAMES
                .into_iter()
                .find(|c| self.actors.iter().all(|a| a.name != *c))
            else {
                break;
            };
            let mut copy = last.clone();
            copy.name = name.to_owned();
            copy.pauses.clear();
            self.actors.push(copy);
        }
        self
    }

    /// Replaces actor `actor`'s first pause (adding one if it had none).
    pub fn with_pause(mut self, actor: usize, pause: Pause) -> Self {
        if let Some(a) = self.actors.get_mut(actor) {
            match a.pauses.first_mut() {
                Some(p) => *p = pause,
                None => a.pauses.push(pause),
            }
        }
        self
    }

    /// Index of the actor called `name`.
    pub fn actor_index(&self, name: &str) -> Option<usize> {
        self.actors.iter().position(|a| a.name == name)
    }

    /// The name of actor `i` ([`Scenario::actor_index`]'s inverse), or its index as text if
    /// there is none: what a link or a field writes for a client.
    pub fn actor_name(&self, i: usize) -> String {
        self.actors
            .get(i)
            .map_or_else(|| i.to_string(), |a| a.name.clone())
    }
}
