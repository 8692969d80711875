//! The schedule explorer panel: runs the core's [`Explorer`] in small time-boxed chunks
//! (yielding to the browser between them) and lets the user load a violating schedule.

use std::time::Duration;

use leptos::prelude::*;

use super::markup::markup;
use super::{now_ms, Send};
use crate::core::explore::{ExploreSpec, Explorer, PolicyStats};
use crate::core::{FencingPolicy, Scenario};
use crate::lab::Msg;
use crate::panels;
use crate::timeline::esc;
use wasm_bindgen::JsCast;

/// Milliseconds of work per chunk before yielding, so a frame is never blocked for long.
const CHUNK_MS: f64 = 12.0;

/// The actor worth exploring: the first with a pause, else the first whose packets are delayed.
fn subject(sc: &Scenario) -> usize {
    sc.actors
        .iter()
        .position(|a| !a.pauses.is_empty())
        .or_else(|| sc.actors.iter().position(|a| a.network_delay > 0))
        .unwrap_or(0)
}

/// The finest grid (of a few) that keeps the run small enough to finish in a moment.
fn plan(sc: &Scenario) -> Result<Explorer, String> {
    let actor = subject(sc);
    let mut last = String::from("nothing to explore");
    for parts in [100, 50, 25, 10, 5] {
        let grid = sc.horizon.div_ceil(parts).max(1);
        match Explorer::new(sc, ExploreSpec::all_policies(actor, grid)) {
            Ok(e) if e.total() <= 60_000 => return Ok(e),
            Ok(e) => last = format!("{} schedules is too many", e.total()),
            Err(e) => last = e,
        }
    }
    Err(last)
}

#[derive(Clone, PartialEq)]
struct Progress {
    done: usize,
    total: usize,
    stats: Vec<PolicyStats>,
    ms: f64,
}

#[component]
pub fn ExplorerPanel(scenario: Memo<Scenario>, send: Send) -> impl IntoView {
    let runner = StoredValue::new_local(None::<Explorer>);
    let base = StoredValue::new_local(None::<Scenario>);
    let progress = RwSignal::new(None::<Progress>);
    let heading = RwSignal::new(String::new());
    let failed = RwSignal::new(None::<String>);

    // One chunk, then yield to the browser with a zero-delay timeout.
    fn pump(
        runner: StoredValue<Option<Explorer>, LocalStorage>,
        progress: RwSignal<Option<Progress>>,
        started: f64,
    ) {
        let finished = runner.try_update_value(|r| {
            let Some(r) = r.as_mut() else { return true };
            let t0 = now_ms();
            while !r.is_finished() && now_ms() - t0 < CHUNK_MS {
                r.step(64);
            }
            progress.set(Some(Progress {
                done: r.done(),
                total: r.total(),
                stats: r.stats().to_vec(),
                ms: now_ms() - started,
            }));
            r.is_finished()
        });
        if finished == Some(false) {
            set_timeout(move || pump(runner, progress, started), Duration::ZERO);
        }
    }

    let start = move || {
        let sc = scenario.get_untracked();
        match plan(&sc) {
            Ok(explorer) => {
                let who = &sc.actors[explorer.spec().actor].name;
                let delays = if sc.actors[explorer.spec().actor].network_delay > 0 {
                    " and every delivery delay"
                } else {
                    ""
                };
                heading.set(format!(
                    "Every placement of {who}'s pause{delays} on a {} ms grid, under each policy: {} schedules.",
                    explorer.spec().grid,
                    explorer.total()
                ));
                failed.set(None);
                base.set_value(Some(sc));
                runner.set_value(Some(explorer));
                pump(runner, progress, now_ms());
            }
            Err(e) => failed.set(Some(format!("Cannot explore this scenario: {e}."))),
        }
    };
    // A new scenario gets a fresh exploration. The key ignores what the explorer itself
    // varies (the subject's pause, the policy), so loading a counterexample keeps the table.
    let key = Memo::new(move |_| {
        let mut sc = scenario.get();
        sc.policy = FencingPolicy::Strict;
        let who = subject(&sc);
        sc.actors[who].pauses.clear();
        sc
    });
    Effect::new(move |_| {
        key.track();
        start();
    });
    on_cleanup(move || runner.set_value(None));

    // One click handler for every counterexample button (`data-load="<row>:<example>"`).
    let on_click = move |e: leptos::ev::MouseEvent| {
        let target = e
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok());
        let Some(spec) = target
            .and_then(|el| el.closest("[data-load]").ok().flatten())
            .and_then(|b| b.get_attribute("data-load"))
        else {
            return;
        };
        let Some((row, i)) = spec
            .split_once(':')
            .and_then(|(r, i)| Some((r.parse::<usize>().ok()?, i.parse::<usize>().ok()?)))
        else {
            return;
        };
        let schedule = progress.with_untracked(|p| {
            p.as_ref()
                .and_then(|p| p.stats.get(row))
                .and_then(|st| st.examples.get(i))
                .map(|ex| ex.schedule)
        });
        if let (Some(s), Some(b)) = (schedule, base.get_value()) {
            send.msg(Msg::Load(s.apply(&b)));
            send.msg(Msg::Seek(usize::MAX));
        }
    };
    let html = Memo::new(move |_| {
        let mut out = format!(
            r#"<p class="fork-line"><b>Schedule explorer: </b>{}</p>"#,
            esc(&heading.get())
        );
        if let Some(e) = failed.get() {
            out.push_str(&format!(r#"<p class="warn">{}</p>"#, esc(&e)));
        }
        let p = progress.get();
        let (done, total) = p.as_ref().map_or((0, 1), |p| (p.done, p.total));
        out.push_str(&format!(
            r#"<progress data-testid="explore-progress" max="{total}" value="{done}"></progress>"#
        ));
        if let Some(p) = &p {
            out.push_str(&format!(
                r#"<span class="clock" data-testid="explore-status">{} / {} schedules · {} ms</span>"#,
                p.done,
                p.total,
                p.ms.round() as u64
            ));
        }
        out.push_str(r#"<table class="log"><thead><tr><th>fencing</th><th>explored</th><th title="accepted although a newer token had already been granted">late write accepted</th><th>job ran twice</th><th>out of token order</th><th>two believe they hold it</th><th>counterexamples</th></tr></thead><tbody>"#);
        if let Some(p) = &p {
            out.push_str(&panels::explorer_rows(&p.stats));
        }
        out.push_str("</tbody></table>");
        let footnote = p
            .as_ref()
            .filter(|p| p.done == p.total)
            .map(|p| panels::explorer_footnote(&p.stats))
            .unwrap_or_default();
        out.push_str(&format!(
            r#"<p class="fork-line" data-testid="explore-footnote">{}</p>"#,
            esc(&footnote)
        ));
        out
    });
    view! {
        <section class="explorer" data-testid="explorer" aria-label="Schedule explorer" on:click=on_click use:markup=html></section>
    }
}
