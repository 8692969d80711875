//! No lock server: the row lock is PostgreSQL's own, on the account's row.

use fencing_lab::core::Scenario;

use super::super::lock::{Backend, Lock, Run, Service};
use super::super::servers;

/// No lock server: `SELECT … FOR UPDATE` on the account's row in the storage's own
/// PostgreSQL, with `idle_in_transaction_session_timeout` (`Scenario::row_lock`). No token.
pub const ROW_LOCK: Backend = Backend {
    name: "row-lock",
    lock_service: false,
    twin_of: None,
    start: |run, notes| Ok(Box::new(RowOnly::start(run, notes))),
    cannot: |sc| {
        let delayed = sc.actors.iter().any(|a| a.network_delay > 0);
        delayed.then_some("a delayed packet would need a second connection, outside the lock holder's transaction")
    },
};

/// The row lock's "service": the storage's own row, taken and released by statements
/// (`SELECT … FOR UPDATE`, `COMMIT`), not commands.
pub struct RowOnly(String);

impl RowOnly {
    fn start(run: &Run, notes: &mut Vec<String>) -> Self {
        notes.push("no lock server: the row lock is PostgreSQL's own, on the account's row".into());
        let pg = servers::version(&format!("{}/postgres", servers::PG_BIN));
        let timeout = (run.sc.idle_timeout()).map_or_else(String::new, |ms| {
            let real = ms as f64 * run.scale;
            format!(", idle_in_transaction_session_timeout = {real:.0} ms")
        });
        Self(format!("PostgreSQL {pg} (SELECT … FOR UPDATE{timeout})"))
    }
}

impl Service for RowOnly {
    /// None: a row-lock client's statements go to the storage.
    fn connect(&self, _: &Scenario, _: usize) -> Result<Box<dyn Lock>, String> {
        Ok(Box::new(Statements))
    }
    fn system(&self) -> String {
        self.0.clone()
    }
}

/// A row-lock client's connection to its lock: none, its statements go to the storage.
struct Statements;

impl Lock for Statements {}
