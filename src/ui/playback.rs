//! The playback row under the timeline: reset, step, play, speed, the scrubber and the
//! clock; embedded, a link to the same view on the full page too.

use leptos::prelude::*;

use std::sync::Arc;

use super::Dispatch;
use crate::core::{story, Trace};
use crate::lab::Msg;
use crate::share;
use crate::view::{options, Act};

#[component]
pub(super) fn Playback(
    trace: Memo<Arc<Trace>>,
    step: Memo<usize>,
    playing: Memo<bool>,
    speed: Memo<u64>,
    embed: Memo<bool>,
) -> impl IntoView {
    let dispatch = expect_context::<Dispatch>();
    // The story's steps (a run of identical events is one), for the counter and the scrubber.
    let story_steps = Memo::new(move |_| trace.with(|t| story::Steps::of(t)));
    let clock = move || {
        let s = step.get();
        let (last, events) = story_steps.with(|st| (st.last(), st.through(s)));
        trace.with(|t| {
            format!(
                "step {s} / {last} · t = {}",
                story::time_label(&t.scenario, t.snapshot_at(events).at)
            )
        })
    };
    // The scrubber's end moves only when a run gains or loses steps, not on every drag.
    let steps = Memo::new(move |_| story_steps.with(story::Steps::last));
    // The same view on the full page, from inside someone's frame.
    let full_page = move || {
        let s = step.get();
        trace.with(|t| share::encode(&t.scenario, s))
    };
    view! {
        <section class="controls" aria-label="Playback">
            <button data-act=Act::Reset.code()>"Reset"</button>
            <button data-act=Act::Back.code() aria-keyshortcuts="ArrowLeft">
                <span aria-hidden="true">"◀ "</span>
                "Step back"
            </button>
            <button class="primary" data-act=Act::Play.code() aria-keyshortcuts="Space">
                {move || if playing.get() { "Pause" } else { "Play" }}
            </button>
            <button data-act=Act::Forward.code() aria-keyshortcuts="ArrowRight">
                "Step forward"
                <span aria-hidden="true">" ▶"</span>
            </button>
            <label class="inline">
                "Speed "
                <select
                    on:change:target=move |e| {
                        if let Ok(v) = e.target().value().parse::<u64>() {
                            dispatch.msg(Msg::SetSpeed(v));
                        }
                    }
                    inner_html=options(
                        [("50", "0.5×"), ("100", "1×"), ("200", "2×"), ("400", "4×")]
                            .map(|(v, l)| (v.to_owned(), l.to_owned(), "")),
                    )
                    prop:value=move || speed.get().to_string()
                ></select>
            </label>
            <input
                class="scrubber"
                type="range"
                aria-label="Scrubber"
                min="0"
                prop:max=move || steps.get().to_string()
                prop:value=move || step.get().to_string()
                on:input:target=move |e| {
                    if let Ok(v) = e.target().value().parse::<usize>() {
                        dispatch.msg(Msg::Seek(v));
                    }
                }
            />
            <span class="clock" data-testid="clock">
                {clock}
            </span>
            <a
                class="full-page"
                hidden=move || !embed.get()
                href=full_page
                target="_blank"
                rel="noopener"
            >
                "Open in fencing-lab ↗"
            </a>
        </section>
    }
}
