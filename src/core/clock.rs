//! Injected time. The engine owns one [`Clock`] and hands `now` to every call, so
//! no component can observe time it was not given.

use serde::Serialize;

/// Milliseconds since the start of a scenario.
pub type Millis = u64;

/// The longest time a scenario may hold (10 minutes): every moment and length in it, a
/// fault's values included, is at most this.
pub const MAX_TIME: Millis = 600_000;

/// A clock that only moves when told to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
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

/// Deterministic pseudo-randomness (splitmix64). Jitter is drawn from a seed carried by
/// the scenario, never from the OS, so a jittered run replays exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi` (the modulo bias is negligible for ranges this small).
    pub fn between(&mut self, lo: u64, hi: u64) -> u64 {
        let (lo, hi) = (lo.min(hi), lo.max(hi));
        match (hi - lo).checked_add(1) {
            Some(span) => lo + self.next_u64() % span,
            None => self.next_u64(),
        }
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

    #[test]
    fn splitmix_is_seeded_and_bounded() {
        let draw = |seed| {
            let mut r = SplitMix64::new(seed);
            (0..100).map(|_| r.between(8, 12)).collect::<Vec<_>>()
        };
        assert_eq!(draw(7), draw(7));
        assert_ne!(draw(7), draw(8));
        let d = draw(7);
        assert!(d.iter().all(|x| (8..=12).contains(x)));
        assert!((8..=12).all(|x| d.contains(&x)), "every value is reachable");
        assert_eq!(SplitMix64::new(1).between(5, 5), 5);
    }
}
