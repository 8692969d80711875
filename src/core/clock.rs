//! Injected time. The engine owns one [`Clock`] and hands `now` to every call, so
//! no component can observe time it was not given.

use serde::{Deserialize, Serialize};

/// Milliseconds since the start of a scenario.
pub type Millis = u64;

/// A clock that only moves when told to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clock {
    now: Millis,
}

impl Clock {
    /// A clock reading `now`.
    pub fn at(now: Millis) -> Self {
        Self { now }
    }

    /// The current reading.
    pub fn now(&self) -> Millis {
        self.now
    }

    /// Moves forward to `t`; a simulation never goes back in time, so an earlier `t` is ignored.
    pub fn advance_to(&mut self, t: Millis) {
        self.now = self.now.max(t);
    }

    /// Jumps forward by `by` ms at once, like a paused process waking up or an NTP step.
    pub fn jump(&mut self, by: Millis) {
        self.now = self.now.saturating_add(by);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_moves_forward() {
        let mut c = Clock::at(10);
        c.advance_to(5);
        assert_eq!(c.now(), 10);
        c.advance_to(20);
        c.jump(15);
        assert_eq!(c.now(), 35);
    }
}
