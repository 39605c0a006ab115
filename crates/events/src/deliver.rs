//! Delivering captured events: batches claimed with `FOR UPDATE SKIP LOCKED` (so
//! instances share the work and each event goes to one), each POSTed to its
//! trigger's webhook in Hasura's payload, under the trigger's timeout, with at most
//! `http_pool_size` calls at once and a bounded read of each answer; a 2xx answer
//! delivers it, anything else is tried again after `interval_sec` (or the answer's
//! `Retry-After`) until `num_retries`, then the event is dead. Every call is logged
//! in `event_invocation_logs` (no header values).

use crate::capture::literal;
use crate::Events;
use grafton_engine::events::ServedTrigger;
use grafton_execute::ExecuteError;
use grafton_sql::{Param, ParamValue, SqlType, Statement};
use serde_json::{json, Map, Value};
use std::time::Duration;

/// How long one event-log statement may run.
const STATEMENT_TIMEOUT: Duration = Duration::from_secs(30);

/// The longest an event waits before it is tried again.
const MAX_WAIT_SECS: u64 = 24 * 3600;

/// Deliveries recorded in one statement, at most.
const RECORD_BATCH: usize = 500;

/// What one delivery came to, for the recorder.
pub(crate) struct Record {
    row: Value,
}

fn param(value: Value, ty: &'static str) -> Param {
    Param {
        value: ParamValue::Literal(value),
        ty: SqlType::Builtin(ty),
        list: false,
    }
}

/// One claimed event.
#[derive(Debug, Clone)]
pub(crate) struct Claimed {
    id: String,
    trigger: String,
    schema: String,
    table: String,
    op: String,
    data: Value,
    session: Value,
    created_at: String,
    tries: u32,
    /// Seconds since its capture, when it was claimed.
    age: f64,
    /// When it was claimed.
    claimed: std::time::Instant,
}

/// What a delivery came to.
struct Outcome {
    status: Option<u16>,
    ok: bool,
    retry_after: Option<u64>,
    response: String,
}

impl Events {
    /// Claims up to `limit` events due for delivery.
    pub(crate) async fn claim(&self, limit: usize) -> Result<Vec<Claimed>, ExecuteError> {
        let sql = "WITH claimed AS (
  UPDATE grafton_catalog.event_log SET locked_at = now(), locked_by = $1::text
  WHERE id IN (SELECT id FROM grafton_catalog.event_log
    WHERE NOT delivered AND NOT dead AND (next_retry_at IS NULL OR next_retry_at <= now())
      AND (locked_at IS NULL OR locked_at < now() - make_interval(secs => $2::float8))
    ORDER BY created_at LIMIT $3::int8 FOR UPDATE SKIP LOCKED)
  RETURNING id, trigger_name, schema_name, table_name, op, data, session, created_at, tries)
SELECT coalesce(json_agg(json_build_object('id', id, 'trigger', trigger_name,
  'schema', schema_name, 'table', table_name, 'op', op, 'data', data, 'session', session,
  'created_at', to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'),
  'tries', tries, 'age', extract(epoch FROM clock_timestamp() - created_at))), '[]')::text
FROM claimed";
        let statement = Statement {
            sql: sql.into(),
            params: vec![
                param(Value::String(self.instance.clone()), "text"),
                param(json!(self.options.claim_timeout.as_secs_f64()), "float8"),
                param(json!(limit), "int8"),
            ],
        };
        let db = self.engine.database();
        let mut tx = db.autocommit(STATEMENT_TIMEOUT).await?;
        let rows = tx.rows(&statement, &Map::new()).await?;
        tx.commit().await?;
        let text = rows.first().and_then(|r| r.first()).and_then(Value::as_str);
        let list: Vec<Value> = text
            .and_then(|t| serde_json::from_str(t).ok())
            .unwrap_or_default();
        Ok(list
            .into_iter()
            .map(|e| Claimed {
                id: e["id"].as_str().unwrap_or_default().to_owned(),
                trigger: e["trigger"].as_str().unwrap_or_default().to_owned(),
                schema: e["schema"].as_str().unwrap_or_default().to_owned(),
                table: e["table"].as_str().unwrap_or_default().to_owned(),
                op: e["op"].as_str().unwrap_or_default().to_owned(),
                data: e["data"].clone(),
                session: e["session"].clone(),
                created_at: e["created_at"].as_str().unwrap_or_default().to_owned(),
                tries: e["tries"]
                    .as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .unwrap_or(0),
                age: e["age"].as_f64().unwrap_or(0.0),
                claimed: std::time::Instant::now(),
            })
            .collect())
    }

    /// Delivers one claimed event and records what came of it.
    pub(crate) async fn deliver(&self, event: Claimed) {
        let schemas = self.engine.schemas();
        let trigger = (schemas.event_triggers().iter())
            .find(|t| t.config.name == event.trigger)
            .cloned();
        let Some(trigger) = trigger else {
            // Not served here (yet, or any more): given back untried, for an
            // instance that serves it, or for this one once it follows.
            self.give_back(&event).await;
            return;
        };
        let payload = payload(&event, &trigger);
        let called = std::time::Instant::now();
        let outcome = self.call(&trigger, &payload).await;
        let metrics = &self.engine.metrics().events;
        let name = [trigger.config.name.as_str()];
        metrics
            .webhook
            .with_label_values(&name)
            .observe(called.elapsed().as_secs_f64());
        if outcome.ok {
            let latency = event.age + event.claimed.elapsed().as_secs_f64();
            metrics.latency.with_label_values(&name).observe(latency);
        }
        let retries = trigger.config.retry_conf.num_retries;
        let dead = !outcome.ok && event.tries >= retries;
        let request = json!({
            "payload": payload,
            "headers": trigger.config.headers.iter().map(|h| json!({"name": h.name})).collect::<Vec<_>>(),
            "version": "2",
        });
        self.record(&event, Some(&trigger), &request, &outcome, dead)
            .await;
    }

    /// POSTs `payload` to the trigger's webhook under its timeout; reads at most
    /// `max_response_bytes` of the answer.
    async fn call(&self, trigger: &ServedTrigger, payload: &Value) -> Outcome {
        let failed = |response: String| Outcome {
            status: None,
            ok: false,
            retry_after: None,
            response,
        };
        let url = match crate::webhook::url(&trigger.config) {
            Ok(url) => url,
            Err(e) => return failed(e),
        };
        let Ok(_permit) = self.calls.acquire().await else {
            return failed("the delivery pool is closed".into());
        };
        // Within the claim: a slower call would see its event claimed again.
        let most = self
            .options
            .claim_timeout
            .saturating_sub(Duration::from_secs(60));
        let asked = Duration::from_secs(u64::from(trigger.config.retry_conf.timeout_sec.max(1)));
        let timeout = asked.min(most.max(Duration::from_secs(1)));
        let mut request = self.client.post(&url).timeout(timeout).json(payload);
        for h in &trigger.config.headers {
            match crate::webhook::header_value(h) {
                Ok(v) => request = request.header(h.name.as_str(), v),
                Err(e) => return failed(e),
            }
        }
        let mut response = match request.send().await {
            Ok(r) => r,
            Err(e) => return failed(crate::webhook::describe(&e)),
        };
        let status = response.status();
        let retry_after = (response.headers().get("retry-after"))
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        let mut body = Vec::new();
        let cap = self.options.max_response_bytes;
        while body.len() < cap {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    body.extend_from_slice(&chunk[..chunk.len().min(cap - body.len())])
                }
                Ok(None) | Err(_) => break,
            }
        }
        Outcome {
            status: Some(status.as_u16()),
            ok: status.is_success(),
            retry_after,
            response: String::from_utf8_lossy(&body).into_owned(),
        }
    }

    /// Marks the event delivered, due again, or dead, and logs the invocation.
    async fn record(
        &self,
        event: &Claimed,
        trigger: Option<&ServedTrigger>,
        request: &Value,
        outcome: &Outcome,
        dead: bool,
    ) {
        let interval = trigger.map_or(10, |t| u64::from(t.config.retry_conf.interval_sec));
        // A Retry-After past a day is held to a day: an event always comes due again.
        let wait = outcome
            .retry_after
            .unwrap_or(0)
            .max(interval)
            .min(MAX_WAIT_SECS);
        let record = Record {
            row: json!({
                "id": event.id, "trigger": event.trigger, "status": outcome.status,
                "request": request, "response": outcome.response,
                "ok": outcome.ok, "dead": dead, "wait": wait,
            }),
        };
        // To the writer, which records a batch in one statement; bounded, so a
        // slow database slows the deliveries rather than queueing without end.
        if self.records.send(record).await.is_err() {
            tracing::warn!(event = %event.id, "the event recorder has stopped");
        }
    }

    /// Writes what deliveries came to, many in one statement, until every sender
    /// is gone: each event's state and its invocation log.
    pub(crate) async fn recorder(
        self: std::sync::Arc<Self>,
        mut rx: tokio::sync::mpsc::Receiver<Record>,
    ) {
        let mut batch = Vec::with_capacity(RECORD_BATCH);
        while rx.recv_many(&mut batch, RECORD_BATCH).await > 0 {
            let rows: Vec<Value> = batch.drain(..).map(|r| r.row).collect();
            let sql = "WITH o AS (SELECT * FROM json_to_recordset($1::json) AS x(id uuid,
                   trigger text, status int4, request jsonb, response text, ok bool, dead bool,
                   wait float8)),
                 state AS (UPDATE grafton_catalog.event_log e SET tries = e.tries + 1,
                   locked_at = NULL, delivered = o.ok,
                   delivered_at = CASE WHEN o.ok THEN now() END, dead = o.dead,
                   next_retry_at = CASE WHEN o.ok THEN e.next_retry_at
                                        ELSE now() + make_interval(secs => o.wait) END
                   FROM o WHERE e.id = o.id)
               INSERT INTO grafton_catalog.event_invocation_logs
                 (event_id, trigger_name, status, request, response)
               SELECT id, trigger, status, request, response FROM o";
            let statement = Statement {
                sql: sql.into(),
                params: vec![param(
                    Value::String(Value::Array(rows.clone()).to_string()),
                    "text",
                )],
            };
            let db = self.engine.database();
            let result = async {
                let mut tx = db.autocommit(STATEMENT_TIMEOUT).await?;
                tx.rows(&statement, &Map::new()).await?;
                tx.commit().await
            }
            .await;
            if let Err(e) = result {
                // Still claimed: delivered again once the claims expire.
                tracing::warn!(events = rows.len(), "recording deliveries: {e}");
                continue;
            }
            for row in &rows {
                match (row["ok"] == true, row["dead"] == true) {
                    (true, _) => self.count("delivered"),
                    (false, true) => {
                        self.count("dead");
                        tracing::warn!(event = %row["id"], trigger = %row["trigger"],
                            status = %row["status"], "event dead: its webhook failed every try");
                    }
                    (false, false) => self.count("retried"),
                }
            }
        }
    }

    /// Gives one claimed event back, untried, due in ten seconds.
    async fn give_back(&self, event: &Claimed) {
        let sql = format!(
            "UPDATE grafton_catalog.event_log SET locked_at = NULL, \
             next_retry_at = now() + interval '10 seconds' WHERE id = {}::uuid",
            literal(&event.id)
        );
        let db = self.engine.database();
        let given = async {
            let mut tx = db.autocommit(STATEMENT_TIMEOUT).await?;
            tx.batch(&sql).await?;
            tx.commit().await
        }
        .await;
        if let Err(e) = given {
            tracing::warn!(event = %event.id, "giving back an event: {e}");
        }
    }

    /// Gives back what this instance claimed and has not delivered (at shutdown).
    pub async fn release(&self) {
        let sql = format!(
            "UPDATE grafton_catalog.event_log SET locked_at = NULL \
             WHERE locked_by = {} AND NOT delivered",
            literal(&self.instance)
        );
        let db = self.engine.database();
        let released = async {
            let mut tx = db.autocommit(STATEMENT_TIMEOUT).await?;
            tx.batch(&sql).await?;
            tx.commit().await
        }
        .await;
        if let Err(e) = released {
            tracing::warn!("giving back claimed events: {e}");
        }
    }
}

/// Hasura's event payload.
fn payload(event: &Claimed, trigger: &ServedTrigger) -> Value {
    json!({
        "event": {
            "session_variables": event.session,
            "op": event.op,
            "data": {"old": event.data["old"], "new": event.data["new"]},
        },
        "created_at": event.created_at,
        "id": event.id,
        "delivery_info": {
            "max_retries": trigger.config.retry_conf.num_retries,
            "current_retry": event.tries,
        },
        "trigger": {"name": event.trigger},
        "table": {"schema": event.schema, "name": event.table},
    })
}
