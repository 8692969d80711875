//! The fold that turns what clients saw on real servers into a trace must agree with the
//! engine: fed only the observable part of a simulated run, it rebuilds the run exactly.

use fencing_lab::core::{
    deck, observations_of, recorded, run, Account, Actor, EventKind, Fence, FencingPolicy,
    LeaseEnd, LockKind, Pause, Recording, RedisTokens, ReleaseMode, Scenario, Step, StorageCheck,
    TokenSource,
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

/// Under a separate counter a lease's token is not its number: B's SET takes lease 1 and B
/// freezes before its INCR; its lease runs out at 30, A's SET takes lease 2 and A's INCR
/// token 1; A extends to 66. The extended lease is the one that runs out then (the engine
/// keyed the extension's expiry by A's token, which named no lease, so it never did), and
/// the fold rebuilds that run.
#[test]
fn an_extended_lease_under_a_separate_counter_runs_out_at_its_new_expiry() {
    let b = Actor {
        name: "B".to_owned(),
        script: vec![Step::Acquire { retry_every: 5 }],
        pauses: vec![Pause {
            start: 1,
            duration: 40,
        }],
        ..Actor::default()
    };
    let a = Actor {
        name: "A".to_owned(),
        start_at: 30,
        script: vec![
            Step::Acquire { retry_every: 5 },
            Step::Work { ms: 5 },
            Step::Extend,
            Step::Work { ms: 60 },
        ],
        ..Actor::default()
    };
    let sc = Scenario {
        title: "extend after the INCR".to_owned(),
        resource: "acct:1".to_owned(),
        initial_balance: 100,
        first_fence: 1,
        lease_ttl: 30,
        lock: LockKind::Redis {
            tokens: RedisTokens::SeparateCounter,
        },
        actors: vec![b, a],
        horizon: 100,
        ..Scenario::default()
    };
    let trace = run(&sc);
    let extended = EventKind::Extended {
        fence: Fence(1),
        expires_at: 66,
        watchdog: None,
    };
    assert!(
        trace.events.iter().any(|e| e.kind == extended),
        "{trace:#?}"
    );
    let spans = trace.lease_spans();
    let a_lease = spans.iter().find(|s| s.owner == "A").expect("A's lease");
    assert_eq!(
        (a_lease.fence, a_lease.from, a_lease.to, a_lease.end),
        (Fence(2), 30, 66, LeaseEnd::Expired)
    );
    rebuilds(&sc, "extend-after-incr");
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
/// and the next token, a refusal has no holder; what storage's reply says it keeps (a stale
/// token's high-water mark). The fold derives the rest (here from the redis-failover and
/// gc-pause runs), as the engine had them.
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

/// gc-pause under strict, with only the observations given (A was granted 33 until t=30).
fn fold(seen: Vec<fencing_lab::core::Observation>) -> Result<fencing_lab::core::Trace, String> {
    let sc = Scenario {
        policy: FencingPolicy::Strict,
        ..Scenario::gc_pause()
    };
    let account = Account {
        balance: sc.initial_balance,
        ..Account::default()
    };
    recorded(&sc, seen, account, recording())
}

fn seen(at: u64, actor: usize, seen: fencing_lab::core::Seen) -> fencing_lab::core::Observation {
    fencing_lab::core::Observation {
        at,
        actor: Some(actor),
        seen,
        request: None,
    }
}

fn a_granted_33() -> fencing_lab::core::Observation {
    use fencing_lab::core::{EventKind, Fence, Seen};
    let granted = EventKind::Acquired {
        fence: Fence(33),
        expires_at: 30,
        nodes: Vec::new(),
        token_later: false,
    };
    seen(0, 0, Seen::Event(granted))
}

/// A server that still holds a lease past its TTL (etcd revokes on its own schedule) refuses
/// B at t=30: the fold names the lapsed lease's owner and no end, and the words say the lease
/// is past its TTL, where the fold used to answer an empty holder until t=0.
#[test]
fn a_refusal_past_the_ttl_names_the_lapsed_lease_and_no_end() {
    use fencing_lab::core::{story::Story, EventKind, Seen};
    let refused = Seen::AcquireRefused {
        retry_in: 10,
        nodes: Vec::new(),
    };
    let t = fold(vec![a_granted_33(), seen(30, 1, refused)]).expect("a fold");
    let kinds: Vec<&EventKind> = t.events.iter().map(|e| &e.kind).collect();
    assert!(
        matches!(kinds.as_slice(), [
            EventKind::Acquired { .. },
            EventKind::LeaseExpired { .. },
            EventKind::AcquireRefused { holder, until: None, .. },
        ] if holder == "A"),
        "{kinds:#?}"
    );
    let words = Story::of(&t);
    let all: Vec<String> = (0..=words.last()).map(|s| words.narration(s)).collect();
    assert!(
        all.iter().any(|n| n.contains("A's lease is past its TTL")),
        "{all:#?}"
    );
}

/// A release's token is the client's own lease, as it said it, even once the fold has let
/// that lease run out; a stale write's high-water mark is the one storage's reply named,
/// not the fold's own reckoning (which has no mark here). Both used to be `Fence(0)`.
#[test]
fn a_release_and_a_refusal_carry_the_values_their_replies_gave() {
    use fencing_lab::core::{EventKind, Fence, Refusal, ReleaseMode, Seen, WriteError};
    let release = EventKind::Released {
        fence: Fence(33),
        via: ReleaseMode::CompareAndDelete,
    };
    let stale = Seen::WriteApplied {
        fence: Some(Fence(33)),
        amount: 10,
        sent_at: 35,
        result: Err(Refusal::StaleFence {
            token: Fence(33),
            last: Fence(40),
        }),
        publish: None,
    };
    let t = fold(vec![
        a_granted_33(),
        seen(35, 0, stale),
        seen(40, 0, Seen::Event(release.clone())),
    ])
    .expect("a fold");
    let refused = WriteError::StaleFence {
        token: Fence(33),
        last: Fence(40),
    };
    assert!(t.events.iter().any(
        |e| matches!(&e.kind, EventKind::WriteApplied { result: Err(r), .. } if *r == refused)
    ));
    assert_eq!(t.events.last().map(|e| &e.kind), Some(&release));
}

/// A DEL of a lease no grant explains has no true token: the fold says so instead of
/// making one up.
#[test]
fn an_observation_no_grant_explains_is_an_error() {
    use fencing_lab::core::Seen;
    let del = Seen::DeletedOthersLease {
        owner: "B".to_owned(),
    };
    let err = fold(vec![a_granted_33(), seen(10, 0, del)]).expect_err("no grant of B's");
    assert!(err.contains("t=10: A deleted B's lease"), "{err}");
    let refused = Seen::AcquireRefused {
        retry_in: 10,
        nodes: Vec::new(),
    };
    let err = fold(vec![seen(5, 1, refused)]).expect_err("no lease at all");
    assert!(err.contains("t=5: B was refused"), "{err}");
}
