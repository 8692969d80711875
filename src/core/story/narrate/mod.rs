//! The narration sentence for one event: what happened, with the facts its step recorded.
//! One small function per kind of step, in sibling files; [`sentence`] hands each event to
//! the one that words it.

use super::*;

mod fault;
mod grant;
mod lease;
mod process;
mod write;

/// What every phrase of one step reads: the trace, the event and its facts.
#[derive(Clone, Copy)]
pub(super) struct Ctx<'a> {
    t: &'a Trace,
    i: usize,
    sc: &'a Scenario,
    e: &'a TraceEvent,
    name: &'a str,
    res: &'a str,
    fx: &'a StepFacts,
    /// The lock's own wording.
    voice: Voice,
}

/// [`Ctx`]'s fields as the phrases name them: trace, event index, scenario, event, actor,
/// resource, facts.
type Parts<'a> = (
    &'a Trace,
    usize,
    &'a Scenario,
    &'a TraceEvent,
    &'a str,
    &'a str,
    &'a StepFacts,
);

impl<'a> Ctx<'a> {
    /// The fields, for a phrase to bind the ones it uses in one line.
    fn parts(&self) -> Parts<'a> {
        (
            self.t, self.i, self.sc, self.e, self.name, self.res, self.fx,
        )
    }

    /// A time inside the sentence ("30", or "15.0 s").
    fn at(&self, t: Millis) -> String {
        instant(self.sc, t)
    }

    /// A duration ("50 ms", or "15.0 s").
    fn dur(&self, ms: Millis) -> String {
        duration(self.sc, ms)
    }

    /// A lease by both its fields ("value rnd-A, token 33"), where the step names one.
    fn fields(&self, l: &Option<LeaseFacts>) -> String {
        l.as_ref()
            .map_or_else(String::new, |l| lease_fields(self.sc, l))
    }

    /// The lock value of the step's lease ("rnd-A"), or nothing.
    fn value(&self) -> &str {
        self.fx.lease.as_ref().map_or("", |l| l.value.as_str())
    }
}

pub(super) fn sentence(t: &Trace, i: usize) -> String {
    let all = facts(t);
    let e = &t.events[i];
    let c = Ctx {
        t,
        i,
        sc: &t.scenario,
        e,
        name: e.actor.as_deref().unwrap_or_default(),
        res: &t.scenario.resource,
        fx: &all[i + 1],
        voice: Voice::of(&t.scenario),
    };
    grant::grant(&c)
        .or_else(|| lease::expiry(&c))
        .or_else(|| lease::renewal(&c))
        .or_else(|| lease::release(&c))
        .or_else(|| process::process(&c))
        .or_else(|| write::request(&c))
        .or_else(|| write::write_applied(&c))
        .or_else(|| fault::fault(&c))
        .or_else(|| fault::cut_off(&c))
        .unwrap_or_default()
}

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

/// An acquire refused at event `i`, in two parts: what the client tried ("tries to acquire
/// acct:1") and the lock's answer with what stands behind it, so one refusal and a run of
/// identical ones share their words.
pub(super) fn refusal(t: &Trace, i: usize) -> (String, String) {
    let sc = &t.scenario;
    let e = &t.events[i];
    let res = &sc.resource;
    let EventKind::AcquireRefused {
        holder,
        until,
        nodes,
        ..
    } = &e.kind
    else {
        return (format!("tries to acquire {res}"), "lock_held".to_owned());
    };
    let until = instant(sc, *until);
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
    if sc.lock.lock_delay() > 0 && e.snapshot.holder.is_none() {
        return (attempt, format!(
            "refused: nobody holds {res}, but {holder}'s lease lapsed without a release, and the lock-delay keeps {res} from everyone until t={until}"
        ));
    }
    let answer = Voice::of(sc).held_answer();
    (
        attempt,
        format!("{answer} — {holder}'s lease runs until t={until}"),
    )
}

/// The lease an extend at event `i` renewed, after "its lease": " (value rnd-A, token 33)"
/// where the value is compared, " (token 34)" with a lock service.
pub(super) fn extended_lease(t: &Trace, i: usize) -> String {
    let sc = &t.scenario;
    let all = facts(t);
    match (&all[i + 1].lease, t.events[i].fence()) {
        (Some(l), _) if !Voice::of(sc).is_service() => {
            format!(" ({})", lease_fields(sc, l))
        }
        (_, Some(f)) => lease_token(sc, f),
        _ => String::new(),
    }
}
