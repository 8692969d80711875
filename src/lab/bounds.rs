//! The range of every number a presenter or a link can set, named in the page's own words:
//! one table, so a field, a What if… box and a link refuse a value with the same sentence,
//! which says what is allowed and what was wrong ("Lease TTL must be between 1 ms and
//! 10 minutes (0 ms is too short)").

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
    Failover,
    ReplicationLag,
    PauseStart,
    PauseLength,
    PartitionStart,
    PartitionLength,
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

/// Every number's range, the same as [`Scenario::validate`]'s (a test holds them to it), but
/// a pause or a partition is at least 1 ms long: one of 0 ms is none at all.
pub const BOUNDS: [Bound; 14] = {
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
        bound(Failover, "Failover at", 0, MAX_TIME, Instant),
        bound(ReplicationLag, "Replica lag", 0, MAX_TIME, Duration),
        bound(PauseStart, "pause start", 0, MAX_TIME, Instant),
        bound(PauseLength, "pause length", 1, MAX_TIME, Duration),
        bound(PartitionStart, "partition start", 0, MAX_TIME, Instant),
        bound(PartitionLength, "partition length", 1, MAX_TIME, Duration),
        bound(LockTimeout, "lock timeout", 1, MAX_TIME, Duration),
        bound(Delay, "network delay", 0, MAX_TIME, Duration),
    ]
};

impl Setting {
    /// Its row of [`BOUNDS`].
    pub fn bound(self) -> &'static Bound {
        BOUNDS
            .iter()
            .find(|b| b.setting == self)
            .expect("every setting has a bound")
    }

    /// The label the page gives this setting in `sc` (for client `actor`).
    pub fn label(self, sc: &Scenario, actor: Option<usize>) -> String {
        let label = match self {
            Setting::Ttl if sc.row_lock.is_some() => "Idle timeout",
            _ => self.bound().label,
        };
        match actor.and_then(|a| sc.actors.get(a)) {
            Some(a) => format!("{} {label}", a.name),
            None => label.to_owned(),
        }
    }

    /// Reads `text` as this setting's number in `sc`, no more than `max` (the timeline's own
    /// limit, with `why` it is: see [`Refusal::note`]), or says what is wrong with it.
    pub fn read(
        self,
        sc: &Scenario,
        actor: Option<usize>,
        text: &str,
        limit: Option<(u64, String)>,
    ) -> Result<u64, Refusal> {
        let refuse = |problem| Refusal::new(self, sc, actor, problem, limit.clone());
        let value = parse(text).map_err(refuse)?;
        self.check(sc, actor, value, limit)
    }

    /// `value` if it is inside this setting's range (and `limit`), or why not.
    pub fn check(
        self,
        sc: &Scenario,
        actor: Option<usize>,
        value: u64,
        limit: Option<(u64, String)>,
    ) -> Result<u64, Refusal> {
        let b = self.bound();
        let max = limit.as_ref().map_or(b.max, |(max, _)| b.max.min(*max));
        let problem = if value < b.min {
            Problem::Below(value.to_string())
        } else if value > max {
            Problem::Above(value.to_string())
        } else {
            return Ok(value);
        };
        Err(Refusal::new(self, sc, actor, problem, limit))
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
    } else if t.strip_prefix(['-', '−']).is_some_and(digits) {
        Err(Problem::Negative(t.to_owned()))
    } else {
        Err(Problem::NotWhole(t.to_owned()))
    }
}

/// A value a setting does not take: shown as "{label} must be between {min} and {max}
/// ({problem})", with the timeline's reason when it is what lowers the maximum.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub setting: Setting,
    pub label: String,
    pub max: u64,
    pub problem: Problem,
    /// Why the maximum is below the setting's own, e.g. "A's pause must end by t=100 ms,
    /// the end of the timeline".
    pub note: Option<String>,
}

impl Refusal {
    fn new(
        setting: Setting,
        sc: &Scenario,
        actor: Option<usize>,
        problem: Problem,
        limit: Option<(u64, String)>,
    ) -> Self {
        let own = setting.bound().max;
        let (max, note) = match limit {
            Some((max, why)) if max < own => (max, Some(why)),
            _ => (own, None),
        };
        Refusal {
            setting,
            label: setting.label(sc, actor),
            max,
            problem,
            note,
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.setting.bound();
        let (lo, hi) = (amount(b.min, b.unit), amount(self.max, b.unit));
        let (low, high) = match b.unit {
            Unit::Duration => ("too short", "too long"),
            Unit::Instant => ("too early", "too late"),
            Unit::PerMille => ("too little", "too much"),
            Unit::Count => ("too few", "too many"),
        };
        let unit = match b.unit {
            Unit::Duration | Unit::Instant => " ms",
            Unit::PerMille => " per mille",
            Unit::Count => "",
        };
        write!(f, "{} must be between {lo} and {hi} (", self.label)?;
        match &self.problem {
            Problem::Empty => f.write_str("the value is empty")?,
            Problem::NotWhole(t) => write!(f, "“{}” is not a whole number", shown(t))?,
            Problem::Negative(t) => write!(f, "{} is negative", shown(t))?,
            Problem::Below(v) => write!(f, "{}{unit} is {low}", shown(v))?,
            Problem::Above(v) => write!(f, "{}{unit} is {high}", shown(v))?,
        }
        match &self.note {
            Some(why) => write!(f, "; {why})"),
            None => f.write_str(")"),
        }
    }
}

/// An amount in the largest unit that writes it whole: "1 ms", "2 s", "10 minutes".
pub fn amount(n: u64, unit: Unit) -> String {
    match unit {
        Unit::Duration | Unit::Instant => human_ms(n),
        Unit::PerMille => format!("{n} per mille"),
        Unit::Count => n.to_string(),
    }
}

fn human_ms(ms: Millis) -> String {
    match ms {
        60_000 => "1 minute".into(),
        m if m > 0 && m % 60_000 == 0 => format!("{} minutes", m / 60_000),
        m if m > 0 && m % 1_000 == 0 => format!("{} s", m / 1_000),
        m => format!("{m} ms"),
    }
}

/// What the user typed, cut short: a message quotes it, it never repeats a page of it.
pub(crate) fn shown(text: &str) -> String {
    const MOST: usize = 16;
    match text.char_indices().nth(MOST) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_read_in_the_largest_whole_unit() {
        let ms = |n| amount(n, Unit::Duration);
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
