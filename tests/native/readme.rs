//! The README and docs/deck.md are checked against the code: the keys and deck tables are
//! the generated ones, the README's list of questions is the deck's, and the explorer
//! figures are what the explorer counts. The README stays a one-minute read.

use fencing_lab::core::deck;
use fencing_lab::core::explore::{explore, ExploreSpec};
use fencing_lab::core::Scenario;

/// A file of the repository, by its path from the root.
fn doc(path: &str) -> String {
    let full = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn readme() -> String {
    doc("README.md")
}

/// The deck's page: its table, its explorer figures.
fn deck_page() -> String {
    doc("docs/deck.md")
}

/// The text between `<!-- explore:KEY -->` and the next `<!-- /explore -->`.
fn figure(readme: &str, key: &str) -> String {
    let open = format!("<!-- explore:{key} -->");
    let start = readme
        .find(&open)
        .unwrap_or_else(|| panic!("docs/deck.md has no {open}"))
        + open.len();
    let len = readme[start..]
        .find("<!-- /explore -->")
        .expect("closing marker");
    readme[start..start + len].replace(',', "")
}

#[test]
fn readme_controls_table_is_the_generated_one() {
    let readme = readme();
    let start = readme
        .find("<!-- controls-table:start -->\n")
        .expect("start marker")
        + "<!-- controls-table:start -->\n".len();
    let end = readme
        .find("<!-- controls-table:end -->")
        .expect("end marker");
    assert_eq!(
        &readme[start..end],
        fencing_lab::lab::controls_table(),
        "README's controls table is stale: run `bash scripts/deck-table.sh`"
    );
}

#[test]
fn deck_page_table_is_the_generated_one() {
    let readme = deck_page();
    let start = readme
        .find("<!-- deck-table:start -->\n")
        .expect("start marker")
        + "<!-- deck-table:start -->\n".len();
    let end = readme.find("<!-- deck-table:end -->").expect("end marker");
    assert_eq!(
        &readme[start..end],
        deck::table(),
        "docs/deck.md's deck table is stale: run `bash scripts/deck-table.sh`"
    );
}

#[test]
fn deck_page_explorer_figures_are_the_explorers() {
    let readme = deck_page();
    let stats = explore(&Scenario::gc_pause(), ExploreSpec::all_policies(0, 1)).expect("spec");
    let total: usize = stats.iter().map(|s| s.explored).sum();
    assert_eq!(figure(&readme, "total"), total.to_string());
    for s in &stats {
        let code = s.policy.code();
        assert_eq!(
            figure(&readme, &format!("{code}.late")),
            s.late_writes.to_string(),
            "{code}.late"
        );
        assert_eq!(
            s.double_runs, s.late_writes,
            "{code}: every superseded write ran the job twice"
        );
    }
    let off = &stats[0];
    assert_eq!(figure(&readme, "off.order"), off.out_of_order.to_string());
    assert_eq!(
        figure(&readme, "strict.two"),
        stats[1].two_believers.to_string()
    );
    assert!(
        stats[1].late_writes > 0,
        "strict fencing is not a tautology here"
    );
    assert!(stats[1..].iter().all(|s| s.out_of_order == 0));
}

/// The README lists the deck's questions in the deck's order, each linked to its entry.
#[test]
fn readme_lists_every_question_of_the_deck() {
    let readme = readme();
    let listed: Vec<&str> = readme
        .lines()
        .filter(|l| l.contains("](http://127.0.0.1:8080/#s="))
        .collect();
    let want: Vec<String> = deck::DECK
        .iter()
        .enumerate()
        .map(|(i, e)| {
            format!(
                "{}. [{}](http://127.0.0.1:8080/#s={})",
                i + 1,
                e.question,
                e.id
            )
        })
        .collect();
    assert_eq!(listed, want);
}

/// A newcomer reads the README in a minute: at most 200 lines, with no build internals,
/// and every page it links to is there.
#[test]
fn readme_is_a_one_minute_read() {
    let readme = readme();
    let lines = readme.lines().count();
    assert!(lines <= 200, "README.md has {lines} lines");
    for internal in ["wasm-split", "binaryen", "wasm-opt", "post-build", "terser"] {
        assert!(!readme.contains(internal), "README.md speaks of {internal}");
    }
    let mut linked = 0;
    for part in readme.split("](").skip(1) {
        let target = &part[..part.find(')').expect("a link's end")];
        if target.starts_with("http") {
            continue;
        }
        let path = target.split('#').next().unwrap_or(target);
        assert!(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(path)
                .exists(),
            "README.md links to {target}, which is not there"
        );
        linked += 1;
    }
    assert!(
        linked >= 6,
        "the README links its docs pages ({linked} links)"
    );
    for page in ["deck", "replay", "design", "build", "testing", "benchmarks"] {
        assert!(
            readme.contains(&format!("](docs/{page}.md)")),
            "docs/{page}.md"
        );
    }
}
