//! The backend registry: every lock backend the replay can run on, each declared by its own
//! file under `backends/`. A new backend is its file, its `mod` line and its line in [`ALL`]
//! (a twin, like ZooKeeper for etcd, needs nothing more); a scenario's lock kind picks its
//! backend in [`of`].

use fencing_lab::core::{LockKind, Scenario};

use super::lock::Backend;

mod etcd;
mod redis;
mod row_lock;
mod zookeeper;

/// Every backend, a twin after the backend it twins.
pub const ALL: &[&Backend] = &[
    &redis::REDIS,
    &redis::REDLOCK,
    &etcd::ETCD,
    &zookeeper::ZOOKEEPER,
    &row_lock::ROW_LOCK,
];

/// The one place that maps a scenario's lock kind onto a backend.
pub fn of(sc: &Scenario) -> &'static Backend {
    match sc.lock {
        LockKind::Row(_) => &row_lock::ROW_LOCK,
        LockKind::Redlock(_) => &redis::REDLOCK,
        LockKind::Service(_) => &etcd::ETCD,
        LockKind::Redis { .. } => &redis::REDIS,
    }
}

/// The backends that make `b`'s runs again, each under its own name.
pub fn twins(b: &Backend) -> impl Iterator<Item = &'static Backend> + '_ {
    ALL.iter().copied().filter(|t| t.twin_of == Some(b.name))
}
