//! The storage: a real PostgreSQL over its Unix socket, through the `postgres` crate (its
//! blocking client). A statement's error is an error value with its SQLSTATE, so a session
//! the server terminated reads as 25P03 and a lost connection as a closed one.

use postgres::{Client, Config, NoTls, SimpleQueryMessage};

pub use postgres::error::SqlState;
pub use postgres::Error;

/// Where the throwaway cluster listens: a Unix socket directory and port, no TCP at all.
#[derive(Debug, Clone)]
pub struct PgAddr {
    pub socket_dir: String,
    pub port: u16,
}

/// One session.
pub struct Pg {
    client: Client,
}

impl Pg {
    /// Opens a session whose `search_path` is `schema` (one schema per run).
    pub fn connect(addr: &PgAddr, schema: Option<&str>) -> Result<Self, String> {
        Self::open(addr, schema, None)
    }

    /// [`Pg::connect`] with `application_name` set, so `pg_stat_activity` and
    /// `pg_blocking_pids` can name the session.
    pub fn connect_as(addr: &PgAddr, schema: &str, app: &str) -> Result<Self, String> {
        Self::open(addr, Some(schema), Some(app))
    }

    fn open(addr: &PgAddr, schema: Option<&str>, app: Option<&str>) -> Result<Self, String> {
        let mut cfg = Config::new();
        cfg.host_path(&addr.socket_dir)
            .port(addr.port)
            .user("postgres")
            .dbname("postgres");
        if let Some(s) = schema {
            cfg.options(&format!("-c search_path={s}"));
        }
        if let Some(a) = app {
            cfg.application_name(a);
        }
        let client = cfg.connect(NoTls).map_err(|e| format!("postgres: {e}"))?;
        Ok(Self { client })
    }

    /// Runs one or more statements (the simple query protocol) and returns the rows, each
    /// as its columns joined by `|` (NULL as empty). An SQL error is the error value.
    pub fn statement(&mut self, sql: &str) -> Result<Vec<String>, Error> {
        let rows = self.client.simple_query(sql)?;
        Ok(rows
            .iter()
            .filter_map(|m| match m {
                SimpleQueryMessage::Row(r) => Some(
                    (0..r.len())
                        .map(|i| r.get(i).unwrap_or_default())
                        .collect::<Vec<_>>()
                        .join("|"),
                ),
                _ => None,
            })
            .collect())
    }

    /// [`Pg::statement`], an error being the harness's failure.
    pub fn query(&mut self, sql: &str) -> Result<Vec<String>, String> {
        self.statement(sql)
            .map_err(|e| format!("postgres: {e}: {sql}"))
    }

    /// One value.
    pub fn one(&mut self, sql: &str) -> Result<String, String> {
        self.query(sql)?
            .into_iter()
            .next()
            .ok_or_else(|| format!("no result for {sql}"))
    }
}

/// SQL string literal.
pub fn lit(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// SQL literal or NULL.
pub fn opt_lit(s: Option<&str>) -> String {
    s.map_or_else(|| "NULL".to_owned(), lit)
}

/// The schema of one run: the account row with its fence high-water mark, the job's result
/// row with its epoch, the applied intents under a unique constraint, an append-only write
/// log, a token sequence (Redlock's counterfactual counter), and the writes themselves as
/// one function per call so check, update and log are one transaction.
///
/// The debit is exactly the statement of the policy:
/// strict `… WHERE id = $id AND fence < $tok`, same-epoch `… AND fence <= $tok`, off the
/// plain `UPDATE`. The fence check comes before the intent check, as in the core's ledger.
/// `p_live` is the sequencer check's answer, asked of etcd by the harness acting as the
/// resource (false: the write's lease is not the live one); a token the rule admits is then
/// refused as `stale_sequencer`, so the rule still refuses first, as in the core.
/// The publish is the same rule on the result row: `UPDATE job_results SET result = $r,
/// epoch = $tok WHERE job = $id AND epoch < $tok` (strict), `<=` (same-epoch), or plain (off).
/// The barrier raises the high-water mark (the result row's epoch when `on_results`, else the
/// account's fence) by the same rule, so it can never lower it; off, it changes nothing.
pub fn schema_sql(schema: &str, resource: &str, balance: i64, first_token: u64) -> String {
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

CREATE FUNCTION debit(policy text, p_id text, p_writer text, p_tok bigint, p_amt bigint, p_key text,
  p_live boolean DEFAULT true)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE code text := 'ok'; bal bigint;
BEGIN
  IF policy <> 'off' AND p_tok IS NULL THEN
    code := 'missing_fence';
  ELSIF policy <> 'off' AND NOT p_live AND EXISTS (SELECT 1 FROM accounts WHERE id = p_id
      AND (fence < p_tok OR (policy = 'same_epoch' AND fence = p_tok))) THEN
    -- The rule admits the token, but the lock service said its lease is not the live one.
    code := 'stale_sequencer';
  ELSE
    BEGIN
      IF policy = 'strict' THEN
        UPDATE accounts SET balance = balance - p_amt, fence = p_tok WHERE id = p_id AND fence < p_tok;
      ELSIF policy = 'same_epoch' THEN
        UPDATE accounts SET balance = balance - p_amt, fence = p_tok WHERE id = p_id AND fence <= p_tok;
      ELSE
        UPDATE accounts SET balance = balance - p_amt WHERE id = p_id;
      END IF;
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
    IF policy = 'strict' THEN
      UPDATE job_results SET result = p_result, epoch = p_tok WHERE job = p_id AND epoch < p_tok;
    ELSIF policy = 'same_epoch' THEN
      UPDATE job_results SET result = p_result, epoch = p_tok WHERE job = p_id AND epoch <= p_tok;
    ELSE
      UPDATE job_results SET result = p_result WHERE job = p_id;
    END IF;
    IF NOT FOUND THEN code := 'stale_fence'; END IF;
  END IF;
  SELECT balance INTO bal FROM accounts WHERE id = p_id;
  INSERT INTO write_log (kind, account, writer, token, amount, published, result, balance_after)
    VALUES ('publish', p_id, p_writer, p_tok, 0, p_result, code, bal);
  RETURN code;
END $$;

CREATE FUNCTION barrier(policy text, p_id text, p_writer text, p_tok bigint, on_results boolean)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE code text := 'ok'; bal bigint;
BEGIN
  IF policy IN ('strict', 'same_epoch') THEN
    IF on_results THEN
      UPDATE job_results SET epoch = p_tok
        WHERE job = p_id AND (epoch < p_tok OR (policy = 'same_epoch' AND epoch = p_tok));
    ELSE
      UPDATE accounts SET fence = p_tok
        WHERE id = p_id AND (fence < p_tok OR (policy = 'same_epoch' AND fence = p_tok));
    END IF;
    IF NOT FOUND THEN code := 'stale_fence'; END IF;
  END IF;
  SELECT balance INTO bal FROM accounts WHERE id = p_id;
  INSERT INTO write_log (kind, account, writer, token, result, balance_after)
    VALUES ('barrier', p_id, p_writer, p_tok, code, bal);
  RETURN code;
END $$;
"#,
        res = lit(resource),
    )
}
