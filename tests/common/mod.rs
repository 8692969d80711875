//! Helpers the scenario test files share.

use fencing_lab::core::Trace;

/// One storage attempt: (at, writer, token, result code), in arrival order.
pub type Attempt = (u64, String, u64, &'static str);

/// Every storage attempt of a run, in arrival order.
pub fn writes(t: &Trace) -> Vec<Attempt> {
    t.writes
        .iter()
        .map(|w| {
            (
                w.at,
                w.request.writer.clone(),
                w.request.fence.map_or(0, |f| f.0),
                w.result.as_ref().err().map_or("ok", |e| e.code()),
            )
        })
        .collect()
}

/// An expected [`Attempt`].
pub fn w(at: u64, writer: &str, token: u64, code: &'static str) -> Attempt {
    (at, writer.to_owned(), token, code)
}
