//! The rules of the one edit of a fault, any kind (`ScenarioEdit::Fault`), read through
//! the kinds' table ([`SHAPES`](crate::core::fault::SHAPES)): its numbers refused in the
//! page's words, against the ranges its kind's row declares (the ones the scenario's
//! validation holds any scenario to), the fields a What if… row shows, the kinds a scenario
//! can be given, and the older links' per-fault keys (`failover=`, `lag=`, `partition.A=`)
//! as the fault they set. The edit itself (`edit.rs`) is built on this file, which knows
//! nothing of it.

use super::bounds::{timeline_end, Number, Refusal, Unit};
use crate::core::fault::{Range, Shape, Slot, Target, Value, ValueKind};
use crate::core::{deck, Fault, FaultAt, LockKind, Millis, Node, Scenario};

/// What an old link's `failover=` limit says: it comes by the end of the timeline.
const FAILOVER_COMES: &str = "the failover must come";

/// A fault's place in the scenario's list (one past the last: a new one), and what to put
/// there (`None`: take it away).
pub(super) type Placed = (usize, Option<FaultAt>);

/// One field of a fault's What if… row: `at`, then its kind's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultField {
    /// `at`, or the field's name in the kind's row.
    pub name: &'static str,
    /// Its label with the fault's words in front ("Storage failover lag"); a field in ms
    /// says so after it.
    pub label: String,
    /// Its own label, after the fault's words ("lag").
    pub short: &'static str,
    pub kind: ValueKind,
    /// What it holds now, as typed or picked (empty: a lag of none of the run's writes).
    pub text: String,
    /// A select's choices: (value, words). Empty for a number.
    pub options: Vec<(String, String)>,
    /// A number's least, from its kind's row: the input steps no lower (0 for a pick).
    pub least: Millis,
}

/// What a fault is called on its row: its kind's words, numbered from the second of a kind
/// ("Lock clock jump 2"), so every field's label is its own. `index` may be one past the
/// last (a fault about to be added).
pub fn fault_label(sc: &Scenario, index: usize, shape: &Shape) -> String {
    let before = sc.faults.iter().take(index);
    let nth = 1 + before.filter(|f| f.fault.kind() == shape.kind).count();
    let after = sc.faults.iter().skip(index + 1);
    let more = after.filter(|f| f.fault.kind() == shape.kind).count();
    match nth + more {
        1 => shape.words.to_owned(),
        _ => format!("{} {nth}", shape.words),
    }
}

/// Whether a fault of this kind can strike `sc`'s design, so "Add fault" offers it.
pub fn fault_applies(sc: &Scenario, shape: &Shape) -> bool {
    not_for(sc, shape).is_none()
}

/// Why `sc`'s design has no fault of this kind, in the lock's own words.
pub(super) fn not_for(sc: &Scenario, shape: &Shape) -> Option<&'static str> {
    let lock = &sc.lock;
    match shape.target {
        Target::Storage if lock.row().is_some() => Some(
            "a row lock lives on storage's primary, so storage's failover would end the lock too, \
             which this lab does not model",
        ),
        _ if lock.row().is_some() => Some(
            "a row lock in PostgreSQL has no lock server, network path or clock of its own: \
             the lock is the database's",
        ),
        Target::LockPrimary | Target::OneRedis if lock.redlock().is_some() => {
            Some("Redlock has no single Redis to fail over or restart: its nodes are independent masters")
        }
        Target::OneRedis if !matches!(lock, LockKind::Redis { .. }) => Some(
            "a lock service comes back from a restart with every acknowledged write: it wrote \
             each to a majority's disks first",
        ),
        // A lock service's leases run on its monotonic clock (etcd, ZooKeeper); Redis expires
        // keys by the wall clock.
        Target::LockClock if matches!(lock, LockKind::Service(_)) => Some(
            "a lock service times its leases on a monotonic clock: a step of the wall clock \
             does not shorten them",
        ),
        _ => None,
    }
}

/// The fields of `sc`'s `index`-th fault, as its What if… row shows them.
pub fn fault_fields(sc: &Scenario, index: usize) -> Vec<FaultField> {
    let Some(f) = sc.faults.get(index) else {
        return Vec::new();
    };
    let shape = f.fault.shape();
    let row = fault_label(sc, index, shape);
    shape
        .values(f)
        .filter(|v| shown(sc, v.kind))
        .map(|v| FaultField {
            name: v.name,
            label: format!("{row} {}", v.label),
            short: v.label,
            kind: v.kind,
            text: match v.value {
                Value::Lag(None) => String::new(),
                v => v.text(|i| sc.actor_name(i)),
            },
            options: options(sc, v.kind, v.value),
            least: v.range.map_or(0, |r| r.least),
        })
        .collect()
}

/// Whether a field of `kind` means anything for `sc`'s lock: a lock service's new leader
/// has every acknowledged write (a majority had it), so its failover has no replica lag.
fn shown(sc: &Scenario, kind: ValueKind) -> bool {
    !(kind == ValueKind::MsOrCut && matches!(sc.lock, LockKind::Service(_)))
}

/// A select's choices for a field of `kind` holding `now`: the clients, the lock service,
/// and (a lock service's) each client's member; or the lock's nodes.
fn options(sc: &Scenario, kind: ValueKind, now: Value) -> Vec<(String, String)> {
    let name = |i| sc.actor_name(i);
    let mut values: Vec<Value> = match kind {
        ValueKind::Node => {
            let clients = (0..sc.actors.len()).map(Node::Client);
            let service = matches!(sc.lock, LockKind::Service(_));
            let members = (0..sc.actors.len()).filter(|_| service);
            let lock = std::iter::once(Node::LockService);
            clients
                .chain(lock)
                .chain(members.map(Node::MemberOf))
                .map(Value::Node)
                .collect()
        }
        ValueKind::LockNode => {
            let nodes = sc.lock.redlock().map_or(1, |r| r.nodes);
            (0..nodes).map(Value::Index).collect()
        }
        _ => return Vec::new(),
    };
    if !values.contains(&now) {
        values.push(now);
    }
    let redlock = sc.lock.redlock().is_some();
    let service = matches!(sc.lock, LockKind::Service(_));
    let words = |v: Value| match v {
        Value::Node(Node::Client(i)) => name(i),
        Value::Node(Node::LockService) if service => "the lock service".to_owned(),
        Value::Node(Node::MemberOf(i)) => format!("{}'s lock-service member", name(i)),
        Value::Index(i) if redlock => format!("node {}", i + 1),
        _ => "the lock server".to_owned(),
    };
    values
        .into_iter()
        .map(|v| (v.text(name), words(v)))
        .collect()
}

/// A number of `range` and `kind` as the page words it, under `label`: a moment on the
/// timeline is "too early" or "too late", a length "too short" or "too long".
fn number(label: String, kind: ValueKind, range: Range) -> Number {
    let unit = match kind {
        ValueKind::Moment => Unit::Instant,
        _ => Unit::Duration,
    };
    Number {
        label,
        min: range.least,
        max: range.most,
        unit,
    }
}

/// Value `v` of the fault on What if… row `row` as the page words its range (its kind's
/// row's), and the timeline's end for a moment: `at` must come by then, a heal end by
/// then. `None` for a pick.
fn row_number(sc: &Scenario, row: &str, v: &Slot) -> Option<(Number, Option<(u64, String)>)> {
    let n = number(format!("{row} {}", v.label), v.kind, v.range?);
    // The words are ASCII: lowering them takes no Unicode tables into the page's wasm.
    let what = row.to_ascii_lowercase();
    let limit = match v.kind {
        ValueKind::Moment if v.name == "at" => format!("the {what} must come"),
        ValueKind::Moment => format!("the {what} must end"),
        _ => return Some((n, None)),
    };
    Some((n, timeline_end(sc, 0, &limit)))
}

/// Every number of fault `f` (at `index` of `sc`'s list) inside its range, or the refusal
/// of the first that is not, in the words its What if… field is labelled with.
pub(super) fn check_fault(sc: &Scenario, index: usize, f: &FaultAt) -> Result<(), Refusal> {
    let shape = f.fault.shape();
    let row = fault_label(sc, index, shape);
    for v in shape.values(f) {
        if let (Some((n, limit)), Some(value)) = (row_number(sc, &row, &v), v.value.ms()) {
            n.check(value, limit)?;
        }
    }
    Ok(())
}

/// Sets (or takes away) `sc`'s `index`-th fault, keeping the list in time order: a fault
/// that keeps its time keeps its place.
pub(super) fn set_fault(sc: &mut Scenario, index: usize, fault: Option<FaultAt>) {
    match (sc.faults.get_mut(index), fault) {
        (Some(old), Some(new)) if old.at == new.at => *old = new,
        (old, new) => {
            if old.is_some() {
                sc.faults.remove(index);
            }
            if let Some(f) = new {
                sc.add_fault(f.at, f.fault);
            }
        }
    }
}

/// The fault a What if… field of `sc`'s `index`-th fault sets with `text` (typed, or a
/// select's value): its number read against its range, or a pick; empty unsets a lag (none
/// of the run's writes). Or why it sets none, as a sentence.
pub(super) fn field(
    sc: &Scenario,
    index: usize,
    name: &str,
    text: &str,
) -> Result<FaultAt, String> {
    let f = *sc
        .faults
        .get(index)
        .ok_or("That fault is no longer there.")?;
    let shape = f.fault.shape();
    let v = shape
        .value(&f, name)
        .ok_or("That fault has no such field.")?;
    let row = fault_label(sc, index, shape);
    let value = match row_number(sc, &row, &v) {
        _ if v.kind == ValueKind::MsOrCut && text.trim().is_empty() => Value::Lag(None),
        Some((number, limit)) => {
            let n = (number.read(text, limit)).map_err(|why| format!("{why}."))?;
            match v.kind {
                ValueKind::MsOrCut => Value::Lag(Some(n)),
                _ => Value::Ms(n),
            }
        }
        None => (v.kind.read(text, |n| sc.actor_index(n)))
            .ok_or_else(|| format!("{row} {} cannot be “{}”.", v.label, text.trim()))?,
    };
    Ok(shape
        .set(f, name, value)
        .ok_or("That fault has no such field.")?)
}

/// The index of `sc`'s first fault that `is` one, or one past the last.
fn first(sc: &Scenario, is: impl Fn(&Fault) -> bool) -> usize {
    let found = sc.faults.iter().position(|f| is(&f.fault));
    found.unwrap_or(sc.faults.len())
}

/// The deck entry's own fault of a kind, which an old link that adds one back takes its
/// kind (a restart, a member cut off) and lag from.
fn base_fault(sc: &Scenario, kind: fn(&Fault) -> bool) -> Option<Fault> {
    let base = deck::find(&sc.id).map(|e| (e.build)())?;
    base.faults.iter().map(|f| f.fault).find(kind)
}

/// The lock server's crash an old link's `failover=` or `lag=` sets: the scenario's, or one
/// like the deck entry's, or a replica promoted with none of the run's writes; and its
/// place in the list.
fn old_crash(sc: &Scenario) -> (usize, Fault) {
    let index = first(sc, Fault::is_crash);
    let like = sc.faults.get(index).map(|f| f.fault);
    let crash = like.or_else(|| base_fault(sc, Fault::is_crash));
    (index, crash.unwrap_or(Fault::Failover { lag: None }))
}

/// An old link's number for field `name` of a fault of kind `shape`, under the key's own
/// label ("Replica lag"): its range is the kind's row's. `None`: the kind has no such
/// number.
fn old_number(shape: &Shape, name: &str, label: &str) -> Option<Number> {
    let x = shape.fields.iter().find(|x| x.name == name)?;
    Some(number(label.to_owned(), x.kind, x.range?))
}

/// An old link's `failover=at` (or `off`): the lock server's failover or restart moved to
/// `at`, or one added like the deck entry's, or taken away. `at`'s range is the crash's row's.
pub(super) fn old_failover(sc: &Scenario, text: &str) -> Result<Placed, Refusal> {
    let (index, crash) = old_crash(sc);
    let at = match text {
        "off" => None,
        t => {
            let n = number("Failover at".into(), ValueKind::Moment, crash.shape().at);
            Some(n.read(t, timeline_end(sc, 0, FAILOVER_COMES))?)
        }
    };
    Ok((index, at.map(|at| FaultAt { at, fault: crash })))
}

/// An old link's `lag=` (or `cut`): the failover's (or restart's) lag; with neither, or a
/// crash with no lag, nothing.
pub(super) fn old_lag(sc: &Scenario, text: &str) -> Result<Placed, Refusal> {
    let (index, crash) = old_crash(sc);
    let nothing = (sc.faults.len(), None);
    let lag = match text {
        "cut" => None,
        t => match old_number(crash.shape(), "lag", "Replica lag") {
            Some(n) => Some(n.read(t, None)?),
            None => return Ok(nothing),
        },
    };
    let fault = sc.faults.get(index).map(|f| FaultAt {
        fault: f.fault.with_lag(lag),
        ..*f
    });
    Ok(fault.map_or(nothing, |f| (index, Some(f))))
}

/// The numbers of an old link's `partition.A=start,length`, labelled as the key was ("A
/// partition start"): the start's range is a partition's `at` in its kind's row; the
/// length's is at least 1 ms (a partition ends after it starts) and at most its end's.
pub(super) fn old_span(sc: &Scenario, actor: usize) -> Option<(Number, Number)> {
    let shape = FaultAt::cut_from_lock(Node::Client(actor), 0, 1)
        .fault
        .shape();
    let name = sc.actor_name(actor);
    let start = number(
        format!("{name} partition start"),
        ValueKind::Moment,
        shape.at,
    );
    let end = old_number(shape, "until", &format!("{name} partition length"))?;
    let length = Number {
        min: 1,
        unit: Unit::Duration,
        ..end
    };
    Some((start, length))
}

/// An old link's `partition.A=start,length` (or `none`): client `actor` (or, as in the
/// deck entry, its lock-service member) cut off from the lock service over `span`, in place
/// of the partition there was; or, no longer cut off.
pub(super) fn old_partition(sc: &Scenario, actor: usize, span: Option<(Millis, Millis)>) -> Placed {
    let is_cut = |f: &Fault| matches!(f, Fault::Partition { .. });
    let member = base_fault(sc, is_cut).is_some_and(|f| f.minority());
    let node = if member {
        Node::MemberOf(actor)
    } else {
        Node::Client(actor)
    };
    let cuts_actor = |f: &Fault| {
        let cut = FaultAt { at: 0, fault: *f };
        let by = |n| cut.cuts(n, Node::LockService).is_some();
        by(Node::Client(actor)) || by(Node::MemberOf(actor))
    };
    match span {
        Some((start, end)) => (
            first(sc, is_cut),
            Some(FaultAt::cut_from_lock(node, start, end)),
        ),
        None => (first(sc, cuts_actor), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::fault::SHAPES;
    use crate::core::{ScenarioError, MAX_TIME};

    /// One source for a fault's ranges: for every kind's every number, at each edge of the
    /// range its row declares (and one past it), What if…'s check of the fault, its typed
    /// field and the scenario's validation (of any scenario: a link, a JSON) take the value
    /// or refuse it alike, and each refusal states the row's range. The timeline is the
    /// longest a scenario holds, so its end is no nearer limit than the range's own.
    #[test]
    fn what_if_and_the_scenario_refuse_a_faults_number_at_the_same_edges() {
        let mut base = Scenario::gc_pause();
        base.horizon = MAX_TIME;
        let mut refused = 0;
        for shape in &SHAPES {
            let fresh = (shape.fresh)(base.horizon);
            for v in shape.values(&fresh) {
                let Some(range) = v.range else {
                    assert!(matches!(v.kind, ValueKind::Node | ValueKind::LockNode));
                    continue;
                };
                let below = range.least.checked_sub(1);
                let edges = [
                    below,
                    Some(range.least),
                    Some(range.most),
                    Some(range.most + 1),
                ];
                for n in edges.into_iter().flatten() {
                    let value = match v.kind {
                        ValueKind::MsOrCut => Value::Lag(Some(n)),
                        _ => Value::Ms(n),
                    };
                    let f = shape.set(fresh, v.name, value).expect(v.name);
                    let mut sc = base.clone();
                    sc.faults = vec![f];
                    let at = format!("{shape:?} {} = {n}", v.name);
                    // The scenario's refusal of this value, if it refuses it for its range.
                    let scenario = match sc.validate() {
                        Err(ScenarioError::OutOfRange {
                            what,
                            value,
                            min,
                            max,
                        }) if what == range.what => {
                            assert_eq!((value, min, max), (n, range.least, range.most), "{at}");
                            true
                        }
                        _ => false,
                    };
                    let lab = check_fault(&sc, 0, &f);
                    assert_eq!(lab.is_err(), scenario, "{at}: {lab:?}");
                    let typed = field(&base_with(&sc, fresh), 0, v.name, &n.to_string());
                    assert_eq!(typed.is_err(), scenario, "{at} typed: {typed:?}");
                    if let Err(r) = lab {
                        assert_eq!((r.min, r.max), (range.least, range.most), "{at}");
                        let words = format!("{} {}", shape.words, v.label);
                        assert_eq!(typed, Err(format!("{r}.")), "{at}");
                        assert!(r.label == words, "{at}: {}", r.label);
                        refused += 1;
                    }
                }
            }
        }
        // Past the most for every number, below the least where it is above 0.
        assert!(refused > SHAPES.len() * 2, "{refused} refusals");
    }

    /// `sc` with its one fault as `fresh` was, for a What if… field to be typed into.
    fn base_with(sc: &Scenario, fresh: FaultAt) -> Scenario {
        Scenario {
            faults: vec![fresh],
            ..sc.clone()
        }
    }
}
