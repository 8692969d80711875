//! The display-only panels as HTML markup, computed from traces: the story line, the
//! storage panel, the off-versus-on comparison, the fork and the explorer's table.
//!
//! Pure and native like [`crate::timeline`], so they are unit-tested without a browser. The
//! Leptos shell writes only what changed between two renderings ([`crate::markup::diff`]),
//! which costs far less wasm than a view per element. Interactive controls stay Leptos views.

use std::fmt::Write;

use crate::core::explore::PolicyStats;
use crate::core::{Fence, FencingPolicy, Trace};
use crate::timeline::{esc, render, Geometry};

fn token(f: Option<Fence>) -> String {
    f.map_or_else(|| "—".to_owned(), |f| f.to_string())
}

/// The question being answered, the current narration and what to say out loud.
pub fn story(t: &Trace, step: usize, question: &str) -> String {
    let narration = match t.event_at(step) {
        Some(e) => e.narration.clone(),
        None => format!(
            "Balance {} on {}. {} clients share a {} lease lock. Press → (or Step forward) to begin.",
            t.scenario.initial_balance,
            t.scenario.resource,
            t.scenario.actors.len(),
            t.time_label(t.scenario.lease_ttl)
        ),
    };
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
        esc(&narration),
        esc(t.talking_point(step))
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
        Some(l) => format!(
            "{} (token {}, until {})",
            esc(&l.owner),
            l.fence,
            t.time_label(l.expires_at)
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
    let mut out = format!(
        r#"<div class="metrics"><div class="metric"><span class="k">Balance</span><span class="v" data-testid="balance">{}</span></div><div class="metric"><span class="k">Last fence</span><span class="v" data-testid="last-fence">{fence}</span><span class="cap">{caption}</span></div><div class="metric small"><span class="k">Lock server says</span><span data-testid="holder">{holder}</span><span class="k">Believe they hold it</span><span data-testid="believers"{warn}>{believers}</span></div></div><table class="log" data-testid="ledger"><caption>Write log (append-only; every attempt)</caption><thead><tr><th>time</th><th>writer</th><th>token</th><th>amount</th><th>result</th><th>balance</th></tr></thead><tbody>"#,
        s.balance
    );
    for w in t.writes_until(step) {
        let (class, verdict) = match &w.result {
            Ok(()) => ("accepted", "accepted"),
            Err(e) => ("rejected", e.code()),
        };
        let _ = write!(
            out,
            r#"<tr data-testid="ledger-row" class="{class}"><td>{}</td><td>{}</td><td class="num">{}</td><td class="num">−{}</td><td class="verdict">{verdict}</td><td class="num">{}</td></tr>"#,
            t.time_label(w.at),
            esc(&w.request.writer),
            token(w.request.fence),
            w.request.amount,
            w.balance_after
        );
    }
    out.push_str("</tbody></table>");
    out
}

/// One sentence for what a whole run amounts to.
pub fn outcome(t: &Trace) -> String {
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

/// The policy to show as "fencing on" beside `current`.
pub fn on_policy(current: FencingPolicy) -> FencingPolicy {
    match current {
        FencingPolicy::SameEpoch => FencingPolicy::SameEpoch,
        _ => FencingPolicy::Strict,
    }
}

/// "fencing off → 80" beside "fencing on → 90", from two real runs.
pub fn compare(off: &Trace, on: &Trace) -> String {
    format!(
        r#"<div class="side off" data-testid="summary-off"><span class="k">fencing off →</span><span class="v">{}</span><span class="cap">{}</span></div><div class="side on" data-testid="summary-on"><span class="k">fencing on ({}) →</span><span class="v">{}</span><span class="cap">{}</span></div>"#,
        off.summary.final_balance,
        esc(&outcome(off)),
        on.scenario.policy.short(),
        on.summary.final_balance,
        esc(&outcome(on))
    )
}

fn fork_line(t: &Trace) -> String {
    let s = &t.summary;
    esc(&format!(
        "{} · fencing {} · TTL {} → balance {}, {} accepted, {} rejected, {} stale accepted",
        t.scenario.title,
        t.scenario.policy.short(),
        t.time_label(t.scenario.lease_ttl),
        s.final_balance,
        s.accepted_writes,
        s.rejected_writes,
        s.stale_writes_accepted
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
pub fn explorer_rows(stats: &[PolicyStats]) -> String {
    let mut out = String::new();
    for (row, st) in stats.iter().enumerate() {
        let code = st.policy.code();
        let _ = write!(
            out,
            r#"<tr data-testid="explore-{code}"><td><b>{}</b></td><td class="num">{}</td><td class="num {}" data-testid="stale">{}</td><td class="num" data-testid="two">{}</td><td>"#,
            esc(st.policy.option()),
            st.explored,
            if st.stale_writes > 0 { "bad" } else { "good" },
            st.stale_writes,
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
            let kind = if ex.verdict.stale_write {
                "stale"
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

/// Stale writes first: they are the counterexamples worth loading. Each comes with its
/// index in `st.examples`, which the load button carries.
fn picked(st: &PolicyStats) -> Vec<(usize, &crate::core::explore::Example)> {
    let stale: Vec<_> = st
        .examples
        .iter()
        .enumerate()
        .filter(|(_, e)| e.verdict.stale_write)
        .take(3)
        .collect();
    if stale.is_empty() {
        st.examples.iter().enumerate().take(3).collect()
    } else {
        stale
    }
}

/// What the explorer's counts mean, once it has finished.
pub fn explorer_footnote(stats: &[PolicyStats]) -> String {
    let Some(strict) = stats.iter().find(|s| s.policy == FencingPolicy::Strict) else {
        return String::new();
    };
    if strict.stale_writes == 0 && strict.two_believers > 0 {
        format!(
            "Strict fencing accepted no stale write in any schedule, yet in {} of them two clients still believed they held the lease: the token protects the storage, not the belief.",
            strict.two_believers
        )
    } else if strict.stale_writes == 0 {
        "Strict fencing accepted no stale write in any schedule.".to_owned()
    } else {
        format!(
            "Strict fencing let {} schedules through — look at them.",
            strict.stale_writes
        )
    }
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
        assert!(html.contains("lost update") && html.contains("stale_fence"));
    }

    #[test]
    fn story_escapes_and_narrates() {
        let t = run(&Scenario::gc_pause());
        assert!(story(&t, 0, "Q <b>?").contains("Q &lt;b&gt;?"));
        assert!(story(&t, 1, "").contains("fencing token 33"));
        assert!(!story(&t, 1, "").contains("question"));
    }

    #[test]
    fn explorer_rows_offer_stale_counterexamples_first() {
        let stats = explore(&Scenario::gc_pause(), ExploreSpec::all_policies(0, 5)).unwrap();
        let html = explorer_rows(&stats);
        assert!(html.contains(r#"data-testid="load-off-0" data-load="0:"#));
        assert!(html.contains(">stale: pause"));
        assert!(explorer_footnote(&stats).contains("not the belief"));
        let fork_html = fork(&run(&Scenario::gc_pause()), &run(&Scenario::gc_pause()), 3);
        assert!(fork_html.contains(r#"class="timeline original""#));
    }
}
