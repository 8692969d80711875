//! The rules of the one edit of a fault, any kind (`ScenarioEdit::Fault`), read through
//! the kinds' table ([`SHAPES`](crate::core::fault::SHAPES)): its numbers refused in the
//! page's words, the fields a What if… row shows, the kinds a scenario can be given, and the
//! older links' per-fault keys (`failover=`, `lag=`, `partition.A=`) as the fault they set.
//! The edit itself (`edit.rs`) is built on this file, which knows nothing of it.

use super::bounds::{timeline_end, Refusal, Setting};
use crate::core::fault::{Shape, Target, Value, ValueKind};
use crate::core::{deck, Fault, FaultAt, LockKind, Millis, Node, Scenario};

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
    let row = fault_label(sc, index, f.fault.shape());
    values(f)
        .filter(|&(_, _, kind, _)| shown(sc, kind))
        .map(|(name, label, kind, v)| FaultField {
            name,
            label: format!("{row} {label}"),
            short: label,
            kind,
            text: match v {
                Value::Lag(None) => String::new(),
                v => v.text(|i| sc.actor_name(i)),
            },
            options: options(sc, kind, v),
        })
        .collect()
}

/// A fault's values in its What if… row's order: its `at`, then its kind's own fields, each
/// as (name, label, kind, value).
fn values(f: &FaultAt) -> impl Iterator<Item = (&'static str, &'static str, ValueKind, Value)> {
    let at = ("at", "at", ValueKind::Moment, Value::Ms(f.at));
    let own = f.fault.shape().fields.iter();
    let fault = f.fault;
    std::iter::once(at).chain(own.map(move |x| (x.name, x.label, x.kind, (x.get)(&fault))))
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

/// The bounds row whose range and unit a fault's number shares (with the fault's own
/// label), and the timeline's end for a moment: `at` must come by then, a heal end by then.
fn bound_of(
    sc: &Scenario,
    row: &str,
    name: &str,
    kind: ValueKind,
) -> Option<(Setting, Option<(u64, String)>)> {
    // The words are ASCII: lowering them takes no Unicode tables into the page's wasm.
    let what = row.to_ascii_lowercase();
    Some(match kind {
        ValueKind::Moment if name == "at" => {
            let limit = timeline_end(sc, 0, &format!("the {what} must come"));
            (Setting::Failover, limit)
        }
        ValueKind::Moment => {
            let limit = timeline_end(sc, 0, &format!("the {what} must end"));
            (Setting::Failover, limit)
        }
        ValueKind::Ms | ValueKind::MsOrCut => (Setting::ReplicationLag, None),
        ValueKind::PositiveMs => (Setting::PauseLength, None),
        ValueKind::Node | ValueKind::LockNode => return None,
    })
}

/// The refusal of a field's number, with the fault's label in place of the row's own.
fn labelled(row: &str, label: &str) -> impl Fn(Refusal) -> Refusal {
    let label = format!("{row} {label}");
    move |r| Refusal {
        label: label.clone(),
        ..r
    }
}

/// Every number of fault `f` (at `index` of `sc`'s list) inside its range, or the refusal
/// of the first that is not, in the words its What if… field is labelled with.
pub(super) fn check_fault(sc: &Scenario, index: usize, f: &FaultAt) -> Result<(), Refusal> {
    let row = fault_label(sc, index, f.fault.shape());
    for (name, label, kind, v) in values(f) {
        let (Value::Ms(n) | Value::Lag(Some(n))) = v else {
            continue;
        };
        if let Some((setting, limit)) = bound_of(sc, &row, name, kind) {
            let checked = setting.check(sc, None, n, limit);
            checked.map_err(labelled(&row, label))?;
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
    let own = shape.fields.iter().find(|x| x.name == name);
    let (label, kind) = match own {
        Some(x) => (x.label, x.kind),
        None if name == "at" => ("at", ValueKind::Moment),
        None => return Err("That fault has no such field.".into()),
    };
    let row = fault_label(sc, index, shape);
    let value = match bound_of(sc, &row, name, kind) {
        _ if kind == ValueKind::MsOrCut && text.trim().is_empty() => Value::Lag(None),
        Some((setting, limit)) => {
            let n = (setting.read(sc, None, text, limit))
                .map_err(labelled(&row, label))
                .map_err(|why| format!("{why}."))?;
            match kind {
                ValueKind::MsOrCut => Value::Lag(Some(n)),
                _ => Value::Ms(n),
            }
        }
        None => kind
            .read(text, |n| sc.actor_index(n))
            .ok_or_else(|| format!("{row} {label} cannot be “{}”.", text.trim()))?,
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

/// An old link's `failover=at` (or `off`): the lock server's failover or restart moved to
/// `at`, or one added like the deck entry's, or taken away.
pub(super) fn old_failover(sc: &Scenario, at: Option<Millis>) -> Placed {
    let index = first(sc, Fault::is_crash);
    let like = sc.faults.get(index).map(|f| f.fault);
    let crash = like.or_else(|| base_fault(sc, Fault::is_crash));
    let crash = crash.unwrap_or(Fault::Failover { lag: None });
    (index, at.map(|at| FaultAt { at, fault: crash }))
}

/// An old link's `lag=`: the failover's (or restart's) lag; with neither, nothing.
pub(super) fn old_lag(sc: &Scenario, lag: Option<Millis>) -> Placed {
    let index = first(sc, Fault::is_crash);
    let fault = sc.faults.get(index).map(|f| FaultAt {
        fault: f.fault.with_lag(lag),
        ..*f
    });
    (index, fault)
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
