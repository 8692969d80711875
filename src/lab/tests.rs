use super::*;

fn ed(edit: ScenarioEdit) -> Msg {
    Msg::Edit(edit)
}
use crate::core::{EventKind, Pause};
use crate::view::geometry::{dragged_delay, moved, Grip};

#[test]
fn stepping_is_clamped_and_back_is_indexing() {
    let mut lab = Lab::default();
    lab.update(Msg::Back);
    assert_eq!(lab.step, 0);
    for _ in 0..100 {
        lab.update(Msg::Forward);
    }
    assert_eq!(lab.step, lab.trace.len());
    assert_eq!(lab.trace.snapshot_at(lab.step).balance, 90);
    lab.update(Msg::Back);
    assert_eq!(lab.step, lab.trace.len() - 1);
}

#[test]
fn policy_toggle_keeps_you_at_the_end() {
    let mut lab = Lab::default();
    lab.update(Msg::Seek(usize::MAX));
    lab.update(ed(ScenarioEdit::Policy(FencingPolicy::Off)));
    assert!(lab.at_end());
    assert_eq!(lab.trace.summary.final_balance, 80);
    lab.update(Msg::TogglePolicy);
    assert_eq!(lab.scenario().policy, FencingPolicy::Strict);
    assert_eq!(lab.trace.summary.final_balance, 90);
}

#[test]
fn out_of_range_pause_is_refused_and_state_kept() {
    let mut lab = Lab::default();
    let before = lab.trace.clone();
    lab.update(ed(ScenarioEdit::Pause {
        actor: 0,
        pause: Some(Pause {
            start: 90,
            duration: 50,
        }),
    }));
    assert!(lab.error.as_deref().unwrap().contains("must end by"));
    assert_eq!(lab.trace, before);
    lab.update(ed(ScenarioEdit::Pause {
        actor: 9,
        pause: Some(Pause {
            start: 0,
            duration: 5,
        }),
    }));
    assert_eq!(lab.trace, before);
}

#[test]
fn fork_keeps_the_original_while_the_copy_changes() {
    let mut lab = Lab::default();
    lab.update(Msg::Seek(usize::MAX));
    lab.update(Msg::ToggleFork);
    lab.update(ed(ScenarioEdit::Policy(FencingPolicy::Off)));
    let original = lab.fork_of.as_ref().unwrap();
    assert_eq!(original.summary.final_balance, 90);
    assert_eq!(lab.trace.summary.final_balance, 80);
    lab.update(Msg::ToggleFork);
    assert!(lab.fork_of.is_none());
}

#[test]
fn ttl_and_delay_edits_are_validated() {
    let mut lab = Lab::default();
    lab.update(ed(ScenarioEdit::Ttl(0)));
    assert_eq!(
        lab.error(),
        Some("Lease TTL must be between 1 ms and 10 minutes (0 ms is too short).")
    );
    assert_eq!(lab.scenario().lease_ttl, 30);
    lab.update(ed(ScenarioEdit::Ttl(100)));
    assert!(lab.error.is_none());
    assert_eq!(
        lab.trace.summary.final_balance, 90,
        "a 100 ms lease outlives the pause: B waits, then finds the job done"
    );
    assert!(!lab.trace.summary.conflict());
    assert_eq!(lab.trace.summary.duplicate_runs, 0);
    assert_eq!(lab.trace.summary.accepted_writes, 1);
    assert!(
        lab.trace
            .events
            .iter()
            .any(|e| e.actor.as_deref() == Some("B")
                && e.kind == EventKind::JobChecked { done: true })
    );
    lab.update(ed(ScenarioEdit::Delay { actor: 7, delay: 1 }));
    assert!(lab.error.is_some());
    lab.update(ed(ScenarioEdit::Delay { actor: 0, delay: 5 }));
    assert_eq!(lab.scenario().actors[0].network_delay, 5);
}

#[test]
fn restore_clamps_the_step() {
    let mut lab = Lab::default();
    lab.update(Msg::Restore {
        scenario: Scenario::gc_pause().with_policy(FencingPolicy::Off),
        step: 9_999,
        embed: false,
    });
    assert!(lab.at_end());
    assert_eq!(lab.trace.summary.final_balance, 80);
}

/// The headline as `&embed` restores it: at its end, with fencing off.
fn embedded_headline() -> Lab {
    let mut lab = Lab::default();
    lab.update(Msg::ToggleFork);
    lab.update(Msg::ToggleNotes);
    lab.update(Msg::ToggleExplore);
    lab.update(Msg::TogglePresent);
    lab.update(Msg::ToggleLaser);
    lab.update(Msg::Restore {
        scenario: Scenario::gc_pause().with_policy(FencingPolicy::Off),
        step: 9_999,
        embed: true,
    });
    lab
}

#[test]
fn an_embedded_view_is_the_same_run_without_the_tools() {
    let lab = embedded_headline();
    assert!(lab.embedded());
    assert!(lab.at_end());
    assert_eq!(lab.trace.summary.final_balance, 80);
    let (off, on) = lab.compare();
    assert_eq!(
        (off.summary.final_balance, on.summary.final_balance),
        (80, 90)
    );
    // Going into a frame put every tool away.
    assert!(lab.fork_of().is_none() && lab.exploration().is_none() && lab.notes().is_none());
    assert!(!lab.presenting() && !lab.laser());
}

#[test]
fn an_embedded_view_steps_and_flips_fencing_but_opens_no_tool() {
    let mut lab = embedded_headline();
    for m in [
        Msg::ToggleFork,
        Msg::ToggleExplore,
        Msg::ToggleNotes,
        Msg::TogglePresent,
        Msg::ToggleLaser,
        Msg::Import(Box::new(crate::lab::read_recording("{}"))),
    ] {
        lab.update(m.clone());
        assert!(
            lab.fork_of().is_none() && lab.exploration().is_none() && lab.notes().is_none(),
            "{m:?}"
        );
        assert!(!lab.presenting() && lab.error().is_none(), "{m:?}");
    }
    // The run itself is the reader's to step through and to flip.
    lab.update(Msg::Reset);
    lab.update(key_to_msg("ArrowRight").unwrap());
    assert_eq!(lab.step(), 1);
    lab.update(key_to_msg("f").unwrap());
    assert_eq!(lab.scenario().policy, FencingPolicy::Strict);
    assert!(lab.embedded(), "an edit keeps the view in its frame");
    // A link without the flag (pasted into the frame's address) leaves it, and the tools
    // work again.
    lab.update(Msg::Restore {
        scenario: Scenario::gc_pause(),
        step: 0,
        embed: false,
    });
    assert!(!lab.embedded());
    lab.update(Msg::ToggleNotes);
    assert!(lab.notes().is_some());
}

#[test]
fn play_runs_to_the_end_then_stops() {
    let mut lab = Lab::default();
    lab.update(Msg::TogglePlay);
    for _ in 0..lab.trace.len() {
        lab.update(Msg::Tick);
    }
    assert!(lab.at_end());
    assert!(!lab.playing);
    lab.update(Msg::TogglePlay);
    assert_eq!(lab.step, 0, "play at the end replays");
}

#[test]
fn every_documented_key_does_something() {
    // `p`, `Escape`, `n`, `s`, `?` and `q` are the shell's own (fullscreen, the notes drawer,
    // the speaker window, the keys sheet, rehearse).
    for c in CONTROLS {
        for k in c.keys {
            assert!(
                key_to_msg(k).is_some() || matches!(*k, "p" | "Escape" | "n" | "s" | "?" | "q"),
                "{}: {k:?}",
                c.action
            );
        }
    }
    let documented: Vec<&str> = CONTROLS
        .iter()
        .flat_map(|c| c.keys.iter().copied())
        .collect();
    for k in ["ArrowRight", "ArrowLeft", ".", " ", "f", "r", "Home", "l"] {
        assert!(
            documented.contains(&k),
            "{k:?} is mapped but not in the table"
        );
    }
    assert!(controls_table().starts_with("| action | how |\n| --- | --- |\n| step forward"));
}

#[test]
fn keys_map_to_messages() {
    assert_eq!(key_to_msg("ArrowRight"), Some(Msg::Forward));
    assert_eq!(key_to_msg("."), Some(Msg::Forward));
    assert_eq!(key_to_msg("ArrowLeft"), Some(Msg::Back));
    assert_eq!(key_to_msg(" "), Some(Msg::TogglePlay));
    assert_eq!(key_to_msg("f"), Some(Msg::TogglePolicy));
    assert_eq!(key_to_msg("l"), Some(Msg::ToggleLaser));
    assert_eq!(key_to_msg("q"), None);
}

#[test]
fn the_laser_pointer_is_a_presenter_tool() {
    let mut lab = Lab::default();
    lab.update(Msg::ToggleLaser);
    assert!(!lab.laser(), "no pointer outside presenter mode");
    lab.update(Msg::TogglePresent);
    lab.update(Msg::ToggleLaser);
    assert!(lab.laser());
    lab.update(Msg::ToggleLaser);
    assert!(!lab.laser(), "l again puts it away");
    lab.update(Msg::ToggleLaser);
    lab.update(Msg::TogglePresent);
    assert!(!lab.laser(), "leaving presenter mode puts it away");
    lab.update(Msg::TogglePresent);
    assert!(!lab.laser(), "and it stays away when presenting again");
    lab.update(Msg::ToggleLaser);
    lab.update(Msg::StopPresenting);
    assert!(!lab.laser(), "leaving fullscreen (Esc) too");
}

#[test]
fn the_comparison_is_two_real_runs_and_follows_edits() {
    let mut lab = Lab::default();
    let (off, on) = lab.compare();
    assert_eq!(
        (off.summary.final_balance, on.summary.final_balance),
        (80, 90)
    );
    assert!(
        Arc::ptr_eq(on, lab.trace()),
        "the side on screen is not rerun"
    );
    lab.update(ed(ScenarioEdit::Ttl(100)));
    let (off, on) = lab.compare();
    assert_eq!(
        (off.summary.final_balance, on.summary.final_balance),
        (90, 90)
    );
    lab.update(ed(ScenarioEdit::Policy(FencingPolicy::SameEpoch)));
    assert_eq!(lab.compare().1.scenario.policy, FencingPolicy::SameEpoch);
    lab.update(ed(ScenarioEdit::Policy(FencingPolicy::Off)));
    assert_eq!(lab.compare().1.scenario.policy, FencingPolicy::Strict);
}

#[test]
fn field_edits_are_parsed_here_and_refusals_keep_the_value() {
    let mut lab = Lab::default();
    let edit = |param, actor, text: &str| Msg::Field {
        param,
        actor,
        text: text.to_owned(),
    };
    lab.update(edit(Param::PauseStart, Some(0), " 12 "));
    assert_eq!(lab.scenario().actors[0].pauses[0].start, 12);
    lab.update(edit(Param::PauseLength, Some(0), "x"));
    assert_eq!(
        lab.error(),
        Some("A pause length must be between 1 ms and 88 ms (“x” is not a whole number; A's pause must end by t=100 ms, the end of the timeline).")
    );
    assert_eq!(Param::PauseLength.value(lab.scenario(), Some(0)), Some(50));
    lab.update(edit(Param::Ttl, None, "45"));
    assert_eq!(lab.scenario().lease_ttl, 45);
    lab.update(edit(Param::PauseStart, Some(1), "3"));
    assert!(lab.error().unwrap().contains("no pause"), "B has no pause");
    for p in Param::ALL {
        assert_eq!(Param::from_code(p.code()), Some(p));
    }
    assert_eq!(Grip::from_code("resize"), Some(Grip::Resize));
    assert_eq!(Grip::from_code("x"), None);
}

#[test]
fn the_explorer_runs_in_chunks_and_loads_a_counterexample() {
    let mut lab = Lab::default();
    lab.update(Msg::ToggleExplore);
    let x = lab.exploration().unwrap();
    assert!(
        x.heading().contains("Every placement of A's pause"),
        "{}",
        x.heading()
    );
    assert!(!x.started() && !x.finished());
    lab.update(Msg::ExploreChunk {
        budget: 100,
        elapsed_ms: 2.0,
    });
    assert_eq!(lab.exploration().unwrap().progress().0, 100);
    while !lab.exploration().unwrap().finished() {
        lab.update(Msg::ExploreChunk {
            budget: 4096,
            elapsed_ms: 9.0,
        });
    }
    let strict = &lab.exploration().unwrap().stats()[1];
    assert!(strict.late_writes > 0);
    let (done, total) = lab.exploration().unwrap().progress();
    assert_eq!(done, total);
    // Loading a counterexample keeps the table (it differs only in what is explored).
    let index = strict
        .examples
        .iter()
        .position(|e| e.verdict.is_harmful())
        .unwrap();
    lab.update(Msg::LoadExample { row: 1, index });
    assert!(lab.at_end());
    assert!(lab.trace().summary.late_writes_accepted > 0);
    assert_eq!(lab.scenario().policy, FencingPolicy::Strict);
    assert!(lab.exploration().unwrap().finished());
    // Another scenario starts afresh; closing drops it.
    lab.update(Msg::Pick("delayed-packet".to_owned()));
    assert_eq!(lab.exploration().unwrap().progress().0, 0);
    lab.update(Msg::ToggleExplore);
    assert!(lab.exploration().is_none());
}

#[test]
fn notes_herd_and_presenting_live_in_the_lab() {
    let mut lab = Lab::default();
    assert!(lab.herd().is_none() && lab.notes().is_none());
    lab.update(Msg::ToggleNotes);
    assert!(!lab.notes().unwrap().is_empty());
    lab.update(Msg::Pick("renewal".to_owned()));
    let herd = Arc::clone(lab.herd().unwrap());
    assert!(herd.fixed.peak_per_bucket() > herd.jittered.peak_per_bucket());
    assert!(
        herd.caption().starts_with("1000 holders"),
        "{}",
        herd.caption()
    );
    assert!(lab.notes().unwrap().iter().any(|n| n.contains("renew")));
    // The herd's own entry draws the seed's 10,000 holders.
    lab.update(Msg::Pick("renewal-herd".to_owned()));
    let own = Arc::clone(lab.herd().unwrap());
    assert!(
        own.caption().starts_with("10000 holders"),
        "{}",
        own.caption()
    );
    assert_eq!(own.fixed.peak_per_ms, 10_000);
    lab.update(Msg::Pick("renewal".to_owned()));
    let herd = Arc::clone(lab.herd().unwrap());
    // A drag reruns the scenario, not the herd.
    let p = lab.scenario().actors[0].pauses[0];
    lab.update(ed(ScenarioEdit::Pause {
        actor: 0,
        pause: Some(moved(p, 1, lab.scenario().horizon)),
    }));
    assert!(Arc::ptr_eq(&herd, lab.herd().unwrap()));
    lab.update(Msg::Pick("nope".to_owned()));
    assert!(lab.error().unwrap().contains("no scenario"));
    lab.update(Msg::TogglePresent);
    assert!(lab.presenting());
    lab.update(Msg::StopPresenting);
    assert!(!lab.presenting());
    lab.update(Msg::SetSpeed(400));
    assert_eq!(lab.speed(), 400);
}

#[test]
fn a_pause_can_be_added_to_any_client_and_removed() {
    let mut lab = Lab::default();
    lab.update(Msg::AddPause { actor: 1, at: 40 });
    assert_eq!(
        lab.scenario().actors[1].pauses,
        vec![Pause {
            start: 40,
            duration: NEW_PAUSE_MS
        }]
    );
    assert!(lab.error().is_none());
    // B's debit lands at 35, before its pause at 40: storage ends as in the headline.
    assert_eq!(lab.trace().summary.final_balance, 90);
    lab.update(Msg::AddPause { actor: 1, at: 20 });
    assert!(lab.error().unwrap().contains("already has a pause"));
    lab.update(Msg::AddPause { actor: 0, at: 10 });
    assert!(lab.error().unwrap().contains("A already has a pause"));
    lab.update(Msg::RemovePause { actor: 0 });
    assert!(lab.scenario().actors[0].pauses.is_empty());
    assert_eq!(
        lab.trace().summary.final_balance,
        90,
        "without A's pause A finishes first and B skips the done job"
    );
    assert_eq!(lab.trace().summary.duplicate_runs, 0);
    lab.update(Msg::RemovePause { actor: 0 });
    assert!(lab.error().unwrap().contains("no pause to remove"));
    // Near the end, the new pause is cut at the horizon; at it, refused.
    lab.update(Msg::AddPause { actor: 0, at: 95 });
    assert_eq!(lab.scenario().actors[0].pauses[0].duration, 5);
    lab.update(Msg::RemovePause { actor: 0 });
    lab.update(Msg::AddPause { actor: 0, at: 100 });
    assert!(lab.error().unwrap().contains("must start before"));
    lab.update(Msg::AddPause { actor: 7, at: 1 });
    assert!(lab.error().unwrap().contains("no actor number 7"));
}

fn names(lab: &Lab) -> Vec<&str> {
    lab.scenario()
        .actors
        .iter()
        .map(|a| a.name.as_str())
        .collect()
}

#[test]
fn keys_on_a_focused_pause_move_resize_and_remove_it() {
    let p = Pause {
        start: 5,
        duration: 50,
    };
    let set = |key, shift| match pause_key(key, shift, 0, p, 100) {
        Some(Msg::Edit(ScenarioEdit::Pause {
            actor: 0,
            pause: Some(pause),
        })) => (pause.start, pause.duration),
        _ => panic!("{key} (shift {shift}) should set A's pause"),
    };
    assert_eq!(set("ArrowRight", false), (6, 50));
    assert_eq!(set("ArrowLeft", false), (4, 50));
    assert_eq!(set("ArrowRight", true), (5, 51));
    assert_eq!(set("ArrowLeft", true), (5, 49));
    // Clamped like a drag: never before 0, never past the horizon, never shorter than 1.
    let edge = |key, shift, p| match pause_key(key, shift, 0, p, 100) {
        Some(Msg::Edit(ScenarioEdit::Pause {
            pause: Some(pause), ..
        })) => (pause.start, pause.duration),
        _ => panic!("{key} should set the pause"),
    };
    assert_eq!(
        edge(
            "ArrowLeft",
            false,
            Pause {
                start: 0,
                duration: 50
            }
        ),
        (0, 50)
    );
    assert_eq!(
        edge(
            "ArrowRight",
            false,
            Pause {
                start: 50,
                duration: 50
            }
        ),
        (50, 50)
    );
    assert_eq!(
        edge(
            "ArrowLeft",
            true,
            Pause {
                start: 5,
                duration: 1
            }
        ),
        (5, 1)
    );
    for key in ["Delete", "Backspace"] {
        assert!(matches!(
            pause_key(key, false, 1, p, 100),
            Some(Msg::RemovePause { actor: 1 })
        ));
    }
    assert!(pause_key("f", false, 0, p, 100).is_none());
    // Through the lab, as the page sends it: the run follows and the link keeps it.
    let mut lab = Lab::default();
    lab.update(pause_key("ArrowRight", false, 0, p, 100).unwrap());
    assert_eq!(lab.scenario().actors[0].pauses[0].start, 6);
    lab.update(pause_key("Delete", false, 0, p, 100).unwrap());
    assert!(lab.scenario().actors[0].pauses.is_empty());
}

#[test]
fn clients_can_be_added_and_removed_between_two_and_five() {
    let mut lab = Lab::default();
    lab.update(Msg::Seek(usize::MAX));
    lab.update(ed(ScenarioEdit::Clients(3)));
    assert_eq!(names(&lab), ["A", "B", "C"]);
    let (b, c) = (&lab.scenario().actors[1], &lab.scenario().actors[2]);
    assert_eq!((&c.script, c.start_at), (&b.script, b.start_at));
    assert!(c.pauses.is_empty());
    // C contends with B for the same lock; the job still runs once under strict fencing
    // and the deck's verdicts stand.
    assert_eq!(lab.trace().summary.final_balance, 90);
    assert!(lab
        .trace()
        .events
        .iter()
        .any(|e| e.actor.as_deref() == Some("C")));
    lab.update(ed(ScenarioEdit::Clients(6)));
    assert_eq!(
        lab.error(),
        Some("Clients must be between 2 and 5 (6 is too many).")
    );
    assert_eq!(lab.scenario().actors.len(), 3);
    lab.update(ed(ScenarioEdit::Clients(1)));
    assert!(lab.error().is_some());
    lab.update(ed(ScenarioEdit::Clients(5)));
    assert_eq!(names(&lab), ["A", "B", "C", "D", "E"]);
    lab.update(ed(ScenarioEdit::Clients(2)));
    assert_eq!(lab.scenario(), &Scenario::gc_pause());
    assert!(lab.at_end(), "the viewer stays at the end");
}

#[test]
fn a_dragged_arrival_sets_the_delay_within_the_run() {
    let mut lab = Lab::new(deck::find("gc-pause").map(|e| (e.build)()).unwrap());
    lab.update(ed(ScenarioEdit::Delay {
        actor: 1,
        delay: dragged_delay(0, 25, 35, lab.scenario().horizon),
    }));
    assert_eq!(lab.scenario().actors[1].network_delay, 25);
    assert_eq!(lab.error(), None);
}

#[test]
fn a_run_of_identical_events_is_one_press() {
    // renewal: three watchdog renewals in a row are one step of the controls, the counter
    // and the timeline; the trace keeps all three.
    let mut lab = Lab::default();
    lab.update(Msg::Pick("renewal".to_owned()));
    assert_eq!(lab.last_step(), lab.trace.len() - 2);
    let renewal = |e: &crate::core::TraceEvent| matches!(e.kind, EventKind::Extended { .. });
    let first = lab.trace.events.iter().position(renewal).unwrap();
    lab.update(Msg::Seek(first + 1));
    let events = crate::core::story::Steps::of(&lab.trace).through(lab.step);
    assert_eq!(events, first + 3, "one step shows all three renewals");
    let drawn = crate::view::timeline::model(&lab.trace, lab.step, true);
    let current: Vec<usize> = drawn
        .markers
        .iter()
        .filter(|m| m.state == crate::view::timeline::State::Current)
        .map(|m| m.event)
        .collect();
    assert_eq!(current, [first, first + 1, first + 2]);
    assert!(drawn.markers.iter().all(|m| m.step <= lab.last_step()));
    lab.update(Msg::Forward);
    let next = crate::core::story::Steps::of(&lab.trace).events(lab.step);
    assert_eq!(
        next,
        first + 3..first + 4,
        "the next press shows the next event"
    );
    lab.update(Msg::Seek(usize::MAX));
    assert!(lab.at_end());
    assert_eq!(lab.step, lab.last_step());
}

#[test]
fn f_flips_fencing_off_and_on_and_same_epoch_is_the_selects() {
    let mut lab = Lab::default();
    lab.update(ed(ScenarioEdit::Policy(FencingPolicy::Off)));
    lab.update(key_to_msg("f").unwrap());
    assert_eq!(lab.scenario().policy, FencingPolicy::Strict);
    lab.update(key_to_msg("f").unwrap());
    assert_eq!(
        lab.scenario().policy,
        FencingPolicy::Off,
        "one press back to off"
    );
    lab.update(ed(ScenarioEdit::Policy(FencingPolicy::SameEpoch)));
    lab.update(key_to_msg("f").unwrap());
    assert_eq!(lab.scenario().policy, FencingPolicy::Off);
}

#[test]
fn picking_an_entry_keeps_the_presenters_fencing() {
    let mut lab = Lab::default();
    for policy in FencingPolicy::ALL {
        lab.update(ed(ScenarioEdit::Policy(policy)));
        for entry in crate::core::deck::DECK {
            lab.update(Msg::Pick(entry.id.to_owned()));
            let own = (entry.build)().policy;
            match lab.error() {
                None => assert_eq!(lab.scenario().policy, policy, "{}", entry.id),
                Some(why) => {
                    assert_eq!(lab.scenario().policy, own, "{}", entry.id);
                    assert!(why.starts_with("Fencing is "), "{}: {why}", entry.id);
                }
            }
            lab.update(Msg::DismissError);
            lab.update(ed(ScenarioEdit::Policy(policy)));
        }
    }
}

#[test]
fn presenting_reveals_and_r_toggles_the_reveal_anywhere() {
    let mut lab = Lab::default();
    assert!(!lab.revealing(), "exploring shows the ghosted future");
    lab.update(key_to_msg("r").unwrap());
    assert!(lab.revealing());
    lab.update(key_to_msg("r").unwrap());
    lab.update(Msg::TogglePresent);
    assert!(lab.revealing(), "presenter mode reveals step by step");
    lab.update(Msg::StopPresenting);
    assert!(!lab.revealing());
}

/// The headline's pause dragged later: the events reorder, and the cursor stays on the
/// event it was on (B's debit), not on whatever now has the same index.
#[test]
fn a_drag_keeps_the_cursor_on_the_same_event() {
    use crate::core::{EventKind, Pause};
    let mut lab = Lab::default();
    let is_b_debit = |e: &crate::core::TraceEvent| {
        e.actor.as_deref() == Some("B") && matches!(e.kind, EventKind::WriteApplied { .. })
    };
    let at = lab
        .trace
        .events
        .iter()
        .position(is_b_debit)
        .expect("B debits");
    lab.update(Msg::Seek(
        crate::core::story::Steps::of(&lab.trace).showing(at),
    ));
    let shown = |lab: &Lab| {
        let through = crate::core::story::Steps::of(lab.trace()).through(lab.step());
        lab.trace().events[through - 1].clone()
    };
    assert!(is_b_debit(&shown(&lab)));
    for start in [1, 2, 3] {
        lab.update(ed(ScenarioEdit::Pause {
            actor: 0,
            pause: Some(Pause {
                start,
                duration: 50,
            }),
        }));
        assert!(
            is_b_debit(&shown(&lab)),
            "pause at {start}: {:?}",
            shown(&lab)
        );
    }
}
