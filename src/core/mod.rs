//! The pure core: lease lock, fenced ledger and a deterministic scenario engine.
//!
//! Nothing here reads the system clock, touches the DOM or keeps globals: time is
//! passed in explicitly, so the same scenario always produces the same trace, natively
//! and in wasm alike.

pub mod clock;
pub mod deck;
pub mod engine;
pub mod explore;
pub mod lease;
pub mod ledger;
pub mod scenario;

pub use clock::{Clock, Millis, SplitMix64};
pub use deck::{DeckEntry, DECK};
pub use engine::{run, EventKind, Lane, LeaseEnd, LeaseSpan, Snapshot, Summary, Trace, TraceEvent};
pub use lease::{
    renewal_herd, renewal_interval, Acquire, Fence, HerdReport, Lease, LeaseLock, LockError,
};
pub use ledger::{Account, FencingPolicy, Ledger, WriteError, WriteRecord, WriteRequest};
pub use scenario::{Actor, ClockJump, Pause, ReleaseMode, Scenario, ScenarioError, Step};
