//! Narration: Acquiring the lock.

use super::*;

/// A grant, a refused acquire, or a token taken after the grant.
pub(crate) fn grant(c: &Ctx) -> Option<String> {
    let (sc, e, name, res, _) = c.parts();
    let value = c.value();
    Some(match &e.kind {
        EventKind::Acquired { expires_at, .. } if c.voice == Voice::RowLock => {
            row_granted(c, *expires_at)
        }
        EventKind::Acquired {
            fence,
            expires_at,
            nodes,
            ..
        } if c.voice == Voice::Redlock => {
            let total = sc.lock.redlock().map_or(0, |r| r.nodes);
            format!(
                "{name} runs Redlock on {res}: SET {res} {} NX PX {} answers OK on {} — {} of {total}, a majority. The lock runs until t={} by those nodes' clocks. Redlock mints no token; {fence} is what a lock service minting one with each grant would hand out (counterfactual).",
                value,
                sc.lease_ttl,
                node_list(nodes),
                nodes.len(),
                c.at(*expires_at)
            )
        }
        EventKind::AcquireRefused { retry_in, .. } => {
            let (attempt, answer) = refusal(c);
            format!(
                "{name} {attempt}: {answer}. Retrying in ~{} ({}).",
                c.dur(*retry_in),
                c.voice.retry_note()
            )
        }
        EventKind::Acquired {
            expires_at,
            token_later: true,
            ..
        } => format!(
            "{name}'s SET {res} {value} NX PX {} answers OK: the lease runs until t={}. It has no token yet: that comes from INCR on a separate counter, one more round trip away.",
            sc.lease_ttl,
            c.at(*expires_at)
        ),
        EventKind::TokenTaken { fence } => {
            let newer = c.fx.prior_grant.as_ref().map(|(o, _)| o);
            match newer.filter(|o| *o != name) {
                Some(o) => format!(
                    "{name} INCRs the separate counter and gets token {fence} — though {o} was granted the lease after {name}'s, so {name}'s older lease now carries the newer token."
                ),
                None => format!("{name} INCRs the separate counter and gets token {fence}."),
            }
        }
        EventKind::Acquired {
            fence, expires_at, ..
        } => match (c.voice, sc.lock.token_source()) {
            (Voice::Chubby, _) => format!(
                "{name} acquires {res} from the Chubby-style lock service and gets a sequencer with token {fence}. The lease runs until t={}.",
                c.at(*expires_at)
            ),
            (Voice::LockService, _) if sc.lock.queue() => queue_grant(c, *fence, *expires_at),
            (Voice::LockService, _) => format!(
                "{name} acquires {res} from the lock service (a lease plus a create-if-absent transaction) and gets token {fence}, its lock key's revision as a rank (real revisions are larger, still increasing). The lease runs until t={}.",
                c.at(*expires_at)
            ),
            (_, TokenSource::RandomValue) => {
                let order = match c.fx.prior_grant.clone() {
                    Some((o, f)) if f < *fence => format!(" It happens to be larger than {o}'s {f}: a draw, not an order."),
                    Some((o, f)) if f > *fence => format!(" It happens to be smaller than {o}'s older {f}: a newer grant, a lower value."),
                    Some((o, f)) => format!(" It equals {o}'s {f}."),
                    None => " Unique, but random: it says nothing about which grant came first.".to_owned(),
                };
                format!(
                    "{name} runs SET {res} {fence} NX PX {}: OK. {fence} is {name}'s random lock value (a UUID in production), and it is also its token. The lease runs until t={}.{order}",
                    sc.lease_ttl,
                    c.at(*expires_at)
                )
            }
            // Redis with a counter (in the script, or apart from it).
            _ => format!(
                "{name} runs the acquire script on {res}: SET {res} {value} NX PX {} answers OK, and INCR fence in the same script gives token {fence}. The lease runs until t={}.",
                sc.lease_ttl,
                c.at(*expires_at)
            ),
        },
        _ => return None,
    })
}

/// A grant from a fair queue ([`Scenario::queue`]): the first holder creates the first node;
/// a waiter is handed the lock when the node before it goes.
fn queue_grant(c: &Ctx, fence: Fence, expires_at: Millis) -> String {
    let (sc, name) = (c.sc, c.name);
    let waited = c.client(name).has_waited;
    let until = instant(sc, expires_at);
    if waited {
        format!(
            "The node before {name}'s is gone, so {name}'s watch fires: it holds {} with token {fence}, its node's sequence number. Its session (the lease) runs until t={until}.",
            sc.resource
        )
    } else {
        format!(
            "{name} creates the first sequential node under {}: it holds the lock with token {fence}, the node's sequence number. Its session (the lease) runs until t={until}.",
            sc.resource
        )
    }
}
