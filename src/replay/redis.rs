//! Redis through the `redis` crate's blocking client: one connection per client thread, its
//! replies read by the crate (a server error is an error value).

use std::time::Duration;

pub use redis::Value as Reply;

/// How a reply is read here: as text, as an integer, or as nil.
pub trait ReplyExt {
    fn text(&self) -> Option<String>;
    fn int(&self) -> Option<i64>;
    fn is_nil(&self) -> bool;
}

impl ReplyExt for Reply {
    fn text(&self) -> Option<String> {
        match self {
            Reply::BulkString(b) => Some(String::from_utf8_lossy(b).into_owned()),
            Reply::SimpleString(s) => Some(s.clone()),
            Reply::Okay => Some("OK".to_owned()),
            Reply::VerbatimString { text, .. } => Some(text.clone()),
            _ => None,
        }
    }

    fn int(&self) -> Option<i64> {
        match self {
            Reply::Int(i) => Some(*i),
            _ => None,
        }
    }

    fn is_nil(&self) -> bool {
        matches!(self, Reply::Nil)
    }
}

/// One connection to the redis-server on 127.0.0.1:`port`.
pub struct Redis {
    con: redis::Connection,
    port: u16,
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

    /// Sends one command (its name and arguments) and reads its reply.
    pub fn cmd(&mut self, args: &[&str]) -> Result<Reply, String> {
        let (name, rest) = args.split_first().ok_or("redis: an empty command")?;
        redis::cmd(name)
            .arg(rest)
            .query(&mut self.con)
            .map_err(|e| format!("redis :{} {name}: {e}", self.port))
    }

    /// Runs a Lua script (EVALSHA, loading it first if the server lacks it).
    pub fn eval(&mut self, script: &str, keys: &[&str], args: &[&str]) -> Result<Reply, String> {
        redis::Script::new(script)
            .key(keys)
            .arg(args)
            .invoke(&mut self.con)
            .map_err(|e| format!("redis :{} script: {e}", self.port))
    }
}
