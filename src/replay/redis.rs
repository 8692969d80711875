//! Redis through the `redis` crate's blocking client (one connection per client thread,
//! replies typed by the crate, a server error an error value), and the lock on it: one
//! redis-server, or Redlock's majority over several.

use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::Arc;
use std::time::Duration;

use redis::FromRedisValue;

use super::lock::{Answer, Lock};

/// One connection to the redis-server on 127.0.0.1:`port`.
pub struct Redis {
    con: redis::Connection,
    pub port: u16,
}

impl Redis {
    pub fn connect(port: u16) -> Result<Self, String> {
        let wait = Duration::from_secs(10);
        let con = redis::Client::open(format!("redis://127.0.0.1:{port}/"))
            .and_then(|c| c.get_connection_with_timeout(wait))
            .and_then(|con| con.set_read_timeout(Some(wait)).map(|()| con))
            .map_err(|e| format!("redis :{port}: {e}"))?;
        Ok(Self { con, port })
    }

    /// Sends one command (its name and arguments) and reads its reply as a `T`.
    pub fn cmd<T: FromRedisValue>(&mut self, args: &[&str]) -> Result<T, String> {
        let (name, rest) = args.split_first().ok_or("redis: an empty command")?;
        redis::cmd(name)
            .arg(rest)
            .query(&mut self.con)
            .map_err(|e| format!("redis :{} {name}: {e}", self.port))
    }

    /// Runs a Lua script (EVALSHA, loading it first if the server lacks it).
    pub fn eval<T: FromRedisValue>(
        &mut self,
        script: &str,
        keys: &[&str],
        args: &[&str],
    ) -> Result<T, String> {
        redis::Script::new(script)
            .key(keys)
            .arg(args)
            .invoke(&mut self.con)
            .map_err(|e| format!("redis :{} script: {e}", self.port))
    }
}

/// Key of the token counter next to the lock key.
pub fn fence_key(resource: &str) -> String {
    format!("fence:{resource}")
}

const ACQUIRE_INCR: &str = "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return redis.call('INCR', KEYS[2]) end return false";
const RELEASE_CAD: &str =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";
const EXTEND_OWNED: &str = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0";

/// A lock on redis-servers: one (a majority of one) or Redlock's nodes, each command sent to
/// every node the client reaches and counted against a majority of all of them.
pub struct RedisLock {
    /// A connection to each node this client reaches, by node number.
    nodes: Vec<(usize, Redis)>,
    /// How many nodes there are in all.
    of: usize,
    /// One redis-server whose port moves at a failover: the port to follow.
    follow: Option<Arc<AtomicU16>>,
    /// The acquire's script INCRs the fence counter too (`TokenSource::SameRedis`).
    incr: bool,
}

impl RedisLock {
    /// The lock server on `port` now (and later on whatever port `port` says).
    pub fn single(port: Arc<AtomicU16>, incr: bool) -> Result<Self, String> {
        let nodes = vec![(0, Redis::connect(port.load(Ordering::SeqCst))?)];
        let (of, follow) = (1, Some(port));
        Ok(Self {
            nodes,
            of,
            follow,
            incr,
        })
    }

    /// Redlock: the nodes `reach` of `ports` (a client never talks to a node it cannot reach).
    pub fn redlock(ports: &[u16], reach: &[usize]) -> Result<Self, String> {
        let node = |&n: &usize| {
            let port = ports.get(n).ok_or("redlock node out of range")?;
            Ok((n, Redis::connect(*port)?))
        };
        let nodes = reach.iter().map(node).collect::<Result<_, String>>()?;
        let (of, follow, incr) = (ports.len(), None, false);
        Ok(Self {
            nodes,
            of,
            follow,
            incr,
        })
    }

    /// The connections, the single server's made again if a failover moved it.
    fn conns(&mut self) -> Result<&mut [(usize, Redis)], String> {
        if let Some(port) = self.follow.as_ref().map(|p| p.load(Ordering::SeqCst)) {
            if self.nodes[0].1.port != port {
                self.nodes[0].1 = Redis::connect(port)?;
            }
        }
        Ok(&mut self.nodes)
    }

    /// The nodes whose command (a SET, or a script) answered as `ok` says.
    fn nodes_where<T: FromRedisValue>(
        &mut self,
        mut send: impl FnMut(&mut Redis) -> Result<T, String>,
        mut ok: impl FnMut(&T) -> bool,
    ) -> Result<Vec<usize>, String> {
        let mut yes = Vec::new();
        for (n, r) in self.conns()? {
            if ok(&send(r)?) {
                yes.push(*n);
            }
        }
        Ok(yes)
    }

    /// The nodes whose script answered 1 (a deleted or extended key).
    fn where_one(&mut self, script: &str, key: &str, args: &[&str]) -> Result<Vec<usize>, String> {
        self.nodes_where(|r| r.eval::<i64>(script, &[key], args), |n| *n == 1)
    }

    /// Whether `nodes` are a majority of all; the nodes themselves, for Redlock only.
    fn majority(&self, nodes: Vec<usize>) -> (bool, Vec<usize>) {
        let majority = nodes.len() > self.of / 2;
        (majority, if self.of > 1 { nodes } else { Vec::new() })
    }
}

impl Lock for RedisLock {
    fn acquire(&mut self, key: &str, value: &str, px: u64) -> Result<Answer, String> {
        let (incr, px, fence) = (self.incr, px.to_string(), fence_key(key));
        let set = |r: &mut Redis| match incr {
            true => r.eval(ACQUIRE_INCR, &[key, &fence], &[value, &px]),
            false => r
                .cmd::<Option<String>>(&["SET", key, value, "NX", "PX", &px])
                .map(|ok| ok.map(|_| 0)),
        };
        let mut token = None;
        let ok = self.nodes_where(set, |t: &Option<u64>| {
            token = t.filter(|_| incr);
            t.is_some()
        })?;
        let (n, of, port) = (ok.len(), self.of, self.nodes[0].1.port);
        let (granted, nodes) = self.majority(ok);
        let how = match (of, token) {
            (1, Some(t)) => format!("SET NX PX on :{port} and the script's INCR gave token {t}"),
            (1, None) => format!("SET {key} {value} NX PX {px} answered OK"),
            (_, _) if granted => {
                format!("Redlock SET NX PX answered OK on nodes {nodes:?}, {n} of {of}")
            }
            (_, _) => {
                // No majority: it deletes the keys it did get again.
                self.where_one(RELEASE_CAD, key, &[value])?;
                format!("Redlock SET NX PX answered OK on nodes {nodes:?} only, {n} of {of}: no majority, deleted them again")
            }
        };
        Ok(Answer::new(granted, token, nodes, how))
    }

    fn value(&mut self, key: &str) -> Result<Option<String>, String> {
        match self.conns()? {
            [(_, r)] => r.cmd(&["GET", key]),
            _ => Err("GET on Redlock: not one value".to_owned()),
        }
    }

    fn holds(&mut self, key: &str, value: &str) -> Result<bool, String> {
        let get = |r: &mut Redis| r.cmd::<Option<String>>(&["GET", key]);
        let mine = self.nodes_where(get, |v| v.as_deref() == Some(value))?;
        Ok(self.majority(mine).0)
    }

    fn extend(&mut self, key: &str, value: &str, px: u64) -> Result<bool, String> {
        let extended = self.where_one(EXTEND_OWNED, key, &[value, &px.to_string()])?;
        Ok(self.majority(extended).0)
    }

    fn release(&mut self, key: &str, value: &str) -> Result<Result<(), Vec<usize>>, String> {
        // Released only if it still held it: a majority of its keys were there to delete.
        let deleted = self.where_one(RELEASE_CAD, key, &[value])?;
        let (released, nodes) = self.majority(deleted);
        Ok(if released { Ok(()) } else { Err(nodes) })
    }

    /// As `GETDEL`, so the log can say whose lease it deleted (the same effect as `DEL`).
    fn delete(&mut self, key: &str) -> Result<Option<String>, String> {
        match self.conns()? {
            [(_, r)] => r.cmd(&["GETDEL", key]),
            _ => Err("GET-then-DEL over Redlock nodes is not modelled".to_owned()),
        }
    }
}
