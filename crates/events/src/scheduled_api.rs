//! Scheduled events through the metadata API: `create_scheduled_event` (a one-off
//! event), `delete_scheduled_event`, `get_scheduled_events` and
//! `get_scheduled_event_invocations`, with Hasura's args and answers. Every value
//! is a bind parameter; every read is capped at [`MAX_ROWS`](crate::api::MAX_ROWS).

use crate::api::MAX_ROWS;
use crate::schedule::iso;
use crate::sql::{event_id, int, is_uuid, nullable, text};
use crate::Events;
use grafton_execute::ExecuteError;
use grafton_schema::config::{HeaderConf, ScheduleRetryConf};
use serde::Deserialize;
use serde_json::{json, Value};

/// `create_scheduled_event`'s args.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewEvent {
    /// The webhook's URL (`{{ENV}}` templates).
    pub webhook: String,
    /// When: an ISO 8601 time with its offset.
    pub schedule_at: String,
    /// The JSON sent as the payload's `payload`.
    #[serde(default)]
    pub payload: Option<Value>,
    /// Headers sent with the delivery.
    #[serde(default)]
    pub headers: Vec<HeaderConf>,
    /// Retries and tolerance.
    #[serde(default)]
    pub retry_conf: ScheduleRetryConf,
    /// A comment, sent in the payload.
    #[serde(default)]
    pub comment: Option<String>,
}

/// Which scheduled events a command is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// One-off events.
    OneOff,
    /// Cron triggers' events.
    Cron,
}

impl Kind {
    /// The SQL condition picking this kind's rows of `e`.
    fn condition(self) -> &'static str {
        match self {
            Kind::OneOff => "e.trigger_name IS NULL",
            Kind::Cron => "e.trigger_name IS NOT NULL",
        }
    }
}

/// An event's status as Hasura names it: a retry waiting is `scheduled`, a
/// last try failed `error`, one past its tolerance `dead`.
const STATUS: &str = "CASE WHEN e.delivered THEN 'delivered' WHEN e.dead AND e.missed THEN 'dead'
  WHEN e.dead THEN 'error' WHEN e.locked_at IS NOT NULL THEN 'locked' ELSE 'scheduled' END";

/// An event as Hasura's `get_scheduled_events` shows it.
fn event_json(kind: Kind) -> String {
    let common = format!(
        "'id', e.id, 'scheduled_time', {}, 'status', {STATUS}, 'tries', e.tries,
         'created_at', {}, 'next_retry_at', {}",
        iso("e.scheduled_time"),
        iso("e.created_at"),
        iso("e.next_retry_at")
    );
    match kind {
        Kind::Cron => format!("json_build_object({common}, 'trigger_name', e.trigger_name)"),
        Kind::OneOff => format!(
            "json_build_object({common}, 'webhook_conf', e.webhook, 'retry_conf', e.retry_conf,
               'payload', e.payload, 'header_conf', coalesce(e.headers, '[]'), 'comment', e.comment,
               'request_transform', NULL, 'response_transform', NULL)"
        ),
    }
}

/// The status filter of `get_scheduled_events` (`scheduled`, `locked`,
/// `delivered`, `error`, `dead`); every row when it lists none.
fn status_filter(statuses: &[String]) -> String {
    let known = ["scheduled", "locked", "delivered", "error", "dead"];
    let listed: Vec<String> = (statuses.iter())
        .filter(|s| known.contains(&s.as_str()))
        .map(|s| format!("'{s}'"))
        .collect();
    if listed.is_empty() {
        "true".into()
    } else {
        format!("({STATUS}) IN ({})", listed.join(", "))
    }
}

impl Events {
    /// Creates a one-off scheduled event; its id.
    pub async fn create_scheduled(&self, new: &NewEvent) -> Result<String, ExecuteError> {
        self.prepare_schedules().await?;
        let sql = "WITH e AS (INSERT INTO grafton_catalog.scheduled_events
              (scheduled_time, payload, webhook, headers, retry_conf, comment)
            VALUES ($1::timestamptz, $2::jsonb, $3::text, $4::jsonb, $5::jsonb, $6::text)
            RETURNING id) SELECT to_json(id)::text FROM e";
        let headers = serde_json::to_value(&new.headers).unwrap_or_default();
        let retry = serde_json::to_value(new.retry_conf).unwrap_or_default();
        let params = vec![
            text(new.schedule_at.clone()),
            text(new.payload.clone().unwrap_or(Value::Null).to_string()),
            text(new.webhook.clone()),
            text(headers.to_string()),
            text(retry.to_string()),
            nullable(new.comment.as_deref()),
        ];
        let id = self.one(sql.into(), params).await?;
        self.firings_woken.notify_one();
        Ok(id.as_str().unwrap_or_default().to_owned())
    }

    /// Deletes a scheduled event of `kind`; whether there was one.
    pub async fn delete_scheduled(&self, kind: Kind, id: &str) -> Result<bool, ExecuteError> {
        if !self.schedules_exist().await? {
            return Ok(false);
        }
        let sql = format!(
            "WITH gone AS (DELETE FROM grafton_catalog.scheduled_events e
               WHERE e.id = $1::uuid AND {} RETURNING 1),
             logs AS (DELETE FROM grafton_catalog.scheduled_event_invocation_logs l
               WHERE l.event_id = $1::uuid AND EXISTS (SELECT 1 FROM gone))
             SELECT to_json(count(*) > 0)::text FROM gone",
            kind.condition()
        );
        Ok(self.one(sql, vec![event_id(id)]).await? == Value::Bool(true))
    }

    /// Scheduled events of `kind` (of one cron trigger when `trigger` names it),
    /// by time: `{events, count?}`.
    pub async fn scheduled(
        &self,
        kind: Kind,
        trigger: Option<&str>,
        statuses: &[String],
        (limit, offset): (u64, u64),
        with_count: bool,
    ) -> Result<Value, ExecuteError> {
        if !self.schedules_exist().await? {
            return Ok(json!({"events": []}));
        }
        let filter = format!(
            "{} AND ($1::text IS NULL OR e.trigger_name = $1::text) AND {}",
            kind.condition(),
            status_filter(statuses)
        );
        // The count only when asked: it reads every row the filter keeps.
        let count = match with_count {
            true => format!(
                ", 'count', (SELECT count(*) FROM grafton_catalog.scheduled_events e WHERE {filter})"
            ),
            false => String::new(),
        };
        let sql = format!(
            "SELECT json_build_object('events', (SELECT coalesce(json_agg(x ORDER BY x_at), '[]') FROM (
                 SELECT {} AS x, e.scheduled_time AS x_at FROM grafton_catalog.scheduled_events e
                 WHERE {filter} ORDER BY e.scheduled_time LIMIT $2::int8 OFFSET $3::int8) s){count})::text",
            event_json(kind)
        );
        let params = vec![nullable(trigger), int(limit.min(MAX_ROWS)), int(offset)];
        self.one(sql, params).await
    }

    /// The invocation logs of one scheduled event, or of a cron trigger's events,
    /// newest first: `{invocations, count?}`.
    pub async fn scheduled_invocations(
        &self,
        kind: Kind,
        event_id: Option<&str>,
        trigger: Option<&str>,
        (limit, offset): (u64, u64),
        with_count: bool,
    ) -> Result<Value, ExecuteError> {
        // An id that is no UUID names no event.
        let unknown = event_id.is_some_and(|id| !is_uuid(id));
        if unknown || !self.schedules_exist().await? {
            return Ok(json!({"invocations": []}));
        }
        let filter = format!(
            "EXISTS (SELECT 1 FROM grafton_catalog.scheduled_events e WHERE e.id = l.event_id AND {})
             AND ($1::text IS NULL OR l.event_id = $1::uuid)
             AND ($2::text IS NULL OR l.trigger_name = $2::text)",
            kind.condition()
        );
        let log = format!(
            "json_build_object('id', l.id, 'event_id', l.event_id, 'status', l.status,
               'request', l.request,
               'response', json_build_object('type', CASE WHEN l.status BETWEEN 200 AND 299
                 THEN 'webhook_response' ELSE 'client_error' END,
                 'data', json_build_object('status', l.status, 'body', l.response), 'version', '1'),
               'created_at', {})",
            iso("l.created_at")
        );
        let count = match with_count {
            true => format!(
                ", 'count', (SELECT count(*) FROM grafton_catalog.scheduled_event_invocation_logs l
                 WHERE {filter})"
            ),
            false => String::new(),
        };
        let sql = format!(
            "SELECT json_build_object('invocations', (SELECT coalesce(json_agg(x ORDER BY x_id DESC), '[]') FROM (
                 SELECT {log} AS x, l.id AS x_id FROM grafton_catalog.scheduled_event_invocation_logs l
                 WHERE {filter} ORDER BY l.id DESC LIMIT $3::int8 OFFSET $4::int8) s){count})::text"
        );
        let params = vec![
            nullable(event_id),
            nullable(trigger),
            int(limit.min(MAX_ROWS)),
            int(offset),
        ];
        self.one(sql, params).await
    }

    /// Whether the scheduled events' tables exist.
    pub(crate) async fn schedules_exist(&self) -> Result<bool, ExecuteError> {
        if self.schedules_ready().await {
            return Ok(true);
        }
        let sql =
            "SELECT to_json(to_regclass('grafton_catalog.scheduled_events') IS NOT NULL)::text";
        Ok(self.one(sql.into(), Vec::new()).await? == Value::Bool(true))
    }
}
