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
        nodes: Vec::new(),
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
    // A compare-and-delete's noop has a reason only the lock knows; a DEL that found no key
    // knows its own (the lease ran out), so the client's event is taken whole.
    let noop = |via| EventKind::ReleaseNoop {
        via,
        reason: fencing_lab::core::NoopReason::Expired,
        deleted: Vec::new(),
    };
    let deleted = Vec::new();
    let cad = noop(ReleaseMode::CompareAndDelete);
    assert_eq!(Seen::from(cad), Seen::ReleaseNoop { deleted });
    for via in [ReleaseMode::Del, ReleaseMode::GetThenDel] {
        assert_eq!(Seen::from(noop(via)), Seen::Event(noop(via)));
    }

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
        grant: None,
        believes: None,
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

/// A gives up waiting for its write's reply at once (request timeout 0, network delay 10),
/// releases and is granted again in the same instant: the write in flight was sent under
/// A's first grant, which its second superseded. The writer knows which grant it wrote
/// under (under a separate counter too, whose token is not the lease's number); the fold
/// used to guess it by time (A's newest grant at or before the send, here its second) and
/// said the write's lease was never superseded.
#[test]
fn a_write_is_folded_under_the_grant_its_writer_sent_it_under() {
    let a = Actor {
        name: "A".to_owned(),
        network_delay: 10,
        request_timeout: Some(0),
        script: vec![
            Step::Acquire { retry_every: 5 },
            Step::Debit {
                amount: 10,
                idempotency_key: None,
            },
            Step::Release,
            Step::Acquire { retry_every: 5 },
            Step::Work { ms: 20 },
        ],
        ..Actor::default()
    };
    for tokens in [RedisTokens::SameRedis, RedisTokens::SeparateCounter] {
        let sc = Scenario {
            title: "a write in flight across a regrant".to_owned(),
            resource: "acct:1".to_owned(),
            initial_balance: 100,
            first_fence: 33,
            lease_ttl: 30,
            lock: LockKind::Redis { tokens },
            actors: vec![a.clone()],
            horizon: 40,
            ..Scenario::default()
        };
        let trace = run(&sc);
        let (mut grants, mut applied) = (Vec::new(), None);
        for e in &trace.events {
            match &e.kind {
                EventKind::Acquired { fence, .. } => grants.push((e.at, *fence)),
                EventKind::WriteApplied {
                    superseded_by,
                    sent_at,
                    ..
                } => applied = Some((*sent_at, superseded_by.clone())),
                _ => {}
            }
        }
        let [(_, _), (regranted_at, second)] = grants[..] else {
            panic!("two grants: {trace:#?}");
        };
        let second = fencing_lab::core::Grant {
            owner: "A".to_owned(),
            fence: second,
        };
        assert_eq!(applied, Some((regranted_at, Some(second))), "{trace:#?}");
        rebuilds(&sc, "regrant-in-flight");
    }
}

/// Two writers hold token 33 (a rolled-back counter hands it out twice) and both debit at
/// t=10; A debits again with 34 at t=11. Storage's standby is promoted at t=12 with A's
/// first debit but without B's and A's second, as the harness read the two write logs:
/// storage is as it was after A's first debit (90), by the ledger's own rollback. The fold
/// used to find the oldest lost write by its time and token, which A's kept debit shares,
/// and rolled storage back to before it (100).
#[test]
fn a_storage_failover_rolls_back_to_before_the_first_write_it_lost() {
    use fencing_lab::core::{Observation, Seen, WriteRequest};
    let sc = Scenario {
        policy: FencingPolicy::Off,
        ..Scenario::storage_failover()
    };
    let write = |at, actor: usize, (fence, balance): (u64, i64)| {
        let writer = sc.actors[actor].name.clone();
        let request = WriteRequest {
            resource: sc.resource.clone(),
            writer,
            fence: Some(Fence(fence)),
            amount: 10,
            idempotency_key: None,
            publish: None,
        };
        let seen = Seen::WriteApplied {
            fence: Some(Fence(fence)),
            amount: 10,
            sent_at: at,
            result: Ok(Some(balance)),
            publish: None,
        };
        Observation {
            request: Some(request),
            ..seen_by(at, Some(actor), seen)
        }
    };
    let granted = |fence| {
        Seen::Event(EventKind::Acquired {
            fence: Fence(fence),
            expires_at: 40,
            nodes: Vec::new(),
            token_later: false,
        })
    };
    let failover = Seen::StorageFailover {
        lag: 5,
        lost: vec![
            ("B".to_owned(), Some(Fence(33))),
            ("A".to_owned(), Some(Fence(34))),
        ],
    };
    let observations = vec![
        seen_by(0, Some(0), granted(33)),
        seen_by(5, Some(1), granted(33)),
        write(10, 0, (33, 90)),
        write(10, 1, (33, 80)),
        write(11, 0, (34, 70)),
        seen_by(12, None, failover),
    ];
    let account = Account {
        balance: 90,
        ..Account::default()
    };
    let t = recorded(&sc, observations, account, recording()).expect("a fold");
    let failed_over = (t.events.iter())
        .find(|e| matches!(e.kind, EventKind::StorageFailover { .. }))
        .expect("the failover");
    let EventKind::StorageFailover { lost, .. } = &failed_over.kind else {
        unreachable!()
    };
    let lost: Vec<_> = (lost.iter())
        .map(|w| (w.at, w.request.writer.as_str(), w.request.fence))
        .collect();
    assert_eq!(
        lost,
        [(10, "B", Some(Fence(33))), (11, "A", Some(Fence(34)))]
    );
    let s = &failed_over.snapshot;
    assert_eq!(
        (s.balance, s.last_write_fence),
        (90, Some(Fence(33))),
        "A's first debit is on the standby"
    );
}

fn seen_by(
    at: u64,
    actor: Option<usize>,
    seen: fencing_lab::core::Seen,
) -> fencing_lab::core::Observation {
    fencing_lab::core::Observation {
        at,
        actor,
        seen,
        request: None,
        grant: None,
        believes: None,
    }
}

/// Redlock over three nodes: A holds its key on all three until t=30 and extends to t=40 at
/// t=10, but only nodes 0 and 1 take the extension (a majority; node 2's reply said no).
/// Node 0's clock then steps 20 ms at t=25: its key runs out at once, so A's majority ends
/// with node 2's unextended key, at t=30. The fold moves only the keys of the nodes that
/// took the extension, as core's Redlock does; it used to move all three, and A's lease
/// lived on to t=40.
#[test]
fn a_redlock_extend_moves_only_the_keys_of_the_nodes_that_took_it() {
    use fencing_lab::core::{FaultAt, RedlockSetup, Seen, Shortened};
    let a = Actor {
        name: "A".to_owned(),
        script: vec![Step::Acquire { retry_every: 5 }],
        ..Actor::default()
    };
    let sc = Scenario {
        title: "an extend on two of three nodes".to_owned(),
        resource: "acct:1".to_owned(),
        initial_balance: 100,
        first_fence: 1,
        lease_ttl: 30,
        lock: LockKind::Redlock(RedlockSetup {
            nodes: 3,
            reach: Vec::new(),
        }),
        faults: vec![FaultAt {
            at: 25,
            fault: fencing_lab::core::Fault::ClockJump { node: 0, by: 20 },
        }],
        actors: vec![a],
        horizon: 50,
        ..Scenario::default()
    };
    let acquired = EventKind::Acquired {
        fence: Fence(1),
        expires_at: 30,
        nodes: vec![0, 1, 2],
        token_later: false,
    };
    let extended = EventKind::Extended {
        fence: Fence(1),
        expires_at: 40,
        watchdog: None,
        nodes: vec![0, 1],
    };
    let observations = vec![
        seen_by(0, Some(0), Seen::Event(acquired)),
        seen_by(10, Some(0), Seen::Event(extended)),
        seen_by(25, None, Seen::LockClockJumped { by: 20 }),
    ];
    let account = Account {
        balance: 100,
        ..Account::default()
    };
    let t = recorded(&sc, observations, account, recording()).expect("a fold");
    let jumped = t.events.iter().find_map(|e| match &e.kind {
        EventKind::LockClockJumped { shortened, .. } => Some(shortened.clone()),
        _ => None,
    });
    let shortened = Shortened {
        owner: "A".to_owned(),
        fence: Fence(1),
        granted_until: 40,
        ends_at: 30,
    };
    assert_eq!(jumped, Some(Some(shortened)), "{:#?}", t.events);
    let expired = (t.events.iter()).find(|e| matches!(e.kind, EventKind::LeaseExpired { .. }));
    assert_eq!(expired.map(|e| e.at), Some(30));
}

/// A GET of the lock key under GET-then-DEL: the client's own value comes with its own lease's
/// token, which it knows (the fold takes it); another's comes without, and the fold finds
/// that lease's token from its grants. Both kinds happen across the deck.
#[test]
fn a_get_of_the_clients_own_value_is_seen_whole_and_anothers_without_its_token() {
    use fencing_lab::core::Seen;
    let (mut own, mut others) = (0, 0);
    for entry in deck::DECK {
        let sc = Scenario {
            release: ReleaseMode::GetThenDel,
            ..(entry.build)()
        };
        let trace = run(&sc);
        for o in observations_of(&trace) {
            let name = o.actor.map(|i| sc.actors[i].name.clone());
            match o.seen {
                Seen::Event(EventKind::LockValueRead {
                    owner: Some(owner),
                    fence,
                }) => {
                    assert_eq!(Some(owner), name, "{}", entry.id);
                    assert!(fence.is_some(), "{}", entry.id);
                    own += 1;
                }
                Seen::LockValueRead { owner } => {
                    assert_ne!(Some(owner), name, "{}", entry.id);
                    others += 1;
                }
                _ => {}
            }
        }
    }
    assert!(own > 0 && others > 0, "own {own}, others {others}");
}
