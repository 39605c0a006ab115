//! The event log kept bounded by default: delivered and dead events (of event
//! triggers, cron triggers and one-off events), and their invocation logs, are
//! deleted once older than the retention, in small batches
//! (a batch's rows are not ones any writer or deliverer touches), so the log's
//! size follows retention × rate, not the project's age.

use crate::call::Log;
use crate::Events;
use grafton_execute::ExecuteError;
use std::time::Duration;

/// Rows deleted per statement.
const BATCH: usize = 1_000;

/// The most batches one clean-up runs before it lets the next tick go on.
const MAX_BATCHES: usize = 100;

/// The most events one clean-up deletes; one that deletes this many is run
/// again a second later, not a `cleanup_interval` later, so the clean-up keeps
/// up with any rate the deliveries do.
pub(crate) const PASS_LIMIT: usize = BATCH * MAX_BATCHES;

impl Events {
    /// Deletes what the retention no longer keeps; how many events went.
    pub async fn clean_up(&self) -> Result<usize, ExecuteError> {
        let keep = self.options.retention.as_secs_f64();
        // A trigger with its own `cleanup_config` is cleaned by that alone.
        let own_names: Vec<String> = (self.engine.schemas().event_triggers().iter())
            .filter(|t| t.config.cleanup_config.is_some())
            .map(|t| t.config.name.clone())
            .collect();
        if self.sqlite() {
            return self.clean_up_sqlite(&own_names, keep).await;
        }
        let own: Vec<String> = own_names
            .iter()
            .map(|n| crate::capture::literal(n))
            .collect();
        let others = match own.is_empty() {
            true => String::new(),
            false => format!("AND trigger_name NOT IN ({})", own.join(", ")),
        };
        let events = format!(
            "DELETE FROM grafton_catalog.event_log WHERE id IN (
               SELECT id FROM grafton_catalog.event_log
               WHERE (delivered OR dead) AND created_at < now() - make_interval(secs => {keep})
                 {others} LIMIT {BATCH})"
        );
        let logs = format!(
            "DELETE FROM grafton_catalog.event_invocation_logs WHERE id IN (
               SELECT id FROM grafton_catalog.event_invocation_logs
               WHERE created_at < now() - make_interval(secs => {keep}) {others} LIMIT {BATCH})"
        );
        let deleted = self.delete_in_batches(&events).await?;
        self.delete_in_batches(&logs).await?;
        if deleted > 0 {
            tracing::info!(deleted, "event log cleaned up");
        }
        Ok(deleted)
    }

    /// Runs the `DELETE … LIMIT {BATCH}` `statement` until it deletes less than a
    /// batch (at most [`MAX_BATCHES`] times); how many rows went.
    async fn delete_in_batches(&self, statement: &str) -> Result<usize, ExecuteError> {
        let mut deleted = 0;
        for _ in 0..MAX_BATCHES {
            let n = self.execute_counting(statement).await?;
            deleted += n;
            if n < BATCH {
                break;
            }
        }
        Ok(deleted)
    }

    /// Counts the events waiting in `log` (scheduled ones once due), for
    /// `/metrics`.
    pub(crate) async fn count_pending(&self, log: Log) {
        if self.sqlite() {
            let gauge = &self.engine.metrics().events.pending;
            match self.pending_sqlite().await {
                Ok(n) => gauge.with_label_values(&[log.table()]).set(n),
                Err(e) => tracing::debug!("counting the waiting events: {e}"),
            }
            return;
        }
        let due = match log {
            Log::Table => "",
            Log::Scheduled => "AND scheduled_time <= now()",
        };
        let sql = format!(
            "SELECT to_json(count(*))::text FROM grafton_catalog.{}
             WHERE NOT delivered AND NOT dead {due}",
            log.table()
        );
        let gauge = &self.engine.metrics().events.pending;
        match self.one(sql, Vec::new()).await {
            Ok(n) => gauge
                .with_label_values(&[log.table()])
                .set(n.as_i64().unwrap_or(0)),
            Err(e) => tracing::debug!("counting the waiting events: {e}"),
        }
    }

    /// Deletes the delivered and dead scheduled events the retention no longer
    /// keeps (by when they ended), and their invocation logs.
    pub(crate) async fn clean_up_firings(&self) {
        let keep = self.options.retention.as_secs_f64();
        let firings = format!(
            "DELETE FROM grafton_catalog.scheduled_events WHERE id IN (
               SELECT id FROM grafton_catalog.scheduled_events
               WHERE (delivered OR dead) AND greatest(scheduled_time, delivered_at, next_retry_at)
                 < now() - make_interval(secs => {keep})
               LIMIT {BATCH})"
        );
        let logs = format!(
            "DELETE FROM grafton_catalog.scheduled_event_invocation_logs WHERE id IN (
               SELECT id FROM grafton_catalog.scheduled_event_invocation_logs
               WHERE created_at < now() - make_interval(secs => {keep}) LIMIT {BATCH})"
        );
        for statement in [firings, logs] {
            if let Err(e) = self.delete_in_batches(&statement).await {
                tracing::warn!("cleaning up the scheduled events: {e}");
            }
        }
    }

    /// [`Self::clean_up`] on SQLite.
    async fn clean_up_sqlite(&self, own: &[String], keep: f64) -> Result<usize, ExecuteError> {
        let mut deleted = 0;
        for _ in 0..MAX_BATCHES {
            let batch = BATCH as u64;
            let (n, _) = (self.clean_batch_sqlite(None, own, keep, batch, false)).await?;
            deleted += n as usize;
            if n < batch {
                break;
            }
        }
        for _ in 0..MAX_BATCHES {
            if self.clean_logs_sqlite(own, keep, BATCH as u64).await? < BATCH as u64 {
                break;
            }
        }
        if deleted > 0 {
            tracing::info!(deleted, "event log cleaned up");
        }
        Ok(deleted)
    }

    /// Runs `sql` on its own; the rows it changed.
    async fn execute_counting(&self, sql: &str) -> Result<usize, ExecuteError> {
        let mut tx = self.replanned(Duration::from_secs(60)).await?;
        let counted = format!("WITH gone AS ({sql} RETURNING 1) SELECT count(*)::text FROM gone");
        let statement = grafton_sql::Statement {
            sql: counted,
            params: Vec::new(),
            compact: false,
        };
        let rows = tx.rows(&statement, &serde_json::Map::new()).await?;
        tx.commit().await?;
        let n = rows
            .first()
            .and_then(|r| r.first())
            .and_then(|v| v.as_str());
        Ok(n.and_then(|n| n.parse().ok()).unwrap_or(0))
    }
}
