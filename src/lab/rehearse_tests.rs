use super::*;
use crate::core::deck::{find, runs, HEADLINE};
use crate::core::{run, EventKind, FencingPolicy, Scenario};
use crate::lab::rehearse_sheet::{figure, sheet_entry, sheet_markup};

/// The headline with fencing off and strict.
fn headline() -> (Trace, Trace) {
    let sc = Scenario::gc_pause();
    (
        run(&sc.clone().with_policy(FencingPolicy::Off)),
        run(&sc.with_policy(FencingPolicy::Strict)),
    )
}

/// The prediction that matches the runs: each value their end, every refused write ticked.
fn true_prediction(off: &Trace, on: &Trace) -> Prediction {
    Prediction {
        off: story::final_value(off),
        on: story::final_value(on),
        refused: write_events(on)
            .enumerate()
            .filter(|(_, (_, e))| refused(e))
            .map(|(n, _)| n)
            .collect(),
    }
}

#[test]
fn the_form_offers_every_figure_storage_shows_and_every_write_it_answers() {
    let (off, on) = headline();
    let c = choices(&off, &on);
    assert_eq!(c.figure, "balance");
    assert_eq!(c.values, ["100", "90", "80"], "largest first, each once");
    assert!(c.values.contains(&story::final_value(&off)));
    assert!(c.values.contains(&story::final_value(&on)));
    assert_eq!(
        c.writes,
        [
            "B's debit of 10 with token 34",
            "A's debit of 10 with token 33"
        ],
        "in the order they reach storage"
    );
}

#[test]
fn a_prediction_that_matches_the_runs_is_right_at_the_steps_that_decide_them() {
    let (off, on) = headline();
    let marks = score(&off, &on, &true_prediction(&off, &on));
    assert!(marks.iter().all(|m| m.right), "{marks:?}");
    assert_eq!(marks.len(), 3);
    assert_eq!(
        (marks[0].side, marks[0].step),
        (Side::Off, deciding_step(&off))
    );
    assert_eq!(
        (marks[1].side, marks[1].step),
        (Side::On, deciding_step(&on))
    );
    assert_eq!(marks[0].truth, story::final_value(&off));
    // The refusal is named with storage's own code, from the trace.
    assert!(marks[2]
        .truth
        .contains("A's debit of 10 with token 33 (stale_fence)"));
    assert_eq!(marks[2].said, marks[2].truth.replace(" (stale_fence)", ""));
}

#[test]
fn wrong_predictions_are_marked_at_the_write_that_shows_them_wrong() {
    let (off, on) = headline();
    let truth = true_prediction(&off, &on);
    let wrong = Prediction {
        off: story::final_value(&on), // the candidate thinks nothing goes wrong unfenced
        on: truth.on.clone(),
        refused: Vec::new(), // and that storage refuses nothing
    };
    let marks = score(&off, &on, &wrong);
    assert_eq!(
        marks.iter().map(|m| m.right).collect::<Vec<_>>(),
        [false, true, false]
    );
    // The refused write's step: the step that shows A's write answered stale_fence.
    let (i, _) = write_events(&on).find(|(_, e)| refused(e)).unwrap();
    assert_eq!(marks[2].step, story::Steps::of(&on).showing(i));
    assert_eq!(marks[2].said, "none");
    // Ticking B's accepted write as refused is wrong at B's write, before A's.
    let marks = score(
        &off,
        &on,
        &Prediction {
            refused: vec![0, 1],
            ..truth
        },
    );
    let (b, _) = write_events(&on).next().unwrap();
    assert!(!marks[2].right);
    assert_eq!(marks[2].step, story::Steps::of(&on).showing(b));
}

#[test]
fn several_refused_writes_are_all_needed() {
    let entry = find("handoff-barrier").unwrap();
    let r = runs(entry);
    let (off, on) = (r.off(), r.strict());
    let truth = true_prediction(off, on);
    assert!(
        truth.refused.len() >= 2,
        "the barrier entry refuses both late writes"
    );
    assert!(score(off, on, &truth)[2].right);
    let one = Prediction {
        refused: truth.refused[..1].to_vec(),
        ..truth.clone()
    };
    assert!(!score(off, on, &one)[2].right);
    assert_eq!(choices(off, on).figure, "result row");
}

#[test]
fn a_mark_shows_once_its_run_reaches_its_step() {
    let (off, on) = headline();
    let marks = score(&off, &on, &true_prediction(&off, &on));
    let (m_off, m_on) = (&marks[0], &marks[1]);
    assert!(!m_off.decided(Side::Off, m_off.step - 1));
    assert!(m_off.decided(Side::Off, m_off.step));
    assert!(
        m_off.decided(Side::On, 0),
        "the off marks stay while the on run plays"
    );
    assert!(
        !m_on.decided(Side::Off, 999),
        "nothing about fencing on shows while it is off"
    );
    assert!(m_on.decided(Side::On, m_on.step));
}

/// Plays entry `id` of `r` from the question to its end.
fn play_through(r: &mut Rehearsal, now_ms: f64, answer_ms: f64) -> &'static DeckEntry {
    let entry = find(r.entry().unwrap()).unwrap();
    assert_eq!(r.phase(), &Phase::Ask { since_ms: now_ms });
    r.update(
        RehearseMsg::Answered {
            now_ms: now_ms + answer_ms,
        },
        Some(entry),
    );
    let secs = (answer_ms / 1000.0).round() as u32;
    assert_eq!(r.phase(), &Phase::Predict { secs });
    r.update(RehearseMsg::Predicted(Vec::new()), Some(entry));
    r.update(RehearseMsg::FencingOn, Some(entry));
    assert!(matches!(r.phase(), Phase::Reveal { side: Side::On, .. }));
    r.update(RehearseMsg::PushBacks, Some(entry));
    for index in 0..entry.pushbacks.len() {
        assert_eq!(
            r.phase(),
            &Phase::PushBack {
                index,
                shown: false
            }
        );
        r.update(RehearseMsg::ShowAnswer, Some(entry));
        assert_eq!(r.phase(), &Phase::PushBack { index, shown: true });
        r.update(RehearseMsg::Next { now_ms }, Some(entry));
    }
    entry
}

#[test]
fn the_walk_starts_at_the_headline_and_follows_what_its_push_backs_invite() {
    let mut r = Rehearsal::default();
    r.update(RehearseMsg::Walk { now_ms: 1000.0 }, None);
    assert_eq!(r.entry(), Some(HEADLINE.id));
    let entry = play_through(&mut r, 1000.0, 95_400.0);
    let invited = entry.pushbacks.iter().find_map(|p| p.shows).unwrap();
    assert_eq!(
        r.phase(),
        &Phase::Done {
            next: Some(invited)
        }
    );
    r.update(RehearseMsg::Next { now_ms: 5000.0 }, Some(entry));
    assert_eq!(r.entry(), Some(invited));
    assert_eq!(r.asked(), 2);
    // An entry whose invitations are all asked goes on in the deck's order.
    let mut seen = vec![HEADLINE.id, invited];
    for _ in 0..deck::TITLES.len() - 2 {
        let e = play_through(&mut r, 5000.0, 1000.0);
        let Phase::Done { next: Some(next) } = *r.phase() else {
            panic!("the walk ended early at {}", e.id)
        };
        assert!(!seen.contains(&next), "{next} asked twice");
        seen.push(next);
        r.update(RehearseMsg::Next { now_ms: 5000.0 }, Some(e));
    }
    let last = play_through(&mut r, 5000.0, 1000.0);
    assert_eq!(
        r.phase(),
        &Phase::Done { next: None },
        "every entry asked once"
    );
    r.update(RehearseMsg::Next { now_ms: 0.0 }, Some(last));
    assert_eq!(r.phase(), &Phase::Start);
}

#[test]
fn picked_entries_are_asked_in_order_and_unknown_ids_are_left_out() {
    let mut r = Rehearsal::default();
    let ids = ["toctou", "no-such-entry", "renewal"]
        .map(str::to_owned)
        .to_vec();
    r.update(RehearseMsg::Entries { ids, now_ms: 0.0 }, None);
    assert_eq!(r.entry(), Some("toctou"));
    let e = play_through(&mut r, 0.0, 0.0);
    assert_eq!(
        r.phase(),
        &Phase::Done {
            next: Some("renewal")
        }
    );
    r.update(RehearseMsg::Next { now_ms: 7.0 }, Some(e));
    assert_eq!(r.entry(), Some("renewal"));
    play_through(&mut r, 7.0, 0.0);
    assert_eq!(r.phase(), &Phase::Done { next: None });
    r.update(RehearseMsg::Stop, None);
    assert_eq!(r, Rehearsal::default());
}

#[test]
fn messages_out_of_turn_change_nothing() {
    let mut r = Rehearsal::default();
    for m in [
        RehearseMsg::Answered { now_ms: 1.0 },
        RehearseMsg::Predicted(Vec::new()),
        RehearseMsg::FencingOn,
        RehearseMsg::PushBacks,
        RehearseMsg::ShowAnswer,
        RehearseMsg::Next { now_ms: 1.0 },
    ] {
        r.update(m, Some(&HEADLINE));
        assert_eq!(r, Rehearsal::default());
    }
}

#[test]
fn progress_keeps_the_last_try_of_each_entry_and_reads_back() {
    let (off, on) = headline();
    let truth = true_prediction(&off, &on);
    let wrong = score(
        &off,
        &on,
        &Prediction {
            refused: Vec::new(),
            ..truth.clone()
        },
    );
    let right = score(&off, &on, &truth);
    let mut p = Progress::default();
    p.record("toctou", &right, 150);
    p.record("gc-pause", &wrong, 95);
    assert_eq!(p.wrong(), ["gc-pause"]);
    assert_eq!(p.records()[0].id, "gc-pause", "in the deck's order");
    let text = p.encode();
    assert_eq!(text, "gc-pause 1 95 refused\ntoctou 1 150 \n");
    assert_eq!(Progress::decode(&text), p);
    p.record("gc-pause", &right, 80);
    assert_eq!(p.of("gc-pause").unwrap().tries, 2);
    assert!(p.wrong().is_empty(), "the last try counts");
}

#[test]
fn progress_text_edited_by_hand_is_read_for_what_still_holds() {
    let p = Progress::decode("gc-pause 2 61 off,bogus\nnot-an-entry 1 3 on\ntoctou x 1\n\nrenewal 1 9999999999999 on\nrenewal 1 40 on,refused");
    assert_eq!(p.records().len(), 2);
    assert_eq!(p.of("gc-pause").unwrap().wrong, ["off"]);
    assert_eq!(p.of("renewal").unwrap().wrong, ["on", "refused"]);
    assert_eq!(Progress::decode(""), Progress::default());
    assert_eq!(clock(65), "1:05");
    assert_eq!(clock(ANSWER_SECS), "2:00");
}

#[test]
fn the_sheet_says_how_each_run_ends_and_draws_its_writes() {
    let e = sheet_entry(&HEADLINE);
    let (off, on) = headline();
    assert_eq!(e.number, 1);
    assert_eq!(e.question, HEADLINE.question);
    assert!(e.answer[0].starts_with(&format!("Fencing off → {}: ", story::final_value(&off))));
    assert!(e.answer[1].starts_with(&format!(
        "Fencing on (strict) → {}: ",
        story::final_value(&on)
    )));
    assert!(e.answer[1].contains(&story::outcome(&on)));
    let markup = sheet_markup(&[e]);
    for p in HEADLINE.pushbacks {
        assert!(markup.contains(&crate::view::timeline::esc(p.source)));
    }
    let f = figure(&on);
    let refused = on
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::WriteApplied { result: Err(_), .. }));
    assert_eq!(f.matches('✗').count(), refused.count());
    assert_eq!(f.matches('✓').count(), on.summary.accepted_writes);
    assert_eq!(f.matches("<title>pause</title>").count(), 1, "A's GC pause");
    assert!(
        !f.contains("fill=\"red") && !f.contains("var(--"),
        "black on white only"
    );
}

#[test]
fn the_question_screen_shows_the_setup_without_the_invitation_to_step() {
    for entry in deck::DECK {
        let t = run(&(entry.build)());
        let s = setup(&t);
        assert!(
            story::Story::of(&t).narration(0).starts_with(&s),
            "{}",
            entry.id
        );
        assert!(
            !s.contains("Press →") && s.ends_with('.'),
            "{}: {s}",
            entry.id
        );
    }
}
