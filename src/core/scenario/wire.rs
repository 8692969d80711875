//! The JSON layout of a [`Scenario`] (see [`ScenarioWire`]).

use serde::{Deserialize, Serialize};

use super::super::fault::FaultKind;
use super::*;

/// A scenario as JSON spells it (a recording's `scenario`, the replay's input): the
/// layout from before [`LockKind`], kept so that every recording still reads and the JSON
/// stays as it was. Read into a [`Scenario`] only if its lock is one that exists.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename = "Scenario", expecting = "struct Scenario")]
pub struct ScenarioWire {
    /// The deck entry this scenario was built from (`"gc-pause"`, …); empty for a hand-made one.
    #[serde(default)]
    pub(super) id: String,
    pub(super) title: String,
    pub(super) resource: String,
    pub(super) initial_balance: i64,
    pub(super) first_fence: u64,
    pub(super) lease_ttl: Millis,
    pub(super) policy: FencingPolicy,
    pub(super) actors: Vec<Actor>,
    /// The span the timeline shows; nothing is simulated past it.
    pub(super) horizon: Millis,
    /// How `Step::Release` deletes the key.
    #[serde(default)]
    pub(super) release: ReleaseMode,
    /// When the lock server's primary crashes. With [`TokenSource::SameRedis`] the primary
    /// had not replicated the newest lock keys (nor the INCRs of their tokens) and a replica
    /// without them is promoted; with [`TokenSource::LockService`] the new leader has the log.
    pub(super) failover_at: Option<Millis>,
    /// Where tokens come from.
    #[serde(default)]
    pub(super) token_source: TokenSource,
    /// Redlock over several nodes instead of one Redis.
    pub(super) redlock: Option<RedlockWire>,
    /// Forward jumps of the lock node's clock.
    #[serde(default)]
    pub(super) lock_clock_jumps: Vec<ClockJump>,
    /// `Step::Barrier` is skipped: the new holder starts without first establishing its
    /// epoch at the resource (the what-if of the handoff).
    #[serde(default)]
    pub(super) skip_barrier: bool,
    /// Seed of the renewal jitter (and of which resuming thread runs first), so a run
    /// replays exactly.
    #[serde(default)]
    pub(super) seed: u64,
    /// Chubby-style lock-delay (ms): after a lease expires without a release, the lock server
    /// grants the lock to nobody for this long. Redis has no such thing (0).
    #[serde(default)]
    pub(super) lock_delay: Millis,
    /// How storage validates a write's token besides the fencing rule: only against the
    /// highest token it has seen, or also with the lock service (a sequencer check). With
    /// fencing off storage checks nothing, so this changes nothing then.
    #[serde(default)]
    pub(super) check: StorageCheck,
    /// How far the Redis replica that a failover promotes lags behind the primary (ms): it
    /// has every write made at least this long before the failover. `None`: replication was
    /// cut before the run, so it has none of the run's writes.
    pub(super) replication_lag: Option<Millis>,
    /// How slow every client's own clock runs against the lock server's, per mille (200: it
    /// counts 4 ms while 5 pass). Only `Step::CheckDeadline` reads a client's clock.
    #[serde(default)]
    pub(super) client_drift: u64,
    /// How much earlier than the TTL a client stops (`Step::CheckDeadline`): its local
    /// deadline is TTL − margin after its acquire, on its own clock.
    #[serde(default)]
    pub(super) deadline_margin: Millis,
    /// The one job every actor's debits carry out, if they all run the same job (`Step::CheckDone`
    /// reads whether it is done). Two of its debits landing means the job ran twice.
    pub(super) job: Option<String>,
    /// The lock is a PostgreSQL row lock in the storage itself ([`RowLock`]), not a lease.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) row_lock: Option<RowLock>,
    /// One client cut off from the lock service (not from storage) for a while.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) partition: Option<Partition>,
    /// The round trip between every client and the lock service (ms): 0 when they share a
    /// region, a WAN round trip when the lock service is in another. A lock command runs on
    /// the lock service at its step's instant; the client's next step waits this long for
    /// the reply. Storage stays near the clients.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(super) lock_rtt: Millis,
    /// `failover_at` is the lock's Redis killed (kill -9) and restarted, not a replica
    /// promoted: it comes back with only what its last snapshot had (no AOF, or
    /// `appendfsync everysec` after a power loss), so it loses what a cut replica would.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(super) restart: bool,
    /// The [`Partition`] cuts the client's lock-service member off from the other two of a
    /// 3-member Raft cluster: that minority can commit nothing, so the client's commands get
    /// no reply, while the majority elects a leader and goes on. The model is the same
    /// dropped commands; only the words differ.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(super) minority: bool,
    /// Storage's primary dies and its asynchronous standby is promoted
    /// ([`Fault::StorageFailover`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) storage_failover: Option<StorageFailoverWire>,
    /// The lock service queues waiters fairly, as ZooKeeper's lock recipe (an ephemeral
    /// sequential znode per waiter, each watching only the one before it) and etcd's mutex
    /// (waiters ordered by their key's create revision) do: an acquire while the lock is held
    /// joins the queue and waits, without polling, until the lock is handed to it, in
    /// arrival order, when the holder releases or its session (the lease) expires.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(super) queue: bool,
    /// The fleet renewing on one schedule against the lock service ([`Herd`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) herd: Option<Herd>,
    /// The faults of kinds the fields above do not spell (a kind added after them), each
    /// with its time, as [`FaultAt`] writes itself: so a new kind needs no field of its own.
    /// Empty, and then not written, while every fault is one they spell.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) faults: Vec<FaultAt>,
}

/// [`RedlockSetup`] as the JSON spells it: the node whose clock the `lock_clock_jumps` step
/// is here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename = "RedlockSetup", expecting = "struct RedlockSetup")]
pub struct RedlockWire {
    pub(super) nodes: usize,
    #[serde(default)]
    pub(super) reach: Vec<Vec<usize>>,
    #[serde(default)]
    pub(super) jumping_node: usize,
}

/// [`Fault::StorageFailover`] as the JSON spells it: when, and the standby's lag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StorageFailoverWire {
    pub(super) at: Millis,
    pub(super) lag: Millis,
}

/// The faults the old fields name, in time order (a clock jump before a failover, and that
/// before a partition, at one instant). A lag without a failover, `restart` or `minority`
/// without what they qualify, name nothing that happens, and are dropped.
fn faults_of(w: &ScenarioWire) -> Vec<FaultAt> {
    let node = w.redlock.as_ref().map_or(0, |r| r.jumping_node);
    let mut sc = Scenario::default();
    for j in &w.lock_clock_jumps {
        sc.add_fault(j.at, Fault::ClockJump { node, by: j.by });
    }
    if let Some(at) = w.failover_at {
        let lag = w.replication_lag;
        let crash = match w.restart {
            true => Fault::Restart { lag },
            false => Fault::Failover { lag },
        };
        sc.add_fault(at, crash);
    }
    if let Some(p) = w.partition {
        let a = match w.minority {
            true => Node::MemberOf(p.actor),
            false => Node::Client(p.actor),
        };
        let (b, until) = (Node::LockService, p.end);
        sc.add_fault(p.start, Fault::Partition { a, b, until });
    }
    if let Some(StorageFailoverWire { at, lag }) = w.storage_failover {
        sc.add_fault(at, Fault::StorageFailover { lag });
    }
    for f in &w.faults {
        sc.add_fault(f.at, f.fault);
    }
    sc.faults
}

/// Whether the old fields spell faults of `kind`. A kind added after them is not listed here:
/// it goes to the generic `faults` list.
fn spelled(kind: FaultKind) -> bool {
    matches!(
        kind,
        FaultKind::Partition
            | FaultKind::Failover
            | FaultKind::Restart
            | FaultKind::ClockJump
            | FaultKind::StorageFailover
    )
}

/// The faults in `faults` that no old field spells, in their order.
fn unspelled(faults: &[FaultAt], spelled: impl Fn(FaultKind) -> bool) -> Vec<FaultAt> {
    let spelled = |f: &&FaultAt| spelled(f.fault.kind());
    faults.iter().filter(|f| !spelled(f)).copied().collect()
}

/// Why a scenario's JSON names a lock no real system is.
fn impossible(what: &str) -> String {
    format!("no such lock: {what}")
}

impl TryFrom<ScenarioWire> for Scenario {
    type Error = String;

    fn try_from(w: ScenarioWire) -> Result<Self, String> {
        let faults = faults_of(&w);
        let service = ServiceOptions {
            lock_delay: w.lock_delay,
            queue: w.queue,
            herd: w.herd,
        };
        let lock = match (w.row_lock, w.redlock, w.token_source) {
            (Some(_), Some(_), _) => return Err(impossible("a row lock on Redlock nodes")),
            (Some(r), None, _) => LockKind::Row(r),
            (None, Some(r), TokenSource::Counterfactual) => LockKind::Redlock(RedlockSetup {
                nodes: r.nodes,
                reach: r.reach,
            }),
            (None, Some(_), _) => return Err(impossible("Redlock minting tokens")),
            (None, None, TokenSource::LockService) => LockKind::Service(service),
            (None, None, t) => match RedisTokens::of(t) {
                Some(tokens) => LockKind::Redis { tokens },
                None => return Err(impossible("a counterfactual token without Redlock")),
            },
        };
        if !matches!(lock, LockKind::Service(_)) && service != ServiceOptions::default() {
            return Err(impossible(
                "a lock-delay, a fair queue or a renewal herd on a lock that is not a lock service",
            ));
        }
        Ok(Scenario {
            id: w.id,
            title: w.title,
            resource: w.resource,
            initial_balance: w.initial_balance,
            first_fence: w.first_fence,
            lease_ttl: w.lease_ttl,
            policy: w.policy,
            actors: w.actors,
            horizon: w.horizon,
            release: w.release,
            lock,
            faults,
            skip_barrier: w.skip_barrier,
            seed: w.seed,
            check: w.check,
            client_drift: w.client_drift,
            deadline_margin: w.deadline_margin,
            job: w.job,
            lock_rtt: w.lock_rtt,
        })
    }
}

impl From<Scenario> for ScenarioWire {
    fn from(sc: Scenario) -> Self {
        let service = sc.lock.service();
        let jumping_node = sc.jumping_node();
        ScenarioWire {
            faults: unspelled(&sc.faults, spelled),
            token_source: sc.lock.token_source(),
            redlock: sc.lock.redlock().map(|r| RedlockWire {
                nodes: r.nodes,
                reach: r.reach.clone(),
                jumping_node,
            }),
            failover_at: sc.failover_at(),
            lock_clock_jumps: sc
                .clock_jumps()
                .map(|(at, _, by)| ClockJump { at, by })
                .collect(),
            replication_lag: sc.replication_lag(),
            partition: sc.partitioned(),
            restart: sc.restart(),
            minority: sc.minority(),
            storage_failover: (sc.storage_crash()).map(|(at, lag)| StorageFailoverWire { at, lag }),
            row_lock: sc.lock.row(),
            lock_delay: service.lock_delay,
            queue: service.queue,
            herd: service.herd,
            id: sc.id,
            title: sc.title,
            resource: sc.resource,
            initial_balance: sc.initial_balance,
            first_fence: sc.first_fence,
            lease_ttl: sc.lease_ttl,
            policy: sc.policy,
            actors: sc.actors,
            horizon: sc.horizon,
            release: sc.release,
            skip_barrier: sc.skip_barrier,
            seed: sc.seed,
            check: sc.check,
            client_drift: sc.client_drift,
            deadline_margin: sc.deadline_margin,
            job: sc.job,
            lock_rtt: sc.lock_rtt,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from_json(v: serde_json::Value) -> Result<Scenario, String> {
        serde_json::from_value(v).map_err(|e| e.to_string())
    }

    /// The JSON names each lock by the fields it always had, and reads back the same lock.
    #[test]
    fn each_lock_kind_round_trips_through_the_old_fields() {
        let service = LockKind::Service(ServiceOptions {
            lock_delay: 20,
            queue: true,
            herd: Some(Herd {
                holders: 10,
                per_ms: 2,
                renew_before: 3,
            }),
        });
        let redlock = LockKind::Redlock(RedlockSetup {
            nodes: 5,
            reach: vec![vec![0, 1, 2]],
        });
        let tokens = RedisTokens::SeparateCounter;
        for lock in [
            LockKind::Redis { tokens },
            redlock,
            service,
            LockKind::Row(RowLock { idle_timeout: true }),
        ] {
            let sc = Scenario {
                lock: lock.clone(),
                ..Scenario::gc_pause()
            };
            let json = serde_json::to_value(&sc).unwrap();
            assert_eq!(json["token_source"], lock.token_source().code());
            assert_eq!(from_json(json), Ok(sc));
        }
    }

    /// The old fault fields read into one list, in time order, and write back as they were.
    #[test]
    fn the_old_fault_fields_are_one_list() {
        let mut json = serde_json::to_value(Scenario::gc_pause()).unwrap();
        json["token_source"] = serde_json::json!("counterfactual");
        json["redlock"] = serde_json::json!({ "nodes": 3, "reach": [], "jumping_node": 1 });
        json["lock_clock_jumps"] =
            serde_json::json!([{ "at": 30, "by": 5 }, { "at": 10, "by": 2 }]);
        json["failover_at"] = serde_json::json!(20);
        json["replication_lag"] = serde_json::json!(4);
        json["restart"] = serde_json::json!(true);
        json["partition"] = serde_json::json!({ "actor": 1, "start": 10, "end": 40 });
        json["minority"] = serde_json::json!(true);
        let sc = from_json(json.clone()).unwrap();
        let at = |at, fault| FaultAt { at, fault };
        assert_eq!(
            sc.faults,
            [
                at(10, Fault::ClockJump { node: 1, by: 2 }),
                at(
                    10,
                    Fault::Partition {
                        a: Node::MemberOf(1),
                        b: Node::LockService,
                        until: 40,
                    }
                ),
                at(20, Fault::Restart { lag: Some(4) }),
                at(30, Fault::ClockJump { node: 1, by: 5 }),
            ]
        );
        // Written back as they were, the jumps in time order.
        json["lock_clock_jumps"] =
            serde_json::json!([{ "at": 10, "by": 2 }, { "at": 30, "by": 5 }]);
        assert_eq!(serde_json::to_value(&sc).unwrap(), json);
    }

    /// A fault of a kind the old fields do not spell is written to, and read from, the
    /// generic `faults` list, in its place in time; the list is not written while empty.
    #[test]
    fn a_fault_no_old_field_spells_goes_to_the_generic_list() {
        let mut sc = Scenario::gc_pause();
        sc.add_fault(10, Fault::ClockJump { node: 0, by: 2 });
        sc.add_fault(40, Fault::StorageFailover { lag: 5 });
        let json = serde_json::to_value(&sc).unwrap();
        assert!(
            json.get("faults").is_none(),
            "every kind here has its field"
        );
        // As if the storage failover were a kind added after the old fields.
        let newer = unspelled(&sc.faults, |k| k != FaultKind::StorageFailover);
        assert_eq!(newer, [sc.faults[1]]);
        let mut json = serde_json::to_value(ScenarioWire {
            faults: newer,
            storage_failover: None,
            ..ScenarioWire::from(sc.clone())
        })
        .unwrap();
        assert_eq!(
            json["faults"],
            serde_json::json!([{ "at": 40, "fault": { "storage_failover": { "lag": 5 } } }])
        );
        assert_eq!(from_json(json.clone()), Ok(sc.clone()));
        // Read in time order among the faults the old fields spell.
        json["faults"][0]["at"] = serde_json::json!(5);
        let read = from_json(json).unwrap();
        assert_eq!(read.faults[0].fault, Fault::StorageFailover { lag: 5 });
    }

    /// A lock no real system is (a Redis with a lock-delay, Redlock minting tokens, a row
    /// lock on Redlock nodes) is refused on reading, not run.
    #[test]
    fn json_for_a_lock_that_does_not_exist_is_refused() {
        let base = serde_json::to_value(Scenario::gc_pause()).unwrap();
        let with = |k: &str, v: serde_json::Value| {
            let mut j = base.clone();
            j[k] = v;
            from_json(j)
        };
        let redlock = serde_json::json!({ "nodes": 3 });
        for (k, v) in [
            ("lock_delay", serde_json::json!(20)),
            ("queue", serde_json::json!(true)),
            (
                "herd",
                serde_json::json!({ "holders": 10, "per_ms": 2, "renew_before": 3 }),
            ),
            ("redlock", redlock.clone()),
            ("token_source", serde_json::json!("counterfactual")),
        ] {
            let err = with(k, v).unwrap_err();
            assert!(err.starts_with("no such lock"), "{k}: {err}");
        }
        let mut row_on_redlock = base.clone();
        row_on_redlock["row_lock"] = serde_json::json!({ "idle_timeout": true });
        row_on_redlock["redlock"] = redlock;
        assert!(from_json(row_on_redlock).is_err());
    }
}
