//! The fold that turns what clients saw on real servers into a trace must agree with the
//! engine: fed only the observable part of a simulated run, it rebuilds the run exactly.

use fencing_lab::core::{
    deck, observations_of, recorded, run, Account, FencingPolicy, Recording, ReleaseMode, Scenario,
    StorageCheck, TokenSource,
};

fn recording() -> Recording {
    Recording {
        systems: vec!["Redis 7.0.15".into(), "PostgreSQL 15.18".into()],
        timing: "1 scenario ms = 20 real ms".into(),
        notes: Vec::new(),
    }
}

/// Fed only what a client could see of an engine run, the fold rebuilds the run: every
/// event, every snapshot, the write log and the verdicts. So what the replay records is
/// drawn and narrated exactly as a simulated run would be.
#[test]
fn the_fold_rebuilds_every_deck_run_from_what_clients_see() {
    for entry in deck::DECK {
        for policy in FencingPolicy::ALL {
            let sc = Scenario {
                policy,
                ..(entry.build)()
            };
            rebuilds(&sc, entry.id);
        }
    }
}

/// And the what-ifs: every release mode, token source and TTL, with and without the
/// barrier, with a replica that lags, and with each storage check, on every deck scenario.
#[test]
fn the_fold_rebuilds_the_what_ifs_too() {
    for entry in deck::DECK {
        for release in ReleaseMode::ALL {
            for token_source in TokenSource::CHOICES {
                for (ttl, skip_barrier, lag, check) in [
                    (20, false, None, StorageCheck::HighestToken),
                    (30, true, Some(0), StorageCheck::HighestToken),
                    (45, false, Some(10), StorageCheck::HighestToken),
                    (20, false, None, StorageCheck::Sequencer),
                    (30, true, Some(0), StorageCheck::Sequencer),
                    (45, false, Some(10), StorageCheck::Sequencer),
                ] {
                    let base = (entry.build)();
                    let Ok(lock) = base.lock.with_tokens(token_source) else {
                        continue;
                    };
                    let mut sc = Scenario {
                        release,
                        lock,
                        lease_ttl: ttl,
                        skip_barrier,
                        check,
                        ..base
                    };
                    sc.set_crash_lag(lag);
                    rebuilds(&sc, entry.id);
                }
            }
        }
    }
}

fn rebuilds(sc: &Scenario, id: &str) {
    let policy = sc.policy;
    let entry_id = id;
    {
        {
            let sim = run(sc);
            let account = Account {
                balance: sim.summary.final_balance,
                last_fence: sim.summary.last_fence,
                last_write_fence: sim.summary.last_write_fence,
                result: None,
            };
            let what = format!("{entry_id} {} {sc:?}", policy.code());
            let rec = recorded(sc, observations_of(&sim), account, recording())
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            for (i, (a, b)) in sim.events.iter().zip(&rec.events).enumerate() {
                assert_eq!(a, b, "{what}: event {i}");
            }
            assert_eq!(sim.events.len(), rec.events.len(), "{what}: events");
            assert_eq!(sim.initial, rec.initial, "{what}: initial");
            assert_eq!(sim.writes, rec.writes, "{what}: writes");
            assert_eq!(sim.summary, rec.summary, "{what}: summary");
            assert_eq!(rec.recorded, Some(recording()));
        }
    }
}

/// A recording is read in the page by the browser's `JSON.parse`, whose numbers are
/// doubles: every integer in a deck run's trace stays at or under 2^53, so the page reads
/// back exactly what the replay wrote (a larger one would be refused, with its path).
#[test]
fn every_number_in_a_recording_survives_the_browsers_json_parse() {
    fn check(v: &serde_json::Value, at: &str, id: &str) {
        match v {
            serde_json::Value::Number(n) => assert!(
                n.as_u64().is_none_or(|u| u <= 1 << 53)
                    && n.as_i64().is_none_or(|i| i.unsigned_abs() <= 1 << 53),
                "{id}: {at} = {n} is past 2^53"
            ),
            serde_json::Value::Array(a) => a
                .iter()
                .enumerate()
                .for_each(|(i, v)| check(v, &format!("{at}[{i}]"), id)),
            serde_json::Value::Object(o) => o
                .iter()
                .for_each(|(k, v)| check(v, &format!("{at}.{k}"), id)),
            _ => {}
        }
    }
    for entry in deck::DECK {
        for policy in FencingPolicy::ALL {
            let sc = Scenario {
                policy,
                ..(entry.build)()
            };
            let trace = serde_json::to_value(run(&sc)).unwrap();
            check(&trace, "", entry.id);
        }
    }
}

/// What a client sees has no field for what it cannot know: a failover is its lost owners
/// and the next token, a refusal has no holder, a stale write no high-water mark. The fold
/// derives them (here from the redis-failover and gc-pause runs), as the engine had them.
#[test]
fn an_observation_leaves_out_what_no_client_sees_and_the_fold_derives_it() {
    use fencing_lab::core::{EventKind, Fence, Lease, Refusal, Seen, WriteError};
    let lost = vec![Lease {
        owner: "A".into(),
        fence: Fence(33),
        expires_at: 30,
    }];
    let (next_fence, rolled_back) = (Fence(33), true);
    let failover = EventKind::Failover {
        lost,
        next_fence,
        rolled_back,
    };
    let lost = vec!["A".to_owned()];
    assert_eq!(Seen::from(failover), Seen::Failover { lost, next_fence });
    let stale = EventKind::BarrierSet {
        fence: Fence(33),
        result: Err(WriteError::StaleFence {
            token: Fence(33),
            last: Fence(34),
        }),
    };
    let result = Err(Refusal::StaleFence {
        token: Fence(33),
        last: Fence(34),
    });
    let fence = Fence(33);
    assert_eq!(Seen::from(stale), Seen::BarrierSet { fence, result });

    for id in ["redis-failover", "gc-pause"] {
        let sc = Scenario {
            policy: FencingPolicy::Strict,
            ..(deck::find(id).expect("a deck entry").build)()
        };
        let sim = run(&sc);
        let seen = observations_of(&sim);
        assert!(
            seen.iter()
                .all(|o| !matches!(o.seen, Seen::Event(EventKind::LeaseExpired { .. }))),
            "{id}: an expiry is the fold's"
        );
        let derived = |e: &EventKind| {
            matches!(
                e,
                EventKind::Failover { .. }
                    | EventKind::AcquireRefused { .. }
                    | EventKind::WriteApplied { result: Err(_), .. }
            )
        };
        assert!(sim.events.iter().any(|e| derived(&e.kind)), "{id}");
        let account = Account {
            balance: sim.summary.final_balance,
            last_fence: sim.summary.last_fence,
            last_write_fence: sim.summary.last_write_fence,
            result: None,
        };
        let rec = recorded(&sc, seen, account, recording()).expect(id);
        let theirs: Vec<_> = sim.events.iter().filter(|e| derived(&e.kind)).collect();
        let ours: Vec<_> = rec.events.iter().filter(|e| derived(&e.kind)).collect();
        assert_eq!(ours, theirs, "{id}");
    }
}
