//! The rehearsal's start: the deck's path from the headline, "rehearse what I got wrong",
//! entries picked by hand (to rehearse, or to print as the night-before sheet), and a
//! reset of the progress kept in the browser.

use gloo_timers::callback::Timeout;
use leptos::prelude::*;

use super::Ctx;
use crate::core::deck;
use crate::lab::rehearse::{clock, Progress, RehearseMsg, ANSWER_SECS};
use crate::lab::rehearse_sheet::{sheet_entry, sheet_markup};
use crate::lab::Msg;

use crate::ui::timers::now_ms;

/// "rehearsed 2×, wrong: refused, 1:35": one entry's progress, or nothing yet.
fn progress_line(p: &Progress, id: &str) -> String {
    let Some(r) = p.of(id) else {
        return String::new();
    };
    let wrong = match r.wrong.is_empty() {
        true => "all right".to_owned(),
        false => format!("wrong: {}", r.wrong.join(", ")),
    };
    let over = if r.secs > ANSWER_SECS {
        " (over 2:00)"
    } else {
        ""
    };
    format!("rehearsed {}×, {wrong}, {}{over}", r.tries, clock(r.secs))
}

pub(super) fn start(ctx: Ctx) -> AnyView {
    let chosen = RwSignal::new(Vec::<&'static str>::new());
    let wrong = Memo::new(move |_| ctx.progress.with(Progress::wrong));
    let rows = deck::TITLES
        .iter()
        .enumerate()
        .map(|(i, (id, title))| {
            let id: &'static str = id;
            let flip = move |_| {
                chosen.update(|c| match c.iter().position(|x| *x == id) {
                    Some(at) => {
                        c.remove(at);
                    }
                    None => c.push(id),
                })
            };
            view! {
                <li>
                    <label>
                        <input
                            type="checkbox"
                            on:change=flip
                            prop:checked=move || chosen.with(|c| c.contains(&id))
                        />
                        {format!("{}. {title}", i + 1)}
                    </label>
                    <span class="rehearse-progress" data-testid=format!("progress-{id}")>
                        {move || ctx.progress.with(|p| progress_line(p, id))}
                    </span>
                </li>
            }
        })
        .collect::<Vec<_>>();
    let entries = move |ids: Vec<String>| {
        ctx.send(RehearseMsg::Entries {
            ids,
            now_ms: now_ms(),
        })
    };
    let none_chosen = move || chosen.with(Vec::is_empty);
    let walk = move |_| ctx.send(RehearseMsg::Walk { now_ms: now_ms() });
    let own = |ids: Vec<&str>| ids.into_iter().map(str::to_owned).collect::<Vec<_>>();
    view! {
        <p class="rehearse-hint">
            "The page asks a deck question as an interviewer would. Answer out loud in two minutes, predict how the run ends, watch it play, then take their push-back. Your progress stays in this browser."
        </p>
        <div class="rehearse-actions">
            <button data-primary class="primary" on:click=walk>
                "Start with the headline"
            </button>
            <button
                disabled=move || wrong.with(Vec::is_empty)
                on:click=move |_| entries(own(wrong.get_untracked()))
            >
                {move || format!("Rehearse what I got wrong ({})", wrong.with(Vec::len))}
            </button>
        </div>
        <fieldset class="rehearse-entries">
            <legend>"Or pick entries"</legend>
            <ul>{rows}</ul>
        </fieldset>
        <div class="rehearse-actions">
            <button disabled=none_chosen on:click=move |_| entries(own(chosen.get_untracked()))>
                "Rehearse the chosen"
            </button>
            <button disabled=none_chosen on:click=move |_| print_sheet(ctx, chosen.get_untracked())>
                "Print the night-before sheet"
            </button>
            <button
                disabled=move || ctx.progress.with(|p| p.records().is_empty())
                on:click=move |_| {
                    ctx.progress.set(Progress::default());
                    ctx.save();
                }
            >
                "Reset my progress"
            </button>
        </div>
    }
    .into_any()
}

/// The chosen entries as the night-before sheet, then the browser's print dialog (the
/// print stylesheet shows the sheet alone). The deck is fetched first if need be.
fn print_sheet(ctx: Ctx, ids: Vec<&'static str>) {
    let any = ids.iter().find(|i| deck::needs_fetch(i)).copied();
    crate::ui::deck::when_in(
        any.unwrap_or(deck::HEADLINE.id).to_owned(),
        move |fetched| {
            if let Err(why) = fetched {
                return ctx.dispatch.msg(Msg::Refuse(why.to_owned()));
            }
            let mut order: Vec<usize> = ids
                .iter()
                .filter_map(|i| deck::TITLES.iter().position(|(t, _)| t == i))
                .collect();
            order.sort_unstable();
            let entries: Vec<_> = order
                .into_iter()
                .filter_map(|n| deck::find(deck::TITLES[n].0))
                .map(sheet_entry)
                .collect();
            ctx.sheet.set(sheet_markup(&entries));
            // Printed a task later, once the sheet is in the page.
            Timeout::new(0, || {
                let _ = window().print();
            })
            .forget();
        },
    );
}
