//! Facts first: one typed [`StepFacts`] per step, read off the trace in a single forward
//! pass, so a sentence renders what the step recorded instead of searching earlier events.
//!
//! The lock's value and the fencing token are two things. `SET key val NX PX ttl` stores a
//! random owner value (a UUID in production); compare-and-delete and the ownership check of
//! an extend compare that value, never the token. The token comes from a counter (or from
//! nowhere, with Redlock). Only with [`TokenSource::RandomValue`] is the value also the token.

use super::*;

/// One lease as the words name it: whose, its lock value and its token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseFacts {
    pub owner: String,
    /// The random owner value the client SET (`"rnd-A"`, `"rnd-A2"` for A's second grant),
    /// or the value itself where the value is the token (uuid-token).
    pub value: String,
    /// The lease's fencing token; `None` where the lease has none of its own (a separate
    /// counter hands the token out later, not with the lease).
    pub token: Option<Fence>,
}

/// What one step is about, as data.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StepFacts {
    /// Who acted (`None` for the setup step and the lock server's own events).
    pub actor: Option<String>,
    /// The lease the step acts on or names (granted, released, extended, read, deleted,
    /// expired), if any.
    pub lease: Option<LeaseFacts>,
    /// The actor's own current lease, where the step names another's (a release that finds
    /// someone else's value, a GET that sees another owner).
    pub own: Option<LeaseFacts>,
    /// The highest token storage had accepted before this step.
    pub storage_seen: Option<Fence>,
    /// Why a lease ended at this step.
    pub lease_ended: Option<ExpiryCause>,
    /// Who believes they hold the lock after this step.
    pub believers: Vec<String>,
}

/// The lock value a client SETs for its `nth` grant (0-based).
fn owner_value(sc: &Scenario, owner: &str, nth: usize, fence: Fence) -> String {
    match (sc.lock.token_source(), nth) {
        (TokenSource::RandomValue, _) => fence.to_string(),
        (_, 0) => format!("rnd-{owner}"),
        (_, n) => format!("rnd-{owner}{}", n + 1),
    }
}

/// One [`StepFacts`] per step of `t`: index 0 is the setup, `i + 1` is event `i`.
pub fn facts(t: &Trace) -> Vec<StepFacts> {
    let sc = &t.scenario;
    let mut grants: Vec<(String, usize)> = Vec::new();
    let mut current: Vec<LeaseFacts> = Vec::new();
    let mut seen: Option<Fence> = None;
    let mut out = vec![StepFacts {
        believers: t.initial.believers.clone(),
        ..StepFacts::default()
    }];
    let own_token =
        |fence: Fence| (sc.lock.token_source() != TokenSource::SeparateCounter).then_some(fence);
    for e in &t.events {
        let actor = e.actor.clone();
        let name = actor.clone().unwrap_or_default();
        let find = |current: &[LeaseFacts], owner: &str| {
            current.iter().find(|l| l.owner == owner).cloned()
        };
        let mut f = StepFacts {
            actor: actor.clone(),
            storage_seen: seen,
            believers: e.snapshot.believers.clone(),
            ..StepFacts::default()
        };
        match &e.kind {
            EventKind::Acquired { fence, .. } => {
                let nth = match grants.iter_mut().find(|(o, _)| *o == name) {
                    Some((_, n)) => {
                        *n += 1;
                        *n - 1
                    }
                    None => {
                        grants.push((name.clone(), 1));
                        0
                    }
                };
                let lease = LeaseFacts {
                    owner: name.clone(),
                    value: owner_value(sc, &name, nth, *fence),
                    token: own_token(*fence),
                };
                current.retain(|l| l.owner != name);
                current.push(lease.clone());
                f.lease = Some(lease);
            }
            EventKind::Released { .. } | EventKind::Extended { .. } => {
                f.lease = find(&current, &name);
            }
            EventKind::ReleaseNoop {
                reason: NoopReason::OtherHolder { owner, .. },
                ..
            }
            | EventKind::LockValueRead {
                owner: Some(owner), ..
            }
            | EventKind::DeletedOthersLease { owner, .. } => {
                f.lease = find(&current, owner);
                f.own = find(&current, &name);
            }
            EventKind::ReleaseNoop { .. } | EventKind::LockValueRead { .. } => {
                f.own = find(&current, &name);
            }
            EventKind::LeaseExpired { owner, cause, .. } => {
                f.lease = find(&current, owner);
                f.lease_ended = Some(*cause);
            }
            EventKind::WriteApplied {
                result: Ok(_),
                fence: Some(w),
                ..
            } => {
                seen = seen.max(Some(*w));
            }
            _ => {}
        }
        out.push(f);
    }
    out
}

/// A lease named by both its fields: "value rnd-A, token 33"; "value rnd-A" where the lease
/// has no token of its own; "value 842162, also its token" where the value is the token.
pub fn lease_fields(sc: &Scenario, l: &LeaseFacts) -> String {
    match (sc.lock.token_source(), l.token) {
        (TokenSource::RandomValue, _) => format!("value {}, also its token", l.value),
        (_, Some(tok)) => format!("value {}, token {tok}", l.value),
        (_, None) => format!("value {}", l.value),
    }
}

/// " (token 33)" after a lease's name, or nothing where the lease has no token of its own
/// (a separate counter: the lease's number is not its token).
pub fn lease_token(sc: &Scenario, fence: Fence) -> String {
    match sc.lock.token_source() {
        TokenSource::SeparateCounter => String::new(),
        _ => format!(" (token {fence})"),
    }
}
