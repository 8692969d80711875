//! The drawing's geometry: where a time falls on the timeline, and what a drag does to a
//! pause or a delay. Pure, so native tests hold it.

use crate::core::{Millis, Pause};

/// Which part of a pause block a drag holds: the block moves it, the right edge resizes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grip {
    Move,
    Resize,
}

impl Grip {
    pub fn code(self) -> &'static str {
        match self {
            Grip::Move => "move",
            Grip::Resize => "resize",
        }
    }

    pub fn from_code(code: &str) -> Option<Grip> {
        [Grip::Move, Grip::Resize]
            .into_iter()
            .find(|g| g.code() == code)
    }

    /// The pause `p` after dragging this grip by `delta` ms.
    pub fn apply(self, p: Pause, delta: i64, horizon: Millis) -> Pause {
        match self {
            Grip::Move => moved(p, delta, horizon),
            Grip::Resize => resized(p, delta, horizon),
        }
    }
}

/// Horizontal geometry of the timeline, in SVG user units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    pub left: f64,
    pub width: f64,
    pub horizon: Millis,
}

impl Scale {
    pub fn x(&self, t: Millis) -> f64 {
        self.left + self.width * (t.min(self.horizon) as f64) / (self.horizon.max(1) as f64)
    }

    /// Converts a horizontal distance in user units to whole milliseconds.
    pub fn ms(&self, dx: f64) -> i64 {
        (dx * self.horizon as f64 / self.width).round() as i64
    }
}

/// A pause moved by `delta` ms, kept inside `[0, horizon]` with its length unchanged.
pub fn moved(p: Pause, delta: i64, horizon: Millis) -> Pause {
    let max_start = horizon.saturating_sub(p.duration) as i64;
    Pause {
        start: (p.start as i64 + delta).clamp(0, max_start) as Millis,
        duration: p.duration,
    }
}

/// A client's packet delay after dragging the arrival of its write (sent at `sent_at`) by
/// `delta` ms: never negative, and the write still lands by the horizon.
pub fn dragged_delay(delay0: Millis, delta: i64, sent_at: Millis, horizon: Millis) -> Millis {
    let max = horizon.saturating_sub(sent_at) as i64;
    (delay0 as i64 + delta).clamp(0, max) as Millis
}

/// A pause resized from its right edge by `delta` ms: at least 1 ms, never past the horizon.
pub fn resized(p: Pause, delta: i64, horizon: Millis) -> Pause {
    let max_len = horizon.saturating_sub(p.start).max(1) as i64;
    Pause {
        start: p.start,
        duration: (p.duration as i64 + delta).clamp(1, max_len) as Millis,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dragged_arrival_keeps_the_delay_within_the_run() {
        assert_eq!(dragged_delay(0, 25, 35, 100), 25, "drawn from nothing");
        assert_eq!(
            dragged_delay(25, -40, 35, 100),
            0,
            "dragged back past the send"
        );
        assert_eq!(dragged_delay(10, 500, 35, 100), 65, "lands by the horizon");
    }

    #[test]
    fn drag_geometry_clamps() {
        let p = Pause {
            start: 5,
            duration: 50,
        };
        assert_eq!(moved(p, -100, 100).start, 0);
        assert_eq!(moved(p, 100, 100).start, 50);
        assert_eq!(resized(p, 1000, 100).duration, 95);
        assert_eq!(resized(p, -1000, 100).duration, 1);
        let s = Scale {
            left: 70.0,
            width: 900.0,
            horizon: 100,
        };
        assert_eq!(s.x(50), 520.0);
        assert_eq!(s.ms(90.0), 10);
    }
}
