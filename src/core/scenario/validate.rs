//! Why a scenario is refused before it runs: [`ScenarioError`], and [`Scenario::validate`],
//! which checks every bound so that bad input gets a message instead of a simulation.

use super::*;

/// Why a scenario was refused before running.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScenarioError {
    NoActors,
    TooManyActors(usize),
    DuplicateActor(String),
    EmptyName,
    ScriptTooLong {
        actor: String,
    },
    /// An id that is not a URL-safe slug (`a-z`, `0-9`, `-`).
    BadId(String),
    /// A side effect or published result without a description, or with one longer than [`MAX_LABEL`].
    BadLabel {
        actor: String,
    },
    /// A job label that is empty or longer than [`MAX_LABEL`].
    BadJob,
    /// Something a row lock does not have: a lock server to fail over, a lock node's clock to
    /// step, Redlock nodes, a lock-delay.
    NotForRowLock {
        what: &'static str,
    },
    /// Under a row lock, a debit not followed at once by the `Release` that commits it (the
    /// model applies an UPDATE as it runs, so it must commit in the same instant).
    UncommittedDebit {
        actor: String,
    },
    /// A partition that names no client, or whose window is empty.
    BadPartition(String),
    /// Faults the model, the JSON and the replay cannot hold together.
    BadFault(&'static str),
    OutOfRange {
        what: &'static str,
        value: u64,
        min: u64,
        max: u64,
    },
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScenarioError::NoActors => write!(f, "a scenario needs at least one actor"),
            ScenarioError::TooManyActors(n) => {
                write!(f, "{n} actors is more than the {MAX_ACTORS} allowed")
            }
            ScenarioError::DuplicateActor(a) => write!(f, "two actors are both named “{a}”"),
            ScenarioError::EmptyName => write!(f, "an actor has an empty name"),
            ScenarioError::ScriptTooLong { actor } => {
                write!(f, "{actor}'s script is longer than {MAX_STEPS} steps")
            }
            ScenarioError::BadId(id) => write!(
                f,
                "“{id}” is not a URL-safe id (a-z, 0-9 and -, at most {MAX_LABEL} characters)"
            ),
            ScenarioError::BadLabel { actor } => write!(
                f,
                "{actor} has a side effect with an empty or over-long ({MAX_LABEL}+) description"
            ),
            ScenarioError::BadJob => {
                write!(
                    f,
                    "the job needs a description of 1 to {MAX_LABEL} characters"
                )
            }
            ScenarioError::NotForRowLock { what } => write!(
                f,
                "a row lock in PostgreSQL has no {what}: the lock is the database's own"
            ),
            ScenarioError::UncommittedDebit { actor } => write!(
                f,
                "{actor}'s debit under a row lock must be followed at once by its COMMIT (Release)"
            ),
            ScenarioError::BadPartition(why) => write!(f, "the partition {why}"),
            ScenarioError::BadFault(why) => write!(f, "{why}"),
            ScenarioError::OutOfRange {
                what,
                value,
                min,
                max,
            } => {
                write!(f, "{what} = {value} is out of range ({min}..={max})")
            }
        }
    }
}

impl std::error::Error for ScenarioError {}

pub(super) fn in_range(
    what: &'static str,
    value: u64,
    min: u64,
    max: u64,
) -> Result<(), ScenarioError> {
    if (min..=max).contains(&value) {
        Ok(())
    } else {
        Err(ScenarioError::OutOfRange {
            what,
            value,
            min,
            max,
        })
    }
}

impl Scenario {
    /// Checks every bound, so bad input is refused with a message instead of simulated.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        if self.actors.is_empty() {
            return Err(ScenarioError::NoActors);
        }
        if self.actors.len() > MAX_ACTORS {
            return Err(ScenarioError::TooManyActors(self.actors.len()));
        }
        in_range("horizon", self.horizon, 1, MAX_TIME)?;
        in_range("lease_ttl", self.lease_ttl, 1, MAX_TIME)?;
        in_range("first_fence", self.first_fence, 1, u64::MAX / 2)?;
        in_range(
            "initial_balance",
            self.initial_balance.unsigned_abs(),
            0,
            1_000_000_000,
        )?;
        let slug = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
        if self.id.len() > MAX_LABEL || !self.id.chars().all(slug) {
            return Err(ScenarioError::BadId(self.id.clone()));
        }
        if let Some(job) = &self.job {
            if job.trim().is_empty() || job.len() > MAX_LABEL {
                return Err(ScenarioError::BadJob);
            }
        }
        if let Some(r) = self.lock.redlock() {
            in_range("redlock nodes", r.nodes as u64, 1, MAX_NODES as u64)?;
            in_range(
                "redlock reach lists",
                r.reach.len() as u64,
                0,
                self.actors.len() as u64,
            )?;
            for n in r.reach.iter().flatten() {
                in_range("redlock node", *n as u64, 0, r.nodes as u64 - 1)?;
            }
        }
        in_range("lock_delay", self.lock.lock_delay(), 0, MAX_TIME)?;
        in_range("client_drift", self.client_drift, 0, MAX_CLIENT_DRIFT)?;
        in_range("deadline_margin", self.deadline_margin, 0, MAX_TIME)?;
        in_range("lock_rtt", self.lock_rtt, 0, MAX_TIME)?;
        self.validate_faults()?;
        for (i, a) in self.actors.iter().enumerate() {
            if a.name.trim().is_empty() {
                return Err(ScenarioError::EmptyName);
            }
            if self.actors[..i].iter().any(|b| b.name == a.name) {
                return Err(ScenarioError::DuplicateActor(a.name.clone()));
            }
            if a.script.len() > MAX_STEPS || a.pauses.len() > MAX_STEPS {
                return Err(ScenarioError::ScriptTooLong {
                    actor: a.name.clone(),
                });
            }
            in_range("start_at", a.start_at, 0, MAX_TIME)?;
            in_range("network_delay", a.network_delay, 0, MAX_TIME)?;
            if let Some(t) = a.request_timeout {
                in_range("request_timeout", t, 1, MAX_TIME)?;
            }
            if let Some(t) = a.lock_timeout {
                in_range("lock_timeout", t, 1, MAX_TIME)?;
            }
            for p in &a.pauses {
                in_range("pause start", p.start, 0, MAX_TIME)?;
                in_range("pause duration", p.duration, 0, MAX_TIME)?;
            }
            if self.lock.row().is_some() && i == 0 {
                let missing = [
                    (self.crash().is_some(), "lock server to fail over"),
                    (
                        self.clock_jumps().next().is_some(),
                        "lock node clock to step",
                    ),
                    (self.lock_rtt > 0, "lock service to wait for"),
                    (
                        self.partitioned().is_some(),
                        "lock service to be cut off from",
                    ),
                    (
                        self.check == StorageCheck::Sequencer,
                        "lock service for storage to ask (a sequencer check)",
                    ),
                ];
                if let Some((_, what)) = missing.into_iter().find(|m| m.0) {
                    return Err(ScenarioError::NotForRowLock { what });
                }
            }
            if self.lock.row().is_some() {
                let uncommitted = a.script.iter().enumerate().any(|(k, s)| {
                    matches!(s, Step::Debit { .. }) && a.script.get(k + 1) != Some(&Step::Release)
                });
                if uncommitted {
                    return Err(ScenarioError::UncommittedDebit {
                        actor: a.name.clone(),
                    });
                }
            }
            for s in &a.script {
                match s {
                    Step::Acquire { retry_every } => {
                        in_range("retry_every", *retry_every, 1, MAX_TIME)?
                    }
                    Step::Work { ms } => in_range("work", *ms, 0, MAX_TIME)?,
                    Step::Debit { amount, .. } => {
                        in_range("amount", amount.unsigned_abs(), 0, 1_000_000_000)?
                    }
                    Step::WorkRenewing { ms } => in_range("work", *ms, 0, MAX_TIME)?,
                    Step::ProviderCall {
                        what,
                        idempotency_key,
                    } if idempotency_key.trim().is_empty() || idempotency_key.len() > MAX_LABEL => {
                        let _ = what;
                        return Err(ScenarioError::BadLabel {
                            actor: a.name.clone(),
                        });
                    }
                    Step::SideEffect { what }
                    | Step::Publish { result: what }
                    | Step::Claim { what }
                    | Step::ProviderCall { what, .. } => {
                        if what.trim().is_empty() || what.len() > MAX_LABEL {
                            return Err(ScenarioError::BadLabel {
                                actor: a.name.clone(),
                            });
                        }
                    }
                    Step::CheckHeld
                    | Step::CheckDeadline
                    | Step::CheckDone
                    | Step::Extend
                    | Step::Release
                    | Step::Retry
                    | Step::Barrier => {}
                }
            }
        }
        Ok(())
    }
}
