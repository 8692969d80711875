//! The shell's clock and timers: the page's time, a self re-arming timeout (the URL writer,
//! the explorer's pump), and Play's ticker.

use gloo_timers::callback::{Interval, Timeout};
use leptos::prelude::*;

use super::Dispatch;
use crate::lab::Msg;

/// The page's clock, in milliseconds (the shell's only source of time).
pub(crate) fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// A gloo timer that re-arms itself (the URL writer, the explorer's pump). A timer re-armed
/// from its own callback must outlive that call, so the one being replaced moves to `spent`
/// (dropping the one before it, long fired) instead of being dropped while it runs.
/// Dropping both on cleanup cancels what is pending.
#[derive(Default)]
pub(crate) struct Rearm {
    current: Option<Timeout>,
    spent: Option<Timeout>,
}

impl Rearm {
    /// From inside the current timer's own callback.
    pub(crate) fn rearm(&mut self, next: Timeout) {
        self.spent = self.current.replace(next);
    }

    /// From outside any timer callback: a pending timer is cancelled.
    pub(crate) fn arm(&mut self, next: Timeout) {
        self.current = Some(next);
    }

    /// The current timer has fired and nothing follows it (called from its callback).
    pub(crate) fn fired(&mut self) {
        self.spent = self.current.take();
    }

    /// No timer is pending.
    pub(crate) fn idle(&self) -> bool {
        self.current.is_none()
    }
}

/// Play: one tick per interval (a gloo Interval, cancelled when dropped); the Effect's
/// cleanup drops it whenever playing or speed changes, and when the App goes away.
pub(super) fn play_ticker(dispatch: Dispatch, playing: Memo<bool>, speed: Memo<u64>) {
    let ticker = StoredValue::new_local(None::<Interval>);
    Effect::new(move |_| {
        ticker.set_value(None);
        if playing.get() {
            let every = (90_000 / speed.get().max(1)) as u32;
            ticker.set_value(Some(Interval::new(every, move || dispatch.msg(Msg::Tick))));
        }
    });
    on_cleanup(move || ticker.set_value(None));
}
