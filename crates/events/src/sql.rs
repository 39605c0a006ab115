//! The small pieces every event-log statement is made of: bind parameters, one
//! statement answering one JSON value, and a transaction holding the catalog's
//! DDL lock.

use crate::Events;
use grafton_execute::{ExecuteError, Tx};
use grafton_sql::{Param, ParamValue, SqlType, Statement};
use serde_json::{json, Map, Value};
use std::time::Duration;

/// How long one event-log statement may run.
pub(crate) const STATEMENT_TIMEOUT: Duration = Duration::from_secs(30);

/// A bind parameter of SQL type `ty`.
pub(crate) fn param(value: Value, ty: &'static str) -> Param {
    Param {
        value: ParamValue::Literal(value),
        ty: SqlType::Builtin(ty),
        list: false,
    }
}

/// A `text` parameter.
pub(crate) fn text(v: impl Into<String>) -> Param {
    param(Value::String(v.into()), "text")
}

/// A `text` parameter that may be NULL.
pub(crate) fn nullable(v: Option<&str>) -> Param {
    param(v.map_or(Value::Null, |t| Value::String(t.into())), "text")
}

/// An event's id as a parameter: NULL (which matches no row) when it is not a
/// UUID, so the column is compared as it is indexed (`= $n::uuid`).
pub(crate) fn event_id(id: &str) -> Param {
    nullable(Some(id).filter(|id| is_uuid(id)))
}

pub(crate) use grafton_engine::action_log::is_uuid;

/// An `int8` parameter.
pub(crate) fn int(n: u64) -> Param {
    param(json!(n), "int8")
}

impl Events {
    /// Runs `sql`, whose one value is JSON text, on its own; that JSON (`null`
    /// when there is none).
    pub(crate) async fn one(&self, sql: String, params: Vec<Param>) -> Result<Value, ExecuteError> {
        self.one_within(sql, params, STATEMENT_TIMEOUT).await
    }

    /// [`Self::one`] under `timeout`.
    pub(crate) async fn one_within(
        &self,
        sql: String,
        params: Vec<Param>,
        timeout: Duration,
    ) -> Result<Value, ExecuteError> {
        let mut tx = self.replanned(timeout).await?;
        let rows = tx
            .rows(
                &Statement {
                    sql,
                    params,
                    compact: false,
                },
                &Map::new(),
            )
            .await?;
        tx.commit().await?;
        let cell = rows.first().and_then(|r| r.first()).and_then(Value::as_str);
        Ok(cell
            .and_then(|t| serde_json::from_str(t).ok())
            .unwrap_or(Value::Null))
    }

    /// A transaction whose statements are planned for the log as it is now
    /// (PostgreSQL: `plan_cache_mode = force_custom_plan`). A prepared
    /// statement's generic plan is made once, from the statistics of the
    /// moment: one made while the log was small (a hash join over a scan of
    /// the whole log) was kept as the log grew, until the next `ANALYZE`: a
    /// sequential scan of the log for every batch of deliveries recorded
    /// (measured: 250 scans reading 60 million rows in a 50,000-event run).
    pub(crate) async fn replanned(&self, timeout: Duration) -> Result<Tx, ExecuteError> {
        let db = self.engine.database();
        if self.sqlite() {
            return db.autocommit(timeout).await;
        }
        let mut tx = db.begin(timeout).await?;
        tx.batch("SET LOCAL plan_cache_mode = force_custom_plan")
            .await?;
        Ok(tx)
    }

    /// A transaction holding the catalog's DDL lock (instances change Grafton's
    /// objects one at a time).
    pub(crate) async fn ddl(&self) -> Result<Tx, ExecuteError> {
        let mut tx = self
            .engine
            .database()
            .begin(Duration::from_secs(60))
            .await?;
        let lock = grafton_execute::CATALOG_DDL_LOCK;
        tx.batch(&format!("SELECT pg_advisory_xact_lock({lock})"))
            .await?;
        Ok(tx)
    }
}

/// The one text value `sql` answers in `tx`.
pub(crate) async fn one_text(tx: &mut Tx, sql: &str) -> Result<Option<String>, ExecuteError> {
    let statement = Statement {
        sql: sql.into(),
        params: Vec::new(),
        compact: false,
    };
    let rows = tx.rows(&statement, &Map::new()).await?;
    Ok(rows
        .first()
        .and_then(|r| r.first())
        .and_then(Value::as_str)
        .map(str::to_owned))
}
