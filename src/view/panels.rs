//! The panels beside the timeline as typed models: the story line, the storage panel, the
//! off-versus-on comparison, the fork, the explorer's table and the parameter fields.
//!
//! Pure and native, read off traces and the [`Lab`]; tests assert their fields. The Leptos
//! shell renders each one with `view!`.

use crate::core::deck::PushBack;
use crate::core::explore::{Example, PolicyStats};
use crate::core::story;
use crate::core::{Fence, FencingPolicy, Scenario, Trace, WriteRecord};
use crate::lab::{Exploration, Param};

fn token(f: Option<Fence>) -> String {
    f.map_or_else(|| "—".to_owned(), |f| f.to_string())
}

/// The question being answered, the current narration and what to say out loud.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StoryModel {
    pub question: Option<&'static str>,
    pub narration: String,
    pub say: String,
}

pub fn story(t: &Trace, step: usize) -> StoryModel {
    let words = story::Story::of(t);
    StoryModel {
        question: crate::core::deck::find(&t.scenario.id)
            .map(|e| e.question)
            .filter(|q| !q.is_empty()),
        narration: words.narration(step),
        say: words.say(step),
    }
}

/// Balance (or result row), fence, who holds and who believes, and the write log so far.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StorageModel {
    /// "Balance", or "Result row" for a job that publishes.
    pub figure: &'static str,
    /// The figure is words (a result row), not a number.
    pub words: bool,
    pub value: String,
    pub fence: String,
    pub fence_caption: &'static str,
    /// Who answers "who holds the lock": the lock server, or the database itself.
    pub holder_source: &'static str,
    pub holder: String,
    pub believers: String,
    /// More than one client believes it holds the lock.
    pub two_believe: bool,
    /// Column heads of the write log: "amount"/"write" and "balance"/"row".
    pub change: &'static str,
    pub after: &'static str,
    pub rows: Vec<LogRow>,
}

/// One write attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct LogRow {
    pub time: String,
    pub writer: String,
    pub token: String,
    pub change: String,
    pub accepted: bool,
    /// Accepted, but a storage failover since has lost it: the promoted standby never got it.
    pub lost: bool,
    /// `accepted` (with `· lost in failover` once lost), or the refusal's code.
    pub verdict: &'static str,
    pub after: String,
}

/// The writes a storage failover among `events` lost, as the trace records them: the
/// standby promoted without them (each record once per loss).
fn lost_in_failover(events: &[crate::core::TraceEvent]) -> Vec<&WriteRecord> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            crate::core::EventKind::StorageFailover { lost, .. } => Some(lost),
            _ => None,
        })
        .flatten()
        .collect()
}

/// Longer than this, a "lock server says" or "believe they hold it" answer does not fit
/// beside its label in the storage panel's metrics column (290 px of 14 px text; 220 px at
/// 1100 px wide and below, where the labels lose their letter-spacing): the page puts it on
/// its own line under the label, instead of wrapping it word by word beside it. The answers
/// a run gives are "nobody", one to three names, or a holder with its token and deadline
/// (15 characters or more).
pub const BESIDE_LABEL: usize = 11;

/// Whether an answer of the storage panel goes on its own line under its label.
pub fn below_label(answer: &str) -> bool {
    answer.chars().count() > BESIDE_LABEL
}

/// A figure with more digits than the metric's narrow column holds at full size (a random
/// token such as 842162, in `uuid-token`): it is drawn smaller instead of running into the log.
pub fn long_figure(figure: &str) -> bool {
    figure.chars().count() > 4
}

pub fn storage(t: &Trace, step: usize) -> StorageModel {
    // `step` is a story step; the snapshot and the log are after its last event.
    let events = story::Steps::of(t).through(step);
    let s = t.snapshot_at(events);
    let (fence, fence_caption) = if t.scenario.lock.row().is_some() {
        ("none".to_owned(), "no token: the row lock is the check")
    } else if t.scenario.policy.checks_fence() {
        (token(s.last_fence), "the highest token storage accepted")
    } else {
        (
            token(s.last_write_fence),
            "the last write's token; storage does not check",
        )
    };
    let holder = match &s.holder {
        // A row lock: its deadline is the session's idle timeout, if one is set.
        Some(l) if t.scenario.lock.row().is_some() => match t.scenario.idle_timeout() {
            Some(_) => format!(
                "{} (row lock; idle timeout at {})",
                l.owner,
                story::time_label(&t.scenario, l.expires_at)
            ),
            None => format!("{} (row lock; no idle timeout)", l.owner),
        },
        // With a separate counter a lease's number is not its token: say only until when.
        Some(l) if t.scenario.lock.token_source() == crate::core::TokenSource::SeparateCounter => {
            format!(
                "{} (until {})",
                l.owner,
                story::time_label(&t.scenario, l.expires_at)
            )
        }
        Some(l) => format!(
            "{} (token {}, until {})",
            l.owner,
            l.fence,
            story::time_label(&t.scenario, l.expires_at)
        ),
        None => "nobody".to_owned(),
    };
    let believers = match s.believers.len() {
        0 => "nobody".to_owned(),
        _ => s.believers.join(" and "),
    };
    // A job that publishes has a result row, not a balance.
    let words = t.scenario.publishes();
    let (figure, change, after) = if words {
        ("Result row", "write", "row")
    } else {
        ("Balance", "amount", "balance")
    };
    let writes = t.writes_until(events);
    let mut lost = lost_in_failover(&t.events[..events.min(t.len())]);
    let rows = writes
        .iter()
        .enumerate()
        .map(|(k, w)| (k, w, take_lost(&mut lost, w)))
        .map(|(k, w, gone)| LogRow {
            time: story::time_label(&t.scenario, w.at),
            writer: w.request.writer.clone(),
            token: token(w.request.fence),
            change: match &w.request.publish {
                Some(r) => r.clone(),
                None => format!("−{}", w.request.amount),
            },
            accepted: w.result.is_ok(),
            lost: gone,
            verdict: match &w.result {
                Ok(()) if gone => "accepted · lost in failover",
                Ok(()) => "accepted",
                Err(e) => e.code(),
            },
            after: if words {
                // The row after this attempt: the value of the last accepted publish so far.
                row_after(&writes[..=k]).to_owned()
            } else {
                w.balance_after.to_string()
            },
        })
        .collect();
    StorageModel {
        figure,
        words,
        value: story::Story::of(t).value(step),
        fence,
        fence_caption,
        holder_source: if t.scenario.lock.row().is_some() {
            "PostgreSQL says"
        } else {
            "Lock server says"
        },
        holder,
        believers,
        two_believe: s.believers.len() > 1,
        change,
        after,
        rows,
    }
}

/// Whether `w` is among the `lost` records; each record marks one write of the log.
fn take_lost(lost: &mut Vec<&WriteRecord>, w: &WriteRecord) -> bool {
    match lost.iter().position(|x| *x == w) {
        Some(i) => {
            lost.swap_remove(i);
            true
        }
        None => false,
    }
}

/// The result row after the attempts `so_far`: the last accepted publish among them.
fn row_after(so_far: &[WriteRecord]) -> &str {
    so_far
        .iter()
        .rev()
        .find(|x| x.accepted())
        .and_then(|x| x.request.publish.as_deref())
        .unwrap_or("—")
}

/// "fencing off → 80" beside "fencing on → 90", from two real runs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CompareModel {
    /// The figures are words (result rows), not numbers.
    pub words: bool,
    pub off: Side,
    /// Which policy "on" is, e.g. "strict" or "strict, counterfactual".
    pub on_policy: String,
    pub on: Side,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Side {
    pub value: String,
    pub outcome: String,
}

/// A control's "how" (markdown: `` `key` ``, `**name**`) as markup for the keys sheet:
/// keys in `<kbd>`, names in bold, everything else escaped.
pub fn how_markup(how: &str) -> String {
    let mut out = String::new();
    let mut rest = how;
    while let Some(i) = rest.find(['`', '*']) {
        out.push_str(&crate::view::timeline::esc(&rest[..i]));
        let (mark, tag) = if rest[i..].starts_with("**") {
            ("**", "b")
        } else if rest[i..].starts_with('`') {
            ("`", "kbd")
        } else {
            out.push('*');
            rest = &rest[i + 1..];
            continue;
        };
        let body = &rest[i + mark.len()..];
        match body.find(mark) {
            Some(end) => {
                let inner = crate::view::timeline::esc(&body[..end]);
                out.push_str(&format!("<{tag}>{inner}</{tag}>"));
                rest = &body[end + mark.len()..];
            }
            None => {
                out.push_str(&crate::view::timeline::esc(mark));
                rest = body;
            }
        }
    }
    out.push_str(&crate::view::timeline::esc(rest));
    out
}

/// After a drag (a pause or a packet delay moved), one line on what it changed at
/// storage, or `None` if every write landed as before: which write now arrives first, what
/// that did to its verdict, and the outcome before and after.
pub fn change_note(old: &Trace, new: &Trace) -> Option<String> {
    type Row = (String, String, Option<&'static str>);
    let rows = |t: &Trace| -> Vec<Row> {
        let verdict = |w: &WriteRecord| w.result.as_ref().err().map(|e| e.code());
        let row = |w: &WriteRecord| (w.request.writer.clone(), token(w.request.fence), verdict(w));
        t.writes.iter().map(row).collect()
    };
    let (was, now) = (rows(old), rows(new));
    if was == now {
        return None;
    }
    let name = |r: &Row| format!("{}'s {}", r.0, r.1);
    let said = |v: Option<&str>| v.unwrap_or("accepted").to_owned();
    let same_write = |a: &Row, b: &Row| a.0 == b.0 && a.1 == b.1;
    let first_moved = (0..now.len().min(was.len())).find(|&i| !same_write(&now[i], &was[i]));
    let change = match first_moved {
        Some(i) => {
            let ahead = &now[i];
            let mut line = format!(
                "{} now reaches storage before {}",
                name(ahead),
                name(&was[i])
            );
            let before = was.iter().find(|r| same_write(r, ahead)).map(|r| r.2);
            match (before, ahead.2) {
                (Some(Some(_)), None) => line.push_str(&format!(
                    ", so {} cannot refuse it",
                    new.scenario.policy.short()
                )),
                (Some(None), Some(code)) => line.push_str(&format!(" and is refused ({code})")),
                _ => {}
            }
            line
        }
        None => match was.iter().zip(&now).find(|(a, b)| a.2 != b.2) {
            Some((a, b)) => format!("{} is now {} (was {})", name(b), said(b.2), said(a.2)),
            None => format!("{} writes reach storage (was {})", now.len(), was.len()),
        },
    };
    let (before, after) = (story::final_value(old), story::final_value(new));
    let figure = if new.scenario.publishes() {
        "result row"
    } else {
        "balance"
    };
    Some(if before == after {
        format!("{change}; the {figure} still ends at {after}.")
    } else {
        format!("{change}: {figure} {after} (was {before}).")
    })
}

/// The step that decides the run's outcome, for the reveal: the step of its last write
/// attempt at storage, after which the ledger no longer changes (the last step for a run
/// that writes nothing). Until then the off/on cards keep their place but not their figures.
pub fn deciding_step(t: &Trace) -> usize {
    let steps = story::Steps::of(t);
    let all = t.writes.len();
    if all == 0 {
        return steps.last();
    }
    (0..=steps.last())
        .find(|&s| t.writes_until(steps.through(s)).len() == all)
        .unwrap_or(steps.last())
}

pub fn compare(off: &Trace, on: &Trace) -> CompareModel {
    let side = |t: &Trace| Side {
        value: story::final_value(t),
        outcome: story::outcome(t),
    };
    CompareModel {
        words: off.scenario.publishes(),
        off: side(off),
        on_policy: if story::counterfactual(on) {
            format!("{}, counterfactual", policy_words(on))
        } else {
            policy_words(on)
        },
        on: side(on),
    }
}

/// The policy's one word, and the sequencer check when storage makes it.
fn policy_words(t: &Trace) -> String {
    if story::asks_lock_service(&t.scenario) {
        format!("{} + sequencer", t.scenario.policy.short())
    } else {
        t.scenario.policy.short().to_owned()
    }
}

/// One line per run for the fork panel: what was edited and how it ended.
pub fn fork_line(t: &Trace) -> String {
    let s = &t.summary;
    format!(
        "{} · fencing {} · TTL {} → {} {}, {} accepted, {} rejected, {} late accepted",
        t.scenario.title,
        policy_words(t),
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
    )
}

/// The explorer's progress and counts per policy, with up to three loadable
/// counterexamples each.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ExplorerModel {
    pub heading: String,
    pub failed: Option<String>,
    pub done: usize,
    pub total: usize,
    /// "N / M schedules · T ms", once it has started.
    pub status: Option<String>,
    pub rows: Vec<ExploreRow>,
    /// What the counts mean, once it has finished.
    pub footnote: String,
}

/// A count that is a finding: bad when above zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Count(pub usize);

impl Count {
    pub fn bad(self) -> bool {
        self.0 > 0
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ExploreRow {
    pub policy: FencingPolicy,
    pub explored: usize,
    pub late: Count,
    pub twice: Count,
    /// Out-of-order writes are a finding only with fencing off: a fencing policy refuses a
    /// lower token by its own rule, so there is no count to show (`None`, "— by rule").
    pub order: Option<Count>,
    pub two: usize,
    pub examples: Vec<ExampleButton>,
}

/// A counterexample to load: `index` into the row's `PolicyStats::examples`.
#[derive(Debug, Clone, PartialEq)]
pub struct ExampleButton {
    pub row: usize,
    pub index: usize,
    pub text: String,
}

pub fn explorer(x: &Exploration) -> ExplorerModel {
    let stats = x.stats();
    let rows = stats
        .iter()
        .enumerate()
        .map(|(row, st)| ExploreRow {
            policy: st.policy,
            explored: st.explored,
            late: Count(st.late_writes),
            twice: Count(st.double_runs),
            order: (!st.policy.checks_fence()).then_some(Count(st.out_of_order)),
            two: st.two_believers,
            examples: picked(st)
                .into_iter()
                .map(|(index, ex)| ExampleButton {
                    row,
                    index,
                    text: example_text(ex),
                })
                .collect(),
        })
        .collect();
    let (done, total) = x.progress();
    ExplorerModel {
        heading: x.heading().to_owned(),
        failed: x.failed().map(str::to_owned),
        done,
        total: total.max(1),
        status: x.started().then(|| {
            format!(
                "{done} / {total} schedules · {} ms",
                x.elapsed_ms().round() as u64
            )
        }),
        rows,
        footnote: if x.finished() {
            explorer_footnote(stats)
        } else {
            String::new()
        },
    }
}

fn example_text(ex: &Example) -> String {
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
    format!("{kind}: {what}{delay}")
}

/// Harmful schedules first: they are the counterexamples worth loading. Each comes with its
/// index in `st.examples`.
fn picked(st: &PolicyStats) -> Vec<(usize, &Example)> {
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
        out.push_str(&format!(
            " In {} schedules two clients believed at once that they held the lease: the token limits the harm at the storage, it does not stop the belief.",
            strict.two_believers
        ));
    }
    out
}

/// The speaker notes as list items (they change only with the deck entry).
pub fn notes_markup(notes: &[String]) -> String {
    notes
        .iter()
        .map(|n| format!("<li>{}</li>", crate::view::timeline::esc(n)))
        .collect()
}

/// The Notes panel's content: the notes as a list, then the entry's push-backs.
pub fn notes_panel_markup(notes: &[String], pushbacks: &[PushBack]) -> String {
    let mut out = String::from("<ul>");
    out += &notes_markup(notes);
    out += "</ul>";
    out += &pushbacks_markup(pushbacks);
    out
}

/// An entry's push-backs under the notes, as markup: the question in bold, the answer, the
/// source in small type and, where another entry shows the answer, a link to it. Plain text
/// in the page, so the browser's find reaches it. (Built by pushing, not `format!`: this
/// is in the page's first wasm.)
pub fn pushbacks_markup(pushbacks: &[PushBack]) -> String {
    if pushbacks.is_empty() {
        return String::new();
    }
    let esc = crate::view::timeline::esc;
    let mut out = String::from(
        "<div class=\"pushbacks\" data-testid=\"pushbacks\"><h2>If they push back</h2><ul>",
    );
    for p in pushbacks {
        out += "<li><b>";
        out += &esc(p.question);
        out += "</b> ";
        out += &esc(p.answer);
        out += " <small>Source: ";
        out += &esc(p.source);
        out += "</small>";
        if let Some(id) = p.shows {
            out += " <a href=\"#s=";
            out += id;
            out += "\">see ";
            out += id;
            out += "</a>";
        }
        out += "</li>";
    }
    out += "</ul></div>";
    out
}

/// The parameter fields a presenter may edit, one group per line of the panel.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParamsModel {
    pub groups: Vec<FieldGroup>,
}

/// "Lease TTL [30] ms", "A's packets take [0] ms", "A pauses at [5] ms for [50] ms".
#[derive(Debug, Clone, PartialEq)]
pub enum FieldGroup {
    Ttl(Field),
    Delay {
        name: String,
        field: Field,
    },
    Pause {
        name: String,
        start: Field,
        length: Field,
    },
}

impl FieldGroup {
    /// Stable across edits: which parameter of which actor.
    pub fn key(&self) -> (Param, Option<usize>) {
        match self {
            FieldGroup::Ttl(f) | FieldGroup::Delay { field: f, .. } => (f.param, f.actor),
            FieldGroup::Pause { start, .. } => (start.param, start.actor),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub param: Param,
    pub actor: Option<usize>,
    pub label: String,
    pub min: u8,
    pub value: u64,
}

/// `base` (the deck entry as built) decides which clients get a delay field.
pub fn params(sc: &Scenario, base: Option<&Scenario>) -> ParamsModel {
    let field = |param: Param, actor: Option<usize>, label: String| Field {
        param,
        actor,
        label,
        min: param.min(),
        value: param.value(sc, actor).unwrap_or_default(),
    };
    // A row lock's TTL is the server's idle_in_transaction_session_timeout.
    let ttl = if sc.lock.row().is_some() {
        "Idle timeout (ms)"
    } else {
        "Lease TTL (ms)"
    };
    let mut groups = vec![FieldGroup::Ttl(field(Param::Ttl, None, ttl.to_owned()))];
    for (i, a) in sc.actors.iter().enumerate() {
        let delayed_by_default = base
            .and_then(|b| b.actors.get(i))
            .is_some_and(|b| b.network_delay > 0);
        if a.network_delay > 0 || delayed_by_default {
            groups.push(FieldGroup::Delay {
                name: a.name.clone(),
                field: field(
                    Param::Delay,
                    Some(i),
                    format!("{} network delay (ms)", a.name),
                ),
            });
        }
    }
    for (i, a) in sc.actors.iter().enumerate() {
        if !a.pauses.is_empty() {
            groups.push(FieldGroup::Pause {
                name: a.name.clone(),
                start: field(
                    Param::PauseStart,
                    Some(i),
                    format!("{} pause start (ms)", a.name),
                ),
                length: field(
                    Param::PauseLength,
                    Some(i),
                    format!("{} pause length (ms)", a.name),
                ),
            });
        }
    }
    ParamsModel { groups }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::explore::{explore, ExploreSpec};

    #[test]
    fn a_controls_how_reads_as_keys_and_names() {
        assert_eq!(
            how_markup("`p` (`Esc` leaves) / **What if…** <x>"),
            "<kbd>p</kbd> (<kbd>Esc</kbd> leaves) / <b>What if…</b> &lt;x&gt;"
        );
        assert_eq!(how_markup("a * b `c"), "a * b `c");
        for c in crate::lab::CONTROLS {
            let m = how_markup(c.how);
            assert!(!m.contains('`') && !m.contains("**"), "{m}");
        }
    }

    /// The issue's own example: the headline's pause ending at t=31 under strict lets A's
    /// 33 reach storage first, so strict accepts both.
    #[test]
    fn a_drag_says_what_it_changed_at_storage() {
        use crate::core::Pause;
        let strict = Scenario::gc_pause();
        let early = strict.clone().with_pause(
            0,
            Pause {
                start: 5,
                duration: 26,
            },
        );
        let (old, new) = (run(&strict), run(&early));
        assert_eq!(
            change_note(&old, &new).as_deref(),
            Some("A's 33 now reaches storage before B's 34, so strict cannot refuse it: balance 80 (was 90).")
        );
        assert_eq!(
            change_note(&new, &old).as_deref(),
            Some("B's 34 now reaches storage before A's 33: balance 90 (was 80).")
        );
        assert_eq!(
            change_note(&old, &old),
            None,
            "nothing changed, nothing said"
        );
    }

    /// The headline's outcome is decided by A's late debit, its last write: before that
    /// step the reveal keeps the cards' figures back; from it on they show.
    #[test]
    fn the_headline_is_decided_by_as_late_debit() {
        for policy in [FencingPolicy::Off, FencingPolicy::Strict] {
            let t = run(&Scenario::gc_pause().with_policy(policy));
            let steps = story::Steps::of(&t);
            let d = deciding_step(&t);
            let last = t.writes.last().expect("a write");
            assert_eq!(last.request.writer, "A", "{policy:?}");
            assert_eq!(t.writes_until(steps.through(d)).len(), t.writes.len());
            assert!(t.writes_until(steps.through(d - 1)).len() < t.writes.len());
            assert!(d > 1 && d <= steps.last(), "{policy:?}: {d}");
        }
    }
    use crate::core::run;

    #[test]
    fn storage_at_the_end_of_the_headline() {
        let t = run(&Scenario::gc_pause());
        let m = storage(&t, t.len());
        assert_eq!((m.figure, m.value.as_str()), ("Balance", "90"));
        assert_eq!(m.fence, "34");
        assert_eq!(m.rows.len(), 2);
        assert!(m.rows[0].accepted);
        assert_eq!(m.rows[1].verdict, "stale_fence");
        assert_eq!(
            (m.rows[1].writer.as_str(), m.rows[1].token.as_str()),
            ("A", "33")
        );
        assert_eq!(m.rows[1].change, "−10");
        assert!(storage(&t, 0).rows.is_empty());
    }

    /// Storage fails over to a standby that never got B's debit: from the failover's step
    /// on, B's row says it was lost (read off the failover's `lost` records), before it not;
    /// and the log then holds with the balance, which is back to 100.
    #[test]
    fn a_write_the_storage_failover_lost_is_marked_from_the_failover_on() {
        let t = run(&Scenario::storage_failover());
        let steps = story::Steps::of(&t);
        let is_failover = |e: &crate::core::TraceEvent| {
            matches!(e.kind, crate::core::EventKind::StorageFailover { .. })
        };
        let failover = (0..=steps.last())
            .find(|&s| t.events[..steps.through(s)].iter().any(is_failover))
            .expect("the entry fails storage over");
        let before = storage(&t, failover - 1);
        assert_eq!(before.rows.len(), 1, "{before:?}");
        assert!(!before.rows[0].lost && before.rows[0].verdict == "accepted");
        let at = storage(&t, failover);
        assert_eq!(at.value, "100", "the standby never got the debit");
        let b = &at.rows[0];
        assert_eq!((b.writer.as_str(), b.token.as_str()), ("B", "34"));
        assert!(b.accepted && b.lost, "{b:?}");
        assert_eq!(b.verdict, "accepted · lost in failover");
        // A later write is not the lost one; the mark stays to the end.
        let end = storage(&t, steps.last());
        assert!(end.rows[0].lost);
        assert!(end.rows[1..].iter().all(|r| !r.lost), "{end:?}");
        // A run with no failover loses nothing.
        let headline = run(&Scenario::gc_pause());
        assert!(storage(&headline, headline.len())
            .rows
            .iter()
            .all(|r| !r.lost));
    }

    #[test]
    fn a_named_holder_goes_under_its_label_and_nobody_beside_it() {
        let t = run(&Scenario::gc_pause());
        let lines: Vec<(String, String)> = (0..=t.len())
            .map(|s| storage(&t, s))
            .map(|m| (m.holder, m.believers))
            .collect();
        assert!(lines.iter().any(|(h, _)| h == "B (token 34, until 60 ms)"));
        for (holder, believers) in &lines {
            assert_eq!(below_label(holder), holder != "nobody", "{holder}");
            assert!(!below_label(believers), "{believers}");
        }
        assert!(below_label("A and B and C"));
    }

    #[test]
    fn a_random_token_is_a_long_figure_and_a_counter_token_is_not() {
        let t = run(&Scenario::uuid_token());
        let fence = storage(&t, t.len()).fence;
        assert_eq!(fence, "842162");
        assert!(long_figure(&fence));
        let t = run(&Scenario::gc_pause().with_policy(crate::core::FencingPolicy::Strict));
        assert!(!long_figure(&storage(&t, t.len()).fence));
        assert!(!long_figure("—"));
    }

    #[test]
    fn params_list_ttl_delays_and_pauses() {
        let sc = Scenario::gc_pause();
        let m = params(&sc, Some(&sc));
        assert_eq!(m.groups.len(), 2, "no delay field where nothing is delayed");
        let FieldGroup::Ttl(ttl) = &m.groups[0] else {
            panic!("{m:?}")
        };
        assert_eq!(
            (ttl.param, ttl.label.as_str(), ttl.value, ttl.min),
            (Param::Ttl, "Lease TTL (ms)", 30, 1)
        );
        let FieldGroup::Pause {
            name,
            start,
            length,
        } = &m.groups[1]
        else {
            panic!("{m:?}")
        };
        assert_eq!(name, "A");
        assert_eq!((start.actor, start.value, start.min), (Some(0), 5, 0));
        assert_eq!(
            (length.param, length.value, length.min),
            (Param::PauseLength, 50, 1)
        );
        let delayed = Scenario::delayed_packet();
        assert!(params(&delayed, Some(&delayed))
            .groups
            .iter()
            .any(|g| matches!(g, FieldGroup::Delay { .. })));
    }

    #[test]
    fn compare_reads_80_and_90() {
        let sc = Scenario::gc_pause();
        let m = compare(&run(&sc.clone().with_policy(FencingPolicy::Off)), &run(&sc));
        assert_eq!((m.off.value.as_str(), m.on.value.as_str()), ("80", "90"));
        // Off, the harm is a double charge (both debits are atomic: no update is lost).
        assert!(
            m.off.outcome.contains("double charge") && m.off.outcome.contains("ran twice"),
            "{m:?}"
        );
        assert!(!m.off.outcome.contains("lost update"));
        assert!(m.on.outcome.contains("stale_fence"), "{m:?}");
        assert_eq!(m.on_policy, "strict");
        assert!(!m.words);
    }

    #[test]
    fn story_has_the_question_narration_and_say_line() {
        let t = run(&Scenario::gc_pause());
        let m = story(&t, 1);
        assert!(m.narration.contains("gives token 33"), "{m:?}");
        assert_eq!(m.narration, story::Story::of(&t).narration(1));
        assert_eq!(m.say, story::Story::of(&t).say(1));
        assert!(m.question.is_some_and(|q| !q.is_empty()));
        let mut custom = Scenario::gc_pause();
        custom.id = "custom".to_owned();
        assert_eq!(story(&run(&custom), 0).question, None);
    }

    #[test]
    fn explorer_rows_offer_harmful_counterexamples_first() {
        let sc = Scenario::gc_pause();
        let mut x = Exploration::start(&sc);
        x.run(usize::MAX, 12.5);
        let m = explorer(&x);
        let stats = explore(&sc, ExploreSpec::all_policies(0, x.grid())).unwrap();
        assert_eq!(x.stats(), &stats[..]);
        let (off, strict) = (&m.rows[0], &m.rows[1]);
        assert_eq!(
            (off.policy, strict.policy),
            (FencingPolicy::Off, FencingPolicy::Strict)
        );
        assert!(
            off.examples[0].text.starts_with("ran twice: pause"),
            "{m:?}"
        );
        assert_eq!((off.examples[0].row, strict.examples[0].row), (0, 1));
        // Off measures out-of-order writes; a fencing policy refuses them by rule.
        assert!(off.order.is_some_and(Count::bad));
        assert!(m.rows[1..].iter().all(|r| r.order.is_none()));
        // Strict still lets late writes through: the cell is counted and marked bad.
        assert!(strict.late.bad());
        assert!(strict.examples[0].text.starts_with("ran twice: pause"));
        assert!(
            m.footnote.contains(&format!(
                "still accepted a write from a superseded lease in {} schedules",
                strict.late.0
            )) && m.footnote.contains("handoff barrier"),
            "{}",
            m.footnote
        );
        assert!(m.footnote.contains("does not stop the belief"));
        assert_eq!(m.done, m.total);
        assert!(m.status.as_deref().unwrap().ends_with("schedules · 13 ms"));
        // With no late write under strict, the footnote says so.
        let mut clean = stats.clone();
        clean[1].late_writes = 0;
        clean[1].two_believers = 0;
        assert_eq!(
            explorer_footnote(&clean),
            "Strict fencing accepted no write from a superseded lease in any schedule."
        );
    }
}
