//! Subscription polls: one multiplexed statement (`grafton_sql::render_multiplexed`)
//! answers a whole batch of subscribers, each with its own values.

use crate::error::ExecuteError;
use crate::params::{postgres_text, sqlite_value, value_of};
use crate::{Budget, Database};
use futures_util::TryStreamExt;
use grafton_sql::{Dialect, Param, Statement};
use serde_json::{Map, Value};

/// One subscriber's row of a multiplexed statement's values, as JSON text: each
/// parameter's value for these `variables` (session variables included), in the
/// form the backend reads it (PostgreSQL: the parameter's text; SQLite: its native
/// value). Computed once, when the subscriber arrives.
pub fn subscriber_values(
    dialect: Dialect,
    params: &[Param],
    variables: &Map<String, Value>,
) -> String {
    let values: Vec<Value> = params
        .iter()
        .map(|p| subscriber_value(dialect, p, value_of(p, variables)))
        .collect();
    Value::Array(values).to_string()
}

/// One value of a subscriber's row (see [`subscriber_values`]): `value` as
/// parameter `param` reads it.
pub fn subscriber_value(dialect: Dialect, param: &Param, value: &Value) -> Value {
    match dialect {
        Dialect::Postgres => postgres_text(param, value).map_or(Value::Null, Value::String),
        Dialect::Sqlite => sqlite_json(sqlite_value(param, value)),
    }
}

/// A subscriber's value back as SQLite's (the inverse of `sqlite_json`).
fn sqlite_native(v: &Value) -> rusqlite::types::Value {
    use rusqlite::types::Value as V;
    match v {
        Value::Null => V::Null,
        Value::Number(n) => match n.as_i64() {
            Some(i) => V::Integer(i),
            None => V::Real(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => V::Text(s.clone()),
        Value::Bool(b) => V::Integer(i64::from(*b)),
        other => V::Text(other.to_string()),
    }
}

fn sqlite_json(v: rusqlite::types::Value) -> Value {
    use rusqlite::types::Value as V;
    match v {
        V::Null => Value::Null,
        V::Integer(i) => Value::from(i),
        V::Real(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
        V::Text(t) => Value::String(t),
        V::Blob(b) => Value::String(String::from_utf8_lossy(&b).into_owned()),
    }
}

/// One subscriber's answer: its index in the batch and the operation's JSON text
/// (`None` past `budget.max_bytes`, with the size it had).
pub type Answer = (usize, Result<String, u64>);

impl Database {
    /// Runs a multiplexed statement for a batch: `batch` is the JSON array of the
    /// subscribers' [`subscriber_values`], run where `route` says. Bounded like a
    /// query by `budget`: stopped in the database past its time, each answer checked
    /// against its size. The answers kept take about `room` bytes at most (always at
    /// least one): the subscribers past it get none this time, and are polled again.
    pub async fn poll(
        &self,
        statement: &Statement,
        batch: String,
        budget: Budget,
        route: crate::Route,
        room: usize,
    ) -> Result<Vec<Answer>, ExecuteError> {
        match self {
            Database::Postgres(db) => {
                let read = PollRead {
                    statement,
                    batch: &batch,
                    max_bytes: budget.max_bytes,
                    room,
                };
                db.read(route, budget.timeout, &read).await
            }
            Database::Sqlite(db) => {
                // The operation's own statement, once per subscriber, in one call to
                // the connection's thread (see `grafton_sql::render_multiplexed`).
                let subscribers: Vec<Vec<Value>> = serde_json::from_str(&batch)
                    .map_err(|e| ExecuteError::Config(e.to_string()))?;
                let conn = db.connection().await?;
                let sql = statement.sql.clone();
                let max = budget.max_bytes;
                let work = crate::sqlite::interact(&conn, move |c| {
                    let mut stmt = c.prepare_cached(&sql)?;
                    let mut out = Vec::with_capacity(subscribers.len());
                    let mut kept = 0;
                    for (i, values) in subscribers.iter().enumerate() {
                        if kept >= room && !out.is_empty() {
                            break;
                        }
                        let values = values.iter().map(sqlite_native);
                        let json = stmt.query_row(rusqlite::params_from_iter(values), |row| {
                            Ok(match row.get_ref(0)? {
                                rusqlite::types::ValueRef::Text(t) if t.len() as u64 > max => {
                                    Err(t.len() as u64)
                                }
                                rusqlite::types::ValueRef::Null => Ok("null".to_owned()),
                                _ => Ok(row.get::<_, String>(0)?),
                            })
                        })?;
                        kept += json.as_ref().map_or(0, String::len);
                        out.push((i, json));
                    }
                    Ok(out)
                });
                crate::sqlite::within(&conn, budget.timeout, work).await
            }
        }
    }
}

/// A subscription poll's statement, as a read a replica can run.
struct PollRead<'a> {
    statement: &'a Statement,
    batch: &'a str,
    max_bytes: u64,
    room: usize,
}

impl crate::replicas::Read for PollRead<'_> {
    type Output = Vec<Answer>;

    fn run<'a>(
        &'a self,
        db: &'a crate::postgres::PgDatabase,
        timeout: std::time::Duration,
    ) -> impl std::future::Future<Output = Result<Vec<Answer>, ExecuteError>> + Send + 'a {
        let budget = Budget {
            timeout,
            max_bytes: self.max_bytes,
        };
        db.poll(self.statement, self.batch, budget, self.room)
    }
}

impl crate::postgres::PgDatabase {
    async fn poll(
        &self,
        statement: &Statement,
        batch: &str,
        budget: Budget,
        room: usize,
    ) -> Result<Vec<Answer>, ExecuteError> {
        let max = budget.max_bytes;
        self.with_deadline(budget.timeout, async |client: &crate::pg_pool::Object| {
            poll_on(client, statement, batch, max, room).await
        })
        .await
    }
}

/// Runs a multiplexed statement for `batch` on `client` (see [`Database::poll`]).
pub(crate) async fn poll_on(
    client: &crate::pg_pool::Object,
    statement: &Statement,
    batch: &str,
    max: u64,
    room: usize,
) -> Result<Vec<Answer>, ExecuteError> {
    let prepared =
        crate::pg_pool::prepare(client, &statement.sql, &[tokio_postgres::types::Type::TEXT])
            .await?;
    // Read as they come, so rows past `room` are never kept.
    let rows = client.query_raw(&prepared, [batch]).await?;
    let mut rows = std::pin::pin!(rows);
    let mut out = Vec::new();
    let mut kept = 0;
    while let Some(row) = rows.try_next().await? {
        if kept >= room && !out.is_empty() {
            break;
        }
        let i: i64 = row.try_get(0)?;
        let json: Option<crate::postgres::RawJson> = row.try_get(1)?;
        // A guarded statement (`size_guard_multiplexed`) says the size too.
        let size: Option<i32> = if row.len() > 2 { row.try_get(2)? } else { None };
        let json = match (json, size) {
            (Some(j), _) if j.0.len() as u64 > max => Err(j.0.len() as u64),
            (Some(j), _) => Ok(crate::compact::compacted(statement, j.0)),
            (None, Some(bytes)) => Err(bytes.max(0) as u64),
            (None, None) => Ok("null".to_owned()),
        };
        kept += json.as_ref().map_or(0, String::len);
        out.push((usize::try_from(i).unwrap_or(usize::MAX), json));
    }
    Ok(out)
}
