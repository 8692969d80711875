//! The storage: a real PostgreSQL over its Unix socket, through the `postgres` crate (its
//! blocking client). A statement's error is an error value with its SQLSTATE, so a session
//! the server terminated reads as 25P03 and a lost connection as a closed one.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use fencing_lab::core::{
    Account, Fence, FencingPolicy, Millis, Observation, Refusal, Scenario, Seen, WriteRequest,
};
use postgres::types::{FromSql, ToSql};
use postgres::{Client, NoTls, Statement};

use super::outcome::{Attempt, Outcome};

pub use postgres::error::SqlState;
pub use postgres::{Config, Error};

/// How long a session whose server died retries connecting to one that takes writes.
const RECONNECT_FOR: Duration = Duration::from_secs(5);

/// One session, and the statements it has prepared. They are kept for the session's life:
/// a dropped statement sends a Close the server may answer with a session-ending error
/// (25P03) that the next statement then never sees.
pub struct Pg {
    client: Client,
    prepared: HashMap<String, Statement>,
    /// Where to connect again when storage has failed over: a connection string listing a
    /// primary and its standby (`None`: one server, a lost session stays lost).
    again: Option<Config>,
}

impl Pg {
    /// Opens a session on the cluster `cfg` names whose `search_path` is `schema` (one
    /// schema per run; empty: the default).
    pub fn connect(cfg: &Config, schema: &str) -> Result<Self, String> {
        let mut cfg = cfg.clone();
        if !schema.is_empty() {
            cfg.options(&format!("-c search_path={schema}"));
        }
        let client = cfg.connect(NoTls).map_err(|e| format!("postgres: {e}"))?;
        let prepared = HashMap::new();
        let again = (cfg.get_hosts().len() > 1).then_some(cfg);
        Ok(Self {
            client,
            prepared,
            again,
        })
    }

    /// With a standby to fail over to: checks the session is still there (an empty query, as
    /// a pool checks a connection it hands out) and, if its server died, connects again to
    /// whichever server now takes writes, retrying while none does (the standby not yet
    /// promoted), as a pool does, for up to [`RECONNECT_FOR`]. Nothing was sent on the dead
    /// session.
    fn check(&mut self) -> Result<(), Error> {
        let Some(cfg) = &self.again else {
            return Ok(());
        };
        if self.client.is_valid(RECONNECT_FOR).is_ok() {
            return Ok(());
        }
        let t0 = Instant::now();
        self.client = loop {
            match cfg.connect(NoTls) {
                Ok(client) => break client,
                Err(e) if t0.elapsed() > RECONNECT_FOR => return Err(e),
                Err(_) => std::thread::sleep(Duration::from_millis(2)),
            }
        };
        self.prepared.clear();
        Ok(())
    }

    /// Runs statements as they are (the simple query protocol). An SQL error is the error
    /// value, with its SQLSTATE.
    pub fn batch(&mut self, sql: &str) -> Result<(), Error> {
        self.check()?;
        self.client.batch_execute(sql)
    }

    /// One statement with its arguments bound: the first column of its one row.
    pub fn call<T: for<'r> FromSql<'r>>(&mut self, sql: &str, args: &[Arg]) -> Result<T, Error> {
        self.check()?;
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

    /// A debit or a publish under `policy`, through the storage's `apply`: its reply,
    /// `code|balance`, and after a refused token `|mark`, the high-water mark it met. `live`: the sequencer check's answer (true where none is asked).
    pub fn write(&mut self, w: &WriteRequest, policy: &str, live: bool) -> Result<String, Error> {
        let (tok, publish) = (w.fence.map(|f| f.0 as i64), w.publish.is_some());
        let kind = if publish { "publish" } else { "debit" };
        let args: [Arg; 5] = [&kind, &policy, &w.resource, &w.writer, &tok];
        let more: [Arg; 5] = [&w.amount, &w.idempotency_key, &w.publish, &live, &publish];
        let sql = "SELECT apply($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";
        self.call(sql, &[args, more].concat())
    }

    /// A debit checked in two statements (`StorageCheck::ReadThenWrite`), each its own
    /// transaction in READ COMMITTED: the SELECT of the last fence now, then `between` (the
    /// client's gap, told the fence the SELECT read), then, if the token passed, the UPDATE,
    /// which does not check it again (`apply_read`); a token that did not pass goes through
    /// `apply`, which refuses it. A publish is one statement, as everywhere else.
    pub fn write_read_first(
        &mut self,
        w: &WriteRequest,
        policy: &str,
        between: impl FnOnce(i64),
    ) -> Result<String, Error> {
        if w.publish.is_some() {
            return self.write(w, policy, true);
        }
        let tok = w.fence.map(|f| f.0 as i64);
        let sql = "SELECT fence || ':' || coalesce(admits($1, fence, $2)::text, 'false') FROM accounts WHERE id = $3";
        let read: String = self.call(sql, &[&policy, &tok, &w.resource])?;
        let (fence, passed) = read.split_once(':').unwrap_or((&read, "false"));
        between(fence.parse().unwrap_or(-1));
        let passed = Some(passed == "true");
        if passed != Some(true) {
            return self.write(w, policy, true);
        }
        let args: [Arg; 6] = [
            &policy,
            &w.resource,
            &w.writer,
            &tok,
            &w.amount,
            &w.idempotency_key,
        ];
        self.call("SELECT apply_read($1, $2, $3, $4, $5, $6)", &args)
    }
}

/// Storage's reply (`ok|balance`, `stale_fence|balance|mark`, or the client's own
/// `session_ended`) to a write of `token` under idempotency key `key`: the balance it left
/// (a publish's is the fold's), or the refusal, with the high-water mark a stale token met
/// or the lease the sequencer check found `live`.
pub fn reply_to(
    (token, key): (Option<Fence>, Option<&str>),
    (publish, live): (bool, Option<Fence>),
    reply: &str,
) -> Result<Result<Option<i64>, Refusal>, String> {
    let mut fields = reply.split('|');
    let code = fields.next().unwrap_or(reply);
    let number = |f: Option<&str>| f.map(str::parse::<i64>).transpose();
    let bad = |_| format!("storage said {reply:?}");
    let n = number(fields.next()).map_err(bad)?.unwrap_or(0);
    let mark = number(fields.next()).map_err(bad)?.map(|m| Fence(m as u64));
    Ok(match code {
        "ok" => Ok((!publish).then_some(n)),
        code => Err(Refusal::from_code(code, (token, key), n, (mark, live))
            .ok_or_else(|| format!("storage answered {reply:?}"))?),
    })
}

/// What storage did with a write, from its reply ([`reply_to`]; `live`: the lease the
/// sequencer check found live), as an observation on the writer's behalf; `grant` is which
/// of its grants the writer sent it under, and `believes` what it believes as the reply
/// comes (`None` on a delayed write's own thread), as it knew.
pub fn applied(
    (idx, w, grant, believes): (usize, &WriteRequest, Option<usize>, Option<bool>),
    (sent_at, at): (Millis, Millis),
    reply: &str,
    live: Option<Fence>,
) -> Result<Observation, String> {
    let key = w.idempotency_key.as_deref();
    let result = reply_to((w.fence, key), (w.publish.is_some(), live), reply)?;
    // Which later grant superseded the write's lease is the fold's.
    let seen = Seen::WriteApplied {
        fence: w.fence,
        amount: w.amount,
        sent_at,
        result,
        publish: w.publish.clone(),
    };
    let (actor, request) = (Some(idx), Some(w.clone()));
    Ok(Observation {
        at,
        actor,
        seen,
        request,
        grant: w.fence.and(grant),
        believes,
    })
}

/// A statement's argument.
pub type Arg<'a> = &'a (dyn ToSql + Sync);

/// What the run left in the storage, its writes the write log's debits and publishes in
/// order, with their raw tokens (`admin`'s `search_path` is the run's schema: [`schema_sql`]
/// sets it).
pub fn read_storage(admin: &mut Pg, sc: &Scenario) -> Result<Outcome, Error> {
    let account = "SELECT a.balance, CASE WHEN $2 THEN r.epoch ELSE a.fence END, r.result,
        (SELECT count(*) FROM side_effects), (SELECT count(*) FROM provider_charges),
        (SELECT coalesce(sum(calls - 1), 0)::bigint FROM provider_charges)
      FROM accounts a JOIN job_results r ON r.job = a.id WHERE a.id = $1";
    let a = (admin.client).query_one(account, &[&sc.resource, &sc.publishes()])?;
    let writes = write_log(admin, None)?;
    let mark: i64 = a.try_get(1)?;
    Ok(Outcome {
        balance: a.try_get(0)?,
        last_fence: (mark > 0).then_some(mark as u64),
        result: a.try_get(2)?,
        side_effects: a.try_get(3)?,
        provider: (a.try_get(4)?, a.try_get(5)?),
        writes,
    })
}

/// The write log's debits and publishes in order, with their raw tokens; with `before` (a
/// server timestamp), only the rows written before it.
pub fn write_log(pg: &mut Pg, before: Option<&str>) -> Result<Vec<Attempt>, Error> {
    let log = "SELECT writer, token, result FROM write_log WHERE kind <> 'barrier'
        AND ($1::text IS NULL OR at < $1::text::timestamptz) ORDER BY seq";
    let mut writes = Vec::new();
    for r in pg.client.query(log, &[&before])? {
        let token: Option<i64> = r.try_get(1)?;
        writes.push(Attempt {
            writer: r.try_get(0)?,
            token: token.map(|t| t as u64),
            code: r.try_get(2)?,
        });
    }
    Ok(writes)
}

/// The account as the core's fold takes it: the server's, not the fold's.
pub fn account(stored: &Outcome, sc: &Scenario) -> Account {
    let last_write = stored.writes.iter().rev().find(|a| a.code == "ok");
    let fenced = sc.policy != FencingPolicy::Off;
    Account {
        balance: stored.balance,
        last_fence: stored.last_fence.filter(|_| fenced).map(Fence),
        last_write_fence: last_write.and_then(|a| a.token).map(Fence),
        result: stored.result.clone(),
    }
}

/// An UPDATE on a terminated session never reached the server, so the write log has no row
/// for it; the client saw it fail (25P03), and it is put where it happened, among the writes
/// the clients saw applied.
pub fn add_ended_sessions(stored: &mut Outcome, seen: &[Observation]) {
    let mut applied: Vec<&Observation> = (seen.iter())
        .filter(|o| matches!(o.seen, Seen::WriteApplied { .. }))
        .collect();
    applied.sort_by_key(|o| o.at);
    for (i, o) in applied.into_iter().enumerate() {
        let ended = Err(Refusal::SessionTerminated);
        if let (Seen::WriteApplied { result, .. }, Some(r)) = (&o.seen, &o.request) {
            if *result == ended {
                let ended = Attempt {
                    writer: r.writer.clone(),
                    token: None,
                    code: "session_ended".into(),
                };
                stored.writes.insert(i.min(stored.writes.len()), ended);
            }
        }
    }
}

/// The schema of one run: the account row with its fence high-water mark, the job's result
/// row with its epoch, the applied intents under a unique constraint, an append-only write
/// log, a token sequence (Redlock's counterfactual counter), the outside systems that never
/// see a token, and every write as one function call, so check, update and log are one
/// transaction.
///
/// The policy is one SQL predicate, `admits(policy, mark, tok)`: strict `mark < tok`,
/// same-epoch `mark <= tok`, off always. A debit is `UPDATE accounts … WHERE id = $id AND
/// admits(policy, fence, $tok)`, raising the fence (not off); a publish the same on the
/// result row and its epoch; a barrier is either with nothing to change but the high-water
/// mark, so it can never lower it, and off it changes nothing. The fence check comes before
/// the intent check, as in the core's ledger. `p_live` is the sequencer check's answer, asked
/// of the lock service by the harness acting as the resource (false: the write's lease is not
/// the live one); a token the rule admits is then refused as `stale_sequencer`, so the rule
/// still refuses first, as in the core. A `stale_fence` reply ends with the mark the token
/// met, read right after the refusal (a refusal changes no mark, and only a higher one can
/// commit between the two statements).
pub fn schema_sql(schema: &str, sc: &Scenario) -> String {
    let (balance, first_token) = (sc.initial_balance, sc.first_fence);
    format!(
        r#"
CREATE SCHEMA {schema};
SET search_path = {schema};
CREATE TABLE accounts (id text PRIMARY KEY, balance bigint NOT NULL, fence bigint NOT NULL DEFAULT 0);
INSERT INTO accounts (id, balance) VALUES ({res}, {balance});
CREATE TABLE job_results (job text PRIMARY KEY, result text, epoch bigint NOT NULL DEFAULT 0);
INSERT INTO job_results (job) VALUES ({res});
CREATE TABLE intents (account text NOT NULL, key text NOT NULL, CONSTRAINT intents_once UNIQUE (account, key));
CREATE TABLE write_log (
  seq bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT clock_timestamp(),
  kind text NOT NULL, account text NOT NULL, writer text NOT NULL, token bigint, amount bigint,
  idempotency_key text, published text, result text NOT NULL, balance_after bigint NOT NULL);
CREATE FUNCTION write_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'write_log is append-only'; END $$;
CREATE TRIGGER write_log_append_only BEFORE UPDATE OR DELETE ON write_log
  FOR EACH ROW EXECUTE FUNCTION write_log_append_only();
CREATE SEQUENCE tokens START {first_token};
CREATE TABLE side_effects (seq bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT clock_timestamp(),
  actor text NOT NULL, what text NOT NULL, lease_live boolean NOT NULL);
-- The outside provider: it charges once per idempotency key and counts the calls it deduped.
CREATE TABLE provider_charges (idempotency_key text PRIMARY KEY, actor text NOT NULL, what text NOT NULL,
  calls int NOT NULL DEFAULT 1, at timestamptz NOT NULL DEFAULT clock_timestamp());

CREATE FUNCTION admits(policy text, mark bigint, tok bigint) RETURNS boolean LANGUAGE sql AS $$
  SELECT policy = 'off' OR mark < tok OR (policy = 'same_epoch' AND mark = tok) $$;

CREATE FUNCTION apply(p_kind text, policy text, p_id text, p_writer text, p_tok bigint, p_amt bigint,
  p_key text, p_result text, p_live boolean, on_results boolean)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE code text := 'ok'; bal bigint; mark bigint;
BEGIN
  IF policy <> 'off' AND p_tok IS NULL THEN
    code := 'missing_fence';
  ELSIF policy <> 'off' AND NOT p_live
      AND EXISTS (SELECT 1 FROM accounts WHERE id = p_id AND admits(policy, fence, p_tok)) THEN
    code := 'stale_sequencer';
  ELSIF on_results THEN
    UPDATE job_results SET result = coalesce(p_result, result),
        epoch = CASE WHEN policy = 'off' THEN epoch ELSE p_tok END
      WHERE job = p_id AND admits(policy, epoch, p_tok);
    IF NOT FOUND THEN
      code := 'stale_fence';
      SELECT epoch INTO mark FROM job_results WHERE job = p_id;
    END IF;
  ELSE
    BEGIN
      UPDATE accounts SET balance = balance - p_amt,
          fence = CASE WHEN policy = 'off' THEN fence ELSE p_tok END
        WHERE id = p_id AND admits(policy, fence, p_tok);
      IF NOT FOUND THEN
        code := 'stale_fence';
        SELECT fence INTO mark FROM accounts WHERE id = p_id;
      ELSIF p_key IS NOT NULL THEN
        INSERT INTO intents (account, key) VALUES (p_id, p_key);
      END IF;
    EXCEPTION WHEN unique_violation THEN
      code := 'duplicate_intent';  -- the block's UPDATE is rolled back with it
    END;
  END IF;
  SELECT balance INTO bal FROM accounts WHERE id = p_id;
  INSERT INTO write_log (kind, account, writer, token, amount, idempotency_key, published, result, balance_after)
    VALUES (p_kind, p_id, p_writer, p_tok, p_amt, p_key, p_result, code, bal);
  RETURN code || '|' || bal || coalesce('|' || mark, '');
END $$;

-- The UPDATE of a debit whose fence a SELECT already checked: it does not check it again.
-- GREATEST keeps the mark from going down when an older token's UPDATE commits last.
CREATE FUNCTION apply_read(policy text, p_id text, p_writer text, p_tok bigint, p_amt bigint, p_key text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE code text := 'ok'; bal bigint;
BEGIN
  BEGIN
    UPDATE accounts SET balance = balance - p_amt,
        fence = CASE WHEN policy = 'off' THEN fence ELSE GREATEST(fence, p_tok) END
      WHERE id = p_id;
    IF p_key IS NOT NULL THEN
      INSERT INTO intents (account, key) VALUES (p_id, p_key);
    END IF;
  EXCEPTION WHEN unique_violation THEN
    code := 'duplicate_intent';
  END;
  SELECT balance INTO bal FROM accounts WHERE id = p_id;
  INSERT INTO write_log (kind, account, writer, token, amount, idempotency_key, published, result, balance_after)
    VALUES ('debit', p_id, p_writer, p_tok, p_amt, p_key, NULL, code, bal);
  RETURN code || '|' || bal;
END $$;

-- The provider's call, made only after the caller's last claim row was accepted.
CREATE FUNCTION provider_call(p_actor text, p_key text, p_what text) RETURNS text LANGUAGE sql AS $$
  WITH claim AS (SELECT result FROM write_log WHERE writer = p_actor AND kind = 'publish' ORDER BY seq DESC LIMIT 1),
  call AS (INSERT INTO provider_charges AS c (idempotency_key, actor, what)
    SELECT p_key, p_actor, p_what FROM claim WHERE result = 'ok'
    ON CONFLICT (idempotency_key) DO UPDATE SET calls = c.calls + 1 RETURNING calls)
  SELECT coalesce((SELECT CASE calls WHEN 1 THEN 'charged' ELSE 'deduped' END FROM call), 'not_called') $$;
"#,
        res = format!("'{}'", sc.resource.replace('\'', "''")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stale token's refusal carries the mark storage's reply names; a reply without one
    /// is the harness's failure, not a refusal with a made-up mark.
    #[test]
    fn a_stale_reply_names_the_mark_the_token_met() {
        let (tok, key) = (Some(Fence(33)), None);
        let stale = Refusal::StaleFence {
            token: Fence(33),
            last: Fence(34),
        };
        assert_eq!(
            reply_to((tok, key), (false, None), "stale_fence|90|34"),
            Ok(Err(stale))
        );
        assert!(reply_to((tok, key), (false, None), "stale_fence|90").is_err());
        assert_eq!(
            reply_to((tok, key), (false, None), "ok|80"),
            Ok(Ok(Some(80)))
        );
        assert_eq!(reply_to((tok, key), (true, None), "ok|80"), Ok(Ok(None)));
        let dup = Refusal::DuplicateIntent {
            key: "k".into(),
            original_balance: 90,
        };
        let reply = reply_to((tok, Some("k")), (false, None), "duplicate_intent|90");
        assert_eq!(reply, Ok(Err(dup)));
    }
}
