//! Cron triggers and one-off scheduled events (PostgreSQL): each firing is a row
//! of `grafton_catalog.scheduled_events`, unique per trigger and instant, so
//! however many instances write the firings ahead, each instant is one row, and
//! one instance delivers it (claimed with `FOR UPDATE SKIP LOCKED`, as the event
//! log's). A firing later than its `tolerance_seconds` is dead, never called.

use crate::call::{Log, Record};
use crate::sql::{param, STATEMENT_TIMEOUT};
use crate::Events;
use grafton_execute::ExecuteError;
use grafton_schema::config::{HeaderConf, ScheduleRetryConf};
use grafton_sql::Statement;
use serde_json::{json, Map, Value};

/// The scheduled events and their invocation logs, created when missing.
pub const SCHEMA_SQL: &str = "
CREATE SCHEMA IF NOT EXISTS grafton_catalog;
CREATE TABLE IF NOT EXISTS grafton_catalog.scheduled_events (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  trigger_name text,
  scheduled_time timestamptz NOT NULL,
  payload jsonb,
  webhook text,
  headers jsonb,
  retry_conf jsonb,
  comment text,
  created_at timestamptz NOT NULL DEFAULT now(),
  tries int NOT NULL DEFAULT 0,
  next_retry_at timestamptz,
  locked_at timestamptz,
  locked_by text,
  delivered boolean NOT NULL DEFAULT false,
  dead boolean NOT NULL DEFAULT false,
  missed boolean NOT NULL DEFAULT false,
  delivered_at timestamptz,
  UNIQUE (trigger_name, scheduled_time)
);
CREATE INDEX IF NOT EXISTS scheduled_events_due ON grafton_catalog.scheduled_events (scheduled_time)
  WHERE NOT delivered AND NOT dead;
CREATE TABLE IF NOT EXISTS grafton_catalog.scheduled_event_invocation_logs (
  id bigserial PRIMARY KEY,
  event_id uuid NOT NULL,
  trigger_name text,
  status int,
  request jsonb,
  response text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS scheduled_event_invocation_logs_event
  ON grafton_catalog.scheduled_event_invocation_logs (event_id);
CREATE INDEX IF NOT EXISTS scheduled_event_invocation_logs_trigger
  ON grafton_catalog.scheduled_event_invocation_logs (trigger_name, id);
";

/// The SQL writing timestamp `column` as Hasura's answers and payloads do: ISO
/// 8601 in UTC, its fraction only when it has one (3 or 6 digits).
pub(crate) fn iso(column: &str) -> String {
    let utc = format!("({column} AT TIME ZONE 'UTC')");
    format!(
        "CASE WHEN {column} IS NULL THEN NULL
           WHEN date_trunc('second', {column}) = {column}
             THEN to_char({utc}, 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')
           WHEN date_trunc('milliseconds', {column}) = {column}
             THEN to_char({utc}, 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')
           ELSE to_char({utc}, 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') END"
    )
}

/// One claimed firing.
#[derive(Debug, Clone)]
pub(crate) struct Firing {
    id: String,
    /// The cron trigger; `None`: a one-off event.
    trigger: Option<String>,
    scheduled_time: String,
    created_at: String,
    payload: Value,
    webhook: Option<String>,
    headers: Vec<HeaderConf>,
    retry_conf: ScheduleRetryConf,
    comment: Option<String>,
    tries: u32,
    /// Seconds past its instant, when claimed.
    late: f64,
}

impl Events {
    /// Creates the scheduled events' tables once (under the catalog's DDL lock).
    pub(crate) async fn prepare_schedules(&self) -> Result<(), ExecuteError> {
        let mut ready = self.schedules_ready.lock().await;
        if *ready {
            return Ok(());
        }
        let mut tx = self.ddl().await?;
        tx.batch(SCHEMA_SQL).await?;
        tx.commit().await?;
        *ready = true;
        Ok(())
    }

    /// Whether the scheduled events' tables exist (created by this instance).
    pub(crate) async fn schedules_ready(&self) -> bool {
        *self.schedules_ready.lock().await
    }

    /// Claims up to `limit` firings due now.
    pub(crate) async fn claim_firings(&self, limit: usize) -> Result<Vec<Firing>, ExecuteError> {
        let sql = format!(
            "WITH claimed AS (
  UPDATE grafton_catalog.scheduled_events SET locked_at = now(), locked_by = $1::text
  WHERE id IN (SELECT id FROM grafton_catalog.scheduled_events
    WHERE NOT delivered AND NOT dead AND scheduled_time <= now()
      AND (next_retry_at IS NULL OR next_retry_at <= now())
      AND (locked_at IS NULL OR locked_at < now() - make_interval(secs => $2::float8))
      AND (trigger_name IS NULL
           OR trigger_name IN (SELECT json_array_elements_text($4::json)))
    ORDER BY scheduled_time LIMIT $3::int8 FOR UPDATE SKIP LOCKED)
  RETURNING *)
SELECT coalesce(json_agg(json_build_object('id', id, 'trigger', trigger_name,
  'scheduled_time', {at}, 'created_at', {created},
  'payload', payload, 'webhook', webhook, 'headers', headers, 'retry_conf', retry_conf,
  'comment', comment, 'tries', tries,
  'late', extract(epoch FROM clock_timestamp() - scheduled_time))), '[]')::text
FROM claimed",
            at = iso("scheduled_time"),
            created = iso("created_at"),
        );
        // Only the cron triggers served here: another instance may serve more.
        let schemas = self.engine.schemas();
        let served: Vec<&str> = (schemas.cron_triggers().iter())
            .map(|c| c.name.as_str())
            .collect();
        let params = vec![
            param(Value::String(self.instance.clone()), "text"),
            param(json!(self.options.claim_timeout.as_secs_f64()), "float8"),
            param(json!(limit), "int8"),
            param(Value::String(json!(served).to_string()), "text"),
        ];
        let list = match self.one(sql, params).await? {
            Value::Array(list) => list,
            _ => Vec::new(),
        };
        Ok(list.into_iter().map(firing).collect())
    }

    /// Delivers one claimed firing and records what came of it.
    pub(crate) async fn deliver_firing(&self, firing: Firing) {
        let schemas = self.engine.schemas();
        let cron = match &firing.trigger {
            Some(name) => match schemas.cron_triggers().iter().find(|c| &c.name == name) {
                Some(c) => Some(c.clone()),
                None => {
                    // Not served here (yet): given back untried.
                    self.give_back_to(Log::Scheduled, &firing.id).await;
                    return;
                }
            },
            None => None,
        };
        let (url, headers, retry, payload, transform) = match &cron {
            Some(c) => (
                crate::webhook::templated(&c.webhook),
                c.headers.as_slice(),
                c.retry_conf,
                c.payload.clone().unwrap_or(Value::Null),
                c.request_transform.as_ref(),
            ),
            None => (
                (firing.webhook.as_deref())
                    .map_or_else(|| Err("no webhook".into()), crate::webhook::templated),
                firing.headers.as_slice(),
                firing.retry_conf,
                firing.payload.clone(),
                None,
            ),
        };
        let label = firing.trigger.as_deref().unwrap_or("(one-off)");
        if firing.late > f64::from(retry.tolerance_seconds) {
            // Later than its tolerance (after downtime, say): dead, never sent,
            // as Hasura's.
            self.miss(&firing, label, retry.tolerance_seconds).await;
            return;
        }
        let body = webhook_body(&firing, cron.as_ref(), payload);
        let called = std::time::Instant::now();
        let outcome = self
            .call(
                Log::Scheduled,
                url,
                headers,
                retry.timeout_seconds,
                &body,
                transform,
            )
            .await;
        let metrics = &self.engine.metrics().events;
        let seconds = called.elapsed().as_secs_f64();
        metrics.webhook.with_label_values(&[label]).observe(seconds);
        let dead = !outcome.ok && firing.tries >= retry.num_retries;
        let request = crate::call::logged_request(&body, headers, "1");
        let record = Record::new(Log::Scheduled, &firing.id, label, &request, &outcome);
        self.record(record.retry(dead, retry.retry_interval_seconds))
            .await;
    }

    /// Marks a firing past its tolerance dead, untried.
    async fn miss(&self, firing: &Firing, label: &str, tolerance: u32) {
        let sql = "UPDATE grafton_catalog.scheduled_events
            SET dead = true, missed = true, locked_at = NULL WHERE id = $1::uuid";
        let statement = Statement {
            sql: sql.into(),
            params: vec![param(Value::String(firing.id.clone()), "text")],
            compact: false,
        };
        let marked = async {
            let mut tx = self.replanned(STATEMENT_TIMEOUT).await?;
            tx.rows(&statement, &Map::new()).await?;
            tx.commit().await
        };
        match marked.await {
            Ok(()) => {
                self.count("dead");
                tracing::warn!(event = %firing.id, trigger = label, late = firing.late, tolerance,
                    "scheduled event dead: later than its tolerance, not sent");
            }
            Err(e) => tracing::warn!(event = %firing.id, "marking a missed event: {e}"),
        }
    }
}

/// Hasura's body for a scheduled event: `{id, name, scheduled_time, payload,
/// comment}` for a cron trigger's, `{id, scheduled_time, payload, comment,
/// created_at}` for a one-off; `comment` only when there is one.
fn webhook_body(
    firing: &Firing,
    cron: Option<&grafton_schema::config::CronTriggerConfig>,
    payload: Value,
) -> Value {
    let mut body = json!({"id": firing.id});
    if let Some(c) = cron {
        body["name"] = json!(c.name);
    }
    body["scheduled_time"] = json!(firing.scheduled_time);
    body["payload"] = payload;
    let comment = cron.map_or(&firing.comment, |c| &c.comment);
    if let Some(comment) = comment {
        body["comment"] = json!(comment);
    }
    if cron.is_none() {
        body["created_at"] = json!(firing.created_at);
    }
    body
}

/// A claimed row read.
fn firing(e: Value) -> Firing {
    let text = |key: &str| e[key].as_str().map(str::to_owned);
    Firing {
        id: text("id").unwrap_or_default(),
        trigger: text("trigger"),
        scheduled_time: text("scheduled_time").unwrap_or_default(),
        created_at: text("created_at").unwrap_or_default(),
        payload: e["payload"].clone(),
        webhook: text("webhook"),
        headers: serde_json::from_value(e["headers"].clone()).unwrap_or_default(),
        retry_conf: serde_json::from_value(e["retry_conf"].clone()).unwrap_or_default(),
        comment: text("comment"),
        tries: (e["tries"].as_u64())
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(0),
        late: e["late"].as_f64().unwrap_or(0.0),
    }
}
