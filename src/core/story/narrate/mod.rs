//! The narration sentence for one event: what happened, with the facts its step recorded.
//! One small function per topic of step, in sibling files; [`super::words::topic`] says
//! which one words an event.

use super::*;

pub(super) mod grant;
pub(super) mod lease;
pub(super) mod process;
pub(super) mod write;

/// After a compare-and-delete: the script compares the random value, and the token is not
/// in the key (nothing to add where the value is the token, or the lease has none).
fn value_not_token(sc: &Scenario, lease: &Option<LeaseFacts>) -> String {
    match (lease.as_ref().and_then(|l| l.token), sc.lock.token_source()) {
        (Some(tok), TokenSource::SameRedis | TokenSource::Counterfactual) => {
            format!(" The script compares that value; token {tok} is not in the key.")
        }
        _ => String::new(),
    }
}

/// An acquire refused at the step's event, in two parts: what the client tried ("tries to
/// acquire acct:1") and the lock's answer with what stands behind it, so one refusal and a
/// run of identical ones share their words.
pub(super) fn refusal(c: &Ctx) -> (String, String) {
    let (sc, e, res) = (c.sc, c.e, c.res);
    let EventKind::AcquireRefused {
        holder,
        until,
        nodes,
        ..
    } = &e.kind
    else {
        return (format!("tries to acquire {res}"), "lock_held".to_owned());
    };
    if let Some(r) = sc.lock.redlock() {
        return (
            format!("runs Redlock on {res}"),
            format!(
                "OK from {} only ({} of {}), no majority, so it deletes those keys again (lock_held)",
                node_list(nodes),
                nodes.len(),
                r.nodes
            ),
        );
    }
    let attempt = format!("tries to acquire {res}");
    let answer = c.voice.held_answer();
    let Some(until) = until.map(|t| instant(sc, t)) else {
        // Recorded: the server still held the lease past its TTL, and said not until when.
        return (
            attempt,
            format!(
            "{answer} — {holder}'s lease is past its TTL, but the server has not let go of it yet"
        ),
        );
    };
    if sc.lock.lock_delay() > 0 && e.snapshot.holder.is_none() {
        return (attempt, format!(
            "refused: nobody holds {res}, but {holder}'s lease lapsed without a release, and the lock-delay keeps {res} from everyone until t={until}"
        ));
    }
    (
        attempt,
        format!("{answer} — {holder}'s lease runs until t={until}"),
    )
}

/// The lease an extend renewed, after "its lease": " (value rnd-A, token 33)" where the
/// value is compared, " (token 34)" with a lock service.
pub(super) fn extended_lease(c: &Ctx) -> String {
    let sc = c.sc;
    match (&c.fx.lease, c.e.fence()) {
        (Some(l), _) if !c.voice.is_service() => {
            format!(" ({})", lease_fields(sc, l))
        }
        (_, Some(f)) => lease_token(sc, f),
        _ => String::new(),
    }
}
