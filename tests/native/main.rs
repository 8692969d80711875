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
mod old_links;
mod partition;
mod properties;
mod raft_partition;
mod readme;
mod record;
mod redis_restart;
mod renewal_herd;
mod reveal_timeline;
mod row_lock;
mod sequencer;
mod share;
mod storage_failover;
mod story;
mod story_pushbacks;
mod story_review;
mod story_review_2;
mod story_review_3;
mod uuid_token;
mod whatif;

/// A file here runs only if it is a module above: a new test file left out would pass by
/// never running.
#[test]
fn every_test_file_here_is_a_module() {
    let here = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/native");
    let declared = include_str!("main.rs");
    let mut files: Vec<String> = std::fs::read_dir(here)
        .expect("tests/native")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter_map(|name| name.strip_suffix(".rs").map(str::to_owned))
        .filter(|name| name != "main")
        .collect();
    files.sort();
    let missing: Vec<&String> = (files.iter())
        .filter(|name| !declared.lines().any(|l| l == format!("mod {name};")))
        .collect();
    assert!(files.len() >= 25, "found {files:?}");
    assert!(
        missing.is_empty(),
        "not declared in tests/native/main.rs: {missing:?}"
    );
}
