//! The words: what the page says at each step (the narration sentence and the "Say:" line),
//! the marker labels and the one-line outcome of a run. Everything here is written from the
//! facts in the trace and the scenario, so a sentence can only name what its step recorded.

use super::clock::Millis;
use super::lease::Fence;
use super::ledger::{FencingPolicy, StorageCheck, WriteError};
use super::scenario::{
    PauseCause, ReleaseMode, Scenario, TokenSource, IDLE_IN_TRANSACTION_TIMEOUT,
};
use super::trace::{
    Awareness, EventKind, ExpiryCause, LockCommand, NoopReason, ProviderOutcome, SkipReason, Trace,
    TraceEvent,
};

/// From this horizon on, times are written in seconds ("t=15.0 s") instead of ms.
pub const SECONDS_FROM: Millis = 10_000;

fn secs(sc: &Scenario) -> bool {
    sc.horizon >= SECONDS_FROM
}

/// "50 ms", or "15.0 s" when the scenario counts in seconds.
pub fn duration(sc: &Scenario, ms: Millis) -> String {
    if secs(sc) {
        // Integer arithmetic: rounds to tenths without float formatting in the wasm.
        let tenths = (ms + 50) / 100;
        format!("{}.{} s", tenths / 10, tenths % 10)
    } else {
        format!("{ms} ms")
    }
}

/// A time inside a sentence: "30", or "15.0 s" (so "until t=30" / "until t=15.0 s").
pub fn instant(sc: &Scenario, t: Millis) -> String {
    if secs(sc) {
        duration(sc, t)
    } else {
        t.to_string()
    }
}

/// A time as a label: "55 ms", or "15.0 s" for long scenarios.
pub fn time_label(sc: &Scenario, t: Millis) -> String {
    duration(sc, t)
}

fn token(fence: Option<Fence>) -> String {
    fence.map_or_else(|| "none".to_owned(), |f| f.to_string())
}

fn hash(fence: Option<Fence>) -> String {
    fence.map_or_else(|| "(no token)".to_owned(), |f| format!("#{f}"))
}

/// Where this scenario's tokens come from, as a phrase.
pub fn token_source(sc: &Scenario) -> &'static str {
    match sc.token_source {
        TokenSource::SameRedis => {
            "a counter on the same Redis, INCRed in the acquire script (only as durable as that Redis)"
        }
        TokenSource::LockService => {
            "the lock service itself (the lock key's revision in etcd, a sequential znode in ZooKeeper)"
        }
        TokenSource::Counterfactual => {
            "nowhere: Redlock mints no token, so the numbers shown are what a lock service minting one with each grant would hand out (counterfactual)"
        }
        TokenSource::SeparateCounter => {
            "a separate counter, INCRed one round trip after the SET (it survives a failover, but it is not tied to the grant)"
        }
        TokenSource::RandomValue => {
            "the random value each client SETs as the lock's value (a UUID in production): unique per grant, but not ordered"
        }
    }
}

/// With a separate counter a lease has no token of its own: drop the "(token N)" that
/// names a lease in a sentence (writes say "with token N" and keep theirs).
fn without_lease_tokens(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(" (token ") {
        let tail = &rest[i + " (token ".len()..];
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && tail[digits..].starts_with(')') {
            out.push_str(&rest[..i]);
            rest = &tail[digits + 1..];
        } else {
            out.push_str(&rest[..i + 1]);
            rest = &rest[i + 1..];
        }
    }
    out.push_str(rest);
    out
}

/// [`token_source`] in a few words, for the opening line.
fn token_source_short(sc: &Scenario) -> &'static str {
    match sc.token_source {
        TokenSource::SameRedis => "INCR in the acquire script on the same Redis",
        TokenSource::LockService => {
            "the lock service (an etcd revision, a ZooKeeper zxid or znode version)"
        }
        TokenSource::Counterfactual => {
            "nowhere: Redlock mints none (the numbers are counterfactual)"
        }
        TokenSource::SeparateCounter => "a separate counter, INCRed after the SET",
        TokenSource::RandomValue => "the random value each client SETs (unique, not ordered)",
    }
}

/// "nodes 1, 2 and 3" (nodes are numbered from 1 on the page).
fn node_list(nodes: &[usize]) -> String {
    let names: Vec<String> = nodes.iter().map(|n| (n + 1).to_string()).collect();
    match names.as_slice() {
        [] => "no node".to_owned(),
        [one] => format!("node {one}"),
        [init @ .., last] => format!("nodes {} and {last}", init.join(", ")),
    }
}

/// Short label for a timeline marker.
pub fn label(e: &TraceEvent) -> String {
    match &e.kind {
        EventKind::Acquired {
            token_later: true, ..
        } => "SET → OK".to_owned(),
        EventKind::Acquired { fence, .. } => format!("acquire #{fence}"),
        EventKind::TokenTaken { fence } => format!("INCR → #{fence}"),
        EventKind::AcquireRefused { .. } => "lock_held".to_owned(),
        EventKind::LockWait { .. } => "FOR UPDATE waits".to_owned(),
        EventKind::ConnectionLost => format!("FATAL {IDLE_IN_TRANSACTION_TIMEOUT}"),
        EventKind::LeaseExpired { fence, .. } => format!("#{fence} expires"),
        EventKind::PauseStarted { cause, .. } => match cause {
            PauseCause::Gc => "GC pause".to_owned(),
            PauseCause::Stall => "stall".to_owned(),
        },
        EventKind::PauseEnded { .. } => "wakes".to_owned(),
        EventKind::Checked { held } => format!("is_held = {held}"),
        EventKind::DeadlineChecked {
            local,
            deadline,
            ok,
        } => {
            format!(
                "local {local}/{deadline} ms: {}",
                if *ok { "go" } else { "stop" }
            )
        }
        EventKind::GaveUp => "gives up".to_owned(),
        EventKind::JobChecked { done: true } => "job done: skip".to_owned(),
        EventKind::JobChecked { done: false } => "job not done".to_owned(),
        EventKind::WriteSent { fence, amount, .. } => format!("send −{amount} {}", hash(*fence)),
        EventKind::WriteTimedOut { .. } => "timeout".to_owned(),
        EventKind::WriteApplied {
            fence,
            amount,
            result,
            publish,
            ..
        } => {
            let what = match publish {
                Some(_) => "publish".to_owned(),
                None => format!("−{amount}"),
            };
            match result {
                Ok(_) => format!("{what} {} ok", hash(*fence)),
                Err(e) => format!("{what} {} {}", hash(*fence), e.code()),
            }
        }
        EventKind::WriteSkipped { .. } => "no token: skip".to_owned(),
        EventKind::Extended { fence, .. } => format!("extend #{fence}"),
        EventKind::ExtendFailed { .. } => "extend failed".to_owned(),
        EventKind::Released { fence, .. } => format!("release #{fence}"),
        EventKind::ReleaseNoop { .. } => "release no-op".to_owned(),
        EventKind::LockValueRead { fence, .. } => match fence {
            Some(f) => format!("GET → #{f}"),
            None => "GET → nil".to_owned(),
        },
        EventKind::DeletedOthersLease { owner, fence } => format!("DEL {owner}'s #{fence}"),
        EventKind::Retried { fence, amount, .. } => format!("retry −{amount} {}", hash(*fence)),
        EventKind::LockClockJumped { by, .. } => format!("clock +{by} ms"),
        EventKind::Failover { lost, .. } => match lost.first() {
            Some(l) => format!("failover: #{} lost", l.fence),
            None => "failover".to_owned(),
        },
        EventKind::BarrierSet { fence, result } => match result {
            Ok(()) => format!("barrier #{fence}"),
            Err(e) => format!("barrier #{fence} {}", e.code()),
        },
        EventKind::SideEffect { .. } => "side effect (unfenced)".to_owned(),
        EventKind::ProviderCall { outcome, .. } => match outcome {
            ProviderOutcome::Charged => "provider: charged".to_owned(),
            ProviderOutcome::Deduped => "provider: deduped".to_owned(),
            ProviderOutcome::NotCalled => "no provider call".to_owned(),
        },
        EventKind::LockUnanswered { command, .. } => format!("{}: no reply", command.short()),
        EventKind::LockTimedOut {
            command,
            cancelled: true,
            ..
        } => format!("{} timed out: stop", command.short()),
        EventKind::LockTimedOut { command, .. } => format!("{} timed out", command.short()),
        EventKind::ResumeRace { worker_first: true } => "worker first".to_owned(),
        EventKind::ResumeRace {
            worker_first: false,
        } => "watchdog first".to_owned(),
    }
}

/// [`label`] as the timeline of `t` shows it: with a separate counter a lease's number is not
/// its token, so lease markers go without one.
pub fn marker_label(t: &Trace, e: &TraceEvent) -> String {
    if t.scenario.row_lock.is_some() {
        if let Some(l) = row_label(e) {
            return l;
        }
    }
    if t.scenario.claims() {
        if let EventKind::WriteApplied {
            publish: Some(_), ..
        } = &e.kind
        {
            return label(e).replacen("publish", "claim", 1);
        }
    }
    if t.scenario.token_source != TokenSource::SeparateCounter {
        return label(e);
    }
    match &e.kind {
        EventKind::LeaseExpired { .. } => "lease expires".to_owned(),
        EventKind::Extended { .. } => "extend".to_owned(),
        EventKind::Released { .. } => "release".to_owned(),
        EventKind::DeletedOthersLease { owner, .. } => format!("DEL {owner}'s lease"),
        EventKind::LockValueRead { owner: Some(o), .. } => format!("GET → {o}"),
        EventKind::Failover { lost, .. } if !lost.is_empty() => "failover: lease lost".to_owned(),
        _ => label(e),
    }
}

/// The words on a lease band: its owner and token, or with a separate counter only its owner.
pub fn band_label(sc: &Scenario, owner: &str, fence: Fence) -> String {
    if sc.row_lock.is_some() {
        return format!("{owner} · row lock");
    }
    match sc.token_source {
        TokenSource::SeparateCounter => format!("{owner} · lease"),
        _ => format!("{owner} · token {fence}"),
    }
}

/// The narration sentence for `step`, stamped with its time.
pub fn narration(t: &Trace, step: usize) -> String {
    let sc = &t.scenario;
    let Some(e) = t.event_at(step) else {
        if sc.row_lock.is_some() {
            return row_opening(sc);
        }
        let storage = if sc.claims() {
            format!("{}'s claim row is empty", sc.resource)
        } else if sc.publishes() {
            format!("{}'s result row is empty", sc.resource)
        } else {
            format!("Balance {} on {}", sc.initial_balance, sc.resource)
        };
        let lock = match &sc.redlock {
            Some(r) => format!(
                "{} Redlock lease over {} Redis nodes",
                duration(sc, sc.lease_ttl),
                r.nodes
            ),
            None if sc.lock_delay > 0 => format!(
                "{} lease lock with a {} lock-delay (as in Chubby; Redis, etcd and ZooKeeper have none)",
                duration(sc, sc.lease_ttl),
                duration(sc, sc.lock_delay)
            ),
            None if sc.client_drift > 0 || sc.deadline_margin > 0 => format!(
                "{} lease lock; client clocks run {} slow, and stop at TTL − {}",
                duration(sc, sc.lease_ttl),
                per_mille(sc.client_drift),
                duration(sc, sc.deadline_margin)
            ),
            None => format!("{} lease lock", duration(sc, sc.lease_ttl)),
        };
        let check = match (sc.check, sc.policy.checks_fence()) {
            (StorageCheck::HighestToken, _) => "",
            (StorageCheck::Sequencer, true) => " Storage checks each write's token, then asks the lock service whether the write's lease is still the live one (a sequencer check, as Chubby's CheckSequencer).",
            (StorageCheck::Sequencer, false) => " Fencing is off, so storage checks nothing: no token and no sequencer.",
        };
        let cut = match (
            &sc.partition,
            sc.partition.and_then(|p| sc.actors.get(p.actor)),
        ) {
            (Some(p), Some(a)) => format!(
                " {} is cut off from the lock service (not from storage) from t={} to t={}.",
                a.name,
                instant(sc, p.start),
                instant(sc, p.end)
            ),
            _ => String::new(),
        };
        return format!(
            "{storage}. {} clients share a {lock}; tokens come from {}.{check}{cut} Press → to begin.",
            sc.actors.len(),
            token_source_short(sc)
        );
    };
    let stamp = if secs(sc) {
        format!("t={}", instant(sc, e.at))
    } else {
        format!("t={} ms", e.at)
    };
    let s = match sc.row_lock {
        Some(_) => row_sentence(t, step - 1).unwrap_or_else(|| sentence(t, step - 1)),
        None => sentence(t, step - 1),
    };
    if sc.token_source == TokenSource::SeparateCounter {
        format!("{stamp} — {}", without_lease_tokens(&s))
    } else {
        format!("{stamp} — {s}")
    }
}

/// Whether event `i` is an accepted publish, after an earlier accepted write, of the value
/// the result row already held: the job ran again and changed nothing.
fn rewrote_same(t: &Trace, i: usize) -> bool {
    let EventKind::WriteApplied {
        result: Ok(_),
        publish: Some(v),
        ..
    } = &t.events[i].kind
    else {
        return false;
    };
    let held = i
        .checked_sub(1)
        .and_then(|p| t.events[p].snapshot.result.as_deref());
    held == Some(v.as_str()) && accepted_before(t, i).next().is_some()
}

/// What the job's second landed write is called: a double charge, or a duplicate publish.
fn twice_name(sc: &Scenario) -> &'static str {
    if sc.claims() {
        "duplicate claim"
    } else if sc.publishes() {
        "duplicate publish"
    } else {
        "double charge"
    }
}

/// Whether storage asks the lock service about each write's lease (a sequencer check): only
/// with fencing on, since fencing off means storage checks nothing.
pub fn asks_lock_service(sc: &Scenario) -> bool {
    sc.check == StorageCheck::Sequencer && sc.policy.checks_fence()
}

/// The live lease a sequencer check was answered with, in words: "B holds it now, with
/// token 34" (`e` is the write's event; its snapshot shows the lock as the check saw it).
fn live_lease(e: &TraceEvent, writer: &str) -> String {
    match &e.snapshot.holder {
        Some(l) if l.owner == writer => {
            format!(
                "the live lease is {writer}'s own newer one, token {}",
                l.fence
            )
        }
        Some(l) => format!("{} holds it now, with token {}", l.owner, l.fence),
        None => "no lease on it is live at all".to_owned(),
    }
}

/// The storage's headline figure after `step`: the balance, or the result row of a job that
/// publishes ("—" while empty).
pub fn value(t: &Trace, step: usize) -> String {
    let s = t.snapshot_at(step);
    if t.scenario.publishes() {
        s.result.clone().unwrap_or_else(|| "—".to_owned())
    } else {
        s.balance.to_string()
    }
}

/// [`value`] at the end of the run.
pub fn final_value(t: &Trace) -> String {
    value(t, t.len())
}

/// How long, on the lock server's clock, the actor of event `i` has held its lease (since its
/// grant or last renewal).
fn lease_age(t: &Trace, i: usize) -> Millis {
    let e = &t.events[i];
    before(t, i)
        .find(|p| {
            p.actor == e.actor
                && matches!(
                    p.kind,
                    EventKind::Acquired { .. } | EventKind::Extended { .. }
                )
        })
        .map_or(0, |p| e.at.saturating_sub(p.at))
}

/// The renewal `owner` sent without a reply that it is still waiting for at event `i`:
/// when it was sent, and when its client's timeout gives up on it (`None`: no timeout).
fn waiting_renewal(t: &Trace, i: usize, owner: &str) -> Option<(Millis, Option<Millis>)> {
    for p in before(t, i) {
        if p.actor.as_deref() != Some(owner) {
            continue;
        }
        match &p.kind {
            EventKind::LockTimedOut {
                command: LockCommand::Renew,
                ..
            } => return None,
            EventKind::LockUnanswered {
                command: LockCommand::Renew,
                timeout_at,
            } => return Some((p.at, *timeout_at)),
            _ => {}
        }
    }
    None
}

/// What became of `actor`'s write sent at `sent`, if it reached storage before event `i`:
/// who had been granted the lock after the writer (the write came from a superseded lease),
/// and whether storage accepted it.
fn write_fate(t: &Trace, i: usize, actor: &str, sent: Millis) -> Option<(Option<String>, bool)> {
    t.events[..i].iter().find_map(|p| match &p.kind {
        EventKind::WriteApplied {
            sent_at,
            result,
            superseded_by,
            ..
        } if p.actor.as_deref() == Some(actor) && *sent_at == sent => Some((
            superseded_by.as_ref().map(|g| g.owner.clone()),
            result.is_ok(),
        )),
        _ => None,
    })
}

/// Whether `actor` was cut off from the lock service at `at` by the scenario's partition.
fn partitioned(sc: &Scenario, actor: &str, at: Millis) -> bool {
    sc.partition
        .is_some_and(|p| p.contains(at) && sc.actors.get(p.actor).is_some_and(|a| a.name == actor))
}

/// A drift rate in words: 200 per mille is "20%".
fn per_mille(d: u64) -> String {
    if d % 10 == 0 {
        format!("{}%", d / 10)
    } else {
        format!("{d}‰")
    }
}

/// The earlier events of the same trace, newest first.
fn before(t: &Trace, i: usize) -> impl Iterator<Item = &TraceEvent> {
    t.events[..i].iter().rev()
}

/// Accepted writes before event `i`.
fn accepted_before(t: &Trace, i: usize) -> impl Iterator<Item = &TraceEvent> {
    before(t, i).filter(|e| matches!(e.kind, EventKind::WriteApplied { result: Ok(_), .. }))
}

fn sentence(t: &Trace, i: usize) -> String {
    let sc = &t.scenario;
    let e = &t.events[i];
    let name = e.actor.clone().unwrap_or_default();
    let res = &sc.resource;
    let at = |t: Millis| instant(sc, t);
    let dur = |ms: Millis| duration(sc, ms);
    match &e.kind {
        EventKind::Acquired {
            fence,
            expires_at,
            nodes,
            ..
        } if sc.redlock.is_some() => {
            let total = sc.redlock.as_ref().map_or(0, |r| r.nodes);
            format!(
                "{name} runs Redlock on {res}: SET NX PX {} answers OK on {} — {} of {total}, a majority. The lock runs until t={} by those nodes' clocks. Redlock mints no token; {fence} is what a lock service minting one with each grant would hand out (counterfactual).",
                sc.lease_ttl,
                node_list(nodes),
                nodes.len(),
                at(*expires_at)
            )
        }
        EventKind::AcquireRefused { retry_in, nodes, .. } if sc.redlock.is_some() => {
            let total = sc.redlock.as_ref().map_or(0, |r| r.nodes);
            format!(
                "{name} runs Redlock on {res}: OK from {} only ({} of {total}), no majority, so it deletes those keys again (lock_held). Retrying in {}.",
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
            "{name}'s SET NX PX {} on {res} answers OK: the lease runs until t={}. It has no token yet: that comes from INCR on a separate counter, one more round trip away.",
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
                "{name} runs the acquire script on {res}: SET NX PX {} answers OK, and INCR on the fence counter in the same script gives token {fence}. The lease runs until t={}.",
                sc.lease_ttl,
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
                    "{name} tries to acquire {res}: refused (lock_held) — no lease is live, but {holder}'s lapsed without a release, and the lock-delay keeps {res} from everyone until t={}. Retrying in {}.",
                    at(*until),
                    dur(*retry_in)
                );
            }
            let answer = match sc.token_source {
                TokenSource::SameRedis
                | TokenSource::Counterfactual
                | TokenSource::SeparateCounter
                | TokenSource::RandomValue => "SET NX answers nil (lock_held)",
                TokenSource::LockService => "the lock key exists (lock_held)",
            };
            format!(
                "{name} tries to acquire {res}: {answer} — {holder}'s lease runs until t={}. Retrying in {}.",
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
            match cause {
                ExpiryCause::Ttl if sc.lock_delay > 0 => format!(
                    "{owner}'s lease (token {fence}) expires: its TTL ran out on the lock server without a release, so the lock-delay starts: nobody gets {res} for {} more, until t={}.{knew}",
                    dur(sc.lock_delay),
                    at(e.at.saturating_add(sc.lock_delay))
                ),
                ExpiryCause::Ttl => format!(
                    "{owner}'s lease (token {fence}) expires: its TTL ran out on the lock server, so the lock is free.{knew}"
                ),
                ExpiryCause::ClockJump if sc.redlock.is_some() => format!(
                    "{owner}'s Redlock lease (token {fence}) ends early: its key on node {} expired by the jumped clock, so {owner} no longer holds a majority of nodes.{knew}",
                    sc.redlock.as_ref().map_or(0, |r| r.jumping_node) + 1
                ),
                ExpiryCause::ClockJump => format!(
                    "{owner}'s lease (token {fence}) expires early, by the lock node's jumped clock, so the lock is free.{knew}"
                ),
                ExpiryCause::IdleTimeout => format!(
                    "The server terminates {owner}'s session (idle in its transaction too long), rolls its transaction back and releases its lock.{knew}"
                ),
                ExpiryCause::LostInFailover => {
                    let other = e.snapshot.holder.as_ref().filter(|l| l.owner != *owner);
                    let overlap = match other {
                        Some(l) => format!(
                            " Until now, {owner}'s lost lease and {}'s lease (token {}) were both live.",
                            l.owner, l.fence
                        ),
                        None => String::new(),
                    };
                    format!(
                        "{owner}'s lease (token {fence}) runs out by its TTL. The promoted replica never had it, so only {owner} still counted it.{overlap}"
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
                    "{name}'s job stalls for {} (it hangs and does nothing) until t={}.",
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
            format!("{name} gives up: its claim was refused, so it never calls the provider.")
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
            fence,
            expires_at,
            watchdog: None,
        } => format!(
            "{name} extends its lease (token {fence}) until t={}, with the ownership check and the PEXPIRE in one script.",
            at(*expires_at)
        ),
        EventKind::Extended {
            fence,
            expires_at,
            watchdog: Some(next),
        } => {
            let next = match next {
                Some(d) => format!(
                    "next renewal at t={} (a third of the TTL, ±25% jitter)",
                    at(*d)
                ),
                None => "the work ends before the next renewal is due".to_owned(),
            };
            format!(
                "{name}'s watchdog renews its lease (token {fence}) until t={}; {next}.",
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
            format!("{who}: refused (not_holder){when}. The job self-cancels and does not write.")
        }
        EventKind::Released {
            fence,
            via: ReleaseMode::CompareAndDelete,
        } if sc.token_source == TokenSource::LockService => format!(
            "{name} releases {res}: it deletes its lock key in a transaction that checks the key is still its own (token {fence}), and revokes its lease."
        ),
        EventKind::Released {
            fence,
            via: ReleaseMode::CompareAndDelete,
        } => {
            let whereat = if sc.redlock.is_some() {
                " on each node it reaches"
            } else {
                ""
            };
            format!(
                "{name} releases {res} with compare-and-delete (one Lua script){whereat}: the value is still its own (token {fence}), so the key is deleted."
            )
        }
        EventKind::Released {
            fence,
            via: ReleaseMode::Del,
        } => format!(
            "{name} releases {res} with a plain DEL, no check at all: the key still held its own lease (token {fence}), so this time nothing went wrong."
        ),
        EventKind::Released {
            fence,
            via: ReleaseMode::GetThenDel,
        } => format!(
            "{name} DELs {res}: the key still held its own lease (token {fence}), so this time nothing went wrong."
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
                    format!("the lease now belongs to {owner} (token {fence})")
                }
                NoopReason::Expired => "its lease had already expired".to_owned(),
                NoopReason::Lost => "the failed primary lost its lease".to_owned(),
                NoopReason::NeverHeld => "it never held the lease".to_owned(),
            };
            match via {
                ReleaseMode::CompareAndDelete if sc.token_source == TokenSource::LockService => {
                    format!("{name} tries to release: a no-op, {why}. The checked delete removes nothing.")
                }
                ReleaseMode::CompareAndDelete => format!(
                    "{name} tries to release: a no-op, {why}. Compare-and-delete deletes nothing."
                ),
                ReleaseMode::GetThenDel | ReleaseMode::Del => {
                    format!("{name} DELs {res}: nothing live to delete, {why}.")
                }
            }
        }
        EventKind::LockValueRead { owner, fence } => match (owner, fence) {
            (Some(o), Some(f)) if *o == name => format!(
                "{name} releases the unsafe way: GET {res} returns its own value (token {f}), so it will DEL next — two commands, with a gap between them."
            ),
            (Some(o), f) => format!(
                "{name} GETs {res}: the value is {o}'s (token {}), not its own, so it does not DEL.",
                token(*f)
            ),
            (None, _) => {
                format!("{name} GETs {res}: nil — its lease is already gone, so it does not DEL.")
            }
        },
        EventKind::DeletedOthersLease { owner, fence } => format!(
            "{name} DELs {res} without checking {}: it deletes {owner}'s live lease (token {fence}). The lock is free while {owner} is still working.",
            if sc.release == ReleaseMode::Del { "whose it is" } else { "again" }
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
                "The lock node's clock jumps forward {} (an NTP step). {}'s lease (token {}) now ends at t={} instead of t={}; as far as {} knows, it still runs until t={}.",
                dur(*by),
                s.owner,
                s.fence,
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
                    format!("{name}'s watchdog sends a renewal (token {f})")
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

/// What to say out loud at `step`.
pub fn say(t: &Trace, step: usize) -> String {
    let sc = &t.scenario;
    if sc.row_lock.is_some() {
        if let Some(s) = row_say(t, step) {
            return s;
        }
    }
    let Some(e) = t.event_at(step) else {
        return format!(
            "{} clients, one {}, one lease lock. Watch what the lock promises and what the storage checks.",
            sc.actors.len(),
            sc.resource
        );
    };
    let i = step - 1;
    let name = e.actor.clone().unwrap_or_default();
    let fencing = sc.policy.checks_fence();
    let s: &str = match &e.kind {
        EventKind::Acquired {
            token_later: true, ..
        } => {
            "The lease is granted, but its token is a second command away: a pause can land between the two."
        }
        EventKind::Acquired { fence, .. } => {
            let earlier = before(t, i).find_map(|p| match &p.kind {
                EventKind::Acquired { fence: f, .. } => Some((p.actor.clone().unwrap_or_default(), *f)),
                _ => None,
            });
            return match earlier {
                None if sc.token_source == TokenSource::RandomValue => "A random lock value makes release safe (compare-and-delete knows whose lease it is), but it is an owner ID, not a fencing token.".to_owned(),
                Some((who, f)) if sc.token_source == TokenSource::RandomValue => format!(
                    "{name}'s {fence} and {who}'s {f} are both unique, but neither says which grant is newer: storage comparing them orders the two holders by the luck of the draw."
                ),
                Some((who, _)) if sc.token_source == TokenSource::Counterfactual => format!(
                    "A majority said OK to {name} while {who} still believes it holds the lock, and Redlock gave neither a token: nothing downstream can tell their writes apart."
                ),
                None if asks_lock_service(sc) => "A lease is a promise with a timer: nobody else should write until it runs out. Here storage will check it: each write asks the lock service whether its lease is still the live one.".to_owned(),
                None => "A lease is a promise with a timer: nobody else should write until it runs out. Nothing at the storage enforces it.".to_owned(),
                Some((who, f)) if f >= *fence => format!(
                    "Token {fence} again: {who} was given {f} before the failover, and the rolled-back counter hands it out once more. Two holders now carry tokens storage cannot order."
                ),
                Some((who, f)) => format!(
                    "Each grant gets a bigger token: {name} has {fence}, and {who} still has its old {f}."
                ),
            };
        }
        EventKind::TokenTaken { .. } => {
            "A token taken apart from the grant orders whoever reaches the counter first, not whoever got the lease first: a pause between SET and INCR hands the older lease the newer token."
        }
        EventKind::AcquireRefused { .. } if sc.redlock.is_some() => {
            "Without a majority there is no lock: Redlock deletes the keys it did get and tries again."
        }
        EventKind::AcquireRefused { .. } if sc.lock_delay > 0 && e.snapshot.holder.is_none() => {
            "Lock-delay: after a lease lapses without a release, nobody gets the lock for a while, so a holder that is only slow can finish or notice. It narrows the window; it cannot close it."
        }
        EventKind::AcquireRefused { .. } if sc.token_source == TokenSource::LockService => {
            "While the lock key exists, the create-if-absent transaction fails for everyone else."
        }
        EventKind::AcquireRefused { .. } => "While a lease is live, NX refuses everyone else.",
        EventKind::LockWait { .. } => "A blocking lock makes the next client wait instead of refusing it.",
        EventKind::ConnectionLost => "A terminated session takes its transaction with it: nothing it sends runs.",
        EventKind::LeaseExpired { cause, owner_knew, .. } => match (cause, owner_knew) {
            (ExpiryCause::Ttl, Awareness::Paused) => {
                "The lock server cannot see that the holder is stopped; it only knows the TTL ran out."
            }
            (ExpiryCause::Ttl, Awareness::Unaware)
                if matches!(&e.kind, EventKind::LeaseExpired { owner, .. } if waiting_renewal(t, i, owner).is_some()) =>
            {
                "The lock service cannot tell a cut-off holder from a dead one: it lets the lease run out so the lock can go to someone else. That is availability; the holder is still running and can still reach storage."
            }
            (ExpiryCause::Ttl, Awareness::Unaware) => {
                "The TTL ran out while the holder is still running and still believes it holds the lock."
            }
            (ExpiryCause::Ttl, Awareness::Knows) => "The lease ran out; its holder no longer relied on it.",
            (ExpiryCause::ClockJump, _) if sc.redlock.is_some() => {
                "The jumped node counts in both majorities: once its key expires early, a second client can gather a majority while the first still believes."
            }
            (ExpiryCause::ClockJump, _) => {
                "Lease expiry trusts the lock node's clock: a forward step ended this lease early, and the holder cannot tell."
            }
            (ExpiryCause::LostInFailover, _) => {
                "This lease ended by its TTL, but the failover had already let a second client in."
            }
            (ExpiryCause::IdleTimeout, _) => {
                "The server ended the holder's transaction, and with it the lock."
            }
        },
        EventKind::PauseStarted { cause: PauseCause::Gc, .. } => {
            "A stop-the-world pause: the process cannot tell it was stopped, or for how long."
        }
        EventKind::PauseStarted { cause: PauseCause::Stall, .. } => {
            "A stalled job cannot tell how long it was stuck, and its lease keeps counting down."
        }
        EventKind::PauseEnded { lease_gone: true } => {
            "It wakes with no idea time passed, and still believes it holds the lock."
        }
        EventKind::PauseEnded { lease_gone: false } if e.snapshot.believers.contains(&name) => {
            "Its lease is still live, so this pause did no harm."
        }
        EventKind::PauseEnded { .. } => "It holds no lease now, so nothing depends on this pause.",
        EventKind::Checked { held: true } => {
            "Checking is_held first does not help: a pause can land right after the check (TOCTOU)."
        }
        EventKind::Checked { held: false } => {
            "Giving up on a failed check is right, but it only covers pauses before the check."
        }
        EventKind::DeadlineChecked { ok: true, .. } if lease_age(t, step - 1) >= sc.lease_ttl => {
            "Its clock runs slow, so it believes the lease lasts longer than it does. A margin of at least TTL × drift would have stopped it here."
        }
        EventKind::DeadlineChecked { ok: true, .. } => {
            "The margin covers a clock that drifts by a bounded amount. It cannot cover a pause after the check, or a packet that arrives late."
        }
        EventKind::DeadlineChecked { ok: false, .. } => {
            "Stopping at TTL − margin works when drift and pauses are bounded: this check came with too little lease left, so it stops."
        }
        EventKind::ProviderCall { outcome: ProviderOutcome::Charged, .. } => {
            "The provider never sees the token; it dedupes on the idempotency key. The key says \"this intent runs once\", not \"this lock generation may write\"."
        }
        EventKind::ProviderCall { outcome: ProviderOutcome::Deduped, .. } => {
            "Both lock generations got past the claim; only the provider's idempotency key kept this to one charge. A key stops a repeat of one intent, not a stale holder: that is the fence's job."
        }
        EventKind::ProviderCall { outcome: ProviderOutcome::NotCalled, .. } => {
            "The fenced claim row stopped the stale holder before the call. It stops a holder already stale when it claims; one that goes stale between its claim and its call still calls, and only the provider's idempotency key covers that."
        }
        EventKind::GaveUp => {
            let barrier = before(t, i).next().is_some_and(|p| {
                matches!(p.kind, EventKind::BarrierSet { result: Err(_), .. })
            });
            let claim = before(t, i).next().is_some_and(|p| {
                matches!(p.kind, EventKind::ProviderCall { outcome: ProviderOutcome::NotCalled, .. })
            });
            if claim {
                "A refused claim means a newer lock generation owns the job: stop, and never call the provider."
            } else if barrier {
                "A refused barrier means a newer epoch already started: do not start."
            } else {
                "Giving up on a failed check is right, but it only covers pauses before the check."
            }
        }
        EventKind::JobChecked { done: false } => {
            "Read the status, then act: the lock is meant to make that safe by letting one holder in at a time."
        }
        EventKind::JobChecked { done: true } => {
            // Another client may still believe it holds the lock (a paused one that read the
            // status before the job ran): the check does nothing for it.
            let others: Vec<&str> = e
                .snapshot
                .believers
                .iter()
                .map(String::as_str)
                .filter(|b| *b != name)
                .collect();
            return match others.as_slice() {
                [] => "The job already ran, so this holder does nothing: with one holder at a time, the job runs once.".to_owned(),
                [one] => format!(
                    "The job already ran, so {name} does nothing. But {one} still believes it holds the lock: a status check only helps a client that reads it after the job ran."
                ),
                many => format!(
                    "The job already ran, so {name} does nothing. But {} still believe they hold the lock: a status check only helps a client that reads it after the job ran.",
                    many.join(" and ")
                ),
            };
        }
        EventKind::WriteSent { .. } => {
            "A request can sit in a queue long after the lease that sent it is gone."
        }
        EventKind::WriteTimedOut { .. } => {
            "A timeout means \"I don't know\", not \"it failed\": a timed-out request may still execute."
        }
        EventKind::WriteApplied { .. } => return say_write(t, i),
        EventKind::WriteSkipped { .. } => "No token, no write.",
        EventKind::Extended { watchdog: Some(_), .. } => {
            "Renew at about a third of the TTL, with ±25% jitter, and check ownership in the same atomic step."
        }
        EventKind::Extended { .. } => {
            "Extend with the ownership check in the same script; GET then PEXPIRE could extend someone else's lease."
        }
        EventKind::ExtendFailed { lease_ended_at: Some(t), .. } => {
            return format!(
                "Self-cancelling is right, but it came after the lease had already ended at t={}: it stops what is left of the job, not what ran in between. Only the fence covers that.",
                instant(sc, *t)
            )
        }
        EventKind::ExtendFailed { .. } => "If a renewal fails, stop the job at once.",
        EventKind::Released { via: ReleaseMode::CompareAndDelete, .. }
            if sc.token_source == TokenSource::LockService =>
        {
            "The delete checks the key is still this client's, so a late release cannot remove a successor's lock."
        }
        EventKind::Released { via: ReleaseMode::CompareAndDelete, .. } => {
            "Compare-and-delete in one script deletes only your own lease."
        }
        EventKind::Released { via: ReleaseMode::GetThenDel, .. } => {
            "GET then DEL worked this time only because nothing changed between the two commands."
        }
        EventKind::Released { via: ReleaseMode::Del, .. } => {
            "A plain DEL deletes whatever the key holds; this time it was still this client's own lease."
        }
        EventKind::ReleaseNoop { via: ReleaseMode::CompareAndDelete, .. }
            if sc.token_source == TokenSource::LockService =>
        {
            "The checked delete saw the key is not this client's any more and removed nothing."
        }
        EventKind::ReleaseNoop { via: ReleaseMode::CompareAndDelete, deleted, .. } if !deleted.is_empty() => {
            "Redlock runs the release on every node, whatever the client believes it holds there. Deleting a minority of leftover keys releases nothing: the lock had already ended with its majority."
        }
        EventKind::ReleaseNoop { via: ReleaseMode::CompareAndDelete, reason: NoopReason::OtherHolder { .. }, .. } => {
            "Compare-and-delete saw someone else's value and deleted nothing; a plain DEL would have deleted their lease."
        }
        EventKind::ReleaseNoop { via: ReleaseMode::CompareAndDelete, .. } => {
            "Nothing to delete: the lease was already gone. Compare-and-delete is safe either way."
        }
        EventKind::ReleaseNoop { via: ReleaseMode::GetThenDel | ReleaseMode::Del, .. } => {
            "This time the key was empty; had someone acquired it in the gap, the DEL would have deleted their lease."
        }
        EventKind::LockValueRead { owner: Some(o), .. } if *o == name => {
            "GET then DEL is two commands: the key can change hands between them."
        }
        EventKind::LockValueRead { .. } => "The GET saw the key is no longer its own, so no DEL follows.",
        EventKind::DeletedOthersLease { .. } => {
            "The unconditional DEL deleted someone else's lease. Compare-and-delete in one Lua script cannot."
        }
        EventKind::Retried { .. } => {
            "A lost reply makes a retry look like a new request: same token, same idempotency key."
        }
        EventKind::LockClockJumped { shortened: Some(_), .. } if sc.redlock.is_some() => {
            "Redlock's safety assumes every node's clock runs at about the right rate. One node's NTP step breaks that, and no client can tell."
        }
        EventKind::LockClockJumped { shortened: Some(_), .. } => {
            "Lease expiry trusts the lock node's clock. A clock step shortens the lease, and the holder cannot tell."
        }
        EventKind::LockClockJumped { .. } => "No lease was live, so this jump changes nothing.",
        EventKind::Failover { lost, .. }
            if lost.is_empty()
                && sc.replication_lag.is_some()
                && e.snapshot.holder.as_ref().is_some_and(|h| !e.snapshot.believers.contains(&h.owner)) =>
        {
            "A lagging replica undoes the newest writes, a release and a grant among them: the lock is now held by a lease nobody believes in."
        }
        EventKind::Failover { lost, .. }
            if lost.is_empty() && sc.replication_lag.is_some() && e.snapshot.holder.is_some() =>
        {
            "The SET had reached the replica, so nothing is lost this time. With more lag than the SET's age it would be; WAIT narrows that window, but by Redis's own docs it does not make Redis strongly consistent."
        }
        EventKind::Failover { lost, .. } if lost.is_empty() => match sc.token_source {
            TokenSource::SeparateCounter => "No lease was live, so this failover loses nothing; the separate counter goes on.",
            TokenSource::LockService | TokenSource::Counterfactual => {
                "A consensus store commits a grant on a majority before it says OK, so a leader change loses nothing."
            }
            TokenSource::SameRedis | TokenSource::RandomValue => "No lease was live, so this failover loses nothing.",
        },
        EventKind::Failover { rolled_back: true, .. } => {
            "Asynchronous replication: the primary said OK, then forgot the lock and its token counter. The lock service itself will grant the lock twice."
        }
        EventKind::Failover { .. } => {
            "Asynchronous replication: the primary said OK, then forgot. The lock service itself will grant the lock twice."
        }
        EventKind::BarrierSet { result: Ok(()), .. } if fencing => {
            "Establish the new epoch at the resource before starting: the old token is refused even before the new holder writes."
        }
        EventKind::BarrierSet { result: Ok(()), .. } => "A barrier only helps if the storage checks tokens.",
        EventKind::BarrierSet { .. } => "A refused barrier means a newer epoch already started: do not start.",
        EventKind::SideEffect { what, lease_live } => {
            let again = before(t, i).any(|p| matches!(&p.kind, EventKind::SideEffect { what: w, .. } if w == what));
            match (again, lease_live) {
                (true, _) => "Charged twice, under every fencing policy: the payment API never sees a token. The provider's idempotency key, or a fenced claim row before each call (claim-row), could stop it.",
                (false, false) => "Fencing only protects what checks the token. This call did not, so the stale worker made it anyway.",
                (false, true) => "A call outside the storage carries no token: a repeat is stopped only by the provider's idempotency key, or by a fenced claim written before the call.",
            }
        }
        EventKind::LockUnanswered { timeout_at: None, .. } => {
            "Without a timeout the client waits for ever: it never learns that the lock service did not answer."
        }
        EventKind::LockUnanswered {
            command: LockCommand::Renew,
            ..
        } => {
            "No reply is not a refusal: the client cannot tell a dropped renewal from a slow one. The lease counts down on the lock service while the job works on."
        }
        EventKind::LockUnanswered { .. } => {
            "A partition is not a pause: the client keeps running, but nothing it sends to the lock service arrives, and it learns that only at its own timeout."
        }
        EventKind::LockTimedOut { .. } => return say_lock_timeout(t, i),
        EventKind::ResumeRace { .. } => {
            "After a pause, which thread runs first is a race: a self-cancel that has to win it is not a safety mechanism."
        }
    };
    s.to_owned()
}

/// The "Say:" line for a client giving up on an unanswered lock command.
fn say_lock_timeout(t: &Trace, i: usize) -> String {
    let sc = &t.scenario;
    let e = &t.events[i];
    let name = e.actor.clone().unwrap_or_default();
    let EventKind::LockTimedOut {
        command,
        sent_at,
        cancelled,
        wrote_at,
        lease_ended_at,
    } = &e.kind
    else {
        return String::new();
    };
    let dur = |ms: Millis| duration(sc, ms);
    let waited = e.at.saturating_sub(*sent_at);
    // What became of the write the job sent while the command waited, if it has arrived.
    let sent = wrote_at.filter(|w| w >= sent_at);
    let fate = sent.and_then(|w| write_fate(t, i, &name, w));
    match (command, cancelled, lease_ended_at) {
        (LockCommand::Renew | LockCommand::Extend, true, Some(end)) => {
            let left = end.saturating_sub(*sent_at);
            let fate = match fate {
                Some((Some(_), true)) => " Its write from the superseded lease had already landed, and nothing refused it.",
                Some((Some(_), false)) => " Its write from the superseded lease had already reached storage, and only the fence refused it.",
                Some((None, _)) => " Its write had landed before anyone else held the lock, so no harm came of it.",
                None if sent.is_some() => " Its write is still on its way, and no self-cancel can call it back.",
                None => "",
            };
            format!(
                "{name} learned only at its own timeout, {} after sending, though its lease had only {} left then: too late.{fate}",
                dur(waited),
                dur(left)
            )
        }
        (LockCommand::Renew | LockCommand::Extend, true, None) if sent.is_some() && fate.is_none() => {
            "The lease is still live, but the job's write is already on its way: a self-cancel stops what comes next, not what was sent. Only a check at storage can refuse it when it arrives.".to_owned()
        }
        (LockCommand::Renew | LockCommand::Extend, true, None) if sent.is_some() => {
            "The client stops while its lease is still live, and its write landed under it: this time the timeout was short enough.".to_owned()
        }
        (LockCommand::Renew | LockCommand::Extend, true, None) => {
            let left = e
                .snapshot
                .holder
                .as_ref()
                .filter(|l| l.owner == name)
                .map_or(0, |l| l.expires_at.saturating_sub(*sent_at));
            format!(
                "In time, this once: the {} timeout is shorter than the {} that was left on the lease, and the job had not written. A write already on its way, or a pause after the last check, would still get past it.",
                dur(waited),
                dur(left)
            )
        }
        (LockCommand::Acquire, _, _) => "A timed-out acquire is not a refusal either: the client cannot tell whether its SET ran. Here it did not: the partition dropped it.".to_owned(),
        (LockCommand::Release, _, _) => "The lock service never saw this release: whatever the client still held there stays until its TTL runs out.".to_owned(),
        (LockCommand::CheckHeld, true, _) => "No answer is not \"false\", but stopping is the safe reading of it.".to_owned(),
        _ => "The failure came after the job had stopped: there was nothing left for it to cancel.".to_owned(),
    }
}

/// The "Say:" line for a write reaching storage.
fn say_write(t: &Trace, i: usize) -> String {
    let sc = &t.scenario;
    let e = &t.events[i];
    let name = e.actor.clone().unwrap_or_default();
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
    let twice = sc.job.is_some() && result.is_ok() && accepted_before(t, i).next().is_some();
    let random = sc.token_source == TokenSource::RandomValue;
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
            let earlier = accepted_before(t, i).find(|p| p.fence() == Some(*token));
            match earlier.and_then(|p| p.actor.clone()) {
                Some(w) if w == name => "Strict refuses an equal token, and this storage checks the fence before the idempotency key: the retry gets stale_fence, not its first debit's stored result, so the client cannot tell whether that debit landed. Check the key first, or use same-epoch (≥), and the key answers the retry.".to_owned(),
                Some(w) => format!(
                    "{w} and {name} carry the same token {token}: storage cannot tell the two holders apart and refused whichever came second."
                ),
                None => "Strict refuses a token equal to the last fence; same-epoch (≥) would admit it.".to_owned(),
            }
        }
        Err(WriteError::StaleFence { .. }) if sc.token_source == TokenSource::Counterfactual => "Counterfactual: with a token minted in the same step as each grant (an etcd revision, a ZooKeeper zxid), storage would refuse the older generation here. Redlock mints none, so the real run is the fencing-off column.".to_owned(),
        Err(WriteError::StaleFence { last, .. }) if !late => format!(
            "Storage refused the holder of the newest lease: {name}'s token is older than the {last} a superseded holder took later. A fence is only as good as the order its tokens are minted in."
        ),
        Err(WriteError::StaleFence { token, last }) if late && partitioned(sc, &name, e.at) => format!("{name} is still cut off from the lock service and has not learned its lease is gone, but storage has seen {last}, so it refuses {token}. Safety comes from the check at the resource, not from what the client knows."),
        Err(WriteError::StaleFence { .. }) => "Storage compares tokens and refuses the older generation. Safety comes from the check at the resource, not from the lock.".to_owned(),
        Err(WriteError::DuplicateIntent { .. }) => "The idempotency key stops the same intent twice and returns its original result; it is not a fence.".to_owned(),
        Err(WriteError::MissingFence) => "With fencing on, a write without a token is refused.".to_owned(),
        Err(WriteError::SessionTerminated) => "Its transaction no longer exists, so its write cannot run: no token is involved.".to_owned(),
        Err(WriteError::StaleSequencer { token, live: Some(l) })
            if e.snapshot.last_fence.is_none_or(|h| h < *l) =>
        {
            format!(
                "Storage has never seen {l}, so the highest-token check alone would have taken {name}'s {token}. Asking the lock service refuses it the moment its lease stops being the live one. The price: a round trip to the lock service per write, and storage now waits on the lock service being up."
            )
        }
        Err(WriteError::StaleSequencer { live: None, .. }) => "Nobody holds the lock, and still the write is refused: the sequencer check asks whether this lease is live, not whether a newer one exists.".to_owned(),
        Err(WriteError::StaleSequencer { .. }) => "The lock service says this lease is no longer the live one, so storage refuses the write.".to_owned(),
        Ok(_) if late && fencing && sc.token_source == TokenSource::SeparateCounter => format!(
            "{name}'s superseded lease carries the newer token, so storage takes its write and will refuse the real holder's. Mint the token in the same atomic step as the grant."
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
        Ok(_) if twice && rewrote_same(t, i) => "Wasted work, no harm: the job ran twice, but a report recomputed from the same input rewrote the value already in the row. A lock for efficiency can live with that; the same pause with a debit is a double charge (gc-pause).".to_owned(),
        Ok(_) if twice && late && sc.claims() => format!("Duplicate claim: the job ran twice, and the claim row now names {name}, a superseded holder, which will call the provider too. Only the provider's idempotency key can stop a second charge now."),
        Ok(_) if twice && late && sc.publishes() => "Duplicate publish: the job ran twice, and the result row now holds the superseded worker's result. The lease alone is not mutual exclusion.".to_owned(),
        Ok(_) if twice && late && partitioned(sc, &name, e.at) => format!("Double charge, and nobody paused: {name} was cut off from the lock service, not from storage, so its write got through after its lease had gone to {}. The lease alone is not mutual exclusion.", superseded_by.as_ref().map_or_else(String::new, |g| g.owner.clone())),
        Ok(_) if twice && late => "Double charge: the job ran twice. Each debit is atomic, so no update was lost; a second lock generation charged again. The lease alone is not mutual exclusion.".to_owned(),
        // The writer holds the live lease, so the higher token came from a superseded grant
        // that was minted its token later (a counter apart from the grant).
        Ok(_) if out_of_order && !late => {
            let tail = if twice { " Both debits landed: the job ran twice, a double charge." } else { "" };
            format!("{name} holds the live lease, yet its token is lower than one storage already took from a superseded holder: nothing at the resource checked.{tail}")
        }
        Ok(_) if out_of_order => "Storage took a lower token after a higher one: nothing at the resource noticed the older generation.".to_owned(),
        Ok(_) if late => "Storage took a write from a superseded lease. The lease alone is not mutual exclusion.".to_owned(),
        Ok(_) if twice && !fencing => {
            let first = accepted_before(t, i).last().and_then(|p| p.actor.clone()).unwrap_or_default();
            format!(
                "The job has now run twice: storage is not checking tokens, so {first}'s write from a superseded lease landed as well as this one."
            )
        }
        Ok(_) if twice => {
            let first = accepted_before(t, i).last().and_then(|p| p.actor.clone()).unwrap_or_default();
            format!(
                "The job has now run twice although this token passed the check: {first}'s earlier write came from a superseded lease that storage could not yet refuse."
            )
        }
        Ok(_) if asks_lock_service(sc) => "Storage asked the lock service before applying: this lease is live, so the write lands. The model checks and applies at one instant; in a real resource the apply comes a moment after the answer, and a lease that lapses in that gap still lands.".to_owned(),
        Ok(_) if sc.policy == FencingPolicy::SameEpoch
            && fence.is_some()
            && t.snapshot_at(i).last_fence == *fence =>
        {
            if before(t, i).any(|p| matches!(p.kind, EventKind::BarrierSet { result: Ok(()), .. })) {
                "Same-epoch (≥) admits a token equal to the last fence, so the barrier's owner can write. Strict (>) would refuse it: the barrier would have spent the epoch.".to_owned()
            } else {
                "Same-epoch (≥) admits a token equal to the last fence; strict (>) would refuse it.".to_owned()
            }
        }
        Ok(_) if fencing => "The write carries its token; storage keeps the highest token it has accepted.".to_owned(),
        Ok(_) => "Storage is not checking tokens: it trusts whoever shows up.".to_owned(),
    }
}

/// What a whole run amounts to, in one short line (the comparison panel's caption).
pub fn outcome(t: &Trace) -> String {
    let s = &t.summary;
    let after = |e: &TraceEvent| match &e.kind {
        EventKind::WriteApplied {
            highest_accepted, ..
        } if e.is_out_of_order() => format!(", after {}", token(*highest_accepted)),
        _ => String::new(),
    };
    let late_event = t.events.iter().find(|e| e.is_late_write());
    // Random values: a fenced superseded write that passed a real comparison passed by the draw.
    let luck = |e: &TraceEvent| match &e.kind {
        EventKind::WriteApplied {
            highest_accepted: Some(h),
            ..
        } if t.scenario.token_source == TokenSource::RandomValue
            && t.scenario.policy.checks_fence() =>
        {
            format!(", by luck of the draw ({} > {h})", token(e.fence()))
        }
        _ => String::new(),
    };
    let late = late_event.map(|e| {
        format!(
            "{}'s {} landed from a superseded lease{}{}",
            e.actor.clone().unwrap_or_default(),
            token(e.fence()),
            after(e),
            luck(e)
        )
    });
    // An out-of-order write that is not the late one above gets its own words.
    let order = t
        .events
        .iter()
        .find(|e| e.is_out_of_order() && !late_event.is_some_and(|l| std::ptr::eq(l, *e)))
        .map(|e| {
            format!(
                "{}'s {} landed out of token order{}",
                e.actor.clone().unwrap_or_default(),
                token(e.fence()),
                after(e)
            )
        });
    let mut parts: Vec<String> = Vec::new();
    match (s.duplicate_runs, late) {
        (0, Some(l)) => parts.push(l),
        (0, None) => {}
        (n, l) => {
            let times = if n == 1 {
                "twice".to_owned()
            } else {
                format!("{} times", n + 1)
            };
            let name = if s.harmless_reruns >= n {
                "wasted work, no harm"
            } else {
                twice_name(&t.scenario)
            };
            parts.push(match l {
                Some(l) => format!("{name}: job ran {times} — {l}"),
                None => format!("{name}: job ran {times}"),
            });
        }
    }
    parts.extend(order);
    if s.provider_charges + s.provider_deduped > 0 {
        let charged = match s.provider_charges {
            1 => "once".to_owned(),
            n => format!("{n} times"),
        };
        parts.push(match s.provider_deduped {
            0 => format!("the provider charged {charged}"),
            1 => format!("the provider charged {charged}; 1 call deduped by its idempotency key"),
            n => format!(
                "the provider charged {charged}; {n} calls deduped by their idempotency key"
            ),
        });
    }
    if s.side_effects > 1 {
        parts.push(
            format!("the unfenced call ran {} times", s.side_effects).replace(" 2 times", " twice"),
        );
    }
    let is_dedupe = |w: &&super::ledger::WriteRecord| {
        matches!(w.result, Err(WriteError::DuplicateIntent { .. }))
    };
    let deduped = t.writes.iter().filter(is_dedupe).count();
    let refusals: Vec<_> = t
        .writes
        .iter()
        .filter(|w| !w.accepted() && !is_dedupe(w))
        .collect();
    let refused = refusals.first().map(|w| {
        let code = w.result.as_ref().err().map_or("", |e| e.code());
        let more = match refusals.len() {
            1 => String::new(),
            n => format!(" (+{} more)", n - 1),
        };
        let dedupe = match deduped {
            0 => String::new(),
            1 => "; a retry answered from its idempotency key".to_owned(),
            n => format!("; {n} retries answered from their idempotency keys"),
        };
        if t.scenario.row_lock.is_some() {
            return format!(
                "{}'s UPDATE failed: {code} ({IDLE_IN_TRANSACTION_TIMEOUT}){more}",
                w.request.writer
            );
        }
        format!(
            "{}'s {} refused: {code}{more}{dedupe}; last fence {}",
            w.request.writer,
            token(w.request.fence),
            token(s.last_fence)
        )
    });
    // A refusal is news unless the job ran twice anyway; it comes after a late write that
    // landed (the superseded holder got in, then the real holder was refused).
    if s.duplicate_runs == 0 {
        if let Some(r) = refused {
            let at = usize::from(s.late_writes_accepted > 0).min(parts.len());
            parts.insert(at, r);
        }
    }
    if !parts.is_empty() {
        return parts.join("; ");
    }
    if s.conflict() {
        "two clients believed they held the lease; no superseded write landed".to_owned()
    } else {
        "no conflict: one holder at a time".to_owned()
    }
}

/// Whether a fencing policy's column is a counterfactual here (Redlock mints no token).
pub fn counterfactual(t: &Trace) -> bool {
    t.scenario.token_source == TokenSource::Counterfactual && t.scenario.policy.checks_fence()
}

// ---- A PostgreSQL row lock (`Scenario::row_lock`): the storage arbitrates itself. ----

/// `SELECT … FOR UPDATE` on the scenario's row, as the narration quotes it.
fn for_update(sc: &Scenario) -> String {
    format!(
        "BEGIN; SELECT … FROM accounts WHERE id = '{}' FOR UPDATE",
        sc.resource
    )
}

/// The idle-in-transaction timeout setting, in words.
fn idle_setting(sc: &Scenario) -> String {
    match sc.idle_timeout() {
        Some(ms) => format!("idle_in_transaction_session_timeout = {}", duration(sc, ms)),
        None => "no idle_in_transaction_session_timeout (0: never)".to_owned(),
    }
}

/// What the fencing policy does here: nothing, since no write carries a token.
fn no_token_clause(sc: &Scenario) -> String {
    match sc.policy {
        FencingPolicy::Off => "fencing is off, and nothing here needs it".to_owned(),
        p => format!(
            "fencing is set to {}, but there is no token to compare: the row lock is the check",
            p.short()
        ),
    }
}

/// When the server terminated `owner`'s session, if it did before event `i`.
fn terminated_at(t: &Trace, i: usize, owner: &str) -> Option<Millis> {
    before(t, i).find_map(|p| match &p.kind {
        EventKind::LeaseExpired {
            owner: o,
            cause: ExpiryCause::IdleTimeout,
            ..
        } if o == owner => Some(p.at),
        _ => None,
    })
}

/// How long event `i`'s actor waited in the lock queue before this grant, if it waited, and
/// whose transaction ended to let it in (not necessarily the one it queued behind).
fn waited(t: &Trace, i: usize) -> Option<(Millis, String)> {
    let e = &t.events[i];
    let asked = before(t, i)
        .take_while(|p| !(p.actor == e.actor && matches!(p.kind, EventKind::Acquired { .. })))
        .find(|p| p.actor == e.actor && matches!(p.kind, EventKind::LockWait { .. }))?;
    let ended = before(t, i).find_map(|p| match &p.kind {
        EventKind::Released { .. } => p.actor.clone(),
        EventKind::LeaseExpired { owner, .. } => Some(owner.clone()),
        _ => None,
    })?;
    Some((e.at.saturating_sub(asked.at), ended))
}

/// Whether `name` is frozen in a pause at event `i`.
fn is_paused(t: &Trace, i: usize, name: &str) -> bool {
    before(t, i + 1)
        .filter(|p| p.actor.as_deref() == Some(name))
        .find_map(|p| match p.kind {
            EventKind::PauseStarted { .. } => Some(true),
            EventKind::PauseEnded { .. } => Some(false),
            _ => None,
        })
        .unwrap_or(false)
}

/// The opening line of a row-lock scenario.
fn row_opening(sc: &Scenario) -> String {
    format!(
        "Balance {} on {res}. {} clients lock {res}'s own row in the PostgreSQL that holds the balance ({}), with {}. No lock server, no token: the fencing policy ({}) has nothing to check. Press → to begin.",
        sc.initial_balance,
        sc.actors.len(),
        for_update(sc),
        idle_setting(sc),
        sc.policy.short(),
        res = sc.resource,
    )
}

/// A timeline label of a row-lock scenario, where it differs from [`label`].
fn row_label(e: &TraceEvent) -> Option<String> {
    Some(match &e.kind {
        EventKind::Acquired { .. } => "row locked".to_owned(),
        EventKind::LeaseExpired {
            cause: ExpiryCause::IdleTimeout,
            ..
        } => format!("idle timeout {IDLE_IN_TRANSACTION_TIMEOUT}"),
        EventKind::Released { .. } => "COMMIT".to_owned(),
        EventKind::WriteApplied {
            amount,
            result: Ok(_),
            ..
        } => format!("UPDATE −{amount} ok"),
        EventKind::WriteApplied {
            amount,
            result: Err(e),
            ..
        } => match e {
            WriteError::SessionTerminated => {
                format!("UPDATE −{amount}: {IDLE_IN_TRANSACTION_TIMEOUT}")
            }
            e => format!("UPDATE −{amount}: {}", e.code()),
        },
        _ => return None,
    })
}

/// The narration of event `i` of a row-lock scenario, where it differs from [`sentence`].
fn row_sentence(t: &Trace, i: usize) -> Option<String> {
    let sc = &t.scenario;
    let e = &t.events[i];
    let name = e.actor.clone().unwrap_or_default();
    let res = &sc.resource;
    let at = |t: Millis| instant(sc, t);
    let dur = |ms: Millis| duration(sc, ms);
    let idle_clause = |expires_at: Millis| {
        match sc.idle_timeout() {
        Some(ms) if expires_at != Millis::MAX => format!(
            " If it sends no statement before t={}, {} of idling in its transaction end its session.",
            at(expires_at),
            dur(ms)
        ),
        _ => " No idle timeout is set: only its own COMMIT or ROLLBACK releases the lock.".to_owned(),
    }
    };
    Some(match &e.kind {
        EventKind::Acquired { expires_at, .. } => match waited(t, i) {
            Some((w, holder)) => format!(
                "{name}'s SELECT … FOR UPDATE returns {}: {holder}'s transaction has ended, and {name}'s transaction now holds the row lock on {res}.{}{}",
                match w {
                    0 => "without waiting longer".to_owned(),
                    w => format!("after waiting {}", dur(w)),
                },
                idle_clause(*expires_at),
                if is_paused(t, i, &name) {
                    format!(" {name} is paused: it reads the reply when it wakes, while its idle clock runs.")
                } else {
                    String::new()
                }
            ),
            None => format!(
                "{name} runs {}: the row is free, so {name}'s transaction takes its row lock, in the same database that holds the balance.{}",
                for_update(sc),
                idle_clause(*expires_at)
            ),
        },
        EventKind::LockWait { holder } => format!(
            "{name} runs {}: {holder}'s transaction holds the row lock, so {name}'s statement blocks in the lock queue. No refusal and no retry: it returns when {holder}'s transaction ends.",
            for_update(sc)
        ),
        EventKind::LeaseExpired {
            owner,
            cause: ExpiryCause::IdleTimeout,
            owner_knew,
            ..
        } => {
            let knew = match owner_knew {
                Awareness::Paused => format!(" {owner} is paused and cannot know."),
                Awareness::Unaware => format!(" {owner} has not noticed."),
                Awareness::Knows => String::new(),
            };
            format!(
                "PostgreSQL terminates {owner}'s session: idle in its transaction since t={}, it reached idle_in_transaction_session_timeout ({}), FATAL {IDLE_IN_TRANSACTION_TIMEOUT}. Its transaction is rolled back and its row lock released.{knew}",
                at(e.at.saturating_sub(sc.lease_ttl)),
                dur(sc.lease_ttl)
            )
        }
        EventKind::JobChecked { done: false } => format!(
            "{name} reads the job's status in its transaction: not done (no debit has committed), so it starts {}.",
            sc.job.as_deref().unwrap_or("the job")
        ),
        EventKind::JobChecked { done: true } => format!(
            "{name} reads the job's status in its transaction: done (a debit has committed), so it skips {} and commits.",
            sc.job.as_deref().unwrap_or("the job")
        ),
        EventKind::WriteApplied {
            amount,
            result: Ok(balance),
            ..
        } => format!(
            "{name}'s UPDATE accounts SET balance = balance − {amount} runs in its transaction, which holds the row lock: balance {balance}. No token goes with it: {}.",
            no_token_clause(sc)
        ),
        EventKind::WriteApplied {
            amount,
            result: Err(WriteError::SessionTerminated),
            ..
        } => {
            let when = terminated_at(t, i, &name)
                .map_or_else(String::new, |t| format!(" at t={}", at(t)));
            format!(
                "{name} sends UPDATE accounts SET balance = balance − {amount} on its old connection, but PostgreSQL terminated that session{when}: FATAL {IDLE_IN_TRANSACTION_TIMEOUT}, terminating connection due to idle-in-transaction timeout. The UPDATE never runs, and {name} stops. Balance stays {}.",
                e.snapshot.balance
            )
        }
        EventKind::Released { .. } => {
            let since = before(t, i)
                .take_while(|p| {
                    !(p.actor == e.actor && matches!(p.kind, EventKind::Acquired { .. }))
                })
                .any(|p| {
                    p.actor == e.actor
                        && matches!(p.kind, EventKind::WriteApplied { result: Ok(_), .. })
                });
            if since {
                format!("{name} COMMITs: its debit is durable, and its row lock on {res} is released.")
            } else {
                format!("{name} COMMITs: it wrote nothing, and its row lock on {res} is released.")
            }
        }
        EventKind::PauseEnded { lease_gone: true } => match terminated_at(t, i, &name) {
            Some(x) => format!(
                "{name} wakes up and carries on, unaware that PostgreSQL terminated its session at t={}.",
                at(x)
            ),
            None => return None,
        },
        EventKind::ConnectionLost => {
            let when = terminated_at(t, i, &name)
                .map_or_else(String::new, |t| format!(" at t={}", at(t)));
            format!(
                "{name} sends its next statement on the session PostgreSQL terminated{when}: FATAL {IDLE_IN_TRANSACTION_TIMEOUT}, the connection is gone, and {name} stops."
            )
        }
        _ => return None,
    })
}

/// The "Say:" line at `step` of a row-lock scenario, where it differs from [`say`].
fn row_say(t: &Trace, step: usize) -> Option<String> {
    let sc = &t.scenario;
    let Some(e) = t.event_at(step) else {
        return Some(format!(
            "{} clients, one {} row, and the lock lives in the same database as the balance. Watch what happens to a holder's transaction when it loses the lock.",
            sc.actors.len(),
            sc.resource
        ));
    };
    let i = step - 1;
    let name = e.actor.clone().unwrap_or_default();
    Some(match &e.kind {
        EventKind::Acquired { .. } => match waited(t, i) {
            None => "No lock server: the database that holds the balance arbitrates, and only one transaction at a time can hold this row's lock.".to_owned(),
            Some((w, holder)) => {
                let others: Vec<&str> = e
                    .snapshot
                    .believers
                    .iter()
                    .map(String::as_str)
                    .filter(|b| *b != name)
                    .collect();
                match others.as_slice() {
                    [] if w == 0 => format!(
                        "{holder}'s transaction ended in the same instant {name} asked: no wait this time. A blocking lock costs a waiter only what is left of the holder's transaction."
                    ),
                    [] => format!(
                        "{name} waited {} for the row, holding a connection the whole time: a blocking lock trades a refusal for a wait, and {holder}'s stall became {name}'s.",
                        duration(sc, w)
                    ),
                    [one, ..] => format!(
                        "{one} still believes it holds the lock while {name} holds it: two believers, as with a lease. The difference: {one}'s transaction is gone, so nothing {one} sends can write."
                    ),
                }
            }
        },
        EventKind::LockWait { .. } => "Unlike SET NX, FOR UPDATE does not refuse: the second client waits in PostgreSQL's lock queue, for as long as the holder's transaction lives, unless lock_timeout or statement_timeout is set.".to_owned(),
        EventKind::LeaseExpired {
            owner,
            cause: ExpiryCause::IdleTimeout,
            ..
        } => format!(
            "The idle timeout is a lease too: the server cannot tell a paused or slow client from a dead one. But lock and data live in one system, so ending the lock also ends {owner}'s transaction: nothing it did in it survives."
        ),
        EventKind::WriteApplied { result: Ok(_), .. } => {
            "Lock and write in one transaction: no token is needed while the transaction holds the row, whatever the fencing policy says.".to_owned()
        }
        EventKind::WriteApplied {
            result: Err(WriteError::SessionTerminated),
            ..
        } => format!(
            "Storage will not run {name}'s write because its transaction no longer exists, not because of a token: the same under off, strict and same-epoch."
        ),
        EventKind::Released { .. } => {
            "COMMIT makes the writes durable and releases the row lock in one step: there is no separate release to get wrong.".to_owned()
        }
        EventKind::PauseEnded { lease_gone: false } if e.snapshot.believers.contains(&name) => {
            "Its transaction still holds the row lock, so this pause did no harm.".to_owned()
        }
        EventKind::ConnectionLost => {
            "A terminated session takes its transaction with it: nothing it sends runs.".to_owned()
        }
        _ => return None,
    })
}
