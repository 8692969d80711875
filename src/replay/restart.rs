//! The one Redis restarting ([`Scenario::restart`]), made real: a snapshot (`SAVE`) before
//! the run, so it holds the fence counter's base and nothing of the run; `kill -9` at the
//! failover's instant; and a fresh redis-server on the same directory, which loads that
//! snapshot. No AOF (the servers run with `--appendonly no`), so nothing acknowledged since
//! the snapshot was on disk.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Mutex;

use fencing_lab::core::{EventKind, Millis, Scenario};

use super::redis::{Redis, ReplyExt};
use super::run::{self, Env};
use super::servers::RedisServer;

/// What a restart needs: where the first redis-server kept its data, and a place for the
/// one that replaces it, which must outlive the run's clients.
pub struct Restart {
    dir: PathBuf,
    name: String,
    server: Mutex<Option<RedisServer>>,
}

impl Restart {
    /// The restart of the redis-server started as `name` in `dir`.
    pub fn new(dir: PathBuf, name: String) -> Self {
        Self {
            dir,
            name,
            server: Mutex::new(None),
        }
    }

    /// Before the run: the snapshot the restarted server will come back with.
    pub fn snapshot(&self, primary: &RedisServer) -> Result<String, String> {
        Redis::connect(primary.port)?.cmd(&["SAVE"])?;
        Ok(format!(
            "one redis-server on :{} with no AOF; SAVE before the run, so its snapshot has only the fence counter's base",
            primary.port
        ))
    }

    /// At `t`: kills `primary` and starts its replacement on the same directory; the
    /// clients move to it. Observes the failover as the clients' world sees it.
    pub fn run(
        &self,
        env: &Env,
        sc: &Scenario,
        primary: &RedisServer,
        shared: &run::Shared,
        t: Millis,
    ) -> Result<(), String> {
        let fence = run::fence_key(&sc.resource);
        let read = |port: u16| -> Result<(Option<String>, Option<String>), String> {
            let mut r = Redis::connect(port)?;
            Ok((
                r.cmd(&["GET", &sc.resource])?.text(),
                r.cmd(&["GET", &fence])?.text(),
            ))
        };
        let (held, counter) = read(primary.port)?;
        primary.crash();
        let next = RedisServer::start(&self.dir, &self.name, None)?;
        let (kept, kept_counter) = read(next.port)?;
        env.redis_port.store(next.port, Ordering::SeqCst);
        let kind = came_back(sc, &held, &kept, &kept_counter);
        run::observe(shared).saw(t, None, kind);
        run::observe(shared).notes.push(format!(
            "t={t}: redis-server :{} killed (kill -9) holding {} = {held:?}, {fence} = {counter:?}; restarted on :{} from its snapshot: {} = {kept:?}, {fence} = {kept_counter:?}",
            primary.port, sc.resource, next.port, sc.resource
        ));
        *self.server.lock().map_err(|_| "restart lock poisoned")? = Some(next);
        Ok(())
    }
}

/// The failover as the clients see a Redis that came back without the newest writes (a
/// promoted replica, or this server restarted): its counter's next token, and the owner of
/// the live key it lacks (`held` before, `kept` after), if any.
pub fn came_back(
    sc: &Scenario,
    held: &Option<String>,
    kept: &Option<String>,
    counter: &Option<String>,
) -> EventKind {
    let next = counter
        .as_deref()
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(sc.first_fence, |v| v + 1);
    let lost = match (held, kept) {
        (Some(v), k) if k.as_ref() != Some(v) => vec![run::owner_of(sc, v)],
        _ => Vec::new(),
    };
    super::failover(next, lost)
}
