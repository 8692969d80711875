//! [`LockKind`]: which lock grants the lease, with what only that lock has.

use super::*;

/// Which lock grants the lease, with what only that lock has, so a combination no real
/// system has (a Redis with a lock-delay, a row lock on Redlock nodes) cannot be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockKind {
    /// A lease on one Redis (`SET key val NX PX ttl`), its tokens from `tokens`.
    Redis { tokens: RedisTokens },
    /// Redlock over several independent Redis nodes; it mints no token
    /// ([`TokenSource::Counterfactual`]).
    Redlock(RedlockSetup),
    /// A consensus lock service (etcd, ZooKeeper; Chubby with a lock-delay): lease and token
    /// (the lock key's revision, the sequential znode's number) from one linearizable store.
    Service(ServiceOptions),
    /// A PostgreSQL row lock in the storage itself, not a lease; no token.
    Row(RowLock),
}

impl Default for LockKind {
    fn default() -> Self {
        LockKind::Redis {
            tokens: RedisTokens::SameRedis,
        }
    }
}

/// Where a single Redis's tokens come from (the Redis sources of [`TokenSource`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RedisTokens {
    /// [`TokenSource::SameRedis`].
    #[default]
    SameRedis,
    /// [`TokenSource::SeparateCounter`].
    SeparateCounter,
    /// [`TokenSource::RandomValue`].
    RandomValue,
}

/// What a lock service has that Redis does not.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServiceOptions {
    /// Chubby-style lock-delay (ms): after a lease expires without a release, the lock
    /// service grants the lock to nobody for this long.
    pub lock_delay: Millis,
    /// The lock service queues waiters fairly, as ZooKeeper's lock recipe (an ephemeral
    /// sequential znode per waiter, each watching only the one before it) and etcd's mutex
    /// (waiters ordered by their key's create revision) do: an acquire while the lock is held
    /// joins the queue and waits, without polling, until the lock is handed to it, in
    /// arrival order, when the holder releases or its session (the lease) expires.
    pub queue: bool,
    /// The fleet the run's clients belong to, renewing on one fixed schedule, and how fast
    /// the service answers it ([`Herd`]); `None`: the service answers at once.
    pub herd: Option<Herd>,
}

/// A fleet of jobs that took their locks together (a deploy) and renew them on one fixed
/// schedule, `renew_before` before each lease ends, against a lock service that answers
/// `per_ms` lock commands a millisecond, one after another: the run's clients are jobs of the
/// fleet. At the fleet's renewal instant (`ttl - renew_before`) every job's renewal reaches
/// the service at once, and a command that reaches it while that instant's backlog drains
/// waits behind it (the run's own are the instant's last). Only the first instant is a herd:
/// answered one after another, the renewals that got through come due spread out after it.
/// A fleet job's watchdog only stops renewing when its extend is refused: nothing tells its
/// worker (Redisson's renewal task; an etcd `Session.Done()` the worker does not check).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Herd {
    /// Jobs in the fleet, the run's own included.
    pub holders: u32,
    /// Lock commands the service answers per ms.
    pub per_ms: u32,
    /// How long before its lease ends a job renews (a fixed schedule, no jitter).
    pub renew_before: Millis,
}

impl Herd {
    /// When the fleet renews after taking its locks at t=0.
    pub fn instant(&self, ttl: Millis) -> Millis {
        ttl.saturating_sub(self.renew_before)
    }

    /// How long the service takes to answer the instant's renewals.
    pub fn drain(&self) -> Millis {
        Millis::from(self.holders.div_ceil(self.per_ms.max(1)))
    }

    /// When the service answers a command that reaches it at `t`: behind the instant's
    /// backlog if that is still draining, else at once.
    pub fn served_at(&self, ttl: Millis, t: Millis) -> Millis {
        let (from, to) = (self.instant(ttl), self.instant(ttl) + self.drain());
        if (from..to).contains(&t) {
            to
        } else {
            t
        }
    }

    /// The commands waiting at the service ahead of one that reaches it at `t`: the
    /// instant's renewals not yet answered (one sent at the instant itself is the last of
    /// them, so it waits behind all the others).
    pub fn ahead(&self, ttl: Millis, t: Millis) -> u32 {
        let answered = t.saturating_sub(self.instant(ttl)) * Millis::from(self.per_ms);
        let queued = Millis::from(self.holders).saturating_sub(answered) as u32;
        match t == self.instant(ttl) {
            true => queued.saturating_sub(1),
            false => queued,
        }
    }
}

impl LockKind {
    /// A lock service with no lock-delay and no queue (etcd's lease and transaction).
    pub const SERVICE: LockKind = LockKind::Service(ServiceOptions {
        lock_delay: 0,
        queue: false,
        herd: None,
    });

    /// Where this lock's tokens come from.
    pub fn token_source(&self) -> TokenSource {
        match self {
            LockKind::Redis { tokens } => TokenSource::from(*tokens),
            LockKind::Redlock(_) => TokenSource::Counterfactual,
            LockKind::Service(_) => TokenSource::LockService,
            // No token reaches storage; the grant numbers count like one Redis's INCR.
            LockKind::Row(_) => TokenSource::SameRedis,
        }
    }

    /// The same lock with its tokens from `t`: a single Redis and a lock service trade
    /// places (the one setting both have); Redlock mints none and a row lock has none.
    pub fn with_tokens(&self, t: TokenSource) -> Result<LockKind, &'static str> {
        let single = matches!(self, LockKind::Redis { .. } | LockKind::Service(_));
        match (t, RedisTokens::of(t)) {
            _ if !single && t == self.token_source() => Ok(self.clone()),
            _ if matches!(self, LockKind::Redlock(_)) => {
                Err("Redlock mints no token: its token source cannot change")
            }
            _ if !single => Err("a row lock hands out no token: its token source cannot change"),
            (TokenSource::LockService, _) if matches!(self, LockKind::Service(_)) => {
                Ok(self.clone())
            }
            (TokenSource::LockService, _) => Ok(LockKind::SERVICE),
            (_, Some(tokens)) => Ok(LockKind::Redis { tokens }),
            (_, None) => Err("only Redlock mints no token"),
        }
    }

    /// The same lock with a lock-delay of `ms`: only a lock service has one.
    pub fn with_lock_delay(&self, ms: Millis) -> Result<LockKind, &'static str> {
        match self {
            LockKind::Service(o) => Ok(LockKind::Service(ServiceOptions {
                lock_delay: ms,
                ..*o
            })),
            _ if ms == 0 => Ok(self.clone()),
            LockKind::Row(_) => Err("a row lock in PostgreSQL has no lock-delay"),
            _ => Err(
                "Redis has no lock-delay: a lock service (tokens from etcd / ZooKeeper) has one",
            ),
        }
    }

    pub fn redlock(&self) -> Option<&RedlockSetup> {
        match self {
            LockKind::Redlock(r) => Some(r),
            _ => None,
        }
    }

    pub fn row(&self) -> Option<RowLock> {
        match self {
            LockKind::Row(r) => Some(*r),
            _ => None,
        }
    }

    /// A lock service's lock-delay (0 for every other lock).
    pub fn lock_delay(&self) -> Millis {
        self.service().lock_delay
    }

    /// The fleet renewing on one schedule against a lock service, if the run models one.
    pub fn herd(&self) -> Option<Herd> {
        self.service().herd
    }

    /// Whether a lock service queues waiters fairly.
    pub fn queue(&self) -> bool {
        self.service().queue
    }

    /// A lock service's options (none for any other lock).
    pub fn service(&self) -> ServiceOptions {
        match self {
            LockKind::Service(o) => *o,
            _ => ServiceOptions::default(),
        }
    }

    /// Whether one server holds the lease (one Redis or one lock service), so it has a
    /// primary to fail over and its tokens can change source.
    pub fn is_single(&self) -> bool {
        matches!(self, LockKind::Redis { .. } | LockKind::Service(_))
    }
}

impl RedisTokens {
    /// `t` if it is one of Redis's sources.
    pub fn of(t: TokenSource) -> Option<Self> {
        match t {
            TokenSource::SameRedis => Some(Self::SameRedis),
            TokenSource::SeparateCounter => Some(Self::SeparateCounter),
            TokenSource::RandomValue => Some(Self::RandomValue),
            TokenSource::LockService | TokenSource::Counterfactual => None,
        }
    }
}

impl From<RedisTokens> for TokenSource {
    fn from(t: RedisTokens) -> Self {
        match t {
            RedisTokens::SameRedis => TokenSource::SameRedis,
            RedisTokens::SeparateCounter => TokenSource::SeparateCounter,
            RedisTokens::RandomValue => TokenSource::RandomValue,
        }
    }
}
