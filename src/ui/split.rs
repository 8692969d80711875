//! Parts of the page's wasm split off into chunks of their own (`wasm_split`; the build
//! splits them out in scripts/split/wasm-bindgen), each fetched the first time it is used,
//! so that opening the page does not wait for them.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use leptos::prelude::*;
use leptos::wasm_split::SplitLoaderError;

/// Why a split-off part gave no answer. Either way the page stays as it was, and asking
/// again fetches again.
pub enum Failed {
    /// The part's own reason.
    Said(String),
    /// Its chunk could not be fetched (e.g. the connection dropped since the page opened).
    NotFetched,
}

impl From<SplitLoaderError> for Failed {
    fn from(_: SplitLoaderError) -> Self {
        Failed::NotFetched
    }
}

impl From<String> for Failed {
    fn from(reason: String) -> Self {
        Failed::Said(reason)
    }
}

/// What a part of the page drawn from its own chunk says in its place when the chunk could
/// not be fetched.
const PART_NOT_FETCHED: &str =
    "This part of the page could not be fetched from the page's server. Reload the page to try again.";

/// A part of the page whose view code is a chunk of its own, fetched when the part is first
/// shown: `part` is the split point, which hands over the part's draw function (plain data),
/// and `draw` calls it. Nothing shows until the chunk is in.
pub(super) fn lazily<D: Copy + Send + Sync + 'static>(
    part: impl Future<Output = Result<D, Failed>> + 'static,
    draw: impl Fn(D) -> AnyView + Send + Sync + 'static,
) -> AnyView {
    let drawer = async move { part.await.map(|d| Arc::new(move || draw(d)) as Drawer) };
    fetched_then_drawn(Box::pin(drawer))
}

/// A fetched part's drawing, with its arguments in it.
type Drawer = Arc<dyn Fn() -> AnyView + Send + Sync>;

/// [`lazily`] without its types: one copy of the fetch-and-draw code serves every part.
fn fetched_then_drawn(part: Pin<Box<dyn Future<Output = Result<Drawer, Failed>>>>) -> AnyView {
    let fetched = RwSignal::new(None::<Option<Drawer>>);
    leptos::task::spawn_local(async move { fetched.set(Some(part.await.ok())) });
    (move || match fetched.get()? {
        Some(draw) => Some(draw()),
        None => Some(
            view! {
                <p class="error" role="alert">
                    {PART_NOT_FETCHED}
                </p>
            }
            .into_any(),
        ),
    })
    .into_any()
}

/// A part's stylesheet comes with its chunk: adopted once (`done` says whether it was), so
/// the first screen's CSS does not carry it; the page's CSP, which allows no inline style,
/// allows a constructed sheet. Call it from the chunk's own code, so `css` is the chunk's.
pub(super) fn adopt_style(done: &std::sync::atomic::AtomicBool, css: &str) {
    if done.swap(true, std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    let Ok(sheet) = web_sys::CssStyleSheet::new() else {
        return;
    };
    let _ = sheet.replace_sync(css);
    let doc = document();
    let sheets = doc.adopted_style_sheets();
    sheets.push(&sheet);
    doc.set_adopted_style_sheets(&sheets);
}
