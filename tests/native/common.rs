//! Helpers the scenario test files share.

use fencing_lab::core::{EventKind, Trace};

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

/// The step that shows `who`'s first write reaching storage (its event's index + 1).
#[allow(dead_code)] // not every scenario test file looks a write up by its writer
pub fn write_step(t: &Trace, who: &str) -> usize {
    1 + t
        .events
        .iter()
        .position(|e| {
            e.actor.as_deref() == Some(who) && matches!(e.kind, EventKind::WriteApplied { .. })
        })
        .unwrap()
}
