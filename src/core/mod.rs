//! The pure core: lease lock, fenced ledger and a deterministic scenario engine.
//!
//! Nothing here reads the system clock, touches the DOM or keeps globals: time is
//! passed in explicitly, so the same scenario always produces the same trace, natively
//! and in wasm alike.

pub mod clock;
pub mod engine;
pub mod lease;
pub mod ledger;
pub mod scenario;

pub use clock::{Clock, Millis};
pub use engine::{run, EventKind, Lane, LeaseEnd, LeaseSpan, Snapshot, Summary, Trace, TraceEvent};
pub use lease::{Acquire, Fence, Lease, LeaseLock, LockError};
pub use ledger::{Account, FencingPolicy, Ledger, WriteError, WriteRecord, WriteRequest};
pub use scenario::{Actor, Pause, Scenario, ScenarioError, Step};
