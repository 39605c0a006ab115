//! The event log's statements on SQLite: the same claims, records, clean-ups and
//! reads as PostgreSQL's, in SQLite's SQL. A claim is one `UPDATE … RETURNING`,
//! so SQLite's single writer makes it atomic across processes sharing the file.

use crate::sql::{int, param, text, STATEMENT_TIMEOUT};
use crate::sqlite_capture::{NEW_ID, NOW};
use crate::Events;
use grafton_execute::ExecuteError;
use grafton_sql::Statement;
use serde_json::{json, Map, Value};

/// An event as the metadata API shows it.
const EVENT_JSON: &str = "json_object('id', e.id, 'trigger_name', e.trigger_name,
  'schema_name', e.schema_name, 'table_name', e.table_name,
  'payload', json_object('op', e.op,
    'data', CASE WHEN json_valid(e.data) THEN json(e.data) ELSE e.data END,
    'session_variables', CASE WHEN json_valid(e.session) THEN json(e.session) END),
  'delivered', json(CASE WHEN e.delivered THEN 'true' ELSE 'false' END),
  'error', json(CASE WHEN e.dead THEN 'true' ELSE 'false' END), 'tries', e.tries,
  'created_at', e.created_at, 'next_retry_at', e.next_retry_at, 'locked', e.locked_at)";

/// An invocation log as the metadata API shows it.
const LOG_JSON: &str = "json_object('id', l.id, 'event_id', l.event_id,
  'trigger_name', l.trigger_name, 'status', l.status, 'request', json(l.request),
  'response', l.response, 'created_at', l.created_at)";

impl Events {
    /// Runs `sql` with `params` in its own transaction; its rows.
    async fn sqlite_rows(
        &self,
        sql: &str,
        params: Vec<grafton_sql::Param>,
    ) -> Result<Vec<Vec<Value>>, ExecuteError> {
        let statement = Statement {
            sql: sql.into(),
            params,
            compact: false,
        };
        let db = self.engine.database();
        db.rows_alone(&statement, STATEMENT_TIMEOUT).await
    }

    /// Claims up to `limit` due events: each as the JSON the claim reads. The
    /// row's JSON is read here, not in SQL: one that does not parse (another
    /// client's SQLite may write `Inf`) is dead with the reason logged, and
    /// never holds up the others.
    pub(crate) async fn claim_sqlite(&self, limit: usize) -> Result<Vec<Value>, ExecuteError> {
        let sql = format!(
            "UPDATE grafton_catalog_event_log SET locked_at = {NOW}, locked_by = ?1
             WHERE id IN (SELECT id FROM grafton_catalog_event_log
               WHERE NOT delivered AND NOT dead AND (next_retry_at IS NULL OR next_retry_at <= {NOW})
                 AND (locked_at IS NULL OR locked_at <
                      strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-' || ?2 || ' seconds'))
               ORDER BY created_at LIMIT ?3)
             RETURNING id, trigger_name, schema_name, table_name, op, data, session,
               trace_context, created_at, tries,
               (julianday('now') - julianday(created_at)) * 86400.0"
        );
        let params = vec![
            text(self.instance.clone()),
            param(json!(self.options.claim_timeout.as_secs()), "int8"),
            int(limit as u64),
        ];
        let rows = self.sqlite_rows(&sql, params).await?;
        let mut claimed = Vec::with_capacity(rows.len());
        for row in rows {
            let cell = |i: usize| row.get(i).cloned().unwrap_or(Value::Null);
            let parse = |i: usize| -> Result<Value, serde_json::Error> {
                match row.get(i).and_then(Value::as_str) {
                    Some(t) => serde_json::from_str(t),
                    None => Ok(Value::Null),
                }
            };
            let (id, trigger) = (cell(0), cell(1));
            match (parse(5), parse(6), parse(7)) {
                (Ok(data), Ok(session), Ok(trace)) => claimed.push(json!({
                    "id": id, "trigger": trigger, "schema": cell(2), "table": cell(3),
                    "op": cell(4), "data": data, "session": session, "trace": trace,
                    "created_at": cell(8), "tries": cell(9), "age": cell(10),
                })),
                (data, session, trace) => {
                    let why = [data.err(), session.err(), trace.err()];
                    let why = why.into_iter().flatten().next().map(|e| e.to_string());
                    let why = format!("the event's row is not JSON: {}", why.unwrap_or_default());
                    tracing::warn!(event = %id, "{why}");
                    let outcome = crate::call::Outcome::failed(why);
                    let (id, trigger) = (id.as_str().unwrap_or(""), trigger.as_str().unwrap_or(""));
                    let record = crate::call::Record::new(
                        crate::call::Log::Table,
                        id,
                        trigger,
                        &Value::Null,
                        &outcome,
                    );
                    self.record(record.retry(true, 0)).await;
                }
            }
        }
        Ok(claimed)
    }

    /// Records a batch of deliveries: each event's state and its invocation log.
    pub(crate) async fn write_records_sqlite(&self, rows: &[Value]) -> Result<(), ExecuteError> {
        let o = "SELECT json_extract(value, '$.id') AS id, json_extract(value, '$.trigger') AS trigger,
               json_extract(value, '$.status') AS status, json_extract(value, '$.request') AS request,
               json_extract(value, '$.response') AS response, json_extract(value, '$.ok') AS ok,
               json_extract(value, '$.dead') AS dead, json_extract(value, '$.wait') AS wait
             FROM json_each(?1)";
        let update = format!(
            "UPDATE grafton_catalog_event_log AS e SET tries = e.tries + 1, locked_at = NULL,
               delivered = o.ok, delivered_at = CASE WHEN o.ok THEN {NOW} END, dead = o.dead,
               next_retry_at = CASE WHEN o.ok THEN e.next_retry_at
                 ELSE strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '+' || o.wait || ' seconds') END
             FROM ({o}) AS o WHERE e.id = o.id"
        );
        let insert = format!(
            "INSERT INTO grafton_catalog_event_invocation_logs
               (event_id, trigger_name, status, request, response, created_at)
             SELECT id, trigger, status, request, response, {NOW} FROM ({o})"
        );
        let batch = Value::Array(rows.to_vec()).to_string();
        let db = self.engine.database();
        let mut tx = db.begin(STATEMENT_TIMEOUT).await?;
        for sql in [update, insert] {
            let statement = Statement {
                sql,
                params: vec![text(batch.clone())],
                compact: false,
            };
            tx.rows(&statement, &Map::new()).await?;
        }
        tx.commit().await
    }

    /// Gives one claimed event back, untried, due in ten seconds.
    pub(crate) async fn give_back_sqlite(&self, id: &str) -> Result<(), ExecuteError> {
        let sql = "UPDATE grafton_catalog_event_log SET locked_at = NULL,
            next_retry_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '+10 seconds') WHERE id = ?1";
        self.sqlite_rows(sql, vec![text(id)]).await.map(drop)
    }

    /// Gives back what this instance claimed and has not delivered.
    pub(crate) async fn release_sqlite(&self) -> Result<(), ExecuteError> {
        let sql = "UPDATE grafton_catalog_event_log SET locked_at = NULL
            WHERE locked_by = ?1 AND NOT delivered";
        let instance = text(self.instance.clone());
        self.sqlite_rows(sql, vec![instance]).await.map(drop)
    }

    /// Deletes up to `batch` delivered and dead events (of `trigger`, or of every
    /// trigger but those in `except`) captured over `older_secs` seconds ago, and
    /// with `logs` their invocation logs; how many events went.
    pub(crate) async fn clean_batch_sqlite(
        &self,
        trigger: Option<&str>,
        except: &[String],
        older_secs: f64,
        batch: u64,
        logs: bool,
    ) -> Result<(u64, u64), ExecuteError> {
        let which = "((?1 IS NULL AND trigger_name NOT IN (SELECT value FROM json_each(?2)))
            OR trigger_name = ?1)";
        let old = "created_at < strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-' || ?3 || ' seconds')";
        let events = format!(
            "DELETE FROM grafton_catalog_event_log WHERE id IN (
               SELECT id FROM grafton_catalog_event_log
               WHERE (delivered OR dead) AND locked_at IS NULL AND {which} AND {old} LIMIT ?4)
             RETURNING id"
        );
        let params = |b: u64| {
            vec![
                param(trigger.map_or(Value::Null, |t| json!(t)), "text"),
                text(json!(except).to_string()),
                param(json!(older_secs), "float8"),
                int(b),
            ]
        };
        let gone = self.sqlite_rows(&events, params(batch)).await?;
        let mut deleted_logs = 0;
        if logs {
            let ids: Vec<&Value> = gone.iter().filter_map(|r| r.first()).collect();
            let sql = "DELETE FROM grafton_catalog_event_invocation_logs
                WHERE event_id IN (SELECT value FROM json_each(?1)) RETURNING 1";
            let ids = text(json!(ids).to_string());
            deleted_logs = self.sqlite_rows(sql, vec![ids]).await?.len() as u64;
        }
        Ok((gone.len() as u64, deleted_logs))
    }

    /// Deletes up to `batch` invocation logs (of every trigger but those in
    /// `except`) older than `older_secs` seconds; how many went.
    pub(crate) async fn clean_logs_sqlite(
        &self,
        except: &[String],
        older_secs: f64,
        batch: u64,
    ) -> Result<u64, ExecuteError> {
        let sql = "DELETE FROM grafton_catalog_event_invocation_logs WHERE id IN (
               SELECT id FROM grafton_catalog_event_invocation_logs
               WHERE trigger_name NOT IN (SELECT value FROM json_each(?1))
                 AND created_at < strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-' || ?2 || ' seconds')
               LIMIT ?3) RETURNING 1";
        let params = vec![
            text(json!(except).to_string()),
            param(json!(older_secs), "float8"),
            int(batch),
        ];
        Ok(self.sqlite_rows(sql, params).await?.len() as u64)
    }

    /// The file's schema version (it changes with any DDL, from any client).
    pub(crate) async fn schema_version_sqlite(&self) -> Result<i64, ExecuteError> {
        let rows = self
            .sqlite_rows("PRAGMA schema_version", Vec::new())
            .await?;
        let version = rows.first().and_then(|r| r.first()).and_then(Value::as_i64);
        Ok(version.unwrap_or(0))
    }

    /// How many events wait.
    pub(crate) async fn pending_sqlite(&self) -> Result<i64, ExecuteError> {
        let sql = "SELECT count(*) FROM grafton_catalog_event_log WHERE NOT delivered AND NOT dead";
        let rows = self.sqlite_rows(sql, Vec::new()).await?;
        let n = rows.first().and_then(|r| r.first()).and_then(Value::as_i64);
        Ok(n.unwrap_or(0))
    }

    /// Logs a manual event for `trigger` on `(schema, table)` with `row` as its
    /// new row; its id.
    pub(crate) async fn invoke_sqlite(
        &self,
        trigger: &str,
        (schema, table): (&str, &str),
        row: &Value,
    ) -> Result<String, ExecuteError> {
        let sql = format!(
            "INSERT INTO grafton_catalog_event_log
               (id, trigger_name, schema_name, table_name, op, data, created_at)
             VALUES ({NEW_ID}, ?1, ?2, ?3, 'MANUAL', json_object('old', NULL, 'new', json(?4)), {NOW})
             RETURNING id"
        );
        let params = vec![
            text(trigger),
            text(schema),
            text(table),
            text(row.to_string()),
        ];
        let rows = self.sqlite_rows(&sql, params).await?;
        let id = rows.first().and_then(|r| r.first()).and_then(Value::as_str);
        Ok(id.unwrap_or_default().to_owned())
    }

    /// Makes an event due again now, its tries and death forgotten; whether it exists.
    pub(crate) async fn redeliver_sqlite(&self, id: &str) -> Result<bool, ExecuteError> {
        let sql = "UPDATE grafton_catalog_event_log SET delivered = 0, dead = 0, tries = 0,
            next_retry_at = NULL, locked_at = NULL WHERE id = ?1 RETURNING 1";
        Ok(!self.sqlite_rows(sql, vec![text(id)]).await?.is_empty())
    }

    /// A trigger's events, newest first (`filter` narrows them).
    pub(crate) async fn logs_sqlite(
        &self,
        trigger: &str,
        filter: &str,
        (limit, offset): (u64, u64),
    ) -> Result<Value, ExecuteError> {
        let sql = format!(
            "SELECT coalesce(json_group_array(json(x)), '[]') FROM (
               SELECT {EVENT_JSON} AS x FROM grafton_catalog_event_log e
               WHERE e.trigger_name = ?1 {filter} ORDER BY e.created_at DESC LIMIT ?2 OFFSET ?3)"
        );
        self.one(sql, vec![text(trigger), int(limit), int(offset)])
            .await
    }

    /// A trigger's invocation logs, newest first.
    pub(crate) async fn invocations_sqlite(
        &self,
        trigger: &str,
        (limit, offset): (u64, u64),
    ) -> Result<Value, ExecuteError> {
        let sql = format!(
            "SELECT coalesce(json_group_array(json(x)), '[]') FROM (
               SELECT {LOG_JSON} AS x FROM grafton_catalog_event_invocation_logs l
               WHERE l.trigger_name = ?1 ORDER BY l.id DESC LIMIT ?2 OFFSET ?3)"
        );
        self.one(sql, vec![text(trigger), int(limit), int(offset)])
            .await
    }

    /// One event and its invocation logs.
    pub(crate) async fn event_sqlite(
        &self,
        id: &str,
        (limit, offset): (u64, u64),
    ) -> Result<Value, ExecuteError> {
        let sql = format!(
            "SELECT json_object('event', (SELECT json({EVENT_JSON}) FROM grafton_catalog_event_log e
                 WHERE e.id = ?1),
               'invocations', (SELECT coalesce(json_group_array(json(x)), '[]') FROM (
                 SELECT {LOG_JSON} AS x FROM grafton_catalog_event_invocation_logs l
                 WHERE l.event_id = ?1 ORDER BY l.id DESC LIMIT ?2 OFFSET ?3)))"
        );
        self.one(sql, vec![text(id), int(limit), int(offset)]).await
    }
}
