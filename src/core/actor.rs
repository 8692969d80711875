//! An actor's steps: what one client does when its turn comes (acquire, work, check, write,
//! retry, renew, release), and its write arriving at storage. Each step records what
//! happened and queues the actor's next turn.

use super::clock::Millis;
use super::lease::{renewal_interval, Acquire, Fence, Lease};
use super::ledger::WriteError;
use super::ledger::WriteRequest;
use super::locks::RowAnswer;
use super::queue::{Class, Pending};
use super::scenario::{
    client_elapsed, random_token, ReleaseMode, Step, TokenSource, COUNTER_GAP, GET_DEL_GAP,
};
use super::sim::Sim;
use super::trace::{EventKind, Grant, Lane, LockCommand, NoopReason, ProviderOutcome, SkipReason};

/// Runs `actor`'s current step of its script.
pub(super) fn step(sim: &mut Sim<'_>, actor: usize) {
    sim.step(actor);
}

/// Row lock: the holder's transaction ended; the lock goes to the first waiter.
pub(super) fn row_handoff(sim: &mut Sim<'_>) {
    sim.row_handoff();
}

/// `actor`'s client gives up on a lock command it sent at `sent_at` and got no reply to.
pub(super) fn lock_timed_out(
    sim: &mut Sim<'_>,
    actor: usize,
    command: LockCommand,
    sent_at: Millis,
) {
    sim.lock_timed_out(actor, command, sent_at);
}

/// `actor`'s write, sent at `sent_at`, reaches storage. `grant` is the sender's own grant as
/// it sent the write.
pub(super) fn deliver(
    sim: &mut Sim<'_>,
    actor: usize,
    request: WriteRequest,
    sent_at: Millis,
    grant: Option<usize>,
) {
    sim.apply(actor, request, sent_at, grant);
}

impl Sim<'_> {
    /// `Step::WorkRenewing`: the watchdog's next renewal, or the end of the work if that
    /// comes first.
    fn schedule_renewal(&mut self, actor: usize, until: Millis) {
        let now = self.now();
        let due = now.saturating_add(renewal_interval(self.sc.lease_ttl, Some(&mut self.rng)));
        let st = &mut self.actors[actor];
        if due < until && st.renew_sent.is_none() {
            st.renew_due = Some(due);
            self.schedule_step(actor, due);
        } else {
            st.renew_due = None;
            self.schedule_step(actor, until.max(now));
        }
    }

    /// Stops an actor for good: it no longer believes it holds anything.
    fn cancel(&mut self, actor: usize) {
        let st = &mut self.actors[actor];
        st.believes = false;
        st.done = true;
        st.work_until = None;
        st.renew_due = None;
    }

    /// When the actor's own lease ended, if the trace has recorded that.
    fn lease_ended_at(&self, actor: usize) -> Option<Millis> {
        let fence = self.actors[actor].fence?;
        self.events.iter().find_map(|e| match &e.kind {
            EventKind::LeaseExpired { fence: f, .. }
            | EventKind::DeletedOthersLease { fence: f, .. }
                if *f == fence =>
            {
                Some(e.at)
            }
            EventKind::Failover { lost, .. } if lost.iter().any(|l| l.fence == fence) => Some(e.at),
            _ => None,
        })
    }

    /// Extends `actor`'s lease by the TTL (ownership checked atomically by the lock) and
    /// queues the new expiry; `None` when the actor no longer holds it.
    fn renew(&mut self, actor: usize, now: Millis) -> Option<(Fence, Millis)> {
        let sc = self.sc;
        let reach = self.reach(actor);
        let expires_at = self
            .lock
            .extend(
                now,
                &sc.resource,
                &sc.actors[actor].name,
                sc.lease_ttl,
                &reach,
            )
            .ok()?;
        let fence = self.actors[actor].fence.unwrap_or(Fence(0));
        self.actors[actor].lease_from = Some(now);
        self.push(expires_at, Class::Expiry, Pending::Expiry { fence });
        Some((fence, expires_at))
    }

    /// Row lock: `actor`'s transaction now holds the row lock (its `SELECT … FOR UPDATE`
    /// returned). Its idle clock starts now.
    fn row_granted(&mut self, actor: usize, lease: Lease) {
        let name = self.name(actor).to_owned();
        let st = &mut self.actors[actor];
        st.fence = Some(lease.fence);
        st.believes = true;
        st.lease_from = Some(self.clock.now());
        self.grants.push(Grant {
            owner: name,
            fence: lease.fence,
        });
        if lease.expires_at != Millis::MAX {
            let fence = lease.fence;
            self.push(lease.expires_at, Class::Expiry, Pending::Expiry { fence });
        }
        let kind = EventKind::Acquired {
            fence: lease.fence,
            expires_at: lease.expires_at,
            nodes: Vec::new(),
            token_later: false,
        };
        self.say(actor, kind);
    }

    /// Row lock: the holder's transaction has ended; the first waiter's statement returns
    /// with the lock and it carries on with the step after its acquire.
    fn row_handoff(&mut self) {
        let now = self.now();
        let Some(lease) = self.lock.row().and_then(|r| r.grant_next(now)) else {
            return;
        };
        let Some(actor) = self.sc.actor_index(&lease.owner) else {
            return;
        };
        self.row_granted(actor, lease);
        self.advance(actor, Some(now));
    }

    /// Row lock: a statement of `actor`'s transaction finished, so its idle clock restarts.
    fn row_touch(&mut self, actor: usize) {
        let now = self.now();
        let name = self.name(actor).to_owned();
        if let Some(l) = self.lock.row().and_then(|r| r.touch(now, &name)) {
            if l.expires_at != Millis::MAX {
                let fence = l.fence;
                self.push(l.expires_at, Class::Expiry, Pending::Expiry { fence });
            }
        }
    }

    /// Row lock: `actor` sends a statement on a session the server has terminated. It gets
    /// the FATAL and its connection is gone: it stops.
    fn connection_lost(&mut self, actor: usize) {
        self.cancel(actor);
        self.say(actor, EventKind::ConnectionLost);
    }

    /// A statement step under a row lock (acquire, status read, commit); `true` when it
    /// was handled here.
    fn row_step(&mut self, actor: usize, step: &Step) -> bool {
        if !matches!(step, Step::Acquire { .. } | Step::CheckDone | Step::Release) {
            return false;
        }
        if self.actors[actor].session_gone {
            self.connection_lost(actor);
            return true;
        }
        let now = self.now();
        let name = self.name(actor).to_owned();
        match step {
            Step::Acquire { .. } => {
                let answer = self.lock.row().map(|r| r.lock(now, &name));
                match answer {
                    Some(RowAnswer::Locked(lease)) => {
                        self.row_granted(actor, lease);
                        false // on to the next step as usual
                    }
                    Some(RowAnswer::Waits { holder }) => {
                        self.say(actor, EventKind::LockWait { holder });
                        true // blocked: `row_handoff` resumes it
                    }
                    None => false,
                }
            }
            Step::CheckDone => {
                self.row_touch(actor);
                false // the read itself is the usual one
            }
            _ => {
                // COMMIT: the transaction's writes are durable and its row lock is released.
                let fence = self.actors[actor].fence.unwrap_or(Fence(0));
                self.actors[actor].believes = false;
                if let Some(r) = self.lock.row() {
                    r.end();
                }
                let via = ReleaseMode::CompareAndDelete;
                self.say(actor, EventKind::Released { fence, via });
                self.row_handoff();
                self.advance(actor, Some(now));
                true
            }
        }
    }

    /// A lock command sent during a partition: dropped, so no reply comes. The client's
    /// timeout (if it has one) gives up on it later.
    fn unanswered(&mut self, actor: usize, command: LockCommand) {
        let now = self.now();
        let timeout_at = self.sc.actors[actor]
            .lock_timeout
            .map(|t| self.after_pauses(actor, now.saturating_add(t)));
        self.say(
            actor,
            EventKind::LockUnanswered {
                command,
                timeout_at,
            },
        );
        if let Some(at) = timeout_at {
            let p = Pending::LockTimeout {
                actor,
                command,
                sent_at: now,
            };
            self.push(at, Class::Step, p);
        }
    }

    /// The client's timeout on an unanswered lock command: it treats the command as failed.
    /// A renewal or extend that failed, or an is_held check without an answer, stops the job
    /// (if it is still running); an acquire is tried again; a release is given up on.
    fn lock_timed_out(&mut self, actor: usize, command: LockCommand, sent_at: Millis) {
        let now = self.now();
        let st = &self.actors[actor];
        let wrote_at = st.wrote_at;
        let running = !st.done;
        let lease_ended_at = self.lease_ended_at(actor);
        let cancelled = match command {
            LockCommand::Renew | LockCommand::Extend | LockCommand::CheckHeld => running,
            LockCommand::Acquire | LockCommand::Release => false,
        };
        if command == LockCommand::Renew {
            self.actors[actor].renew_sent = None;
        }
        if cancelled {
            self.cancel(actor);
        }
        if command == LockCommand::Release {
            self.actors[actor].believes = false;
        }
        let kind = EventKind::LockTimedOut {
            command,
            sent_at,
            cancelled,
            wrote_at,
            lease_ended_at,
        };
        self.say(actor, kind);
        if !running {
            return;
        }
        let script = &self.sc.actors[actor].script;
        match command {
            LockCommand::Acquire => {
                let retry = match script.get(self.actors[actor].pc) {
                    Some(Step::Acquire { retry_every }) => *retry_every,
                    _ => 0,
                };
                self.schedule_step(actor, now.saturating_add(retry));
            }
            LockCommand::Release => {
                self.actors[actor].del_pending = false;
                self.advance(actor, Some(now));
            }
            LockCommand::Renew | LockCommand::Extend | LockCommand::CheckHeld => {}
        }
    }

    fn step(&mut self, actor: usize) {
        let sc = self.sc;
        let a = &sc.actors[actor];
        if self.actors[actor].done {
            return; // stopped while this step was queued (a watchdog's timeout cancelled it)
        }
        let Some(step) = a.script.get(self.actors[actor].pc).cloned() else {
            self.actors[actor].done = true;
            return;
        };
        if sc.row_lock.is_some() {
            // A stopped client (its connection gone) sends nothing more.
            if self.actors[actor].done {
                return;
            }
            if self.row_step(actor, &step) {
                return;
            }
        }
        if self.cut_off(actor) {
            if let Some(command) = LockCommand::sent_by(&step) {
                self.unanswered(actor, command);
                return;
            }
        }
        let now = self.now();
        let name = a.name.clone();
        let res = &sc.resource;
        let mut next = Some(now);
        match step {
            Step::Acquire { .. } if self.actors[actor].token_pending => {
                // The INCR on the separate counter: a token for whoever asks, held or not.
                let fence = Fence(self.counter);
                self.counter += 1;
                let st = &mut self.actors[actor];
                st.token_pending = false;
                st.fence = Some(fence);
                self.say(actor, EventKind::TokenTaken { fence });
            }
            Step::Acquire { .. } if sc.row_lock.is_some() => {} // granted in `row_step`
            Step::Acquire { retry_every } => {
                // The random SET value of this client's next grant, if that is the token.
                let value = (sc.token_source == TokenSource::RandomValue).then(|| {
                    let nth = self.grants.iter().filter(|g| g.owner == name).count();
                    Fence(random_token(sc.seed, actor, nth))
                });
                match self
                    .lock
                    .acquire(now, res, &name, sc.lease_ttl, &self.reach(actor), value)
                {
                    (Acquire::Acquired { fence, expires_at }, nodes) => {
                        let st = &mut self.actors[actor];
                        st.fence = Some(fence);
                        st.believes = true;
                        st.lease_from = Some(now);
                        self.grants.push(Grant {
                            owner: name.clone(),
                            fence,
                        });
                        self.push(expires_at, Class::Expiry, Pending::Expiry { fence });
                        let token_later = sc.token_source == TokenSource::SeparateCounter;
                        let kind = EventKind::Acquired {
                            fence,
                            expires_at,
                            nodes,
                            token_later,
                        };
                        self.say(actor, kind);
                        if token_later {
                            // The lease is granted; its token is a second command away.
                            let st = &mut self.actors[actor];
                            st.fence = None;
                            st.token_pending = true;
                            self.schedule_step(actor, now.saturating_add(COUNTER_GAP));
                            return;
                        }
                    }
                    (Acquire::Held { holder, expires_at }, nodes) => {
                        let kind = EventKind::AcquireRefused {
                            holder,
                            until: expires_at,
                            retry_in: retry_every,
                            nodes,
                        };
                        self.say(actor, kind);
                        self.schedule_step(actor, now.saturating_add(retry_every));
                        return; // same step again later
                    }
                }
            }
            Step::Work { ms } => next = Some(now.saturating_add(ms)),
            Step::CheckHeld => {
                let held = self.lock.is_held(now, res, &name);
                self.say(actor, EventKind::Checked { held });
                if !held {
                    self.cancel(actor);
                    self.say(actor, EventKind::GaveUp);
                    return;
                }
            }
            Step::CheckDeadline => {
                let since = now.saturating_sub(self.actors[actor].lease_from.unwrap_or(now));
                let local = client_elapsed(since, sc.client_drift);
                let deadline = sc.lease_ttl.saturating_sub(sc.deadline_margin);
                let ok = local < deadline;
                self.say(
                    actor,
                    EventKind::DeadlineChecked {
                        local,
                        deadline,
                        ok,
                    },
                );
                if !ok {
                    self.cancel(actor);
                    self.say(actor, EventKind::GaveUp);
                    return;
                }
            }
            Step::CheckDone => {
                let done = self.ledger.any_accepted(res);
                self.say(actor, EventKind::JobChecked { done });
                if done {
                    // Skip the job: go straight to the next release (or stop).
                    let from = self.actors[actor].pc;
                    match a.script[from..].iter().position(|s| *s == Step::Release) {
                        Some(i) => self.actors[actor].pc = from + i,
                        None => {
                            self.cancel(actor);
                            return;
                        }
                    }
                    self.schedule_step(actor, now);
                    return;
                }
            }
            Step::Debit {
                amount,
                idempotency_key,
            } => next = self.write_step(actor, amount, idempotency_key, None),
            Step::Publish { result } | Step::Claim { what: result } => {
                next = self.write_step(actor, 0, None, Some(result))
            }
            Step::ProviderCall {
                what,
                idempotency_key,
            } => {
                // Only after an accepted claim: the actor's last claim row decides.
                let claimed = self
                    .ledger
                    .log()
                    .iter()
                    .rev()
                    .find(|w| w.request.writer == name && w.request.publish.is_some())
                    .is_some_and(|w| w.accepted());
                let lease_live = self.lock.is_held(now, res, &name);
                let outcome = if !claimed {
                    ProviderOutcome::NotCalled
                } else if self.provider_keys.contains(&idempotency_key) {
                    ProviderOutcome::Deduped
                } else {
                    self.provider_keys.push(idempotency_key.clone());
                    ProviderOutcome::Charged
                };
                let kind = EventKind::ProviderCall {
                    what,
                    idempotency_key,
                    outcome,
                    lease_live,
                };
                self.say(actor, kind);
                if outcome == ProviderOutcome::NotCalled {
                    self.cancel(actor);
                    self.say(actor, EventKind::GaveUp);
                    return;
                }
            }
            Step::Retry => match self.actors[actor].last_write.clone() {
                None => {
                    let reason = SkipReason::NothingToRetry;
                    self.say(actor, EventKind::WriteSkipped { reason });
                }
                Some(request) => {
                    let kind = EventKind::Retried {
                        fence: request.fence,
                        amount: request.amount,
                        idempotency_key: request.idempotency_key.clone(),
                    };
                    self.say(actor, kind);
                    next = self.send(actor, request);
                }
            },
            Step::Extend => match self.renew(actor, now) {
                Some((fence, expires_at)) => {
                    let kind = EventKind::Extended {
                        fence,
                        expires_at,
                        watchdog: None,
                    };
                    self.say(actor, kind);
                }
                None => {
                    let lease_ended_at = self.lease_ended_at(actor);
                    self.cancel(actor);
                    let kind = EventKind::ExtendFailed {
                        watchdog: false,
                        lease_ended_at,
                    };
                    self.say(actor, kind);
                    return;
                }
            },
            Step::WorkRenewing { ms } => {
                let st = &self.actors[actor];
                let Some(until) = st.work_until else {
                    let until = now.saturating_add(ms);
                    self.actors[actor].work_until = Some(until);
                    self.schedule_renewal(actor, until);
                    return;
                };
                let mut renew = st.renew_due.is_some_and(|d| d <= now);
                if renew && until <= now {
                    // Woken with the work done and a renewal overdue: the worker thread and
                    // the watchdog race, and either may run first.
                    let worker_first = self.rng.next_u64() % 2 == 0;
                    self.say(actor, EventKind::ResumeRace { worker_first });
                    renew = !worker_first;
                }
                if renew && self.cut_off(actor) {
                    // The watchdog's renewal is dropped; the worker carries on beside it.
                    let st = &mut self.actors[actor];
                    st.renew_due = None;
                    st.renew_sent = Some(now);
                    self.unanswered(actor, LockCommand::Renew);
                    self.schedule_step(actor, until.max(now));
                    return;
                }
                if renew {
                    match self.renew(actor, now) {
                        Some((fence, expires_at)) => {
                            self.schedule_renewal(actor, until);
                            let next_at = self.actors[actor].renew_due;
                            let kind = EventKind::Extended {
                                fence,
                                expires_at,
                                watchdog: Some(next_at),
                            };
                            self.say(actor, kind);
                        }
                        None => {
                            let lease_ended_at = self.lease_ended_at(actor);
                            self.cancel(actor);
                            let kind = EventKind::ExtendFailed {
                                watchdog: true,
                                lease_ended_at,
                            };
                            self.say(actor, kind);
                        }
                    }
                    return;
                }
                let st = &mut self.actors[actor];
                st.work_until = None;
                st.renew_due = None;
            }
            Step::Barrier if sc.skip_barrier => {}
            Step::Barrier => match self.actors[actor].fence {
                None => {
                    let reason = SkipReason::NoToken;
                    self.say(actor, EventKind::WriteSkipped { reason });
                }
                Some(fence) => {
                    let result = self.ledger.barrier(res, fence);
                    let refused = result.is_err();
                    self.emit(
                        Some(actor),
                        Lane::Storage,
                        EventKind::BarrierSet { fence, result },
                    );
                    if refused {
                        self.cancel(actor);
                        self.say(actor, EventKind::GaveUp);
                        return;
                    }
                }
            },
            Step::SideEffect { what } => {
                let lease_live = self.lock.is_held(now, res, &name);
                self.say(actor, EventKind::SideEffect { what, lease_live });
            }
            Step::Release => match sc.release {
                ReleaseMode::CompareAndDelete => self.release_cad(actor),
                ReleaseMode::GetThenDel if !self.actors[actor].del_pending => {
                    if self.get_before_del(actor) {
                        self.schedule_step(actor, now.saturating_add(GET_DEL_GAP));
                        return; // the DEL is the second half of this step
                    }
                }
                ReleaseMode::GetThenDel => self.unconditional_del(actor, ReleaseMode::GetThenDel),
                ReleaseMode::Del => self.unconditional_del(actor, ReleaseMode::Del),
            },
        }
        self.advance(actor, next);
    }

    /// The actor's step is over: on to its next one at `at` (`None`: something else, a reply
    /// or a timeout, will resume it), or done after its last.
    fn advance(&mut self, actor: usize, at: Option<Millis>) {
        let st = &mut self.actors[actor];
        st.pc += 1;
        if st.pc >= self.sc.actors[actor].script.len() {
            st.done = true;
        } else if let Some(t) = at {
            self.schedule_step(actor, t);
        }
    }

    /// A debit or a publish under the actor's token (skipped without one). Returns when the
    /// actor carries on, as [`Sim::send`] does.
    fn write_step(
        &mut self,
        actor: usize,
        amount: i64,
        idempotency_key: Option<String>,
        publish: Option<String>,
    ) -> Option<Millis> {
        let Some(fence) = self.actors[actor].fence else {
            let reason = SkipReason::NoToken;
            self.say(actor, EventKind::WriteSkipped { reason });
            return Some(self.now());
        };
        // Under a row lock the UPDATE runs in the lock holder's transaction: no token.
        let fence = self.sc.row_lock.is_none().then_some(fence);
        let request = WriteRequest {
            resource: self.sc.resource.clone(),
            writer: self.name(actor).to_owned(),
            fence,
            amount,
            idempotency_key,
            publish,
        };
        self.send(actor, request)
    }

    /// Sends a debit to storage: applied at once, or delivered after the actor's network
    /// delay. Returns when the actor carries on: when the reply is back, or `None` when its
    /// request timeout will fire first (the timeout resumes it).
    fn send(&mut self, actor: usize, request: WriteRequest) -> Option<Millis> {
        let now = self.now();
        self.actors[actor].last_write = Some(request.clone());
        self.actors[actor].wrote_at = Some(now);
        let delay = self.sc.actors[actor].network_delay;
        let grant = self.own_grant(actor, request.fence);
        if delay == 0 {
            self.apply(actor, request, now, grant);
            return Some(now);
        }
        let arrives_at = now.saturating_add(delay);
        let fence = request.fence;
        let kind = EventKind::WriteSent {
            fence,
            amount: request.amount,
            arrives_at,
        };
        self.say(actor, kind);
        self.push(
            arrives_at,
            Class::Delivery,
            Pending::Delivery {
                actor,
                request,
                sent_at: now,
                grant,
            },
        );
        match self.sc.actors[actor].request_timeout {
            Some(t) if t < delay => {
                let at = self.after_pauses(actor, now.saturating_add(t));
                let timeout = Pending::Timeout {
                    actor,
                    fence,
                    sent_at: now,
                    arrives_at,
                };
                self.push(at, Class::Step, timeout);
                None
            }
            _ => Some(arrives_at),
        }
    }

    /// The Lua compare-and-delete: one atomic "delete if still mine".
    fn release_cad(&mut self, actor: usize) {
        let now = self.now();
        let res = &self.sc.resource;
        let name = self.name(actor).to_owned();
        self.actors[actor].believes = false;
        let via = ReleaseMode::CompareAndDelete;
        let reach = self.reach(actor);
        let (released, deleted) = self.lock.release(now, res, &name, &reach);
        match released {
            Ok(fence) => self.say(actor, EventKind::Released { fence, via }),
            Err(_) => {
                let reason = match (self.lock.holder(now, res), self.actors[actor].fence) {
                    (Some(l), _) => NoopReason::OtherHolder {
                        owner: l.owner,
                        fence: l.fence,
                    },
                    (None, Some(f)) if self.lost.iter().any(|l| l.fence == f) => NoopReason::Lost,
                    (None, Some(_)) => NoopReason::Expired,
                    (None, None) => NoopReason::NeverHeld,
                };
                self.say(
                    actor,
                    EventKind::ReleaseNoop {
                        via,
                        reason,
                        deleted,
                    },
                );
            }
        }
    }

    /// The GET of GET-then-DEL. True when it saw the actor's own value, so a DEL follows.
    fn get_before_del(&mut self, actor: usize) -> bool {
        let now = self.now();
        let name = self.name(actor).to_owned();
        let live = self.lock.holder(now, &self.sc.resource);
        let own = live.as_ref().is_some_and(|l| l.owner == name);
        let kind = EventKind::LockValueRead {
            owner: live.as_ref().map(|l| l.owner.clone()),
            fence: live.as_ref().map(|l| l.fence),
        };
        if own {
            self.actors[actor].del_pending = true;
        } else {
            self.actors[actor].believes = false;
        }
        self.say(actor, kind);
        own
    }

    /// The DEL of GET-then-DEL, or a plain DEL: it deletes whatever the key holds now.
    fn unconditional_del(&mut self, actor: usize, via: ReleaseMode) {
        let now = self.now();
        let res = &self.sc.resource;
        let name = self.name(actor).to_owned();
        let st = &mut self.actors[actor];
        st.del_pending = false;
        st.believes = false;
        let live = self.lock.holder(now, res);
        let reach = self.reach(actor);
        self.lock.delete(now, res, &reach);
        let kind = match live {
            Some(l) if l.owner == name => EventKind::Released {
                fence: l.fence,
                via,
            },
            Some(l) => EventKind::DeletedOthersLease {
                owner: l.owner,
                fence: l.fence,
            },
            None => EventKind::ReleaseNoop {
                via,
                reason: NoopReason::Expired,
                deleted: Vec::new(),
            },
        };
        self.say(actor, kind);
    }

    /// The lease `actor` writes under: its newest grant so far. (Not found by token: a
    /// separate counter's token is not the lease's number, and a rolled-back counter can
    /// hand the same token out twice.)
    fn own_grant(&self, actor: usize, fence: Option<Fence>) -> Option<usize> {
        let name = &self.sc.actors[actor].name;
        fence.and(self.grants.iter().rposition(|g| g.owner == *name))
    }

    /// The write reaches storage. `grant` is the sender's own grant as it sent the write, so
    /// a later grant to the same owner with the same token still supersedes it.
    fn apply(
        &mut self,
        actor: usize,
        request: WriteRequest,
        sent_at: Millis,
        grant: Option<usize>,
    ) {
        let now = self.now();
        let fence = request.fence;
        let amount = request.amount;
        let publish = request.publish.clone();
        let highest_accepted = self.highest_accepted;
        // The sequencer check, if storage makes it: one call to the lock service asking
        // whether the lease this write was sent under is still the live one.
        let live = self.lock.holder(now, &self.sc.resource);
        let own = grant.and_then(|i| self.grants.get(i).map(|g| (i, g)));
        let newest = self.grants.len().checked_sub(1);
        let sequencer = || match (own, &live) {
            (Some((i, g)), Some(l))
                if Some(i) == newest && l.owner == g.owner && l.fence == g.fence =>
            {
                Ok(())
            }
            _ => Err(live.as_ref().map(|l| l.fence)),
        };
        let gone = self.sc.row_lock.is_some() && self.actors[actor].session_gone;
        let result = if gone {
            // Its transaction was rolled back with its session: the UPDATE never runs, and
            // the client, seeing the FATAL, stops.
            self.cancel(actor);
            Err(self
                .ledger
                .refuse(now, request, WriteError::SessionTerminated))
        } else {
            self.ledger.debit_checked(now, request, sequencer)
        };
        if result.is_ok() {
            self.highest_accepted = self.highest_accepted.max(fence);
            if self.sc.row_lock.is_some() {
                self.row_touch(actor);
            }
        }
        let superseded_by = grant
            .and_then(|i| self.grants.get(i + 1..))
            .and_then(|later| later.last())
            .cloned();
        let kind = EventKind::WriteApplied {
            fence,
            amount,
            sent_at,
            result,
            superseded_by,
            highest_accepted,
            publish,
        };
        self.emit(Some(actor), Lane::Storage, kind);
    }
}
