//! The storage side (balance, fence, write log at the current step) and the side-by-side
//! "fencing off → 80 / fencing on → 90" from two core runs. Both are display-only, so the
//! markup comes from [`crate::panels`].

use leptos::prelude::*;

use crate::core::FencingPolicy;
use crate::lab::Lab;
use crate::panels;

#[component]
pub fn LedgerPanel(lab: RwSignal<Lab>) -> impl IntoView {
    let html = Memo::new(move |_| lab.with(|l| panels::ledger(&l.trace, l.step)));
    view! { <section class="ledger-panel" aria-label="Storage" inner_html=move || html.get()></section> }
}

/// Both policies side by side, each a real run of the same scenario.
#[component]
pub fn Compare(lab: RwSignal<Lab>) -> impl IntoView {
    let html = Memo::new(move |_| {
        lab.with(|l| {
            let off = l.compare(FencingPolicy::Off);
            let on = l.compare(panels::on_policy(l.scenario().policy));
            panels::compare(&off, &on)
        })
    });
    view! {
        <section class="compare" aria-label="Outcome with and without a fence check" inner_html=move || html.get()></section>
    }
}
