//! The engine's event queue: what is due to happen, and when. Events at the same instant
//! pop in a fixed [`Class`] order and then in the order they were pushed, so one scenario
//! always yields one schedule.

use super::clock::Millis;
use super::fault::Fault;
use super::lease::Fence;
use super::ledger::{SortedMap, WriteRequest};

/// Order of simultaneous events: the world changes (a fault, an expiry) before anyone acts
/// at that instant. A fault that can expire a lease on the spot (a clock step) comes first;
/// an expiry comes before a crash so a lease ending at that instant is recorded (a fault's
/// [`Moment`](super::fault::Moment) says which of the two it is).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Class {
    FaultBeforeExpiry = 0,
    Expiry = 1,
    FaultAfterExpiry = 2,
    PauseEnd = 3,
    PauseStart = 4,
    Delivery = 5,
    Step = 6,
}

/// Something due to happen. Actors are named by their index in the scenario.
#[derive(Debug, Clone)]
pub(super) enum Pending {
    /// A fault of the world's (a clock jump, a failover or restart; a partition is not an
    /// event but a window the client asks about).
    Fault(Fault),
    Expiry {
        fence: Fence,
    },
    PauseStart {
        actor: usize,
        until: Millis,
    },
    PauseEnd {
        actor: usize,
    },
    Delivery {
        actor: usize,
        request: WriteRequest,
        sent_at: Millis,
        /// The sender's own grant (its index among the run's grants) when the write left it.
        grant: Option<usize>,
    },
    Step {
        actor: usize,
    },
    /// One of the client's own timers may be due ([`ClientState::poll_wake`]); one is
    /// queued for each timer it sets.
    ///
    /// [`ClientState::poll_wake`]: super::client::ClientState::poll_wake
    Wake {
        actor: usize,
    },
}

/// Pending events keyed by (time, class, insertion number).
#[derive(Debug, Clone, Default)]
pub(super) struct Queue {
    due: SortedMap<(Millis, Class, u64), Pending>,
    seq: u64,
}

impl Queue {
    /// Queues `p` at `t`, after everything of its class already queued at `t`.
    pub(super) fn push(&mut self, t: Millis, class: Class, p: Pending) {
        self.seq += 1;
        self.due.insert((t, class, self.seq), p);
    }

    /// The earliest pending event and when it is due.
    pub(super) fn pop(&mut self) -> Option<(Millis, Pending)> {
        self.due.pop_first().map(|((t, _, _), p)| (t, p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_by_time_then_class_then_insertion() {
        let mut q = Queue::default();
        q.push(5, Class::Step, Pending::Step { actor: 0 });
        q.push(5, Class::Expiry, Pending::Expiry { fence: Fence(1) });
        q.push(5, Class::Step, Pending::Step { actor: 1 });
        q.push(2, Class::Step, Pending::Step { actor: 2 });
        let jump = Fault::ClockJump { node: 0, by: 3 };
        q.push(5, Class::FaultBeforeExpiry, Pending::Fault(jump));
        let order: Vec<String> = std::iter::from_fn(|| q.pop())
            .map(|(t, p)| format!("{t}:{p:?}"))
            .collect();
        assert_eq!(
            order,
            [
                "2:Step { actor: 2 }",
                "5:Fault(ClockJump { node: 0, by: 3 })",
                "5:Expiry { fence: Fence(1) }",
                "5:Step { actor: 0 }",
                "5:Step { actor: 1 }",
            ]
        );
        assert!(q.pop().is_none());
    }
}
