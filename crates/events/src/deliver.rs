//! Delivering captured events: batches claimed with `FOR UPDATE SKIP LOCKED` (so
//! instances share the work and each event goes to one), each POSTed to its
//! trigger's webhook in Hasura's payload, under the trigger's timeout, with at most
//! `http_pool_size` calls at once and a bounded read of each answer; a 2xx answer
//! delivers it, anything else is tried again after `interval_sec` (or the answer's
//! `Retry-After`) until `num_retries`, then the event is dead. Every call is logged
//! in `event_invocation_logs` (no header values).

use crate::call::{Log, Record};
use crate::capture::literal;
use crate::sql::{param, STATEMENT_TIMEOUT};
use crate::Events;
use grafton_engine::events::ServedTrigger;
use grafton_execute::ExecuteError;
use grafton_sql::Statement;
use serde_json::{json, Map, Value};

/// Deliveries recorded in one statement, at most.
const RECORD_BATCH: usize = 500;

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
    trace: Value,
    created_at: String,
    tries: u32,
    /// Seconds since its capture, when it was claimed.
    age: f64,
    /// When it was claimed.
    claimed: std::time::Instant,
}

impl Events {
    /// Claims up to `limit` events due for delivery.
    pub(crate) async fn claim(&self, limit: usize) -> Result<Vec<Claimed>, ExecuteError> {
        if self.sqlite() {
            let list = self.claim_sqlite(limit).await?;
            return Ok(list.into_iter().map(claimed).collect());
        }
        let sql = "WITH claimed AS (
  UPDATE grafton_catalog.event_log SET locked_at = now(), locked_by = $1::text
  WHERE id IN (SELECT id FROM grafton_catalog.event_log
    WHERE NOT delivered AND NOT dead AND (next_retry_at IS NULL OR next_retry_at <= now())
      AND (locked_at IS NULL OR locked_at < now() - make_interval(secs => $2::float8))
    ORDER BY created_at LIMIT $3::int8 FOR UPDATE SKIP LOCKED)
  RETURNING id, trigger_name, schema_name, table_name, op, data, session, trace_context,
    created_at, tries)
SELECT coalesce(json_agg(json_build_object('id', id, 'trigger', trigger_name,
  'schema', schema_name, 'table', table_name, 'op', op, 'data', data, 'session', session,
  'trace', trace_context,
  'created_at', to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'),
  'tries', tries, 'age', extract(epoch FROM clock_timestamp() - created_at))), '[]')::text
FROM claimed";
        let params = vec![
            param(Value::String(self.instance.clone()), "text"),
            param(json!(self.options.claim_timeout.as_secs_f64()), "float8"),
            param(json!(limit), "int8"),
        ];
        let list = match self.one(sql.into(), params).await? {
            Value::Array(list) => list,
            _ => Vec::new(),
        };
        Ok(list.into_iter().map(claimed).collect())
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
            self.give_back_to(Log::Table, &event.id).await;
            return;
        };
        let payload = payload(&event, &trigger);
        let called = std::time::Instant::now();
        let c = &trigger.config;
        let url = crate::webhook::url(c);
        let timeout = c.retry_conf.timeout_sec;
        let outcome = self
            .call(
                Log::Table,
                url,
                &c.headers,
                timeout,
                &payload,
                c.request_transform.as_ref(),
            )
            .await;
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
        let request = crate::call::logged_request(&payload, &trigger.config.headers, "2");
        let interval = trigger.config.retry_conf.interval_sec;
        let record = Record::new(Log::Table, &event.id, &event.trigger, &request, &outcome);
        self.record(record.retry(dead, interval)).await;
    }

    /// Hands what a delivery came to over to the recorder.
    pub(crate) async fn record(&self, record: Record) {
        // To the writer, which records a batch in one statement; bounded, so a
        // slow database slows the deliveries rather than queueing without end.
        if self.records.send(record).await.is_err() {
            tracing::warn!("the event recorder has stopped");
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
            let (table, scheduled): (Vec<Record>, Vec<Record>) =
                batch.drain(..).partition(|r| r.log == Log::Table);
            for (log, records) in [(Log::Table, table), (Log::Scheduled, scheduled)] {
                if !records.is_empty() {
                    self.write_records(log, records.into_iter().map(|r| r.row).collect())
                        .await;
                }
            }
        }
    }

    /// Records one batch of one log's deliveries in one statement.
    async fn write_records(&self, log: Log, rows: Vec<Value>) {
        let events = log.table();
        let invocations = match log {
            Log::Table => "event_invocation_logs",
            Log::Scheduled => "scheduled_event_invocation_logs",
        };
        let sql = format!(
            "WITH o AS (SELECT * FROM json_to_recordset($1::json) AS x(id uuid,
               trigger text, status int4, request jsonb, response text, ok bool, dead bool,
               wait float8)),
             state AS (UPDATE grafton_catalog.{events} e SET tries = e.tries + 1,
               locked_at = NULL, delivered = o.ok,
               delivered_at = CASE WHEN o.ok THEN now() END, dead = o.dead,
               next_retry_at = CASE WHEN o.ok THEN e.next_retry_at
                                    ELSE now() + make_interval(secs => o.wait) END
               FROM o WHERE e.id = o.id)
           INSERT INTO grafton_catalog.{invocations}
             (event_id, trigger_name, status, request, response)
           SELECT id, trigger, status, request, response FROM o"
        );
        let statement = Statement {
            sql,
            params: vec![param(
                Value::String(Value::Array(rows.clone()).to_string()),
                "text",
            )],
            compact: false,
        };
        let result = match self.sqlite() {
            true => self.write_records_sqlite(&rows).await,
            false => {
                async {
                    let mut tx = self.replanned(STATEMENT_TIMEOUT).await?;
                    tx.rows(&statement, &Map::new()).await?;
                    tx.commit().await
                }
                .await
            }
        };
        if let Err(e) = result {
            // Still claimed: delivered again once the claims expire.
            tracing::warn!(events = rows.len(), "recording deliveries: {e}");
            return;
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

    /// Gives one claimed event back, untried, due in ten seconds.
    pub(crate) async fn give_back_to(&self, log: Log, id: &str) {
        let table = log.table();
        let sql = format!(
            "UPDATE grafton_catalog.{table} SET locked_at = NULL, \
             next_retry_at = now() + interval '10 seconds' WHERE id = {}::uuid",
            literal(id)
        );
        let db = self.engine.database();
        let given = match self.sqlite() {
            true => self.give_back_sqlite(id).await,
            false => {
                async {
                    let mut tx = db.autocommit(STATEMENT_TIMEOUT).await?;
                    tx.batch(&sql).await?;
                    tx.commit().await
                }
                .await
            }
        };
        if let Err(e) = given {
            tracing::warn!(event = %id, "giving back an event: {e}");
        }
    }

    /// Gives back what this instance claimed and has not delivered (at shutdown).
    pub async fn release(&self) {
        self.release_calls().await;
        if self.sqlite() {
            if self.has_log().await.unwrap_or(false) {
                if let Err(e) = self.release_sqlite().await {
                    tracing::warn!("giving back claimed events: {e}");
                }
            }
            return;
        }
        // Either log may not exist (events of one kind only); the instance's name
        // is digits and a dash.
        let me = literal(&self.instance);
        let mut sql = String::from("DO $release$ BEGIN ");
        for table in ["event_log", "scheduled_events"] {
            sql.push_str(&format!(
                "IF to_regclass('grafton_catalog.{table}') IS NOT NULL THEN \
                 UPDATE grafton_catalog.{table} SET locked_at = NULL \
                 WHERE locked_by = {me} AND NOT delivered; END IF; "
            ));
        }
        sql.push_str("END $release$");
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

/// A claim's JSON read.
fn claimed(e: Value) -> Claimed {
    let text = |key: &str| e[key].as_str().unwrap_or_default().to_owned();
    Claimed {
        id: text("id"),
        trigger: text("trigger"),
        schema: text("schema"),
        table: text("table"),
        op: text("op"),
        data: e["data"].clone(),
        session: e["session"].clone(),
        trace: e["trace"].clone(),
        created_at: text("created_at"),
        tries: (e["tries"].as_u64())
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(0),
        age: e["age"].as_f64().unwrap_or(0.0),
        claimed: std::time::Instant::now(),
    }
}

/// Hasura's event payload.
fn payload(event: &Claimed, trigger: &ServedTrigger) -> Value {
    json!({
        "event": {
            "session_variables": event.session,
            "op": event.op,
            "trace_context": event.trace,
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
