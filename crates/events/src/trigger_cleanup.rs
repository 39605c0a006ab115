//! A trigger's own clean-up (Hasura's `cleanup_config`, and its
//! `cleanup_event_trigger_logs` command, which Hasura keeps for its enterprise
//! edition): its delivered and dead events older than `clear_older_than` hours,
//! and with `clean_invocation_logs` their invocation logs, deleted in batches
//! of `batch_size`, each under `timeout`, never an event still claimed.

use crate::sql::{int, param, text};
use crate::Events;
use chrono::{DateTime, Utc};
use grafton_engine::schedules::Schedule;
use grafton_execute::ExecuteError;
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::time::Duration;

/// The most events one batch deletes, whatever `batch_size` asks.
const MAX_BATCH: u32 = 100_000;

/// The most batches one clean-up runs (the rest waits for its next run).
const MAX_BATCHES: usize = 1_000;

/// What one clean-up deletes (`cleanup_event_trigger_logs`' args but the name).
#[derive(Debug, Clone, Deserialize)]
pub struct LogCleanup {
    /// Events deleted per statement.
    #[serde(default = "ten_thousand")]
    pub batch_size: u32,
    /// Delivered and dead events older than this many hours are deleted.
    pub clear_older_than: u32,
    /// Seconds one batch may take.
    #[serde(default = "sixty")]
    pub timeout: u32,
    /// Whether the deleted events' invocation logs go too.
    #[serde(default)]
    pub clean_invocation_logs: bool,
}

fn ten_thousand() -> u32 {
    10_000
}

fn sixty() -> u32 {
    60
}

impl Events {
    /// Deletes `trigger`'s old events as `cleanup` says: Hasura's answer,
    /// `{deleted_event_logs, deleted_event_invocation_logs}`.
    pub async fn clean_trigger(
        &self,
        trigger: &str,
        cleanup: &LogCleanup,
    ) -> Result<Value, ExecuteError> {
        let sql = "WITH gone AS (DELETE FROM grafton_catalog.event_log WHERE id IN (
               SELECT id FROM grafton_catalog.event_log
               WHERE trigger_name = $1::text AND (delivered OR dead) AND locked_at IS NULL
                 AND created_at < now() - make_interval(hours => $2::int4)
               LIMIT $3::int8 FOR UPDATE SKIP LOCKED) RETURNING id),
             logs AS (DELETE FROM grafton_catalog.event_invocation_logs
               WHERE $4::bool AND event_id IN (SELECT id FROM gone) RETURNING 1)
             SELECT json_build_object('events', (SELECT count(*) FROM gone),
               'logs', (SELECT count(*) FROM logs))::text";
        let batch = u64::from(cleanup.batch_size.clamp(1, MAX_BATCH));
        let timeout = Duration::from_secs(u64::from(cleanup.timeout.max(1)));
        let (mut events, mut logs) = (0, 0);
        for _ in 0..MAX_BATCHES {
            if self.sqlite() {
                let hours = f64::from(cleanup.clear_older_than) * 3600.0;
                let logs_too = cleanup.clean_invocation_logs;
                let (n, l) =
                    (self.clean_batch_sqlite(Some(trigger), &[], hours, batch, logs_too)).await?;
                events += n;
                logs += l;
                if n < batch {
                    break;
                }
                continue;
            }
            let params = vec![
                text(trigger),
                param(json!(cleanup.clear_older_than), "int4"),
                int(batch),
                param(json!(cleanup.clean_invocation_logs), "bool"),
            ];
            let counted = self.one_within(sql.into(), params, timeout).await?;
            let n = counted["events"].as_u64().unwrap_or(0);
            events += n;
            logs += counted["logs"].as_u64().unwrap_or(0);
            if n < batch {
                break;
            }
        }
        if events > 0 {
            tracing::info!(trigger, events, logs, "event trigger's log cleaned up");
        }
        Ok(json!({"deleted_event_logs": events, "deleted_event_invocation_logs": logs}))
    }

    /// Runs each trigger's own clean-up whose schedule came due since the last
    /// look (`last`: when each was last looked at; a trigger first seen is only
    /// noted). Paused ones do not run.
    pub(crate) async fn scheduled_cleanups(&self, last: &mut HashMap<String, DateTime<Utc>>) {
        let now = Utc::now();
        let schemas = self.engine.schemas();
        let mut seen = HashMap::new();
        for t in schemas.event_triggers().iter() {
            let Some(c) = t.config.cleanup_config.as_ref() else {
                continue;
            };
            let name = &t.config.name;
            let since = last.get(name).copied().unwrap_or(now);
            seen.insert(name.clone(), now);
            let due =
                Schedule::parse(&c.schedule).is_ok_and(|s| !s.instants(since, now, 1).is_empty());
            if c.paused || !due {
                continue;
            }
            let cleanup = LogCleanup {
                batch_size: c.batch_size,
                clear_older_than: c.clear_older_than,
                timeout: c.timeout,
                clean_invocation_logs: c.clean_invocation_logs,
            };
            if let Err(e) = self.clean_trigger(name, &cleanup).await {
                tracing::warn!(trigger = %name, "cleaning up the trigger's events: {e}");
            }
        }
        *last = seen;
    }
}
