//! Parts of the page's wasm split off into chunks of their own (`wasm_split`; the build
//! splits them out in scripts/split/wasm-bindgen), each fetched the first time it is used,
//! so that opening the page does not wait for them.

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
