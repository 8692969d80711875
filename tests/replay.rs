//! The replay against real servers (`fencing-lab replay`): ignored by default because it
//! needs redis-server, PostgreSQL 15, etcd, ZooKeeper and libfaketime installed (scripts/replay.sh
//! installs them and is what scripts/test.sh runs). Run it with
//! `cargo test --features replay --test replay -- --ignored` (the test builds only with the
//! `replay` feature, which brings the servers' client libraries).

use std::process::Command;

#[test]
#[ignore = "needs redis-server, postgresql, etcd-server, zookeeper and faketime; see scripts/replay.sh"]
fn replay_agrees_with_the_core_on_real_servers() {
    let out = Command::new(env!("CARGO_BIN_EXE_fencing-lab"))
        .arg("replay")
        .output()
        .expect("run fencing-lab replay");
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    println!("{stdout}");
    let last = stdout.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("replay: ") && last.ends_with(" 0 mismatches"),
        "last line: {last}"
    );
    assert!(out.status.success(), "replay exited with {}", out.status);
}

#[test]
fn replay_refuses_an_unknown_scenario() {
    let out = Command::new(env!("CARGO_BIN_EXE_fencing-lab"))
        .args(["replay", "no-such-scenario"])
        .output()
        .expect("run fencing-lab replay");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("unknown scenario"), "{stderr}");
    // The known list names every deck entry, the etcd runs and their ZooKeeper twins, and the
    // failover's what-if.
    for id in fencing_lab::core::DECK.iter().map(|e| e.id) {
        assert!(stderr.contains(id), "{id} missing from: {stderr}");
    }
    assert!(stderr.contains("redis-failover@etcd"), "{stderr}");
    assert!(stderr.contains("gc-pause@zookeeper"), "{stderr}");
    assert!(stderr.contains("sequencer@highest@zookeeper"), "{stderr}");
    assert!(stderr.contains("row-lock@no-timeout"), "{stderr}");
}
