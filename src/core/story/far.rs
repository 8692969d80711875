//! The words of the topics the headline never has: a renewal, a request on its way, the
//! lock's own faults and a client cut off from the lock service. Natively they are linked
//! in like every other phrase. In the page they are a chunk of their own (`ui::words`),
//! fetched with the deck or the first time a run on screen has one of them, so the first
//! screen does not carry them: until then [`worded`] says which runs would lack words.

use super::words::{topic, Ctx, Topic};
use super::{fault, narrate, say};
use crate::core::trace::Trace;

/// The phrase functions of the far topics, reached only through [`linked`].
struct FarWords {
    narrate: fn(Topic, &Ctx) -> Option<String>,
    say: fn(Topic, &Ctx) -> Option<String>,
}

static FAR: FarWords = FarWords {
    narrate: narrate_far,
    say: say_far,
};

/// Whether [`Topic`] `t` is worded here rather than with the others.
fn is_far(t: Topic) -> bool {
    match t {
        Topic::Renewal | Topic::Request | Topic::Fault | Topic::CutOff => true,
        Topic::Grant | Topic::Expiry | Topic::Release | Topic::Process | Topic::Write => false,
    }
}

fn narrate_far(t: Topic, c: &Ctx) -> Option<String> {
    match t {
        Topic::Renewal => narrate::lease::renewal(c),
        Topic::Request => narrate::write::request(c),
        Topic::Fault => fault::narrate(c),
        Topic::CutOff => fault::partition::narrate(c),
        Topic::Grant | Topic::Expiry | Topic::Release | Topic::Process | Topic::Write => None,
    }
}

fn say_far(t: Topic, c: &Ctx) -> Option<String> {
    match t {
        Topic::Renewal => say::renewal(c),
        Topic::Request => say::request(c),
        Topic::Fault => fault::say(c),
        Topic::CutOff => fault::partition::say(c),
        Topic::Grant | Topic::Expiry | Topic::Release | Topic::Process | Topic::Write => None,
    }
}

/// The narration of far topic `t`, if this build has its words.
pub(super) fn narrate(t: Topic, c: &Ctx) -> Option<String> {
    (linked()?.narrate)(t, c)
}

/// The Say line of far topic `t`, if this build has its words.
pub(super) fn say(t: Topic, c: &Ctx) -> Option<String> {
    (linked()?.say)(t, c)
}

/// Whether this build has the words for every event of `t`: natively always; in the page
/// once the far words are fetched ([`provide`]), or when `t` has none of their topics.
pub fn worded(t: &Trace) -> bool {
    linked().is_some() || !t.events.iter().any(|e| is_far(topic(&e.kind)))
}

#[cfg(not(target_arch = "wasm32"))]
fn linked() -> Option<&'static FarWords> {
    Some(&FAR)
}

#[cfg(target_arch = "wasm32")]
static FETCHED: std::sync::OnceLock<&'static FarWords> = std::sync::OnceLock::new();

#[cfg(target_arch = "wasm32")]
fn linked() -> Option<&'static FarWords> {
    FETCHED.get().copied()
}

/// Links the far words in: called from the chunk that carries them, so nothing on the
/// first screen's path reaches them.
#[cfg(target_arch = "wasm32")]
pub fn provide() {
    let _ = FETCHED.set(&FAR);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::{run, FencingPolicy, Scenario};

    /// The headline's runs need none of the far words, under every policy: the page's
    /// first screen draws without their chunk.
    #[test]
    fn the_headline_needs_no_far_words() {
        for policy in [
            FencingPolicy::Off,
            FencingPolicy::Strict,
            FencingPolicy::SameEpoch,
        ] {
            let t = run(&Scenario::gc_pause().with_policy(policy));
            let far: Vec<_> = t.events.iter().filter(|e| is_far(topic(&e.kind))).collect();
            assert!(far.is_empty(), "{policy:?}: {far:?}");
        }
    }
}
