//! The words of the lock's one Redis restarting from its snapshot
//! ([`Fault::Restart`](crate::core::Fault::Restart)): it records a failover's event, with the
//! restart's own words.

use super::*;

/// A failover that is the lock's Redis restarting ([`Scenario::restart`]): killed, and back
/// from a snapshot taken before the run, so it has neither the live lease nor its INCR.
pub(super) fn narrate(c: &Ctx) -> Option<String> {
    let EventKind::Failover {
        lost, next_fence, ..
    } = &c.e.kind
    else {
        return None;
    };
    let (lost, next) = (lost.first(), next_fence);
    let sc = c.sc;
    let res = &sc.resource;
    let crash = "Redis is killed (kill -9) and restarts from its last snapshot, taken before the run: no AOF, so nothing written since was on disk.";
    Some(match lost {
        Some(l) => format!(
            "{crash} {owner}'s SET was acknowledged from memory and never reached disk: the {res} key is gone, and the fence counter is back where the snapshot left it, so the next token is {next} again. {owner} still believes it holds the lease until t={until}.",
            owner = l.owner,
            until = instant(sc, l.expires_at),
        ),
        None if c.e.snapshot.holder.is_some() => format!(
            "{crash} The live lease was in the snapshot, so it survives."
        ),
        None => format!("{crash} No lease was live, so nothing is lost; the next token is {next}."),
    })
}

/// What the restart means: acknowledged is not durable.
pub(super) fn say(c: &Ctx) -> Option<String> {
    let s: &str = match &c.e.kind {
        EventKind::Failover { lost, .. } if !lost.is_empty() => {
            "Acknowledged is not durable: Redis answered OK from memory. With no AOF, a restart forgets the lock and its counter; with appendfsync everysec, only an OS crash or power loss does."
        }
        EventKind::Failover { .. } => "Nothing was live, so this restart loses nothing.",
        _ => return None,
    };
    Some(s.to_owned())
}

/// The restart's marker: the lease it lost, if one.
pub(super) fn label(_: &Scenario, e: &TraceEvent) -> String {
    match &e.kind {
        EventKind::Failover { lost, .. } => match lost.first() {
            Some(l) => format!("restart: #{} lost", l.fence),
            None => "restart".to_owned(),
        },
        _ => String::new(),
    }
}
