//! The Animation export: the run on screen, step by step, as an animated GIF. Each step is
//! drawn by the page's own timeline components on a stage out of sight (so the page stays
//! where the user is, and usable), set in its punchline, rasterized with its narration as
//! caption, and handed to [`crate::view::animation`] to encode; one frame a task, with a
//! progress bar.

use leptos::prelude::*;
use leptos::task::spawn_local;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use super::export;
use super::split::Failed;
use super::timeline::{Drawing, GridView};
use super::timers::now_ms;
use crate::core::{story, Trace};
use crate::lab::comparison;
use crate::view::animation::{delay_cs, frame_svg, punchline, Animation, Palette, Size};
use crate::view::{options, panels, timeline};

/// The stage's drawing.
const STAGE: &str = ".export-stage svg.timeline";

/// A finished file: its bytes, frames and the time it took.
struct Encoded {
    bytes: Vec<u8>,
    frames: usize,
    ms: f64,
}

/// The Animation button and its size; while it encodes, `progress` counts the frames and
/// `status` says so, then what came of it.
#[component]
pub(super) fn AnimationExport(
    trace: Memo<Arc<Trace>>,
    status: RwSignal<String>,
    progress: RwSignal<Option<(usize, usize)>>,
) -> impl IntoView {
    let size = RwSignal::new(Size::Hd);
    // The run being drawn and the step on the stage, while encoding.
    let staged = RwSignal::new(None::<Arc<Trace>>);
    let frame = RwSignal::new(0_usize);
    let start = move |_| {
        if progress.get_untracked().is_some() {
            return;
        }
        let t = trace.get_untracked();
        let size = size.get_untracked();
        let name = format!("fencing-lab-{}-{}.gif", t.scenario.id, size.code());
        progress.set(Some((0, story::Steps::of(&t).last() + 1)));
        status.set(format!("Encoding {name}, a frame a step…"));
        staged.set(Some(Arc::clone(&t)));
        spawn_local(async move {
            let done = encode(t, size, frame, progress).await;
            staged.set(None);
            progress.set(None);
            status.set(match done {
                Ok(e) => {
                    export::save_bytes(&e.bytes, &name, "image/gif");
                    // Tenths of a second by hand: `{:.1}` would bring float formatting in.
                    let tenths = (e.ms / 100.0).round() as u64;
                    format!(
                        "Saved {name}: {} frames, {} KB, encoded in {}.{} s.",
                        e.frames,
                        e.bytes.len().div_ceil(1024),
                        tenths / 10,
                        tenths % 10
                    )
                }
                Err(Failed::Said(why)) => format!("The animation was not made: {why}."),
                Err(Failed::NotFetched) => "The animation was not made: its encoder could not \
                                            be fetched from the page's server. Try again."
                    .to_owned(),
            });
        });
    };
    let sizes = options(Size::ALL.map(|s| (s.code().to_owned(), s.label().to_owned(), "")));
    view! {
        // The menu stays open while the stage inside it draws each frame (ui::tools).
        <button
            class="ghost"
            data-keeps-menu
            on:click=start
            prop:disabled=move || progress.get().is_some()
            title="Export the run step by step as an animated GIF: the question and the balance in every frame, each step's narration as its caption, the outcome off and on at the end"
        >
            "Animation"
        </button>
        <select
            aria-label="Animation size"
            inner_html=sizes
            prop:value=move || size.get().code()
            on:change:target=move |e| {
                if let Some(s) = Size::from_code(&e.target().value()) {
                    size.set(s);
                }
            }
        ></select>
        {move || {
            staged
                .get()
                .map(|t| super::split::lazily(
                    draw_stage(),
                    move |draw| draw(Arc::clone(&t), frame),
                ))
        }}
    }
}

/// The run's timeline on the stage, not draggable, in the page's words (a pause named by
/// its cause).
#[component]
fn StageTimeline(trace: Memo<Arc<Trace>>, step: Memo<usize>) -> impl IntoView {
    let grid = Memo::new(move |_| trace.with(|t| timeline::grid(t)));
    let drawn = Memo::new(move |_| trace.with(|t| timeline::model(t, step.get(), true)));
    view! {
        <svg
            class="timeline original"
            role="img"
            aria-label="Timeline"
            viewBox=move || drawn.with(|m| m.view_box.clone())
        >
            <GridView grid />
            <Drawing model=drawn live=false grab=None />
        </svg>
    }
}

type DrawStage = fn(Arc<Trace>, RwSignal<usize>) -> AnyView;

/// The stage's drawing, in the exporters' chunk with the encoder: the first export fetches
/// both (the stage is drawn before the encoder asks for its first frame, a task later).
#[leptos::wasm_split::wasm_split(exports, fallible, wasm_split_path = ::leptos::wasm_split)]
fn draw_stage() -> Result<DrawStage, Failed> {
    Ok(|t, frame| {
        let run = Memo::new(move |_| Arc::clone(&t));
        let step = Memo::new(move |_| frame.get());
        view! {
            <div class="export-stage" aria-hidden="true">
                <StageTimeline trace=run step />
            </div>
        }
        .into_any()
    })
}

/// Draws and encodes every step of `t`, from the start to the end, reporting each frame.
/// The GIF encoder is split off the page's wasm, in the exporters' chunk: the first export
/// fetches it.
#[leptos::wasm_split::wasm_split(
    exports,
    fallible,
    wasm_split_path = ::leptos::wasm_split,
    return_wrapper(let encoding = _; { encoding.await } -> Result<Encoded, Failed>)
)]
fn encode(
    t: Arc<Trace>,
    size: Size,
    frame: RwSignal<usize>,
    progress: RwSignal<Option<(usize, usize)>>,
) -> Pin<Box<dyn Future<Output = Result<Encoded, Failed>>>> {
    Box::pin(async move { Ok(encoding(t, size, frame, progress).await?) })
}

/// [`encode`]'s work, in the encoder's chunk.
async fn encoding(
    t: Arc<Trace>,
    size: Size,
    frame: RwSignal<usize>,
    progress: RwSignal<Option<(usize, usize)>>,
) -> Result<Encoded, String> {
    let began = now_ms();
    // One frame a story step (a run of identical events is one step, as on the page).
    let words = story::Story::of(&t);
    let steps = words.last();
    let (w, h) = size.dims();
    // The off / on cards the page shows for this run; every frame keeps room for the last
    // frame's outcome, so the drawing stays put.
    let (off, on) = comparison(&t);
    let cards = panels::compare(&off, &on);
    let room = punchline(&t, steps, &cards).outcome_lines();
    let framing = |step: usize| frame_svg(&punchline(&t, step, &cards), &t, room);
    // The palette from the last step, which shows every colour the run uses.
    frame.set(steps);
    export::draw_frame(STAGE, w, h, &words.narration(steps), &framing(steps))
        .await
        .map_err(|e| export::reason(&e))?;
    let colours: Vec<[u8; 3]> = export::frame_colours(STAGE)
        .chunks_exact(3)
        .map(|c| [c[0], c[1], c[2]])
        .collect();
    let Some((&background, rest)) = colours.split_first() else {
        return Err("there is no timeline to draw".to_owned());
    };
    let mut gif =
        Animation::new((w, h), Palette::new(background, rest)).map_err(|e| e.to_string())?;
    let mut rgba = vec![0_u8; usize::from(w) * usize::from(h) * 4];
    for step in 0..=steps {
        frame.set(step);
        let text = words.narration(step);
        export::draw_frame(STAGE, w, h, &text, &framing(step))
            .await
            .map_err(|e| export::reason(&e))?;
        if !export::take_frame(&mut rgba) {
            return Err("the browser drew no frame".to_owned());
        }
        gif.push(&rgba, delay_cs(&text, step == steps))
            .map_err(|e| e.to_string())?;
        progress.set(Some((step + 1, steps + 1)));
    }
    let frames = gif.frames();
    let bytes = gif.finish().map_err(|e| e.to_string())?;
    Ok(Encoded {
        bytes,
        frames,
        ms: now_ms() - began,
    })
}
