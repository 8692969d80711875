//! The presenter's laser pointer (`l` in presenter mode): a short trail follows the mouse or
//! finger and fades, so a screen share shows where the presenter points; and the timeline
//! marker under it shows its tooltip in the page, since a native `<title>` tooltip appears
//! late, if at all, and a screen share often leaves it out. Drawing only: nothing here reaches
//! the lab, and the layer lets every pointer event through to the page beneath.

use gloo_timers::callback::Timeout;
use leptos::ev;
use leptos::html::Div;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// How long a dot of the trail lives; its CSS animation (`laser-fade`) lasts as long.
const DOT_MS: u32 = 600;

/// The pointer while it is on; its code is a chunk of its own, fetched the first time.
#[component]
pub(super) fn LaserPointer(on: Memo<bool>) -> impl IntoView {
    move || {
        on.get()
            .then(|| super::split::lazily(draw_laser(), move |draw| draw(on)))
    }
}

type DrawLaser = fn(Memo<bool>) -> AnyView;

#[leptos::wasm_split::wasm_split(laser, fallible, wasm_split_path = ::leptos::wasm_split)]
fn draw_laser() -> Result<DrawLaser, super::split::Failed> {
    static STYLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    super::split::adopt_style(&STYLED, include_str!("../../assets/laser.css"));
    Ok(|on| view! { <Laser on /> }.into_any())
}

#[component]
fn Laser(on: Memo<bool>) -> impl IntoView {
    let layer = NodeRef::<Div>::new();
    // The marker's words and where to show them, while the pointer is over one.
    let tip = RwSignal::new(None::<(String, f64, f64)>);
    let moved = window_event_listener(ev::pointermove, move |e| {
        if !on.get_untracked() {
            return;
        }
        let (x, y) = (f64::from(e.client_x()), f64::from(e.client_y()));
        if let Some(layer) = layer.get_untracked() {
            drop_dot(&layer, x, y);
        }
        tip.set(marker_words(x, y).map(|words| (words, x, y)));
    });
    on_cleanup(move || moved.remove());
    Effect::new(move |_| {
        if !on.get() {
            tip.set(None);
        }
    });
    view! {
        <div class="laser" class:on=move || on.get() node_ref=layer aria-hidden="true">
            {move || {
                tip.get()
                    .map(|(words, x, y)| {
                        view! {
                            <div
                                class="laser-tip"
                                data-testid="laser-tip"
                                style:transform=format!("translate({}px, {}px)", x + 16.0, y + 16.0)
                            >
                                {words}
                            </div>
                        }
                    })
            }}
        </div>
    }
}

/// One dot of the trail at (`x`, `y`); it fades by CSS and removes itself after [`DOT_MS`].
fn drop_dot(layer: &web_sys::HtmlDivElement, x: f64, y: f64) {
    let Some(dot) = layer
        .owner_document()
        .and_then(|d| d.create_element("span").ok())
        .and_then(|el| el.dyn_into::<web_sys::HtmlElement>().ok())
    else {
        return;
    };
    dot.set_class_name("laser-dot");
    let _ = dot
        .style()
        .set_property("transform", &format!("translate({x}px, {y}px)"));
    if layer.append_child(&dot).is_ok() {
        Timeout::new(DOT_MS, move || dot.remove()).forget();
    }
}

/// The tooltip of the timeline marker at (`x`, `y`), if the pointer is over one.
fn marker_words(x: f64, y: f64) -> Option<String> {
    let doc = web_sys::window()?.document()?;
    let marker = doc
        .element_from_point(x as f32, y as f32)?
        .closest("svg.timeline g.ev")
        .ok()??;
    let words = marker
        .query_selector(":scope > title")
        .ok()??
        .text_content()?;
    (!words.is_empty()).then_some(words)
}
