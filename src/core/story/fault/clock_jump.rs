//! The words of a lock node's clock jump ([`EventKind::LockClockJumped`]).

use super::*;

/// The jump, and the lease it shortened, if one.
pub(super) fn narrate(c: &Ctx) -> Option<String> {
    let sc = c.sc;
    let EventKind::LockClockJumped { by, shortened } = &c.e.kind else {
        return None;
    };
    let clock = match sc.lock.redlock() {
        Some(_) => format!("Node {}'s clock", sc.jumping_node() + 1),
        None => "The lock node's clock".to_owned(),
    };
    let Some(s) = shortened else {
        let none = match c.voice {
            Voice::Redlock => "it shortens no lock that anyone holds",
            _ => "no lease is live, so nothing changes",
        };
        return Some(format!("{clock} jumps forward {}; {none}.", c.dur(*by)));
    };
    let (owner, was, now) = (&s.owner, c.at(s.granted_until), c.at(s.ends_at));
    let ended = match c.voice {
        Voice::Redlock => format!("{owner}'s key there expires at once, so {owner} holds a majority only until t={now} instead of t={was}; as far as {owner} knows, its lock is valid until about t={}: the TTL less Redlock's drift allowance (1% of the TTL plus 2 ms).", c.at(s.granted_until.saturating_sub(redlock_drift(sc.lease_ttl)))),
        _ => format!("{owner}'s lease{} now ends at t={now} instead of t={was}; as far as {owner} knows, it still runs until t={was}.", lease_token(sc, s.fence)),
    };
    Some(format!(
        "{clock} jumps forward {} (an NTP step). {ended}",
        c.dur(*by)
    ))
}

/// What the jump means: a lease cut short, or nothing.
pub(super) fn say(c: &Ctx) -> Option<String> {
    let s = match &c.e.kind {
        EventKind::LockClockJumped {
            shortened: Some(_), ..
        } => c.voice.clock_jump(),
        EventKind::LockClockJumped { .. } => "No lease was live, so this jump changes nothing.",
        _ => return None,
    };
    Some(s.to_owned())
}

/// The jump's marker: by how much.
pub(super) fn label(_: &Scenario, e: &TraceEvent) -> String {
    match &e.kind {
        EventKind::LockClockJumped { by, .. } => format!("clock +{by} ms"),
        _ => String::new(),
    }
}

/// The drift allowance a Redlock client subtracts from a lock's validity (the reference
/// implementations' `int(ttl × 0.01) + 2` ms): what it believes it has is the TTL less this.
fn redlock_drift(ttl: Millis) -> Millis {
    ttl / 100 + 2
}
