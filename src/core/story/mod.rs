//! The words: what the page says at each step (the narration sentence and the "Say:" line),
//! the marker labels and the one-line outcome of a run. Everything here is written from the
//! facts in the trace and the scenario, so a sentence can only name what its step recorded.

use super::client::request_half;
use super::clock::Millis;
use super::lease::Fence;
use super::ledger::{FencingPolicy, StorageCheck, WriteError, WriteRecord};
use super::scenario::{
    PauseCause, ReleaseMode, Scenario, TokenSource, IDLE_IN_TRANSACTION_TIMEOUT,
};
use super::trace::{
    fault_event, Awareness, EventKind, ExpiryCause, LockCommand, NoopReason, ProviderOutcome,
    SkipReason, Trace, TraceEvent,
};

/// What "a superseded lease" means wherever the page says it: by grant order, not by token
/// (a superseded write may carry an equal or even a larger token than the live holder's).
pub const SUPERSEDED: &str = "accepted after the lock was granted to someone else";

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
    match sc.lock.token_source() {
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

/// [`token_source`] in a few words, for the opening line.
fn token_source_short(sc: &Scenario) -> &'static str {
    match sc.lock.token_source() {
        TokenSource::SameRedis => "INCR in the acquire script on the same Redis",
        TokenSource::LockService if Voice::of(sc) == Voice::Chubby => {
            "the lock service (a Chubby sequencer)"
        }
        TokenSource::LockService => {
            "the lock service (an etcd revision, a ZooKeeper czxid or sequential-node number)"
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
            PauseCause::Stall => "process frozen".to_owned(),
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
        // Without a run's scenario: a fault's label as a plain run words it.
        fault_event!() => fault::label(&Scenario::default(), e).unwrap_or_default(),
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
        EventKind::LockNoLeader { command, .. } => format!("{}: no leader", command.short()),
        EventKind::LockQueued { command, .. } => format!("{}: queued", command.short()),
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
    if t.scenario.lock.row().is_some() {
        if let Some(l) = row_label(e) {
            return l;
        }
    }
    if t.scenario.lock.queue() && matches!(e.kind, EventKind::LockWait { .. }) {
        return "queued".to_owned();
    }
    if let Some(l) = fault::label(&t.scenario, e) {
        return l;
    }
    if t.scenario.claims() {
        if let EventKind::WriteApplied {
            publish: Some(_), ..
        } = &e.kind
        {
            return label(e).replacen("publish", "claim", 1);
        }
    }
    if t.scenario.lock.token_source() != TokenSource::SeparateCounter {
        return label(e);
    }
    match &e.kind {
        EventKind::LeaseExpired { .. } => "lease expires".to_owned(),
        EventKind::Extended { .. } => "extend".to_owned(),
        EventKind::Released { .. } => "release".to_owned(),
        EventKind::DeletedOthersLease { owner, .. } => format!("DEL {owner}'s lease"),
        EventKind::LockValueRead { owner: Some(o), .. } => format!("GET → {o}"),
        _ => label(e),
    }
}

/// The words on a lease band: its owner and token, or with a separate counter only its owner.
pub fn band_label(sc: &Scenario, owner: &str, fence: Fence) -> String {
    if sc.lock.row().is_some() {
        return format!("{owner} · row lock");
    }
    match sc.lock.token_source() {
        TokenSource::SeparateCounter => format!("{owner} · lease"),
        _ => format!("{owner} · token {fence}"),
    }
}

/// [`band_label`] for a band too short to hold it: the owner and the token ("B·34"), or
/// the owner alone where the band names no token.
pub fn band_label_short(sc: &Scenario, owner: &str, fence: Fence) -> String {
    match (sc.lock.row().is_some(), sc.lock.token_source()) {
        (true, _) | (_, TokenSource::SeparateCounter) => owner.to_owned(),
        _ => format!("{owner}·{fence}"),
    }
}

/// The setup step's narration: the storage, the lock, where tokens come from, what is cut
/// off, in the scenario's own voice.
fn opening(sc: &Scenario) -> String {
    if Voice::of(sc) == Voice::RowLock {
        return row_opening(sc);
    }
    let storage = if sc.claims() {
        format!("{}'s claim row is empty", sc.resource)
    } else if sc.publishes() {
        format!("{}'s result row is empty", sc.resource)
    } else {
        format!("Balance {} on {}", sc.initial_balance, sc.resource)
    };
    let lock = match sc.lock.redlock() {
        Some(r) => format!(
            "{} Redlock lease over {} Redis nodes",
            duration(sc, sc.lease_ttl),
            r.nodes
        ),
        None if sc.lock.lock_delay() > 0 => format!(
            "{} lease lock with a {} lock-delay, as in Chubby (Consul's session lock-delay is 15 s by default; Redis, etcd and ZooKeeper have none)",
            duration(sc, sc.lease_ttl),
            duration(sc, sc.lock.lock_delay())
        ),
        None if sc.client_drift > 0 || sc.deadline_margin > 0 => format!(
            "{} lease lock; client clocks run {} slow (exaggerated for visibility: real clocks drift by tens of ppm), and stop at TTL − {}",
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
        (StorageCheck::ReadThenWrite, true) => " Storage checks each write's token in two statements, in PostgreSQL's default READ COMMITTED: a SELECT of the last fence, then an UPDATE that does not check it again. A SELECT does not see a token whose UPDATE has not committed yet.",
        (StorageCheck::ReadThenWrite, false) => " Fencing is off, so storage checks nothing: it runs the UPDATE without the SELECT of the last fence.",
    };
    let cut = match (
        &sc.partitioned(),
        sc.partitioned().and_then(|p| sc.actors.get(p.actor)),
    ) {
        (Some(p), Some(a)) if sc.minority() => format!(
            " {}'s client talks to member 1 of a 3-member etcd cluster; from t={} to t={} member 1 is cut off from members 2 and 3 (the minority side). {0} still reaches storage.",
            a.name,
            instant(sc, p.start),
            instant(sc, p.end)
        ),
        (Some(p), Some(a)) => format!(
            " {} is cut off from the lock service (not from storage) from t={} to t={}.",
            a.name,
            instant(sc, p.start),
            instant(sc, p.end)
        ),
        _ => String::new(),
    };
    let cut = cut + &far_away(sc);
    format!(
        "{storage}. {} a {lock}; tokens come from {}.{}{check}{cut} Press → or tap Step forward ▶ to begin.",
        match sc.actors.len() {
            1 => "1 client holds".to_owned(),
            n => format!("{n} clients share"),
        },
        token_source_short(sc),
        scale(sc)
    )
}

/// The setup's scale clause, for a lock service whose leases are counted in seconds (etcd,
/// ZooKeeper, Chubby) and for a Redis that fails over or restarts (Sentinel and a restart
/// take seconds; the failover's step says Sentinel's default): the run's milliseconds stand
/// for seconds. Empty for other Redis runs
/// (`PX` is in ms) and for a run already told in seconds.
pub fn scale(sc: &Scenario) -> String {
    if !(Voice::of(sc).is_service() || fault::in_seconds(sc)) || secs(sc) {
        return String::new();
    }
    let ttl = sc.lease_ttl;
    format!(" Times scaled: {ttl} ms here stands for {ttl} s.")
}

/// The opening's sentence for a lock service a round trip away ([`Scenario::lock_rtt`]).
fn far_away(sc: &Scenario) -> String {
    if sc.lock_rtt == 0 {
        return String::new();
    }
    format!(
        " The lock service is in another region: every lock command costs a client a {} round trip, and runs on the lock service when it arrives, {} after it was sent; storage is near the clients.",
        duration(sc, sc.lock_rtt),
        duration(sc, request_half(sc.lock_rtt))
    )
}

/// When a command that ran on a lock service a round trip away (event `i`) was sent, and
/// when its answer reaches its client: a grant or refusal is news only then. A lease the
/// client counts from its send ends for it before it does on the lock service.
fn reply_at(t: &Trace, i: usize) -> String {
    let sc = &t.scenario;
    let e = &t.events[i];
    let Some(sent) = sent_far(t, i) else {
        return String::new();
    };
    let expires_at = match e.kind {
        EventKind::Acquired { expires_at, .. } | EventKind::Extended { expires_at, .. } => {
            Some(expires_at)
        }
        _ => None,
    };
    let who = e.actor.as_deref().unwrap_or_default();
    let half = request_half(sc.lock_rtt);
    let answer = format!(
        " {who} sent the command at t={}; it ran on arrival, and the answer reaches {who} at t={}.",
        instant(sc, sent),
        instant(sc, sent.saturating_add(sc.lock_rtt))
    );
    match expires_at.filter(|&x| x != Millis::MAX) {
        Some(x) => format!(
            "{answer} {who} counts the lease from its send (as Redlock's clients do), so to {who} it ends at t={}, {} before the lock service's t={}.",
            instant(sc, sent.saturating_add(sc.lease_ttl)),
            duration(sc, half),
            instant(sc, x)
        ),
        None => answer,
    }
}

/// When the command whose answer event `i` is was sent, if it ran on a lock service a round
/// trip away: a grant, refusal or extend. A grant handed over in a queue was not sent.
fn sent_far(t: &Trace, i: usize) -> Option<Millis> {
    let (sc, e) = (&t.scenario, &t.events[i]);
    let answer = match e.kind {
        EventKind::Acquired { .. } => !t.events[..i]
            .iter()
            .any(|p| p.actor == e.actor && matches!(p.kind, EventKind::LockWait { .. })),
        EventKind::AcquireRefused { .. } | EventKind::Extended { watchdog: None, .. } => true,
        _ => false,
    };
    (sc.lock_rtt > 0 && answer).then(|| e.at.saturating_sub(request_half(sc.lock_rtt)))
}

/// Whether the step's event is an accepted publish, after an earlier accepted write, of the
/// value the result row already held: the job ran again and changed nothing.
fn rewrote_same(c: &Ctx) -> bool {
    let EventKind::WriteApplied {
        result: Ok(_),
        publish: Some(v),
        ..
    } = &c.e.kind
    else {
        return false;
    };
    let held = c.previous().and_then(|p| p.snapshot.result.as_deref());
    held == Some(v.as_str()) && c.accepted().next().is_some()
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

/// The storage's headline figure once `n` events have happened: the balance, or the result
/// row of a job that publishes ("—" while empty).
fn value_at(t: &Trace, n: usize) -> String {
    let s = t.snapshot_at(n);
    if t.scenario.publishes() {
        s.result.clone().unwrap_or_else(|| "—".to_owned())
    } else {
        s.balance.to_string()
    }
}

/// The storage's headline figure at the end of the run.
pub fn final_value(t: &Trace) -> String {
    value_at(t, t.len())
}

/// What became of the actor's write sent at `sent`, if it reached storage before this
/// step: who had been granted the lock after the writer (the write came from a superseded
/// lease), and whether storage accepted it.
fn write_fate(c: &Ctx, sent: Millis) -> Option<(Option<String>, bool)> {
    c.writes().find_map(|p| match &p.kind {
        EventKind::WriteApplied {
            sent_at,
            result,
            superseded_by,
            ..
        } if p.actor.as_deref() == Some(c.name) && *sent_at == sent => Some((
            superseded_by.as_ref().map(|g| g.owner.clone()),
            result.is_ok(),
        )),
        _ => None,
    })
}

/// Whether `actor` was cut off from the lock service at `at` by the scenario's partition.
fn partitioned(sc: &Scenario, actor: &str, at: Millis) -> bool {
    sc.partitioned()
        .is_some_and(|p| p.contains(at) && sc.actors.get(p.actor).is_some_and(|a| a.name == actor))
}

/// A drift rate in words: 200 per mille is "20%".
pub fn per_mille(d: u64) -> String {
    if d % 10 == 0 {
        format!("{}%", d / 10)
    } else {
        format!("{d}‰")
    }
}

/// Who else believes they hold the lock at event `e`, besides `name`.
fn other_believers<'a>(e: &'a TraceEvent, name: &str) -> Vec<&'a str> {
    e.snapshot
        .believers
        .iter()
        .map(String::as_str)
        .filter(|b| *b != name)
        .collect()
}

mod facts;
mod far;
mod fault;
mod narrate;
mod outcome;
mod row;
mod say;
mod steps;
mod voice;
mod words;

pub use facts::{facts, lease_fields, lease_token, ClientFacts, Facts, LeaseFacts, StepFacts};
#[cfg(target_arch = "wasm32")]
pub use far::provide as provide_far_words;
pub use far::worded;
use narrate::{extended_lease, refusal};
pub use outcome::{counterfactual, outcome};
use row::{
    row_committed, row_connection_lost, row_granted, row_granted_say, row_job_checked, row_label,
    row_opening, row_session_ended, row_update_refused, row_updated, row_waits, row_wakes,
};
pub use say::Line;
use steps::repeated;
pub use steps::{run_label, Steps};
pub use voice::Voice;
use words::Ctx;
pub use words::Story;
