//! The range of every number a presenter or a link can set, named in the page's own words:
//! one table of the scenario's settings, so a field, a What if… box and a link refuse a
//! value with the same sentence, which says what is allowed and what was wrong ("Lease TTL
//! must be between 1 ms and 10 minutes (0 ms is too short)"). A fault's numbers are not
//! here: their ranges are their kind's row's ([`Range`](crate::core::fault::Range)), worded
//! by `faults.rs` as a [`Number`] with the same sentences.

use std::fmt;

use crate::core::{Millis, Scenario, CLIENTS, MAX_CLIENT_DRIFT, MAX_TIME};

/// A number a presenter or a link can set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Setting {
    Ttl,
    Clients,
    LockDelay,
    LockRtt,
    Drift,
    Margin,
    PauseStart,
    PauseLength,
    LockTimeout,
    Delay,
}

/// What a setting's number counts, which decides how its range and its faults are worded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A length of time, in ms ("too short", "too long").
    Duration,
    /// A moment on the timeline, in ms ("too late").
    Instant,
    /// How much slower a clock runs, per mille.
    PerMille,
    /// How many clients.
    Count,
}

/// One row of [`BOUNDS`]: a setting, its label as the page shows it, and its range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    pub setting: Setting,
    /// The field's label (a client's settings get the client's name in front: "A pause
    /// start"); a row lock's TTL is its "Idle timeout".
    pub label: &'static str,
    pub min: u64,
    /// The core's own limit; a moment or a span on the timeline must also end by its end.
    pub max: u64,
    pub unit: Unit,
}

const fn bound(setting: Setting, label: &'static str, min: u64, max: u64, unit: Unit) -> Bound {
    Bound {
        setting,
        label,
        min,
        max,
        unit,
    }
}

/// Every setting's range, in [`Setting`]'s order, the same as [`Scenario::validate`]'s (a
/// test holds them to it), but a pause is at least 1 ms long: one of 0 ms is none at all.
pub const BOUNDS: [Bound; 10] = {
    use Setting::*;
    use Unit::*;
    [
        bound(Ttl, "Lease TTL", 1, MAX_TIME, Duration),
        bound(
            Clients,
            "Clients",
            *CLIENTS.start() as u64,
            *CLIENTS.end() as u64,
            Count,
        ),
        bound(LockDelay, "Lock-delay", 0, MAX_TIME, Duration),
        bound(LockRtt, "Lock service round trip", 0, MAX_TIME, Duration),
        bound(Drift, "Client clock drift", 0, MAX_CLIENT_DRIFT, PerMille),
        bound(Margin, "Deadline margin", 0, MAX_TIME, Duration),
        bound(PauseStart, "pause start", 0, MAX_TIME, Instant),
        bound(PauseLength, "pause length", 1, MAX_TIME, Duration),
        bound(LockTimeout, "lock timeout", 1, MAX_TIME, Duration),
        bound(Delay, "network delay", 0, MAX_TIME, Duration),
    ]
};

impl Setting {
    /// Its row of [`BOUNDS`].
    pub fn bound(self) -> &'static Bound {
        // The table is in the enum's order (a test holds it).
        &BOUNDS[self as usize]
    }

    /// The label the page gives this setting in `sc` (for client `actor`).
    pub fn label(self, sc: &Scenario, actor: Option<usize>) -> String {
        let label = match self {
            Setting::Ttl if sc.lock.row().is_some() => "Idle timeout",
            _ => self.bound().label,
        };
        match actor.and_then(|a| sc.actors.get(a)) {
            Some(a) => format!("{} {label}", a.name),
            None => label.to_owned(),
        }
    }

    /// This setting in `sc` (of client `actor`) as the page words its range.
    pub fn number(self, sc: &Scenario, actor: Option<usize>) -> Number {
        let b = self.bound();
        Number {
            label: self.label(sc, actor),
            min: b.min,
            max: b.max,
            unit: b.unit,
        }
    }

    /// Reads `text` as this setting's number in `sc` ([`Number::read`]).
    pub fn read(
        self,
        sc: &Scenario,
        actor: Option<usize>,
        text: &str,
        limit: Option<(u64, String)>,
    ) -> Result<u64, Refusal> {
        self.number(sc, actor).read(text, limit)
    }
}

/// A number a field, a What if… box or a link sets, as the page words its range: a
/// setting's row of [`BOUNDS`], or a fault's value with its kind's row's range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Number {
    /// Its label as the page shows it ("A pause start", "Storage failover lag").
    pub label: String,
    pub min: u64,
    /// Its own most; a moment or a span on the timeline must also end by its end.
    pub max: u64,
    pub unit: Unit,
}

impl Number {
    /// Reads `text` as this number, no more than `limit`'s maximum (the timeline's own
    /// limit, with why it is: see [`Refusal::note`]), or says what is wrong with it.
    pub fn read(&self, text: &str, limit: Option<(u64, String)>) -> Result<u64, Refusal> {
        let value = parse(text).map_err(|problem| self.refuse(problem, limit.clone()))?;
        self.check(value, limit)
    }

    /// `value` if it is inside this number's range (and `limit`), or why not.
    pub fn check(&self, value: u64, limit: Option<(u64, String)>) -> Result<u64, Refusal> {
        let max = limit
            .as_ref()
            .map_or(self.max, |(max, _)| self.max.min(*max));
        let problem = if value < self.min {
            Problem::Below(value.to_string())
        } else if value > max {
            Problem::Above(value.to_string())
        } else {
            return Ok(value);
        };
        Err(self.refuse(problem, limit))
    }

    fn refuse(&self, problem: Problem, limit: Option<(u64, String)>) -> Refusal {
        let (max, note) = match limit {
            Some((max, why)) if max < self.max => (max, Some(why)),
            _ => (self.max, None),
        };
        Refusal {
            label: self.label.clone(),
            min: self.min,
            max,
            unit: self.unit,
            problem,
            note,
        }
    }
}

/// The timeline's end as a limit on a moment or a span, with the sentence that says so:
/// `what` is what must come by then ("the failover must come", "A's pause must end").
pub fn timeline_end(sc: &Scenario, used: Millis, what: &str) -> Option<(u64, String)> {
    let why = format!("{what} by t={} ms, the end of the timeline", sc.horizon);
    Some((sc.horizon.saturating_sub(used), why))
}

/// What was wrong with a typed or linked value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    Empty,
    /// Not a whole number (as typed).
    NotWhole(String),
    /// A whole number below zero (as typed).
    Negative(String),
    Below(String),
    /// Above the maximum, or too large to read at all.
    Above(String),
}

/// Reads a non-negative whole number, as a person would type it.
fn parse(text: &str) -> Result<u64, Problem> {
    let t = text.trim();
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if t.is_empty() {
        Err(Problem::Empty)
    } else if digits(t) {
        t.parse().map_err(|_| Problem::Above(t.to_owned()))
    } else if t.strip_prefix('-').is_some_and(digits) {
        Err(Problem::Negative(t.to_owned()))
    } else {
        Err(Problem::NotWhole(t.to_owned()))
    }
}

/// A value a setting does not take: shown as "{label} must be between {min} and {max}
/// ({problem})", with the timeline's reason when it is what lowers the maximum.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub label: String,
    pub min: u64,
    pub max: u64,
    pub unit: Unit,
    pub problem: Problem,
    /// Why the maximum is below the number's own, e.g. "A's pause must end by t=100 ms,
    /// the end of the timeline".
    pub note: Option<String>,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // What the number counts, and what one outside its range is.
        let (unit, low, high) = match self.unit {
            Unit::Duration => (" ms", "too short", "too long"),
            Unit::Instant => (" ms", "too early", "too late"),
            Unit::PerMille => (" per mille", "too little", "too much"),
            Unit::Count => ("", "too few", "too many"),
        };
        let (what, is) = match &self.problem {
            Problem::Empty => ("the value".to_owned(), "empty"),
            Problem::NotWhole(t) => (format!("“{}”", shown(t)), "not a whole number"),
            Problem::Negative(t) => (shown(t), "negative"),
            Problem::Below(v) => (shown(v) + unit, low),
            Problem::Above(v) => (shown(v) + unit, high),
        };
        let note = self.note.as_deref().unwrap_or_default();
        write!(
            f,
            "{} must be between {} and {} ({what} is {is}{}{note})",
            self.label,
            amount(self.min, unit),
            amount(self.max, unit),
            if note.is_empty() { "" } else { "; " },
        )
    }
}

/// An amount with its unit, in the largest unit that writes it whole: "1 ms", "2 s",
/// "10 minutes", "900 per mille".
pub fn amount(n: u64, unit: &str) -> String {
    let (n, unit) = match (n, unit) {
        (60_000, " ms") => (1, " minute"),
        (n, " ms") if n > 0 && n % 60_000 == 0 => (n / 60_000, " minutes"),
        (n, " ms") if n > 0 && n % 1_000 == 0 => (n / 1_000, " s"),
        _ => (n, unit),
    };
    format!("{n}{unit}")
}

/// What the user typed, cut short: a message quotes it, it never repeats a page of it.
pub(crate) fn shown(text: &str) -> String {
    let mut end = text.len().min(16);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let more = if end < text.len() { "…" } else { "" };
    format!("{}{more}", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_read_in_the_largest_whole_unit() {
        let ms = |n| amount(n, " ms");
        assert_eq!(
            [
                ms(0),
                ms(1),
                ms(999),
                ms(1_000),
                ms(90_000),
                ms(60_000),
                ms(600_000)
            ],
            [
                "0 ms",
                "1 ms",
                "999 ms",
                "1 s",
                "90 s",
                "1 minute",
                "10 minutes"
            ]
        );
    }

    /// The table's limits are the core's: its largest value validates and one more does
    /// not (and so for the smallest, where the core has one above 0).
    #[test]
    fn the_table_is_the_cores_validation() {
        use crate::core::{LockKind, Pause, ServiceOptions};
        let set = |setting: Setting, v: u64| {
            let mut sc = Scenario::gc_pause();
            let a = &mut sc.actors[0];
            match setting {
                Setting::Ttl => sc.lease_ttl = v,
                Setting::Clients => sc = sc.with_clients(v as usize),
                Setting::LockDelay => {
                    sc.lock = LockKind::Service(ServiceOptions {
                        lock_delay: v,
                        queue: false,
                        herd: None,
                    })
                }
                Setting::LockRtt => sc.lock_rtt = v,
                Setting::Drift => sc.client_drift = v,
                Setting::Margin => sc.deadline_margin = v,
                Setting::PauseStart => {
                    a.pauses = vec![Pause {
                        start: v,
                        duration: 1,
                    }]
                }
                Setting::PauseLength => {
                    a.pauses = vec![Pause {
                        start: 0,
                        duration: v,
                    }]
                }
                Setting::LockTimeout => a.lock_timeout = Some(v),
                Setting::Delay => a.network_delay = v,
            }
            sc.validate().is_ok()
        };
        for b in BOUNDS {
            let max = b.max;
            assert!(set(b.setting, max), "{:?} {max}", b.setting);
            if b.setting != Setting::Clients {
                assert!(!set(b.setting, max + 1), "{:?} {}", b.setting, max + 1);
            }
            assert!(set(b.setting, b.min), "{:?} {}", b.setting, b.min);
        }
        assert!(!set(Setting::Ttl, 0) && !set(Setting::LockTimeout, 0));
    }

    #[test]
    fn the_table_is_in_the_settings_order() {
        for (i, b) in BOUNDS.iter().enumerate() {
            assert_eq!(b.setting as usize, i, "{:?}", b.setting);
        }
    }

    #[test]
    fn typed_text_is_read_as_a_person_means_it() {
        assert_eq!(parse(" 12 "), Ok(12));
        assert_eq!(parse(""), Err(Problem::Empty));
        assert_eq!(parse("-5"), Err(Problem::Negative("-5".into())));
        assert_eq!(parse("2.5"), Err(Problem::NotWhole("2.5".into())));
        assert_eq!(parse("-x"), Err(Problem::NotWhole("-x".into())));
        let huge = "99999999999999999999";
        assert_eq!(parse(huge), Err(Problem::Above(huge.into())));
        assert_eq!(shown(huge), "9999999999999999…");
    }
}
