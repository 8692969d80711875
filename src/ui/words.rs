//! The story's far words (`core::story::far`: renewals, requests on their way, the lock's
//! faults, a client cut off), split off the page's wasm: the headline has none of them. The
//! deck's chunk brings them too; otherwise a run that needs them (a link, a What if…, a
//! field, a recording) is drawn once they are fetched, and until then the page shows what
//! it showed.

use leptos::prelude::*;

use super::split::Failed;
use crate::core::story;
use crate::lab::{Lab, Msg};
use crate::share;

/// What the page says when the far words could not be fetched.
const NOT_FETCHED: &str =
    "Part of this run's words could not be fetched from the page's server. Reload the page to try again.";

/// The far words, from their chunk: the first call fetches it.
#[leptos::wasm_split::wasm_split(far_words, fallible, wasm_split_path = ::leptos::wasm_split)]
fn far_words() -> Result<(), Failed> {
    story::provide_far_words();
    Ok(())
}

/// Whether every run the lab draws with words (the run on screen, and the fork's original)
/// has them in this build.
fn worded(l: &Lab) -> bool {
    story::worded(l.trace()) && l.fork_of().is_none_or(|t| story::worded(t))
}

/// Applies `m` to the lab; the page redraws at once, or, if the new run needs the far
/// words, once they are in (if they cannot be fetched, it draws without them and says so).
pub(super) fn update(lab: RwSignal<Lab>, m: Msg) {
    let mut ready = true;
    lab.maybe_update(|l| {
        l.update(m);
        ready = worded(l);
        ready
    });
    if !ready {
        wasm_bindgen_futures::spawn_local(async move {
            match far_words().await {
                Ok(()) => lab.notify(),
                Err(_) => lab.update(|l| l.update(Msg::Refuse(NOT_FETCHED.to_owned()))),
            }
        });
    }
}

/// Does `then` once the run that link `hash` opens has its words: at once, or after
/// fetching them (so a shared link is not drawn first without them); a link that does not
/// load needs nothing.
pub(super) fn when_worded(hash: &str, then: impl FnOnce() + 'static) {
    let needs =
        share::decode(hash).is_ok_and(|view| !story::worded(&crate::core::run(&view.scenario)));
    if !needs {
        return then();
    }
    wasm_bindgen_futures::spawn_local(async move {
        let _ = far_words().await;
        then();
    });
}
