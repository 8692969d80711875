//! etcd v3 through its documented JSON gateway (`/v3/...`, etcd 3.4): POSTs by `ureq`, bodies
//! by serde_json, keys and values base64 as the gateway wants them.

use std::time::Duration;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use serde_json::{json, Value};

/// A client of one etcd member or a cluster: requests go to the first member that answers
/// (a killed member refuses the connection, so the client moves on to the next one).
#[derive(Debug, Clone)]
pub struct Etcd {
    pub ports: Vec<u16>,
    agent: ureq::Agent,
}

/// The outcome of the lock transaction.
pub enum LockTxn {
    /// The key was created; the revision of that put is the fencing token.
    Acquired {
        revision: u64,
    },
    Held,
}

/// Errors a member gives while the cluster elects a new leader: worth retrying.
fn transient(e: &str) -> bool {
    [
        "leader",
        "timed out",
        "timeout",
        "unavailable",
        "reset",
        "refused",
        "closed",
        "connection failed",
    ]
    .iter()
    .any(|s| e.contains(s))
}

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
                    Err(e) if transient(&e) => last = e,
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

    /// A lease of `ttl_s` seconds (etcd leases count in whole seconds).
    pub fn grant(&self, ttl_s: u64) -> Result<i64, String> {
        let v = self.post("/v3/lease/grant", &json!({ "TTL": ttl_s }))?;
        num(&v["ID"]).ok_or_else(|| format!("lease grant: {v}"))
    }

    pub fn revoke(&self, lease: i64) -> Result<(), String> {
        // A lease that already expired is "not found": that is fine for a release.
        match self.post("/v3/lease/revoke", &json!({ "ID": lease.to_string() })) {
            Ok(_) => Ok(()),
            Err(e) if e.contains("not found") => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// The lock: create `key` with `owner` under `lease` only if it does not exist.
    pub fn lock(&self, key: &str, owner: &str, lease: i64) -> Result<LockTxn, String> {
        let v = self.post(
            "/v3/kv/txn",
            &json!({
                "compare": [{ "key": b64(key), "result": "EQUAL", "target": "CREATE", "create_revision": "0" }],
                "success": [{ "request_put": { "key": b64(key), "value": b64(owner), "lease": lease.to_string() } }],
                "failure": [{ "request_range": { "key": b64(key) } }]
            }),
        )?;
        if v["succeeded"].as_bool() == Some(true) {
            let revision = num(&v["header"]["revision"]).ok_or("txn: no revision")? as u64;
            Ok(LockTxn::Acquired { revision })
        } else {
            Ok(LockTxn::Held)
        }
    }

    /// Compare-and-delete: delete `key` only if it still holds `owner`. True if deleted.
    pub fn unlock(&self, key: &str, owner: &str) -> Result<bool, String> {
        let v = self.post(
            "/v3/kv/txn",
            &json!({
                "compare": [{ "key": b64(key), "result": "EQUAL", "target": "VALUE", "value": b64(owner) }],
                "success": [{ "request_delete_range": { "key": b64(key) } }],
            }),
        )?;
        Ok(v["succeeded"].as_bool() == Some(true))
    }

    /// The current value of `key`.
    pub fn get(&self, key: &str) -> Result<Option<String>, String> {
        let v = self.post("/v3/kv/range", &json!({ "key": b64(key) }))?;
        Ok(v["kvs"]
            .get(0)
            .and_then(|kv| kv["value"].as_str())
            .map(|s| String::from_utf8_lossy(&unb64(s)).into_owned()))
    }

    /// The create revision of `key`, if it exists: the lock key's, which is its holder's
    /// token. A resource that compares it with a write's token checks that the write's lease
    /// is still the live one (a key whose lease expired is gone; a new holder's key has a
    /// newer create revision).
    pub fn create_revision(&self, key: &str) -> Result<Option<u64>, String> {
        let v = self.post("/v3/kv/range", &json!({ "key": b64(key) }))?;
        Ok(v["kvs"]
            .get(0)
            .and_then(|kv| num(&kv["create_revision"]))
            .map(|r| r as u64))
    }

    /// A plain put; its revision is a token from the consensus store.
    pub fn put_revision(&self, key: &str, value: &str) -> Result<u64, String> {
        let v = self.post(
            "/v3/kv/put",
            &json!({ "key": b64(key), "value": b64(value) }),
        )?;
        num(&v["header"]["revision"])
            .map(|r| r as u64)
            .ok_or_else(|| format!("put: {v}"))
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

fn unb64(s: &str) -> Vec<u8> {
    B64.decode(s).unwrap_or_default()
}
