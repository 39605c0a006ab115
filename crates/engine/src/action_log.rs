//! Asynchronous actions' log, in Grafton's own schema (`grafton_catalog.action_log`
//! on PostgreSQL, `grafton_catalog_action_log` in the SQLite file): each call
//! written by its mutation (`created`), claimed by one instance's worker
//! (`processing`, a claim that expires if the instance dies), and finished with
//! the handler's output (`completed`) or its error (`error`). A result is read
//! by its id and, for every role but admin, only by the session that made it.

use grafton_execute::{Database, ExecuteError};
use grafton_sql::{Dialect, Param, ParamValue, SqlType, Statement};
use serde_json::{json, Map, Value};
use std::time::Duration;

/// How long one statement on the log may run.
const STATEMENT_TIMEOUT: Duration = Duration::from_secs(30);

/// Now, as the SQLite logs write times (UTC, milliseconds; they sort as text).
pub const NOW: &str = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

/// A version-4 UUID's text, made in SQLite's SQL.
pub const NEW_ID: &str = "(SELECT lower(substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-4' || \
  substr(h, 14, 3) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(h, 18, 3) || \
  '-' || substr(h, 21, 12)) FROM (SELECT hex(randomblob(16)) AS h))";

const POSTGRES_DDL: &str = "
CREATE SCHEMA IF NOT EXISTS grafton_catalog;
CREATE TABLE IF NOT EXISTS grafton_catalog.action_log (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  action_name text NOT NULL,
  input_payload jsonb NOT NULL,
  request_headers jsonb NOT NULL DEFAULT '[]',
  session_variables jsonb NOT NULL,
  response_payload jsonb,
  errors jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  response_received_at timestamptz,
  status text NOT NULL DEFAULT 'created'
    CHECK (status IN ('created', 'processing', 'completed', 'error')),
  locked_at timestamptz,
  locked_by text
);
CREATE INDEX IF NOT EXISTS action_log_pending ON grafton_catalog.action_log (created_at)
  WHERE status IN ('created', 'processing');
CREATE INDEX IF NOT EXISTS action_log_done ON grafton_catalog.action_log (response_received_at)
  WHERE status IN ('completed', 'error');
";

const SQLITE_DDL: &str = "
CREATE TABLE IF NOT EXISTS grafton_catalog_action_log (
  id TEXT PRIMARY KEY,
  action_name TEXT NOT NULL,
  input_payload TEXT NOT NULL,
  request_headers TEXT NOT NULL DEFAULT '[]',
  session_variables TEXT NOT NULL,
  response_payload TEXT,
  errors TEXT,
  created_at TEXT NOT NULL,
  response_received_at TEXT,
  status TEXT NOT NULL DEFAULT 'created'
    CHECK (status IN ('created', 'processing', 'completed', 'error')),
  locked_at TEXT,
  locked_by TEXT
);
CREATE INDEX IF NOT EXISTS grafton_catalog_action_log_pending
  ON grafton_catalog_action_log (created_at) WHERE status IN ('created', 'processing');
CREATE INDEX IF NOT EXISTS grafton_catalog_action_log_done
  ON grafton_catalog_action_log (response_received_at) WHERE status IN ('completed', 'error');
";

/// A call claimed by a worker.
#[derive(Debug, Clone)]
pub struct Claimed {
    /// Its id.
    pub id: String,
    /// The action's name.
    pub action: String,
    /// Its arguments.
    pub input: Value,
    /// The client's headers kept for the handler (only an action that forwards
    /// them keeps any).
    pub headers: Vec<(String, String)>,
    /// The session that called it.
    pub session: Map<String, Value>,
}

/// A call's result as the log holds it.
#[derive(Debug, Clone)]
pub struct Stored {
    /// When it was called (JSON text of a timestamp).
    pub created_at: Value,
    /// The handler's output, checked against the output type (`null` until then).
    pub output: Value,
    /// Its error (`null` unless it failed).
    pub errors: Value,
    /// `created`, `processing`, `completed` or `error`.
    pub status: String,
}

impl Stored {
    /// Whether the call is over: its result will not change.
    pub fn done(&self) -> bool {
        matches!(self.status.as_str(), "completed" | "error")
    }
}

fn param(value: Value, ty: &'static str) -> Param {
    Param {
        value: ParamValue::Literal(value),
        ty: SqlType::Builtin(ty),
        list: false,
    }
}

fn text(v: impl Into<String>) -> Param {
    param(Value::String(v.into()), "text")
}

/// The session as the log compares it: its keys sorted, so equal sessions are
/// equal text (SQLite compares the text; PostgreSQL's `jsonb` either way).
pub fn session_text(session: &Map<String, Value>) -> String {
    let sorted: std::collections::BTreeMap<&String, &Value> = session.iter().collect();
    serde_json::to_string(&sorted).unwrap_or_else(|_| "{}".into())
}

/// Whether `id` is a UUID's text (8-4-4-4-12 hexadecimal digits).
pub fn is_uuid(id: &str) -> bool {
    id.len() == 36
        && id.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// Runs `sql` alone; its rows.
async fn rows(
    db: &Database,
    sql: &str,
    params: Vec<Param>,
) -> Result<Vec<Vec<Value>>, ExecuteError> {
    let statement = Statement {
        sql: sql.into(),
        params,
        compact: false,
    };
    db.rows_alone(&statement, STATEMENT_TIMEOUT).await
}

/// A number or a boolean cell as PostgreSQL (text) or SQLite (JSON) gives it.
fn number(cell: Option<&Value>) -> u64 {
    match cell {
        Some(Value::Bool(b)) => u64::from(*b),
        Some(Value::String(t)) => match t.as_str() {
            "t" | "true" => 1,
            t => t.parse().unwrap_or(0),
        },
        Some(v) => v.as_u64().unwrap_or(0),
        None => 0,
    }
}

/// The JSON text in each row's first column.
fn json_rows(rows: Vec<Vec<Value>>) -> Vec<Value> {
    (rows.into_iter())
        .filter_map(|r| r.into_iter().next())
        .filter_map(|v| match v {
            Value::String(t) => serde_json::from_str(&t).ok(),
            other => Some(other),
        })
        .collect()
}

/// Creates the log when it is missing (PostgreSQL: under the catalog's DDL
/// lock, so instances starting together do not race).
pub async fn create(db: &Database) -> Result<(), ExecuteError> {
    match db.dialect() {
        Dialect::Postgres => {
            let mut tx = db.begin(STATEMENT_TIMEOUT).await?;
            let lock = grafton_execute::CATALOG_DDL_LOCK;
            tx.batch(&format!("SELECT pg_advisory_xact_lock({lock})"))
                .await?;
            tx.batch(POSTGRES_DDL).await?;
            tx.commit().await
        }
        Dialect::Sqlite => {
            let mut tx = db.begin(STATEMENT_TIMEOUT).await?;
            tx.batch(SQLITE_DDL).await?;
            tx.commit().await
        }
    }
}

/// Writes a call of `action`; its id.
pub async fn enqueue(
    db: &Database,
    action: &str,
    input: &Value,
    headers: &[(String, String)],
    session: &Map<String, Value>,
) -> Result<String, ExecuteError> {
    let headers: Vec<Value> = (headers.iter())
        .map(|(n, v)| json!({"name": n, "value": v}))
        .collect();
    let sql = match db.dialect() {
        Dialect::Postgres => "INSERT INTO grafton_catalog.action_log
               (action_name, input_payload, request_headers, session_variables)
             VALUES ($1, $2::jsonb, $3::jsonb, $4::jsonb) RETURNING id::text"
            .to_owned(),
        Dialect::Sqlite => format!(
            "INSERT INTO grafton_catalog_action_log
               (id, action_name, input_payload, request_headers, session_variables, created_at)
             VALUES ({NEW_ID}, ?1, ?2, ?3, ?4, {NOW}) RETURNING id"
        ),
    };
    let params = vec![
        text(action),
        text(input.to_string()),
        text(Value::Array(headers).to_string()),
        text(session_text(session)),
    ];
    let rows = rows(db, &sql, params).await?;
    let id = rows.into_iter().next().and_then(|r| r.into_iter().next());
    match id {
        Some(Value::String(id)) => Ok(id),
        _ => Err(ExecuteError::Config(
            "the action log gave no id for the new call".into(),
        )),
    }
}

/// The call `id` of `action`, if `session` may read it (`None`: admin, who may
/// read every call).
pub async fn read(
    db: &Database,
    action: &str,
    id: &str,
    session: Option<&Map<String, Value>>,
) -> Result<Option<Stored>, ExecuteError> {
    let sql = match db.dialect() {
        Dialect::Postgres => {
            "SELECT json_build_object('created_at', created_at, 'output', response_payload,
               'errors', errors, 'status', status)::text
             FROM grafton_catalog.action_log
             WHERE id = $1::uuid AND action_name = $2
               AND ($3::jsonb IS NULL OR session_variables = $3::jsonb)"
        }
        Dialect::Sqlite => {
            "SELECT json_object('created_at', created_at, 'output', json(response_payload),
               'errors', json(errors), 'status', status)
             FROM grafton_catalog_action_log
             WHERE id = ?1 AND action_name = ?2 AND (?3 IS NULL OR session_variables = ?3)"
        }
    };
    let session = session.map_or(Value::Null, |s| Value::String(session_text(s)));
    let params = vec![text(id), text(action), param(session, "text")];
    let found = json_rows(rows(db, sql, params).await?).into_iter().next();
    Ok(found.map(|mut v| Stored {
        created_at: v["created_at"].take(),
        output: v["output"].take(),
        errors: v["errors"].take(),
        status: v["status"].as_str().unwrap_or_default().to_owned(),
    }))
}

/// Claims up to `limit` calls of `actions` for `instance`: new ones, and those
/// whose claim is older than `claim_timeout` (an instance that died).
pub async fn claim(
    db: &Database,
    actions: &[String],
    instance: &str,
    limit: usize,
    claim_timeout: Duration,
) -> Result<Vec<Claimed>, ExecuteError> {
    let sql = match db.dialect() {
        Dialect::Postgres => "WITH due AS (SELECT id FROM grafton_catalog.action_log
               WHERE (status = 'created' OR (status = 'processing'
                   AND locked_at < now() - $3::int8 * interval '1 second'))
                 AND action_name IN (SELECT json_array_elements_text($1::json))
               ORDER BY created_at LIMIT $4::int8 FOR UPDATE SKIP LOCKED)
             UPDATE grafton_catalog.action_log a
               SET status = 'processing', locked_at = now(), locked_by = $2
             FROM due WHERE a.id = due.id
             RETURNING json_build_object('id', a.id, 'action', a.action_name,
               'input', a.input_payload, 'headers', a.request_headers,
               'session', a.session_variables)::text"
            .to_owned(),
        Dialect::Sqlite => format!(
            "UPDATE grafton_catalog_action_log
               SET status = 'processing', locked_at = {NOW}, locked_by = ?2
             WHERE id IN (SELECT id FROM grafton_catalog_action_log
               WHERE (status = 'created' OR (status = 'processing' AND locked_at <
                   strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-' || ?3 || ' seconds')))
                 AND action_name IN (SELECT value FROM json_each(?1))
               ORDER BY created_at LIMIT ?4)
             RETURNING json_object('id', id, 'action', action_name,
               'input', json(input_payload), 'headers', json(request_headers),
               'session', json(session_variables))"
        ),
    };
    let params = vec![
        text(Value::from(actions.to_vec()).to_string()),
        text(instance),
        param(json!(claim_timeout.as_secs()), "int8"),
        param(json!(limit), "int8"),
    ];
    let claimed = json_rows(rows(db, &sql, params).await?);
    Ok(claimed.into_iter().map(claimed_call).collect())
}

fn claimed_call(mut v: Value) -> Claimed {
    let headers = (v["headers"].as_array().into_iter().flatten())
        .filter_map(|h| Some((h["name"].as_str()?.into(), h["value"].as_str()?.into())))
        .collect();
    Claimed {
        id: v["id"].as_str().unwrap_or_default().to_owned(),
        action: v["action"].as_str().unwrap_or_default().to_owned(),
        input: v["input"].take(),
        headers,
        session: match v["session"].take() {
            Value::Object(m) => m,
            _ => Map::new(),
        },
    }
}

/// Finishes call `id` with the handler's checked output, or its error. A call
/// finished already (by an instance that took over an expired claim) is left
/// as it is.
pub async fn finish(
    db: &Database,
    id: &str,
    outcome: Result<Value, Value>,
) -> Result<(), ExecuteError> {
    let (status, output, errors) = match outcome {
        Ok(output) => ("completed", output, Value::Null),
        Err(errors) => ("error", Value::Null, errors),
    };
    let sql = match db.dialect() {
        Dialect::Postgres => "UPDATE grafton_catalog.action_log SET status = $2,
               response_payload = $3::jsonb, errors = $4::jsonb,
               response_received_at = now(), locked_at = NULL
             WHERE id = $1::uuid AND status = 'processing'"
            .to_owned(),
        Dialect::Sqlite => format!(
            "UPDATE grafton_catalog_action_log SET status = ?2,
               response_payload = ?3, errors = ?4,
               response_received_at = {NOW}, locked_at = NULL
             WHERE id = ?1 AND status = 'processing'"
        ),
    };
    let json = |v: Value| match v {
        Value::Null => param(Value::Null, "text"),
        v => text(v.to_string()),
    };
    let params = vec![text(id), text(status), json(output), json(errors)];
    rows(db, &sql, params).await.map(drop)
}

/// Gives back the calls `instance` claimed and did not finish (it is shutting
/// down): another instance, or this one's next run, calls them.
pub async fn release(db: &Database, instance: &str) -> Result<(), ExecuteError> {
    let sql = match db.dialect() {
        Dialect::Postgres => {
            "UPDATE grafton_catalog.action_log SET status = 'created', locked_at = NULL,
               locked_by = NULL WHERE status = 'processing' AND locked_by = $1"
        }
        Dialect::Sqlite => {
            "UPDATE grafton_catalog_action_log SET status = 'created', locked_at = NULL,
               locked_by = NULL WHERE status = 'processing' AND locked_by = ?1"
        }
    };
    rows(db, sql, vec![text(instance)]).await.map(drop)
}

/// Deletes up to `limit` finished calls older than `retention`; how many.
pub async fn clean_up(db: &Database, retention: Duration, limit: u64) -> Result<u64, ExecuteError> {
    let sql = match db.dialect() {
        Dialect::Postgres => {
            "WITH gone AS (DELETE FROM grafton_catalog.action_log WHERE id IN (
               SELECT id FROM grafton_catalog.action_log
               WHERE status IN ('completed', 'error')
                 AND response_received_at < now() - $1::int8 * interval '1 second'
               LIMIT $2::int8) RETURNING 1)
             SELECT count(*)::int8 FROM gone"
        }
        Dialect::Sqlite => {
            "DELETE FROM grafton_catalog_action_log WHERE id IN (
               SELECT id FROM grafton_catalog_action_log
               WHERE status IN ('completed', 'error') AND response_received_at <
                 strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-' || ?1 || ' seconds')
               LIMIT ?2) RETURNING 1"
        }
    };
    let params = vec![
        param(json!(retention.as_secs()), "int8"),
        param(json!(limit), "int8"),
    ];
    let rows = rows(db, sql, params).await?;
    Ok(match db.dialect() {
        Dialect::Postgres => number(rows.first().and_then(|r| r.first())),
        Dialect::Sqlite => rows.len() as u64,
    })
}

/// Deletes every call of `action` (Hasura's `drop_action` with `clear_data`);
/// a log that does not exist is left so.
pub async fn clear(db: &Database, action: &str) -> Result<(), ExecuteError> {
    let exists = match db.dialect() {
        Dialect::Postgres => "SELECT to_regclass('grafton_catalog.action_log') IS NOT NULL",
        Dialect::Sqlite => {
            "SELECT count(*) > 0 FROM sqlite_master WHERE name = 'grafton_catalog_action_log'"
        }
    };
    let found = rows(db, exists, Vec::new()).await?;
    if number(found.first().and_then(|r| r.first())) == 0 {
        return Ok(());
    }
    let sql = match db.dialect() {
        Dialect::Postgres => "DELETE FROM grafton_catalog.action_log WHERE action_name = $1",
        Dialect::Sqlite => "DELETE FROM grafton_catalog_action_log WHERE action_name = ?1",
    };
    rows(db, sql, vec![text(action)]).await.map(drop)
}
