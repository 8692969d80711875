//! The rehearsal itself, in its own chunk: the start (the deck's path, what I got wrong,
//! picked entries, the night-before sheet, reset), the question with its two-minute timer,
//! the prediction, the reveal with each prediction marked at the step that decides it,
//! and the push-backs. The scoring is `lab::rehearse`'s; the lab plays the run.

mod start;

use gloo_timers::callback::{Interval, Timeout};
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use std::sync::atomic::AtomicBool;

use super::timers::now_ms;
use super::Dispatch;
use crate::core::deck::{self, DeckEntry};
use crate::core::FencingPolicy;
use crate::lab::rehearse::{
    choices, clock, score, setup, Mark, Phase, Prediction, Progress, Rehearsal, RehearseMsg, Side,
    ANSWER_SECS,
};
use crate::lab::{Lab, Msg, ScenarioEdit};

/// Where the browser keeps the progress (localStorage: it never leaves the page).
const STORE_KEY: &str = "fencing-lab.rehearse";

/// Everything a part of the rehearsal needs; `Copy`, so each handler holds one.
#[derive(Clone, Copy)]
pub(super) struct Ctx {
    pub(super) lab: RwSignal<Lab>,
    pub(super) dispatch: Dispatch,
    pub(super) r: RwSignal<Rehearsal>,
    pub(super) progress: RwSignal<Progress>,
    /// The policy the fencing-on run is played with (the comparison's, when predicted).
    on_policy: StoredValue<FencingPolicy>,
    /// The night-before sheet's markup, printed only.
    pub(super) sheet: RwSignal<String>,
}

impl Ctx {
    /// The entry being asked, if this build has it yet.
    fn entry(self) -> Option<&'static DeckEntry> {
        self.r.with_untracked(|r| r.entry()).and_then(deck::find)
    }

    /// Sends `msg`; when it asks an entry, the lab loads it (fetching the deck if needed).
    pub(super) fn send(self, msg: RehearseMsg) {
        let asking = |r: &Rehearsal| matches!(r.phase(), Phase::Ask { .. });
        let before = self.r.with_untracked(asking);
        let entry = self.entry(); // read before the update, which holds the signal
        self.r.update(|r| r.update(msg, entry));
        let now = self
            .r
            .with_untracked(|r| asking(r).then(|| r.entry()).flatten());
        if let (false, Some(id)) = (before, now) {
            super::deck::pick(self.dispatch, id.to_owned());
        }
    }

    /// The progress changed: kept in the browser.
    pub(super) fn save(self) {
        let Some(store) = window().local_storage().ok().flatten() else {
            return;
        };
        let text = self.progress.with_untracked(Progress::encode);
        let _ = match text.is_empty() {
            true => store.remove_item(STORE_KEY),
            false => store.set_item(STORE_KEY, &text),
        };
    }

    /// The lab plays the run on screen from its start, with the reveal on, under `policy`:
    /// back to step 0, then Play (the page's own, at its speed; Space pauses it).
    fn play(self, policy: FencingPolicy) {
        let d = self.dispatch;
        d.msg(ScenarioEdit::Policy(policy).into());
        if !self.lab.with_untracked(Lab::revealing) {
            d.msg(Msg::ToggleReveal);
        }
        d.msg(Msg::Reset);
        d.msg(Msg::TogglePlay);
    }
}

fn load_progress() -> Progress {
    let store = window().local_storage().ok().flatten();
    let text = store.and_then(|s| s.get_item(STORE_KEY).ok().flatten());
    text.map(|t| Progress::decode(&t)).unwrap_or_default()
}

/// Draws the rehearsal (the chunk's entry point).
pub(super) fn draw(open: RwSignal<bool>, lab: RwSignal<Lab>) -> AnyView {
    let dispatch = expect_context::<Dispatch>();
    // Its stylesheet (print included) comes with the chunk.
    static STYLED: AtomicBool = AtomicBool::new(false);
    super::split::adopt_style(&STYLED, include_str!("../../assets/rehearse.css"));
    let ctx = Ctx {
        lab,
        dispatch,
        r: RwSignal::new(Rehearsal::default()),
        progress: RwSignal::new(load_progress()),
        on_policy: StoredValue::new(FencingPolicy::Strict),
        sheet: RwSignal::new(String::new()),
    };
    // Which part is on screen: each is drawn once, when the rehearsal gets to it.
    let part = Memo::new(move |_| ctx.r.with(|r| std::mem::discriminant(r.phase())));
    let revealing = Memo::new(move |_| ctx.r.with(|r| matches!(r.phase(), Phase::Reveal { .. })));
    // Every change of the rehearsal's state puts the focus on the main button it shows.
    Effect::new(move |_| {
        ctx.r.track();
        Timeout::new(0, focus_primary).forget();
    });
    view! {
        <section
            class="rehearse"
            class:beside=move || revealing.get()
            role="dialog"
            aria-modal=move || (!revealing.get()).to_string()
            aria-label="Rehearse"
            data-testid="rehearse"
        >
            <div class="rehearse-head">
                <h2>"Rehearse"</h2>
                {move || {
                    (!matches!(ctx.r.with(|r| r.phase().clone()), Phase::Start))
                        .then(|| {
                            view! {
                                <button on:click=move |_| {
                                    ctx.send(RehearseMsg::Stop)
                                }>"Stop"</button>
                            }
                        })
                }}
                <button aria-keyshortcuts="Escape" on:click=move |_| open.set(false)>
                    "Close (Esc)"
                </button>
            </div>
            {move || {
                part.get();
                let phase = ctx.r.with_untracked(|r| r.phase().clone());
                match phase {
                    Phase::Start => start::start(ctx),
                    Phase::Ask { since_ms } => ask(ctx, since_ms),
                    Phase::Predict { secs } => predict(ctx, secs),
                    Phase::Reveal { marks, .. } => reveal(ctx, marks),
                    Phase::PushBack { .. } => push_back(ctx),
                    Phase::Done { next } => done(ctx, next),
                }
            }}
            <div class="night-sheet" inner_html=move || ctx.sheet.get()></div>
        </section>
    }
    .into_any()
}

/// Focuses the part's main button (or field), so Enter does the next thing.
fn focus_primary() {
    let el = document()
        .query_selector(".rehearse [data-primary]")
        .ok()
        .flatten();
    if let Some(el) = el.and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok()) {
        let _ = el.focus();
    }
}

/// The question, the scenario's setup and the two-minute timer; nothing else.
fn ask(ctx: Ctx, since_ms: f64) -> AnyView {
    let now = RwSignal::new(now_ms());
    let ticker = StoredValue::new_local(Some(Interval::new(250, move || now.set(now_ms()))));
    on_cleanup(move || {
        let _ = ticker.try_set_value(None);
    });
    let id = ctx.r.with_untracked(|r| r.entry()).unwrap_or_default();
    let ready = Memo::new(move |_| ctx.lab.with(|l| l.scenario().id == id));
    let secs = move || ((now.get() - since_ms).max(0.0) / 1000.0) as u32;
    let left = move || match ANSWER_SECS.checked_sub(secs()) {
        Some(left) => format!("{} left", clock(left)),
        None => format!("{} over", clock(secs() - ANSWER_SECS)),
    };
    let question = move || {
        ready.get().then(|| {
            let e = deck::find(id)?;
            let setup = ctx.lab.with_untracked(|l| setup(l.trace()));
            Some(view! {
                <h3 class="rehearse-question">{e.question}</h3>
                <p class="rehearse-setup">{setup}</p>
            })
        })
    };
    view! {
        <p class="rehearse-kicker">
            {format!(
                "Question {} · answer out loud, as in the interview",
                ctx.r.with_untracked(Rehearsal::asked),
            )}
        </p>
        {move || question().flatten()}
        {move || (!ready.get()).then(|| view! { <p>"Fetching the question…"</p> })}
        <p
            class="rehearse-timer"
            class:over=move || { secs() > ANSWER_SECS }
            role="timer"
            aria-label="Time for your answer"
        >
            {left}
        </p>
        <button
            data-primary
            class="primary"
            disabled=move || !ready.get()
            on:click=move |_| {
                ctx.send(RehearseMsg::Answered {
                    now_ms: now_ms(),
                })
            }
        >
            "I've answered: predict"
        </button>
    }
    .into_any()
}

/// The prediction: the figure storage ends at with fencing off and on, and which writes it
/// refuses; the offers come from the runs.
fn predict(ctx: Ctx, secs: u32) -> AnyView {
    let (c, on_word) = ctx.lab.with_untracked(|l| {
        let (off, on) = l.compare();
        (choices(off, on), on.scenario.policy.short())
    });
    let (off_pick, on_pick) = (RwSignal::new(String::new()), RwSignal::new(String::new()));
    let ticked = RwSignal::new(Vec::<usize>::new());
    let options = move || {
        std::iter::once(view! { <option value="">"choose…"</option> }.into_any())
            .chain(
                c.values
                    .clone()
                    .into_iter()
                    .map(|v| view! { <option value=v.clone()>{v.clone()}</option> }.into_any()),
            )
            .collect::<Vec<_>>()
    };
    let select = move |label: String, pick: RwSignal<String>, primary: bool| {
        view! {
            <label class="rehearse-field">
                <span>{label}</span>
                <select
                    data-primary=primary.then_some("")
                    on:change:target=move |e| pick.set(e.target().value())
                    prop:value=move || pick.get()
                >
                    {options()}
                </select>
            </label>
        }
    };
    let writes = c.writes.iter().enumerate().map(|(n, w)| {
        let flip = move |_| {
            ticked.update(|t| match t.iter().position(|x| *x == n) {
                Some(i) => {
                    t.remove(i);
                }
                None => t.push(n),
            })
        };
        view! {
            <label class="rehearse-check">
                <input type="checkbox" on:change=flip />
                {w.clone()}
            </label>
        }
    });
    let figure = c.figure;
    let play = move |_| {
        let p = Prediction {
            off: off_pick.get_untracked(),
            on: on_pick.get_untracked(),
            refused: ticked.get_untracked(),
        };
        let (marks, policy) = ctx.lab.with_untracked(|l| {
            let (off, on) = l.compare();
            (score(off, on, &p), on.scenario.policy)
        });
        if let Some(id) = ctx.r.with_untracked(|r| r.entry()) {
            ctx.progress.update(|pr| pr.record(id, &marks, secs));
            ctx.save();
        }
        ctx.on_policy.set_value(policy);
        ctx.send(RehearseMsg::Predicted(marks));
        ctx.play(FencingPolicy::Off);
    };
    view! {
        <p class="rehearse-kicker">
            {format!(
                "Answered in {} (of {}). Now predict how the run ends.",
                clock(secs),
                clock(ANSWER_SECS),
            )}
        </p>
        {select(format!("With fencing off, the {figure} ends at"), off_pick, true)}
        {select(format!("With fencing on ({on_word}), the {figure} ends at"), on_pick, false)}
        <fieldset class="rehearse-writes">
            <legend>"With fencing on, storage refuses (tick none if it refuses none)"</legend>
            {writes.collect::<Vec<_>>()}
        </fieldset>
        <button
            class="primary"
            disabled=move || off_pick.with(String::is_empty) || on_pick.with(String::is_empty)
            on:click=play
        >
            "Play the run"
        </button>
    }
    .into_any()
}

/// Beside the timeline while the run plays: each prediction, marked once the run on
/// screen reaches the step that decides it.
fn reveal(ctx: Ctx, marks: Vec<Mark>) -> AnyView {
    let side = Memo::new(move |_| {
        ctx.r.with(|r| match r.phase() {
            Phase::Reveal { side, .. } => *side,
            _ => Side::On,
        })
    });
    let step = Memo::new(move |_| ctx.lab.with(Lab::step));
    let last = Memo::new(move |_| ctx.lab.with(Lab::last_step));
    let word = |s: Side| if s == Side::Off { "off" } else { "on" };
    let heading = move || {
        format!(
            "Fencing {}: step {} of {}",
            word(side.get()),
            step.get(),
            last.get()
        )
    };
    let items = marks
        .into_iter()
        .map(|m| {
            let m2 = m.clone();
            let decided = Memo::new(move |_| m2.decided(side.get(), step.get()));
            let class = move || match (decided.get(), m.right) {
                (false, _) => "pending",
                (true, true) => "right",
                (true, false) => "wrong",
            };
            let words = {
                let m = m.clone();
                move || match decided.get() {
                    false => format!("{} … (you said {}): marked at its step.", m.what, m.said),
                    true => format!(
                        "{} {} {} (step {} of the fencing-{} run). You said {}.",
                        if m.right { "✓ Right." } else { "✗ Wrong." },
                        m.what,
                        m.truth,
                        m.step,
                        word(m.side),
                        m.said
                    ),
                }
            };
            view! {
                <li class=class data-testid=format!("mark-{}", m.key)>
                    {words}
                </li>
            }
        })
        .collect::<Vec<_>>();
    let next = move |_| match side.get_untracked() {
        Side::Off => {
            ctx.send(RehearseMsg::FencingOn);
            ctx.play(ctx.on_policy.get_value());
        }
        Side::On => ctx.send(RehearseMsg::PushBacks),
    };
    view! {
        <h3 aria-live="polite">{heading}</h3>
        <p class="rehearse-hint">
            "The run plays (Space pauses; → or Next step steps): each prediction is marked at the step that decides it."
        </p>
        <ul class="rehearse-marks">{items}</ul>
        <div class="rehearse-actions">
            <button
                aria-keyshortcuts="ArrowRight"
                title="Step forward (→)"
                on:click=move |_| ctx.dispatch.msg(Msg::Forward)
            >
                "Next step"
            </button>
            <button data-primary class="primary" on:click=next>
                {move || match side.get() {
                    Side::Off => "Now with fencing on",
                    Side::On => "Their push-back",
                }}
            </button>
        </div>
    }
    .into_any()
}

/// The entry's push-back, and its answer once the candidate has had a go.
fn push_back(ctx: Ctx) -> AnyView {
    let at = Memo::new(move |_| {
        ctx.r.with(|r| match r.phase() {
            Phase::PushBack { index, shown } => (*index, *shown),
            _ => (0, false),
        })
    });
    let Some(entry) = ctx.entry() else {
        return ().into_any();
    };
    let all = entry.pushbacks.len();
    (move || {
        let (index, shown) = at.get();
        let p = entry.pushbacks.get(index)?;
        let answer = shown.then(|| {
            view! {
                <p class="rehearse-answer" data-testid="pushback-answer">
                    {p.answer}
                </p>
                <p class="rehearse-source">{format!("Source: {}", p.source)}</p>
                <button
                    data-primary
                    class="primary"
                    on:click=move |_| {
                        ctx.send(RehearseMsg::Next {
                            now_ms: now_ms(),
                        })
                    }
                >
                    "Next"
                </button>
            }
        });
        let ask = (!shown).then(|| {
            view! {
                <p class="rehearse-hint">"Answer it out loud first."</p>
                <button
                    data-primary
                    class="primary"
                    on:click=move |_| ctx.send(RehearseMsg::ShowAnswer)
                >
                    "Show the answer"
                </button>
            }
        });
        Some(view! {
            <p class="rehearse-kicker">{format!("They push back ({} of {all})", index + 1)}</p>
            <h3 class="rehearse-question">{p.question}</h3>
            {answer}
            {ask}
        })
    })
    .into_any()
}

/// How the entry went, and what comes next.
fn done(ctx: Ctx, next: Option<&'static str>) -> AnyView {
    let id = ctx.r.with_untracked(|r| r.entry()).unwrap_or_default();
    let summary = ctx.progress.with_untracked(|p| {
        p.of(id).map(|rec| {
            format!(
                "{} of 3 predictions right; answered in {} (of {}).",
                3 - rec.wrong.len(),
                clock(rec.secs),
                clock(ANSWER_SECS)
            )
        })
    });
    let title = next.and_then(|n| deck::TITLES.iter().find(|(i, _)| *i == n).map(|(_, t)| *t));
    view! {
        <p class="rehearse-kicker">"Done with this question"</p>
        <p data-testid="rehearse-summary">{summary}</p>
        <button
            data-primary
            class="primary"
            on:click=move |_| {
                ctx.send(RehearseMsg::Next {
                    now_ms: now_ms(),
                })
            }
        >
            {match title {
                Some(t) => format!("Next question: {t}"),
                None => "That was the last: back to the start".to_owned(),
            }}
        </button>
    }
    .into_any()
}
