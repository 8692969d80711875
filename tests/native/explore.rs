//! The schedule explorer: exhaustive pause placements (and packet delays) on a grid,
//! under each fencing policy, against the headline `gc_pause` scenario.

use fencing_lab::core::explore::{
    classify, explore, Example, ExploreSpec, Explorer, PolicyStats, Schedule, Verdict,
    EXAMPLES_PER_KIND, MAX_SCHEDULES,
};
use fencing_lab::core::{run, EventKind, FencingPolicy, Pause, Scenario, Trace};

const GRID: u64 = 5;

fn headline() -> Scenario {
    Scenario::gc_pause()
}

/// A's pause removed, its write delayed 40 ms instead: the delayed-packet variant.
fn delayed_packet() -> Scenario {
    let mut sc = Scenario::gc_pause();
    sc.actors[0].pauses.clear();
    sc.actors[0].network_delay = 40;
    sc
}

/// Pause placements on the grid, counted the slow way: every (start, duration) multiple of
/// `grid` with duration ≥ grid and start + duration ≤ horizon, plus "no pause".
fn placements_by_loop(horizon: u64, grid: u64) -> usize {
    let mut n = 1; // no pause
    let mut start = 0;
    while start + grid <= horizon {
        let mut duration = grid;
        while start + duration <= horizon {
            n += 1;
            duration += grid;
        }
        start += grid;
    }
    n
}

/// The same count in closed form: with k = horizon / grid slots, k(k+1)/2 pauses + 1.
fn placements_by_formula(horizon: u64, grid: u64) -> usize {
    let k = (horizon / grid) as usize;
    k * (k + 1) / 2 + 1
}

fn stats_for(stats: &[PolicyStats], policy: FencingPolicy) -> &PolicyStats {
    stats
        .iter()
        .find(|s| s.policy == policy)
        .unwrap_or_else(|| panic!("no stats for {policy:?}"))
}

/// Under a fencing policy, every accepted late write reached storage before the newer token
/// did: storage's high-water mark just before it was below the superseding grant's token
/// (unless a rolled-back counter handed out a token that is not higher). Returns how many
/// late writes were checked.
fn late_writes_beat_the_newer_token(t: &Trace) -> usize {
    let mut n = 0;
    for (i, e) in t.events.iter().enumerate() {
        let EventKind::WriteApplied {
            fence: Some(f),
            result: Ok(_),
            superseded_by: Some(g),
            highest_accepted,
            ..
        } = &e.kind
        else {
            continue;
        };
        n += 1;
        let before = t.snapshot_at(i).last_fence;
        if t.scenario.policy.checks_fence() {
            assert!(before <= Some(*f), "{i}: mark {before:?} above {f:?}");
            assert!(*highest_accepted <= Some(*f), "{i}: {highest_accepted:?}");
            if g.fence > *f {
                assert!(
                    before < Some(g.fence),
                    "{i}: storage had seen {:?} yet accepted {f:?}",
                    g.fence
                );
            }
        }
    }
    n
}

fn headline_stats() -> Vec<PolicyStats> {
    explore(&headline(), ExploreSpec::all_policies(0, GRID)).expect("valid spec")
}

#[test]
fn total_matches_the_placement_formula() {
    assert_eq!(placements_by_loop(100, 5), 211);
    for (horizon, grid) in [(100, 5), (100, 1), (100, 7), (100, 100), (37, 4)] {
        assert_eq!(
            placements_by_loop(horizon, grid),
            placements_by_formula(horizon, grid),
            "horizon {horizon} grid {grid}"
        );
    }
    let sc = headline();
    let per_policy = placements_by_formula(sc.horizon, GRID);
    let ex = Explorer::new(&sc, ExploreSpec::all_policies(0, GRID)).unwrap();
    assert_eq!(ex.total(), 3 * per_policy);
    assert_eq!(ex.total(), 633);
    assert_eq!(ex.done(), 0);
    assert!(!ex.is_finished());
    assert_eq!(ex.schedules().count(), ex.total());

    let ex1 = Explorer::new(&sc, ExploreSpec::all_policies(0, 1)).unwrap();
    assert_eq!(ex1.total(), 3 * placements_by_formula(100, 1));
    assert_eq!(ex1.total(), 15_153);
    assert!(
        ex1.total() >= 10_000,
        "the benchmark grid must give ≥ 10,000 schedules"
    );

    // Every policy explores every placement once.
    for s in headline_stats() {
        assert_eq!(s.explored, per_policy, "{:?}", s.policy);
    }
}

#[test]
fn enumeration_is_on_the_grid_exhaustive_unique_and_deterministic() {
    let sc = headline();
    let ex = Explorer::new(&sc, ExploreSpec::all_policies(0, GRID)).unwrap();
    let all: Vec<Schedule> = ex.schedules().collect();
    assert_eq!(
        all,
        ex.schedules().collect::<Vec<_>>(),
        "same order every time"
    );

    // Policy is innermost, in spec order, so any prefix covers whole placements.
    for (i, s) in all.iter().enumerate() {
        assert_eq!(s.policy, FencingPolicy::ALL[i % 3], "schedule {i}");
        assert_eq!(s.actor, 0);
        assert_eq!(s.network_delay, None, "gc_pause sends no delayed packets");
        if let Some(p) = s.pause {
            assert_eq!(p.start % GRID, 0, "{s:?}");
            assert_eq!(p.duration % GRID, 0, "{s:?}");
            assert!(p.duration >= GRID, "{s:?}");
            assert!(p.end() <= sc.horizon, "{s:?}");
        }
    }
    // No pause comes first, then pauses by start, then duration.
    assert_eq!(all[0].pause, None);
    assert_eq!(
        all[3].pause,
        Some(Pause {
            start: 0,
            duration: 5
        })
    );
    assert_eq!(
        all.last().unwrap().pause,
        Some(Pause {
            start: 95,
            duration: 5
        })
    );
    let keys: Vec<(u64, u64)> = all
        .iter()
        .step_by(3)
        .filter_map(|s| s.pause.map(|p| (p.start, p.duration)))
        .collect();
    assert!(keys.windows(2).all(|w| w[0] < w[1]), "strictly ascending");
    // Exhaustive: every grid placement appears (so, with the count, each exactly once).
    for start in (0..100).step_by(5) {
        for duration in (5..=100 - start).step_by(5) {
            assert!(
                keys.contains(&(start, duration)),
                "missing ({start}, {duration})"
            );
        }
    }
    // The headline's own pause is one of them.
    assert!(keys.contains(&(5, 50)));
}

#[test]
fn fencing_off_accepts_late_and_out_of_order_writes_in_the_headline() {
    let stats = headline_stats();
    let off = stats_for(&stats, FencingPolicy::Off);
    assert!(off.late_writes > 0, "{off:?}");
    assert!(off.out_of_order > 0, "{off:?}");
    assert!(off.double_runs > 0, "{off:?}");
    assert!(off.two_believers > 0, "{off:?}");
    assert!(
        off.harmful >= off.late_writes.max(off.out_of_order),
        "{off:?}"
    );
    // The headline itself (A paused 5..55) is late, out of order and a double run off.
    let headline_schedule = Schedule {
        actor: 0,
        policy: FencingPolicy::Off,
        pause: Some(Pause {
            start: 5,
            duration: 50,
        }),
        network_delay: None,
    };
    assert_eq!(
        classify(&headline_schedule.apply(&headline())),
        Verdict {
            late_write: true,
            double_run: true,
            out_of_order: true,
            two_believers: true
        }
    );
    assert!(Verdict {
        late_write: true,
        ..Verdict::default()
    }
    .is_harmful());
    let only_believers = Verdict {
        two_believers: true,
        ..Verdict::default()
    };
    assert!(!only_believers.is_harmful() && !only_believers.is_clean());
    assert!(Verdict::default().is_clean());
}

#[test]
fn fenced_policies_never_go_out_of_order_yet_two_clients_still_believe() {
    let stats = headline_stats();
    let off = stats_for(&stats, FencingPolicy::Off);
    for policy in [FencingPolicy::Strict, FencingPolicy::SameEpoch] {
        let s = stats_for(&stats, policy);
        assert_eq!(
            s.out_of_order, 0,
            "{policy:?} accepted a lower token: {s:?}"
        );
        assert!(s.examples.iter().all(|e| !e.verdict.out_of_order));
        // Fencing protects the storage, not the lock: two clients still believe they hold it.
        assert!(s.two_believers > 0, "{policy:?}: {s:?}");
        // It limits the harm: far fewer late writes than with fencing off.
        assert!(s.late_writes < off.late_writes, "{policy:?}: {s:?}");
    }
}

/// The finding that is not a tautology: on a 1 ms grid, strict fencing still accepts late
/// writes — whenever A wakes after B's grant but before B's first write reaches storage.
#[test]
fn strict_still_accepts_late_writes_on_a_1_ms_grid() {
    let base = headline();
    let fine = explore(&base, ExploreSpec::all_policies(0, 1)).unwrap();
    let strict = stats_for(&fine, FencingPolicy::Strict);
    assert!(strict.late_writes > 0, "{strict:?}");
    assert_eq!(strict.out_of_order, 0);
    assert!(stats_for(&fine, FencingPolicy::Off).out_of_order > 0);
    assert_eq!(stats_for(&fine, FencingPolicy::SameEpoch).out_of_order, 0);
    // Here a late write always double-runs the one job.
    assert_eq!(strict.double_runs, strict.late_writes);
    let late: Vec<_> = strict
        .examples
        .iter()
        .filter(|e| e.verdict.late_write)
        .collect();
    assert!(!late.is_empty());
    for ex in late {
        let t = run(&ex.schedule.apply(&base));
        assert_eq!(late_writes_beat_the_newer_token(&t), 1, "{ex:?}");
        // A wakes between B's grant (t=30) and B's write (t=35).
        let p = ex.schedule.pause.unwrap();
        assert!((30..=35).contains(&p.end()), "{p:?}");
    }
    // The issue's own schedule: A paused 5..31.
    let s = Schedule {
        actor: 0,
        policy: FencingPolicy::Strict,
        pause: Some(Pause {
            start: 5,
            duration: 26,
        }),
        network_delay: None,
    };
    let v = classify(&s.apply(&base));
    assert!(v.late_write && v.double_run && !v.out_of_order, "{v:?}");
}

/// The exact counts, pinned: (policy, explored, late, double runs, out of order, two
/// believers). If the engine's semantics change, these move; re-derive them before updating.
#[test]
fn headline_counts_are_pinned_at_grid_5_and_1() {
    type Row = (FencingPolicy, usize, usize, usize, usize, usize);
    let pinned = |stats: &[PolicyStats]| -> Vec<Row> {
        stats
            .iter()
            .map(|s| {
                (
                    s.policy,
                    s.explored,
                    s.late_writes,
                    s.double_runs,
                    s.out_of_order,
                    s.two_believers,
                )
            })
            .collect()
    };
    use FencingPolicy::{Off, SameEpoch, Strict};
    assert_eq!(
        pinned(&headline_stats()),
        vec![
            (Off, 211, 28, 28, 26, 46),
            (Strict, 211, 2, 2, 0, 46),
            (SameEpoch, 211, 2, 2, 0, 46)
        ]
    );
    let fine = explore(&headline(), ExploreSpec::all_policies(0, 1)).unwrap();
    assert_eq!(
        pinned(&fine),
        vec![
            (Off, 5051, 700, 700, 650, 1110),
            (Strict, 5051, 50, 50, 0, 1110),
            (SameEpoch, 5051, 50, 50, 0, 1110)
        ]
    );
}

#[test]
fn who_believes_does_not_depend_on_the_storage_policy() {
    let stats = headline_stats();
    let off = stats_for(&stats, FencingPolicy::Off).two_believers;
    assert_eq!(stats_for(&stats, FencingPolicy::Strict).two_believers, off);
    assert_eq!(
        stats_for(&stats, FencingPolicy::SameEpoch).two_believers,
        off
    );
    // Without packet delays, a late write needs a second believer to have been granted.
    for s in &stats {
        assert!(s.late_writes <= off, "{:?}", s.policy);
        assert!(s.harmful <= s.explored);
    }
}

#[test]
fn every_example_reproduces_its_classification_when_rerun() {
    let base = headline();
    for stats in headline_stats() {
        assert!(!stats.examples.is_empty(), "{:?}", stats.policy);
        for Example { schedule, verdict } in &stats.examples {
            assert_eq!(schedule.policy, stats.policy);
            assert!(!verdict.is_clean(), "only violations are kept");
            let rebuilt = schedule.apply(&base);
            rebuilt
                .validate()
                .expect("an example rebuilds a valid scenario");
            assert_eq!(rebuilt.policy, stats.policy);
            let summary = run(&rebuilt).summary;
            assert_eq!(Verdict::of(&summary), *verdict, "{schedule:?}");
            assert_eq!(verdict.late_write, summary.late_writes_accepted > 0);
            assert_eq!(verdict.double_run, summary.duplicate_runs > 0);
            assert_eq!(verdict.out_of_order, summary.out_of_order_writes > 0);
            assert_eq!(verdict.two_believers, summary.max_believers > 1);
        }
    }
}

#[test]
fn the_examples_are_the_first_violations_of_each_kind_in_order() {
    let base = headline();
    let ex = Explorer::new(&base, ExploreSpec::all_policies(0, GRID)).unwrap();
    for stats in headline_stats() {
        // Brute force: the first N harmful schedules and the first N double beliefs, merged
        // in order.
        let (mut harmful, mut believers) = (0, 0);
        let (mut late, mut twice, mut order) = (0, 0, 0);
        let mut expected = Vec::new();
        for schedule in ex.schedules().filter(|s| s.policy == stats.policy) {
            let verdict = classify(&schedule.apply(&base));
            let keep = (verdict.is_harmful() && harmful < EXAMPLES_PER_KIND)
                || (verdict.two_believers && believers < EXAMPLES_PER_KIND);
            harmful += usize::from(verdict.is_harmful());
            believers += usize::from(verdict.two_believers);
            late += usize::from(verdict.late_write);
            twice += usize::from(verdict.double_run);
            order += usize::from(verdict.out_of_order);
            if keep {
                expected.push(Example { schedule, verdict });
            }
        }
        assert_eq!(harmful, stats.harmful, "{:?}", stats.policy);
        assert_eq!(believers, stats.two_believers, "{:?}", stats.policy);
        assert_eq!(
            (late, twice, order),
            (stats.late_writes, stats.double_runs, stats.out_of_order),
            "{:?}",
            stats.policy
        );
        assert_eq!(stats.examples, expected, "{:?}", stats.policy);
        assert!(stats.examples.len() <= 2 * EXAMPLES_PER_KIND);
        let kept_harmful = stats.examples.iter().filter(|e| e.verdict.is_harmful());
        assert!(kept_harmful.count() >= stats.harmful.min(EXAMPLES_PER_KIND));
        let kept_believers = stats.examples.iter().filter(|e| e.verdict.two_believers);
        assert!(kept_believers.count() >= stats.two_believers.min(EXAMPLES_PER_KIND));
    }
    // Fencing off keeps the full 20 harmful examples for the UI to load.
    let off = headline_stats().remove(0);
    assert_eq!(off.policy, FencingPolicy::Off);
    assert!(off.harmful >= EXAMPLES_PER_KIND);
    assert!(
        off.examples
            .iter()
            .filter(|e| e.verdict.is_harmful())
            .count()
            >= EXAMPLES_PER_KIND
    );
    // Strict has fewer harmful schedules than that, and keeps every one of them.
    let strict = headline_stats().remove(1);
    assert!(strict.harmful > 0 && strict.harmful < EXAMPLES_PER_KIND);
    assert_eq!(
        strict
            .examples
            .iter()
            .filter(|e| e.verdict.is_harmful())
            .count(),
        strict.harmful
    );
}

#[test]
fn the_no_pause_schedule_is_clean() {
    let base = headline();
    for policy in FencingPolicy::ALL {
        let schedule = Schedule {
            actor: 0,
            policy,
            pause: None,
            network_delay: None,
        };
        let sc = schedule.apply(&base);
        assert!(sc.actors[0].pauses.is_empty());
        let summary = run(&sc).summary;
        assert!(Verdict::of(&summary).is_clean(), "{policy:?}: {summary:?}");
        assert_eq!(
            summary.final_balance, 90,
            "A charges, B finds the job done: it runs once"
        );
        assert_eq!(summary.accepted_writes, 1);
    }
    // It is enumerated, once per policy, and never kept as an example.
    let ex = Explorer::new(&base, ExploreSpec::all_policies(0, GRID)).unwrap();
    assert_eq!(ex.schedules().filter(|s| s.pause.is_none()).count(), 3);
    for s in headline_stats() {
        assert!(s.examples.iter().all(|e| e.schedule.pause.is_some()));
    }
}

#[test]
fn apply_rebuilds_the_exact_scenario_and_touches_only_the_chosen_actor() {
    let base = headline();
    let same = Schedule {
        actor: 0,
        policy: base.policy,
        pause: Some(base.actors[0].pauses[0]),
        network_delay: None,
    };
    assert_eq!(same.apply(&base), base);

    let mut two_pauses = base.clone();
    two_pauses.actors[0].pauses.push(Pause {
        start: 70,
        duration: 10,
    });
    two_pauses.actors[1].pauses.push(Pause {
        start: 1,
        duration: 2,
    });
    let s = Schedule {
        actor: 0,
        policy: FencingPolicy::Off,
        pause: Some(Pause {
            start: 10,
            duration: 20,
        }),
        network_delay: Some(15),
    };
    let sc = s.apply(&two_pauses);
    assert_eq!(sc.policy, FencingPolicy::Off);
    assert_eq!(
        sc.actors[0].pauses,
        vec![s.pause.unwrap()],
        "replaced, not added"
    );
    assert_eq!(sc.actors[0].network_delay, 15);
    assert_eq!(sc.actors[1], two_pauses.actors[1], "other actors untouched");
    assert_eq!(sc.horizon, base.horizon);
}

#[test]
fn stepping_in_chunks_gives_the_same_stats_as_running_to_the_end() {
    let base = headline();
    let spec = ExploreSpec::all_policies(0, GRID);
    let mut whole = Explorer::new(&base, spec.clone()).unwrap();
    whole.run_to_end();
    assert!(whole.is_finished());
    assert_eq!(whole.done(), whole.total());
    assert_eq!(whole.stats(), headline_stats().as_slice());

    for chunk in [1, 2, 7, 100, 632, 633, 10_000] {
        let mut ex = Explorer::new(&base, spec.clone()).unwrap();
        assert_eq!(ex.step(0), 0);
        let mut steps = 0;
        loop {
            let before = ex.done();
            let ran = ex.step(chunk);
            assert_eq!(ex.done(), before + ran);
            assert!(ran <= chunk);
            if ran == 0 {
                break;
            }
            steps += 1;
            // Partial progress is consistent: counts never exceed what was explored.
            let explored: usize = ex.stats().iter().map(|s| s.explored).sum();
            assert_eq!(explored, ex.done());
        }
        assert!(ex.is_finished());
        assert_eq!(steps, whole.total().div_ceil(chunk), "chunk {chunk}");
        assert_eq!(ex.stats(), whole.stats(), "chunk {chunk}");
        assert_eq!(ex.step(chunk), 0, "a finished explorer runs nothing");
    }
}

#[test]
fn a_partial_exploration_has_covered_the_same_placements_under_every_policy() {
    let mut ex = Explorer::new(&headline(), ExploreSpec::all_policies(0, GRID)).unwrap();
    ex.step(300);
    let explored: Vec<usize> = ex.stats().iter().map(|s| s.explored).collect();
    assert_eq!(explored, vec![100, 100, 100]);
}

#[test]
fn invalid_specs_are_refused_with_a_message() {
    let base = headline();
    let err = |sc: &Scenario, spec: ExploreSpec| Explorer::new(sc, spec).unwrap_err();

    let e = err(&base, ExploreSpec::all_policies(0, 0));
    assert!(e.contains("grid must be at least 1 ms"), "{e}");

    let e = err(&base, ExploreSpec::all_policies(2, GRID));
    assert!(e.contains("actor 2 does not exist"), "{e}");

    let e = err(&base, ExploreSpec::all_policies(0, 101));
    assert!(e.contains("longer than the horizon"), "{e}");

    let e = err(
        &base,
        ExploreSpec {
            actor: 0,
            grid: GRID,
            policies: vec![],
        },
    );
    assert!(e.contains("at least one fencing policy"), "{e}");

    let e = err(
        &base,
        ExploreSpec {
            actor: 0,
            grid: GRID,
            policies: vec![
                FencingPolicy::Off,
                FencingPolicy::Strict,
                FencingPolicy::Off,
            ],
        },
    );
    assert!(e.contains("listed twice"), "{e}");

    let mut long = base.clone();
    long.horizon = 1_000;
    let e = err(&long, ExploreSpec::all_policies(0, 1));
    assert!(
        e.contains(&format!("more than the {MAX_SCHEDULES} allowed")),
        "{e}"
    );
    assert!(e.contains("1501503 schedules"), "{e}");
    // A coarser grid over the same horizon is accepted.
    assert!(Explorer::new(&long, ExploreSpec::all_policies(0, 10)).is_ok());

    let mut broken = base.clone();
    broken.actors.clear();
    let e = err(&broken, ExploreSpec::all_policies(0, GRID));
    assert!(e.starts_with("the scenario is invalid"), "{e}");

    assert!(explore(&base, ExploreSpec::all_policies(0, 0)).is_err());
}

#[test]
fn a_policy_subset_and_another_actor_can_be_explored() {
    let base = headline();
    let spec = ExploreSpec {
        actor: 1,
        grid: 10,
        policies: vec![FencingPolicy::Strict],
    };
    let ex = Explorer::new(&base, spec.clone()).unwrap();
    assert_eq!(ex.total(), placements_by_formula(100, 10));
    assert!(ex.schedules().all(|s| s.actor == 1));
    let stats = explore(&base, spec).unwrap();
    assert_eq!(stats.len(), 1);
    assert_eq!(stats[0].policy, FencingPolicy::Strict);
    assert_eq!(stats[0].explored, 56);
    // Pausing B before its write lets A's late 33 reach storage first, even under strict.
    assert!(stats[0].late_writes > 0, "{:?}", stats[0]);
    assert_eq!(stats[0].out_of_order, 0);
    for e in &stats[0].examples {
        let t = run(&e.schedule.apply(&base));
        let n = late_writes_beat_the_newer_token(&t);
        assert_eq!(n > 0, e.verdict.late_write, "{e:?}");
    }
}

#[test]
fn a_delayed_packet_scenario_enumerates_delivery_delays() {
    let base = delayed_packet();
    base.validate().unwrap();
    let ex = Explorer::new(&base, ExploreSpec::all_policies(0, GRID)).unwrap();
    let delays = (100 / GRID + 1) as usize; // 0, 5, …, 100
    assert_eq!(
        ex.total(),
        3 * placements_by_formula(100, GRID) * delays,
        "pauses × delays × policies"
    );
    assert_eq!(ex.total(), 13_293);

    let all: Vec<Schedule> = ex.schedules().collect();
    let mut seen: Vec<u64> = all.iter().map(|s| s.network_delay.unwrap()).collect();
    seen.dedup();
    assert_eq!(seen, (0..=100).step_by(5).collect::<Vec<u64>>());

    // The delay alone (no pause) is enough for a late write with fencing off…
    let late = Schedule {
        actor: 0,
        policy: FencingPolicy::Off,
        pause: None,
        network_delay: Some(40),
    };
    assert!(classify(&late.apply(&base)).late_write);
    // …and with no delay and no pause, nothing goes wrong.
    let prompt = Schedule {
        network_delay: Some(0),
        ..late
    };
    assert!(classify(&prompt.apply(&base)).is_clean());
    assert_eq!(prompt.apply(&base).actors[0].network_delay, 0);

    let stats = explore(&base, ExploreSpec::all_policies(0, GRID)).unwrap();
    let off = stats_for(&stats, FencingPolicy::Off);
    assert!(off.late_writes > 0, "{off:?}");
    assert!(off.out_of_order > 0, "{off:?}");
    // Pure delayed-packet schedules (no pause): a late enough packet alone runs the job twice.
    let delay_only_stale: Vec<u64> = (0..=100)
        .step_by(5)
        .filter(|&d| {
            let s = Schedule {
                network_delay: Some(d),
                ..late
            };
            classify(&s.apply(&base)).late_write
        })
        .collect();
    assert!(delay_only_stale.contains(&40), "{delay_only_stale:?}");
    assert!(!delay_only_stale.contains(&0), "{delay_only_stale:?}");
    for policy in [FencingPolicy::Strict, FencingPolicy::SameEpoch] {
        let s = stats_for(&stats, policy);
        assert_eq!(s.out_of_order, 0, "{policy:?}");
        assert!(s.late_writes < off.late_writes, "{policy:?}");
        // Delay 40 lands A's 33 after B's 34: refused.
        let s40 = Schedule {
            policy,
            network_delay: Some(40),
            ..late
        };
        assert!(!classify(&s40.apply(&base)).late_write, "{policy:?}");
    }
    for s in &stats {
        assert_eq!(s.explored, ex.total() / 3);
        for e in &s.examples {
            assert_eq!(classify(&e.schedule.apply(&base)), e.verdict);
            let t = run(&e.schedule.apply(&base));
            assert_eq!(
                late_writes_beat_the_newer_token(&t) > 0,
                e.verdict.late_write
            );
        }
    }
}
