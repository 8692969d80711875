//! The deck past the headline, split off the page's wasm: the other entries' builders and
//! notes are a chunk of their own, fetched the first time one of them is picked or linked.
//! Once fetched, [`deck::find`] has them all and everything else works as natively.

use super::split::Failed;
use super::Dispatch;
use crate::core::deck::{self, DeckEntry};
use crate::lab::Msg;

/// What the page says when the deck's chunk could not be fetched.
const NOT_FETCHED: &str =
    "The deck's other scenarios could not be fetched from the page's server. Try again.";

/// The whole deck, from its chunk: the first call fetches it. It brings the story's far
/// words too (`ui::words`), so an entry is drawn without a second fetch.
#[leptos::wasm_split::wasm_split(deck_entries, fallible, wasm_split_path = ::leptos::wasm_split)]
fn whole_deck() -> Result<&'static [DeckEntry], Failed> {
    crate::core::story::provide_far_words();
    Ok(deck::DECK)
}

/// Makes entry `id` available to [`deck::find`], fetching the deck if this is its first
/// use. An id that names no entry needs nothing: the lab or the link says it is unknown.
pub(super) async fn fetch_for(id: &str) -> Result<(), &'static str> {
    if deck::needs_fetch(id) {
        deck::provide(whole_deck().await.map_err(|_| NOT_FETCHED)?);
    }
    Ok(())
}

/// Does `then` once entry `id` is available: at once if it is, else after fetching the
/// deck, with why if it could not be fetched.
pub(super) fn when_in(id: String, then: impl FnOnce(Result<(), &'static str>) + 'static) {
    if !deck::needs_fetch(&id) {
        return then(Ok(()));
    }
    wasm_bindgen_futures::spawn_local(async move { then(fetch_for(&id).await) });
}

/// Does `then` once entry `id` is available; if the deck cannot be fetched, says so and the
/// view stays.
pub(super) fn with_entry(dispatch: Dispatch, id: String, then: impl FnOnce() + 'static) {
    when_in(id, move |fetched| match fetched {
        Ok(()) => then(),
        Err(why) => dispatch.msg(Msg::Refuse(why.to_owned())),
    });
}

/// Picks entry `id` once it is available (the picker keeps showing what is on screen until
/// then).
pub(super) fn pick(dispatch: Dispatch, id: String) {
    with_entry(dispatch, id.clone(), move || dispatch.msg(Msg::Pick(id)));
}
