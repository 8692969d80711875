//! etcd v3 through its documented JSON gateway (`/v3/...`, etcd 3.4): POSTs by `ureq`, bodies
//! by serde_json, keys and values base64 as the gateway wants them.

use std::time::Duration;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use serde_json::{json, Value};

use super::lock::{Answer, Lock};

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
        let (token, nodes) = (token.filter(|_| granted), Vec::new());
        let how = format!("etcd created {key} at revision {token:?}, its token");
        Ok(Answer::new(granted, token, nodes, how))
    }

    fn value(&mut self, key: &str) -> Result<Option<String>, String> {
        Ok(self.etcd.get(key)?.map(|(v, _)| v))
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
