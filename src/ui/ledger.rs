//! The storage side (balance, fence, write log at the current step) and the side-by-side
//! "fencing off → 80 / fencing on → 90" from two core runs. Both are display-only, so the
//! markup comes from [`crate::panels`].

use leptos::prelude::*;

use crate::core::{run, FencingPolicy, Scenario};
use crate::lab::Lab;
use crate::panels;

#[component]
pub fn LedgerPanel(lab: RwSignal<Lab>) -> impl IntoView {
    let html = Memo::new(move |_| lab.with(|l| panels::ledger(&l.trace, l.step)));
    view! { <section class="ledger-panel" aria-label="Storage" inner_html=move || html.get()></section> }
}

/// Both policies side by side, each a real run of the same scenario (rerun only when the
/// scenario changes, not on every step).
#[component]
pub fn Compare(scenario: Memo<Scenario>) -> impl IntoView {
    let html = Memo::new(move |_| {
        scenario.with(|sc| {
            let off = run(&sc.clone().with_policy(FencingPolicy::Off));
            let on = run(&sc.clone().with_policy(panels::on_policy(sc.policy)));
            panels::compare(&off, &on)
        })
    });
    view! {
        <section class="compare" aria-label="Outcome with and without a fence check" inner_html=move || html.get()></section>
    }
}
