//! The link's one key for faults, `faults=`: the scenario's whole fault list, every kind
//! written the same way, `kind.at.…`, items joined by commas (`none`: no fault), in the
//! characters a link may hold:
//!
//! - `partition.10.40.A.lock`: client A cut off from the lock service from t=10 until 40
//!   (a node is a client's name, `lock`, or `member-A`, the lock-service member A talks to);
//! - `failover.5.10`, `restart.5.cut`: the lock server fails over (restarts) at t=5, its
//!   replica (snapshot) 10 ms behind, or with none of the run's writes (`cut`);
//! - `clock.10.2.25`: lock node 2's clock steps 25 ms forward at t=10;
//! - `storage.45.15`: storage fails over at t=45 to a standby 15 ms behind.

use crate::core::fault::{shape_named, Shape};
use crate::core::{FaultAt, Millis, Scenario};

/// The key.
pub const KEY: &str = "faults";

/// The value of `faults=` for `sc`.
pub fn write(sc: &Scenario) -> String {
    if sc.faults.is_empty() {
        return "none".to_owned();
    }
    let items: Vec<String> = sc.faults.iter().map(|f| item(sc, f)).collect();
    items.join(",")
}

/// `kind.at.field…`: the kind's link name, then its `at` and each of its fields' text, in
/// the table's order.
fn item(sc: &Scenario, f: &FaultAt) -> String {
    let shape: &Shape = f.fault.shape();
    let mut parts = vec![shape.code.to_owned(), f.at.to_string()];
    let name = |i| sc.actor_name(i);
    parts.extend(shape.fields.iter().map(|x| (x.get)(&f.fault).text(name)));
    parts.join(".")
}

/// The fault list `value` writes, for `sc`'s clients (the values are checked later, with
/// the rest of the scenario); the item it cannot read.
pub fn read(sc: &Scenario, value: &str) -> Result<Vec<FaultAt>, String> {
    let mut faults = Vec::new();
    for i in value.split(',').filter(|_| value != "none") {
        match read_item(sc, i) {
            Some(f) => faults.push(f),
            None => return Err(i.to_owned()),
        }
    }
    Ok(faults)
}

/// An item [`item`] writes: its kind's fresh fault with the item's `at` and fields set.
fn read_item(sc: &Scenario, item: &str) -> Option<FaultAt> {
    let mut parts = item.split('.');
    let shape = shape_named(parts.next()?)?;
    let at: Millis = parts.next()?.parse().ok()?;
    let mut f = FaultAt {
        at,
        ..(shape.fresh)(sc.horizon)
    };
    for field in shape.fields {
        let v = field.kind.read(parts.next()?, |n| sc.actor_index(n))?;
        f = shape.set(f, field.name, v)?;
    }
    parts.next().is_none().then_some(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::deck::DECK;

    /// Every deck entry's faults, of every kind, read back as they were written.
    #[test]
    fn every_kind_of_fault_round_trips() {
        let mut kinds = Vec::new();
        for e in DECK {
            let sc = (e.build)();
            let value = write(&sc);
            assert_eq!(
                read(&sc, &value),
                Ok(sc.faults.clone()),
                "{}: {value}",
                e.id
            );
            kinds.extend(
                value
                    .split(',')
                    .map(|i| i.split('.').next().unwrap().to_owned()),
            );
        }
        for kind in [
            "none",
            "partition",
            "failover",
            "restart",
            "clock",
            "storage",
        ] {
            assert!(kinds.iter().any(|k| k == kind), "no deck entry has {kind}");
        }
        let sc = Scenario::raft_partition();
        assert_eq!(write(&sc), "partition.15.65.member-A.lock");
    }

    /// Any kind of fault can be given to any entry by link, and is checked as the page's own
    /// edits are; an old link's per-fault keys still read.
    #[test]
    fn a_link_gives_any_entry_any_fault() {
        use crate::share::{decode, encode, ShareError};
        let view = decode("#s=gc-pause&faults=storage.45.15,clock.10.0.25").unwrap();
        let sc = &view.scenario;
        assert_eq!(sc.storage_crash(), Some((45, 15)));
        assert_eq!(sc.clock_jumps().count(), 1);
        assert_eq!(&decode(&encode(sc, 0)).unwrap().scenario, sc);
        let err = decode("#s=gc-pause&faults=gc.5.60").unwrap_err();
        assert_eq!(err, ShareError::BadFault("gc.5.60".into()));
        assert!(
            err.to_string().starts_with("“gc.5.60” is not a fault"),
            "{err}"
        );
        let two = "#s=partition&faults=partition.1.2.A.lock,partition.3.4.B.lock";
        assert!(matches!(decode(two), Err(ShareError::Invalid(_))));
        let old = decode("#s=redis-failover&failover=12&lag=3")
            .unwrap()
            .scenario;
        let new = decode("#s=redis-failover&faults=failover.12.3")
            .unwrap()
            .scenario;
        assert_eq!(old, new);
    }

    #[test]
    fn an_item_that_is_no_fault_is_named() {
        let sc = Scenario::gc_pause();
        for bad in [
            "gc.5.60",
            "failover.5.3.1",
            "failover.5",
            "failover.x.3",
            "partition.1.2.Z.lock",
            "storage.45.cut",
            "",
        ] {
            assert_eq!(read(&sc, bad), Err(bad.to_owned()));
        }
        assert_eq!(
            read(&sc, "failover.5.cut,restart"),
            Err("restart".to_owned())
        );
    }
}
