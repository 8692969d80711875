//! The native tests, one binary: each file is a module here, so `cargo test` compiles and
//! links the library into one test binary instead of one per file (25 before).

mod claim_row;
mod common;
mod contracts;
mod cross_region;
mod deck;
mod drift_margin;
mod efficiency;
mod explore;
mod json;
mod layering;
mod lock_delay;
mod lock_queue;
mod partition;
mod properties;
mod raft_partition;
mod readme;
mod record;
mod redis_restart;
mod renewal_herd;
mod row_lock;
mod sequencer;
mod share;
mod story;
mod story_review;
mod uuid_token;
mod whatif;
