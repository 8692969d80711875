//! "If they push back" (issue 40): every deck entry carries one to three counter-questions,
//! each answered, sourced, and linked to the entry that shows the answer where one does.

use std::collections::HashMap;

use fencing_lab::core::deck::{self, DECK};
use fencing_lab::view::panels::{notes_panel_markup, pushbacks_markup};

#[test]
fn every_entry_has_one_to_three_answered_and_sourced_pushbacks() {
    for e in DECK {
        let n = e.pushbacks.len();
        assert!((1..=3).contains(&n), "{}: {n} push-backs", e.id);
        for p in e.pushbacks {
            for (what, text) in [
                ("question", p.question),
                ("answer", p.answer),
                ("source", p.source),
            ] {
                assert!(!text.trim().is_empty(), "{}: empty {what}", e.id);
            }
            // Two or three sentences: short enough to say, long enough to answer.
            let sentences = p.answer.matches(['.', ':', ';']).count();
            assert!(
                sentences >= 1 && p.answer.split_whitespace().count() <= 70,
                "{}: {}",
                e.id,
                p.answer
            );
        }
    }
}

#[test]
fn every_linked_entry_exists_and_is_another_entry() {
    for e in DECK {
        for p in e.pushbacks {
            if let Some(id) = p.shows {
                assert!(
                    deck::find(id).is_some(),
                    "{}: links to {id}, not in the deck",
                    e.id
                );
                assert_ne!(id, e.id, "{}: links to itself", e.id);
            }
        }
    }
}

/// No answer repeats another's words: no two answers share a sentence of six words or more.
#[test]
fn no_answer_repeats_another_verbatim() {
    let mut seen: HashMap<String, (&str, &str)> = HashMap::new();
    for e in DECK {
        for p in e.pushbacks {
            for s in p.answer.split(['.', ';', ':']).map(str::trim) {
                if s.split_whitespace().count() < 6 {
                    continue;
                }
                if let Some((id, q)) = seen.insert(s.to_lowercase(), (e.id, p.question)) {
                    panic!("{} ({}) repeats {id} ({q}): {s}", e.id, p.question);
                }
            }
        }
    }
}

/// The issue's list of counter-questions is covered, each by the entry it belongs to.
#[test]
fn the_issues_pushbacks_are_there() {
    let asked = |id: &str, words: &str| {
        deck::find(id)
            .unwrap()
            .pushbacks
            .iter()
            .any(|p| p.question.contains(words))
    };
    for (id, words) in [
        ("clock-jump", "Slew the clocks"),
        ("uuid-token", "compare-and-set"),
        ("redis-failover", "WAIT"),
        ("redis-restart", "appendfsync"),
        ("renewal-herd", "One lease per client"),
        ("separate-counter", "INCR before SET"),
        ("handoff-barrier", "Key the publish on job 7"),
        ("claim-row", "pruned after 24 h"),
        ("row-lock", "retries the UPDATE on a new connection"),
        ("delayed-packet", "deadline in the request"),
        ("gc-pause", "TTL longer"),
    ] {
        assert!(asked(id, words), "{id}: no push-back about {words:?}");
    }
}

/// In the Notes panel: a heading (an h2: the page has only its h1 above), the question bold, the source small, the link an <a>.
#[test]
fn the_notes_panel_shows_them_as_text_with_links() {
    let e = deck::find("gc-pause").unwrap();
    let html = pushbacks_markup(e.pushbacks);
    assert!(
        html.starts_with("<div class=\"pushbacks\" data-testid=\"pushbacks\"><h2>If they push back</h2><ul><li><b>"),
        "{html}"
    );
    // Under the notes, in the same panel.
    let panel = notes_panel_markup(&["a note".to_owned()], e.pushbacks);
    assert!(
        panel.starts_with("<ul><li>a note</li></ul><div class=\"pushbacks\""),
        "{panel}"
    );
    assert_eq!(html.matches("<li>").count(), e.pushbacks.len());
    assert!(
        html.contains("<small>Source: Kleppmann 2016; seed 000</small>"),
        "{html}"
    );
    assert!(
        html.contains("<a href=\"#s=delayed-packet\">see delayed-packet</a>"),
        "{html}"
    );
    // Answers are text, escaped: a quote in an answer cannot break the markup.
    let raft = pushbacks_markup(deck::find("raft-partition").unwrap().pushbacks);
    assert!(raft.contains("&quot;etcdserver: no leader&quot;"), "{raft}");
    assert_eq!(pushbacks_markup(&[]), "");
}

/// Review 3: cross-region's lock is one Redis, so "who can acquire when a region is cut
/// off" is answered for that lock first; a majority is a consensus service's rule.
#[test]
fn who_can_acquire_under_a_cut_is_answered_for_the_entrys_own_lock() {
    let e = deck::find("cross-region").unwrap();
    let p = e
        .pushbacks
        .iter()
        .find(|p| p.question.contains("cut off"))
        .unwrap();
    assert!(p.answer.contains("one Redis"), "{}", p.answer);
    assert!(!p
        .answer
        .starts_with("Only the side that can reach a majority"));
}

/// Review 3: efficiency's likeliest next question is the input changing between the runs,
/// which turns the wasted work into a lost update.
#[test]
fn efficiency_is_asked_what_a_changed_input_does() {
    let e = deck::find("efficiency").unwrap();
    let p = e
        .pushbacks
        .iter()
        .find(|p| p.question.contains("input changed"));
    let p = p.expect("efficiency asks about a changed input");
    assert!(
        p.answer.contains("lost update") && p.answer.contains("fence"),
        "{}",
        p.answer
    );
}
