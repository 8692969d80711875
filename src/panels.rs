//! The display-only panels as HTML markup, computed from traces: the story line, the
//! storage panel, the off-versus-on comparison, the fork and the explorer's table.
//!
//! Pure and native like [`crate::timeline`], so they are unit-tested without a browser. The
//! Leptos shell writes only what changed between two renderings ([`crate::markup::diff`]),
//! which costs far less wasm than a view per element. Interactive controls stay Leptos views.

use std::fmt::Write;

use crate::core::explore::PolicyStats;
use crate::core::story;
use crate::core::{Fence, FencingPolicy, Trace};
use crate::timeline::{esc, render, Geometry};

fn token(f: Option<Fence>) -> String {
    f.map_or_else(|| "—".to_owned(), |f| f.to_string())
}

/// The question being answered, the current narration and what to say out loud.
pub fn story(t: &Trace, step: usize, question: &str) -> String {
    let question = if question.is_empty() {
        String::new()
    } else {
        format!(
            r#"<p class="question" data-testid="question">{}</p>"#,
            esc(question)
        )
    };
    format!(
        r#"{question}<p class="narration" data-testid="narration">{}</p><p class="say"><span class="say-k">Say: </span><span data-testid="talking-point">{}</span></p>"#,
        esc(&story::narration(t, step)),
        esc(&story::say(t, step))
    )
}

/// Balance, fence, who holds and who believes, and the write log so far.
pub fn ledger(t: &Trace, step: usize) -> String {
    let s = t.snapshot_at(step);
    let fencing = t.scenario.policy.checks_fence();
    let (fence, caption) = if fencing {
        (
            token(s.last_fence),
            "last fence: highest token storage accepted",
        )
    } else {
        (
            token(s.last_write_fence),
            "token of the last write — storage is not checking",
        )
    };
    let holder = match &s.holder {
        // With a separate counter a lease's number is not its token: say only until when.
        Some(l) if t.scenario.token_source == crate::core::TokenSource::SeparateCounter => format!(
            "{} (until {})",
            esc(&l.owner),
            story::time_label(&t.scenario, l.expires_at)
        ),
        Some(l) => format!(
            "{} (token {}, until {})",
            esc(&l.owner),
            l.fence,
            story::time_label(&t.scenario, l.expires_at)
        ),
        None => "nobody".to_owned(),
    };
    let believers = match s.believers.len() {
        0 => "nobody".to_owned(),
        _ => esc(&s.believers.join(" and ")),
    };
    let warn = if s.believers.len() > 1 {
        r#" class="warn""#
    } else {
        ""
    };
    // A job that publishes has a result row, not a balance.
    let publishes = t.scenario.publishes();
    let (figure, change, after) = if publishes {
        ("Result row", "write", "row")
    } else {
        ("Balance", "amount", "balance")
    };
    let mut out = format!(
        r#"<div class="metrics"><div class="metric"><span class="k">{figure}</span><span class="v{}" data-testid="balance">{}</span></div><div class="metric"><span class="k">Last fence</span><span class="v" data-testid="last-fence">{fence}</span><span class="cap">{caption}</span></div><div class="metric small"><span class="k">Lock server says</span><span data-testid="holder">{holder}</span><span class="k">Believe they hold it</span><span data-testid="believers"{warn}>{believers}</span></div></div><table class="log" data-testid="ledger"><caption>Write log (append-only; every attempt)</caption><thead><tr><th>time</th><th>writer</th><th>token</th><th>{change}</th><th>result</th><th>{after}</th></tr></thead><tbody>"#,
        if publishes { " words" } else { "" },
        esc(&story::value(t, step))
    );
    let writes = t.writes_until(step);
    for (k, w) in writes.iter().enumerate() {
        let (class, verdict) = match &w.result {
            Ok(()) => ("accepted", "accepted"),
            Err(e) => ("rejected", e.code()),
        };
        let _ = write!(
            out,
            r#"<tr data-testid="ledger-row" class="{class}"><td>{}</td><td>{}</td><td class="num">{}</td><td class="num">{}</td><td class="verdict">{verdict}</td><td class="num">{}</td></tr>"#,
            story::time_label(&t.scenario, w.at),
            esc(&w.request.writer),
            token(w.request.fence),
            match &w.request.publish {
                Some(r) => esc(r),
                None => format!("−{}", w.request.amount),
            },
            if publishes {
                // The row after this attempt: the value of the last accepted publish so far.
                esc(row_after(&writes[..=k]))
            } else {
                w.balance_after.to_string()
            }
        );
    }
    out.push_str("</tbody></table>");
    out
}

/// The result row after the attempts `so_far`: the last accepted publish among them.
fn row_after(so_far: &[crate::core::WriteRecord]) -> &str {
    so_far
        .iter()
        .rev()
        .find(|x| x.accepted())
        .and_then(|x| x.request.publish.as_deref())
        .unwrap_or("—")
}

/// The policy to show as "fencing on" beside `current`.
pub fn on_policy(current: FencingPolicy) -> FencingPolicy {
    match current {
        FencingPolicy::SameEpoch => FencingPolicy::SameEpoch,
        _ => FencingPolicy::Strict,
    }
}

/// "fencing off → 80" beside "fencing on → 90", from two real runs.
pub fn compare(off: &Trace, on: &Trace) -> String {
    let words = if off.scenario.publishes() {
        " words"
    } else {
        ""
    };
    format!(
        r#"<div class="side off" data-testid="summary-off"><span class="k">fencing off →</span><span class="v{words}">{}</span><span class="cap">{}</span></div><div class="side on" data-testid="summary-on"><span class="k">fencing on ({}) →</span><span class="v{words}">{}</span><span class="cap">{}</span></div>"#,
        esc(&story::final_value(off)),
        esc(&story::outcome(off)),
        if story::counterfactual(on) {
            format!("{}, counterfactual", on.scenario.policy.short())
        } else {
            on.scenario.policy.short().to_owned()
        },
        esc(&story::final_value(on)),
        esc(&story::outcome(on))
    )
}

fn fork_line(t: &Trace) -> String {
    let s = &t.summary;
    esc(&format!(
        "{} · fencing {} · TTL {} → {} {}, {} accepted, {} rejected, {} late accepted",
        t.scenario.title,
        t.scenario.policy.short(),
        story::time_label(&t.scenario, t.scenario.lease_ttl),
        if t.scenario.publishes() {
            "result"
        } else {
            "balance"
        },
        story::final_value(t),
        s.accepted_writes,
        s.rejected_writes,
        s.late_writes_accepted
    ))
}

/// The run kept at fork time beside the edited one, with the original's timeline.
pub fn fork(original: &Trace, current: &Trace, step: usize) -> String {
    format!(
        r#"<p class="fork-line"><b>Original: </b><span data-testid="fork-original">{}</span></p><p class="fork-line"><b>Fork: </b><span data-testid="fork-current">{}</span></p><svg class="timeline original" role="img" aria-label="Original timeline" viewBox="{}">{}</svg>"#,
        fork_line(original),
        fork_line(current),
        Geometry::of(original).view_box(),
        render(original, step, true)
    )
}

/// The explorer's counts per policy, with up to three loadable counterexamples each
/// (buttons carry `data-load="<row>:<example>"` for the panel's one click handler).
///
/// Out-of-order writes are a finding only with fencing off: a fencing policy refuses a lower
/// token by its own rule, so its cell says so instead of showing a 0 as if it were measured.
pub fn explorer_rows(stats: &[PolicyStats]) -> String {
    let mut out = String::new();
    let cell = |n: usize, id: &str| {
        format!(
            r#"<td class="num {}" data-testid="{id}">{n}</td>"#,
            if n > 0 { "bad" } else { "good" }
        )
    };
    for (row, st) in stats.iter().enumerate() {
        let code = st.policy.code();
        let order = if st.policy.checks_fence() {
            r#"<td class="num na" data-testid="order" title="refused by the fencing rule">— by rule</td>"#.to_owned()
        } else {
            cell(st.out_of_order, "order")
        };
        let _ = write!(
            out,
            r#"<tr data-testid="explore-{code}"><td><b>{}</b></td><td class="num">{}</td>{}{}{order}<td class="num" data-testid="two">{}</td><td>"#,
            esc(st.policy.option()),
            st.explored,
            cell(st.late_writes, "late"),
            cell(st.double_runs, "twice"),
            st.two_believers
        );
        for (i, (index, ex)) in picked(st).into_iter().enumerate() {
            let s = ex.schedule;
            let what = match s.pause {
                Some(p) => format!("pause {}–{}", p.start, p.end()),
                None => "no pause".to_owned(),
            };
            let delay = s
                .network_delay
                .map(|d| format!(", delay {d}"))
                .unwrap_or_default();
            let v = ex.verdict;
            let kind = if v.double_run {
                "ran twice"
            } else if v.late_write {
                "late write"
            } else if v.out_of_order {
                "out of order"
            } else {
                "2 believers"
            };
            let _ = write!(
                out,
                r#"<button class="ghost small" data-testid="load-{code}-{i}" data-load="{row}:{index}">{kind}: {what}{delay}</button>"#
            );
        }
        out.push_str("</td></tr>");
    }
    out
}

/// Harmful schedules first: they are the counterexamples worth loading. Each comes with its
/// index in `st.examples`, which the load button carries.
fn picked(st: &PolicyStats) -> Vec<(usize, &crate::core::explore::Example)> {
    let harmful: Vec<_> = st
        .examples
        .iter()
        .enumerate()
        .filter(|(_, e)| e.verdict.is_harmful())
        .take(3)
        .collect();
    if harmful.is_empty() {
        st.examples.iter().enumerate().take(3).collect()
    } else {
        harmful
    }
}

/// What the explorer's counts mean, once it has finished.
pub fn explorer_footnote(stats: &[PolicyStats]) -> String {
    let Some(strict) = stats.iter().find(|s| s.policy == FencingPolicy::Strict) else {
        return String::new();
    };
    let mut out = if strict.late_writes == 0 {
        "Strict fencing accepted no write from a superseded lease in any schedule.".to_owned()
    } else {
        format!(
            "Strict fencing still accepted a write from a superseded lease in {} schedules (the job ran twice in {}): each time the late write reached storage before the newer token did. Fencing by highest token revokes an old holder only once storage has seen the new one; a handoff barrier closes that gap.",
            strict.late_writes, strict.double_runs
        )
    };
    if strict.two_believers > 0 {
        let _ = write!(
            out,
            " In {} schedules two clients believed at once that they held the lease: the token limits the harm at the storage, it does not stop the belief.",
            strict.two_believers
        );
    }
    out
}

/// The parameter fields a presenter may edit. Inputs carry `data-param` (and `data-actor`)
/// for the panel's one change handler; `base` (the deck entry as built) decides which
/// clients get a delay field.
pub fn params(sc: &crate::core::Scenario, base: Option<&crate::core::Scenario>) -> String {
    let field = |label: String, param: &str, actor: Option<usize>, min: u8, value: u64| {
        let actor = actor
            .map(|a| format!(r#" data-actor="{a}""#))
            .unwrap_or_default();
        format!(
            r#"<input type="number" min="{min}" aria-label="{}" data-param="{param}"{actor} value="{value}">"#,
            esc(&label)
        )
    };
    let mut out = format!(
        r#"<span class="pause-edit">Lease TTL {} ms</span>"#,
        field("Lease TTL (ms)".to_owned(), "ttl", None, 1, sc.lease_ttl)
    );
    for (i, a) in sc.actors.iter().enumerate() {
        let delayed_by_default = base
            .and_then(|b| b.actors.get(i))
            .is_some_and(|b| b.network_delay > 0);
        if a.network_delay > 0 || delayed_by_default {
            let _ = write!(
                out,
                r#"<span class="pause-edit"><b>{}</b>'s packets take {} ms</span>"#,
                esc(&a.name),
                field(
                    format!("{} network delay (ms)", a.name),
                    "delay",
                    Some(i),
                    0,
                    a.network_delay
                )
            );
        }
    }
    for (i, a) in sc.actors.iter().enumerate() {
        if let Some(p) = a.pauses.first() {
            let _ = write!(
                out,
                r#"<span class="pause-edit"><b>{}</b> pauses at {} ms for {} ms</span>"#,
                esc(&a.name),
                field(
                    format!("{} pause start (ms)", a.name),
                    "pause-start",
                    Some(i),
                    0,
                    p.start
                ),
                field(
                    format!("{} pause length (ms)", a.name),
                    "pause-length",
                    Some(i),
                    1,
                    p.duration
                )
            );
        }
    }
    out
}

/// What a field of [`params`] currently holds, to put back after a refused edit.
pub fn param_value(sc: &crate::core::Scenario, param: &str, actor: Option<usize>) -> Option<u64> {
    let a = actor.and_then(|i| sc.actors.get(i));
    match param {
        "ttl" => Some(sc.lease_ttl),
        "delay" => a.map(|a| a.network_delay),
        "pause-start" => a.and_then(|a| a.pauses.first()).map(|p| p.start),
        "pause-length" => a.and_then(|a| a.pauses.first()).map(|p| p.duration),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::explore::{explore, ExploreSpec};
    use crate::core::{run, Scenario};

    #[test]
    fn ledger_at_the_end_of_the_headline() {
        let t = run(&Scenario::gc_pause());
        let html = ledger(&t, t.len());
        assert!(html.contains(r#"data-testid="balance">90<"#));
        assert!(html.contains(r#"data-testid="last-fence">34<"#));
        assert_eq!(html.matches(r#"data-testid="ledger-row""#).count(), 2);
        assert!(html.contains(r#"class="verdict">stale_fence<"#));
        assert_eq!(ledger(&t, 0).matches("ledger-row").count(), 0);
    }

    #[test]
    fn params_list_ttl_delays_and_pauses() {
        let sc = Scenario::gc_pause();
        let html = params(&sc, Some(&sc));
        assert!(html.contains(r#"aria-label="Lease TTL (ms)" data-param="ttl" value="30""#));
        assert!(html.contains(r#"data-param="pause-start" data-actor="0" value="5""#));
        assert!(html.contains(r#"data-param="pause-length" data-actor="0" value="50""#));
        assert!(
            !html.contains("network delay"),
            "no delay field where nothing is delayed"
        );
        assert_eq!(param_value(&sc, "pause-length", Some(0)), Some(50));
        assert_eq!(param_value(&sc, "delay", Some(9)), None);
        let delayed = Scenario::delayed_packet();
        assert!(params(&delayed, Some(&delayed)).contains("network delay"));
    }

    #[test]
    fn compare_reads_80_and_90() {
        let sc = Scenario::gc_pause();
        let html = compare(&run(&sc.clone().with_policy(FencingPolicy::Off)), &run(&sc));
        assert!(
            html.contains(r#"<span class="v">80</span>"#)
                && html.contains(r#"<span class="v">90</span>"#)
        );
        // Off, the harm is a double charge (both debits are atomic: no update is lost).
        assert!(
            html.contains("double charge") && html.contains("ran twice"),
            "{html}"
        );
        assert!(!html.contains("lost update"), "{html}");
        assert!(
            html.contains("stale_fence") && html.contains("fencing on (strict)"),
            "{html}"
        );
    }

    #[test]
    fn story_escapes_and_narrates() {
        let t = run(&Scenario::gc_pause());
        assert!(story(&t, 0, "Q <b>?").contains("Q &lt;b&gt;?"));
        let s1 = story(&t, 1, "");
        assert!(s1.contains("gives token 33"), "{s1}");
        assert!(s1.contains(&esc(&story::narration(&t, 1))));
        assert!(s1.contains(&esc(&story::say(&t, 1))));
        assert!(!s1.contains("question"));
    }

    #[test]
    fn explorer_rows_offer_harmful_counterexamples_first() {
        let stats = explore(&Scenario::gc_pause(), ExploreSpec::all_policies(0, 5)).unwrap();
        let html = explorer_rows(&stats);
        assert!(html.contains(r#"data-testid="load-off-0" data-load="0:"#));
        assert!(html.contains(">ran twice: pause"), "{html}");
        let (off, strict) = (&stats[0], &stats[1]);
        assert_eq!(
            (off.policy, strict.policy),
            (FencingPolicy::Off, FencingPolicy::Strict)
        );
        // Off measures out-of-order writes; a fencing policy refuses them by rule.
        assert!(off.out_of_order > 0);
        assert!(html.contains(&format!(
            r#"<td class="num bad" data-testid="order">{}</td>"#,
            off.out_of_order
        )));
        assert_eq!(html.matches("— by rule").count(), 2);
        // Strict still lets late writes through: the cell is counted and marked bad.
        assert!(strict.late_writes > 0);
        assert!(html.contains(&format!(
            r#"<td class="num bad" data-testid="late">{}</td>"#,
            strict.late_writes
        )));
        // Strict's buttons load its harmful schedules first.
        assert!(html.contains(r#"data-testid="load-strict-0" data-load="1:"#));
        let strict_row = html
            .split(r#"data-testid="explore-strict""#)
            .nth(1)
            .unwrap();
        let strict_row = strict_row.split("</tr>").next().unwrap();
        assert!(strict_row.contains(">ran twice: pause"), "{strict_row}");
        let note = explorer_footnote(&stats);
        assert!(
            note.contains(&format!(
                "still accepted a write from a superseded lease in {} schedules",
                strict.late_writes
            )) && note.contains("handoff barrier"),
            "{note}"
        );
        assert!(note.contains("does not stop the belief"), "{note}");
        // With no late write under strict, the footnote says so.
        let mut clean = stats.clone();
        clean[1].late_writes = 0;
        clean[1].two_believers = 0;
        assert_eq!(
            explorer_footnote(&clean),
            "Strict fencing accepted no write from a superseded lease in any schedule."
        );
        let fork_html = fork(&run(&Scenario::gc_pause()), &run(&Scenario::gc_pause()), 3);
        assert!(fork_html.contains(r#"class="timeline original""#));
    }
}
