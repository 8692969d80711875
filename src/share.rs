//! The shareable URL: the whole view (deck scenario, edited parameters, fencing policy,
//! step) as a short, readable hash such as
//! `#s=gc-pause&fence=strict&ttl=30&pause.A=5,50&step=10`.
//!
//! `&embed` (a flag, no value) shows the same view inside another page's frame: the run
//! without the page's own chrome ([`embed_code`] writes the `<iframe>` for it).
//!
//! Each `key=value` after `s=` is one [`ScenarioEdit`] of the deck entry, written and read
//! by the edit itself, but for the faults: `faults=` carries the whole fault list, every kind
//! alike ([`faults`]). The per-fault keys of older links (`failover=`, `lag=`, `partition.X=`)
//! still read as they did. Decoding rebuilds the scenario from the deck and applies each edit
//! under the same rules as the page's own, then validates the result, so a hostile hash can
//! only ever produce a refused load with a message.

mod faults;

use std::fmt;

use crate::core::deck;
use crate::core::{FencingPolicy, Scenario, ScenarioError};
use crate::lab::bounds::shown;
use crate::lab::{ParseError, ScenarioEdit};

/// Longest hash accepted; a real one is well under 200 characters.
pub const MAX_HASH_LEN: usize = 2_000;

/// Why a hash could not be loaded. Its [`Display`](fmt::Display) is shown to the user as is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShareError {
    /// Longer than [`MAX_HASH_LEN`] (the length it had).
    TooLong { len: usize },
    /// A character outside `a-z A-Z 0-9 - _ . , = &`, once `%`-escapes are read (the
    /// browser escapes `<` as `%3C`; the message names the `<` the user typed).
    BadCharacter(char),
    /// A `%` not followed by two hex digits.
    BadEscape,
    /// A `%`-escape of a byte past ASCII: a letter or a sign from other text.
    NotText,
    /// A part with no `=` (other than the `embed` flag).
    NotKeyValue(String),
    /// `embed=…`: the flag takes no value.
    FlagWithValue(String),
    /// The same key twice.
    Repeated(String),
    /// No `s=`.
    NoScenario,
    /// `s=` names no deck entry.
    UnknownScenario(String),
    /// `step=` that is not a whole number.
    BadStep(String),
    /// `partition.X` for two clients: one is cut off at a time.
    TwoPartitions,
    /// An item of `faults=` that is no fault.
    BadFault(String),
    /// A setting's `key=value` that is no edit of the scenario, or an edit that cannot be
    /// made to it: the lab's own error, the same rule the page's own edits follow.
    Edit(ParseError),
    /// Every value parsed, but the scenario they make fails [`Scenario::validate`].
    Invalid(ScenarioError),
}

impl fmt::Display for ShareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShareError::TooLong { len } => write!(
                f,
                "a link can be at most {MAX_HASH_LEN} characters long, and this one has {len}"
            ),
            ShareError::BadCharacter(' ') => f.write_str("a link cannot contain a space"),
            ShareError::BadCharacter(c) => {
                // A character that would not show (a control or a space) is named by code point.
                if c.is_whitespace() || c.is_control() {
                    write!(
                        f,
                        "a link cannot contain the invisible character U+{:04X}",
                        u32::from(*c)
                    )
                } else {
                    write!(f, "a link cannot contain “{c}”")
                }
            }
            ShareError::BadEscape => f.write_str(
                "the link has a broken escape: a % in a link is followed by two hex digits",
            ),
            ShareError::NotText => {
                f.write_str("a link holds only the letters a-z and A-Z, digits and - _ . , = &")
            }
            ShareError::NotKeyValue(part) => write!(
                f,
                "“{}” has no value: a link's settings are written key=value, e.g. ttl=30",
                shown(part)
            ),
            ShareError::FlagWithValue(key) => {
                write!(f, "“{key}” takes no value (write &{key})")
            }
            ShareError::Repeated(key) => write!(f, "“{}” is given twice", shown(key)),
            ShareError::NoScenario => {
                f.write_str("the link names no scenario (it starts s=…, e.g. s=gc-pause)")
            }
            ShareError::UnknownScenario(id) => {
                write!(f, "there is no scenario called “{}”", shown(id))
            }
            ShareError::BadStep(value) => {
                write!(f, "the step must be a whole number, not “{value}”")
            }
            ShareError::TwoPartitions => {
                f.write_str("only one client can be cut off from the lock service at a time")
            }
            ShareError::BadFault(item) => write!(
                f,
                "“{}” is not a fault: faults=… lists kind.at…, e.g. failover.5.10 or partition.10.40.A.lock",
                shown(item)
            ),
            ShareError::Edit(e) => e.fmt(f),
            // The reason stays in the message: the page shows this text and nothing else.
            ShareError::Invalid(e) => write!(f, "the link's scenario is not valid: {e}"),
        }
    }
}

impl std::error::Error for ShareError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ShareError::Invalid(e) => Some(e),
            ShareError::Edit(e) => Some(e),
            _ => None,
        }
    }
}

impl From<ParseError> for ShareError {
    fn from(e: ParseError) -> Self {
        ShareError::Edit(e)
    }
}

impl From<ScenarioError> for ShareError {
    fn from(e: ScenarioError) -> Self {
        ShareError::Invalid(e)
    }
}

/// The flag that shows the view in another page's frame.
pub const EMBED: &str = "embed";

/// What a hash restores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    pub scenario: Scenario,
    pub step: usize,
    /// Shown in another page's frame (`&embed`): the run without the page's chrome.
    pub embed: bool,
}

/// The hash (with its leading `#`) for a scenario built from the deck, at `step`: the
/// edits that make it from its deck entry, each as its `key=value`.
pub fn encode(sc: &Scenario, step: usize) -> String {
    let mut out = format!("#s={}", sc.id);
    for (key, value) in ScenarioEdit::from_deck(sc)
        .iter()
        .filter_map(|e| e.link(sc))
    {
        out.push_str(&format!("&{key}={value}"));
    }
    let base = deck::find(&sc.id).map(|e| (e.build)().faults);
    if base.is_some_and(|faults| faults != sc.faults) {
        out.push_str(&format!("&{}={}", faults::KEY, faults::write(sc)));
    }
    out.push_str(&format!("&step={step}"));
    out
}

/// [`encode`], with the `&embed` flag when the view is embedded.
pub fn encode_view(sc: &Scenario, step: usize, embed: bool) -> String {
    let mut out = encode(sc, step);
    if embed {
        out.push('&');
        out.push_str(EMBED);
    }
    out
}

/// Whether a hash asks for the embedded view, even one that does not load: a broken link
/// in someone's frame still shows the run in the frame's layout.
pub fn asks_for_embed(hash: &str) -> bool {
    hash.trim_start_matches('#').split('&').any(|p| p == EMBED)
}

/// The `<iframe>` that shows this view in another page: `page` is the address of the
/// page on screen without its hash, so a sub-path or the single file is kept as it is.
/// 640×400 is the smallest frame the embedded view is laid out for; it follows a larger one.
pub fn embed_code(page: &str, sc: &Scenario, step: usize) -> String {
    use crate::view::timeline::esc;
    let title = deck::find(&sc.id).map_or(sc.id.as_str(), |e| e.title);
    format!(
        r#"<iframe src="{}" title="fencing-lab: {}" width="640" height="400" style="border: 0; max-width: 100%;" loading="lazy"></iframe>"#,
        esc(&format!("{page}{}", encode_view(sc, step, true))),
        esc(title)
    )
}

/// What the page says when the embed code is copied: a page opened from a file cannot be
/// framed by anyone else's page, so the code is only good once the page is hosted.
pub fn embed_note(protocol: &str) -> &'static str {
    if protocol == "file:" {
        "Embed code copied, but this page is opened from a file, which another page cannot frame: \
         host fencing-lab.html (or dist/) on any static host, open it there and copy the code again."
    } else {
        "Embed code copied: paste it into your page's HTML (a frame of 640×400 or larger)."
    }
}

/// The deck entry a hash names (its `s=`), read as [`decode`] reads it (none if the hash is
/// malformed), unchecked against the deck: what the page must have to load it.
pub fn named_entry(hash: &str) -> String {
    let hash = hash.strip_prefix('#').unwrap_or(hash);
    let text = unescape(hash).unwrap_or_default();
    let pairs = pairs(&text).unwrap_or_default();
    pairs
        .iter()
        .find(|(k, _)| *k == "s")
        .map_or_else(String::new, |&(_, id)| id.to_owned())
}

/// The page's default view: the headline with fencing off, so a presenter shows the
/// failure first and turns fencing on with one `f`. A link that cannot be read opens it.
pub fn headline() -> Scenario {
    Scenario::gc_pause().with_policy(FencingPolicy::Off)
}

/// Parses a hash (with or without the leading `#`). An empty hash is the default view.
pub fn decode(hash: &str) -> Result<View, ShareError> {
    let hash = hash.strip_prefix('#').unwrap_or(hash);
    let text = unescape(hash)?;
    let pairs = pairs(&text)?;
    let embed = pairs.iter().any(|(k, _)| *k == EMBED);
    // An empty hash (or the flag alone) is the default view: the headline with fencing
    // off, so a presenter shows the failure first and turns fencing on with one `f`.
    if pairs.len() == usize::from(embed) {
        return Ok(View {
            scenario: headline(),
            step: 0,
            embed,
        });
    }
    let Some(&(_, id)) = pairs.iter().find(|(k, _)| *k == "s") else {
        return Err(ShareError::NoScenario);
    };
    let Some(entry) = deck::find(id) else {
        return Err(ShareError::UnknownScenario(id.to_owned()));
    };
    // A link that names no fencing opens, as the page does, with fencing off.
    let mut sc = (entry.build)().with_policy(FencingPolicy::Off);
    // The clients first, so `pause.C` can name a client that `clients=3` adds.
    let (clients, rest): (Vec<_>, Vec<_>) = pairs.iter().partition(|(k, _)| *k == "clients");
    let mut step = 0;
    let mut cut_set = false;
    for &(k, v) in clients.into_iter().chain(rest) {
        match k {
            "s" | EMBED => {}
            "step" => step = read_step(v)?,
            faults::KEY => {
                sc.faults = faults::read(&sc, v).map_err(ShareError::BadFault)?;
                ScenarioEdit::check_faults(&sc).map_err(ParseError::Refused)?;
            }
            _ => {
                // One client is cut off at a time: a link that cuts off two is refused.
                if k.starts_with("partition.") && v != "none" {
                    if cut_set {
                        return Err(ShareError::TwoPartitions);
                    }
                    cut_set = true;
                }
                let edit = ScenarioEdit::parse(k, v, &sc)?;
                sc = edit.apply(&sc).map_err(ParseError::Refused)?;
            }
        }
    }
    sc.validate().map_err(ShareError::Invalid)?;
    Ok(View {
        scenario: sc,
        step,
        embed,
    })
}

/// What the page says when a link does not load: why, and what it shows instead.
pub fn not_loaded(e: &ShareError) -> String {
    format!("This link cannot be loaded: {e}; showing the headline instead.")
}

/// A step: any whole number (past the end is the end).
fn read_step(v: &str) -> Result<usize, ShareError> {
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ShareError::BadStep(shown(v)));
    }
    Ok(v.parse().unwrap_or(usize::MAX))
}

/// The hash as the user wrote it: the browser hands it over `%`-escaped (`<` as `%3C`),
/// and a message must name what the user typed. Checked for length first, as it came.
fn unescape(hash: &str) -> Result<String, ShareError> {
    if hash.len() > MAX_HASH_LEN {
        return Err(ShareError::TooLong { len: hash.len() });
    }
    let mut chars = hash.chars();
    let mut out = String::with_capacity(hash.len());
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut hex = || chars.next().and_then(|c| c.to_digit(16));
        match (hex(), hex()) {
            // A link holds ASCII only; an escaped byte past it is part of other text.
            (Some(hi), Some(lo)) if hi < 8 => out.push(char::from((hi * 16 + lo) as u8)),
            (Some(_), Some(_)) => return Err(ShareError::NotText),
            _ => return Err(ShareError::BadEscape),
        }
    }
    Ok(out)
}

/// The hash's `key=value` parts, checked for characters and repeats.
fn pairs(hash: &str) -> Result<Vec<(&str, &str)>, ShareError> {
    if let Some(c) = hash
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "-_.,=&".contains(*c)))
    {
        return Err(ShareError::BadCharacter(c));
    }
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    for part in hash.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = match part.split_once('=') {
            Some((EMBED, _)) => return Err(ShareError::FlagWithValue(EMBED.to_owned())),
            Some(kv) => kv,
            None if part == EMBED => (EMBED, ""),
            None => return Err(ShareError::NotKeyValue(part.to_owned())),
        };
        if pairs.iter().any(|(seen, _)| *seen == k) {
            return Err(ShareError::Repeated(k.to_owned()));
        }
        pairs.push((k, v));
    }
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::{FencingPolicy, Pause};
    use crate::lab::bounds::{Problem, Refusal, Unit};
    use crate::lab::EditError;

    #[test]
    fn headline_round_trips() {
        let sc = Scenario::gc_pause().with_policy(FencingPolicy::Off);
        let hash = encode(&sc, 7);
        assert_eq!(hash, "#s=gc-pause&fence=off&ttl=30&pause.A=5,50&step=7");
        assert_eq!(
            decode(&hash),
            Ok(View {
                scenario: sc,
                step: 7,
                embed: false,
            })
        );
    }

    /// The page opens with fencing off, the failure first: so does a deck link that names
    /// no fencing (the README's and docs/deck.md's `#s=<id>`), and `fence=` still picks.
    #[test]
    fn a_link_that_names_no_fencing_opens_with_fencing_off() {
        for e in crate::core::DECK {
            let view = decode(&format!("#s={}", e.id)).expect(e.id);
            assert_eq!(view.scenario.policy, FencingPolicy::Off, "{}", e.id);
            let strict = decode(&format!("#s={}&fence=strict", e.id)).expect(e.id);
            assert_eq!(strict.scenario.policy, FencingPolicy::Strict, "{}", e.id);
        }
        assert_eq!(decode("").map(|v| v.scenario), Ok(headline()));
        assert_eq!(headline().policy, FencingPolicy::Off);
    }

    #[test]
    fn the_entry_a_link_names_is_its_s() {
        assert_eq!(named_entry("#fence=off&s=row-lock&step=3"), "row-lock");
        assert_eq!(named_entry("s=toctou"), "toctou");
        assert_eq!(named_entry("#fence=off"), "");
        assert_eq!(named_entry(""), "");
        // A hash decode refuses names nothing to fetch for: its load says what is wrong.
        assert_eq!(named_entry("#s=toctou&s=row-lock"), "");
    }

    #[test]
    fn the_embed_flag_round_trips_and_takes_no_value() {
        let sc = Scenario::gc_pause().with_policy(FencingPolicy::Off);
        let hash = encode_view(&sc, 4, true);
        assert_eq!(
            hash,
            "#s=gc-pause&fence=off&ttl=30&pause.A=5,50&step=4&embed"
        );
        let view = decode(&hash).unwrap();
        assert!(view.embed);
        assert_eq!((view.scenario, view.step), (sc.clone(), 4));
        // Anywhere in the hash, and alone (the default view, embedded).
        assert!(decode("#embed&s=gc-pause&step=2").unwrap().embed);
        let alone = decode("#embed").unwrap();
        assert!(alone.embed && alone.step == 0);
        assert_eq!(
            alone.scenario,
            Scenario::gc_pause().with_policy(FencingPolicy::Off)
        );
        assert!(!decode(&encode_view(&sc, 4, false)).unwrap().embed);
        assert_eq!(
            decode("#s=gc-pause&embed=1"),
            Err(ShareError::FlagWithValue("embed".into()))
        );
        let said = decode("#s=gc-pause&embed=yes").unwrap_err().to_string();
        assert_eq!(said, "“embed” takes no value (write &embed)");
        assert_eq!(
            decode("#s=gc-pause&embed&embed"),
            Err(ShareError::Repeated("embed".into()))
        );
        assert_eq!(decode("#embed&ttl=3"), Err(ShareError::NoScenario));
        assert!(asks_for_embed("#embed&ttl=3") && asks_for_embed("#s=nope&embed"));
        assert!(!asks_for_embed("#s=gc-pause&embedded") && !asks_for_embed(""));
    }

    #[test]
    fn embed_code_frames_this_view_from_this_address() {
        let sc = Scenario::gc_pause();
        let code = embed_code("https://example.org/tools/fencing-lab/", &sc, 3);
        assert_eq!(
            code,
            "<iframe src=\"https://example.org/tools/fencing-lab/#s=gc-pause&amp;fence=strict&amp;ttl=30&amp;pause.A=5,50&amp;step=3&amp;embed\" \
             title=\"fencing-lab: GC pause\" \
             width=\"640\" height=\"400\" style=\"border: 0; max-width: 100%;\" loading=\"lazy\"></iframe>"
        );
        // The page's address is attribute text: a quote in it cannot end the attribute.
        let odd = embed_code("file:///tmp/a\"b/fencing-lab.html", &sc, 0);
        assert!(
            odd.starts_with("<iframe src=\"file:///tmp/a&quot;b/fencing-lab.html#s="),
            "{odd}"
        );
        assert!(embed_note("file:").contains("host fencing-lab.html"));
        assert!(embed_note("https:").starts_with("Embed code copied"));
    }

    #[test]
    fn empty_hash_is_the_default() {
        assert_eq!(
            decode("").unwrap().scenario,
            Scenario::gc_pause().with_policy(FencingPolicy::Off),
            "the page opens on the failure: fencing off"
        );
        assert_eq!(decode("#").unwrap().step, 0);
    }

    #[test]
    fn bad_hashes_say_why() {
        let cases = [
            ("#s=nope", "no scenario called"),
            ("#fence=off", "names no scenario"),
            ("#s=gc-pause&fence=maybe", "fencing must be"),
            ("#s=gc-pause&ttl=-3", "-3 is negative"),
            (
                "#s=gc-pause&ttl=0",
                "Lease TTL must be between 1 ms and 10 minutes",
            ),
            ("#s=gc-pause&ttl=99999999999999999999", "is too long"),
            ("#s=gc-pause&pause.Z=1,2", "no client called"),
            ("#s=gc-pause&pause.A=90,50", "must end by"),
            ("#s=gc-pause&pause.A=5", "start,length"),
            ("#s=gc-pause&colour=red", "no setting called “colour”"),
            ("#s=gc-pause&s=gc-pause", "given twice"),
            ("#s=gc-pause&ttl", "key=value"),
            ("#s=<script>", "a link cannot contain “<”"),
            ("#s=%3Cscript%3E", "a link cannot contain “<”"),
            ("#s=gc-pause%", "broken escape"),
            ("#s=partition&partition.A=90,20", "partition must end by"),
            ("#s=partition&partition.A=15", "start,length"),
            (
                "#s=partition&partition.A=15,0",
                "A partition length must be between 1 ms",
            ),
            ("#s=partition&partition.A=1,2&partition.B=3,4", "one client"),
            (
                "#s=partition&locktimeout.A=0",
                "A lock timeout must be between 1 ms and 10 minutes (0 ms is too short)",
            ),
            (
                "#s=partition&locktimeout.A=soon",
                "“soon” is not a whole number",
            ),
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
        assert_eq!(kind("#s=a b").to_string(), "a link cannot contain a space");
        assert_eq!(kind("#s=a%0A"), ShareError::BadCharacter('\n'));
        assert_eq!(kind("#s=%zz"), ShareError::BadEscape);
        assert_eq!(kind("#s=%C3"), ShareError::NotText);
        assert_eq!(kind("#s=nope"), ShareError::UnknownScenario("nope".into()));
        assert_eq!(kind("#ttl=3"), ShareError::NoScenario);
        assert!(matches!(
            kind("#s=gc-pause&ttl=x"),
            ShareError::Edit(ParseError::Refused(EditError::OutOfBounds(_)))
        ));
        assert_eq!(kind("#s=gc-pause&step=x"), ShareError::BadStep("x".into()));
        assert!(matches!(
            kind("#s=gc-pause&barrier=maybe"),
            ShareError::Edit(ParseError::BadChoice {
                what: "barrier",
                ..
            })
        ));
        assert_eq!(
            kind("#s=gc-pause&failover=500"),
            ShareError::Edit(ParseError::Refused(EditError::OutOfBounds(Refusal {
                label: "Failover at".into(),
                min: 0,
                max: 100,
                unit: Unit::Instant,
                problem: Problem::Above("500".into()),
                note: Some("the failover must come by t=100 ms, the end of the timeline".into()),
            })))
        );
        assert_eq!(
            kind("#s=clock-jump&tokens=lock_service"),
            ShareError::Edit(ParseError::Refused(EditError::NotForLock(
                "Redlock mints no token: its token source cannot change"
            )))
        );
        assert_eq!(
            kind("#s=gc-pause&x.A=1"),
            ShareError::Edit(ParseError::UnknownKey("x.A".into()))
        );
        // A scenario that fails validation keeps the core's error, as the source.
        let e = kind("#s=row-lock&failover=5");
        let ShareError::Invalid(inner) = &e else {
            panic!("{e:?}")
        };
        assert!(
            matches!(inner, ScenarioError::NotForRowLock { .. }),
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
            assert!(
                e.starts_with("Clients must be between 2 and 5 ("),
                "{bad}: {e}"
            );
        }
    }
}
