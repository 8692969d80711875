//! The shareable URL: the whole view (deck scenario, edited parameters, fencing policy,
//! step) as a short, readable hash such as
//! `#s=gc-pause&fence=strict&ttl=30&pause.A=5,50&step=10`.
//!
//! Decoding rebuilds the scenario from the deck and re-applies each parameter through
//! validation, so a hostile hash can only ever produce a refused load with a message.

use std::fmt;

use crate::core::deck;
use crate::core::{
    FencingPolicy, Millis, Partition, Pause, ReleaseMode, Scenario, ScenarioError, StorageCheck,
    TokenSource, CLIENTS, MAX_CLIENT_DRIFT,
};

/// Longest hash accepted; a real one is well under 200 characters.
pub const MAX_HASH_LEN: usize = 2_000;

/// Why a hash could not be loaded. Its [`Display`](fmt::Display) is shown to the user as is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShareError {
    /// Longer than [`MAX_HASH_LEN`] (the length it had).
    TooLong { len: usize },
    /// A character outside `a-z A-Z 0-9 - _ . , = &`.
    BadCharacter(char),
    /// A part with no `=`.
    NotKeyValue(String),
    /// The same key twice.
    Repeated(String),
    /// No `s=`.
    NoScenario,
    /// `s=` names no deck entry.
    UnknownScenario(String),
    /// A key that is not a setting (nor `pause.` / `delay.` of a client).
    UnknownKey(String),
    /// `pause.X` or `delay.X` for a client the scenario does not have.
    UnknownClient { scenario: String, client: String },
    /// A value that is not a whole number of milliseconds.
    BadNumber { key: String, value: String },
    /// A value outside a key's choices, e.g. `fence=maybe`.
    BadChoice {
        /// What the key sets, as the message names it (`fencing`, `release`, …).
        what: &'static str,
        /// The values it takes, as the message lists them.
        choices: &'static str,
        value: String,
    },
    /// `pause.X` without `start,length`.
    BadPause { key: String },
    /// A pause that ends after the scenario's horizon.
    PauseTooLate { client: String, horizon: Millis },
    /// A failover after the scenario's horizon.
    FailoverTooLate { horizon: Millis },
    /// A partition that ends after the scenario's horizon.
    PartitionTooLate { client: String, horizon: Millis },
    /// `partition.X` for two clients: one is cut off at a time.
    TwoPartitions,
    /// `tokens=` on a Redlock scenario, which mints no token.
    TokensUnderRedlock,
    /// Every value parsed, but the scenario they make fails [`Scenario::validate`].
    Invalid(ScenarioError),
}

impl fmt::Display for ShareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShareError::TooLong { len } => write!(
                f,
                "the link is {len} characters long; at most {MAX_HASH_LEN} are read"
            ),
            ShareError::BadCharacter(c) => {
                // A character that would not show (a control or a space) is named by code point.
                if c.is_whitespace() || c.is_control() {
                    write!(
                        f,
                        "the link contains an unexpected character U+{:04X}",
                        u32::from(*c)
                    )
                } else {
                    write!(f, "the link contains an unexpected character “{c}”")
                }
            }
            ShareError::NotKeyValue(part) => write!(f, "“{part}” is not of the form key=value"),
            ShareError::Repeated(key) => write!(f, "“{key}” is given twice"),
            ShareError::NoScenario => f.write_str("the link names no scenario (s=…)"),
            ShareError::UnknownScenario(id) => write!(f, "there is no scenario called “{id}”"),
            ShareError::UnknownKey(key) => write!(f, "unknown setting “{key}”"),
            ShareError::UnknownClient { scenario, client } => {
                write!(f, "“{scenario}” has no client called “{client}”")
            }
            ShareError::BadNumber { key, value } => write!(
                f,
                "“{key}” needs a whole number of milliseconds, not “{value}”"
            ),
            ShareError::BadChoice {
                what,
                choices,
                value,
            } => write!(f, "{what} must be {choices}, not “{value}”"),
            ShareError::BadPause { key } => {
                write!(f, "“{key}” needs start,length in ms (or none)")
            }
            ShareError::PauseTooLate { client, horizon } => {
                write!(f, "{client}'s pause must end by t={horizon} ms")
            }
            ShareError::FailoverTooLate { horizon } => {
                write!(f, "the failover must come by t={horizon} ms")
            }
            ShareError::PartitionTooLate { client, horizon } => {
                write!(f, "{client}'s partition must end by t={horizon} ms")
            }
            ShareError::TwoPartitions => {
                f.write_str("only one client can be cut off from the lock service at a time")
            }
            ShareError::TokensUnderRedlock => {
                f.write_str("Redlock mints no token: tokens= does not apply to it")
            }
            // The reason stays in the message: the page shows this text and nothing else.
            ShareError::Invalid(e) => write!(f, "the link's scenario is not valid: {e}"),
        }
    }
}

impl std::error::Error for ShareError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ShareError::Invalid(e) => Some(e),
            _ => None,
        }
    }
}

impl From<ScenarioError> for ShareError {
    fn from(e: ScenarioError) -> Self {
        ShareError::Invalid(e)
    }
}

/// What a hash restores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    pub scenario: Scenario,
    pub step: usize,
}

/// The hash (with its leading `#`) for a scenario built from the deck, at `step`.
pub fn encode(sc: &Scenario, step: usize) -> String {
    let mut out = format!(
        "#s={}&fence={}&ttl={}",
        sc.id,
        sc.policy.code(),
        sc.lease_ttl
    );
    let base = deck::find(&sc.id).map(|e| (e.build)());
    if base
        .as_ref()
        .is_some_and(|b| b.actors.len() != sc.actors.len())
    {
        out.push_str(&format!("&clients={}", sc.actors.len()));
    }
    if let Some(b) = &base {
        if b.token_source != sc.token_source {
            out.push_str(&format!("&tokens={}", sc.token_source.code()));
        }
        if b.release != sc.release {
            out.push_str(&format!("&release={}", sc.release.code()));
        }
        if sc.skip_barrier {
            out.push_str("&barrier=off");
        }
        if b.check != sc.check {
            out.push_str(&format!("&check={}", sc.check.code()));
        }
        if b.lock_delay != sc.lock_delay {
            out.push_str(&format!("&lockdelay={}", sc.lock_delay));
        }
        if b.client_drift != sc.client_drift {
            out.push_str(&format!("&drift={}", sc.client_drift));
        }
        if b.deadline_margin != sc.deadline_margin {
            out.push_str(&format!("&margin={}", sc.deadline_margin));
        }
        if b.failover_at != sc.failover_at {
            match sc.failover_at {
                Some(t) => out.push_str(&format!("&failover={t}")),
                None => out.push_str("&failover=off"),
            }
        }
        if b.replication_lag != sc.replication_lag {
            match sc.replication_lag {
                Some(t) => out.push_str(&format!("&lag={t}")),
                None => out.push_str("&lag=cut"),
            }
        }
    }
    for (i, a) in sc.actors.iter().enumerate() {
        let paused_by_default = base
            .as_ref()
            .and_then(|b| b.actors.get(i))
            .is_some_and(|b| !b.pauses.is_empty());
        match a.pauses.first() {
            Some(p) => out.push_str(&format!("&pause.{}={},{}", a.name, p.start, p.duration)),
            // A pause the deck has and the presenter removed.
            None if paused_by_default => out.push_str(&format!("&pause.{}=none", a.name)),
            None => {}
        }
        let base_actor = base.as_ref().and_then(|b| b.actors.get(i));
        let base_cut = base
            .as_ref()
            .and_then(|b| b.partition)
            .filter(|p| p.actor == i);
        let cut = sc.partition.filter(|p| p.actor == i);
        if cut != base_cut {
            match cut {
                Some(p) => out.push_str(&format!(
                    "&partition.{}={},{}",
                    a.name,
                    p.start,
                    p.end - p.start
                )),
                None => out.push_str(&format!("&partition.{}=none", a.name)),
            }
        }
        if base_actor.and_then(|b| b.lock_timeout) != a.lock_timeout {
            match a.lock_timeout {
                Some(t) => out.push_str(&format!("&locktimeout.{}={t}", a.name)),
                None => out.push_str(&format!("&locktimeout.{}=none", a.name)),
            }
        }
        let default_delay = base
            .as_ref()
            .and_then(|b| b.actors.get(i))
            .map_or(0, |b| b.network_delay);
        if a.network_delay != default_delay {
            out.push_str(&format!("&delay.{}={}", a.name, a.network_delay));
        }
    }
    out.push_str(&format!("&step={step}"));
    out
}

fn number(key: &str, value: &str) -> Result<Millis, ShareError> {
    let bad = || ShareError::BadNumber {
        key: key.to_owned(),
        value: value.to_owned(),
    };
    // At most 12 digits: always a `Millis`, and far past any horizon.
    if value.is_empty() || value.len() > 12 || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    value.parse::<Millis>().map_err(|_| bad())
}

/// `value` as one of a key's choices, or the error naming them.
fn choice<T>(
    parsed: Option<T>,
    what: &'static str,
    choices: &'static str,
    value: &str,
) -> Result<T, ShareError> {
    parsed.ok_or_else(|| ShareError::BadChoice {
        what,
        choices,
        value: value.to_owned(),
    })
}

/// Parses a hash (with or without the leading `#`). An empty hash is the default view.
pub fn decode(hash: &str) -> Result<View, ShareError> {
    let hash = hash.strip_prefix('#').unwrap_or(hash);
    if hash.is_empty() {
        return Ok(View {
            scenario: Scenario::gc_pause(),
            step: 0,
        });
    }
    if hash.len() > MAX_HASH_LEN {
        return Err(ShareError::TooLong { len: hash.len() });
    }
    if let Some(c) = hash
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "-_.,=&".contains(*c)))
    {
        return Err(ShareError::BadCharacter(c));
    }
    let mut pairs = Vec::new();
    for part in hash.split('&').filter(|p| !p.is_empty()) {
        let Some((k, v)) = part.split_once('=') else {
            return Err(ShareError::NotKeyValue(part.to_owned()));
        };
        if pairs.iter().any(|(seen, _)| *seen == k) {
            return Err(ShareError::Repeated(k.to_owned()));
        }
        pairs.push((k, v));
    }
    let Some(&(_, id)) = pairs.iter().find(|(k, _)| *k == "s") else {
        return Err(ShareError::NoScenario);
    };
    let Some(entry) = deck::find(id) else {
        return Err(ShareError::UnknownScenario(id.to_owned()));
    };
    let mut sc = (entry.build)();
    // The clients first, so `pause.C` can name a client that `clients=3` adds.
    if let Some(&(_, v)) = pairs.iter().find(|(k, _)| *k == "clients") {
        let n = v.parse::<usize>().ok().filter(|n| CLIENTS.contains(n));
        sc = sc.with_clients(choice(n, "clients", "2, 3, 4 or 5", v)?);
    }
    let mut step = 0;
    let mut cut_set = false;
    for &(k, v) in &pairs {
        match k {
            "s" | "clients" => {}
            "fence" => {
                sc.policy = choice(
                    FencingPolicy::from_code(v),
                    "fencing",
                    "off, strict or same_epoch",
                    v,
                )?;
            }
            "ttl" => sc.lease_ttl = number(k, v)?,
            "lockdelay" => sc.lock_delay = number(k, v)?,
            "check" => {
                sc.check = choice(
                    StorageCheck::from_code(v),
                    "check",
                    "highest or sequencer",
                    v,
                )?;
            }
            "lag" => {
                sc.replication_lag = match v {
                    "cut" => None,
                    _ => Some(number(k, v)?),
                }
            }
            "margin" => sc.deadline_margin = number(k, v)?,
            "drift" => {
                let d = (v.len() <= 3 && !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| v.parse::<u64>().ok())
                    .flatten()
                    .filter(|d| *d <= MAX_CLIENT_DRIFT);
                sc.client_drift = choice(d, "drift", "a whole number per mille from 0 to 900", v)?;
            }
            "release" => {
                sc.release = choice(
                    ReleaseMode::from_code(v),
                    "release",
                    "cad, get_del or del",
                    v,
                )?;
            }
            "barrier" => {
                let skip = match v {
                    "on" => Some(false),
                    "off" => Some(true),
                    _ => None,
                };
                sc.skip_barrier = choice(skip, "barrier", "on or off", v)?;
            }
            "failover" => {
                sc.failover_at = match v {
                    "off" => None,
                    _ => {
                        let t = number(k, v)?;
                        if t > sc.horizon {
                            let horizon = sc.horizon;
                            return Err(ShareError::FailoverTooLate { horizon });
                        }
                        Some(t)
                    }
                };
            }
            "tokens" => {
                let source = choice(
                    TokenSource::from_code(v).filter(|t| TokenSource::CHOICES.contains(t)),
                    "tokens",
                    "same_redis, separate_counter, random or lock_service",
                    v,
                )?;
                if sc.redlock.is_some() {
                    return Err(ShareError::TokensUnderRedlock);
                }
                sc.token_source = source;
            }
            "step" => step = usize::try_from(number(k, v)?).unwrap_or(usize::MAX),
            _ => {
                let unknown = || ShareError::UnknownKey(k.to_owned());
                let (what, actor) = k.split_once('.').ok_or_else(unknown)?;
                let idx = sc
                    .actor_index(actor)
                    .ok_or_else(|| ShareError::UnknownClient {
                        scenario: id.to_owned(),
                        client: actor.to_owned(),
                    })?;
                match what {
                    "pause" if v == "none" => sc.actors[idx].pauses.clear(),
                    "pause" => {
                        let (s, d) = v
                            .split_once(',')
                            .ok_or_else(|| ShareError::BadPause { key: k.to_owned() })?;
                        let pause = Pause {
                            start: number(k, s)?,
                            duration: number(k, d)?,
                        };
                        if pause.end() > sc.horizon {
                            return Err(ShareError::PauseTooLate {
                                client: actor.to_owned(),
                                horizon: sc.horizon,
                            });
                        }
                        sc = sc.with_pause(idx, pause);
                    }
                    "delay" => sc.actors[idx].network_delay = number(k, v)?,
                    "partition" if v == "none" => {
                        sc.partition = sc.partition.filter(|p| p.actor != idx);
                    }
                    "partition" => {
                        if cut_set {
                            return Err(ShareError::TwoPartitions);
                        }
                        cut_set = true;
                        let (s, d) = v
                            .split_once(',')
                            .ok_or_else(|| ShareError::BadPause { key: k.to_owned() })?;
                        let start = number(k, s)?;
                        let end = start.saturating_add(number(k, d)?);
                        if end > sc.horizon {
                            return Err(ShareError::PartitionTooLate {
                                client: actor.to_owned(),
                                horizon: sc.horizon,
                            });
                        }
                        sc.partition = Some(Partition {
                            actor: idx,
                            start,
                            end,
                        });
                    }
                    "locktimeout" => {
                        sc.actors[idx].lock_timeout = match v {
                            "none" => None,
                            _ => Some(number(k, v)?),
                        }
                    }
                    _ => return Err(unknown()),
                }
            }
        }
    }
    sc.validate().map_err(ShareError::Invalid)?;
    Ok(View { scenario: sc, step })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headline_round_trips() {
        let sc = Scenario::gc_pause().with_policy(FencingPolicy::Off);
        let hash = encode(&sc, 7);
        assert_eq!(hash, "#s=gc-pause&fence=off&ttl=30&pause.A=5,50&step=7");
        assert_eq!(
            decode(&hash),
            Ok(View {
                scenario: sc,
                step: 7
            })
        );
    }

    #[test]
    fn empty_hash_is_the_default() {
        assert_eq!(decode("").unwrap().scenario, Scenario::gc_pause());
        assert_eq!(decode("#").unwrap().step, 0);
    }

    #[test]
    fn bad_hashes_say_why() {
        let cases = [
            ("#s=nope", "no scenario called"),
            ("#fence=off", "names no scenario"),
            ("#s=gc-pause&fence=maybe", "fencing must be"),
            ("#s=gc-pause&ttl=-3", "whole number"),
            ("#s=gc-pause&ttl=0", "not valid"),
            ("#s=gc-pause&ttl=99999999999999999999", "whole number"),
            ("#s=gc-pause&pause.Z=1,2", "no client called"),
            ("#s=gc-pause&pause.A=90,50", "must end by"),
            ("#s=gc-pause&pause.A=5", "start,length"),
            ("#s=gc-pause&colour=red", "unknown setting"),
            ("#s=gc-pause&s=gc-pause", "given twice"),
            ("#s=gc-pause&ttl", "key=value"),
            ("#s=<script>", "unexpected character"),
            ("#s=partition&partition.A=90,20", "partition must end by"),
            ("#s=partition&partition.A=15", "start,length"),
            ("#s=partition&partition.A=15,0", "must end after it starts"),
            ("#s=partition&partition.A=1,2&partition.B=3,4", "one client"),
            (
                "#s=partition&locktimeout.A=0",
                "lock_timeout = 0 is out of range",
            ),
            ("#s=partition&locktimeout.A=soon", "whole number"),
        ];
        for (hash, want) in cases {
            let got = decode(hash).expect_err(hash).to_string();
            assert!(got.contains(want), "{hash}: {got}");
        }
        assert!(decode(&"a".repeat(MAX_HASH_LEN + 1)).is_err());
    }

    #[test]
    fn each_failure_has_its_kind() {
        use std::error::Error;
        let kind = |hash: &str| decode(hash).expect_err(hash);
        assert_eq!(
            kind(&"a".repeat(MAX_HASH_LEN + 1)),
            ShareError::TooLong {
                len: MAX_HASH_LEN + 1
            }
        );
        assert_eq!(kind("#s=<x"), ShareError::BadCharacter('<'));
        assert_eq!(
            kind("#s=a b").to_string(),
            "the link contains an unexpected character U+0020"
        );
        assert_eq!(kind("#s=nope"), ShareError::UnknownScenario("nope".into()));
        assert_eq!(kind("#ttl=3"), ShareError::NoScenario);
        assert_eq!(
            kind("#s=gc-pause&ttl=x"),
            ShareError::BadNumber {
                key: "ttl".into(),
                value: "x".into()
            }
        );
        assert!(matches!(
            kind("#s=gc-pause&barrier=maybe"),
            ShareError::BadChoice {
                what: "barrier",
                ..
            }
        ));
        assert_eq!(
            kind("#s=gc-pause&failover=500"),
            ShareError::FailoverTooLate { horizon: 100 }
        );
        assert_eq!(
            kind("#s=clock-jump&tokens=lock_service"),
            ShareError::TokensUnderRedlock
        );
        assert_eq!(
            kind("#s=gc-pause&x.A=1"),
            ShareError::UnknownKey("x.A".into())
        );
        // A scenario that fails validation keeps the core's error, as the source.
        let e = kind("#s=gc-pause&ttl=0");
        let ShareError::Invalid(inner) = &e else {
            panic!("{e:?}")
        };
        assert!(
            matches!(inner, ScenarioError::OutOfRange { .. }),
            "{inner:?}"
        );
        assert_eq!(
            e.to_string(),
            format!("the link's scenario is not valid: {inner}")
        );
        let source = e.source().expect("a source");
        assert_eq!(source.to_string(), inner.to_string());
        assert!(source.downcast_ref::<ScenarioError>().is_some());
        assert!(kind("#s=nope").source().is_none());
    }

    #[test]
    fn a_pause_added_to_b_and_one_removed_from_a_round_trip() {
        let mut sc = Scenario::gc_pause().with_pause(
            1,
            Pause {
                start: 40,
                duration: 20,
            },
        );
        sc.actors[0].pauses.clear();
        let hash = encode(&sc, 3);
        assert_eq!(
            hash,
            "#s=gc-pause&fence=strict&ttl=30&pause.A=none&pause.B=40,20&step=3"
        );
        assert_eq!(decode(&hash).unwrap().scenario, sc);
        // B has no pause in the deck, so having none says nothing.
        let plain = encode(&Scenario::gc_pause(), 0);
        assert!(!plain.contains("none"), "{plain}");
        assert!(
            decode("#s=gc-pause&pause.B=none").unwrap().scenario.actors[1]
                .pauses
                .is_empty()
        );
        let bad = decode("#s=gc-pause&pause.A=soon").unwrap_err().to_string();
        assert!(bad.contains("(or none)"), "{bad}");
    }

    #[test]
    fn added_clients_round_trip_with_their_pauses() {
        let sc = Scenario::gc_pause().with_clients(3).with_pause(
            2,
            Pause {
                start: 50,
                duration: 10,
            },
        );
        let hash = encode(&sc, 0);
        assert_eq!(
            hash,
            "#s=gc-pause&fence=strict&ttl=30&clients=3&pause.A=5,50&pause.C=50,10&step=0"
        );
        assert_eq!(decode(&hash).unwrap().scenario, sc);
        // Order in the hash does not matter: pause.C before clients=3 still names C.
        let reordered = "#s=gc-pause&pause.C=50,10&clients=3";
        assert_eq!(decode(reordered).unwrap().scenario.actors.len(), 3);
        for bad in ["clients=1", "clients=6", "clients=x"] {
            let e = decode(&format!("#s=gc-pause&{bad}"))
                .unwrap_err()
                .to_string();
            assert!(e.contains("2, 3, 4 or 5"), "{bad}: {e}");
        }
    }
}
