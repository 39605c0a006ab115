//! Hasura's `/v2/query` (`run_sql`: SQL run as written, which `hasura migrate
//! apply` sends, one migration per call) and the older `/v1/query`, where the
//! metadata commands go by their names without `pg_` and `run_sql` too.

use crate::commands;
use crate::service::Metadata;
use crate::Refusal;
use grafton_execute::{ExecuteError, SqlRows};
use serde_json::{json, Value};
use std::time::Duration;

/// The longest a `run_sql` may run (a migration may rewrite a large table).
pub const RUN_SQL_TIMEOUT: Duration = Duration::from_secs(600);

/// The most bytes of cells a `run_sql` answers with.
pub const RUN_SQL_MAX_BYTES: usize = 64 * 1024 * 1024;

impl Metadata {
    /// One request to `/v2/query`.
    pub async fn query(&self, body: &Value) -> Result<Value, Refusal> {
        let (kind, args) = commands::envelope(body)?;
        match kind {
            "run_sql" => self.run_sql(args).await,
            "bulk" => {
                let items = args.as_array().map(Vec::as_slice).unwrap_or_default();
                let mut answers = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    let answer = Box::pin(self.query(item)).await;
                    answers.push(answer.map_err(|r| r.within(&format!("$.args[{i}]")))?);
                }
                Ok(Value::Array(answers))
            }
            "select" | "insert" | "update" | "delete" | "count" => Err(Refusal::new(
                "not-supported",
                format!("'{kind}' of /v2/query is not served: use /v1/graphql"),
                "$.type",
            )),
            other => Err(Refusal::new(
                "parse-failed",
                format!("unknown /v2/query command \"{other}\""),
                "$",
            )),
        }
    }

    /// One request to `/v1/query`: `run_sql` and `bulk` as `/v2/query`, a metadata
    /// command by its name or its older one (`track_table` is `pg_track_table`).
    pub async fn legacy_query(&self, body: &Value) -> Result<Value, Refusal> {
        let (kind, args) = commands::envelope(body)?;
        let renamed = match kind {
            "run_sql" => return self.query(body).await,
            "bulk" => {
                let items = args.as_array().map(Vec::as_slice).unwrap_or_default();
                let mut answers = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    let answer = Box::pin(self.legacy_query(item)).await;
                    answers.push(answer.map_err(|r| r.within(&format!("$.args[{i}]")))?);
                }
                return Ok(Value::Array(answers));
            }
            "add_existing_table_or_view" => "pg_track_table".to_owned(),
            kind if commands::writes(&format!("pg_{kind}")) => format!("pg_{kind}"),
            kind => kind.to_owned(),
        };
        let mut body = body.clone();
        // The older function commands take the function itself as their args.
        if matches!(kind, "track_function" | "untrack_function") && args.get("function").is_none() {
            body["args"] = json!({"function": args});
        }
        body["type"] = Value::String(renamed);
        self.command(&body).await
    }

    /// `run_sql`: the SQL in one transaction (rolled back when `read_only`), its
    /// last statement's rows as Hasura answers them, and the schema reloaded after
    /// unless `check_metadata_consistency` is false (the default for `read_only`).
    async fn run_sql(&self, args: &Value) -> Result<Value, Refusal> {
        let Some(sql) = args.get("sql").and_then(Value::as_str) else {
            return Err(Refusal::parse("key \"sql\" not found"));
        };
        let source = args
            .get("source")
            .and_then(Value::as_str)
            .unwrap_or("default");
        if source != "default" {
            return Err(Refusal::new(
                "not-exists",
                format!("source with name \"{source}\" does not exist"),
                "$.args.source",
            ));
        }
        let flag = |key: &str| args.get(key).and_then(Value::as_bool);
        let read_only = flag("read_only").unwrap_or(false);
        let check = flag("check_metadata_consistency").unwrap_or(!read_only);
        let rows = {
            // Not beside a metadata change: what it builds must see this SQL or not
            // (a read changes nothing, and waits for nothing).
            let _one = match read_only {
                true => None,
                false => Some(self.lock.lock().await),
            };
            let db = self.engine.database();
            let failed = |e: ExecuteError| sql_refusal(e, sql);
            let mut tx = db.begin(RUN_SQL_TIMEOUT).await.map_err(failed)?;
            // SQLite checks triggers on DDL: Grafton's are lifted for the SQL and
            // put back over what it left, in its transaction.
            let events = self.events().filter(|_| !read_only);
            if let Some(events) = events {
                events.lift_sqlite(&mut tx).await.map_err(failed)?;
            }
            let rows = (tx.run_sql(sql, RUN_SQL_MAX_BYTES, read_only).await).map_err(failed)?;
            if let Some(events) = events {
                events.restore_sqlite(&mut tx).await.map_err(failed)?;
            }
            if read_only {
                tx.rollback().await;
            } else {
                tx.commit().await.map_err(failed)?;
                // What the SQL wrote is not known: no kept answer can be trusted.
                self.engine.everything_changed();
            }
            rows
        };
        if check {
            // What the SQL changed is served now; what it left unservable is reported.
            let _ = self.reload("run_sql").await;
        }
        Ok(answer(rows))
    }
}

/// Hasura's answer: `TuplesOk` with the header row then each row (NULL as
/// `"NULL"`), or `CommandOk` with no result.
fn answer(rows: Option<SqlRows>) -> Value {
    match rows {
        None => json!({"result_type": "CommandOk", "result": null}),
        Some(rows) => {
            let mut result = vec![json!(rows.columns)];
            for row in rows.rows {
                let cells: Vec<String> = (row.into_iter())
                    .map(|c| c.unwrap_or_else(|| "NULL".to_owned()))
                    .collect();
                result.push(json!(cells));
            }
            json!({"result_type": "TuplesOk", "result": result})
        }
    }
}

/// Hasura's refusal of SQL the database failed: `postgres-error`, the database's
/// message and the statement in `internal`.
fn sql_refusal(e: ExecuteError, sql: &str) -> Refusal {
    if let ExecuteError::TooLarge(_) = e {
        return Refusal::new(
            "postgres-error",
            format!(
                "the result is larger than {RUN_SQL_MAX_BYTES} bytes: select fewer rows or columns"
            ),
            "$.args",
        );
    }
    let mut refusal = Refusal::new("postgres-error", "query execution failed", "$");
    refusal.internal = Some(Box::new(json!({
        "error": {"message": e.to_string(), "exec_status": "FatalError"},
        "statement": sql,
        "prepared": false,
        "arguments": [],
    })));
    refusal
}
