//! etcd as a lock service: throwaway members on loopback (one, or a cluster whose leader the
//! world kills), its v3 API through the documented JSON gateway (`/v3/...`, etcd 3.4: POSTs
//! by `ureq`, bodies by serde_json, keys and values base64 as the gateway wants them), and
//! the lock on it.

use std::process::{Command, Stdio};
use std::time::Duration;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use serde_json::{json, Value};

use fencing_lab::core::{LockCommand, Millis, Scenario};

use super::super::lock::{
    service_scale, Answer, Backend, Fault, Lock, Run, Service, Stage, Unanswered,
};
use super::super::observed::{failover, observe};
use super::super::servers::{free_port, spawn, version, wait_for, Started};

/// Members of the etcd cluster of a run that fails over or cuts a member off.
const CLUSTER: usize = 3;

/// A client of one etcd member or a cluster: requests go to the first member that answers
/// (a killed member refuses the connection, so the client moves on to the next one).
#[derive(Debug, Clone)]
pub struct Etcd {
    pub ports: Vec<u16>,
    agent: ureq::Agent,
}

/// Errors a member gives while the cluster elects a new leader, or a killed member's: worth
/// retrying (on the next member).
const TRANSIENT: &str =
    "leader|timed out|timeout|unavailable|reset|refused|closed|connection failed";

impl Etcd {
    pub fn new(ports: Vec<u16>) -> Self {
        Self {
            ports,
            agent: agent(),
        }
    }

    pub fn post(&self, path: &str, body: &Value) -> Result<Value, String> {
        let t0 = std::time::Instant::now();
        loop {
            let mut last = String::from("etcd: no members");
            for &port in &self.ports {
                match post_to(&self.agent, port, path, body) {
                    Ok(v) => return Ok(v),
                    Err(e) if TRANSIENT.split('|').any(|t| e.contains(t)) => last = e,
                    Err(e) => return Err(e),
                }
            }
            if t0.elapsed() > Duration::from_secs(5) {
                return Err(last);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// One member's status: (its member id, the leader it knows).
    pub fn status(port: u16) -> Result<(u64, u64), String> {
        let v = post_to(&agent(), port, "/v3/maintenance/status", &json!({}))?;
        let id = |v: &Value| v.as_u64().or_else(|| v.as_str()?.parse().ok());
        Ok((
            id(&v["header"]["member_id"]).ok_or("status: member_id")?,
            id(&v["leader"]).ok_or("status: leader")?,
        ))
    }

    /// The value of `key` and its create revision, if it exists. The lock key's create
    /// revision is its holder's token: a resource that compares it with a write's token checks
    /// that the write's lease is still the live one (a key whose lease expired is gone; a new
    /// holder's key has a newer create revision).
    pub fn get(&self, key: &str) -> Result<Option<(String, u64)>, String> {
        let v = self.post("/v3/kv/range", &json!({ "key": b64(key) }))?;
        Ok(v["kvs"].get(0).map(|kv| {
            let value = kv["value"].as_str().map(unb64).unwrap_or_default();
            (value, num(&kv["create_revision"]).unwrap_or(0) as u64)
        }))
    }

    /// Fair queue (etcd's mutex): the key under `key/` with the lowest create revision, or
    /// the highest below `below` (the one just before it); and the revision read at.
    fn queued(&self, key: &str, below: Option<u64>) -> Result<(Option<Queued>, u64), String> {
        let (order, max) = below.map_or(("ASCEND", 0), |r| ("DESCEND", r - 1));
        let v = self.post("/v3/kv/range", &json!({ "key": b64(&format!("{key}/")), "range_end": b64(&format!("{key}0")),
            "limit": "1", "sort_target": "CREATE", "sort_order": order, "max_create_revision": max.to_string() }))?;
        let kv = &v["kvs"][0];
        let text = |f: &str| kv[f].as_str().map(unb64).unwrap_or_default();
        let created = num(&kv["create_revision"]).map(|r| (text("key"), text("value"), r as u64));
        Ok((created, num(&v["header"]["revision"]).unwrap_or(0) as u64))
    }

    /// Blocks on etcd's watch of `key` from revision `from` until the key is deleted (the
    /// gateway streams the watch's answers, one JSON object after another).
    fn deleted(&self, key: &str, from: u64) -> Result<(), String> {
        let url = format!("http://127.0.0.1:{}/v3/watch", self.ports[0]);
        let failed = |e: &dyn std::fmt::Display| format!("etcd watch {key}: {e}");
        let body =
            json!({ "create_request": { "key": b64(key), "start_revision": from.to_string() } });
        let reply = agent_for(Duration::from_secs(30))
            .post(url)
            .send_json(&body);
        let body = reply.map_err(|e| failed(&e))?.into_body().into_reader();
        for v in serde_json::Deserializer::from_reader(body).into_iter::<Value>() {
            let events = v.map_err(|e| failed(&e))?["result"]["events"].take();
            if (events.as_array().into_iter().flatten()).any(|e| e["type"] == "DELETE") {
                return Ok(());
            }
        }
        Err(failed(&"the stream ended"))
    }
}

/// A key in the queue: its name, value and create revision.
type Queued = (String, String, u64);

/// An HTTP client that answers any status with its body (the gateway's errors are JSON too).
fn agent() -> ureq::Agent {
    agent_for(Duration::from_secs(3))
}

/// The same, giving up on a request after `timeout`.
fn agent_for(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .build()
        .into()
}

/// One POST to one member.
fn post_to(agent: &ureq::Agent, port: u16, path: &str, body: &Value) -> Result<Value, String> {
    let mut reply = agent
        .post(format!("http://127.0.0.1:{port}{path}"))
        .send_json(body)
        .map_err(|e| format!("etcd :{port}{path}: {e}"))?;
    let status = reply.status();
    let v: Value = reply
        .body_mut()
        .read_json()
        .map_err(|e| format!("etcd {path}: {status}: {e}"))?;
    if !status.is_success() {
        return Err(format!("etcd {path}: {status}: {v}"));
    }
    Ok(v)
}

/// int64 fields come back as JSON strings.
fn num(v: &Value) -> Option<i64> {
    v.as_i64().or_else(|| v.as_str()?.parse().ok())
}

fn b64(s: &str) -> String {
    B64.encode(s)
}

fn unb64(s: &str) -> String {
    String::from_utf8_lossy(&B64.decode(s).unwrap_or_default()).into_owned()
}

/// A client's lock on etcd: a lease of the scenario's TTL (whole seconds: etcd counts no
/// finer) and the key created under it: the lock key itself, or in a fair queue (etcd's
/// mutex recipe) a key of the client's own under `<lock key>/`, named by its lease, where the
/// lowest create revision holds the lock.
pub struct EtcdLock {
    pub etcd: Etcd,
    pub ttl_s: u64,
    /// The lease of the lock this client holds.
    pub lease: Option<i64>,
    /// The queue's recipe; this client's key in it and its create revision, until released.
    queue: bool,
    mine: Option<(String, u64)>,
    /// Talks only to the member the world stops: a command that gets no answer is sent.
    pinned: bool,
}

impl EtcdLock {
    /// A lease that already expired is "not found": that is fine for a release.
    fn revoke(&mut self) -> Result<(), String> {
        let Some(id) = self.lease.take() else {
            return Ok(());
        };
        match self
            .etcd
            .post("/v3/lease/revoke", &json!({ "ID": id.to_string() }))
        {
            Err(e) if !e.contains("not found") => Err(e),
            _ => Ok(()),
        }
    }

    /// One keepalive of the lease (the gateway's stream, one request long): the TTL it has
    /// again, 0 if it is gone.
    fn keepalive(&self) -> Result<i64, String> {
        let Some(id) = self.lease else { return Ok(0) };
        let v = (self.etcd).post("/v3/lease/keepalive", &json!({ "ID": id.to_string() }))?;
        Ok(num(&v["result"]["TTL"]).unwrap_or(0))
    }

    /// Who holds the lock: its value and create revision.
    fn holder(&self, key: &str) -> Result<Option<(String, u64)>, String> {
        if !self.queue {
            return self.etcd.get(key);
        }
        Ok(self.etcd.queued(key, None)?.0.map(|(_, v, rev)| (v, rev)))
    }
}

impl Lock for EtcdLock {
    /// A lease of the TTL, and the key created under it only if it does not exist: the
    /// revision of that put is the fencing token. In the queue the client's own key always
    /// is created, and holds the lock if it is the lowest (else it waits: [`Lock::wait_turn`]).
    fn acquire(&mut self, key: &str, value: &str, _px: u64) -> Result<Answer, String> {
        let lease = self
            .etcd
            .post("/v3/lease/grant", &json!({ "TTL": self.ttl_s }))?;
        let id = num(&lease["ID"]).ok_or_else(|| format!("lease grant: {lease}"))?;
        self.lease = Some(id);
        let own = self.queue.then(|| format!("/{id:x}"));
        let mine = format!("{key}{}", own.unwrap_or_default());
        let (k, id) = (b64(&mine), id.to_string());
        let v = self.etcd.post("/v3/kv/txn", &json!({
            "compare": [{ "key": k, "result": "EQUAL", "target": "CREATE", "create_revision": "0" }],
            "success": [{ "request_put": { "key": k, "value": b64(value), "lease": id } }],
        }))?;
        let token = num(&v["header"]["revision"]).map(|r| r as u64);
        let created = v["succeeded"].as_bool() == Some(true);
        if !created {
            self.revoke()?;
        }
        if self.queue {
            self.mine = Some((mine.clone(), token.unwrap_or(0)));
        }
        let granted = created && (!self.queue || self.holder(key)?.map(|h| h.1) == token);
        let token = token.filter(|_| created);
        let how = match (granted, self.queue) {
            (false, true) => format!("etcd created {mine} at revision {token:?}, not the lowest under {key}/: it waits for the key before it"),
            _ => format!("etcd created {mine} at revision {token:?}, its token"),
        };
        Ok(Answer::of_service(granted, token.filter(|_| granted), how))
    }

    /// etcd's mutex: watches only the key just before this client's (the highest lower
    /// create revision) until it is deleted, until none is left. A waiting etcd session
    /// keeps its lease alive; here it is renewed once, at the grant, so it runs from there.
    fn wait_turn(&mut self, key: &str) -> Result<Answer, String> {
        let (mine, rev) = self.mine.clone().ok_or("etcd: no queued key to wait on")?;
        let mut waited = Vec::new();
        while let (Some((before, ..)), seen) = self.etcd.queued(key, Some(rev))? {
            self.etcd.deleted(&before, seen + 1)?;
            waited.push(before);
        }
        if self.keepalive()? <= 0 {
            return Err(format!("etcd: {mine}'s lease ran out while it waited"));
        }
        let waited = waited.join(", then ");
        let how = format!("etcd's watch saw {waited} deleted: {mine} (create revision {rev}) is the lowest, its create revision the token");
        Ok(Answer::of_service(true, Some(rev), how))
    }

    fn value(&mut self, key: &str) -> Result<Option<String>, String> {
        Ok(self.holder(key)?.map(|(v, _)| v))
    }

    /// The lock key's create revision: a lapsed lease's key is gone, a new holder's key has
    /// a newer one.
    fn live_token(&mut self, key: &str) -> Result<Option<u64>, String> {
        Ok(self.holder(key)?.map(|(_, revision)| revision))
    }

    /// etcd renews a lease, not a key: a keepalive (to the lease's granted TTL), then the
    /// ownership check. False if the lease is gone or the lock is another's.
    fn extend(&mut self, key: &str, value: &str, _px: u64) -> Result<bool, String> {
        Ok(self.keepalive()? > 0 && self.holds(key, value)?)
    }

    /// A renewal sent to the stopped member: its keepalive, waiting `wait` for an answer.
    fn unanswered(&mut self, command: LockCommand, wait: Duration) -> Option<Unanswered> {
        let renews = matches!(command, LockCommand::Renew | LockCommand::Extend);
        let lease = self.lease.filter(|_| self.pinned && renews)?;
        let port = self.etcd.ports[0];
        Some(Box::new(move || {
            let body = json!({ "ID": lease.to_string() });
            match post_to(&agent_for(wait), port, "/v3/lease/keepalive", &body) {
                Err(e) if e.contains("timeout") => Ok(format!("its renewal, a keepalive of lease {lease:x} sent to its member (:{port}), got no answer in {} ms", wait.as_millis())),
                answer => Err(format!("etcd member :{port} answered a renewal sent while it was stopped: {answer:?}")),
            }
        }))
    }

    /// Compare-and-delete: the key goes only if it still holds `value`; the lease goes too.
    fn release(&mut self, key: &str, value: &str) -> Result<Result<(), Vec<usize>>, String> {
        let mine = self.mine.take().map_or_else(|| key.to_owned(), |(k, _)| k);
        let v = self.etcd.post("/v3/kv/txn", &json!({
            "compare": [{ "key": b64(&mine), "result": "EQUAL", "target": "VALUE", "value": b64(value) }],
            "success": [{ "request_delete_range": { "key": b64(&mine) } }],
        }))?;
        self.revoke()?;
        Ok(if v["succeeded"].as_bool() == Some(true) {
            Ok(())
        } else {
            Err(Vec::new())
        })
    }
}

/// An etcd lease plus a create-if-absent transaction; the revision is the token
/// (`TokenSource::LockService`).
pub const ETCD: Backend = Backend {
    name: "etcd",
    lock_service: true,
    twin_of: None,
    start: |run, notes| Ok(Box::new(Servers::start(run, notes)?)),
    cannot: |sc| {
        let real_ttl = sc.lease_ttl as f64 * service_scale(sc);
        (real_ttl % 1000.0 != 0.0).then_some("etcd lease TTLs are whole seconds")
    },
};

/// etcd on loopback: one member, or a cluster of several (to fail its leader over).
pub struct Servers {
    client: Etcd,
    /// Each member's client port and process.
    members: Vec<(u16, Started)>,
    /// The lease's TTL in whole seconds (etcd counts no finer).
    ttl_s: u64,
    /// A minority run ([`Scenario::minority`]): the member, not the leader, that the cut-off
    /// client talks to and the world stops.
    minority: Option<usize>,
}

impl Servers {
    /// One member, or a cluster whose leader can fail over or whose member is cut off.
    fn start(run: &Run, notes: &mut Vec<String>) -> Result<Self, String> {
        let clustered = run.sc.failover_at().is_some() || run.sc.minority();
        let n = if clustered { CLUSTER } else { 1 };
        let name = format!("etcd-{}", run.n);
        let ports: Vec<(u16, u16)> = (0..n)
            .map(|_| Ok((free_port()?, free_port()?)))
            .collect::<Result<_, String>>()?;
        let url = |port: u16| format!("http://127.0.0.1:{port}");
        let cluster: Vec<String> = (ports.iter().enumerate())
            .map(|(i, (_, peer))| format!("{name}-{i}={}", url(*peer)))
            .collect();
        let mut members = Vec::new();
        for (i, &(port, peer)) in ports.iter().enumerate() {
            let member = format!("{name}-{i}");
            let log = std::fs::File::create(run.dir.join(format!("{member}.log")))
                .map_err(|e| e.to_string())?;
            let (data, client, peer) = (run.dir.join(&member), url(port), url(peer));
            let data = data.to_string_lossy();
            let initial = cluster.join(",");
            let flags = [
                ("name", member.as_str()),
                ("data-dir", &data),
                ("listen-client-urls", &client),
                ("advertise-client-urls", &client),
                ("listen-peer-urls", &peer),
                ("initial-advertise-peer-urls", &peer),
                ("initial-cluster", &initial),
                ("initial-cluster-token", &name),
                ("initial-cluster-state", "new"),
                // A fast raft: heartbeat 10 ms, election 100 ms, so the minimum lease TTL
                // is 1 s and a new leader is elected within a few hundred ms.
                ("heartbeat-interval", "10"),
                ("election-timeout", "100"),
            ];
            let mut cmd = Command::new("etcd");
            cmd.args(flags.map(|(k, v)| format!("--{k}={v}")))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log);
            members.push((port, spawn(&mut cmd, "etcd")?));
        }
        let client = Etcd::new(ports.iter().map(|(p, _)| *p).collect());
        wait_for("etcd", Duration::from_secs(20), || {
            let led = |p: &(u16, u16)| Etcd::status(p.0).is_ok_and(|(_, leader)| leader != 0);
            client.get("replay/ping").is_ok() && ports.iter().all(led)
        })?;
        notes.push(format!("{n} etcd member(s) on ports {:?}", client.ports));
        let ttl_s = (run.sc.lease_ttl as f64 * run.scale / 1000.0).round() as u64;
        // A follower: a new leader's lessor would extend every lease.
        let follows = |p: &u16| Etcd::status(*p).is_ok_and(|(me, leader)| me != leader);
        let minority = run
            .sc
            .minority()
            .then(|| client.ports.iter().position(follows));
        let minority = minority.map(|m| m.ok_or("no etcd follower")).transpose()?;
        Ok(Self {
            client,
            members,
            ttl_s,
            minority,
        })
    }
}

impl Service for Servers {
    /// In a minority run the cut-off client talks to the stopped member only, the others
    /// to the two that stay the majority.
    fn connect(&self, sc: &Scenario, idx: usize) -> Result<Box<dyn Lock>, String> {
        let cut_off = sc.partitioned().is_some_and(|p| p.actor == idx);
        let ports = (self.client.ports.iter().enumerate())
            .filter(|(i, _)| self.minority.is_none_or(|m| (*i == m) == cut_off))
            .map(|(_, p)| *p);
        Ok(Box::new(EtcdLock {
            etcd: Etcd::new(ports.collect()),
            ttl_s: self.ttl_s,
            lease: None,
            queue: sc.lock.queue(),
            mine: None,
            pinned: cut_off && self.minority.is_some(),
        }))
    }

    fn system(&self) -> String {
        format!("etcd {}", version("etcd"))
    }

    /// A failover kills the member that is the leader now (a crash). A minority partition
    /// stops the cut-off client's member (SIGSTOP), then continues it: stopped, it answers
    /// nothing and takes no part in Raft, a minority of one; the other two go on.
    fn fault(&self, w: &Stage, t: Millis, f: Fault) -> Result<Option<String>, String> {
        if let (Fault::Minority { cut }, Some(m)) = (f, self.minority) {
            // The story calls it member 1; here it is whichever member follows (0, 1 or 2).
            let (port, member) = &self.members[m];
            member.signal(if cut { "STOP" } else { "CONT" })?;
            return Ok(Some(match cut {
                true => format!("t={t}: SIGSTOP to etcd member {m} of 0–2 (the story's member 1; client port :{port}, a follower, the one member the cut-off client talks to): frozen, it answers nothing and takes no part in Raft, a minority of one; the other two go on as the majority"),
                false => format!("t={t}: SIGCONT to etcd member {m} (:{port}): it runs again and rejoins the cluster"),
            }));
        }
        if f != Fault::Failover {
            return Ok(None);
        }
        let leads = |port: u16| Etcd::status(port).is_ok_and(|(me, leader)| me == leader);
        let (port, leader) = (self.members.iter().find(|(port, _)| leads(*port)))
            .ok_or("no etcd member says it is the leader")?;
        leader.stop();
        let mut o = observe(w.shared);
        let next = o.tokens.iter().max().map_or(w.sc.first_fence, |t| t + 1);
        o.saw(t, None, failover(next, Vec::new()));
        Ok(Some(format!("t={t}: killed the etcd leader (client port :{port}); the other members elect a new one")))
    }

    /// The members still answering after a failover, and the leader they agree on.
    fn end_note(&self) -> Option<String> {
        let live = |&(p, _): &(u16, Started)| Etcd::status(p).ok().map(|(_, l)| (p, l));
        let leaders: Vec<(u16, u64)> = self.members.iter().filter_map(live).collect();
        let note = format!("at the end, the surviving etcd members (port, leader id): {leaders:?}");
        (self.members.len() > 1).then_some(note)
    }
}
