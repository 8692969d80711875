//! The shareable URL: the whole view (deck scenario, edited parameters, fencing policy,
//! step) as a short, readable hash such as
//! `#s=gc-pause&fence=strict&ttl=30&pause.A=5,50&step=10`.
//!
//! Decoding rebuilds the scenario from the deck and re-applies each parameter through
//! validation, so a hostile hash can only ever produce a refused load with a message.

use std::fmt;

use crate::core::deck;
use crate::core::{FencingPolicy, Millis, Pause, ReleaseMode, Scenario, TokenSource};

/// Longest hash accepted; a real one is well under 200 characters.
pub const MAX_HASH_LEN: usize = 2_000;

/// Why a hash could not be loaded; shown to the user as is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareError(pub String);

impl fmt::Display for ShareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn err<T>(msg: impl Into<String>) -> Result<T, ShareError> {
    Err(ShareError(msg.into()))
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
        if b.failover_at != sc.failover_at {
            match sc.failover_at {
                Some(t) => out.push_str(&format!("&failover={t}")),
                None => out.push_str("&failover=off"),
            }
        }
    }
    for (i, a) in sc.actors.iter().enumerate() {
        if let Some(p) = a.pauses.first() {
            out.push_str(&format!("&pause.{}={},{}", a.name, p.start, p.duration));
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
    if value.is_empty() || value.len() > 12 || !value.bytes().all(|b| b.is_ascii_digit()) {
        return err(format!(
            "“{key}” needs a whole number of milliseconds, not “{value}”"
        ));
    }
    value
        .parse::<Millis>()
        .or_else(|_| err(format!("“{key}” is out of range")))
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
        return err(format!(
            "the link is {} characters long; at most {MAX_HASH_LEN} are read",
            hash.len()
        ));
    }
    if let Some(c) = hash
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "-_.,=&".contains(*c)))
    {
        // A character that would not show (a control or a space) is named by code point.
        let shown = if c.is_whitespace() || c.is_control() {
            format!("U+{:04X}", u32::from(c))
        } else {
            format!("“{c}”")
        };
        return err(format!("the link contains an unexpected character {shown}"));
    }
    let mut pairs = Vec::new();
    for part in hash.split('&').filter(|p| !p.is_empty()) {
        let Some((k, v)) = part.split_once('=') else {
            return err(format!("“{part}” is not of the form key=value"));
        };
        if pairs.iter().any(|(seen, _)| *seen == k) {
            return err(format!("“{k}” is given twice"));
        }
        pairs.push((k, v));
    }
    let Some(&(_, id)) = pairs.iter().find(|(k, _)| *k == "s") else {
        return err("the link names no scenario (s=…)");
    };
    let Some(entry) = deck::find(id) else {
        return err(format!("there is no scenario called “{id}”"));
    };
    let mut sc = (entry.build)();
    let mut step = 0;
    for &(k, v) in &pairs {
        match k {
            "s" => {}
            "fence" => {
                sc.policy = FencingPolicy::from_code(v).ok_or_else(|| {
                    ShareError(format!(
                        "fencing must be off, strict or same_epoch, not “{v}”"
                    ))
                })?;
            }
            "ttl" => sc.lease_ttl = number(k, v)?,
            "release" => {
                sc.release = ReleaseMode::from_code(v).ok_or_else(|| {
                    ShareError(format!("release must be cad, get_del or del, not “{v}”"))
                })?;
            }
            "barrier" => {
                sc.skip_barrier = match v {
                    "on" => false,
                    "off" => true,
                    _ => return err(format!("barrier must be on or off, not “{v}”")),
                };
            }
            "failover" => {
                sc.failover_at = match v {
                    "off" => None,
                    _ => {
                        let t = number(k, v)?;
                        if t > sc.horizon {
                            return err(format!("the failover must come by t={} ms", sc.horizon));
                        }
                        Some(t)
                    }
                };
            }
            "tokens" => {
                let source = TokenSource::from_code(v)
                    .filter(|t| TokenSource::CHOICES.contains(t))
                    .ok_or_else(|| {
                        ShareError(format!(
                            "tokens must be same_redis or lock_service, not “{v}”"
                        ))
                    })?;
                if sc.redlock.is_some() {
                    return err("Redlock mints no token: tokens= does not apply to it");
                }
                sc.token_source = source;
            }
            "step" => step = usize::try_from(number(k, v)?).unwrap_or(usize::MAX),
            _ => {
                let (what, actor) = k
                    .split_once('.')
                    .ok_or_else(|| ShareError(format!("unknown setting “{k}”")))?;
                let idx = sc
                    .actor_index(actor)
                    .ok_or_else(|| ShareError(format!("“{id}” has no client called “{actor}”")))?;
                match what {
                    "pause" => {
                        let (s, d) = v
                            .split_once(',')
                            .ok_or_else(|| ShareError(format!("“{k}” needs start,length in ms")))?;
                        let pause = Pause {
                            start: number(k, s)?,
                            duration: number(k, d)?,
                        };
                        if pause.end() > sc.horizon {
                            return err(format!("{actor}'s pause must end by t={} ms", sc.horizon));
                        }
                        sc = sc.with_pause(idx, pause);
                    }
                    "delay" => sc.actors[idx].network_delay = number(k, v)?,
                    _ => return err(format!("unknown setting “{k}”")),
                }
            }
        }
    }
    sc.validate()
        .map_err(|e| ShareError(format!("the link's scenario is not valid: {e}")))?;
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
        ];
        for (hash, want) in cases {
            let got = decode(hash).expect_err(hash).0;
            assert!(got.contains(want), "{hash}: {got}");
        }
        assert!(decode(&"a".repeat(MAX_HASH_LEN + 1)).is_err());
    }
}
