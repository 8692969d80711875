//! The client's own timers (quinn-proto's way: the connection keeps them, its driver asks
//! when to wake it and hands it the time): a lock command that got no reply, a write whose
//! reply did not come within the request timeout. What the client does when one fires is here
//! too.

use super::*;

/// A timer the client set: at `at` it gives up waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timer {
    pub at: Millis,
    pub on: Waiting,
}

/// What a [`Timer`] gives up on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waiting {
    /// A lock command sent at `sent_at` that got no reply (or, after "no leader", no answer
    /// but refusals).
    LockReply {
        command: LockCommand,
        sent_at: Millis,
    },
    /// A write's reply: the request timeout gives up on it while the write, sent at
    /// `sent_at`, is still on its way to storage (it lands at `arrives_at`).
    WriteReply {
        fence: Option<Fence>,
        sent_at: Millis,
        arrives_at: Millis,
    },
}

impl Timer {
    /// When what it waits for was sent.
    pub fn sent_at(&self) -> Millis {
        match self.on {
            Waiting::LockReply { sent_at, .. } | Waiting::WriteReply { sent_at, .. } => sent_at,
        }
    }
}

impl ClientState {
    /// When the client's next timer fires, if it has one: its driver sleeps until then (or
    /// until its next step) and calls [`handle_timeout`].
    pub fn poll_wake(&self) -> Option<Millis> {
        self.timers.iter().map(|t| t.at).min()
    }

    /// Sets a timer.
    fn arm(&mut self, at: Millis, on: Waiting) {
        self.timers.push(Timer { at, on });
    }

    /// Takes the first timer due at `now` (the earliest, then the first set).
    fn due(&mut self, now: Millis) -> Option<Timer> {
        let first = self
            .timers
            .iter()
            .filter(|t| t.at <= now)
            .map(|t| t.at)
            .min()?;
        let i = self.timers.iter().position(|t| t.at == first)?;
        Some(self.timers.remove(i))
    }
}

/// A lock command sent during a partition: dropped, so no reply comes. The client's
/// timeout (if it has one) gives up on it later.
pub(super) fn unanswered<B: Backend>(
    b: &mut B,
    sc: &Scenario,
    me: usize,
    command: LockCommand,
    now: Millis,
) {
    let actor = &sc.actors[me];
    let timeout_at = actor
        .lock_timeout
        .map(|t| after_pauses(actor, now.saturating_add(t)));
    if sc.minority() {
        return no_leader(b, sc, me, command, now, timeout_at);
    }
    let kind = EventKind::LockUnanswered {
        command,
        timeout_at,
    };
    b.say(now, kind);
    if let Some(at) = timeout_at {
        expect_reply(b, command, now, at);
    }
}

/// Sets the client's timer on a lock command that got no reply.
fn expect_reply<B: Backend>(b: &mut B, command: LockCommand, sent_at: Millis, at: Millis) {
    set_timer(b, at, Waiting::LockReply { command, sent_at });
    b.unanswered(command, sent_at, at);
}

/// Sets a timer of the client's, and tells its driver when it fires.
pub(super) fn set_timer<B: Backend>(b: &mut B, at: Millis, on: Waiting) {
    b.state().arm(at, on);
    b.timer_set(at);
}

/// The client's first timer due at `now` fires: it gives up on what it waited for, and
/// says what follows (`None`: no timer was due). `running`: the client has not stopped.
pub fn handle_timeout<B: Backend>(
    b: &mut B,
    sc: &Scenario,
    me: usize,
    now: Millis,
    running: bool,
) -> Option<Next> {
    let timer = b.state().due(now)?;
    Some(match timer.on {
        Waiting::LockReply { command, sent_at } => {
            lock_timed_out(b, sc, me, command, sent_at, now, running)
        }
        Waiting::WriteReply {
            fence,
            sent_at,
            arrives_at,
        } => {
            let kind = EventKind::WriteTimedOut {
                fence,
                sent_at,
                arrives_at,
            };
            b.say(now, kind);
            // It carries on with the step after its write (its place already moved there).
            match running {
                true => Next::Again(now),
                false => Next::Wait,
            }
        }
    })
}

/// A lock command to a member on the minority side: it answers "etcdserver: no leader". A
/// keep-alive is retried until the lease deadline the client last heard (its last answered
/// renewal plus the TTL), when clientv3 closes the keep-alive and `Session.Done()` fires; any
/// other command is given up on at the client's own timeout, as before.
fn no_leader<B: Backend>(
    b: &mut B,
    sc: &Scenario,
    me: usize,
    command: LockCommand,
    now: Millis,
    timeout_at: Option<Millis>,
) {
    let learns_at = match command {
        LockCommand::Renew | LockCommand::Extend => {
            let from = b.state().lease_from.unwrap_or(now);
            let deadline = from.saturating_add(sc.lease_ttl).max(now);
            Some(after_pauses(&sc.actors[me], deadline))
        }
        _ => timeout_at,
    };
    b.say(now, EventKind::LockNoLeader { command, learns_at });
    if let Some(at) = learns_at {
        expect_reply(b, command, now, at);
    }
}

/// The client's timer on an unanswered lock command, sent at `sent_at`, fires at `now`: it
/// treats the command as failed. A renewal or extend that failed, or an is_held check
/// without an answer, stops the job (if it is still `running`); an acquire is tried again; a
/// release is given up on.
fn lock_timed_out<B: Backend>(
    b: &mut B,
    sc: &Scenario,
    me: usize,
    command: LockCommand,
    sent_at: Millis,
    now: Millis,
    running: bool,
) -> Next {
    let lease_ended_at = b.lease_ended_at();
    let st = b.state();
    let wrote_at = st.wrote_at;
    let cancelled = match command {
        LockCommand::Renew | LockCommand::Extend | LockCommand::CheckHeld => running,
        LockCommand::Acquire | LockCommand::Release => false,
    };
    if command == LockCommand::Renew {
        st.renew_sent = None;
    }
    if cancelled {
        st.cancel();
    }
    if command == LockCommand::Release {
        st.believes = false;
    }
    let kind = EventKind::LockTimedOut {
        command,
        sent_at,
        cancelled,
        wrote_at,
        lease_ended_at,
    };
    b.say(now, kind);
    if !running {
        return Next::Wait;
    }
    match command {
        LockCommand::Acquire => {
            let retry = match sc.actors[me].script.get(b.state().pc) {
                Some(Step::Acquire { retry_every }) => *retry_every,
                _ => 0,
            };
            Next::Again(now.saturating_add(retry))
        }
        LockCommand::Release => {
            b.state().del_pending = false;
            Next::At(now)
        }
        LockCommand::Renew | LockCommand::Extend | LockCommand::CheckHeld => Next::Stop,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The client owns its timers: a driver asks when the next fires, and the first due
    /// (the earliest, then the first set) is the one that fires.
    #[test]
    fn the_client_s_timers_say_when_it_wakes() {
        let mut st = ClientState::default();
        assert_eq!(st.poll_wake(), None);
        let lock = |sent_at| Waiting::LockReply {
            command: LockCommand::Renew,
            sent_at,
        };
        st.arm(10, lock(1));
        st.arm(5, lock(2));
        st.arm(5, lock(3));
        assert_eq!(st.poll_wake(), Some(5));
        assert_eq!(st.due(4), None, "nothing due before its time");
        assert_eq!(st.due(5).map(|t| t.sent_at()), Some(2));
        assert_eq!(st.due(7).map(|t| t.sent_at()), Some(3));
        assert_eq!(st.poll_wake(), Some(10));
        assert_eq!(st.due(12).map(|t| t.sent_at()), Some(1));
        assert_eq!(st.poll_wake(), None);
    }
}
