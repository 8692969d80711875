//! What a row of the fault kinds' table ([`SHAPES`]) holds: a kind's name in a link, its
//! words for a user, when it strikes, how many a run may have, and its values (`at`, then
//! its fields, each with a get and a set over [`Fault`]) with each number's [`Range`].
//! Each kind's row is in its own file. The scenario's validation, the link's `faults=`, the
//! What if… rows and the generic edit read every kind through the table, so a new kind of
//! fault is its variant and its file, not a match or a range in each of them.

use super::{Fault, FaultAt, FaultKind, Moment, Node, SHAPES};
use crate::core::clock::Millis;

/// What a field of a fault holds, which decides how it is typed, worded and written (a
/// number's range is its row's [`Range`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// A moment on the timeline, in ms: when the fault ends (a partition heals).
    Moment,
    /// A length of time, in ms (a standby's lag, a clock's step).
    Ms,
    /// A replica's (or a snapshot's) lag in ms, or none of the run's writes (`cut`).
    MsOrCut,
    /// A client, the lock service, or the lock-service member a client talks to.
    Node,
    /// A lock node's index (Redlock's nodes; a single lock server is node 0).
    LockNode,
}

/// One field's value, as [`Field::get`] reads it and [`Field::set`] takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value {
    Ms(Millis),
    /// A lag, or `None`: none of the run's writes.
    Lag(Option<Millis>),
    Node(Node),
    Index(usize),
}

/// The range of one of a fault's numbers, declared once in its kind's row: the scenario's
/// validation refuses any scenario (a deck entry, a link, a JSON) with a value outside it,
/// and What if… refuses a typed one in its field's words. Its unit is its [`ValueKind`]'s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// The value's name in the scenario's refusal ("standby lag").
    pub what: &'static str,
    pub least: Millis,
    pub most: Millis,
}

/// One field of a kind of fault, after its `at`.
pub struct Field {
    /// Its name, as the code refers to it (`lag`, `until`).
    pub name: &'static str,
    /// Its label after the kind's words ("Storage failover" "lag").
    pub label: &'static str,
    pub kind: ValueKind,
    /// A number's range (`None`: a pick, whose choices the scenario's design decides).
    pub range: Option<Range>,
    /// The field's value in a fault of its kind (asked of no other kind).
    pub get: fn(&Fault) -> Value,
    /// The fault with this field set, or `None` if `Value` is not this field's kind.
    pub set: fn(Fault, Value) -> Option<Fault>,
}

/// Where a kind of fault strikes, which decides the locks it can be given to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The link between a client and the lock service (no row lock: there is none).
    LockLink,
    /// A single lock server's primary, promoted replica and all (Redis, or a lock
    /// service's leader).
    LockPrimary,
    /// The lock's one Redis, killed and restarted.
    OneRedis,
    /// A lock node's clock (Redis, Redlock's nodes, a lock service).
    LockClock,
    /// Storage's primary (any lock).
    Storage,
}

/// One kind of fault.
pub struct Shape {
    /// Its name in a link's `faults=` (`storage.45.15`).
    pub code: &'static str,
    /// Its words for a user ("Storage failover").
    pub words: &'static str,
    pub target: Target,
    /// The range of its `at`: when it strikes.
    pub at: Range,
    pub fields: &'static [Field],
    pub kind: FaultKind,
    /// Where it falls among the world's events at its instant.
    pub moment: Moment,
    /// Why a run has at most one fault of this rule, if it may not have two ("storage fails
    /// over once"); kinds sharing the rule (a failover and a restart) count together.
    pub once: Option<&'static str>,
    /// One of this kind inside a timeline `horizon` ms long, for the What if… "Add fault".
    pub fresh: fn(Millis) -> FaultAt,
}

impl std::fmt::Debug for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.code)
    }
}

impl PartialEq for Shape {
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code
    }
}

impl Eq for Shape {}

pub(super) fn ms(v: Value) -> Option<Millis> {
    match v {
        Value::Ms(t) => Some(t),
        _ => None,
    }
}

pub(super) fn lag(v: Value) -> Option<Option<Millis>> {
    match v {
        Value::Lag(l) => Some(l),
        _ => None,
    }
}

pub(super) fn node(v: Value) -> Option<Node> {
    match v {
        Value::Node(n) => Some(n),
        _ => None,
    }
}

impl Fault {
    /// This fault's kind: its row of [`SHAPES`].
    pub fn shape(&self) -> &'static Shape {
        let kind = self.kind();
        SHAPES.iter().find(|s| s.kind == kind).unwrap_or(&SHAPES[0])
    }
}

/// The kind a link names (`storage`).
pub fn shape_named(code: &str) -> Option<&'static Shape> {
    SHAPES.iter().find(|s| s.code == code)
}

impl Value {
    /// The number it holds, if it holds one (a lag of none of the run's writes holds none).
    pub fn ms(self) -> Option<Millis> {
        match self {
            Value::Ms(t) | Value::Lag(Some(t)) => Some(t),
            _ => None,
        }
    }

    /// Its text in a link and in the What if… fields: whole ms, `cut`, a client's name,
    /// `lock`, `member-A`, a node's index. `name` names client `i`.
    pub fn text(self, name: impl Fn(usize) -> String) -> String {
        match self {
            Value::Ms(t) | Value::Lag(Some(t)) => t.to_string(),
            Value::Lag(None) => "cut".to_owned(),
            Value::Index(i) => i.to_string(),
            Value::Node(Node::Client(i)) => name(i),
            Value::Node(Node::LockService) => "lock".to_owned(),
            Value::Node(Node::MemberOf(i)) => format!("member-{}", name(i)),
        }
    }
}

impl ValueKind {
    /// Reads a value of this kind from its [`Value::text`] (`client` finds a client by
    /// name); `None` if the text is not one. Ranges are checked later, with the scenario.
    pub fn read(self, s: &str, client: impl Fn(&str) -> Option<usize>) -> Option<Value> {
        let number = || s.parse::<u64>().ok();
        match self {
            ValueKind::Moment | ValueKind::Ms => number().map(Value::Ms),
            ValueKind::MsOrCut if s == "cut" => Some(Value::Lag(None)),
            ValueKind::MsOrCut => number().map(|t| Value::Lag(Some(t))),
            ValueKind::LockNode => s.parse().ok().map(Value::Index),
            ValueKind::Node => Some(Value::Node(match s.strip_prefix("member-") {
                _ if s == "lock" => Node::LockService,
                Some(name) => Node::MemberOf(client(name)?),
                None => Node::Client(client(s)?),
            })),
        }
    }
}

/// One of a fault's values: its `at` or one of its kind's fields, with what the row says
/// of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// `at`, or the field's name.
    pub name: &'static str,
    /// Its label after the kind's words (`at`, "lag").
    pub label: &'static str,
    pub kind: ValueKind,
    pub range: Option<Range>,
    pub value: Value,
}

impl Shape {
    /// `f`'s values in its What if… row's order: its `at`, then this kind's own fields.
    pub fn values(&'static self, f: &FaultAt) -> impl Iterator<Item = Slot> {
        let fault = f.fault;
        let own = self.fields.iter().map(move |x| Slot {
            name: x.name,
            label: x.label,
            kind: x.kind,
            range: x.range,
            value: (x.get)(&fault),
        });
        std::iter::once(self.slot_at(f.at)).chain(own)
    }

    /// This kind's value `name` (`at`, or one of its fields) in `f`.
    pub fn value(&'static self, f: &FaultAt, name: &str) -> Option<Slot> {
        self.values(f).find(|v| v.name == name)
    }

    fn slot_at(&self, at: Millis) -> Slot {
        Slot {
            name: "at",
            label: "at",
            kind: ValueKind::Moment,
            range: Some(self.at),
            value: Value::Ms(at),
        }
    }

    /// `f` with field `name` (`at`, or one of [`Shape::fields`]) set to `v`; `None` if this
    /// kind has no such field or `v` is not its kind.
    pub fn set(&self, f: FaultAt, name: &str, v: Value) -> Option<FaultAt> {
        if name == "at" {
            return ms(v).map(|at| FaultAt { at, ..f });
        }
        let field = self.fields.iter().find(|x| x.name == name)?;
        let fault = (field.set)(f.fault, v)?;
        Some(FaultAt { fault, ..f })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::MAX_TIME;

    /// Every kind is its own row: its fresh fault is of its kind, and each field sets what
    /// it gets back, leaving the others as they were.
    #[test]
    fn each_field_gets_what_it_sets() {
        let mut codes: Vec<_> = SHAPES.iter().map(|s| s.code).collect();
        codes.sort();
        codes.dedup();
        assert_eq!(codes.len(), SHAPES.len(), "a link name per kind");
        for shape in &SHAPES {
            let f = (shape.fresh)(100);
            assert!(f.at < 100, "{shape:?} starts inside the timeline");
            assert_eq!(f.fault.shape(), shape);
            for field in shape.fields {
                let v = match field.kind {
                    ValueKind::Moment | ValueKind::Ms => Value::Ms(7),
                    ValueKind::MsOrCut => Value::Lag(Some(7)),
                    ValueKind::Node => Value::Node(Node::MemberOf(1)),
                    ValueKind::LockNode => Value::Index(2),
                };
                let set = shape.set(f, field.name, v).expect(field.name);
                assert_eq!((field.get)(&set.fault), v, "{shape:?} {}", field.name);
                for other in shape.fields.iter().filter(|o| o.name != field.name) {
                    assert_eq!((other.get)(&set.fault), (other.get)(&f.fault));
                }
                let index = shape.set(f, field.name, Value::Index(0));
                assert_eq!(index.is_some(), field.kind == ValueKind::LockNode);
            }
            assert_eq!(shape.set(f, "at", Value::Ms(3)).map(|g| g.at), Some(3));
            assert_eq!(shape.set(f, "nope", Value::Ms(3)), None);
        }
    }

    /// Every kind of fault has its row: a new variant does not compile here until it is
    /// listed, and then fails until [`SHAPES`] has its row.
    #[test]
    fn every_kind_of_fault_has_a_row() {
        let each = [
            Fault::Partition {
                a: Node::Client(0),
                b: Node::LockService,
                until: 2,
            },
            Fault::Failover { lag: None },
            Fault::Restart { lag: Some(1) },
            Fault::ClockJump { node: 0, by: 1 },
            Fault::StorageFailover { lag: 0 },
        ];
        for f in each {
            match f {
                Fault::Partition { .. }
                | Fault::Failover { .. }
                | Fault::Restart { .. }
                | Fault::ClockJump { .. }
                | Fault::StorageFailover { .. } => {}
            }
            assert_eq!(f.shape().kind, f.kind(), "{f:?} has no row");
        }
        let mut found: Vec<_> = each.iter().map(|f| f.shape().code).collect();
        let mut rows: Vec<_> = SHAPES.iter().map(|s| s.code).collect();
        found.sort();
        rows.sort();
        assert_eq!(found, rows, "a row per kind, and a kind per row");
    }

    /// Every number of every kind has its range in its row, inside the scenario's times
    /// and named for the scenario's refusal; a pick has none (its design decides it).
    #[test]
    fn every_number_has_its_range_in_its_row() {
        for shape in &SHAPES {
            let f = (shape.fresh)(100);
            for v in shape.values(&f) {
                let number = matches!(
                    v.kind,
                    ValueKind::Moment | ValueKind::Ms | ValueKind::MsOrCut
                );
                assert_eq!(v.range.is_some(), number, "{shape:?} {}", v.name);
                if let Some(r) = v.range {
                    assert!(r.least <= r.most && r.most <= MAX_TIME, "{shape:?} {r:?}");
                    assert!(!r.what.is_empty(), "{shape:?} {}", v.name);
                }
            }
            assert_eq!(f.fault.moment(), shape.moment);
        }
    }

    /// A value's text reads back as the value.
    #[test]
    fn each_value_reads_back_from_its_text() {
        let names = ["A", "B"];
        let name = |i: usize| names[i].to_owned();
        let client = |s: &str| names.iter().position(|n| *n == s);
        for (kind, v) in [
            (ValueKind::Ms, Value::Ms(15)),
            (ValueKind::MsOrCut, Value::Lag(None)),
            (ValueKind::MsOrCut, Value::Lag(Some(3))),
            (ValueKind::LockNode, Value::Index(2)),
            (ValueKind::Node, Value::Node(Node::Client(1))),
            (ValueKind::Node, Value::Node(Node::LockService)),
            (ValueKind::Node, Value::Node(Node::MemberOf(0))),
        ] {
            assert_eq!(kind.read(&v.text(name), client), Some(v), "{v:?}");
        }
        assert_eq!(ValueKind::Node.read("Z", client), None);
        assert_eq!(ValueKind::Ms.read("cut", client), None);
        assert_eq!(ValueKind::Ms.read("-1", client), None);
    }
}
