//! The story review (issue 25, `shared/reviews/story-review.md`): each finding pinned by a
//! test that failed on the words before it was fixed. Facts are asserted as data where the
//! finding is about facts (`story::facts`), words only where the finding is about words.

use fencing_lab::core::deck::{self, DECK};
use fencing_lab::core::story::{self, Line};
use fencing_lab::core::{run, EventKind, ExpiryCause, Fence, FencingPolicy, Scenario, Trace};

/// Every deck entry under every policy, with its id.
fn deck_runs() -> Vec<(&'static str, Trace)> {
    DECK.iter()
        .flat_map(|e| FencingPolicy::ALL.map(|p| (e.id, run(&(e.build)().with_policy(p)))))
        .collect()
}

fn run_as(id: &str, policy: FencingPolicy) -> Trace {
    run(&(deck::find(id).unwrap().build)().with_policy(policy))
}

/// Every narration and Say line of a run, step 0 included.
fn words(t: &Trace) -> Vec<String> {
    (0..=t.len())
        .flat_map(|s| [story::Story::of(t).narration(s), story::Story::of(t).say(s)])
        .collect()
}

/// The index of the first event matching `pred`.
fn event_of(t: &Trace, pred: impl Fn(&fencing_lab::core::TraceEvent) -> bool) -> usize {
    t.events.iter().position(pred).expect("no such event")
}

/// The indices of the events matching `pred`.
fn events_where(t: &Trace, pred: impl Fn(&fencing_lab::core::TraceEvent) -> bool) -> Vec<usize> {
    (0..t.len()).filter(|&i| pred(&t.events[i])).collect()
}

/// The story step that shows the first event matching `pred` (a run of identical events
/// is one step, so this is not always the event's index + 1).
fn step_of(t: &Trace, pred: impl Fn(&fencing_lab::core::TraceEvent) -> bool) -> usize {
    story::Steps::of(t).showing(event_of(t, pred))
}

fn notes(id: &str) -> String {
    let e = deck::find(id).unwrap();
    (e.notes)(&deck::runs(e)).join("\n")
}

/// Issue 25's budget: presentable in two minutes.
const MAX_STEPS: usize = 16;
const MAX_SAY_WORDS: usize = 250;

#[test]
fn every_run_fits_two_minutes() {
    for (id, t) in deck_runs() {
        let policy = t.scenario.policy;
        let last = story::Steps::of(&t).last();
        assert!(last <= MAX_STEPS, "{id} {policy:?}: {last} steps");
        let said: usize = (0..=last)
            .map(|s| story::Story::of(&t).say(s).split_whitespace().count())
            .sum();
        assert!(said <= MAX_SAY_WORDS, "{id} {policy:?}: {said} Say words");
    }
}

#[test]
fn a_line_already_said_is_not_said_again() {
    for (id, t) in deck_runs() {
        let last = story::Steps::of(&t).last();
        let says: Vec<String> = (0..=last).map(|s| story::Story::of(&t).say(s)).collect();
        for (i, s) in says.iter().enumerate() {
            assert!(!says[..i].contains(s), "{id}: {s} said twice");
        }
    }
}

/// Identical repeated steps collapse into one: renewal's three renewals are one step that
/// counts them, and says its advice once; the trace keeps all three events.
#[test]
fn identical_repeated_steps_are_one_step() {
    let t = run_as("renewal", FencingPolicy::Off);
    let steps = story::Steps::of(&t);
    let renewals = events_where(&t, |e| matches!(e.kind, EventKind::Extended { .. }));
    assert_eq!(renewals.len(), 3, "the trace keeps every renewal");
    let step = steps.showing(renewals[0]);
    assert!(renewals.iter().all(|&i| steps.showing(i) == step));
    assert_eq!(steps.events(step), renewals[0]..renewals[2] + 1);
    assert_eq!(steps.last(), t.len() - 2);
    let n = story::Story::of(&t).narration(step);
    assert!(n.starts_with("t=11–31 ms — A's watchdog renews"), "{n}");
    assert!(
        n.contains("3 times, every ~10 ms") && n.contains("extend ×3"),
        "{n}"
    );
    assert!(n.contains("now runs until t=61"), "{n}");
    assert!(story::Story::of(&t)
        .say(step)
        .starts_with("Renew at about a third of the TTL"));
    // The step after the run is the event after it: nothing is skipped.
    assert_eq!(steps.events(step + 1), renewals[2] + 1..renewals[2] + 2);
    // lock-delay: B's two refusals under the lock-delay are one step, "×2".
    let t = run_as("lock-delay", FencingPolicy::Strict);
    let steps = story::Steps::of(&t);
    let refused = events_where(&t, |e| {
        e.result_code() == "lock_held" && e.snapshot.holder.is_none()
    });
    assert_eq!(refused.len(), 2);
    let step = steps.showing(refused[0]);
    assert_eq!(steps.events(step), refused[0]..refused[1] + 1);
    let n = story::Story::of(&t).narration(step);
    assert!(
        n.contains("twice, every ~10 ms") && n.contains("(×2)"),
        "{n}"
    );
    let labels: Vec<Option<String>> = refused
        .iter()
        .map(|&i| story::run_label(&t, &steps, i))
        .collect();
    assert_eq!(labels, [Some("lock_held ×2".to_owned()), None]);
    // A refusal by a live lease is another answer: its own step.
    let first = t.events.iter().position(|e| e.result_code() == "lock_held");
    assert!(first.is_some_and(|i| steps.events(steps.showing(i)).len() == 1));
}

/// F1: the lock's value and the fencing token are two things.
#[test]
fn f1_lock_value_and_token_are_two_things() {
    let t = run_as("redis-failover", FencingPolicy::Strict);
    let facts = story::facts(&t).steps;
    assert_eq!(facts.len(), t.len() + 1);
    let grants: Vec<_> = facts
        .iter()
        .zip(std::iter::once(None).chain(t.events.iter().map(Some)))
        .filter(|(_, e)| e.is_some_and(|e| matches!(e.kind, EventKind::Acquired { .. })))
        .map(|(f, _)| f.lease.clone().unwrap())
        .collect();
    // Both grants carry token 33 (the counter rolled back); their values differ.
    assert_eq!(grants.len(), 2);
    assert_eq!(grants[0].token, Some(Fence(33)));
    assert_eq!(grants[1].token, Some(Fence(33)));
    assert_eq!(
        (grants[0].value.as_str(), grants[1].value.as_str()),
        ("rnd-A", "rnd-B")
    );
    // A's release compares values: it finds B's, not its own, whatever the tokens say.
    let noop = step_of(&t, |e| matches!(e.kind, EventKind::ReleaseNoop { .. }));
    let f = &facts[event_of(&t, |e| matches!(e.kind, EventKind::ReleaseNoop { .. })) + 1];
    assert_eq!(f.lease.as_ref().map(|l| l.value.as_str()), Some("rnd-B"));
    assert_eq!(f.own.as_ref().map(|l| l.value.as_str()), Some("rnd-A"));
    let n = story::Story::of(&t).narration(noop);
    assert!(
        n.contains("rnd-B") && n.contains("rnd-A") && n.contains("token 33"),
        "{n}"
    );
    // Where the value is the token (uuid-token), the facts say so.
    let t = run_as("uuid-token", FencingPolicy::Strict);
    let f = &story::facts(&t).steps[1];
    let l = f.lease.as_ref().unwrap();
    assert_eq!(Some(l.value.clone()), l.token.map(|t| t.to_string()));
    // A separate counter's lease has no token of its own; the INCR that hands the superseded
    // lease the newest token says so at its own step (not "As before.").
    let t = run_as("separate-counter", FencingPolicy::Strict);
    assert_eq!(
        story::facts(&t).steps[1].lease.as_ref().unwrap().token,
        None
    );
    let incr = t
        .events
        .iter()
        .rposition(|e| matches!(e.kind, EventKind::TokenTaken { .. }))
        .unwrap();
    let say = story::Story::of(&t).say(incr + 1);
    assert!(
        say.contains("A's superseded lease now carries the newest token, 34"),
        "{say}"
    );
    // Nowhere is a release, GET or extend said to compare a token as the key's value.
    for (id, t) in deck_runs() {
        for w in words(&t) {
            assert!(
                !w.contains("the value is still its own (token"),
                "{id}: {w}"
            );
            assert!(!w.contains("returns its own value (token"), "{id}: {w}");
        }
    }
}

/// F2: pauses said exactly; a stall that outlives a lease is a whole-process pause.
#[test]
fn f2_pauses_are_said_exactly() {
    for (id, t) in deck_runs() {
        for w in words(&t) {
            for wrong in [
                "cannot tell it was stopped",
                "no idea time passed",
                "hangs and does nothing",
                "cannot tell how long",
            ] {
                assert!(!w.contains(wrong), "{id}: {w}");
            }
        }
    }
    let t = run_as("gc-pause", FencingPolicy::Strict);
    let pause = step_of(&t, |e| matches!(e.kind, EventKind::PauseStarted { .. }));
    assert_eq!(story::Story::of(&t).say(pause), Line::NoWarning.text());
    assert!(Line::NoWarning.text().contains("monotonic clock"));
    let t = run_as("handoff-barrier", FencingPolicy::SameEpoch);
    let pause = step_of(&t, |e| matches!(e.kind, EventKind::PauseStarted { .. }));
    assert!(story::Story::of(&t)
        .narration(pause)
        .contains("whole process freezes"));
    assert_eq!(
        story::Story::of(&t).say(pause),
        Line::WholeProcessPause.text()
    );
}

/// M1: the headline owns the idempotency answer.
#[test]
fn m1_the_headline_answers_idempotency() {
    let t = run_as("gc-pause", FencingPolicy::Off);
    let last = step_of(&t, |e| e.is_late_write());
    let say = story::Story::of(&t).say(last);
    assert!(say.contains(Line::IdempotencyAnswer.text()), "{say}");
    assert!(say.contains("key per order") && say.contains("different write"));
    // Said at the second debit of every off run that charges twice, pause or no pause, and
    // true of each (no "before the pause" where nobody paused).
    for (id, t) in deck_runs() {
        if t.scenario.policy != FencingPolicy::Off
            || t.summary.duplicate_runs == 0
            || t.scenario.publishes()
            // A failover that lost the newer debit leaves one charge (review 4, F1).
            || t.events.iter().any(|e| {
                matches!(&e.kind, EventKind::StorageFailover { lost, .. } if !lost.is_empty())
            })
        {
            continue;
        }
        let says: String = (0..=t.len()).map(|s| story::Story::of(&t).say(s)).collect();
        assert!(
            says.contains("key per order would stop this duplicate"),
            "{id}"
        );
        assert!(!says.contains("before the pause"), "{id}");
    }
    // The what-if: a key per order makes the off run 90 too, and the notes say it.
    let keyed = run(&Scenario::gc_pause()
        .keyed("order-1")
        .with_policy(FencingPolicy::Off));
    assert_eq!(keyed.summary.final_balance, 90);
    assert_eq!(keyed.summary.duplicate_runs, 0);
    assert!(notes("gc-pause").contains("off ends at 90 too"));
    // handoff-barrier's late result is the different write, said where it lands: a
    // first-wins key on the job would keep it (review 2, N5, reworded this line).
    let t = run_as("handoff-barrier", FencingPolicy::Off);
    let late = step_of(&t, |e| e.is_late_write());
    assert!(story::Story::of(&t)
        .say(late)
        .contains("first-wins idempotency key on the job would make it worse"));
}

/// M2: a refusal is credited to storage having seen the newer token first.
#[test]
fn m2_a_refusal_is_credited_to_what_storage_had_seen() {
    let t = run_as("gc-pause", FencingPolicy::Strict);
    let refused = step_of(&t, |e| e.result_code() == "stale_fence");
    let i = event_of(&t, |e| e.result_code() == "stale_fence");
    assert_eq!(story::facts(&t).steps[i + 1].storage_seen, Some(Fence(34)));
    let say = story::Story::of(&t).say(refused);
    assert!(
        say.contains("already saw 34 from B") && say.contains("handoff barrier"),
        "{say}"
    );
    // With a barrier the order cannot flip, and the line says that instead.
    let t = run_as("handoff-barrier", FencingPolicy::SameEpoch);
    let refused = step_of(&t, |e| e.result_code() == "stale_fence");
    assert!(story::Story::of(&t)
        .say(refused)
        .contains("the order cannot flip"));
}

/// M3: delayed-packet is Kleppmann's case: sent while the lease is live, no release, no
/// pause; the lease expires with the packet in flight.
#[test]
fn m3_delayed_packet_is_kleppmanns_case() {
    for p in FencingPolicy::ALL {
        let t = run_as("delayed-packet", p);
        let sent = t
            .events
            .iter()
            .position(|e| matches!(e.kind, EventKind::WriteSent { .. }))
            .unwrap();
        let expired = t
            .events
            .iter()
            .position(|e| matches!(&e.kind, EventKind::LeaseExpired { owner, cause: ExpiryCause::Ttl, .. } if owner == "A"))
            .unwrap();
        let landed = t
            .events
            .iter()
            .position(|e| {
                e.actor.as_deref() == Some("A") && matches!(e.kind, EventKind::WriteApplied { .. })
            })
            .unwrap();
        assert!(sent < expired && expired < landed, "{p:?}");
        assert!(t.events.iter().all(|e| !matches!(
            e.kind,
            EventKind::WriteTimedOut { .. } | EventKind::PauseStarted { .. }
        )));
        // A does not release at all: not even a release that finds its lease gone.
        assert!(!t.events.iter().any(|e| e.actor.as_deref() == Some("A")
            && matches!(
                e.kind,
                EventKind::Released { .. } | EventKind::ReleaseNoop { .. }
            )));
    }
    assert!(notes("delayed-packet").contains("never releases"));
    assert!(notes("delayed-packet").contains("a perfect mutex shares it"));
    // The client-timeout what-if is the one that lets go: it gives up and releases.
    let timeout = run(&Scenario::delayed_packet_timeout());
    assert!(timeout
        .events
        .iter()
        .any(|e| e.actor.as_deref() == Some("A") && matches!(e.kind, EventKind::Released { .. })));
}

/// M4 and M5: redis-failover's strict 90 is luck; etcd fixes the failover only.
#[test]
fn m4_m5_failover_luck_and_what_etcd_fixes() {
    let t = run_as("redis-failover", FencingPolicy::Strict);
    assert!(
        story::outcome(&t).contains("by luck of arrival order"),
        "{}",
        story::outcome(&t)
    );
    let refused = step_of(&t, |e| e.result_code() == "stale_fence");
    assert!(story::Story::of(&t)
        .say(refused)
        .contains(Line::DuplicateTokens.text()));
    // Only duplicate tokens are luck: the headline's refusal is not.
    assert!(!story::outcome(&run_as("gc-pause", FencingPolicy::Strict)).contains("luck"));
    assert!(notes("redis-failover")
        .contains("fixes the failover only: a pause or a partition still needs the fence"));
}

/// M6: unsafe-release shows its real harm, two holders at once running the same job.
#[test]
fn m6_unsafe_release_shows_two_holders() {
    let off = run_as("unsafe-release", FencingPolicy::Off);
    assert_eq!(off.summary.duplicate_runs, 1, "the harm is visible off");
    assert_eq!(off.summary.final_balance, 80);
    let strict = run_as("unsafe-release", FencingPolicy::Strict);
    assert_eq!(strict.summary.final_balance, 90, "the fence contains it");
    let del = step_of(&off, |e| {
        matches!(e.kind, EventKind::DeletedOthersLease { .. })
    });
    assert!(story::Story::of(&off)
        .say(del)
        .contains("two holders at once"));
    // With compare-and-delete there is no conflict, and the job runs once.
    let cad = run(&Scenario {
        release: fencing_lab::core::ReleaseMode::CompareAndDelete,
        ..Scenario::unsafe_release().with_policy(FencingPolicy::Off)
    });
    assert_eq!(
        (cad.summary.final_balance, cad.summary.max_believers),
        (90, 1)
    );
}

/// M7: every outcome names who was refused; a rule is recommended.
#[test]
fn m7_outcomes_name_every_refusal_and_a_rule_is_recommended() {
    for (id, t) in deck_runs() {
        let o = story::outcome(&t);
        assert!(!o.contains("more)"), "{id}: {o}");
        let refused: Vec<String> = t
            .writes
            .iter()
            .filter(|w| {
                !w.accepted()
                    && w.result
                        .as_ref()
                        .err()
                        .is_some_and(|e| e.code() != "duplicate_intent")
            })
            .map(|w| w.request.writer.clone())
            .collect();
        if t.summary.duplicate_runs == 0 {
            for who in refused {
                assert!(
                    o.contains(&format!("{who}'s")),
                    "{id}: {o} does not name {who}"
                );
            }
        }
    }
    let t = run_as("handoff-barrier", FencingPolicy::Strict);
    assert!(story::outcome(&t).starts_with("A's 41 and B's 42 refused: stale_fence"));
    assert!((0..=t.len()).any(|s| story::Story::of(&t).say(s).contains(Line::WhichRule.text())));
    // Review 2, M7: the rule is now a recommendation, the same words in notes and Say.
    assert!(notes("same-token-retry").contains(&format!("Which rule? {}", Line::WhichRule.text())));
}

/// M8, M9, M10: randomised retries; ZooKeeper's token; a lock-delay a real system has.
#[test]
fn m8_m9_m10_retries_zookeeper_and_lock_delay() {
    for (id, t) in deck_runs() {
        for (i, e) in t.events.iter().enumerate() {
            if let EventKind::AcquireRefused { .. } = e.kind {
                let n = story::Story::of(&t).narration(story::Steps::of(&t).showing(i));
                // Review 3, U5: an etcd lock's retry says the model polls.
                assert!(
                    n.contains("randomised in a real client")
                        || n.contains("the model polls; etcd and ZooKeeper locks wait on a watch"),
                    "{id}: {n}"
                );
            }
        }
        for w in words(&t) {
            assert!(
                !w.contains("znode version") && !w.contains("ZooKeeper zxid"),
                "{id}: {w}"
            );
        }
    }
    let t = run_as("sequencer", FencingPolicy::Strict);
    assert!(story::Story::of(&t)
        .narration(0)
        .contains("ZooKeeper czxid or sequential-node number"));
    let t = run_as("lock-delay", FencingPolicy::Strict);
    let acquire = story::Story::of(&t).narration(1);
    assert!(
        acquire.contains("Chubby-style lock service") && !acquire.contains("create-if-absent"),
        "{acquire}"
    );
    assert!(!story::Story::of(&t).narration(0).contains("etcd revision"));
    let release = step_of(&t, |e| matches!(e.kind, EventKind::Released { .. }));
    let n = story::Story::of(&t).narration(release);
    assert!(
        n.contains("no lock-delay") && !n.contains("transaction"),
        "{n}"
    );
}

/// U5, U6: claim-row's outcome agrees with itself; row-lock's notes and words are exact.
#[test]
fn u5_u6_claim_row_and_row_lock_words() {
    let off = run_as("claim-row", FencingPolicy::Off);
    let o = story::outcome(&off);
    assert!(
        o.contains("claimed twice") && !o.contains("job ran twice"),
        "{o}"
    );
    // The provider charged once: no line of the run says the job ran twice.
    for w in words(&off) {
        assert!(!w.contains("ran twice"), "{w}");
    }
    let n = notes("row-lock");
    assert!(!n.contains("Lock-free"), "{n}");
    for p in FencingPolicy::ALL {
        for w in words(&run_as("row-lock", p)) {
            assert!(!w.contains("sends can write"), "{w}");
        }
    }
}

/// A Voice per lock kind: each deck entry speaks for the lock it runs on, and a refusal
/// quotes that lock's own answer.
#[test]
fn each_lock_kind_has_its_voice() {
    use story::Voice;
    for (id, voice) in [
        ("gc-pause", Voice::Redis),
        ("clock-jump", Voice::Redlock),
        ("sequencer", Voice::LockService),
        ("lock-delay", Voice::Chubby),
        ("row-lock", Voice::RowLock),
    ] {
        let t = run_as(id, FencingPolicy::Strict);
        assert_eq!(Voice::of(&t.scenario), voice, "{id}");
    }
    for (id, t) in deck_runs() {
        let voice = Voice::of(&t.scenario);
        let steps = story::Steps::of(&t);
        for (i, e) in t.events.iter().enumerate() {
            let live = e.snapshot.holder.is_some();
            if e.result_code() == "lock_held" && live && voice != Voice::Redlock {
                let n = story::Story::of(&t).narration(steps.showing(i));
                assert!(n.contains(voice.held_answer()), "{id}: {n}");
            }
        }
    }
    assert!(Voice::LockService.is_service() && Voice::Chubby.is_service());
    assert!(!Voice::Redis.is_service() && !Voice::Redlock.is_service());
}
