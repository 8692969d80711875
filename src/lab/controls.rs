//! The presenter's controls: the parameter fields, the keys, and the README's table of both.

use crate::core::{Millis, Pause, Scenario};
use crate::view::geometry::Grip;

use super::bounds::{timeline_end, Setting};
use super::{Msg, ScenarioEdit};

/// A typed field: the parameter panel under the timeline, and What if…'s round trip (a
/// fault's fields are its kind's own: [`ScenarioEdit::fault_field`]).
/// Its code is the field's `data-param`; the shell hands back the text as typed, and the
/// lab reads it against the field's [`Setting`] (one table of ranges and labels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Param {
    Ttl,
    Delay,
    PauseStart,
    PauseLength,
    /// The round trip to the lock service (empty: 0, one region).
    LockRtt,
}

impl Param {
    pub const ALL: [Param; 5] = [
        Param::Ttl,
        Param::Delay,
        Param::PauseStart,
        Param::PauseLength,
        Param::LockRtt,
    ];

    pub fn code(self) -> &'static str {
        match self {
            Param::Ttl => "ttl",
            Param::Delay => "delay",
            Param::PauseStart => "pause-start",
            Param::PauseLength => "pause-length",
            Param::LockRtt => "rtt",
        }
    }

    pub fn from_code(code: &str) -> Option<Param> {
        Param::ALL.into_iter().find(|p| p.code() == code)
    }

    /// The setting the field types, whose range and label its messages give.
    pub fn setting(self) -> Setting {
        match self {
            Param::Ttl => Setting::Ttl,
            Param::Delay => Setting::Delay,
            Param::PauseStart => Setting::PauseStart,
            Param::PauseLength => Setting::PauseLength,
            Param::LockRtt => Setting::LockRtt,
        }
    }

    /// The smallest value the field takes.
    pub fn min(self) -> u8 {
        u8::try_from(self.setting().bound().min).unwrap_or(u8::MAX)
    }

    /// What the field holds for `sc` (and `actor`); also what it shows again after a
    /// refused edit.
    pub fn value(self, sc: &Scenario, actor: Option<usize>) -> Option<u64> {
        let a = actor.and_then(|i| sc.actors.get(i));
        match self {
            Param::Ttl => Some(sc.lease_ttl),
            Param::Delay => a.map(|a| a.network_delay),
            Param::PauseStart => a.and_then(|a| a.pauses.first()).map(|p| p.start),
            Param::PauseLength => a.and_then(|a| a.pauses.first()).map(|p| p.duration),
            Param::LockRtt => Some(sc.lock_rtt),
        }
    }

    /// The edit this field's new `text` makes, or why it makes none, as a sentence.
    pub(super) fn edit(
        self,
        sc: &Scenario,
        actor: Option<usize>,
        text: &str,
    ) -> Result<ScenarioEdit, String> {
        // An empty What if… box is one region.
        if self == Param::LockRtt && text.trim().is_empty() {
            return Ok(ScenarioEdit::LockRtt(0));
        }
        let pause = actor.and_then(|a| sc.actors.get(a)?.pauses.first().copied());
        let pause = match (self, pause) {
            (Param::PauseStart | Param::PauseLength, None) => {
                return Err("That client has no pause to edit.".into())
            }
            (_, p) => p.unwrap_or(Pause {
                start: 0,
                duration: 0,
            }),
        };
        let client = actor.and_then(|a| sc.actors.get(a)).map_or("", |a| &a.name);
        let pause_ends = format!("{client}'s pause must end");
        let limit = match self {
            Param::PauseStart => timeline_end(sc, pause.duration, &pause_ends),
            Param::PauseLength => timeline_end(sc, pause.start, &pause_ends),
            _ => None,
        };
        let v = self
            .setting()
            .read(sc, actor, text, limit)
            .map_err(|why| format!("{why}."))?;
        Ok(match self {
            Param::Ttl => ScenarioEdit::Ttl(v),
            Param::Delay => ScenarioEdit::Delay {
                actor: actor.unwrap_or(usize::MAX),
                delay: v,
            },
            Param::PauseStart | Param::PauseLength => ScenarioEdit::Pause {
                actor: actor.unwrap_or(usize::MAX),
                pause: Some(if self == Param::PauseStart {
                    Pause { start: v, ..pause }
                } else {
                    Pause {
                        duration: v,
                        ..pause
                    }
                }),
            },
            Param::LockRtt => ScenarioEdit::LockRtt(v),
        })
    }
}

/// One row of the presenter's controls: what to do, how, and the keys (`KeyboardEvent.key`
/// values) that do it. The README's table is [`controls_table`] (a test holds them to each
/// other, and the keys to [`key_to_msg`] and the shell's own `p` / `n`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Control {
    pub action: &'static str,
    pub how: &'static str,
    pub keys: &'static [&'static str],
}

/// Every control a presenter has, in the README's order.
pub const CONTROLS: [Control; 19] = [
    Control {
        action: "step forward / back",
        how: "`→` / `←`, or `.` (what presenter clickers send), or the buttons",
        keys: &["ArrowRight", "ArrowLeft", "."],
    },
    Control {
        action: "play / pause",
        how: "`Space` (Play at the end replays from the start); **Speed** 0.5× to 4×",
        keys: &[" "],
    },
    Control {
        action: "fencing off ↔ on (strict)",
        how: "`f`; same-epoch in the **Fencing** select. The page opens with fencing off: the failure first",
        keys: &["f"],
    },
    Control {
        action: "reveal: draw nothing after this step",
        how: "`r` (on in presenter mode): the picture builds step by step and the off/on cards wait for the step that decides them",
        keys: &["r"],
    },
    Control {
        action: "move / resize a pause",
        how: "drag the grey block / its right edge; or `Tab` to it and `←` / `→` (1 ms), `Shift` + `←` / `→` to resize; or type exact values",
        keys: &[],
    },
    Control {
        action: "add / remove a pause",
        how: "drag along an empty stretch of a client's lane / double-click the pause, or `Delete` on it; or **What if… → + pause / − pause**",
        keys: &[],
    },
    Control {
        action: "delay a client's packets",
        how: "drag a write's arrival at storage to the right (back, or a double-click, takes it off); or **What if… → + delay / − delay**, then type the exact value",
        keys: &[],
    },
    Control {
        action: "add / remove a client (2 to 5)",
        how: "**What if… → + client / − client**",
        keys: &[],
    },
    Control {
        action: "change the design",
        how: "**What if…**: tokens from, release, storage checks (the highest token, or the sequencer with the lock service too), handoff barrier, the lock service's round trip (another region); **Faults**: each fault's time and fields, **Add fault** (a lock failover or restart, a partition, a clock jump, a storage failover) on any entry",
        keys: &[],
    },
    Control {
        action: "jump",
        how: "the scrubber; `Home` resets",
        keys: &["Home"],
    },
    Control {
        action: "presenter mode / speaker notes",
        how: "`p` (`Esc` leaves) / `n` (in presenter mode the notes go to the speaker view, never on the shared screen)",
        keys: &["p", "Escape", "n"],
    },
    Control {
        action: "speaker view",
        how: "`s`: a second window for your own screen (question, Say line, next step, notes, timer); both windows follow each other",
        keys: &["s"],
    },
    Control {
        action: "rehearse for the interview",
        how: "`q` or **Rehearse**: the page asks a deck question with a two-minute timer; you answer out loud, predict how the run ends, watch it play with each prediction marked, then take a push-back. Progress stays in this browser; **Print the night-before sheet** for the entries you pick",
        keys: &["q"],
    },
    Control {
        action: "all the keys",
        how: "`?`",
        keys: &["?"],
    },
    Control {
        action: "laser pointer (presenter mode)",
        how: "`l`: a short fading trail follows the mouse or finger, and the marker under it shows its tooltip",
        keys: &["l"],
    },
    Control {
        action: "fork, explore, export",
        how: "**Fork**, **Explore**, **Export… → SVG** / **PNG**",
        keys: &[],
    },
    Control {
        action: "animation for slides or a README",
        how: "**Export… → Animation** (1280×720 or 960×540): an animated GIF of the run, a frame per step with its narration as the caption",
        keys: &[],
    },
    Control {
        action: "embed the run in a post or a slide",
        how: "**Export… → Copy embed code**: an `<iframe>` of this view; `&embed` in a link shows only the timeline, playback, the ledger and the off/on cards",
        keys: &[],
    },
    Control {
        action: "show a run recorded on real servers",
        how: "**Scenario → Import a recording…**: choose, drop or paste a file that `scripts/replay.sh` wrote",
        keys: &[],
    },
];

/// The README's controls table, as markdown.
pub fn controls_table() -> String {
    let mut out = String::from("| action | how |\n| --- | --- |\n");
    for c in CONTROLS {
        out.push_str(&format!("| {} | {} |\n", c.action, c.how));
    }
    out
}

/// Keyboard map: ← → step, Space play, `.` forward (presenter clickers send it), `f` fencing,
/// `l` the laser pointer.
pub fn key_to_msg(key: &str) -> Option<Msg> {
    match key {
        "ArrowRight" | "." | "PageDown" => Some(Msg::Forward),
        "ArrowLeft" | "," | "PageUp" => Some(Msg::Back),
        " " | "Spacebar" => Some(Msg::TogglePlay),
        "f" | "F" => Some(Msg::TogglePolicy),
        "r" | "R" => Some(Msg::ToggleReveal),
        "Home" => Some(Msg::Reset),
        "l" | "L" => Some(Msg::ToggleLaser),
        _ => None,
    }
}

/// A key pressed on a focused pause block: `←` / `→` move it 1 ms, with `Shift` they
/// shrink / grow it 1 ms from its right edge, `Delete` or `Backspace` removes it. `None` for
/// any other key, so the page's own keys (stepping) still work elsewhere.
pub fn pause_key(key: &str, shift: bool, actor: usize, p: Pause, horizon: Millis) -> Option<Msg> {
    let delta = match key {
        "ArrowLeft" => -1,
        "ArrowRight" => 1,
        "Delete" | "Backspace" => return Some(Msg::RemovePause { actor }),
        _ => return None,
    };
    let grip = if shift { Grip::Resize } else { Grip::Move };
    Some(Msg::Edit(ScenarioEdit::Pause {
        actor,
        pause: Some(grip.apply(p, delta, horizon)),
    }))
}
