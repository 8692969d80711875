//! Importing a trace recorded on real servers: the page shows it only if it checks out.

use crate::core::Trace;

/// The largest recording the page reads: a deck run's is 20–60 KB.
pub const MAX_RECORDING: usize = 2_000_000;

/// Reads a recorded trace and checks it: valid JSON in the trace schema, marked as
/// recorded, a valid scenario, events in time order on lanes and actors that exist, and
/// self-consistent (folding its own observations gives back every event and snapshot, so
/// the words and verdicts drawn from it are true of it). Says what is wrong otherwise.
pub fn read_recording(text: &str) -> Result<Trace, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err(
            "Paste or drop a recorded trace (a .json file that `fencing-lab replay` writes) first."
                .to_owned(),
        );
    }
    if text.len() > MAX_RECORDING {
        return Err(format!(
            "That recording is {} KB; the page reads up to {} KB.",
            text.len() / 1000,
            MAX_RECORDING / 1000
        ));
    }
    let t: Trace = parse_trace(text).map_err(|e| format!("That is not a recorded trace: {e}."))?;
    let Some(rec) = t.recorded.clone() else {
        return Err(
            "That trace has no “recorded” field: it is not a recording from real servers."
                .to_owned(),
        );
    };
    t.scenario
        .validate()
        .map_err(|e| format!("The recording's scenario is not valid: {e}."))?;
    let sc = &t.scenario;
    let mut last = 0;
    for (i, e) in t.events.iter().enumerate() {
        let n = i + 1;
        if e.at < last || e.at > sc.horizon {
            return Err(format!(
                "Event {n} of the recording is at t={}, out of order or past the end (t={}).",
                e.at, sc.horizon
            ));
        }
        last = e.at;
        if let crate::core::Lane::Actor(a) = e.lane {
            if a >= sc.actors.len() {
                return Err(format!(
                    "Event {n} of the recording is on a lane with no client."
                ));
            }
        }
        if let Some(name) = &e.actor {
            if sc.actor_index(name).is_none() {
                return Err(format!(
                    "Event {n} of the recording names “{name}”, who is not in its scenario."
                ));
            }
        }
    }
    let account = crate::core::Account {
        balance: t.summary.final_balance,
        last_fence: t.summary.last_fence,
        last_write_fence: t.summary.last_write_fence,
        result: t
            .events
            .last()
            .map_or(t.initial.result.clone(), |e| e.snapshot.result.clone()),
    };
    let again = crate::core::recorded(sc, crate::core::observations_of(&t), account, rec)
        .map_err(|e| format!("The recording does not add up: {e}."))?;
    if let Some(i) = (0..t.events.len().max(again.events.len()))
        .find(|&i| t.events.get(i) != again.events.get(i))
    {
        return Err(format!(
            "The recording does not add up at event {}: its states or verdicts are not what its own events give.",
            i + 1
        ));
    }
    if again.writes != t.writes || again.summary != t.summary || again.initial != t.initial {
        return Err("The recording does not add up: its write log or summary is not what its own events give.".to_owned());
    }
    Ok(t)
}

/// `text` as a [`Trace`] through serde's derives, the same ones the replay writes it with.
/// An error names the path of the bad value (`events[3].kind`). In the page the browser's
/// own `JSON.parse` reads the text (no JSON parser in the wasm); natively, serde_json.
#[cfg(target_arch = "wasm32")]
fn parse_trace(text: &str) -> Result<Trace, String> {
    // Both errors are JS `Error`s: their message, without `toString`'s "Error: ".
    let message = |e: wasm_bindgen::JsValue| String::from(js_sys::Error::from(e).message());
    let value = js_sys::JSON::parse(text).map_err(message)?;
    let de = serde_wasm_bindgen::Deserializer::from(value);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().clone();
        at_path(&path, short(message(e.into_inner().into())))
    })
}

#[cfg(not(target_arch = "wasm32"))]
fn parse_trace(text: &str) -> Result<Trace, String> {
    let mut de = serde_json::Deserializer::from_str(text);
    let t = serde_path_to_error::deserialize(&mut de)
        .map_err(|e| at_path(e.path(), short(e.inner().to_string())))?;
    de.end().map_err(|e| short(e.to_string()))?;
    Ok(t)
}

/// `what` went wrong at `path` (the root's path, `.`, is left out).
fn at_path(path: &serde_path_to_error::Path, what: String) -> String {
    match path.to_string().as_str() {
        "." => what,
        path => format!("{path}: {what}"),
    }
}

/// serde's message without an unknown variant's list of every known one (serde_json's
/// "at line L column C" stays).
fn short(what: String) -> String {
    let Some(cut) = what.find(", expected one of") else {
        return what;
    };
    let place = what.rfind(" at line ").filter(|&at| at > cut);
    format!("{}{}", &what[..cut], place.map_or("", |at| &what[at..]))
}

#[cfg(test)]
mod tests {
    use crate::core::{deck, run, FencingPolicy};
    use crate::lab::{read_recording, Lab, Msg, ScenarioEdit};
    use std::sync::Arc;

    const STRICT: &str = include_str!("../../assets/recordings/gc-pause-strict.json");
    const OFF: &str = include_str!("../../assets/recordings/gc-pause-off.json");

    #[test]
    fn a_recording_from_real_servers_is_shown_until_something_changes() {
        let mut lab = Lab::new(deck::find("toctou").map(|e| (e.build)()).unwrap());
        lab.update(Msg::Import(Box::new(read_recording(OFF))));
        assert_eq!(lab.error(), None);
        let rec = lab.trace().recorded.clone().expect("recorded");
        assert_eq!(rec.label(), "recorded on Redis 7.0.15 · PostgreSQL 15.18");
        assert_eq!(lab.scenario().id, "gc-pause");
        assert_eq!(lab.step(), 0);
        // Redis let both in: the job ran twice.
        let s = &lab.trace().summary;
        assert_eq!(
            (s.final_balance, s.accepted_writes, s.duplicate_runs),
            (80, 2, 1)
        );
        lab.update(Msg::Forward);
        assert!(
            lab.trace().recorded.is_some(),
            "stepping keeps the recording"
        );
        lab.update(Msg::Edit(ScenarioEdit::Policy(FencingPolicy::Strict)));
        assert!(lab.trace().recorded.is_none(), "a change simulates again");
        lab.update(Msg::Import(Box::new(read_recording(STRICT))));
        let s = &lab.trace().summary;
        assert_eq!((s.final_balance, s.rejected_writes), (90, 1));
        assert_eq!(s.last_fence.map(|f| f.0), Some(34));
    }

    #[test]
    fn a_bad_recording_is_refused_with_a_reason_and_the_view_stays() {
        let mut lab = Lab::new(deck::find("toctou").map(|e| (e.build)()).unwrap());
        lab.update(Msg::Forward);
        let before = lab.trace().clone();
        let simulated = serde_json::to_string(&run(lab.scenario())).unwrap();
        let late = STRICT.replacen("\"at\": 40", "\"at\": 900", 1);
        let tampered = STRICT.replacen("\"balance\": 90", "\"balance\": 70", 1);
        for (text, says) in [
            ("", "Paste or drop"),
            ("{\"scenario\": 3", "not a recorded trace"),
            ("[1, 2]", "not a recorded trace"),
            (simulated.as_str(), "no “recorded” field"),
            (late.as_str(), "out of order or past the end"),
            (tampered.as_str(), "does not add up"),
        ] {
            lab.update(Msg::Import(Box::new(read_recording(text))));
            let e = lab.error().unwrap_or_default().to_owned();
            assert!(e.contains(says), "{says}: {e}");
            assert!(Arc::ptr_eq(lab.trace(), &before), "{says}: the view stays");
            assert_eq!(lab.step(), 1);
        }
    }
}
