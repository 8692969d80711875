//! `sequencer`: storage that asks the lock service whether a write's lease is still the live
//! one (Chubby's CheckSequencer) refuses the stale holder even before it has seen the newer
//! token, which is the one schedule where the highest-token check alone lets it through.

use fencing_lab::core::{
    deck, run, story, EventKind, Fence, FencingPolicy, Ledger, Pause, Scenario, StorageCheck,
    TokenSource, Trace, WriteError, WriteRequest,
};
use fencing_lab::lab::{Lab, Msg, ParseError, ScenarioEdit};
use fencing_lab::share::{decode, encode, ShareError};

use crate::common;
use common::{w, writes};

const FENCED: [FencingPolicy; 2] = [FencingPolicy::Strict, FencingPolicy::SameEpoch];

fn run_as(policy: FencingPolicy) -> Trace {
    run(&Scenario::sequencer().with_policy(policy))
}

/// The same schedule, checked only against the highest token seen.
fn plain(policy: FencingPolicy) -> Trace {
    run(&Scenario {
        check: StorageCheck::HighestToken,
        ..Scenario::sequencer().with_policy(policy)
    })
}

#[test]
fn the_entry_is_a_pause_that_ends_between_b_s_grant_and_b_s_debit() {
    let sc = Scenario::sequencer();
    assert_eq!(sc.id, "sequencer");
    assert_eq!(sc.check, StorageCheck::Sequencer);
    assert_eq!(sc.lock.token_source(), TokenSource::LockService);
    assert_eq!(
        sc.actors[0].pauses,
        [Pause {
            start: 5,
            duration: 40
        }]
    );
    assert!(deck::find("sequencer").is_some());
    assert!(sc.validate().is_ok());
}

#[test]
fn fencing_off_checks_nothing_the_sequencer_included() {
    let off = run_as(FencingPolicy::Off);
    assert_eq!(writes(&off), [w(45, "A", 33, "ok"), w(50, "B", 34, "ok")]);
    assert_eq!(off.summary.final_balance, 80);
    assert_eq!(off.summary.late_writes_accepted, 1);
    assert_eq!(off.summary.duplicate_runs, 1);
    assert_eq!(off.summary.last_fence, None);
    let highest = plain(FencingPolicy::Off);
    assert_eq!(off.events, highest.events, "off: the check changes nothing");
    assert_eq!(off.summary, highest.summary);
    assert_eq!(
        story::outcome(&off),
        "double charge: job ran twice — A's 33 landed from a superseded lease"
    );
}

#[test]
fn the_highest_token_check_alone_takes_a_s_write_on_this_schedule() {
    for policy in FENCED {
        let t = plain(policy);
        assert_eq!(
            writes(&t),
            [w(45, "A", 33, "ok"), w(50, "B", 34, "ok")],
            "{policy:?}"
        );
        assert_eq!(t.summary.final_balance, 80);
        assert_eq!(t.summary.late_writes_accepted, 1);
        assert_eq!(t.summary.duplicate_runs, 1);
        assert_eq!(t.summary.last_fence, Some(Fence(34)));
    }
}

#[test]
fn the_sequencer_check_refuses_a_before_storage_has_seen_34() {
    for policy in FENCED {
        let t = run_as(policy);
        assert_eq!(
            writes(&t),
            [w(45, "A", 33, "stale_sequencer"), w(50, "B", 34, "ok")],
            "{policy:?}"
        );
        assert_eq!(t.summary.final_balance, 90);
        assert_eq!(t.summary.accepted_writes, 1);
        assert_eq!(t.summary.rejected_writes, 1);
        assert_eq!(t.summary.late_writes_accepted, 0);
        assert_eq!(t.summary.duplicate_runs, 0);
        assert_eq!(t.summary.last_fence, Some(Fence(34)));
        assert_eq!(
            story::outcome(&t),
            "A's 33 refused: stale_sequencer; last fence 34"
        );
        let i = t
            .events
            .iter()
            .position(|e| e.result_code() == "stale_sequencer")
            .unwrap();
        let e = &t.events[i];
        // The facts: the live lease was B's 34, and storage had seen no token at all.
        let EventKind::WriteApplied {
            result,
            superseded_by,
            highest_accepted,
            ..
        } = &e.kind
        else {
            panic!("{e:?}")
        };
        assert_eq!(
            *result,
            Err(WriteError::StaleSequencer {
                token: Fence(33),
                live: Some(Fence(34))
            })
        );
        assert_eq!(*highest_accepted, None);
        let by = superseded_by.as_ref().map(|g| (g.owner.as_str(), g.fence));
        assert_eq!(by, Some(("B", Fence(34))));
        assert_eq!(e.snapshot.last_fence, None);
        assert_eq!(story::label(e), "−10 #33 stale_sequencer");
        let words = story::Story::of(&t).narration(i + 1);
        assert!(
            words.contains("passes the fencing rule (storage has seen no token yet)"),
            "{words}"
        );
        assert!(words.contains("B holds it now, with token 34"), "{words}");
        let say = story::Story::of(&t).say(i + 1);
        assert!(say.contains("Storage has never seen 34"), "{say}");
        assert!(say.contains("round trip"), "{say}");
        // B's write: the check was made and passed.
        let b_write = t
            .events
            .iter()
            .rposition(|e| matches!(e.kind, EventKind::WriteApplied { .. }))
            .unwrap();
        let words = story::Story::of(&t).narration(b_write + 1);
        assert!(
            words.contains("storage asked the lock service: B's lease is still the live one"),
            "{words}"
        );
        assert!(story::Story::of(&t)
            .narration(0)
            .contains("sequencer check"));
    }
}

/// etcd sweeps expired leases about every 500 ms (5 ms on the replay's clock), so on a real
/// etcd B may get the lock one retry later, at t=40: it still holds it when A writes.
#[test]
fn b_granted_one_retry_later_still_holds_the_lock_when_a_writes() {
    let mut sc = Scenario::sequencer();
    sc.actors[1].start_at = 40;
    let t = run(&sc);
    assert_eq!(
        writes(&t),
        [w(45, "A", 33, "stale_sequencer"), w(60, "B", 34, "ok")]
    );
    assert!(t.events.iter().any(|e| matches!(
        e.kind,
        EventKind::WriteApplied {
            result: Err(WriteError::StaleSequencer {
                live: Some(Fence(34)),
                ..
            }),
            ..
        }
    )));
}

#[test]
fn a_lapsed_lease_is_refused_even_with_no_newer_holder() {
    // B arrives only after A's write: nobody holds the lock when A writes at t=45.
    let mut sc = Scenario::sequencer();
    sc.actors[1].start_at = 50;
    let t = run(&sc);
    assert_eq!(
        writes(&t),
        [w(45, "A", 33, "stale_sequencer"), w(70, "B", 34, "ok")]
    );
    let e = t
        .events
        .iter()
        .find(|e| e.result_code() == "stale_sequencer")
        .unwrap();
    assert!(matches!(
        e.kind,
        EventKind::WriteApplied {
            result: Err(WriteError::StaleSequencer { live: None, .. }),
            ..
        }
    ));
    let i = t.events.iter().position(|x| std::ptr::eq(x, e)).unwrap();
    assert!(story::Story::of(&t)
        .narration(i + 1)
        .contains("no lease on it is live at all"));
    assert!(story::Story::of(&t)
        .say(i + 1)
        .starts_with("Nobody holds the lock"));
    assert_eq!(t.summary.final_balance, 90);
}

#[test]
fn on_the_headline_the_token_rule_refuses_first_and_the_check_is_not_needed() {
    // Pause 5..55: B wrote 34 at t=35, so A's 33 fails the local rule before any call.
    let sc = Scenario {
        check: StorageCheck::Sequencer,
        ..Scenario::gc_pause()
    };
    for policy in FENCED {
        let t = run(&sc.clone().with_policy(policy));
        assert_eq!(
            writes(&t),
            [w(35, "B", 34, "ok"), w(55, "A", 33, "stale_fence")]
        );
    }
    // The headline's tokens (INCR on the same Redis) with the pause that ends at t=31: the
    // what-if the browser test flips, 80 without the check and 90 with it.
    let late = Scenario::gc_pause().with_pause(
        0,
        Pause {
            start: 5,
            duration: 26,
        },
    );
    assert_eq!(run(&late).summary.final_balance, 80);
    let checked = run(&Scenario {
        check: StorageCheck::Sequencer,
        ..late
    });
    assert_eq!(checked.summary.final_balance, 90);
    assert_eq!(
        writes(&checked),
        [w(31, "A", 33, "stale_sequencer"), w(35, "B", 34, "ok")]
    );
}

#[test]
fn the_lock_service_is_asked_only_when_fencing_is_on_and_the_token_passes() {
    let req = |writer: &str, token: u64| WriteRequest {
        resource: "acct:1".to_owned(),
        writer: writer.to_owned(),
        fence: Some(Fence(token)),
        amount: 10,
        idempotency_key: None,
        publish: None,
    };
    let never = || -> Result<(), Option<Fence>> { panic!("the lock service was asked") };
    // Off: storage checks nothing, so it makes no call.
    let mut off = Ledger::new(FencingPolicy::Off).with_check(StorageCheck::Sequencer);
    off.open("acct:1", 100);
    assert_eq!(off.debit_checked(0, req("A", 33), never), Ok(90));
    // Strict: a token the rule refuses is refused locally, without a call.
    let mut strict = Ledger::new(FencingPolicy::Strict).with_check(StorageCheck::Sequencer);
    strict.open("acct:1", 100);
    assert_eq!(strict.debit_checked(0, req("B", 34), || Ok(())), Ok(90));
    let err = strict.debit_checked(1, req("A", 33), never).unwrap_err();
    assert_eq!(err.code(), "stale_fence");
    // A token the rule admits, refused by the lock service.
    let err = strict
        .debit_checked(2, req("C", 35), || Err(Some(Fence(36))))
        .unwrap_err();
    assert_eq!(
        err,
        WriteError::StaleSequencer {
            token: Fence(35),
            live: Some(Fence(36))
        }
    );
    assert_eq!(err.to_string(), "stale_sequencer");
    assert_eq!(strict.account("acct:1").balance, 90);
    assert_eq!(strict.account("acct:1").last_fence, Some(Fence(34)));
    // Highest token only: the check is never asked for.
    let mut plain = Ledger::new(FencingPolicy::Strict);
    plain.open("acct:1", 100);
    assert_eq!(plain.debit_checked(0, req("A", 33), never), Ok(90));
}

#[test]
fn notes_quote_the_runs() {
    let entry = deck::find("sequencer").unwrap();
    let runs = deck::runs(entry);
    let notes = (entry.notes)(&runs);
    let text = notes.join("\n");
    for figure in [
        "ends at t=45 this time",
        "ran out at t=30 and B got 34 at t=30",
        "at t=45, before B's at t=50",
        "A's 33 is accepted under strict (80) and accepted under same-epoch (80)",
        "A's 33 is stale_sequencer (strict 90, same-epoch 90)",
        "sequencer included: 80",
        "round trip",
    ] {
        assert!(text.contains(figure), "{figure}: {text}");
    }
    // Fed other runs (the headline's), the notes say other things.
    let other = (entry.notes)(&deck::runs(deck::find("gc-pause").unwrap())).join("\n");
    assert_ne!(other, text);
}

#[test]
fn the_link_keeps_the_check_and_refuses_a_bad_one() {
    // On the headline, the what-if is `check=sequencer`.
    let sc = Scenario {
        check: StorageCheck::Sequencer,
        ..Scenario::gc_pause().with_pause(
            0,
            Pause {
                start: 5,
                duration: 26,
            },
        )
    };
    let hash = encode(&sc, 9);
    assert_eq!(
        hash,
        "#s=gc-pause&fence=strict&ttl=30&check=sequencer&pause.A=5,26&step=9"
    );
    let view = decode(&hash).unwrap();
    assert_eq!(view.scenario, sc);
    assert_eq!(view.step, 9);
    // The entry's own default is not written; turning it off is.
    let entry = Scenario::sequencer();
    assert!(!encode(&entry, 0).contains("check="));
    let off = Scenario {
        check: StorageCheck::HighestToken,
        ..Scenario::sequencer()
    };
    let hash = encode(&off, 0);
    assert!(hash.contains("&check=highest"), "{hash}");
    assert_eq!(decode(&hash).unwrap().scenario, off);
    let err = decode("#s=gc-pause&check=chubby").unwrap_err();
    assert!(matches!(
        err,
        ShareError::Edit(ParseError::BadChoice { what: "check", .. })
    ));
    assert_eq!(
        err.to_string(),
        "check must be highest, sequencer or read_then_write, not “chubby”"
    );
}

#[test]
fn the_what_if_flips_the_check_and_the_fork_compares_both() {
    let late = Scenario::gc_pause().with_pause(
        0,
        Pause {
            start: 5,
            duration: 26,
        },
    );
    let mut lab = Lab::new(late);
    assert_eq!(lab.trace().summary.final_balance, 80);
    lab.update(Msg::ToggleFork);
    lab.update(ScenarioEdit::Check(StorageCheck::Sequencer).into());
    assert_eq!(lab.error(), None);
    assert_eq!(lab.scenario().check, StorageCheck::Sequencer);
    assert_eq!(lab.trace().summary.final_balance, 90);
    let original = lab.fork_of().expect("the fork keeps the original");
    assert_eq!(original.summary.final_balance, 80);
    assert_eq!(original.scenario.check, StorageCheck::HighestToken);
    // The off / on panel: off checks nothing, so 80; on, 90.
    let (off, on) = lab.compare();
    assert_eq!(
        (off.summary.final_balance, on.summary.final_balance),
        (80, 90)
    );
    lab.update(ScenarioEdit::Check(StorageCheck::HighestToken).into());
    assert_eq!(lab.trace().summary.final_balance, 80);
}
