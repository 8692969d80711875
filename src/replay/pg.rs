//! The storage: a real PostgreSQL over its Unix socket, through the `postgres` crate (its
//! blocking client). A statement's error is an error value with its SQLSTATE, so a session
//! the server terminated reads as 25P03 and a lost connection as a closed one.

use std::collections::HashMap;

use fencing_lab::core::{
    Account, EventKind, Fence, FencingPolicy, Observation, Scenario, WriteError,
};
use postgres::types::{FromSql, ToSql};
use postgres::{Client, Config, NoTls, Row, Statement};

use super::{Attempt, Outcome};

pub use postgres::error::SqlState;
pub use postgres::Error;

/// Where the throwaway cluster listens: a Unix socket directory and port, no TCP at all.
#[derive(Debug, Clone)]
pub struct PgAddr {
    pub socket_dir: String,
    pub port: u16,
}

/// One session, and the statements it has prepared. They are kept for the session's life:
/// a dropped statement sends a Close the server may answer with a session-ending error
/// (25P03) that the next statement then never sees.
pub struct Pg {
    client: Client,
    prepared: HashMap<String, Statement>,
}

impl Pg {
    /// Opens a session whose `search_path` is `schema` (one schema per run; empty: the
    /// default).
    pub fn connect(addr: &PgAddr, schema: &str) -> Result<Self, String> {
        let mut cfg = Config::new();
        cfg.host_path(&addr.socket_dir)
            .port(addr.port)
            .user("postgres")
            .dbname("postgres");
        if !schema.is_empty() {
            cfg.options(&format!("-c search_path={schema}"));
        }
        let client = cfg.connect(NoTls).map_err(|e| format!("postgres: {e}"))?;
        let prepared = HashMap::new();
        Ok(Self { client, prepared })
    }

    /// Runs statements as they are (the simple query protocol). An SQL error is the error
    /// value, with its SQLSTATE.
    pub fn batch(&mut self, sql: &str) -> Result<(), Error> {
        self.client.batch_execute(sql)
    }

    /// One statement with its arguments bound: the first column of its one row.
    pub fn call<T: for<'r> FromSql<'r>>(&mut self, sql: &str, args: &[Arg]) -> Result<T, Error> {
        if !self.prepared.contains_key(sql) {
            let st = self.client.prepare(sql)?;
            self.prepared.insert(sql.to_owned(), st);
        }
        self.client.query_one(&self.prepared[sql], args)?.try_get(0)
    }

    /// [`Pg::call`], an error being the harness's failure.
    pub fn value<T: for<'r> FromSql<'r>>(&mut self, sql: &str, args: &[Arg]) -> Result<T, String> {
        self.call(sql, args)
            .map_err(|e| format!("postgres: {e}: {sql}"))
    }
}

/// A statement's argument.
pub type Arg<'a> = &'a (dyn ToSql + Sync);

/// What the storage holds at the end of a run.
pub struct Storage {
    pub balance: i64,
    /// The high-water mark: the result row's epoch where the job publishes, else the fence.
    pub mark: u64,
    pub result: Option<String>,
    side_effects: i64,
    provider: (i64, i64),
    /// The write log's debits and publishes, in order, with their raw tokens.
    pub log: Vec<Attempt>,
}

/// Column `i` of `row`, its SQL type read as `T`.
fn col<'r, T: FromSql<'r>>(row: &'r Row, i: usize) -> Result<T, String> {
    row.try_get(i)
        .map_err(|e| format!("storage column {i}: {e}"))
}

/// Reads back what run `schema` left in the storage.
pub fn read_storage(admin: &mut Pg, schema: &str, sc: &Scenario) -> Result<Storage, String> {
    let s = schema;
    let rows = |admin: &mut Pg, sql: &str| {
        admin
            .client
            .query(sql, &[])
            .map_err(|e| format!("postgres: {e}: {sql}"))
    };
    let acct = rows(admin, &format!(
        "SELECT a.balance, a.fence, r.epoch, r.result, (SELECT count(*) FROM {s}.side_effects), (SELECT count(*) FROM {s}.provider_charges), (SELECT count(*) FROM {s}.provider_calls WHERE outcome = 'deduped') FROM {s}.accounts a JOIN {s}.job_results r ON r.job = a.id WHERE a.id = {};",
        lit(&sc.resource)
    ))?;
    let a = acct.first().ok_or("storage: no account row")?;
    let log = rows(admin, &format!("SELECT writer, token, result FROM {s}.write_log WHERE kind IN ('debit', 'publish') ORDER BY seq;"))?;
    let log = log.iter().map(|r| {
        let token: Option<i64> = col(r, 1)?;
        let (writer, code) = (col(r, 0)?, col(r, 2)?);
        Ok(Attempt {
            writer,
            token: token.map(|t| t as u64),
            code,
        })
    });
    let mark: i64 = col(a, if sc.publishes() { 2 } else { 1 })?;
    Ok(Storage {
        balance: col(a, 0)?,
        mark: mark as u64,
        result: col(a, 3)?,
        side_effects: col(a, 4)?,
        provider: (col(a, 5)?, col(a, 6)?),
        log: log.collect::<Result<_, String>>()?,
    })
}

impl Storage {
    /// The account as the core's fold takes it: the server's, not the fold's.
    pub fn account(&self, sc: &Scenario) -> Account {
        let fenced = sc.policy != FencingPolicy::Off && self.mark > 0;
        let last_write = self.log.iter().rev().find(|a| a.code == "ok");
        Account {
            balance: self.balance,
            last_fence: fenced.then_some(Fence(self.mark)),
            last_write_fence: last_write.and_then(|a| a.token).map(Fence),
            result: self.result.clone(),
        }
    }

    /// The outcome the storage shows. An UPDATE on a terminated session never reached the
    /// server, so the write log has no row for it; the client saw it fail (25P03), and it is
    /// put where it happened, among the writes the clients saw applied.
    pub fn outcome(&self, seen: &[Observation]) -> Outcome {
        let mut applied: Vec<&Observation> = (seen.iter())
            .filter(|o| matches!(o.kind, EventKind::WriteApplied { .. }))
            .collect();
        applied.sort_by_key(|o| o.at);
        let mut log = self.log.iter().cloned();
        let mut writes = Vec::new();
        for o in applied {
            let ended = WriteError::SessionTerminated;
            match (&o.kind, &o.request) {
                (EventKind::WriteApplied { result: Err(e), .. }, Some(r)) if *e == ended => {
                    let (writer, code) = (r.writer.clone(), "session_ended".to_owned());
                    writes.push(Attempt {
                        writer,
                        token: None,
                        code,
                    });
                }
                _ => writes.extend(log.next()),
            }
        }
        writes.extend(log);
        Outcome {
            balance: self.balance,
            last_fence: (self.mark > 0).then_some(self.mark),
            result: self.result.clone(),
            side_effects: self.side_effects,
            provider: self.provider,
            writes,
        }
    }
}

/// SQL string literal.
pub fn lit(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// The schema of one run: the account row with its fence high-water mark, the job's result
/// row with its epoch, the applied intents under a unique constraint, an append-only write
/// log, a token sequence (Redlock's counterfactual counter), and the writes themselves as
/// one function per call so check, update and log are one transaction.
///
/// The policy is one SQL predicate, `admits(policy, mark, tok)`: strict `mark < tok`,
/// same-epoch `mark <= tok`, off always. The debit is `UPDATE accounts … WHERE id = $id AND
/// admits(policy, fence, $tok)`, raising the fence (not off); the publish the same on the
/// result row and its epoch; the barrier raises the high-water mark (the result row's epoch
/// when `on_results`, else the account's fence) by the same rule, so it can never lower it,
/// and off it changes nothing. The fence check comes before the intent check, as in the core's
/// ledger. `p_live` is the sequencer check's answer, asked of etcd by the harness acting as
/// the resource (false: the write's lease is not the live one); a token the rule admits is
/// then refused as `stale_sequencer`, so the rule still refuses first, as in the core.
pub fn schema_sql(schema: &str, sc: &Scenario) -> String {
    let (balance, first_token) = (sc.initial_balance, sc.first_fence);
    format!(
        r#"
CREATE SCHEMA {schema};
SET search_path = {schema};
CREATE TABLE accounts (id text PRIMARY KEY, balance bigint NOT NULL, fence bigint NOT NULL DEFAULT 0);
CREATE TABLE intents (account text NOT NULL, key text NOT NULL, CONSTRAINT intents_once UNIQUE (account, key));
CREATE TABLE write_log (
  seq bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT clock_timestamp(),
  kind text NOT NULL, account text NOT NULL, writer text NOT NULL, token bigint, amount bigint,
  idempotency_key text, published text, result text NOT NULL, balance_after bigint NOT NULL);
CREATE FUNCTION write_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'write_log is append-only'; END $$;
CREATE TRIGGER write_log_append_only BEFORE UPDATE OR DELETE ON write_log
  FOR EACH ROW EXECUTE FUNCTION write_log_append_only();
CREATE TABLE side_effects (seq bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT clock_timestamp(),
  actor text NOT NULL, what text NOT NULL, lease_live boolean NOT NULL);
INSERT INTO accounts (id, balance) VALUES ({res}, {balance});
CREATE TABLE job_results (job text PRIMARY KEY, result text, epoch bigint NOT NULL DEFAULT 0);
INSERT INTO job_results (job) VALUES ({res});
CREATE SEQUENCE tokens START {first_token};
-- The outside provider: it never sees a token, and charges once per idempotency key.
CREATE TABLE provider_charges (idempotency_key text PRIMARY KEY, actor text NOT NULL, what text NOT NULL,
  at timestamptz NOT NULL DEFAULT clock_timestamp());
CREATE TABLE provider_calls (seq bigserial PRIMARY KEY, actor text NOT NULL, idempotency_key text NOT NULL,
  outcome text NOT NULL);

CREATE FUNCTION admits(policy text, mark bigint, tok bigint) RETURNS boolean LANGUAGE sql AS $$
  SELECT policy = 'off' OR mark < tok OR (policy = 'same_epoch' AND mark = tok) $$;

CREATE FUNCTION debit(policy text, p_id text, p_writer text, p_tok bigint, p_amt bigint, p_key text,
  p_live boolean DEFAULT true)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE code text := 'ok'; bal bigint;
BEGIN
  IF policy <> 'off' AND p_tok IS NULL THEN
    code := 'missing_fence';
  ELSIF policy <> 'off' AND NOT p_live
      AND EXISTS (SELECT 1 FROM accounts WHERE id = p_id AND admits(policy, fence, p_tok)) THEN
    code := 'stale_sequencer';
  ELSE
    BEGIN
      UPDATE accounts SET balance = balance - p_amt,
          fence = CASE WHEN policy = 'off' THEN fence ELSE p_tok END
        WHERE id = p_id AND admits(policy, fence, p_tok);
      IF NOT FOUND THEN
        code := 'stale_fence';
      ELSIF p_key IS NOT NULL THEN
        INSERT INTO intents (account, key) VALUES (p_id, p_key);
      END IF;
    EXCEPTION WHEN unique_violation THEN
      code := 'duplicate_intent';  -- the block's UPDATE is rolled back with it
    END;
  END IF;
  SELECT balance INTO bal FROM accounts WHERE id = p_id;
  INSERT INTO write_log (kind, account, writer, token, amount, idempotency_key, result, balance_after)
    VALUES ('debit', p_id, p_writer, p_tok, p_amt, p_key, code, bal);
  RETURN code || '|' || bal;
END $$;

CREATE FUNCTION publish(policy text, p_id text, p_writer text, p_tok bigint, p_result text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE code text := 'ok'; bal bigint;
BEGIN
  IF policy <> 'off' AND p_tok IS NULL THEN
    code := 'missing_fence';
  ELSE
    UPDATE job_results SET result = p_result,
        epoch = CASE WHEN policy = 'off' THEN epoch ELSE p_tok END
      WHERE job = p_id AND admits(policy, epoch, p_tok);
    IF NOT FOUND THEN code := 'stale_fence'; END IF;
  END IF;
  SELECT balance INTO bal FROM accounts WHERE id = p_id;
  INSERT INTO write_log (kind, account, writer, token, amount, published, result, balance_after)
    VALUES ('publish', p_id, p_writer, p_tok, 0, p_result, code, bal);
  RETURN code;
END $$;

-- The provider's call, made only after the caller's last claim row was accepted.
CREATE FUNCTION provider_call(p_actor text, p_key text, p_what text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE outcome text := 'not_called';
BEGIN
  IF (SELECT result FROM write_log WHERE writer = p_actor AND kind = 'publish' ORDER BY seq DESC LIMIT 1) = 'ok' THEN
    INSERT INTO provider_charges (idempotency_key, actor, what) VALUES (p_key, p_actor, p_what)
      ON CONFLICT (idempotency_key) DO NOTHING;
    outcome := CASE WHEN FOUND THEN 'charged' ELSE 'deduped' END;
    INSERT INTO provider_calls (actor, idempotency_key, outcome) VALUES (p_actor, p_key, outcome);
  END IF;
  RETURN outcome;
END $$;

CREATE FUNCTION barrier(policy text, p_id text, p_writer text, p_tok bigint, on_results boolean)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE code text := 'ok'; bal bigint;
BEGIN
  IF policy <> 'off' THEN
    IF on_results THEN
      UPDATE job_results SET epoch = p_tok WHERE job = p_id AND admits(policy, epoch, p_tok);
    ELSE
      UPDATE accounts SET fence = p_tok WHERE id = p_id AND admits(policy, fence, p_tok);
    END IF;
    IF NOT FOUND THEN code := 'stale_fence'; END IF;
  END IF;
  SELECT balance INTO bal FROM accounts WHERE id = p_id;
  INSERT INTO write_log (kind, account, writer, token, result, balance_after)
    VALUES ('barrier', p_id, p_writer, p_tok, code, bal);
  RETURN code;
END $$;
"#,
        res = lit(&sc.resource),
    )
}
