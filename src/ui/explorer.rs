//! The schedule explorer panel: runs the core's [`Explorer`] in small time-boxed chunks
//! (yielding to the browser between them) and lets the user load a violating schedule.

use std::time::Duration;

use leptos::prelude::*;

use super::Send;
use crate::core::explore::{ExploreSpec, Explorer, PolicyStats, Schedule};
use crate::core::{FencingPolicy, Scenario};
use crate::lab::{Lab, Msg};

/// Milliseconds of work per chunk before yielding, so a frame is never blocked for long.
const CHUNK_MS: f64 = 12.0;

fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

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
pub fn ExplorerPanel(lab: RwSignal<Lab>, send: Send) -> impl IntoView {
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
        let sc = lab.with_untracked(|l| l.scenario().clone());
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
        lab.with(|l| {
            let mut sc = l.scenario().clone();
            sc.policy = FencingPolicy::Strict;
            let who = subject(&sc);
            sc.actors[who].pauses.clear();
            sc
        })
    });
    Effect::new(move |_| {
        key.track();
        start();
    });
    on_cleanup(move || runner.set_value(None));

    let load = move |s: Schedule| {
        if let Some(b) = base.get_value() {
            send.msg(Msg::Load(s.apply(&b)));
            send.msg(Msg::Seek(usize::MAX));
        }
    };
    let rows = move || {
        progress.get().map(|p| {
            p.stats
                .into_iter()
                .map(|st| {
                    // Stale writes first: they are the counterexample worth loading.
                    let mut picked: Vec<_> = st.examples.iter().filter(|e| e.verdict.stale_write).take(3).collect();
                    if picked.is_empty() {
                        picked = st.examples.iter().take(3).collect();
                    }
                    let examples = picked
                        .into_iter()
                        .enumerate()
                        .map(|(i, ex)| {
                            let s = ex.schedule;
                            let what = match s.pause {
                                Some(p) => format!("pause {}–{}", p.start, p.end()),
                                None => "no pause".to_owned(),
                            };
                            let delay = s.network_delay.map(|d| format!(", delay {d}")).unwrap_or_default();
                            let kind = if ex.verdict.stale_write { "stale" } else { "2 believers" };
                            view! {
                                <button class="ghost small" data-testid=format!("load-{}-{i}", st.policy.code()) on:click=move |_| load(s)>
                                    {format!("{kind}: {what}{delay}")}
                                </button>
                            }
                        })
                        .collect_view();
                    let stale_class = if st.stale_writes > 0 { "bad" } else { "good" };
                    view! {
                        <tr data-testid=format!("explore-{}", st.policy.code())>
                            <td><b>{st.policy.option()}</b></td>
                            <td class="num">{st.explored.to_string()}</td>
                            <td class=format!("num {stale_class}") data-testid="stale">{st.stale_writes.to_string()}</td>
                            <td class="num" data-testid="two">{st.two_believers.to_string()}</td>
                            <td>{examples}</td>
                        </tr>
                    }
                })
                .collect_view()
        })
    };
    let footnote = move || {
        progress.get().and_then(|p| {
            let strict = p.stats.iter().find(|s| s.policy == FencingPolicy::Strict)?;
            (p.done == p.total).then(|| {
                if strict.stale_writes == 0 && strict.two_believers > 0 {
                    format!(
                        "Strict fencing accepted no stale write in any schedule, yet in {} of them two clients still believed they held the lease: the token protects the storage, not the belief.",
                        strict.two_believers
                    )
                } else if strict.stale_writes == 0 {
                    "Strict fencing accepted no stale write in any schedule.".to_owned()
                } else {
                    format!("Strict fencing let {} schedules through — look at them.", strict.stale_writes)
                }
            })
        })
    };
    view! {
        <section class="explorer" data-testid="explorer" aria-label="Schedule explorer">
            <p class="fork-line"><b>"Schedule explorer: "</b>{move || heading.get()}</p>
            {move || failed.get().map(|e| view! { <p class="warn">{e}</p> })}
            <progress
                data-testid="explore-progress"
                max=move || progress.get().map_or(1, |p| p.total).to_string()
                value=move || progress.get().map_or(0, |p| p.done).to_string()
            ></progress>
            <span class="clock" data-testid="explore-status">
                {move || progress.get().map(|p| format!("{} / {} schedules · {} ms", p.done, p.total, p.ms.round() as u64))}
            </span>
            <table class="log">
                <thead>
                    <tr><th>"fencing"</th><th>"explored"</th><th>"stale write accepted"</th><th>"two believe they hold it"</th><th>"counterexamples"</th></tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
            <p class="fork-line" data-testid="explore-footnote">{footnote}</p>
        </section>
    }
}
