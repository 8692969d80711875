//! One change to the scenario on screen, and its rules, in one place: the lab applies it
//! when the presenter asks, the shareable URL writes it as `key=value` and reads it back,
//! and the What if… panel offers it only where it changes something.

use std::fmt;

use super::bounds::{shown, Number, Refusal, Setting};
use crate::core::{
    deck, FaultAt, FencingPolicy, LockKind, Millis, Pause, ReleaseMode, Scenario, Step,
    StorageCheck, TokenSource, CLIENTS,
};

use super::faults;
use crate::core::fault::Shape;

/// How long a new pause is before it is dragged to size.
pub const NEW_PAUSE_MS: Millis = 10;

/// How long a new packet delay is (the field beside it then takes the exact value).
pub const NEW_DELAY_MS: Millis = 10;

/// One edit of a scenario's settings. Each sets a value (it does not toggle), so applying
/// the same edit twice gives the same scenario, and a link is the list of edits that make
/// its view from the deck entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScenarioEdit {
    Policy(FencingPolicy),
    Ttl(Millis),
    /// Add or drop clients, keeping 2 to 5: a new one copies the last one's script.
    Clients(usize),
    /// Where tokens come from (not for Redlock, which mints none).
    Tokens(TokenSource),
    /// How clients release the lock.
    Release(ReleaseMode),
    /// Whether the handoff barrier runs.
    Barrier(bool),
    /// How storage validates a token: the highest seen only, or a sequencer check with the
    /// lock service as well.
    Check(StorageCheck),
    LockDelay(Millis),
    /// The round trip between the clients and the lock service (0: the same region).
    LockRtt(Millis),
    /// How slow the clients' clocks run, per mille.
    Drift(u64),
    /// How much earlier than the TTL a client stops.
    Margin(Millis),
    /// The scenario's `index`-th fault set to `fault`, or taken away (`None`); one past
    /// the last adds one (taking away one that is not there changes nothing). Any kind, any
    /// field: the list stays in time order, and the scenario's own rules check the result.
    Fault {
        index: usize,
        fault: Option<FaultAt>,
    },
    /// A client's pause (only the first is edited), or none.
    Pause {
        actor: usize,
        pause: Option<Pause>,
    },
    LockTimeout {
        actor: usize,
        timeout: Option<Millis>,
    },
    Delay {
        actor: usize,
        delay: Millis,
    },
}

/// Why an edit cannot be made to a scenario. The scenario stays as it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditError {
    /// An actor index past the scenario's clients.
    NoClient(usize),
    /// A number outside its [`Setting`]'s range, or text that is no number.
    OutOfBounds(Refusal),
    /// A setting the scenario's lock does not have (Redlock's token source, Redis's
    /// lock-delay): the lock's own words for why.
    NotForLock(&'static str),
    PauseTooLate {
        client: String,
        horizon: Millis,
        end: Millis,
    },
    /// A pause added at or after the horizon.
    PauseStartTooLate {
        horizon: Millis,
    },
    PartitionTooLate {
        client: String,
        horizon: Millis,
    },
    /// A pause added to a client that has one (drag it instead).
    AlreadyPaused(String),
    /// A pause removed from a client that has none.
    NoPause(String),
}

impl fmt::Display for EditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EditError::NoClient(i) => write!(f, "there is no actor number {i}"),
            EditError::OutOfBounds(why) => why.fmt(f),
            EditError::NotForLock(why) => f.write_str(why),
            EditError::PauseTooLate {
                client,
                horizon,
                end,
            } => write!(
                f,
                "{client}'s pause must end by t={horizon} ms, the end of the timeline (it would end at {end} ms)"
            ),
            EditError::PauseStartTooLate { horizon } => write!(
                f,
                "a pause must start before t={horizon} ms, the end of the timeline"
            ),
            EditError::PartitionTooLate { client, horizon } => {
                write!(
                    f,
                    "{client}'s partition must end by t={horizon} ms, the end of the timeline"
                )
            }
            EditError::AlreadyPaused(name) => {
                write!(f, "{name} already has a pause: drag it, or remove it first")
            }
            EditError::NoPause(name) => write!(f, "{name} has no pause to remove"),
        }
    }
}

impl std::error::Error for EditError {}

/// Why a link's `key=value` is not an edit of the scenario (the layer under
/// `share::ShareError`, which wraps it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// A key that is not a setting (nor `pause.` / `delay.` of a client).
    UnknownKey(String),
    /// `pause.X` or `delay.X` for a client the scenario does not have.
    UnknownClient { scenario: String, client: String },
    /// A value outside a key's choices, e.g. `fence=maybe`.
    BadChoice {
        /// What the key sets, as the message names it (`fencing`, `release`, …).
        what: &'static str,
        /// The values it takes, as the message lists them (from the enum's table).
        choices: String,
        value: String,
    },
    /// `pause.X` without `start,length`.
    BadPause { key: String },
    /// A value that parsed, but its edit cannot be made to the scenario (a pause past the
    /// horizon, `tokens=` under Redlock, …): the same rule the page's own edits follow.
    Refused(EditError),
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::UnknownKey(key) => {
                write!(f, "a link has no setting called “{}”", shown(key))
            }
            ParseError::UnknownClient { scenario, client } => {
                write!(f, "“{scenario}” has no client called “{}”", shown(client))
            }
            ParseError::BadChoice {
                what,
                choices,
                value,
            } => write!(f, "{what} must be {choices}, not “{}”", shown(value)),
            ParseError::BadPause { key } => write!(
                f,
                "“{key}” needs start,length in ms, e.g. {key}=5,50 (or none)"
            ),
            ParseError::Refused(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ParseError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ParseError::Refused(e) => Some(e),
            _ => None,
        }
    }
}

impl ScenarioEdit {
    /// `sc` with this edit made, or why it cannot be. Only the edit's own rules are checked
    /// here (a client that exists, a time inside the timeline); the caller validates the
    /// whole scenario, once, after its last edit.
    pub fn apply(self, sc: &Scenario) -> Result<Scenario, EditError> {
        self.check_bounds(sc)?;
        let mut sc = sc.clone();
        let horizon = sc.horizon;
        let client = |sc: &Scenario, actor: usize| {
            sc.actors
                .get(actor)
                .map(|a| a.name.clone())
                .ok_or(EditError::NoClient(actor))
        };
        match self {
            ScenarioEdit::Policy(p) => sc.policy = p,
            ScenarioEdit::Ttl(t) => sc.lease_ttl = t,
            ScenarioEdit::Clients(n) => sc = sc.with_clients(n),
            ScenarioEdit::Tokens(t) => {
                sc.lock = sc.lock.with_tokens(t).map_err(EditError::NotForLock)?
            }
            ScenarioEdit::Release(m) => sc.release = m,
            ScenarioEdit::Barrier(on) => sc.skip_barrier = !on,
            ScenarioEdit::Check(c) => sc.check = c,
            ScenarioEdit::LockDelay(t) => {
                sc.lock = sc.lock.with_lock_delay(t).map_err(EditError::NotForLock)?
            }
            ScenarioEdit::LockRtt(t) => sc.lock_rtt = t,
            ScenarioEdit::Drift(d) => sc.client_drift = d,
            ScenarioEdit::Margin(t) => sc.deadline_margin = t,
            ScenarioEdit::Fault { index, fault } => faults::set_fault(&mut sc, index, fault),
            ScenarioEdit::Pause { actor, pause } => {
                let client = client(&sc, actor)?;
                match pause {
                    Some(p) if p.end() > horizon => {
                        return Err(EditError::PauseTooLate {
                            client,
                            horizon,
                            end: p.end(),
                        })
                    }
                    Some(p) => sc = sc.with_pause(actor, p),
                    None => sc.actors[actor].pauses.clear(),
                }
            }
            ScenarioEdit::LockTimeout { actor, timeout } => {
                client(&sc, actor)?;
                sc.actors[actor].lock_timeout = timeout;
            }
            ScenarioEdit::Delay { actor, delay } => {
                client(&sc, actor)?;
                sc.actors[actor].network_delay = delay;
            }
        }
        Ok(sc)
    }

    /// Every number of this edit inside its [`Setting`]'s range (and a fault by the
    /// timeline's end): the edit is read back from its own `key=value`, as a link is, so a
    /// field, a gesture and a link meet one rule and one sentence; a fault's numbers are
    /// read against the ranges its What if… fields are labelled with.
    fn check_bounds(&self, sc: &Scenario) -> Result<(), EditError> {
        if let ScenarioEdit::Fault {
            index,
            fault: Some(f),
        } = self
        {
            return faults::check_fault(sc, *index, f).map_err(EditError::OutOfBounds);
        }
        let Some((key, value)) = self.link(sc) else {
            return Ok(());
        };
        match Self::parse(&key, &value, sc) {
            Err(ParseError::Refused(e)) => Err(e),
            _ => Ok(()),
        }
    }

    /// Whether this edit changes anything in `sc`'s design, so the What if… panel offers it:
    /// Redlock mints no token; a row lock has no lock server, no token and no release but
    /// its COMMIT; a fault is one of the scenario's, or one more ([`fault_applies`](super::fault_applies) says
    /// which kinds a design can be given). (A link may still carry such an edit: it loads,
    /// and changes nothing.)
    pub fn applies_to(&self, sc: &Scenario) -> bool {
        let single = sc.lock.is_single();
        match *self {
            ScenarioEdit::Tokens(_) => single,
            ScenarioEdit::LockRtt(_) => sc.lock.row().is_none(),
            ScenarioEdit::Check(_) | ScenarioEdit::Release(_) => sc.lock.row().is_none(),
            ScenarioEdit::Barrier(_) => sc.actors.iter().any(|a| a.script.contains(&Step::Barrier)),
            ScenarioEdit::Fault { index, .. } => index <= sc.faults.len(),
            ScenarioEdit::LockDelay(_) => matches!(sc.lock, LockKind::Service(_)),
            ScenarioEdit::Clients(n) => CLIENTS.contains(&n),
            ScenarioEdit::Pause { actor, .. }
            | ScenarioEdit::LockTimeout { actor, .. }
            | ScenarioEdit::Delay { actor, .. } => actor < sc.actors.len(),
            ScenarioEdit::Policy(_)
            | ScenarioEdit::Ttl(_)
            | ScenarioEdit::Drift(_)
            | ScenarioEdit::Margin(_) => true,
        }
    }

    /// A new fault of kind `shape` for `sc`, inside its timeline (the What if… "Add
    /// fault"); refused in the lock's words where the design has no such thing.
    pub fn add_fault(sc: &Scenario, shape: &Shape) -> Result<Self, EditError> {
        if let Some(why) = faults::not_for(sc, shape) {
            return Err(EditError::NotForLock(why));
        }
        Ok(ScenarioEdit::Fault {
            index: sc.faults.len(),
            fault: Some((shape.fresh)(sc.horizon)),
        })
    }

    /// The edit a What if… field of `sc`'s `index`-th fault makes with `text` (typed, or a
    /// select's value), or why it makes none, as a sentence.
    pub fn fault_field(
        sc: &Scenario,
        index: usize,
        name: &str,
        text: &str,
    ) -> Result<Self, String> {
        let fault = faults::field(sc, index, name, text)?;
        Ok(Self::placed((index, Some(fault))))
    }

    /// Every fault of `sc` under the rules of the page's own fault edits (a link's
    /// `faults=` is checked so): the first refused, in its field's words.
    pub fn check_faults(sc: &Scenario) -> Result<(), EditError> {
        let mut each = sc.faults.iter().enumerate();
        each.try_for_each(|(i, f)| faults::check_fault(sc, i, f))
            .map_err(EditError::OutOfBounds)
    }

    fn placed((index, fault): faults::Placed) -> Self {
        ScenarioEdit::Fault { index, fault }
    }

    /// The pause a client without one gets at `at` (the what-if button; a drag on an empty
    /// lane draws one instead): [`NEW_PAUSE_MS`] long, or up to the horizon.
    pub fn add_pause(sc: &Scenario, actor: usize, at: Millis) -> Result<Self, EditError> {
        let a = sc.actors.get(actor).ok_or(EditError::NoClient(actor))?;
        if !a.pauses.is_empty() {
            return Err(EditError::AlreadyPaused(a.name.clone()));
        }
        if at >= sc.horizon {
            return Err(EditError::PauseStartTooLate {
                horizon: sc.horizon,
            });
        }
        let pause = Pause {
            start: at,
            duration: NEW_PAUSE_MS.min(sc.horizon - at),
        };
        Ok(ScenarioEdit::Pause {
            actor,
            pause: Some(pause),
        })
    }

    /// Taking a client's pause away (a double-click, `Delete`, or the what-if button).
    pub fn remove_pause(sc: &Scenario, actor: usize) -> Result<Self, EditError> {
        let a = sc.actors.get(actor).ok_or(EditError::NoClient(actor))?;
        if a.pauses.is_empty() {
            return Err(EditError::NoPause(a.name.clone()));
        }
        Ok(ScenarioEdit::Pause { actor, pause: None })
    }

    /// The edits that make `sc` from its deck entry, in the link's order: the policy and
    /// TTL always (a link says them), then whatever differs from the entry, but the faults
    /// (the link's one `faults=` carries their whole list).
    pub fn from_deck(sc: &Scenario) -> Vec<Self> {
        let base = deck::find(&sc.id).map(|e| (e.build)());
        let mut edits = vec![
            ScenarioEdit::Policy(sc.policy),
            ScenarioEdit::Ttl(sc.lease_ttl),
        ];
        if let Some(b) = &base {
            let differs = |changed: bool, edit| changed.then_some(edit);
            edits.extend(
                [
                    differs(
                        b.actors.len() != sc.actors.len(),
                        ScenarioEdit::Clients(sc.actors.len()),
                    ),
                    differs(
                        b.lock.token_source() != sc.lock.token_source(),
                        ScenarioEdit::Tokens(sc.lock.token_source()),
                    ),
                    differs(b.release != sc.release, ScenarioEdit::Release(sc.release)),
                    differs(sc.skip_barrier, ScenarioEdit::Barrier(false)),
                    differs(b.check != sc.check, ScenarioEdit::Check(sc.check)),
                    differs(
                        b.lock.lock_delay() != sc.lock.lock_delay(),
                        ScenarioEdit::LockDelay(sc.lock.lock_delay()),
                    ),
                    differs(
                        b.lock_rtt != sc.lock_rtt,
                        ScenarioEdit::LockRtt(sc.lock_rtt),
                    ),
                    differs(
                        b.client_drift != sc.client_drift,
                        ScenarioEdit::Drift(sc.client_drift),
                    ),
                    differs(
                        b.deadline_margin != sc.deadline_margin,
                        ScenarioEdit::Margin(sc.deadline_margin),
                    ),
                ]
                .into_iter()
                .flatten(),
            );
        }
        for actor in 0..sc.actors.len() {
            edits.extend(Self::client_from_deck(base.as_ref(), sc, actor));
        }
        edits
    }

    /// What differs for one client: its pause (always said when it has one, and `none` when
    /// the entry's was removed), its lock timeout and packet delay.
    fn client_from_deck(base: Option<&Scenario>, sc: &Scenario, actor: usize) -> Vec<Self> {
        let a = &sc.actors[actor];
        let b = base.and_then(|b| b.actors.get(actor));
        let pause = a.pauses.first().copied();
        let paused_in_deck = b.is_some_and(|b| !b.pauses.is_empty());
        let mut edits = Vec::new();
        if pause.is_some() || paused_in_deck {
            edits.push(ScenarioEdit::Pause { actor, pause });
        }
        if b.and_then(|b| b.lock_timeout) != a.lock_timeout {
            let timeout = a.lock_timeout;
            edits.push(ScenarioEdit::LockTimeout { actor, timeout });
        }
        if a.network_delay != b.map_or(0, |b| b.network_delay) {
            let delay = a.network_delay;
            edits.push(ScenarioEdit::Delay { actor, delay });
        }
        edits
    }

    /// The link's `key=value` for this edit of `sc` (`ttl=30`, `pause.A=5,50`); none for a
    /// fault's, which the link's one `faults=` carries with the rest of the list.
    pub fn link(&self, sc: &Scenario) -> Option<(String, String)> {
        self.key(sc).zip(self.value())
    }

    /// The link's key for this edit of `sc` (`ttl`, `pause.A`, …).
    fn key(&self, sc: &Scenario) -> Option<String> {
        let of = |what: &str, actor: usize| {
            let name = sc.actors.get(actor).map_or("?", |a| a.name.as_str());
            format!("{what}.{name}")
        };
        Some(match *self {
            ScenarioEdit::Policy(_) => "fence".into(),
            ScenarioEdit::Ttl(_) => "ttl".into(),
            ScenarioEdit::Clients(_) => "clients".into(),
            ScenarioEdit::Tokens(_) => "tokens".into(),
            ScenarioEdit::Release(_) => "release".into(),
            ScenarioEdit::Barrier(_) => "barrier".into(),
            ScenarioEdit::Check(_) => "check".into(),
            ScenarioEdit::LockDelay(_) => "lockdelay".into(),
            ScenarioEdit::LockRtt(_) => "rtt".into(),
            ScenarioEdit::Drift(_) => "drift".into(),
            ScenarioEdit::Margin(_) => "margin".into(),
            ScenarioEdit::Fault { .. } => return None,
            ScenarioEdit::Pause { actor, .. } => of("pause", actor),
            ScenarioEdit::LockTimeout { actor, .. } => of("locktimeout", actor),
            ScenarioEdit::Delay { actor, .. } => of("delay", actor),
        })
    }

    /// The link's value for this edit: a code, whole milliseconds, `start,length`, or a word
    /// for "none" (`off`, `cut`, `none`).
    fn value(&self) -> Option<String> {
        let or =
            |t: Option<Millis>, none: &str| t.map_or_else(|| none.to_owned(), |t| t.to_string());
        Some(match *self {
            ScenarioEdit::Policy(p) => Choice::code(p).into(),
            ScenarioEdit::Tokens(t) => Choice::code(t).into(),
            ScenarioEdit::Release(m) => Choice::code(m).into(),
            ScenarioEdit::Check(c) => Choice::code(c).into(),
            ScenarioEdit::Barrier(on) => on.code().into(),
            ScenarioEdit::Clients(n) => n.to_string(),
            ScenarioEdit::Ttl(t)
            | ScenarioEdit::LockDelay(t)
            | ScenarioEdit::LockRtt(t)
            | ScenarioEdit::Drift(t)
            | ScenarioEdit::Margin(t)
            | ScenarioEdit::Delay { delay: t, .. } => t.to_string(),
            ScenarioEdit::Fault { .. } => return None,
            ScenarioEdit::LockTimeout { timeout, .. } => or(timeout, "none"),
            ScenarioEdit::Pause { pause, .. } => {
                pause.map_or_else(|| "none".into(), |p| format!("{},{}", p.start, p.duration))
            }
        })
    }

    /// Reads a link's `key=value` as an edit of `sc` (whose client names `pause.X` and the
    /// like refer to), or says what is wrong with it. The inverse of [`link`](Self::link),
    /// and the older links' per-fault keys (`failover=`, `lag=`, `partition.A=`), read as
    /// the one fault edit they make.
    pub fn parse(key: &str, v: &str, sc: &Scenario) -> Result<Self, ParseError> {
        let edit = match key {
            "fence" => ScenarioEdit::Policy(choice("fencing", v)?),
            "ttl" => ScenarioEdit::Ttl(number(Setting::Ttl, sc, None, v)?),
            "clients" => {
                let n = number(Setting::Clients, sc, None, v)?;
                ScenarioEdit::Clients(usize::try_from(n).unwrap_or(usize::MAX))
            }
            "tokens" => ScenarioEdit::Tokens(choice("tokens", v)?),
            "release" => ScenarioEdit::Release(choice("release", v)?),
            "barrier" => ScenarioEdit::Barrier(choice("barrier", v)?),
            "check" => ScenarioEdit::Check(choice("check", v)?),
            "lockdelay" => ScenarioEdit::LockDelay(number(Setting::LockDelay, sc, None, v)?),
            "rtt" => ScenarioEdit::LockRtt(number(Setting::LockRtt, sc, None, v)?),
            "drift" => ScenarioEdit::Drift(number(Setting::Drift, sc, None, v)?),
            "margin" => ScenarioEdit::Margin(number(Setting::Margin, sc, None, v)?),
            "failover" => Self::placed(faults::old_failover(sc, v).map_err(refused)?),
            "lag" => Self::placed(faults::old_lag(sc, v).map_err(refused)?),
            _ => return Self::parse_client(key, v, sc),
        };
        Ok(edit)
    }

    /// `pause.X`, `partition.X`, `locktimeout.X` and `delay.X`: an edit of client `X`.
    fn parse_client(key: &str, v: &str, sc: &Scenario) -> Result<Self, ParseError> {
        let unknown = || ParseError::UnknownKey(key.to_owned());
        let (what, name) = key.split_once('.').ok_or_else(unknown)?;
        if !matches!(what, "pause" | "partition" | "locktimeout" | "delay") {
            return Err(unknown());
        }
        let actor = sc
            .actor_index(name)
            .ok_or_else(|| ParseError::UnknownClient {
                scenario: sc.id.clone(),
                client: name.to_owned(),
            })?;
        let who = Some(actor);
        // `start,length` in ms, or `none`.
        let span = |(start, length): (Number, Number)| -> Result<_, ParseError> {
            if v == "none" {
                return Ok(None);
            }
            let bad = || ParseError::BadPause {
                key: key.to_owned(),
            };
            let (s, d) = v.split_once(',').ok_or_else(bad)?;
            let read = |n: Number, text| n.read(text, None).map_err(refused);
            Ok(Some((read(start, s)?, read(length, d)?)))
        };
        let pause = |s: Setting| s.number(sc, who);
        Ok(match what {
            "pause" => ScenarioEdit::Pause {
                actor,
                pause: span((pause(Setting::PauseStart), pause(Setting::PauseLength)))?
                    .map(|(start, duration)| Pause { start, duration }),
            },
            "partition" => {
                let numbers = faults::old_span(sc, actor).ok_or_else(unknown)?;
                let span = span(numbers)?.map(|(start, len)| (start, start.saturating_add(len)));
                if span.is_some_and(|(_, end)| end > sc.horizon) {
                    let client = sc.actors[actor].name.clone();
                    let horizon = sc.horizon;
                    let late = EditError::PartitionTooLate { client, horizon };
                    return Err(ParseError::Refused(late));
                }
                Self::placed(faults::old_partition(sc, actor, span))
            }
            "locktimeout" => ScenarioEdit::LockTimeout {
                actor,
                timeout: optional(Setting::LockTimeout, sc, who, v, "none")?,
            },
            _ => ScenarioEdit::Delay {
                actor,
                delay: number(Setting::Delay, sc, who, v)?,
            },
        })
    }
}

/// A link's number for `setting` (of client `actor`), inside the setting's range.
fn number(
    setting: Setting,
    sc: &Scenario,
    actor: Option<usize>,
    value: &str,
) -> Result<u64, ParseError> {
    setting.read(sc, actor, value, None).map_err(refused)
}

/// A link's number refused, as the link's error.
fn refused(why: Refusal) -> ParseError {
    ParseError::Refused(EditError::OutOfBounds(why))
}

/// A link's number, or the word that means "none" (`none` itself, `off`, `cut`).
fn optional(
    setting: Setting,
    sc: &Scenario,
    actor: Option<usize>,
    value: &str,
    none: &str,
) -> Result<Option<Millis>, ParseError> {
    if value == none {
        Ok(None)
    } else {
        number(setting, sc, actor, value).map(Some)
    }
}

/// A setting a link names by a code: the codes a link takes, and the list a refusal gives,
/// are the enum's own table, not retyped here.
trait Choice: Copy + 'static {
    /// What a link may say, in the order a refusal lists it.
    const CHOICES: &'static [Self];
    fn code(self) -> &'static str;
}

impl Choice for FencingPolicy {
    const CHOICES: &'static [Self] = &FencingPolicy::ALL;
    fn code(self) -> &'static str {
        FencingPolicy::code(self)
    }
}

impl Choice for TokenSource {
    /// Redlock's counterfactual comes with Redlock: a link cannot pick it.
    const CHOICES: &'static [Self] = &TokenSource::CHOICES;
    fn code(self) -> &'static str {
        TokenSource::code(self)
    }
}

impl Choice for ReleaseMode {
    const CHOICES: &'static [Self] = &ReleaseMode::ALL;
    fn code(self) -> &'static str {
        ReleaseMode::code(self)
    }
}

impl Choice for StorageCheck {
    const CHOICES: &'static [Self] = &StorageCheck::ALL;
    fn code(self) -> &'static str {
        StorageCheck::code(self)
    }
}

/// The handoff barrier: on or off.
impl Choice for bool {
    const CHOICES: &'static [Self] = &[true, false];
    fn code(self) -> &'static str {
        if self {
            "on"
        } else {
            "off"
        }
    }
}

/// `value` as one of a key's choices, or the error naming them (`a, b or c`).
fn choice<T: Choice>(what: &'static str, value: &str) -> Result<T, ParseError> {
    let found = T::CHOICES.iter().copied().find(|c| c.code() == value);
    found.ok_or_else(|| {
        let codes: Vec<&str> = T::CHOICES.iter().map(|c| c.code()).collect();
        let choices = match codes.split_last() {
            Some((last, [])) => (*last).to_owned(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        };
        ParseError::BadChoice {
            what,
            choices,
            value: value.to_owned(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::fault::SHAPES;
    use crate::core::Fault;
    use crate::lab::fault_applies;

    /// Every edit a link can carry reads back as itself.
    #[test]
    fn each_edit_is_its_own_key_and_value() {
        let sc = Scenario::partition();
        let edits = [
            ScenarioEdit::Policy(FencingPolicy::SameEpoch),
            ScenarioEdit::Ttl(45),
            ScenarioEdit::Clients(4),
            ScenarioEdit::Tokens(TokenSource::RandomValue),
            ScenarioEdit::Release(ReleaseMode::Del),
            ScenarioEdit::Barrier(false),
            ScenarioEdit::Barrier(true),
            ScenarioEdit::Check(StorageCheck::Sequencer),
            ScenarioEdit::LockDelay(7),
            ScenarioEdit::LockRtt(15),
            ScenarioEdit::Drift(250),
            ScenarioEdit::Margin(3),
            ScenarioEdit::Pause {
                actor: 1,
                pause: Some(Pause {
                    start: 40,
                    duration: 20,
                }),
            },
            ScenarioEdit::Pause {
                actor: 0,
                pause: None,
            },
            ScenarioEdit::LockTimeout {
                actor: 0,
                timeout: Some(9),
            },
            ScenarioEdit::LockTimeout {
                actor: 1,
                timeout: None,
            },
            ScenarioEdit::Delay { actor: 1, delay: 8 },
        ];
        for edit in edits {
            let (k, v) = edit.link(&sc).expect("a link's key");
            assert_eq!(ScenarioEdit::parse(&k, &v, &sc), Ok(edit), "{k}={v}");
        }
        let fault = ScenarioEdit::Fault {
            index: 0,
            fault: None,
        };
        assert_eq!(fault.link(&sc), None, "faults= carries the faults");
    }

    /// An old link's per-fault keys read as the one fault edit, on the fault they name.
    #[test]
    fn old_fault_keys_are_the_fault_edit() {
        let sc = Scenario::partition();
        let cut = ScenarioEdit::parse("partition.B", "10,20", &sc).unwrap();
        assert_eq!(
            cut,
            ScenarioEdit::Fault {
                index: 0,
                fault: Some(FaultAt::cut_from_lock(crate::core::Node::Client(1), 10, 30)),
            }
        );
        let gc = Scenario::gc_pause();
        let failover = ScenarioEdit::parse("failover", "12", &gc).unwrap();
        let crash = FaultAt {
            at: 12,
            fault: Fault::Failover { lag: None },
        };
        assert_eq!(
            failover,
            ScenarioEdit::Fault {
                index: 0,
                fault: Some(crash),
            }
        );
        let with = failover.apply(&gc).unwrap();
        let lag = ScenarioEdit::parse("lag", "3", &with).unwrap();
        assert_eq!(
            lag.apply(&with).unwrap().faults,
            [FaultAt {
                at: 12,
                fault: Fault::Failover { lag: Some(3) },
            }]
        );
        let off = ScenarioEdit::parse("failover", "off", &gc).unwrap();
        assert_eq!(off.apply(&gc).as_ref(), Ok(&gc), "no failover to take away");
    }

    /// A choice's refusal lists the enum's own codes, and each of them reads back.
    #[test]
    fn choices_come_from_the_enums() {
        let says = |k: &str, v: &str| {
            ScenarioEdit::parse(k, v, &Scenario::gc_pause())
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            says("fence", "maybe"),
            "fencing must be off, strict or same_epoch, not “maybe”"
        );
        assert_eq!(
            says("tokens", "counterfactual"),
            "tokens must be same_redis, separate_counter, random or lock_service, not “counterfactual”"
        );
        assert_eq!(says("barrier", "1"), "barrier must be on or off, not “1”");
        for r in ReleaseMode::ALL {
            assert!(says("release", "x").contains(r.code()));
            let edit = ScenarioEdit::parse("release", r.code(), &Scenario::gc_pause());
            assert_eq!(edit, Ok(ScenarioEdit::Release(r)));
        }
    }

    /// The rules of an edit are the same wherever it comes from; the scenario stays.
    #[test]
    fn an_edit_that_cannot_be_made_says_why() {
        let sc = Scenario::gc_pause();
        let refused = |edit: ScenarioEdit| edit.apply(&sc).unwrap_err().to_string();
        let late = Pause {
            start: 90,
            duration: 50,
        };
        assert_eq!(
            refused(ScenarioEdit::Pause {
                actor: 0,
                pause: Some(late)
            }),
            "A's pause must end by t=100 ms, the end of the timeline (it would end at 140 ms)"
        );
        let late = FaultAt {
            at: 101,
            fault: Fault::StorageFailover { lag: 5 },
        };
        let add = |fault| ScenarioEdit::Fault {
            index: 0,
            fault: Some(fault),
        };
        assert_eq!(
            refused(add(late)),
            "Storage failover at must be between 0 ms and 100 ms (101 ms is too late; \
             the storage failover must come by t=100 ms, the end of the timeline)"
        );
        let still = FaultAt {
            at: 10,
            fault: Fault::ClockJump { node: 0, by: 0 },
        };
        assert_eq!(
            refused(add(still)),
            "Lock clock jump by must be between 1 ms and 10 minutes (0 ms is too short)"
        );
        assert_eq!(
            refused(ScenarioEdit::Clients(6)),
            "Clients must be between 2 and 5 (6 is too many)"
        );
        assert_eq!(
            refused(ScenarioEdit::Ttl(0)),
            "Lease TTL must be between 1 ms and 10 minutes (0 ms is too short)"
        );
        assert!(refused(ScenarioEdit::Delay { actor: 7, delay: 1 }).contains("no actor number 7"));
        let redlock = deck::find("clock-jump").map(|e| (e.build)()).unwrap();
        assert_eq!(
            ScenarioEdit::Tokens(TokenSource::LockService).apply(&redlock),
            Err(EditError::NotForLock(
                "Redlock mints no token: its token source cannot change"
            ))
        );
        assert_eq!(
            refused(ScenarioEdit::LockDelay(20)),
            "Redis has no lock-delay: a lock service (tokens from etcd / ZooKeeper) has one"
        );
        // A lock service keeps its own options when its token source is named again, and a
        // Redis in its place has none of them.
        let queue = deck::find("lock-queue").map(|e| (e.build)()).unwrap();
        let same = ScenarioEdit::Tokens(TokenSource::LockService).apply(&queue);
        assert_eq!(same.map(|s| s.lock), Ok(queue.lock.clone()));
        let redis = ScenarioEdit::Tokens(TokenSource::SameRedis).apply(&queue);
        assert_eq!(redis.map(|s| s.lock), Ok(LockKind::default()));
        assert_eq!(
            ScenarioEdit::add_pause(&sc, 0, 10),
            Err(EditError::AlreadyPaused("A".into()))
        );
        assert_eq!(
            ScenarioEdit::remove_pause(&sc, 1),
            Err(EditError::NoPause("B".into()))
        );
        assert_eq!(
            ScenarioEdit::add_pause(&sc, 1, 95),
            Ok(ScenarioEdit::Pause {
                actor: 1,
                pause: Some(Pause {
                    start: 95,
                    duration: 5
                })
            })
        );
    }

    /// The What if… panel offers an edit only where it changes the design.
    #[test]
    fn what_applies_follows_the_design() {
        let find = |id: &str| deck::find(id).map(|e| (e.build)()).unwrap();
        let tokens = ScenarioEdit::Tokens(TokenSource::SameRedis);
        let barrier = ScenarioEdit::Barrier(false);
        let release = ScenarioEdit::Release(ReleaseMode::Del);
        assert!(tokens.applies_to(&find("gc-pause")));
        assert!(
            !tokens.applies_to(&find("clock-jump")),
            "Redlock mints none"
        );
        assert!(!barrier.applies_to(&find("gc-pause")));
        assert!(barrier.applies_to(&find("handoff-barrier")));
        let shape = |code| crate::core::fault::shape_named(code).unwrap();
        let (failover, clock) = (shape("failover"), shape("clock"));
        assert!(fault_applies(&find("gc-pause"), failover));
        assert!(!fault_applies(&find("clock-jump"), failover), "Redlock");
        assert!(fault_applies(&find("clock-jump"), clock));
        assert!(
            !fault_applies(&find("lock-delay"), clock),
            "a monotonic clock"
        );
        let remove = |index| ScenarioEdit::Fault { index, fault: None };
        assert!(remove(0).applies_to(&find("redis-failover")));
        assert!(!remove(2).applies_to(&find("redis-failover")));
        let row = find("row-lock");
        assert!(!release.applies_to(&row) && !tokens.applies_to(&row));
        assert!(SHAPES.iter().all(|s| !fault_applies(&row, s)));
        assert_eq!(
            ScenarioEdit::add_fault(&row, shape("storage")).map_err(|e| e.to_string()),
            Err(
                "a row lock lives on storage's primary, so storage's failover would end \
                 the lock too, which this lab does not model"
                    .into()
            )
        );
        assert!(ScenarioEdit::Clients(5).applies_to(&row));
        assert!(!ScenarioEdit::Clients(1).applies_to(&row));
    }
}
