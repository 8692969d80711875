//! etcd as a lock service: throwaway members on loopback (one, or a cluster whose leader the
//! world kills), its v3 API through the documented JSON gateway (`/v3/...`, etcd 3.4: POSTs
//! by `ureq`, bodies by serde_json, keys and values base64 as the gateway wants them), and
//! the lock on it.

use std::process::{Command, Stdio};
use std::time::Duration;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use serde_json::{json, Value};

use fencing_lab::core::{Millis, Scenario};

use super::lock::{Answer, Lock, Run, Service};
use super::redis::failover;
use super::run::observe;
use super::servers::{free_port, spawn, version, wait_for, Started};
use super::world::{Fault, World};

/// Members of the etcd cluster of a run that fails over.
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
}

/// An HTTP client that answers any status with its body (the gateway's errors are JSON too).
fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(3)))
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
/// finer) and the key created under it.
pub struct EtcdLock {
    pub etcd: Etcd,
    pub ttl_s: u64,
    /// The lease of the lock this client holds.
    pub lease: Option<i64>,
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
}

impl Lock for EtcdLock {
    /// A lease of the TTL, and the key created under it only if it does not exist: the
    /// revision of that put is the fencing token.
    fn acquire(&mut self, key: &str, value: &str, _px: u64) -> Result<Answer, String> {
        let lease = self
            .etcd
            .post("/v3/lease/grant", &json!({ "TTL": self.ttl_s }))?;
        let id = num(&lease["ID"]).ok_or_else(|| format!("lease grant: {lease}"))?;
        self.lease = Some(id);
        let (k, id) = (b64(key), id.to_string());
        let v = self.etcd.post("/v3/kv/txn", &json!({
            "compare": [{ "key": k, "result": "EQUAL", "target": "CREATE", "create_revision": "0" }],
            "success": [{ "request_put": { "key": k, "value": b64(value), "lease": id } }],
        }))?;
        let token = num(&v["header"]["revision"]).map(|r| r as u64);
        let granted = v["succeeded"].as_bool() == Some(true);
        if !granted {
            self.revoke()?;
        }
        let token = token.filter(|_| granted);
        let how = format!("etcd created {key} at revision {token:?}, its token");
        Ok(Answer::of_service(granted, token, how))
    }

    fn value(&mut self, key: &str) -> Result<Option<String>, String> {
        Ok(self.etcd.get(key)?.map(|(v, _)| v))
    }

    /// The lock key's create revision: a lapsed lease's key is gone, a new holder's key has
    /// a newer one.
    fn live_token(&mut self, key: &str) -> Result<Option<u64>, String> {
        Ok(self.etcd.get(key)?.map(|(_, revision)| revision))
    }

    /// Compare-and-delete: the key goes only if it still holds `value`; the lease goes too.
    fn release(&mut self, key: &str, value: &str) -> Result<Result<(), Vec<usize>>, String> {
        let v = self.etcd.post("/v3/kv/txn", &json!({
            "compare": [{ "key": b64(key), "result": "EQUAL", "target": "VALUE", "value": b64(value) }],
            "success": [{ "request_delete_range": { "key": b64(key) } }],
        }))?;
        self.revoke()?;
        Ok(if v["succeeded"].as_bool() == Some(true) {
            Ok(())
        } else {
            Err(Vec::new())
        })
    }
}

/// etcd on loopback: one member, or a cluster of several (to fail its leader over).
pub struct Servers {
    client: Etcd,
    /// Each member's client port and process.
    members: Vec<(u16, Started)>,
    /// The lease's TTL in whole seconds (etcd counts no finer).
    ttl_s: u64,
}

impl Servers {
    /// One member, or a cluster whose leader can fail over.
    pub fn start(run: &Run, notes: &mut Vec<String>) -> Result<Self, String> {
        let n = run.sc.failover_at.map_or(1, |_| CLUSTER);
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
        Ok(Self {
            client,
            members,
            ttl_s,
        })
    }
}

impl Service for Servers {
    fn connect(&self, _: &Scenario, _: usize) -> Result<Box<dyn Lock>, String> {
        Ok(Box::new(EtcdLock {
            etcd: self.client.clone(),
            ttl_s: self.ttl_s,
            lease: None,
        }))
    }

    fn system(&self) -> String {
        format!("etcd {}", version("etcd"))
    }

    /// Kills the member that is the leader now (a crash).
    fn fault(&self, w: &World, t: Millis, f: Fault) -> Result<Option<String>, String> {
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
