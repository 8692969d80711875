//! The fold that turns what clients saw on real servers into a trace must agree with the
//! engine: fed only the observable part of a simulated run, it rebuilds the run exactly.

use fencing_lab::core::{
    deck, observations_of, recorded, run, Account, Actor, EventKind, Fault, Fence, FencingPolicy,
    Lease, LeaseEnd, LockKind, Pause, Recording, RedisTokens, ReleaseMode, RowLock, Scenario,
    Shortened, Snapshot, Step, StorageCheck, TokenSource, Trace,
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
    let sc = separate_counter_handoff(
        "extend after the INCR",
        vec![
            Step::Acquire { retry_every: 5 },
            Step::Work { ms: 5 },
            Step::Extend,
            Step::Work { ms: 60 },
        ],
    );
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

/// Under a separate counter: B's SET takes lease 1 and B freezes (1–41) before its INCR, so
/// lease 1 runs out at 30; A, from 30, runs `a_script` (its SET takes lease 2, its INCR
/// token 1).
fn separate_counter_handoff(title: &str, a_script: Vec<Step>) -> Scenario {
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
        script: a_script,
        ..Actor::default()
    };
    Scenario {
        title: title.to_owned(),
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

/// The rules the engine and the fold share (`EventKind::restarts_idle_clock`,
/// `EventKind::pause_ended`, `Shortened::of`), read back off every event of a trace: a
/// statement that restarts a row lock's idle clock leaves its holder's lease ending one idle
/// timeout later, and any other event of the same lease leaves its end be; a pause end
/// says the lease is gone exactly when its client believed and the lock service held no
/// lease of its; a clock step says it cut short the lease of the holder just before it, if
/// that lease now ends sooner. Counts each rule's cases: `[touched, kept, gone, not gone,
/// cut short, not cut short]`.
fn follows_the_shared_rules(t: &Trace, what: &str, n: &mut [usize; 6]) {
    let sc = &t.scenario;
    let mut before = &t.initial;
    for (i, e) in t.events.iter().enumerate() {
        let what = format!("{what}: event {i} {e:?}");
        let (s, name) = (&e.snapshot, e.actor.as_deref());
        let own = |s: &Snapshot| s.holder.clone().filter(|h| Some(h.owner.as_str()) == name);
        if e.kind.restarts_idle_clock(&sc.lock) {
            if let Some(h) = own(s) {
                let deadline = sc.idle_timeout().map_or(u64::MAX, |ms| e.at + ms);
                assert_eq!(h.expires_at, deadline, "{what}");
                n[0] += 1;
            }
        } else if sc.lock.row().is_some()
            && !matches!(
                e.kind,
                EventKind::Acquired { .. } | EventKind::Extended { .. }
            )
        {
            if let (Some(a), Some(b)) = (&before.holder, &s.holder) {
                if a.fence == b.fence && a.owner == b.owner {
                    assert_eq!(a.expires_at, b.expires_at, "{what}");
                    n[1] += 1;
                }
            }
        }
        if let (EventKind::PauseEnded { lease_gone }, Some(name)) = (&e.kind, name) {
            let believes = before.believers.iter().any(|b| b == name);
            let mut live = s.holder.iter().chain(&s.other_holders);
            let held = live.any(|l| l.owner == name);
            assert_eq!(e.kind, EventKind::pause_ended(believes, held), "{what}");
            n[if *lease_gone { 2 } else { 3 }] += 1;
        }
        if let EventKind::LockClockJumped { shortened, .. } = &e.kind {
            let holder = before.holder.clone().filter(|l| l.is_live(e.at));
            let ends_at = |l: &Lease| {
                let mut now = s.holder.iter().chain(&s.other_holders);
                now.find(|x| x.fence == l.fence)
                    .map_or(e.at, |x| x.expires_at)
            };
            assert_eq!(*shortened, Shortened::of(holder, ends_at), "{what}");
            n[if shortened.is_some() { 4 } else { 5 }] += 1;
        }
        before = s;
    }
}

/// `sc`, and its what-ifs for the lock's own rules: a row lock with its idle timeout set
/// the other way, and with a clock step on the lock's node; a clock step on each other
/// Redlock node (on one the holder has no key on, it cuts nothing short).
fn lock_what_ifs(sc: &Scenario) -> Vec<Scenario> {
    use fencing_lab::core::FaultAt;
    let mut all = vec![sc.clone()];
    if let Some(r) = sc.lock.row() {
        let lock = LockKind::Row(RowLock {
            idle_timeout: !r.idle_timeout,
        });
        all.push(Scenario { lock, ..sc.clone() });
        let mut stepped = sc.clone();
        let fault = Fault::ClockJump { node: 0, by: 25 };
        stepped.faults.push(FaultAt { at: 10, fault });
        all.push(stepped);
    }
    let nodes = sc.lock.redlock().map_or(0, |r| r.nodes);
    for node in (0..nodes).filter(|n| *n != sc.jumping_node()) {
        let mut other = sc.clone();
        for f in &mut other.faults {
            if let Fault::ClockJump { node: n, .. } = &mut f.fault {
                *n = node;
            }
        }
        if other.faults != sc.faults {
            all.push(other);
        }
    }
    all
}

/// Every deck run under every policy, and the what-ifs that change the lock: the engine's
/// trace and the fold's, rebuilt from what its clients saw, both follow the three rules,
/// and each rule has cases both ways.
#[test]
fn the_engine_and_the_fold_follow_the_same_lock_rules() {
    let mut n = [0; 6];
    for entry in deck::DECK {
        for policy in FencingPolicy::ALL {
            let base = Scenario {
                policy,
                ..(entry.build)()
            };
            for sc in lock_what_ifs(&base) {
                let sim = run(&sc);
                let account = Account {
                    balance: sim.summary.final_balance,
                    last_fence: sim.summary.last_fence,
                    last_write_fence: sim.summary.last_write_fence,
                    result: None,
                };
                let what = format!("{} {}", entry.id, policy.code());
                let rec = recorded(&sc, observations_of(&sim), account, recording())
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                follows_the_shared_rules(&sim, &format!("{what} engine"), &mut n);
                follows_the_shared_rules(&rec, &format!("{what} fold"), &mut n);
            }
        }
    }
    assert!(n.iter().all(|c| *c > 0), "{n:?}");
}

/// A row lock with a 30 ms idle timeout, folded from what clients saw: A's job-status read
/// at 4 and its accepted write at 10 restart its session's idle clock (core's rule), B's
/// read at 8 is a statement of another session and leaves A's deadline be; so A's session
/// is terminated at 40, one idle timeout after its last statement (its refused retry at 12
/// ended in an error, and restarts nothing).
#[test]
fn the_fold_restarts_a_row_locks_idle_clock_by_cores_rule() {
    use fencing_lab::core::{Observation, Refusal, Seen, WriteRequest};
    let sc = Scenario {
        policy: FencingPolicy::Strict,
        ..Scenario::row_lock()
    };
    assert_eq!(sc.idle_timeout(), Some(30));
    let granted = EventKind::Acquired {
        fence: Fence(sc.first_fence),
        expires_at: 30,
        nodes: Vec::new(),
        token_later: false,
    };
    let checked = || Seen::Event(EventKind::JobChecked { done: false });
    let applied = Seen::WriteApplied {
        fence: None,
        amount: 10,
        sent_at: 10,
        result: Ok(Some(90)),
        publish: None,
    };
    let refused = Seen::WriteApplied {
        fence: None,
        amount: 10,
        sent_at: 12,
        result: Err(Refusal::DuplicateIntent {
            key: "order-1".to_owned(),
            original_balance: 90,
        }),
        publish: None,
    };
    let request = WriteRequest {
        resource: sc.resource.clone(),
        writer: "A".to_owned(),
        fence: None,
        amount: 10,
        idempotency_key: Some("order-1".to_owned()),
        publish: None,
    };
    let observations = vec![
        seen(0, 0, Seen::Event(granted)),
        seen(4, 0, checked()),
        seen(8, 1, checked()),
        Observation {
            request: Some(request.clone()),
            ..seen(10, 0, applied)
        },
        Observation {
            request: Some(request),
            ..seen(12, 0, refused)
        },
    ];
    let account = Account {
        balance: 90,
        ..Account::default()
    };
    let t = recorded(&sc, observations, account, recording()).expect("a fold");
    let ends: Vec<(u64, Option<u64>)> = (t.events.iter())
        .map(|e| (e.at, e.snapshot.holder.as_ref().map(|h| h.expires_at)))
        .collect();
    assert_eq!(
        ends,
        [
            (0, Some(30)),
            (4, Some(34)),
            (8, Some(34)),
            (10, Some(40)),
            (12, Some(40)),
            (40, None)
        ],
        "{:#?}",
        t.events
    );
    // The rule names the statements; whose clock restarts is the statement's own session's.
    for e in &t.events[..5] {
        let restarts = e.kind.restarts_idle_clock(&sc.lock);
        assert_eq!(restarts, e.at > 0 && e.at < 12, "{e:?}");
    }
    assert!(
        matches!(&t.events[5].kind, EventKind::LeaseExpired { owner, .. } if owner == "A"),
        "{:#?}",
        t.events
    );
}

/// gc-pause's A, granted 33 until 30, folded from what it saw: a pause that ends past the
/// lease, while A believes it holds it, ends with the lease gone; one that ends within it,
/// or after A let the lease go, does not. Each as core's rule says.
#[test]
fn a_pause_end_says_the_lease_is_gone_by_cores_rule() {
    use fencing_lab::core::{PauseCause, ReleaseMode, Seen};
    let believing = |o: fencing_lab::core::Observation, b: bool| fencing_lab::core::Observation {
        believes: Some(b),
        ..o
    };
    let pause = |from: u64, until: u64| {
        let started = EventKind::PauseStarted {
            until,
            cause: PauseCause::default(),
        };
        vec![
            seen(from, 0, Seen::Event(started)),
            seen(until, 0, Seen::PauseEnded),
        ]
    };
    let released = EventKind::Released {
        fence: Fence(33),
        via: ReleaseMode::CompareAndDelete,
    };
    for (before, (from, until), believes, held) in [
        (vec![], (10, 40), true, false),
        (vec![], (10, 20), true, true),
        (
            vec![believing(seen(5, 0, Seen::Event(released)), false)],
            (10, 40),
            false,
            false,
        ),
    ] {
        let mut observations = vec![believing(a_granted_33(), true)];
        observations.extend(before);
        observations.extend(pause(from, until));
        let t = fold(observations).expect("a fold");
        let ended = t.events.iter().find(|e| e.at == until);
        let ended = ended.filter(|e| matches!(e.kind, EventKind::PauseEnded { .. }));
        let expected = EventKind::pause_ended(believes, held);
        assert_eq!(ended.map(|e| &e.kind), Some(&expected), "{:#?}", t.events);
        let gone = believes && !held;
        assert_eq!(expected, EventKind::PauseEnded { lease_gone: gone });
    }
}

/// Redlock on five nodes, A's lease on nodes 0–2 until t=30, and one node's clock steps 25
/// ms at t=10: on node 2 it takes A below a majority, so A's lease is cut short and ends
/// at once; on node 3, where A has no key, it cuts nothing short and A's lease runs to 30.
/// The engine says so by core's rule (`Shortened::of`), and the fold, fed what A saw,
/// rebuilds both runs.
#[test]
fn a_clock_step_cuts_short_only_the_holders_lease_it_ends_sooner() {
    use fencing_lab::core::{FaultAt, RedlockSetup, Shortened};
    for (node, shortened) in [
        (
            2,
            Some(Shortened {
                owner: "A".to_owned(),
                fence: Fence(1),
                granted_until: 30,
                ends_at: 10,
            }),
        ),
        (3, None),
    ] {
        let a = Actor {
            name: "A".to_owned(),
            script: vec![Step::Acquire { retry_every: 5 }, Step::Work { ms: 40 }],
            ..Actor::default()
        };
        let sc = Scenario {
            title: "a clock step on a node A has a key on, or not".to_owned(),
            resource: "acct:1".to_owned(),
            initial_balance: 100,
            first_fence: 1,
            lease_ttl: 30,
            lock: LockKind::Redlock(RedlockSetup {
                nodes: 5,
                reach: vec![vec![0, 1, 2]],
            }),
            faults: vec![FaultAt {
                at: 10,
                fault: Fault::ClockJump { node, by: 25 },
            }],
            actors: vec![a],
            horizon: 50,
            ..Scenario::default()
        };
        let trace = run(&sc);
        let jumped = trace.events.iter().find_map(|e| match &e.kind {
            EventKind::LockClockJumped { shortened, .. } => Some(shortened.clone()),
            _ => None,
        });
        assert_eq!(jumped, Some(shortened.clone()), "{:#?}", trace.events);
        let expired =
            (trace.events.iter()).find(|e| matches!(e.kind, EventKind::LeaseExpired { .. }));
        let ends = shortened.map_or(30, |s| s.ends_at);
        assert_eq!(expired.map(|e| e.at), Some(ends), "{:#?}", trace.events);
        rebuilds(&sc, "clock-step-on-a-node");
    }
}

/// When a client's own lease ended is one rule for the engine and the fold
/// (`trace::lease_ended_at`), by its owner's newest grant. Under a separate counter B's SET
/// takes lease 1 and B freezes before its INCR; lease 1 runs out at 30; A's SET takes lease
/// 2 at 30 and A's INCR token 1. A works past its TTL and its extend fails: its lease ended
/// at 60. The engine used to look the end up by A's token, 1, and named B's lease's (30),
/// where the fold named A's own.
#[test]
fn a_failed_extend_names_the_end_of_its_clients_own_lease_not_its_tokens_namesake() {
    let sc = separate_counter_handoff(
        "an extend past the TTL under a separate counter",
        vec![
            Step::Acquire { retry_every: 5 },
            Step::Work { ms: 40 },
            Step::Extend,
        ],
    );
    let trace = run(&sc);
    let ends: Vec<(u64, Fence)> = (trace.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::LeaseExpired { fence, .. } => Some((e.at, *fence)),
            _ => None,
        })
        .collect();
    assert_eq!(ends, [(30, Fence(1)), (60, Fence(2))], "{trace:#?}");
    let failed = trace.events.iter().find_map(|e| match &e.kind {
        EventKind::ExtendFailed { lease_ended_at, .. } => Some((e.actor.clone(), *lease_ended_at)),
        _ => None,
    });
    assert_eq!(failed, Some((Some("A".to_owned()), Some(60))), "{trace:#?}");
    rebuilds(&sc, "extend-past-ttl-after-incr");
}

/// A clock step on the lock's node under a row lock: the idle timeout runs on PostgreSQL's
/// own timer (core's rule, `trace::ends_by_lock_clock`), so the step cuts nothing short and
/// A's session is still terminated at 30, one idle timeout after its job-status read. The
/// fold used to step the row lock's deadline as if it were a key's PX, ending A's hold at
/// the step (t=10), where the engine left it be.
#[test]
fn a_clock_step_leaves_a_row_locks_idle_timeout_be() {
    use fencing_lab::core::FaultAt;
    let mut sc = Scenario::row_lock();
    sc.faults.push(FaultAt {
        at: 10,
        fault: Fault::ClockJump { node: 0, by: 25 },
    });
    let trace = run(&sc);
    let jumped = trace.events.iter().find_map(|e| match &e.kind {
        EventKind::LockClockJumped { shortened, .. } => Some(shortened.clone()),
        _ => None,
    });
    assert_eq!(jumped, Some(None), "{:#?}", trace.events);
    let expired = (trace.events.iter()).find(|e| matches!(e.kind, EventKind::LeaseExpired { .. }));
    assert_eq!(expired.map(|e| e.at), Some(30), "{:#?}", trace.events);
    rebuilds(&sc, "row-lock-with-a-clock-step");
}

/// Who a refused acquire met is one rule for the lock server and the fold
/// (`lease::kept_by`): gc-pause's A, granted 33 until t=30 by a lock service with a 20 ms
/// lock-delay,
/// folded from what B saw. Refused at 20, B met A's live lease until 30; at 35, A's lapsed
/// lease's lock-delay until 50; at 55 (a server that still kept the lapsed lease) A's,
/// with no end a reply says.
#[test]
fn a_refusal_meets_the_live_lease_then_the_lapsed_ones_lock_delay() {
    use fencing_lab::core::Seen;
    let sc = Scenario {
        policy: FencingPolicy::Strict,
        ..Scenario::gc_pause()
    };
    let sc = Scenario {
        lock: LockKind::SERVICE.with_lock_delay(20).expect("a lock-delay"),
        ..sc
    };
    let refused = |at: u64| {
        let refused = Seen::AcquireRefused {
            retry_in: 5,
            nodes: Vec::new(),
        };
        seen(at, 1, refused)
    };
    let observations = vec![a_granted_33(), refused(20), refused(35), refused(55)];
    let account = Account {
        balance: sc.initial_balance,
        ..Account::default()
    };
    let t = recorded(&sc, observations, account, recording()).expect("a fold");
    let met: Vec<(u64, String, Option<u64>)> = (t.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::AcquireRefused { holder, until, .. } => Some((e.at, holder.clone(), *until)),
            _ => None,
        })
        .collect();
    let a = || "A".to_owned();
    assert_eq!(
        met,
        [(20, a(), Some(30)), (35, a(), Some(50)), (55, a(), None)],
        "{:#?}",
        t.events
    );
}
