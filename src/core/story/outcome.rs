//! A whole run in one line (the comparison panel's caption).

use super::*;

/// What a whole run amounts to, in one short line (the comparison panel's caption). A fenced
/// Redlock run says it is a counterfactual, so its 90 is not read as Redlock's own.
pub fn outcome(t: &Trace) -> String {
    let words = run_outcome(t);
    if counterfactual(t) {
        format!("{words} (counterfactual: Redlock mints no token)")
    } else {
        words
    }
}

/// [`outcome`] before the counterfactual clause.
fn run_outcome(t: &Trace) -> String {
    let s = &t.summary;
    let after = |e: &TraceEvent| match &e.kind {
        EventKind::WriteApplied {
            highest_accepted, ..
        } if e.is_out_of_order() => format!(", after {}", token(*highest_accepted)),
        _ => String::new(),
    };
    let late_event = t.events.iter().find(|e| e.is_late_write());
    // Random values: a fenced superseded write that passed a real comparison passed by the draw.
    let luck = |e: &TraceEvent| match &e.kind {
        EventKind::WriteApplied {
            highest_accepted: Some(h),
            ..
        } if t.scenario.lock.token_source() == TokenSource::RandomValue
            && t.scenario.policy.checks_fence() =>
        {
            format!(", by luck of the draw ({} > {h})", token(e.fence()))
        }
        _ => String::new(),
    };
    let late = late_event.map(|e| {
        format!(
            "{}'s {} landed from a superseded lease{}{}",
            e.actor.clone().unwrap_or_default(),
            token(e.fence()),
            after(e),
            luck(e)
        )
    });
    // An out-of-order write that is not the late one above gets its own words.
    let order = t
        .events
        .iter()
        .find(|e| e.is_out_of_order() && !late_event.is_some_and(|l| std::ptr::eq(l, *e)))
        .map(|e| {
            format!(
                "{}'s {} landed out of token order{}",
                e.actor.clone().unwrap_or_default(),
                token(e.fence()),
                after(e)
            )
        });
    let mut parts: Vec<String> = Vec::new();
    match (s.duplicate_runs, late) {
        (0, Some(l)) => parts.push(l),
        (0, None) => {}
        (n, l) => {
            let times = if n == 1 {
                "twice".to_owned()
            } else {
                format!("{} times", n + 1)
            };
            let fault = super::fault::twice(t);
            let name = if s.harmless_reruns >= n {
                "wasted work, no harm"
            } else if let Some(name) = fault {
                // A fault is why (storage forgot one run's acknowledged write).
                name
            } else {
                twice_name(&t.scenario)
            };
            // A claim row is the claim, not the job: the provider call is counted apart.
            let ran = if t.scenario.claims() {
                format!("claimed {times}")
            } else {
                format!("job ran {times}")
            };
            parts.push(match l {
                Some(l) => format!("{name}: {ran} — {l}"),
                None => format!("{name}: {ran}"),
            });
        }
    }
    parts.extend(order);
    if s.provider_charges + s.provider_deduped > 0 {
        let charged = match s.provider_charges {
            1 => "once".to_owned(),
            n => format!("{n} times"),
        };
        parts.push(match s.provider_deduped {
            0 => format!("the provider charged {charged}"),
            1 => format!("the provider charged {charged}; 1 call deduped by its idempotency key"),
            n => format!(
                "the provider charged {charged}; {n} calls deduped by their idempotency key"
            ),
        });
    }
    if s.side_effects > 1 {
        parts.push(
            format!("the unfenced call ran {} times", s.side_effects).replace(" 2 times", " twice"),
        );
    }
    let is_dedupe = |w: &&WriteRecord| matches!(w.result, Err(WriteError::DuplicateIntent { .. }));
    let deduped = t.writes.iter().filter(is_dedupe).count();
    let refusals: Vec<_> = t
        .writes
        .iter()
        .filter(|w| !w.accepted() && !is_dedupe(w))
        .collect();
    let refused = refusals.first().map(|w| {
        let dedupe = match deduped {
            0 => String::new(),
            1 => "; a retry answered from its idempotency key".to_owned(),
            n => format!("; {n} retries answered from their idempotency keys"),
        };
        if t.scenario.lock.row().is_some() {
            let code = w.result.as_ref().err().map_or("", |e| e.code());
            return format!(
                "{}'s UPDATE failed: {code} ({IDLE_IN_TRANSACTION_TIMEOUT})",
                w.request.writer
            );
        }
        format!(
            "{}{dedupe}; last fence {}{}",
            refused_writers(&refusals),
            token(s.last_fence),
            arrival_luck(t, &refusals)
        )
    });
    // A refusal is news unless the job ran twice anyway; it comes after a late write that
    // landed (the superseded holder got in, then the real holder was refused).
    if s.duplicate_runs == 0 {
        if let Some(r) = refused {
            let at = usize::from(s.late_writes_accepted > 0).min(parts.len());
            parts.insert(at, r);
        }
    }
    if !parts.is_empty() {
        return parts.join("; ");
    }
    // Two believed, and the stale one stopped itself: credit what stopped it.
    let stopped = t.events.iter().find(|e| {
        matches!(e.kind, EventKind::DeadlineChecked { ok: false, .. }) && e.actor.is_some()
    });
    if let (true, Some(e)) = (s.conflict(), stopped) {
        return format!(
            "{} stopped at its deadline (TTL − margin) before writing; no superseded write landed",
            e.actor.clone().unwrap_or_default()
        );
    }
    if s.conflict() {
        "two clients believed they held the lease; no superseded write landed".to_owned()
    } else {
        "no conflict: one holder at a time".to_owned()
    }
}

/// Whether a fencing policy's column is a counterfactual here (Redlock mints no token).
pub fn counterfactual(t: &Trace) -> bool {
    t.scenario.lock.token_source() == TokenSource::Counterfactual
        && t.scenario.policy.checks_fence()
}

/// Every refused write, named: "A's 41 and B's 42 refused: stale_fence", one group per
/// error code in order of first appearance (no "+1 more" hiding who was refused).
fn refused_writers(refusals: &[&WriteRecord]) -> String {
    let mut groups: Vec<(&str, Vec<(String, usize)>)> = Vec::new();
    for w in refusals {
        let code = w.result.as_ref().err().map_or("", |e| e.code());
        let who = format!("{}'s {}", w.request.writer, token(w.request.fence));
        match groups.iter_mut().find(|(c, _)| *c == code) {
            // The same writer and token again (a retry): counted, not repeated.
            Some((_, names)) => match names.iter_mut().find(|(n, _)| *n == who) {
                Some((_, k)) => *k += 1,
                None => names.push((who, 1)),
            },
            None => groups.push((code, vec![(who, 1)])),
        }
    }
    groups
        .into_iter()
        .map(|(code, names)| {
            let names: Vec<String> = names
                .into_iter()
                .map(|(n, k)| if k > 1 { format!("{n} (×{k})") } else { n })
                .collect();
            (code, names)
        })
        .map(|(code, names)| match names.as_slice() {
            [init @ .., last] if !init.is_empty() => {
                format!("{} and {last} refused: {code}", init.join(", "))
            }
            _ => format!("{} refused: {code}", names.join("")),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// " (by luck of arrival order)" when a refusal turned on two holders carrying the same
/// token: no rule can order duplicate tokens, so whoever arrived second was refused.
fn arrival_luck(t: &Trace, refusals: &[&WriteRecord]) -> &'static str {
    let duplicate = refusals.iter().any(|w| match &w.result {
        Err(WriteError::StaleFence { token, last }) if token == last => t.writes.iter().any(|o| {
            o.accepted() && o.request.fence == Some(*token) && o.request.writer != w.request.writer
        }),
        _ => false,
    });
    if duplicate {
        " (by luck of arrival order: duplicate tokens cannot be ordered)"
    } else {
        ""
    }
}
