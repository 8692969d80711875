//! Say: a write reaching storage.

use super::*;

/// A write reaching storage: what its fate shows.
pub(crate) fn write(c: &Ctx) -> Option<String> {
    let name = c.name;
    Some(match &c.e.kind {
        EventKind::WriteApplied { result: Ok(_), .. } if c.voice == Voice::RowLock => {
            "Lock and write in one transaction: no token is needed while the transaction holds the row, whatever the fencing policy says.".to_owned()
        }
        EventKind::WriteApplied {
            result: Err(WriteError::SessionTerminated),
            ..
        } if c.voice == Voice::RowLock => format!(
            "Storage will not run {name}'s write because its transaction no longer exists, not because of a token: the same under off, strict and same-epoch."
        ),
        EventKind::WriteApplied { .. } => written(c),
        _ => return None,
    })
}

/// [`write`] for a write checked by storage as a lease's.
fn written(c: &Ctx) -> String {
    let (t, i, sc, e, name) = (c.t, c.i, c.sc, c.e, c.name);
    let EventKind::WriteApplied {
        fence,
        result,
        superseded_by,
        highest_accepted,
        ..
    } = &e.kind
    else {
        return String::new();
    };
    let fencing = sc.policy.checks_fence();
    let late = superseded_by.is_some();
    let out_of_order = matches!((fence, highest_accepted), (Some(f), Some(h)) if f < h);
    let twice = sc.job.is_some() && result.is_ok() && c.accepted().next().is_some();
    let random = sc.lock.token_source() == TokenSource::RandomValue;
    match result {
        Err(WriteError::StaleFence { token, last }) if random && !late => format!(
            "Storage refused the real holder: {name}'s random {token} drew lower than the {last} a superseded holder wrote with. Random values are unique, not ordered."
        ),
        Err(WriteError::StaleFence { token, last }) if random => format!(
            "Refused, but by luck of the draw: {name}'s old {token} happens to be lower than {last}. Another draw would have let it through; the right answer came from a coin, not from an order."
        ),
        Ok(_) if late && fencing && random && highest_accepted.is_some() => {
            let newer = superseded_by.as_ref().map_or_else(String::new, |g| format!(", though {}'s is the newer grant", g.owner));
            format!(
                "By luck of the draw: {name}'s superseded {} is larger than the {} storage holds, so storage took it{newer}. A lower draw would have refused it, by the same luck. Unique is not ordered: a fencing token must only go up.",
                token(*fence),
                token(*highest_accepted)
            )
        }
        Err(WriteError::StaleFence { token, last }) if token == last => {
            let earlier = c.accepted().find(|p| p.fence() == Some(*token));
            match earlier.and_then(|p| p.actor.clone()) {
                Some(w) if w == name => format!("Strict refuses the equal token before the idempotency key is read: the retry gets stale_fence. Only the last fence storage returns, {last}, {name}'s own token, says its first debit landed."),
                Some(w) => format!(
                    "{w} and {name} carry the same token {token}: storage cannot tell the two holders apart and refused whichever came second. {}",
                    Line::DuplicateTokens.text()
                ),
                None if c.fx.barrier_set => format!(
                    "Strict spends the barrier's epoch: its own holder is refused. {}",
                    Line::WhichRule.text()
                ),
                None => "Strict refuses a token equal to the last fence; same-epoch (≥) would admit it.".to_owned(),
            }
        }
        Err(WriteError::StaleFence { .. }) if sc.lock.token_source() == TokenSource::Counterfactual => "Counterfactual: with a token minted in the same step as each grant (an etcd revision, a ZooKeeper czxid), storage would refuse the older generation here. Redlock mints none, so the real run is the fencing-off column.".to_owned(),
        Err(WriteError::StaleFence { last, .. }) if !late => format!(
            "Storage refused the live lease's holder: {name}'s token is older than the {last} a superseded holder took later. A fence is only as good as its tokens' order."
        ),
        Err(WriteError::StaleFence { token, last }) if late && sc.minority() => format!("{name}'s write left before its client learned, but storage has seen {last}, so it refuses {token}: the check at the resource decides."),
        Err(WriteError::StaleFence { token, last }) if late && partitioned(sc, name, e.at) => format!("{name} is still cut off and has not learned its lease is gone, but storage has seen {last}, so it refuses {token}: the check at the resource, not what the client knows."),
        Err(WriteError::StaleFence { token, last }) => refusal_credit(c, *token, *last),
        Err(WriteError::DuplicateIntent { .. }) => "The idempotency key stops the same intent twice and returns its original result; it is not a fence.".to_owned(),
        Err(WriteError::MissingFence) => "With fencing on, a write without a token is refused.".to_owned(),
        Err(WriteError::SessionTerminated) => "Its transaction no longer exists, so its write cannot run: no token is involved.".to_owned(),
        Err(WriteError::StaleSequencer { token, live: Some(l) })
            if e.snapshot.last_fence.is_none_or(|h| h < *l) =>
        {
            format!(
                "Storage has never seen {l}, so the highest-token check alone would take {name}'s {token}. Asking the lock service refuses it once its lease is not live. The price: a round trip per write, and storage depends on the lock service."
            )
        }
        Err(WriteError::StaleSequencer { live: None, .. }) => "Nobody holds the lock, and still the write is refused: the sequencer check asks whether this lease is live, not whether a newer one exists.".to_owned(),
        Err(WriteError::StaleSequencer { .. }) => "The lock service says this lease is no longer the live one, so storage refuses the write.".to_owned(),
        Ok(_) if late && fencing && sc.lock.token_source() == TokenSource::SeparateCounter => format!(
            "{name}'s superseded lease carries the newer token, so storage takes its write and will refuse the real holder's. Mint tokens atomically with the grant."
        ),
        Ok(_) if late && fencing && forgot_newer(c, *fence) => {
            "The fence is only as durable as its row. Synchronous commit (synchronous_standby_names, synchronous_commit = on) keeps it through a failover.".to_owned()
        }
        Ok(_) if late && fencing && sc.check == StorageCheck::ReadThenWrite => format!(
            "{name}'s check read the fence before {}'s UPDATE committed: a check that is not part of the write lets both through. Make it one statement (UPDATE … WHERE fence < $token) or lock the row for the check.",
            superseded_by.as_ref().map_or("the other", |g| g.owner.as_str())
        ),
        Ok(_) if late && fencing => match superseded_by {
            Some(g) if Some(g.fence) == *fence => format!(
                "{name} and {} hold the same token {}: no fencing rule can order them. Tokens must come from a counter that never goes back.",
                g.owner, g.fence
            ),
            Some(g) => format!(
                "A highest-token check revokes {name} only once storage has seen {}; {name}'s write got there first. Establishing the new epoch before the new holder starts (a handoff barrier) closes this gap.",
                g.fence
            ),
            None => String::new(),
        },
        Ok(_) if twice && rewrote_same(c) => "Wasted work, no harm: the job ran twice, and the late run wrote the value the row already held. A lock for efficiency can live with that; the same pause with a debit is a double charge (gc-pause).".to_owned(),
        Ok(_) if twice && late && sc.claims() => format!("Duplicate claim: two holders claimed the job, and the row now names {name}, a superseded holder, which will call the provider too. Only the provider's idempotency key can stop a second charge now."),
        Ok(_) if twice && late && sc.publishes() => "Duplicate publish: the job ran twice, and the result row now holds the superseded worker's result. The lease alone is not mutual exclusion.".to_owned(),
        Ok(_) if twice && late && sc.minority() => format!("Double charge: {name}'s write landed after its lease went to {}, and consensus never saw it. {}", superseded_by.as_ref().map_or_else(String::new, |g| g.owner.clone()), Line::IdempotencyShort.text()),
        Ok(_) if twice && late && partitioned(sc, name, e.at) => format!("Double charge, and nobody paused: {name}, cut off from the lock service but not from storage, wrote after its lease went to {}. {}", superseded_by.as_ref().map_or_else(String::new, |g| g.owner.clone()), Line::IdempotencyShort.text()),
        Ok(_) if twice && late && forgot_newer(c, *fence) => format!("Job ran twice, yet one debit shows: the failover erased {}'s acknowledged one. A key kept in the same database would be lost with it.", superseded_by.as_ref().map_or("the other", |g| g.owner.as_str())),
        Ok(_) if twice && late => format!("Double charge. {}", Line::IdempotencyAnswer.text()),
        // The writer holds the live lease, so the higher token came from a superseded grant
        // that was minted its token later (a counter apart from the grant).
        Ok(_) if out_of_order && !late => {
            let tail = if twice {
                format!(" Both debits landed: a double charge. {}", Line::IdempotencyShort.text())
            } else {
                String::new()
            };
            format!("{name} holds the live lease, yet its token is lower than one storage took from a superseded holder: nothing at the resource checked.{tail}")
        }
        Ok(_) if out_of_order => "Storage took a lower token after a higher one: nothing at the resource noticed the older generation.".to_owned(),
        Ok(_) if late && sc.publishes() => format!("{name}'s stale result is now the published one. A first-wins idempotency key on the job would make it worse: it would keep {name}'s result and drop the new holder's. Only the fence could have refused it."),
        Ok(_) if late => "Storage took a write from a superseded lease. The lease alone is not mutual exclusion.".to_owned(),
        Ok(_) if twice && !fencing => {
            // A stale result that was the published one: its harm is the time it was live.
            let stale = c.accepted().next().filter(|p| sc.publishes() && p.is_late_write());
            if let Some(p) = stale {
                let who = p.actor.clone().unwrap_or_default();
                return format!(
                    "The job ran twice. {name}'s result replaces {who}'s, but {who}'s stale result was the published one from t={} to t={}: whoever read the row then got it.",
                    instant(sc, p.at),
                    instant(sc, e.at)
                );
            }
            let first = c.accepted().last().and_then(|p| p.actor.clone()).unwrap_or_default();
            // A debit's duplicate is an intent run twice: say what a key would and would not do.
            let key = if sc.publishes() {
                String::new()
            } else {
                format!(" {}", Line::IdempotencyShort.text())
            };
            format!(
                "The job has now run twice: storage is not checking tokens, so {first}'s write from a superseded lease landed as well as this one.{key}"
            )
        }
        Ok(_) if twice => {
            let first = c.accepted().last().and_then(|p| p.actor.clone()).unwrap_or_default();
            format!(
                "The job has now run twice although this token passed the check: {first}'s earlier write came from a superseded lease that storage could not yet refuse."
            )
        }
        Ok(_) if asks_lock_service(sc) => "The lock service says this lease is live, so the write lands. Here check and apply are one instant; in a real resource a lease that lapses between them still lands.".to_owned(),
        Ok(_) if sc.policy == FencingPolicy::SameEpoch
            && fence.is_some()
            && t.snapshot_at(i).last_fence == *fence =>
        {
            if c.fx.barrier_set {
                "Same-epoch (≥) admits a token equal to the last fence, so the barrier's owner can write. Strict (>) would refuse it: the barrier would have spent the epoch.".to_owned()
            } else {
                "Same-epoch (≥) admits a token equal to the last fence; strict (>) would refuse it.".to_owned()
            }
        }
        Ok(_) if fencing => "The write carries its token; storage keeps the highest token it has accepted.".to_owned(),
        Ok(_) => "Storage is not checking tokens: it trusts whoever shows up.".to_owned(),
    }
}

/// A refusal credited to what made it work: storage had already seen the newer token. Where
/// the order could have flipped, say what covers it.
fn refusal_credit(c: &Ctx, token: Fence, last: Fence) -> String {
    let name = c.name;
    if c.fx.barrier_set {
        return format!(
            "Storage refuses {token} because the barrier set epoch {last} before the new holder started: the order cannot flip."
        );
    }
    let first = c
        .accepted()
        .find(|p| p.fence() == Some(last))
        .and_then(|p| p.actor.clone())
        .unwrap_or_default();
    format!(
        "Refused only because storage already saw {last} from {first}. Had {name}'s {token} arrived first, both would land; a handoff barrier, or one conditional write of status and fence, covers that."
    )
}

/// Whether a storage failover before this step forgot a token newer than `fence`.
fn forgot_newer(c: &Ctx, fence: Option<Fence>) -> bool {
    super::super::fault::forgotten(c).is_some_and(|h| fence < Some(h))
}
