//! etcd v3 through its JSON gateway (`/v3/...`, etcd 3.4): hand-written HTTP/1.1 POSTs
//! over `std::net::TcpStream`, keys and values base64 as the gateway wants them.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{json, Value};

/// A client of one etcd member or a cluster: requests go to the first member that answers
/// (a killed member refuses the connection, so the client moves on to the next one).
#[derive(Debug, Clone)]
pub struct Etcd {
    pub ports: Vec<u16>,
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
        "unavailable",
        "no HTTP body",
        "reset",
        "refused",
    ]
    .iter()
    .any(|s| e.contains(s))
}

impl Etcd {
    pub fn post(&self, path: &str, body: &Value) -> Result<Value, String> {
        let t0 = std::time::Instant::now();
        loop {
            let mut last = String::from("etcd: no members");
            for &port in &self.ports {
                match post_to(port, path, body) {
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
        let v = post_to(port, "/v3/maintenance/status", &json!({}))?;
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

/// One HTTP/1.1 POST to one member.
fn post_to(port: u16, path: &str, body: &Value) -> Result<Value, String> {
    let body = body.to_string();
    let mut s = TcpStream::connect(("127.0.0.1", port)).map_err(|e| format!("etcd: {e}"))?;
    s.set_nodelay(true).ok();
    s.set_read_timeout(Some(Duration::from_secs(3))).ok();
    let req = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        port,
        body.len()
    );
    s.write_all(req.as_bytes()).map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&raw);
    let (head, rest) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("etcd {path}: no HTTP body"))?;
    let status = head.lines().next().unwrap_or_default().to_owned();
    let chunked = head.lines().any(|l| {
        l.to_ascii_lowercase()
            .starts_with("transfer-encoding: chunked")
    });
    let body = if chunked {
        dechunk(rest)
    } else {
        rest.to_owned()
    };
    let v: Value = serde_json::from_str(&body).map_err(|e| format!("etcd {path}: {e}: {body}"))?;
    if !status.contains(" 200 ") {
        return Err(format!("etcd {path}: {status}: {body}"));
    }
    Ok(v)
}

/// int64 fields come back as JSON strings.
fn num(v: &Value) -> Option<i64> {
    v.as_i64().or_else(|| v.as_str()?.parse().ok())
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

pub fn b64(s: &str) -> String {
    let mut out = String::new();
    for c in s.as_bytes().chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                out.push(B64[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

pub fn unb64(s: &str) -> Vec<u8> {
    let mut bits = 0u32;
    let mut n = 0;
    let mut out = Vec::new();
    for c in s.bytes() {
        let Some(v) = B64.iter().position(|&b| b == c) else {
            continue; // padding
        };
        bits = (bits << 6) | v as u32;
        n += 6;
        if n >= 8 {
            n -= 8;
            out.push((bits >> n) as u8);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips() {
        for s in ["", "a", "ab", "abc", "acct:1", "lock/invoice:7"] {
            assert_eq!(unb64(&b64(s)), s.as_bytes());
        }
        assert_eq!(b64("a"), "YQ==");
        assert_eq!(b64("A"), "QQ==");
    }
}
