//! The fenced storage: an account ledger that remembers, per resource, the highest
//! fencing token it has accepted and refuses writes from older lock generations.

use std::borrow::Borrow;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::clock::Millis;
use super::lease::Fence;

/// How the storage treats the token that comes with a write.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FencingPolicy {
    /// Tokens are ignored: the lease alone is trusted (the bug being demonstrated).
    Off,
    /// `token > last_fence`: an equal token is stale.
    #[default]
    Strict,
    /// `token >= last_fence`: the same lock generation may write again; retries are
    /// deduplicated by the idempotency key, not by the fence.
    SameEpoch,
}

impl FencingPolicy {
    pub const ALL: [FencingPolicy; 3] = [
        FencingPolicy::Off,
        FencingPolicy::Strict,
        FencingPolicy::SameEpoch,
    ];

    /// Stable identifier (URL hash, select values).
    pub fn code(self) -> &'static str {
        match self {
            FencingPolicy::Off => "off",
            FencingPolicy::Strict => "strict",
            FencingPolicy::SameEpoch => "same_epoch",
        }
    }

    /// Parses [`FencingPolicy::code`].
    pub fn from_code(code: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.code() == code)
    }

    /// Human label for the UI.
    pub fn label(self) -> &'static str {
        match self {
            FencingPolicy::Off => "off",
            FencingPolicy::Strict => "strict (token > last)",
            FencingPolicy::SameEpoch => "same-epoch (token ≥ last)",
        }
    }

    /// The option text in the Fencing control: name and rule, short enough for a projector.
    pub fn option(self) -> &'static str {
        match self {
            FencingPolicy::Off => "off",
            FencingPolicy::Strict => "strict (>)",
            FencingPolicy::SameEpoch => "same-epoch (≥)",
        }
    }

    /// One word, for tight spots.
    pub fn short(self) -> &'static str {
        match self {
            FencingPolicy::Off => "off",
            FencingPolicy::Strict => "strict",
            FencingPolicy::SameEpoch => "same-epoch",
        }
    }

    /// The next policy in the toggle cycle off → strict → same-epoch → off.
    pub fn next(self) -> Self {
        match self {
            FencingPolicy::Off => FencingPolicy::Strict,
            FencingPolicy::Strict => FencingPolicy::SameEpoch,
            FencingPolicy::SameEpoch => FencingPolicy::Off,
        }
    }

    /// Whether tokens are checked at all.
    pub fn checks_fence(self) -> bool {
        self != FencingPolicy::Off
    }
}

/// How the storage decides that a token still has authority, on top of the fencing rule.
/// Chubby's paper (Burrows, OSDI 2006, §2.4) gives a server two ways to test a sequencer:
/// against the most recent one it has observed, or against Chubby itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StorageCheck {
    /// Only the fencing rule against the highest token storage has seen: a lease is revoked
    /// here only once storage has seen a newer token.
    #[default]
    HighestToken,
    /// The fencing rule, then (for a write it admits) one call to the lock service: is the
    /// lease this write was sent under still the live one? (Chubby's CheckSequencer.) The
    /// model checks and applies at one instant; a real resource has a gap between the
    /// lock service's answer and its apply unless the two are ordered.
    Sequencer,
    /// The fencing rule as two statements in READ COMMITTED: a SELECT of the last fence,
    /// then, if the token passed, an UPDATE that does not check it again. Statements that
    /// reach storage at one instant interleave: each write's SELECT runs before any of their
    /// UPDATEs commits, so two writes that land together both pass the read, and the older
    /// token is not refused. (One conditional `UPDATE … WHERE fence < $token`, the rule
    /// everywhere else, or the row locked for the check, has no such gap.)
    ReadThenWrite,
}

impl StorageCheck {
    pub const ALL: [StorageCheck; 3] = [
        StorageCheck::HighestToken,
        StorageCheck::Sequencer,
        StorageCheck::ReadThenWrite,
    ];

    /// Stable identifier (URL hash, select values).
    pub fn code(self) -> &'static str {
        match self {
            StorageCheck::HighestToken => "highest",
            StorageCheck::Sequencer => "sequencer",
            StorageCheck::ReadThenWrite => "read_then_write",
        }
    }

    /// Parses [`StorageCheck::code`].
    pub fn from_code(code: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.code() == code)
    }

    /// The option text in the Storage checks control.
    pub fn option(self) -> &'static str {
        match self {
            StorageCheck::HighestToken => "the highest token",
            StorageCheck::Sequencer => "+ the sequencer (lock service)",
            StorageCheck::ReadThenWrite => "a SELECT, then an UPDATE",
        }
    }
}

/// A debit as it arrives at the storage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteRequest {
    pub resource: String,
    pub writer: String,
    /// The token the writer got from the lock; `None` for a writer that never held one.
    pub fence: Option<Fence>,
    pub amount: i64,
    /// "This intent runs once": dedupes a retry. It is not a fence.
    pub idempotency_key: Option<String>,
    /// A publish: the value written to the row's result (and `amount` is 0).
    pub publish: Option<String>,
}

/// Why the storage refused a write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum WriteError {
    /// The token is older than (or, under Strict, equal to) one already accepted.
    StaleFence { token: Fence, last: Fence },
    /// Fencing is on but the write carried no token.
    MissingFence,
    /// The token passed the fencing rule, but the lock service says the lease the write was
    /// sent under is no longer the live one ([`StorageCheck::Sequencer`]). `live` is the
    /// token of the lease that is live now, if any.
    StaleSequencer { token: Fence, live: Option<Fence> },
    /// The idempotency key was already applied: the retry is a duplicate of a landed intent,
    /// so nothing is applied and storage answers with the original result (the balance that
    /// the first attempt left), from which the client learns that its write landed.
    DuplicateIntent { key: String, original_balance: i64 },
    /// The writer's transaction no longer exists: the server terminated its session (a row
    /// lock's `idle_in_transaction_session_timeout`, SQLSTATE 25P03) and rolled it back, so
    /// the statement never runs. Nothing to do with tokens.
    SessionTerminated,
}

impl WriteError {
    /// Stable machine-readable code shown in the UI and asserted in tests.
    pub fn code(&self) -> &'static str {
        match self {
            WriteError::StaleFence { .. } => "stale_fence",
            WriteError::MissingFence => "missing_fence",
            WriteError::StaleSequencer { .. } => "stale_sequencer",
            WriteError::DuplicateIntent { .. } => "duplicate_intent",
            WriteError::SessionTerminated => "session_ended",
        }
    }
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl std::error::Error for WriteError {}

/// One account's state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Account {
    pub balance: i64,
    /// High-water mark of accepted tokens; only kept while fencing is on.
    pub last_fence: Option<Fence>,
    /// The token that came with the last accepted write, checked or not.
    pub last_write_fence: Option<Fence>,
    /// The value of the last accepted publish (a job's result row).
    pub result: Option<String>,
}

impl Account {
    /// What an accepted write leaves: the balance it comes to, its token as the last write's,
    /// the high-water mark raised to it (while fencing is on) and its publish, if any, as
    /// the result. The ledger and the replay's fold (with the balance storage replied) both
    /// apply a write by this.
    pub(crate) fn accept(
        &mut self,
        policy: FencingPolicy,
        fence: Option<Fence>,
        balance: i64,
        publish: Option<&String>,
    ) {
        self.balance = balance;
        if let Some(r) = publish {
            self.result = Some(r.clone());
        }
        self.last_write_fence = fence;
        self.raise_mark(policy, fence);
    }

    /// Storage accepted `fence` under `policy`: the high-water mark rises to it, kept only
    /// while fencing is on (off, storage checks and keeps nothing).
    pub(crate) fn raise_mark(&mut self, policy: FencingPolicy, fence: Option<Fence>) {
        if policy.checks_fence() {
            self.last_fence = self.last_fence.max(fence);
        }
    }
}

/// One attempted write, accepted or not: the append-only log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteRecord {
    pub at: Millis,
    pub request: WriteRequest,
    pub result: Result<(), WriteError>,
    pub balance_after: i64,
}

impl WriteRecord {
    pub fn accepted(&self) -> bool {
        self.result.is_ok()
    }
}

/// The storage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Ledger {
    policy: FencingPolicy,
    check: StorageCheck,
    accounts: SortedMap<String, Account>,
    log: Vec<WriteRecord>,
    /// Applied idempotency keys, with the balance their write left (the stored result).
    applied_intents: SortedMap<(String, String), i64>,
    /// [`StorageCheck::ReadThenWrite`]: per account, the instant of its latest write and
    /// the high-water mark as that instant began (what every SELECT at it reads).
    read: SortedMap<String, (Millis, Option<Fence>)>,
    /// What a standby replays: the stored state after each change (a [`Ledger::fail_over`]
    /// rolls back to one of these).
    history: Commits<Stored>,
    /// Indices into `log` of accepted writes a failover lost: no longer in storage.
    lost: Vec<usize>,
}

/// The rows a standby replicates: the accounts and the applied intents.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
struct Stored {
    accounts: SortedMap<String, Account>,
    applied_intents: SortedMap<(String, String), i64>,
}

impl Ledger {
    pub fn new(policy: FencingPolicy) -> Self {
        Self {
            policy,
            check: StorageCheck::HighestToken,
            accounts: SortedMap::default(),
            log: Vec::new(),
            applied_intents: SortedMap::default(),
            read: SortedMap::default(),
            history: Commits::default(),
            lost: Vec::new(),
        }
    }

    /// The same storage, validating tokens by `check` as well.
    pub fn with_check(mut self, check: StorageCheck) -> Self {
        self.check = check;
        self
    }

    pub fn check(&self) -> StorageCheck {
        self.check
    }

    /// Opens (or resets) `resource` with a starting balance.
    pub fn open(&mut self, resource: &str, balance: i64) {
        self.accounts.insert(
            resource.to_owned(),
            Account {
                balance,
                ..Account::default()
            },
        );
        self.history = Commits::default();
        self.commit(0, None);
    }

    /// Records the stored state as committed at `at` (what a standby replays in order), by
    /// the write in the log's row `row` (none: the opening, a barrier).
    fn commit(&mut self, at: Millis, row: Option<usize>) {
        let stored = Stored {
            accounts: self.accounts.clone(),
            applied_intents: self.applied_intents.clone(),
        };
        self.history.commit(at, row, stored);
    }

    /// Storage's primary dies at `now` and its asynchronous standby is promoted: the standby
    /// has every change committed at least `lag` ms before (0: synchronous commit, all of
    /// them), and storage is rolled back to that ([`Commits::roll_back`]). Returns the
    /// accepted writes it loses.
    pub fn fail_over(&mut self, now: Millis, lag: Millis) -> Vec<WriteRecord> {
        let first = self.history.first_lacked(now, lag);
        let (stored, lost) = self.history.roll_back(first);
        if let Some(stored) = stored {
            self.accounts = stored.accounts.clone();
            self.applied_intents = stored.applied_intents.clone();
        }
        self.read.clear();
        self.lost.extend(&lost);
        lost.into_iter().map(|i| self.log[i].clone()).collect()
    }

    pub fn policy(&self) -> FencingPolicy {
        self.policy
    }

    /// The account, or an empty one for a resource never opened.
    pub fn account(&self, resource: &str) -> Account {
        self.accounts.get(resource).cloned().unwrap_or_default()
    }

    /// Whether any write to `resource` has been accepted: what a job's status read sees.
    /// A write a failover lost is not there to read.
    pub fn any_accepted(&self, resource: &str) -> bool {
        (self.log.iter().enumerate())
            .any(|(i, w)| w.accepted() && w.request.resource == resource && !self.lost.contains(&i))
    }

    /// Every attempted write in arrival order.
    pub fn log(&self) -> &[WriteRecord] {
        &self.log
    }

    /// Applies a write (a debit, or a publish of a result) if the policy admits its token and
    /// its intent is new. Every attempt is logged. Returns the new balance.
    pub fn debit(&mut self, now: Millis, request: WriteRequest) -> Result<i64, WriteError> {
        self.debit_checked(now, request, || Ok(()))
    }

    /// [`Ledger::debit`], asking the lock service about the write's lease when the check is
    /// [`StorageCheck::Sequencer`]: `sequencer` is that call (`Err` carries the live lease's
    /// token). It is made only for a write the fencing rule admits, and never with fencing
    /// off (off means storage checks nothing).
    pub fn debit_checked(
        &mut self,
        now: Millis,
        request: WriteRequest,
        sequencer: impl FnOnce() -> Result<(), Option<Fence>>,
    ) -> Result<i64, WriteError> {
        let ask = self.check == StorageCheck::Sequencer && self.policy.checks_fence();
        let mark = self.mark_read(&request.resource, now);
        let account = self
            .accounts
            .slot(request.resource.clone(), Account::default);
        let result = admit(self.policy, mark, request.fence)
            .and_then(|()| match (ask, request.fence) {
                (true, Some(token)) => {
                    sequencer().map_err(|live| WriteError::StaleSequencer { token, live })
                }
                _ => Ok(()),
            })
            .and_then(|()| {
                let original = request.idempotency_key.as_ref().and_then(|key| {
                    self.applied_intents
                        .get(&(request.resource.clone(), key.clone()))
                        .map(|&b| (key, b))
                });
                match original {
                    Some((key, original_balance)) => Err(WriteError::DuplicateIntent {
                        key: key.clone(),
                        original_balance,
                    }),
                    None => Ok(()),
                }
            });
        if result.is_ok() {
            let balance = account.balance - request.amount;
            let publish = request.publish.as_ref();
            account.accept(self.policy, request.fence, balance, publish);
            if let Some(key) = &request.idempotency_key {
                self.applied_intents
                    .insert((request.resource.clone(), key.clone()), account.balance);
            }
        }
        let balance = account.balance;
        if result.is_ok() {
            self.commit(now, Some(self.log.len()));
        }
        self.log.push(WriteRecord {
            at: now,
            request,
            result: result.clone(),
            balance_after: balance,
        });
        result.map(|()| balance)
    }

    /// The high-water mark a write to `resource` at `now` is checked against: the account's,
    /// or, where the check is a SELECT and then an UPDATE, the one that SELECT read, as it
    /// was before any write at this instant (their UPDATEs come after every SELECT).
    fn mark_read(&mut self, resource: &str, now: Millis) -> Option<Fence> {
        let mark = self.accounts.get(resource).and_then(|a| a.last_fence);
        if self.check != StorageCheck::ReadThenWrite {
            return mark;
        }
        let read = self.read.slot(resource.to_owned(), || (now, mark));
        if read.0 != now {
            *read = (now, mark);
        }
        read.1
    }

    /// Logs a write that never ran because its writer's transaction was gone (see
    /// [`WriteError::SessionTerminated`]): refused before any rule is checked.
    pub fn refuse(&mut self, now: Millis, request: WriteRequest, error: WriteError) -> WriteError {
        let balance_after = self.account(&request.resource).balance;
        self.log.push(WriteRecord {
            at: now,
            request,
            result: Err(error.clone()),
            balance_after,
        });
        error
    }

    /// An epoch barrier: the new holder's token is written before it starts work, raising
    /// the high-water mark without touching the balance, so every older token is refused
    /// from here on even if the new holder has not written yet. Admitted by the same rule as
    /// a write; with fencing off it changes nothing (no mark is kept). Not a debit, so it is
    /// not in the write log; the trace records it as its own event.
    pub fn barrier(&mut self, now: Millis, resource: &str, fence: Fence) -> Result<(), WriteError> {
        let account = self.accounts.slot(resource.to_owned(), Account::default);
        admit(self.policy, account.last_fence, Some(fence))?;
        account.raise_mark(self.policy, Some(fence));
        if self.policy.checks_fence() {
            self.commit(now, None);
        }
        Ok(())
    }
}

/// What a standby replays: storage's state after each commit, in commit order, each with its
/// commit time and the row of the write log whose write it committed (none: the opening, a
/// barrier). The ledger keeps its accounts here, the replay's fold the account storage's
/// replies showed; both roll back by [`Commits::roll_back`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Commits<S>(Vec<(Millis, Option<usize>, S)>);

impl<S> Default for Commits<S> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<S> Commits<S> {
    pub fn commit(&mut self, at: Millis, row: Option<usize>, stored: S) {
        self.0.push((at, row, stored));
    }

    /// The first commit a standby `lag` ms behind lacks when promoted at `now`: it has every
    /// commit at least `lag` old (the opening always).
    pub fn first_lacked(&self, now: Millis, lag: Millis) -> usize {
        let lacked = |(at, _, _): &(Millis, _, _)| at.saturating_add(lag) > now;
        (self.0.iter().skip(1).position(lacked)).map_or(self.0.len(), |i| i + 1)
    }

    /// The first commit of the writes in the log's `rows` (a standby that lacks them).
    pub fn first_of(&self, rows: &[usize]) -> usize {
        let of = |(_, row, _): &(Millis, Option<usize>, S)| row.is_some_and(|r| rows.contains(&r));
        self.0.iter().position(of).unwrap_or(self.0.len())
    }

    /// A standby promoted without commit `first` lacks every later one too (it replays
    /// commits in order): storage is as of the commit before it. That state, and the rows
    /// of the writes rolled back.
    pub fn roll_back(&mut self, first: usize) -> (Option<&S>, Vec<usize>) {
        let first = first.max(1).min(self.0.len());
        let lost = (self.0.drain(first..))
            .filter_map(|(_, row, _)| row)
            .collect();
        (self.0.last().map(|(_, _, s)| s), lost)
    }
}

/// The fence check itself, separated so it reads like the rule on the slide.
fn admit(
    policy: FencingPolicy,
    last: Option<Fence>,
    token: Option<Fence>,
) -> Result<(), WriteError> {
    if !policy.checks_fence() {
        return Ok(());
    }
    let token = token.ok_or(WriteError::MissingFence)?;
    match last {
        None => Ok(()),
        Some(last) if policy == FencingPolicy::Strict && token > last => Ok(()),
        Some(last) if policy == FencingPolicy::SameEpoch && token >= last => Ok(()),
        Some(last) => Err(WriteError::StaleFence { token, last }),
    }
}

/// A map over a few keys, kept sorted in one `Vec`: the ledger's accounts and stored
/// results, and the engine's queue, each hold a handful. It iterates, compares, prints and
/// serializes as a `BTreeMap` does; a `BTreeMap`'s node code, instantiated for each key and
/// value type, was 6,188 B of the page's first-screen gzip (measured). The lease table stays
/// a `BTreeMap`: the renewal herd fills it with up to 100,000 keys.
#[derive(Clone, PartialEq, Eq)]
pub(super) struct SortedMap<K, V>(Vec<(K, V)>);

impl<K, V> Default for SortedMap<K, V> {
    fn default() -> Self {
        SortedMap(Vec::new())
    }
}

impl<K: Ord, V> SortedMap<K, V> {
    /// Where `key` is, or where it would go.
    fn find<Q: Ord + ?Sized>(&self, key: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
    {
        self.0.binary_search_by(|(k, _)| k.borrow().cmp(key))
    }

    pub(super) fn get<Q: Ord + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        self.find(key).ok().map(|i| &self.0[i].1)
    }

    /// Sets `key` to `value`, returning the value it replaced.
    pub(super) fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, value)),
            Err(i) => {
                self.0.insert(i, (key, value));
                None
            }
        }
    }

    /// The value at `key`, first set to `new()` if there is none.
    pub(super) fn slot(&mut self, key: K, new: impl FnOnce() -> V) -> &mut V {
        let i = match self.find(&key) {
            Ok(i) => i,
            Err(i) => {
                self.0.insert(i, (key, new()));
                i
            }
        };
        &mut self.0[i].1
    }

    /// Forgets every entry (a failover's rollback of what SELECTs read).
    pub(super) fn clear(&mut self) {
        self.0.clear();
    }

    /// Takes the entry with the smallest key out.
    pub(super) fn pop_first(&mut self) -> Option<(K, V)> {
        (!self.0.is_empty()).then(|| self.0.remove(0))
    }
}

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for SortedMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|(k, v)| (k, v)))
            .finish()
    }
}

impl<K: Serialize, V: Serialize> Serialize for SortedMap<K, V> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

#[cfg(test)]
mod tests {
    use super::{Commits, SortedMap};
    use std::collections::BTreeMap;

    /// A standby lacks the first commit it lacks and every later one, whether that first is
    /// found by the standby's lag (the ledger) or by the lost writes' rows the harness read
    /// (the replay's fold): both roll back to the same state, and lose the same writes.
    #[test]
    fn a_rollback_goes_to_before_the_first_lacked_commit_however_it_is_found() {
        let mut c = Commits::default();
        for (at, row, balance) in [(0, None, 100), (10, Some(0), 90), (11, None, 90)] {
            c.commit(at, row, balance);
        }
        c.commit(12, Some(2), 80);
        c.commit(12, Some(3), 70);
        let (by_lag, by_rows) = (c.first_lacked(15, 4), c.first_of(&[3, 2]));
        assert_eq!((by_lag, by_rows), (3, 3));
        let mut again = c.clone();
        assert_eq!(c.roll_back(by_lag), (Some(&90), vec![2, 3]));
        let none = again.first_lacked(100, 0);
        assert_eq!(again.roll_back(none), (Some(&70), vec![]), "it lacks none");
        assert_eq!(c.roll_back(0), (Some(&100), vec![0]), "never the opening");
    }

    /// The same operations on a `SortedMap` and a `BTreeMap` leave the same entries, in the
    /// same order, and print the same.
    #[test]
    fn sorted_map_is_a_btree_map_for_what_the_ledger_and_queue_do() {
        let (mut ours, mut theirs) = (SortedMap::default(), BTreeMap::new());
        for (i, k) in [5_u32, 1, 9, 1, 3, 9, 0, 7].into_iter().enumerate() {
            assert_eq!(ours.insert(k, i), theirs.insert(k, i));
            *ours.slot(k + 100, || 0) += i;
            *theirs.entry(k + 100).or_insert(0) += i;
            assert_eq!(ours.get(&k), theirs.get(&k));
            assert_eq!(ours.get(&(k + 1)), theirs.get(&(k + 1)));
        }
        assert_eq!(format!("{ours:?}"), format!("{theirs:?}"));
        assert_eq!(
            serde_json::to_string(&SortedMap(vec![("a".to_owned(), 1)])).unwrap(),
            serde_json::to_string(&BTreeMap::from([("a".to_owned(), 1)])).unwrap()
        );
        while let Some(first) = theirs.pop_first() {
            assert_eq!(ours.pop_first(), Some(first));
        }
        assert_eq!(ours.pop_first(), None);
    }
}
