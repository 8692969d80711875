//! The README's figures are checked against the code: the deck and controls tables are the
//! generated ones, and the explorer figures are what the explorer counts.

use fencing_lab::core::deck;
use fencing_lab::core::explore::{explore, ExploreSpec};
use fencing_lab::core::Scenario;

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).expect("README.md")
}

/// The text between `<!-- explore:KEY -->` and the next `<!-- /explore -->`.
fn figure(readme: &str, key: &str) -> String {
    let open = format!("<!-- explore:{key} -->");
    let start = readme
        .find(&open)
        .unwrap_or_else(|| panic!("README has no {open}"))
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
fn readme_deck_table_is_the_generated_one() {
    let readme = readme();
    let start = readme
        .find("<!-- deck-table:start -->\n")
        .expect("start marker")
        + "<!-- deck-table:start -->\n".len();
    let end = readme.find("<!-- deck-table:end -->").expect("end marker");
    assert_eq!(
        &readme[start..end],
        deck::table(),
        "README's deck table is stale: run `bash scripts/deck-table.sh`"
    );
}

#[test]
fn readme_explorer_figures_are_the_explorers() {
    let readme = readme();
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
