//! The pure core: lease lock, fenced ledger and a deterministic scenario engine.
//!
//! Nothing here reads the system clock, touches the DOM or keeps globals: time is
//! passed in explicitly, so the same scenario always produces the same trace, natively
//! and in wasm alike.
//!
//! The modules form a line, each using only those before it (`tests/native/layering.rs` checks it):
//! clock ← lease ← redlock ← ledger ← fault ← scenario ← trace ← audit ← record ← client ←
//! queue ← locks ← sim ← actor ← engine ← story ← herd ← deck ← explore.

mod actor;
mod audit;
pub mod client;
mod clock;
pub mod deck;
mod engine;
pub mod explore;
pub mod fault;
mod herd;
mod lease;
mod ledger;
mod locks;
mod queue;
mod record;
mod redlock;
mod scenario;
mod sim;
pub mod story;
mod trace;

pub use clock::{Clock, Millis, SplitMix64};
pub use deck::{DeckEntry, DECK};
pub use engine::run;
pub use fault::{can_reach, Fault, FaultAt, FaultKind, Node};
pub use herd::{renewal_herd, HerdReport, HERD_BUCKETS, MAX_HERD, MAX_HERD_RENEWALS};
pub use lease::{renewal_interval, Acquire, Fence, Lease, LeaseLock, LockError};
pub use ledger::{
    Account, FencingPolicy, Ledger, StorageCheck, WriteError, WriteRecord, WriteRequest,
};
pub use record::{observations_of, recorded, Observation, Refusal, Seen};
pub use scenario::{
    client_elapsed, random_token, Actor, ClockJump, Herd, LockKind, Partition, Pause, PauseCause,
    RedisTokens, RedlockSetup, ReleaseMode, RowLock, Scenario, ScenarioError, ScenarioWire,
    ServiceOptions, Step, TokenSource, CLIENTS, COUNTER_GAP, GET_DEL_GAP,
    IDLE_IN_TRANSACTION_TIMEOUT, MAX_ACTORS, MAX_CLIENT_DRIFT, MAX_LABEL, MAX_NODES, MAX_STEPS,
    MAX_TIME, RANDOM_TOKENS,
};
pub(crate) use trace::fault_event;
pub use trace::{
    Awareness, EventKind, ExpiryCause, Grant, Lane, LeaseEnd, LeaseSpan, LockCommand, NoopReason,
    ProviderOutcome, Recording, Shortened, SkipReason, Snapshot, Summary, Trace, TraceEvent,
};
