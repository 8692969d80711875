//! The storage side (balance, fence, write log at the current step) and the side-by-side
//! "fencing off → 80 / fencing on → 90" from two core runs. Both are display-only, so the
//! markup comes from [`crate::panels`] and reaches the page as [`super::markup`] edits.

use std::sync::Arc;

use leptos::prelude::*;

use super::markup::markup;
use crate::core::{run, FencingPolicy, Trace};
use crate::lab::Lab;
use crate::panels;

#[component]
pub fn LedgerPanel(lab: RwSignal<Lab>) -> impl IntoView {
    let html = Memo::new(move |_| lab.with(|l| panels::ledger(&l.trace, l.step)));
    view! { <section class="ledger-panel" aria-label="Storage" use:markup=html></section> }
}

/// Both policies side by side, each a real run of the same scenario (rerun only when the
/// scenario changes, not on every step). The side whose policy is the one on screen is the
/// run on screen, so only the other side is run again.
#[component]
pub fn Compare(trace: Memo<Arc<Trace>>) -> impl IntoView {
    let html = Memo::new(move |_| {
        trace.with(|t| {
            let side = |policy: FencingPolicy| {
                if t.scenario.policy == policy {
                    Arc::clone(t)
                } else {
                    Arc::new(run(&t.scenario.clone().with_policy(policy)))
                }
            };
            let off = side(FencingPolicy::Off);
            let on = side(panels::on_policy(t.scenario.policy));
            panels::compare(&off, &on)
        })
    });
    view! {
        <section class="compare" aria-label="Outcome with and without a fence check" use:markup=html></section>
    }
}
