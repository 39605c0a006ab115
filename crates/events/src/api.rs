//! The event log through the metadata API: a manual invocation
//! (`pg_invoke_event_trigger`), a redelivery (`pg_redeliver_event`), and the
//! reads (`pg_get_event_logs`, `pg_get_event_invocation_logs`,
//! `pg_get_event_by_id`). Every value is a bind parameter.

use crate::sql::{int, text};
use crate::Events;
use grafton_execute::ExecuteError;
use serde_json::Value;

/// The most rows one read answers with.
pub const MAX_ROWS: u64 = 1_000;

const EVENT_JSON: &str = "json_build_object('id', e.id, 'trigger_name', e.trigger_name,
  'schema_name', e.schema_name, 'table_name', e.table_name,
  'payload', json_build_object('op', e.op, 'data', e.data, 'session_variables', e.session),
  'delivered', e.delivered, 'error', e.dead, 'tries', e.tries, 'created_at', e.created_at,
  'next_retry_at', e.next_retry_at, 'locked', e.locked_at)";

const LOG_JSON: &str = "json_build_object('id', l.id, 'event_id', l.event_id,
  'trigger_name', l.trigger_name, 'status', l.status, 'request', l.request,
  'response', l.response, 'created_at', l.created_at)";

impl Events {
    /// Logs an event for `trigger` on its table with `row` as the new row (op
    /// `MANUAL`, as Hasura's); its id. The trigger must be served and allow it.
    pub async fn invoke(
        &self,
        trigger: &str,
        row: &Value,
    ) -> Result<Result<String, String>, ExecuteError> {
        let served = self.engine.schemas();
        let Some(t) = served
            .event_triggers()
            .iter()
            .find(|t| t.config.name == trigger)
            .cloned()
        else {
            return Ok(Err(format!("event trigger \"{trigger}\" does not exist")));
        };
        if !t.config.definition.enable_manual {
            return Ok(Err(format!(
                "manual mode is not enabled for event trigger \"{trigger}\""
            )));
        }
        self.reconcile().await?;
        if self.sqlite() {
            let id = (self.invoke_sqlite(trigger, (&t.schema, &t.table), row)).await?;
            self.wake();
            return Ok(Ok(id));
        }
        let sql = "WITH e AS (INSERT INTO grafton_catalog.event_log
              (trigger_name, schema_name, table_name, op, data)
            VALUES ($1::text, $2::text, $3::text, 'MANUAL', jsonb_build_object('old', NULL, 'new', $4::jsonb))
            RETURNING id) SELECT to_json(id)::text FROM e";
        let params = vec![
            text(trigger),
            text(t.schema),
            text(t.table),
            text(row.to_string()),
        ];
        let id = self.one(sql.into(), params).await?;
        self.wake();
        Ok(Ok(id.as_str().unwrap_or_default().to_owned()))
    }

    /// Delivers an event again: due now, its tries and death forgotten.
    pub async fn redeliver(&self, event_id: &str) -> Result<bool, ExecuteError> {
        if self.sqlite() {
            let found = self.redeliver_sqlite(event_id).await?;
            self.wake();
            return Ok(found);
        }
        let sql = "WITH e AS (UPDATE grafton_catalog.event_log SET delivered = false, dead = false,
              tries = 0, next_retry_at = NULL, locked_at = NULL
            WHERE id = $1::uuid RETURNING 1) SELECT to_json(count(*) > 0)::text FROM e";
        let found = self
            .one(sql.into(), vec![crate::sql::event_id(event_id)])
            .await?;
        self.wake();
        Ok(found == Value::Bool(true))
    }

    /// A trigger's events, newest first: `status` `pending`, `processed` or all.
    pub async fn logs(
        &self,
        trigger: &str,
        status: &str,
        limit: u64,
        offset: u64,
    ) -> Result<Value, ExecuteError> {
        let filter = match status {
            "pending" => "AND NOT e.delivered AND NOT e.dead",
            "processed" => "AND (e.delivered OR e.dead)",
            _ => "",
        };
        if self.sqlite() {
            let page = (limit.min(MAX_ROWS), offset);
            return self.logs_sqlite(trigger, filter, page).await;
        }
        let sql = format!(
            "SELECT coalesce(json_agg(x ORDER BY x_at DESC), '[]')::text FROM (
               SELECT {EVENT_JSON} AS x, e.created_at AS x_at FROM grafton_catalog.event_log e
               WHERE e.trigger_name = $1::text {filter}
               ORDER BY e.created_at DESC LIMIT $2::int8 OFFSET $3::int8) s"
        );
        self.one(
            sql,
            vec![text(trigger), int(limit.min(MAX_ROWS)), int(offset)],
        )
        .await
    }

    /// A trigger's invocation logs, newest first.
    pub async fn invocations(
        &self,
        trigger: &str,
        limit: u64,
        offset: u64,
    ) -> Result<Value, ExecuteError> {
        if self.sqlite() {
            return (self.invocations_sqlite(trigger, (limit.min(MAX_ROWS), offset))).await;
        }
        let sql = format!(
            "SELECT coalesce(json_agg(x ORDER BY x_id DESC), '[]')::text FROM (
               SELECT {LOG_JSON} AS x, l.id AS x_id FROM grafton_catalog.event_invocation_logs l
               WHERE l.trigger_name = $1::text ORDER BY l.id DESC LIMIT $2::int8 OFFSET $3::int8) s"
        );
        self.one(
            sql,
            vec![text(trigger), int(limit.min(MAX_ROWS)), int(offset)],
        )
        .await
    }

    /// One event and its invocation logs.
    pub async fn event(
        &self,
        event_id: &str,
        limit: u64,
        offset: u64,
    ) -> Result<Value, ExecuteError> {
        if self.sqlite() {
            return (self.event_sqlite(event_id, (limit.min(MAX_ROWS), offset))).await;
        }
        let sql = format!(
            "SELECT json_build_object('event', (SELECT {EVENT_JSON} FROM grafton_catalog.event_log e
                 WHERE e.id = $1::uuid),
               'invocations', (SELECT coalesce(json_agg(x ORDER BY x_id DESC), '[]') FROM (
                 SELECT {LOG_JSON} AS x, l.id AS x_id FROM grafton_catalog.event_invocation_logs l
                 WHERE l.event_id = $1::uuid ORDER BY l.id DESC LIMIT $2::int8 OFFSET $3::int8) s))::text"
        );
        self.one(
            sql,
            vec![
                crate::sql::event_id(event_id),
                int(limit.min(MAX_ROWS)),
                int(offset),
            ],
        )
        .await
    }
}
