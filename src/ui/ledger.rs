//! The storage side: balance, fence and the append-only write log at the current step,
//! and the side-by-side "fencing off → 80 / fencing on → 90" from two core runs.

use leptos::prelude::*;

use crate::core::{FencingPolicy, Trace};
use crate::lab::Lab;
use crate::timeline::esc;

fn token(f: Option<crate::core::Fence>) -> String {
    f.map_or_else(|| "—".to_owned(), |f| f.to_string())
}

#[component]
pub fn LedgerPanel(lab: RwSignal<Lab>) -> impl IntoView {
    let trace = Memo::new(move |_| lab.with(|l| l.trace.clone()));
    let step = Memo::new(move |_| lab.with(|l| l.step));
    let snap = Memo::new(move |_| trace.with(|t| t.snapshot_at(step.get()).clone()));
    let fencing = Memo::new(move |_| trace.with(|t| t.scenario.policy.checks_fence()));
    let fence_value = move || {
        let s = snap.get();
        if fencing.get() {
            token(s.last_fence)
        } else {
            token(s.last_write_fence)
        }
    };
    let fence_caption = move || {
        if fencing.get() {
            "last fence: highest token storage accepted"
        } else {
            "token of the last write — storage is not checking"
        }
    };
    let holder = move || match snap.get().holder {
        Some(l) => format!("{} (token {}, until t={})", l.owner, l.fence, l.expires_at),
        None => "nobody".to_owned(),
    };
    let believers = move || {
        let b = snap.get().believers;
        match b.len() {
            0 => "nobody".to_owned(),
            _ => b.join(" and "),
        }
    };
    let split = move || snap.with(|s| s.believers.len() > 1);
    // The log is display-only, so it is written as markup: less wasm than a view per cell.
    let rows = move || {
        let s = step.get();
        trace.with(|t| {
            let mut html = String::new();
            for w in t.writes_until(s) {
                let (class, verdict) = match &w.result {
                    Ok(()) => ("accepted", "accepted"),
                    Err(e) => ("rejected", e.code()),
                };
                html.push_str(&format!(
                    r#"<tr data-testid="ledger-row" class="{class}"><td>{}</td><td>{}</td><td class="num">{}</td><td class="num">−{}</td><td class="verdict">{verdict}</td><td class="num">{}</td></tr>"#,
                    t.time_label(w.at),
                    esc(&w.request.writer),
                    token(w.request.fence),
                    w.request.amount,
                    w.balance_after
                ));
            }
            html
        })
    };
    view! {
        <section class="ledger-panel" aria-label="Storage">
            <div class="metrics">
                <div class="metric">
                    <span class="k">"Balance"</span>
                    <span class="v" data-testid="balance">{move || snap.get().balance.to_string()}</span>
                </div>
                <div class="metric">
                    <span class="k">"Last fence"</span>
                    <span class="v" data-testid="last-fence">{fence_value}</span>
                    <span class="cap">{fence_caption}</span>
                </div>
                <div class="metric small">
                    <span class="k">"Lock server says"</span>
                    <span data-testid="holder">{holder}</span>
                    <span class="k">"Believe they hold it"</span>
                    <span data-testid="believers" class:warn=split>{believers}</span>
                </div>
            </div>
            <table class="log" data-testid="ledger">
                <caption>"Write log (append-only; every attempt)"</caption>
                <thead>
                    <tr><th>"time"</th><th>"writer"</th><th>"token"</th><th>"amount"</th><th>"result"</th><th>"balance"</th></tr>
                </thead>
                <tbody inner_html=rows></tbody>
            </table>
        </section>
    }
}

fn outcome(t: &Trace) -> String {
    let s = &t.summary;
    if s.stale_writes_accepted > 0 {
        let tok = s
            .last_write_fence
            .map_or_else(String::new, |f| format!(" (last write token {f})"));
        format!("a write from an expired lease landed{tok}: lost update")
    } else if let Some(w) = t.writes.iter().find(|w| !w.accepted()) {
        let code = w.result.as_ref().err().map_or("", |e| e.code());
        let more = match s.rejected_writes {
            1 => String::new(),
            n => format!(" (+{} more)", n - 1),
        };
        format!(
            "{}'s write with token {} rejected: {code}{more}; last fence {}",
            w.request.writer,
            token(w.request.fence),
            token(s.last_fence)
        )
    } else if s.conflict() {
        "two clients overlapped, but no stale write reached storage".to_owned()
    } else {
        "no conflict: the leases never overlapped".to_owned()
    }
}

/// Both policies side by side, each a real run of the same scenario.
#[component]
pub fn Compare(lab: RwSignal<Lab>) -> impl IntoView {
    let runs = Memo::new(move |_| {
        lab.with(|l| {
            let on = match l.scenario().policy {
                FencingPolicy::SameEpoch => FencingPolicy::SameEpoch,
                _ => FencingPolicy::Strict,
            };
            let off = l.compare(FencingPolicy::Off);
            let on = l.compare(on);
            (
                off.summary.final_balance,
                outcome(&off),
                on.summary.final_balance,
                outcome(&on),
                on.scenario.policy.short(),
            )
        })
    });
    view! {
        <section class="compare" aria-label="Outcome with and without a fence check">
            <div class="side off" data-testid="summary-off">
                <span class="k">"fencing off →"</span>
                <span class="v">{move || runs.get().0.to_string()}</span>
                <span class="cap">{move || runs.get().1}</span>
            </div>
            <div class="side on" data-testid="summary-on">
                <span class="k">{move || format!("fencing on ({}) →", runs.get().4)}</span>
                <span class="v">{move || runs.get().2.to_string()}</span>
                <span class="cap">{move || runs.get().3}</span>
            </div>
        </section>
    }
}
