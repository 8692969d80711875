//! The narration sentence for one event: what happened, with the facts its step recorded.

use super::*;

pub(super) fn sentence(t: &Trace, i: usize) -> String {
    let sc = &t.scenario;
    let e = &t.events[i];
    let name = e.actor.clone().unwrap_or_default();
    let res = &sc.resource;
    let at = |t: Millis| instant(sc, t);
    let dur = |ms: Millis| duration(sc, ms);
    let all = facts(t);
    let fx = &all[i + 1];
    // The step's lease by both its fields ("value rnd-A, token 33"), where it names one.
    let fields =
        |l: &Option<LeaseFacts>| l.as_ref().map_or_else(String::new, |l| lease_fields(sc, l));
    let value = fx.lease.as_ref().map_or("", |l| l.value.as_str());
    match &e.kind {
        EventKind::Acquired {
            fence,
            expires_at,
            nodes,
            ..
        } if sc.redlock.is_some() => {
            let total = sc.redlock.as_ref().map_or(0, |r| r.nodes);
            format!(
                "{name} runs Redlock on {res}: SET {res} {} NX PX {} answers OK on {} — {} of {total}, a majority. The lock runs until t={} by those nodes' clocks. Redlock mints no token; {fence} is what a lock service minting one with each grant would hand out (counterfactual).",
                value,
                sc.lease_ttl,
                node_list(nodes),
                nodes.len(),
                at(*expires_at)
            )
        }
        EventKind::AcquireRefused { retry_in, nodes, .. } if sc.redlock.is_some() => {
            let total = sc.redlock.as_ref().map_or(0, |r| r.nodes);
            format!(
                "{name} runs Redlock on {res}: OK from {} only ({} of {total}), no majority, so it deletes those keys again (lock_held). Retrying in ~{} (randomised in a real client).",
                node_list(nodes),
                nodes.len(),
                dur(*retry_in)
            )
        }
        EventKind::Acquired {
            expires_at,
            token_later: true,
            ..
        } => format!(
            "{name}'s SET {res} {value} NX PX {} answers OK: the lease runs until t={}. It has no token yet: that comes from INCR on a separate counter, one more round trip away.",
            sc.lease_ttl,
            at(*expires_at)
        ),
        EventKind::TokenTaken { fence } => {
            let newer = before(t, i).find_map(|p| match &p.kind {
                EventKind::Acquired { .. } if p.actor.as_deref() != Some(name.as_str()) => {
                    p.actor.clone()
                }
                EventKind::Acquired { .. } => Some(String::new()),
                _ => None,
            });
            match newer.filter(|o| !o.is_empty()) {
                Some(o) => format!(
                    "{name} INCRs the separate counter and gets token {fence} — though {o} was granted the lease after {name}'s, so {name}'s older lease now carries the newer token."
                ),
                None => format!("{name} INCRs the separate counter and gets token {fence}."),
            }
        }
        EventKind::Acquired {
            fence, expires_at, ..
        } => match sc.token_source {
            TokenSource::Counterfactual | TokenSource::SameRedis | TokenSource::SeparateCounter => format!(
                "{name} runs the acquire script on {res}: SET {res} {value} NX PX {} answers OK, and INCR fence in the same script gives token {fence}. The lease runs until t={}.",
                sc.lease_ttl,
                at(*expires_at)
            ),
            TokenSource::LockService if sc.queue => queue_grant(t, i, *fence, *expires_at),
            TokenSource::LockService if sc.lock_delay > 0 => format!(
                "{name} acquires {res} from the Chubby-style lock service and gets a sequencer with token {fence}. The lease runs until t={}.",
                at(*expires_at)
            ),
            TokenSource::LockService => format!(
                "{name} acquires {res} from the lock service (a lease plus a create-if-absent transaction) and gets token {fence}, the revision of its lock key. The lease runs until t={}.",
                at(*expires_at)
            ),
            TokenSource::RandomValue => {
                let previous = before(t, i).find_map(|p| match &p.kind {
                    EventKind::Acquired { fence: f, .. } => Some((p.actor.clone().unwrap_or_default(), *f)),
                    _ => None,
                });
                let order = match previous {
                    Some((o, f)) if f < *fence => format!(" It happens to be larger than {o}'s {f}: a draw, not an order."),
                    Some((o, f)) if f > *fence => format!(" It happens to be smaller than {o}'s older {f}: a newer grant, a lower value."),
                    Some((o, f)) => format!(" It equals {o}'s {f}."),
                    None => " Unique, but random: it says nothing about which grant came first.".to_owned(),
                };
                format!(
                    "{name} runs SET {res} {fence} NX PX {}: OK. {fence} is {name}'s random lock value (a UUID in production), and it is also its token. The lease runs until t={}.{order}",
                    sc.lease_ttl,
                    at(*expires_at)
                )
            }
        },
        EventKind::AcquireRefused {
            holder,
            until,
            retry_in,
            ..
        } => {
            if sc.lock_delay > 0 && e.snapshot.holder.is_none() && sc.redlock.is_none() {
                return format!(
                    "{name} tries to acquire {res}: refused (lock_held) — no lease is live, but {holder}'s lapsed without a release, and the lock-delay keeps {res} from everyone until t={}. Retrying in ~{} (randomised in a real client).",
                    at(*until),
                    dur(*retry_in)
                );
            }
            let answer = match sc.token_source {
                TokenSource::SameRedis
                | TokenSource::Counterfactual
                | TokenSource::SeparateCounter
                | TokenSource::RandomValue => "SET NX answers nil (lock_held)",
                TokenSource::LockService if sc.lock_delay > 0 => "refused (lock_held)",
                TokenSource::LockService => "the lock key exists (lock_held)",
            };
            format!(
                "{name} tries to acquire {res}: {answer} — {holder}'s lease runs until t={}. Retrying in ~{} (randomised in a real client).",
                at(*until),
                dur(*retry_in)
            )
        }
        EventKind::LeaseExpired {
            owner,
            fence,
            cause,
            owner_knew,
        } => {
            let knew = match (owner_knew, waiting_renewal(t, i, owner)) {
                (Awareness::Unaware, Some((sent, Some(until)))) => format!(
                    " {owner} is still running, cut off from the lock service: its renewal sent at t={} got no reply, and its client waits for one until t={}.",
                    at(sent),
                    at(until)
                ),
                (Awareness::Unaware, Some((sent, None))) => format!(
                    " {owner} is still running, cut off from the lock service: its renewal sent at t={} got no reply, and its client waits for one with no timeout.",
                    at(sent)
                ),
                (Awareness::Paused, _) => format!(" {owner} is paused and cannot know."),
                (Awareness::Unaware, None) => format!(" {owner} has not noticed."),
                (Awareness::Knows, _) => String::new(),
            };
            let tk = lease_token(sc, *fence);
            match cause {
                ExpiryCause::Ttl if sc.lock_delay > 0 => format!(
                    "{owner}'s lease{tk} expires: its TTL ran out on the lock server without a release, so the lock-delay starts: nobody gets {res} for {} more, until t={}.{knew}",
                    dur(sc.lock_delay),
                    at(e.at.saturating_add(sc.lock_delay))
                ),
                ExpiryCause::Ttl => format!(
                    "{owner}'s lease{tk} expires: its TTL ran out on the lock server, so the lock is free.{knew}"
                ),
                ExpiryCause::ClockJump if sc.redlock.is_some() => format!(
                    "{owner}'s Redlock lease{tk} ends early: its key on node {} expired by the jumped clock, so {owner} no longer holds a majority of nodes.{knew}",
                    sc.redlock.as_ref().map_or(0, |r| r.jumping_node) + 1
                ),
                ExpiryCause::ClockJump => format!(
                    "{owner}'s lease{tk} expires early, by the lock node's jumped clock, so the lock is free.{knew}"
                ),
                ExpiryCause::IdleTimeout => format!(
                    "The server terminates {owner}'s session (idle in its transaction too long), rolls its transaction back and releases its lock.{knew}"
                ),
                ExpiryCause::LostInFailover => {
                    let other = e.snapshot.holder.as_ref().filter(|l| l.owner != *owner);
                    let overlap = match other {
                        Some(l) => format!(
                            " Until now, {owner}'s lost lease and {}'s lease{} were both live.",
                            l.owner, lease_token(sc, l.fence)
                        ),
                        None => String::new(),
                    };
                    let server = if sc.restart {
                        "The restarted Redis"
                    } else {
                        "The promoted replica"
                    };
                    format!(
                        "{owner}'s lease{tk} runs out by its TTL. {server} never had it, so only {owner} still counted it.{overlap}"
                    )
                }
            }
        }
        EventKind::PauseStarted { until, cause } => {
            let what = match cause {
                PauseCause::Gc => format!(
                    "{name} freezes in a {} stop-the-world GC pause until t={}.",
                    dur(until - e.at),
                    at(*until)
                ),
                PauseCause::Stall => format!(
                    "{name}'s whole process freezes for {} (a long collector pause or a VM freeze) until t={}: no thread runs, so nothing renews its lease.",
                    dur(until - e.at),
                    at(*until)
                ),
            };
            if e.snapshot.believers.contains(&name) {
                format!("{what} {name} still believes it holds {res}.")
            } else {
                what
            }
        }
        EventKind::PauseEnded { lease_gone: true } => {
            format!("{name} wakes up and carries on, unaware its lease is gone.")
        }
        EventKind::LockWait { holder } if sc.queue => format!(
            "{name} joins the queue for {res}, held by {holder}: it creates its sequential node and watches only the one just before it. No polling: it waits until that node is gone."
        ),
        EventKind::LockWait { holder } => format!(
            "{name} asks for {res}, held by {holder}: it waits in the lock's queue until {holder} lets go."
        ),
        EventKind::ConnectionLost => format!(
            "{name} sends its next statement, but the server has terminated its session: FATAL {IDLE_IN_TRANSACTION_TIMEOUT}, and its connection is gone. {name} stops."
        ),
        EventKind::PauseEnded { lease_gone: false } => format!("{name} wakes up and carries on."),
        EventKind::Checked { held: true } => format!(
            "{name} checks is_held: true. It is about to write — but true now says nothing about a moment later."
        ),
        EventKind::Checked { held: false } => {
            format!("{name} checks is_held: false. Its lease is gone.")
        }
        EventKind::DeadlineChecked { local, deadline, ok } => {
            let real = lease_age(t, i);
            let clock = match sc.client_drift {
                0 => format!("its own clock reads {} since its lease began", dur(*local)),
                d => format!(
                    "its own clock, running {} slow, reads {} since its lease began ({} on the lock server's clock)",
                    per_mille(d),
                    dur(*local),
                    dur(real)
                ),
            };
            let rule = format!(
                "its deadline is TTL − margin = {} − {} = {}",
                dur(sc.lease_ttl),
                dur(sc.deadline_margin),
                dur(*deadline)
            );
            if *ok {
                let gone = if real >= sc.lease_ttl {
                    format!(
                        " But the lease ran out on the lock server {} ago: the slow clock hides that.",
                        dur(real - sc.lease_ttl)
                    )
                } else {
                    String::new()
                };
                format!(
                    "{name} checks its local deadline (no round trip): {clock}; {rule}, so it has {} left and goes on to write.{gone}",
                    dur(deadline - local)
                )
            } else {
                format!("{name} checks its local deadline (no round trip): {clock}; {rule}, and it is past it, so it stops before writing.")
            }
        }
        EventKind::GaveUp
            if before(t, i).next().is_some_and(|p| {
                matches!(
                    p.kind,
                    EventKind::ProviderCall {
                        outcome: ProviderOutcome::NotCalled,
                        ..
                    }
                )
            }) =>
        {
            format!("{name} stops: a newer lock generation owns the job.")
        }
        EventKind::GaveUp => format!("{name} gives up without writing."),
        EventKind::JobChecked { done } => {
            let job = sc.job.as_deref().unwrap_or("the job");
            if *done {
                format!("{name} reads the job's status in storage: done (a debit has landed), so it skips {job} and releases.")
            } else {
                format!("{name} reads the job's status in storage: not done yet, so it starts {job}.")
            }
        }
        EventKind::WriteSent {
            fence,
            amount,
            arrives_at,
        } => format!(
            "{name} sends \"debit {amount}\" with token {}; the request takes {} and reaches storage at t={}.",
            token(*fence),
            dur(arrives_at - e.at),
            at(*arrives_at)
        ),
        EventKind::WriteTimedOut {
            sent_at,
            arrives_at,
            ..
        } => format!(
            "{name} gets no reply {} after sending and gives up on its request: the client timed out, treats the debit as failed, and moves on. The request is still in flight and reaches storage at t={}.",
            dur(e.at - sent_at),
            at(*arrives_at)
        ),
        EventKind::WriteApplied {
            fence,
            amount,
            result,
            superseded_by,
            highest_accepted,
            publish,
            ..
        } => {
            let tok = token(*fence);
            let balance = e.snapshot.balance;
            let publish = publish.clone();
            let (what, stays) = match &publish {
                Some(r) if sc.claims() => (
                    format!("claim “{r}”"),
                    match &e.snapshot.result {
                        Some(v) => format!("The claim row stays “{v}”."),
                        None => "The claim row stays empty.".to_owned(),
                    },
                ),
                Some(r) => (
                    format!("result “{r}”"),
                    match &e.snapshot.result {
                        Some(v) => format!("The result row stays “{v}”."),
                        None => "The result row stays empty.".to_owned(),
                    },
                ),
                None => (
                    format!("debit of {amount}"),
                    format!("Balance stays {balance}."),
                ),
            };
            let rule = match sc.policy {
                FencingPolicy::Off => "an unconditional UPDATE".to_owned(),
                FencingPolicy::Strict => format!("the conditional UPDATE (row epoch < {tok})"),
                FencingPolicy::SameEpoch => format!("the conditional UPDATE (row epoch ≤ {tok})"),
            };
            match result {
                Ok(balance) => {
                    let mut s = match &publish {
                        Some(_) if sc.claims() => format!(
                            "{name}'s {what} with token {tok} is written to the job's claim row by {rule}: the claim row now holds it."
                        ),
                        Some(_) => format!(
                            "{name}'s {what} with token {tok} is written by {rule}: the result row now holds it."
                        ),
                        None => format!(
                            "{name}'s {what} with token {tok} is accepted. Balance {balance}."
                        ),
                    };
                    if asks_lock_service(sc) {
                        s += &format!(" Before applying it, storage asked the lock service: {name}'s lease is still the live one.");
                    }
                    let fencing = sc.policy.checks_fence();
                    let mut said_order = false;
                    if let (Some(g), Some(f)) = (superseded_by, fence) {
                        let (n, o) = (g.fence, &g.owner);
                        if sc.token_source == TokenSource::SeparateCounter {
                            s += &format!(" {o} was granted the lease after {name}: this write comes from a superseded lease, though its token is the newer one.");
                        } else if g.fence == *f {
                            s += &format!(" {o} was granted the same token {n} after {name}: this write comes from a superseded lease, and storage cannot tell.");
                        } else if let (true, true, Some(h)) = (
                            fencing,
                            sc.token_source == TokenSource::RandomValue,
                            highest_accepted,
                        ) {
                            s += &format!(" {o} was granted the lock after {name}, with {n}, and storage holds {h}; {f} happens to be larger, so a write from a superseded lease passes the check, let in by the draw.");
                        } else if fencing && e.snapshot.last_fence <= Some(*f) {
                            s += &format!(" {o} has already been granted token {n}, but storage has not seen it yet, so {f} passes the check: a write from a superseded lease.");
                        } else if *highest_accepted == Some(n) && *f < n {
                            // One sentence for both facts about the same token.
                            s += &format!(" {o} had already been granted token {n}, and storage had already taken it: this write comes from a superseded lease and lands out of token order.");
                            said_order = true;
                        } else {
                            s += &format!(" {o} had already been granted token {n}: this write comes from a superseded lease.");
                        }
                    }
                    if let (Some(f), Some(h), false) = (fence, highest_accepted, said_order) {
                        if f < h {
                            s += &format!(" Storage had already accepted token {h}: this one landed out of token order.");
                        }
                    }
                    if fencing {
                        s += &format!(" Last fence is now {}.", token(e.snapshot.last_fence));
                    } else if sc.check == StorageCheck::Sequencer {
                        s += " Fencing is off: storage checks neither the token nor the sequencer.";
                    } else {
                        s += " Storage is not checking tokens.";
                    }
                    if rewrote_same(t, i) {
                        s += " The job has now run twice, but this run wrote the value the row already held: wasted work, no harm.";
                    } else if sc.claims() && accepted_before(t, i).next().is_some() {
                        s += " The job has now been claimed twice: a duplicate claim.";
                    } else if sc.job.is_some() && accepted_before(t, i).next().is_some() {
                        s += &format!(" The job has now run twice: a {}.", twice_name(sc));
                    }
                    s
                }
                Err(WriteError::StaleFence { token, last }) if token == last => format!(
                    "{name}'s {what} with token {token} is rejected: stale_fence — the strict rule (token > last) refuses a token equal to the last fence, {last}. {stays}"
                ),
                Err(WriteError::StaleFence { token, last })
                    if sc.token_source == TokenSource::Counterfactual =>
                {
                    format!(
                        "Counterfactually, {name}'s {what} with token {token} would be rejected: stale_fence (storage has already seen {last}). {stays} With Redlock there is no token to check, so in reality it lands."
                    )
                }
                Err(WriteError::StaleFence { token, last }) => format!(
                    "{name}'s {what} with token {token} is rejected: stale_fence (storage has already seen {last}). {stays}"
                ),
                Err(WriteError::DuplicateIntent {
                    key,
                    original_balance,
                }) => format!(
                    "{name}'s debit with idempotency key “{key}” is not applied again: that intent already ran, so storage answers with its original result (balance {original_balance}) and {name} learns the first debit landed. Balance stays {balance}."
                ),
                Err(WriteError::MissingFence) => format!(
                    "{name}'s {what} carries no token: rejected (missing_fence). {stays}"
                ),
                Err(WriteError::SessionTerminated) => format!(
                    "{name}'s {what} cannot run: the server terminated its session and rolled its transaction back ({IDLE_IN_TRANSACTION_TIMEOUT}). {stays}"
                ),
                Err(WriteError::StaleSequencer { token, .. }) => {
                    let seen = match e.snapshot.last_fence {
                        None => "storage has seen no token yet".to_owned(),
                        Some(h) => format!("the highest token storage has seen is {h}"),
                    };
                    format!(
                        "{name}'s {what} with token {token} passes the fencing rule ({seen}), but storage then asks the lock service whether {name}'s lease is still the live one: it is not, {}. Rejected: stale_sequencer. {stays}",
                        live_lease(e, &name)
                    )
                }
            }
        }
        EventKind::ProviderCall {
            what,
            idempotency_key,
            outcome,
            ..
        } => match outcome {
            ProviderOutcome::Charged => format!(
                "{name}'s claim was accepted, so it calls the provider: {what}, with idempotency key “{idempotency_key}”. The key is new to the provider, so it charges. The call carries no token."
            ),
            ProviderOutcome::Deduped => format!(
                "{name}'s claim was accepted too, so it calls the provider: {what}, with idempotency key “{idempotency_key}”. The provider has already run that key: it returns the first call's result and charges nothing."
            ),
            ProviderOutcome::NotCalled => format!(
                "{name}'s claim was refused, so it does not call the provider ({what}): no request is sent."
            ),
        },
        EventKind::WriteSkipped {
            reason: SkipReason::NoToken,
        } => format!("{name} never got the lock, so it has no token and skips its write."),
        EventKind::WriteSkipped {
            reason: SkipReason::NothingToRetry,
        } => format!("{name} has sent no debit yet, so there is nothing to retry."),
        EventKind::Extended {
            fence,
            expires_at,
            watchdog: None,
        } if sc.token_source == TokenSource::LockService => format!(
            "{name} keeps its lease alive (token {fence}) until t={}: the lock service checks the lease is still its own.",
            at(*expires_at)
        ),
        EventKind::Extended {
            expires_at,
            watchdog: None,
            ..
        } => format!(
            "{name} extends its lease ({}) until t={}: one script compares the value and runs PEXPIRE.",
            fields(&fx.lease),
            at(*expires_at)
        ),
        EventKind::Extended {
            fence,
            expires_at,
            watchdog: Some(next),
        } => {
            let lease = match &fx.lease {
                Some(l) if sc.token_source != TokenSource::LockService => format!(" ({})", lease_fields(sc, l)),
                _ => lease_token(sc, *fence),
            };
            let next = match next {
                Some(d) => format!(
                    "next renewal at t={} (a third of the TTL, ±25% jitter)",
                    at(*d)
                ),
                None => "the work ends before the next renewal is due".to_owned(),
            };
            format!(
                "{name}'s watchdog renews its lease{lease} until t={}; {next}.",
                at(*expires_at)
            )
        }
        EventKind::ExtendFailed {
            watchdog,
            lease_ended_at,
        } => {
            let who = if *watchdog {
                format!("{name}'s watchdog tries to renew")
            } else {
                format!("{name} tries to extend")
            };
            let when = match lease_ended_at {
                Some(t) => format!(" — its lease had already ended at t={}", at(*t)),
                None => String::new(),
            };
            format!("{who}: the extend script answers 0 (not_holder){when}. The job self-cancels and does not write.")
        }
        EventKind::Released {
            via: ReleaseMode::CompareAndDelete,
            ..
        } if sc.token_source == TokenSource::LockService && sc.lock_delay > 0 => format!(
            "{name} releases {res}: the lock service checks the lock is still its own and frees it at once, with no lock-delay."
        ),
        EventKind::Released {
            fence,
            via: ReleaseMode::CompareAndDelete,
        } if sc.token_source == TokenSource::LockService => format!(
            "{name} releases {res}: it deletes its lock key in a transaction that checks the key is still its own (token {fence}), and revokes its lease."
        ),
        EventKind::Released {
            via: ReleaseMode::CompareAndDelete,
            ..
        } => {
            let whereat = if sc.redlock.is_some() {
                " on each node it reaches"
            } else {
                ""
            };
            format!(
                "{name} releases {res} with compare-and-delete (one Lua script){whereat}: the key still holds its own value, {}, so it is deleted.{}",
                fx.lease.as_ref().map_or("", |l| l.value.as_str()),
                value_not_token(sc, &fx.lease)
            )
        }
        EventKind::Released {
            via: ReleaseMode::Del,
            ..
        } => format!(
            "{name} releases {res} with a plain DEL, no check at all: the key still held its own lease ({}), so this time nothing went wrong.",
            fields(&fx.lease)
        ),
        EventKind::Released {
            via: ReleaseMode::GetThenDel,
            ..
        } => format!(
            "{name} DELs {res}: the key still held its own lease ({}), so this time nothing went wrong.",
            fields(&fx.lease)
        ),
        EventKind::ReleaseNoop {
            via: ReleaseMode::CompareAndDelete,
            deleted,
            ..
        } if !deleted.is_empty() => {
            let n = sc.redlock.as_ref().map_or(1, |r| r.nodes);
            format!(
                "{name} releases with compare-and-delete on every node it reaches. Its own keys are still on {} ({} of {n}) and are deleted, but its lock had already lost its majority: a minority of keys is no lock, so nothing is released. Without this those keys would have stayed until their PX ran out.",
                node_list(deleted),
                deleted.len()
            )
        }
        EventKind::ReleaseNoop { via, reason, .. } => {
            let why = match reason {
                NoopReason::OtherHolder { owner, fence } => {
                    format!("the lease now belongs to {owner}{}", lease_token(sc, *fence))
                }
                NoopReason::Expired => "its lease had already expired".to_owned(),
                NoopReason::Lost => "the failed primary lost its lease".to_owned(),
                NoopReason::NeverHeld => "it never held the lease".to_owned(),
            };
            match via {
                ReleaseMode::CompareAndDelete if sc.token_source != TokenSource::LockService => {
                    if let (NoopReason::OtherHolder { owner, .. }, Some(l), Some(mine)) = (reason, &fx.lease, &fx.own) {
                        let same = match (l.token, mine.token) {
                            (Some(a), Some(b)) if a == b && sc.token_source != TokenSource::RandomValue => {
                                format!(" Both leases carry token {a}: only the value tells them apart.")
                            }
                            _ => String::new(),
                        };
                        return format!(
                            "{name} tries to release: compare-and-delete finds {owner}'s value {} in the key, not its own {}, so it deletes nothing.{same}",
                            l.value, mine.value
                        );
                    }
                    format!("{name} tries to release: a no-op, {why}. Compare-and-delete deletes nothing.")
                }
                ReleaseMode::CompareAndDelete => {
                    format!("{name} tries to release: a no-op, {why}. The checked delete removes nothing.")
                }
                ReleaseMode::GetThenDel | ReleaseMode::Del => {
                    format!("{name} DELs {res}: nothing live to delete, {why}.")
                }
            }
        }
        EventKind::LockValueRead { owner, fence } => match (owner, fence) {
            (Some(o), Some(_)) if *o == name => format!(
                "{name} releases the unsafe way: GET {res} returns its own value ({}), so it will DEL next — two commands, with a gap between them.",
                fields(&fx.lease)
            ),
            (Some(o), _) => format!(
                "{name} GETs {res}: the value is {o}'s ({}), not its own, so it does not DEL.",
                fields(&fx.lease)
            ),
            (None, _) => {
                format!("{name} GETs {res}: nil — its lease is already gone, so it does not DEL.")
            }
        },
        EventKind::DeletedOthersLease { owner, .. } => format!(
            "{name} DELs {res} without checking {}: it deletes {owner}'s live lease ({}). The lock is free while {owner} is still working.",
            if sc.release == ReleaseMode::Del { "whose it is" } else { "again" },
            fields(&fx.lease)
        ),
        EventKind::Retried {
            fence,
            idempotency_key,
            ..
        } => {
            let key = idempotency_key.as_deref().map_or_else(
                || "no idempotency key".to_owned(),
                |k| format!("idempotency key “{k}”"),
            );
            format!(
                "{name} never got the reply to its debit (it was lost on the way back), so it retries: same token {}, same {key}.",
                token(*fence)
            )
        }
        EventKind::LockClockJumped { by, shortened } if sc.redlock.is_some() => {
            let node = sc.redlock.as_ref().map_or(0, |r| r.jumping_node) + 1;
            match shortened {
                Some(s) => format!(
                    "Node {node}'s clock jumps forward {} (an NTP step). {}'s key there expires at once, so {} holds a majority only until t={} instead of t={}; as far as {} knows, its lock runs until t={}.",
                    dur(*by),
                    s.owner,
                    s.owner,
                    at(s.ends_at),
                    at(s.granted_until),
                    s.owner,
                    at(s.granted_until)
                ),
                None => format!(
                    "Node {node}'s clock jumps forward {}; it shortens no lock that anyone holds.",
                    dur(*by)
                ),
            }
        }
        EventKind::LockClockJumped { by, shortened } => match shortened {
            Some(s) => format!(
                "The lock node's clock jumps forward {} (an NTP step). {}'s lease{} now ends at t={} instead of t={}; as far as {} knows, it still runs until t={}.",
                dur(*by),
                s.owner,
                lease_token(sc, s.fence),
                at(s.ends_at),
                at(s.granted_until),
                s.owner,
                at(s.granted_until)
            ),
            None => format!(
                "The lock node's clock jumps forward {}; no lease is live, so nothing changes.",
                dur(*by)
            ),
        },
        EventKind::Failover {
            lost, next_fence, ..
        } if sc.restart => restarted(t, i, lost.first(), *next_fence),
        EventKind::Failover {
            lost,
            next_fence,
            rolled_back,
        } => match (sc.token_source, lost.first()) {
            // A replica that lags: did the holder's SET reach it before the crash?
            (TokenSource::SameRedis | TokenSource::SeparateCounter | TokenSource::RandomValue, _)
                if sc.replication_lag.is_some() =>
            {
                let lag = dur(sc.replication_lag.unwrap_or(0));
                let granted = |owner: &str| {
                    t.events[..i]
                        .iter()
                        .rev()
                        .find(|p| {
                            p.actor.as_deref() == Some(owner)
                                && matches!(p.kind, EventKind::Acquired { .. })
                        })
                        .map_or(0, |p| p.at)
                };
                let next = match (sc.token_source, rolled_back) {
                    (TokenSource::RandomValue, _) => String::new(),
                    (TokenSource::SameRedis, true) => format!(" The fence counter lived on the same Redis and lost that INCR too, so the next token handed out is {next_fence} again."),
                    (TokenSource::SameRedis, false) => format!(" The next token will be {next_fence}."),
                    _ => format!(" The separate counter survives either way: the next token is {next_fence}."),
                };
                match (lost.first(), &e.snapshot.holder) {
                    (Some(l), _) => format!(
                        "The Redis primary crashes, and its replica, {lag} behind, is promoted. {owner}'s SET at t={g} had not reached it yet, so the {res} key is gone. {owner} was told OK and still believes it holds the lease until t={until}, yet the lock service will grant {res} again.{next}",
                        owner = l.owner,
                        g = at(granted(&l.owner)),
                        until = at(l.expires_at),
                    ),
                    (None, Some(h)) if !e.snapshot.believers.contains(&h.owner) => format!(
                        "The Redis primary crashes, and its replica, {lag} behind, is promoted. It has {owner}'s SET from t={g} but not what came after it, such as {owner}'s release: {owner}'s key is back, and keeps the lock from everyone until t={until}, though {owner} no longer believes it holds it.{next}",
                        owner = h.owner,
                        g = at(granted(&h.owner)),
                        until = at(h.expires_at),
                    ),
                    (None, Some(h)) => format!(
                        "The Redis primary crashes, and its replica, {lag} behind, is promoted. {owner}'s SET at t={g} had reached it, so {owner}'s lease survives until t={until}.{next}",
                        owner = h.owner,
                        g = at(granted(&h.owner)),
                        until = at(h.expires_at),
                    ),
                    (None, None) => format!(
                        "The Redis primary crashes, and its replica, {lag} behind, is promoted. No lease was live, so nothing is lost."
                    ),
                }
            }
            (TokenSource::SameRedis, Some(l)) => {
                let counter = if *rolled_back {
                    format!(" The fence counter lived on the same Redis and lost its INCR too, so the next token handed out is {next_fence} again.")
                } else {
                    format!(" The next token will be {next_fence}.")
                };
                format!(
                    "The Redis primary crashes before replicating {owner}'s SET, and a replica without the {res} key is promoted. {owner} was told OK and still holds token {fence} until t={until}, yet the lock service will grant {res} again.{counter}",
                    owner = l.owner,
                    fence = l.fence,
                    until = at(l.expires_at),
                )
            }
            (TokenSource::SameRedis, None) => {
                "The Redis primary crashes and a replica is promoted. No lease was live, so nothing is lost.".to_owned()
            }
            (TokenSource::SeparateCounter, Some(l)) => format!(
                "The Redis primary crashes before replicating {owner}'s SET, and a replica without the {res} key is promoted. {owner} was told OK and still believes it holds the lease until t={until}, yet the lock service will grant {res} again. The separate counter survives the failover: the next token is {next_fence}.",
                owner = l.owner,
                until = at(l.expires_at),
            ),
            (TokenSource::SeparateCounter, None) => format!(
                "The Redis primary crashes and a replica is promoted. No lease was live, so nothing is lost; the separate counter goes on at {next_fence}."
            ),
            (TokenSource::RandomValue, Some(l)) => format!(
                "The Redis primary crashes before replicating {owner}'s SET, and a replica without the {res} key is promoted. {owner} was told OK and still believes it holds the lease until t={until}, yet the lock service will grant {res} again. There is no counter to roll back: each client draws its own random value.",
                owner = l.owner,
                until = at(l.expires_at),
            ),
            (TokenSource::RandomValue, None) => {
                "The Redis primary crashes and a replica is promoted. No lease was live, so nothing is lost.".to_owned()
            }
            (TokenSource::LockService | TokenSource::Counterfactual, _) => format!(
                "The lock service's leader crashes and another member takes over. It has the committed log, so every lease and the token counter survive; the next token will be {next_fence}."
            ),
        },
        EventKind::BarrierSet { fence, result } => {
            let last = token(e.snapshot.last_fence);
            match result {
                Ok(()) if sc.policy.checks_fence() => format!(
                    "Before {name} starts, the scheduler establishes epoch {fence} in {res}'s row, an atomic update that cannot lower the epoch: last fence is now {last}, nothing else changes. Anything older is refused from here on."
                ),
                Ok(()) => format!(
                    "Before {name} starts, the scheduler writes epoch {fence} to {res}'s row, but storage is not checking tokens: the barrier changes nothing."
                ),
                Err(e) => format!(
                    "The scheduler's barrier with token {fence} is rejected: {} (storage has already seen {last}). {name} must not start.",
                    e.code()
                ),
            }
        }
        EventKind::SideEffect { what, lease_live } => {
            let again = before(t, i).any(|p| matches!(&p.kind, EventKind::SideEffect { what: w, .. } if w == what));
            let mut s = if *lease_live {
                format!("{name} calls an outside system: {what}. No token goes with it; this time {name}'s lease is still live.")
            } else {
                format!("{name} calls an outside system: {what}. Its lease is gone, but the call carries no token, so nothing refuses it.")
            };
            if again {
                s += " It is the second such call: whatever the fencing policy, this happened twice.";
            }
            s
        }
        EventKind::LockUnanswered {
            command,
            timeout_at,
        } => {
            let lease = e
                .snapshot
                .holder
                .as_ref()
                .filter(|l| l.owner == name)
                .map(|l| (l.fence, l.expires_at));
            let what = match (command, lease) {
                (LockCommand::Renew, Some((f, _))) => {
                    format!("{name}'s watchdog sends a renewal{}", lease_token(sc, f))
                }
                (LockCommand::Renew, None) => format!("{name}'s watchdog sends a renewal"),
                (LockCommand::Acquire, _) => format!("{name} sends its acquire for {res}"),
                (LockCommand::Extend, _) => format!("{name} sends an extend of its lease"),
                (LockCommand::CheckHeld, _) => format!("{name} sends an is_held check"),
                (LockCommand::Release, _) => format!("{name} sends its release of {res}"),
            };
            let end = sc.partition.map_or(e.at, |p| p.end);
            let wait = match timeout_at {
                Some(t) => format!(
                    "{name}'s client waits for one until t={} ({} timeout)",
                    at(*t),
                    dur(t - e.at)
                ),
                None => format!("{name}'s client has no timeout: it will wait for ever"),
            };
            let rest = match (command, lease) {
                (LockCommand::Renew, Some((_, until))) => format!(
                    "; the job works on, and the lease still ends at t={}.",
                    at(until)
                ),
                (LockCommand::Renew, None) => "; the job works on.".to_owned(),
                _ => "; it does nothing else meanwhile.".to_owned(),
            };
            if sc.minority {
                return format!(
                    "{what} to member 1, which is on the minority side until t={}: without a quorum it can commit no {}, so no reply comes and the majority never sees it. {wait}{rest}",
                    at(end),
                    command.noun()
                );
            }
            format!(
                "{what}, but a partition cuts {name} off from the lock service until t={}: the {} is dropped, never executed, and no reply comes. {wait}{rest}",
                at(end),
                command.noun()
            )
        }
        EventKind::LockTimedOut {
            command,
            sent_at,
            cancelled,
            wrote_at,
            lease_ended_at,
        } => {
            let mut s = format!(
                "{name}'s client gives up on the {} it sent at t={}: no reply in {}.",
                command.noun(),
                at(*sent_at),
                dur(e.at - sent_at)
            );
            s += &match (command, cancelled) {
                (LockCommand::Renew | LockCommand::Extend, true) => {
                    " The job self-cancels.".to_owned()
                }
                (LockCommand::CheckHeld, true) => {
                    " It treats the check as false and gives up.".to_owned()
                }
                (LockCommand::Renew | LockCommand::Extend | LockCommand::CheckHeld, false) => {
                    " Its job has already stopped, so there is nothing left to cancel.".to_owned()
                }
                (LockCommand::Acquire, _) => {
                    " It treats the acquire as refused and will try again.".to_owned()
                }
                (LockCommand::Release, _) => " It moves on without knowing whether its key was deleted (it was not: the partition dropped the command).".to_owned(),
            };
            if let Some(end) = lease_ended_at {
                s += &format!(" Its lease had ended at t={}.", at(*end));
            } else if let Some(l) = e.snapshot.holder.as_ref().filter(|l| l.owner == name) {
                s += &format!(" Its lease still runs until t={} on the lock service.", at(l.expires_at));
            }
            let sent_since = wrote_at.filter(|w| *w >= *sent_at);
            match (sent_since, sent_since.and_then(|w| write_fate(t, i, &name, w))) {
                (Some(w), Some((Some(o), _))) if *cancelled => s += &format!(
                    " Too late for its write, sent at t={} after the lease went to {o}: a self-cancel cannot call it back.",
                    at(w)
                ),
                (Some(w), Some((None, _))) => s += &format!(
                    " Its write, sent at t={}, had reached storage before anyone else was granted the lock.",
                    at(w)
                ),
                (Some(w), None) if *cancelled => s += &format!(
                    " Its write, sent at t={}, is still on its way: a self-cancel cannot call it back.",
                    at(w)
                ),
                (None, _) if *cancelled && lease_ended_at.is_none() => {
                    s += " The job has not written since: it stops in time."
                }
                _ => {}
            }
            s
        }
        EventKind::ResumeRace { worker_first } => {
            let first = if *worker_first {
                "the worker runs first and goes on with the job"
            } else {
                "the watchdog runs first and tries to renew"
            };
            format!(
                "{name} wakes with its work finished and a renewal overdue. Its worker and watchdog threads race; this time {first}."
            )
        }
    }
}

/// After a compare-and-delete: the script compares the random value, and the token is not
/// in the key (nothing to add where the value is the token, or the lease has none).
fn value_not_token(sc: &Scenario, lease: &Option<LeaseFacts>) -> String {
    match (lease.as_ref().and_then(|l| l.token), sc.token_source) {
        (Some(tok), TokenSource::SameRedis | TokenSource::Counterfactual) => {
            format!(" The script compares that value; token {tok} is not in the key.")
        }
        _ => String::new(),
    }
}

/// A failover that is the lock's Redis restarting ([`Scenario::restart`]): killed, and back
/// from a snapshot taken before the run, so it has neither the live lease nor its INCR.
fn restarted(
    t: &Trace,
    i: usize,
    lost: Option<&super::super::lease::Lease>,
    next: Fence,
) -> String {
    let sc = &t.scenario;
    let res = &sc.resource;
    let crash = "Redis is killed (kill -9) and restarts from its last snapshot, taken before the run: no AOF, so nothing written since was on disk.";
    match lost {
        Some(l) => format!(
            "{crash} {owner}'s SET was acknowledged from memory and never reached disk: the {res} key is gone, and the fence counter is back where the snapshot left it, so the next token is {next} again. {owner} still believes it holds the lease until t={until}.",
            owner = l.owner,
            until = instant(sc, l.expires_at),
        ),
        None if t.events[i].snapshot.holder.is_some() => format!(
            "{crash} The live lease was in the snapshot, so it survives."
        ),
        None => format!("{crash} No lease was live, so nothing is lost; the next token is {next}."),
    }
}

/// A grant from a fair queue ([`Scenario::queue`]): the first holder creates the first node;
/// a waiter is handed the lock when the node before it goes.
fn queue_grant(t: &Trace, i: usize, fence: Fence, expires_at: Millis) -> String {
    let sc = &t.scenario;
    let e = &t.events[i];
    let name = e.actor.as_deref().unwrap_or_default();
    let waited = t.events[..i]
        .iter()
        .any(|p| p.actor == e.actor && matches!(p.kind, EventKind::LockWait { .. }));
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
