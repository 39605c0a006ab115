//! Cron triggers' firings written ahead, and the scheduled events' loop.
//!
//! Writing is append-only, as Hasura's: a trigger with fewer than 100 firings
//! waiting gets 100 more after its latest, so a firing deleted by hand stays
//! deleted. Waiting firings are removed only as an instance takes a metadata
//! change (its own, or another's it follows) and at start, when its schema is
//! the newest: those of triggers the metadata no longer names, and the future
//! ones a changed schedule no longer gives. A trigger the metadata names but
//! this instance leaves out (an environment variable unset here) keeps its
//! firings, and is not claimed here.

use crate::sql::{one_text, param, STATEMENT_TIMEOUT};
use crate::Events;
use chrono::{DateTime, Utc};
use grafton_engine::schedules::Schedule;
use grafton_execute::ExecuteError;
use grafton_schema::inconsistent::ObjectKind;
use grafton_sql::Statement;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::time::Duration;

/// Firings of each cron trigger kept ahead (as Hasura's).
const AHEAD: usize = 100;

/// How often the firings ahead are topped up, besides at each schema change.
const GENERATE_EVERY: Duration = Duration::from_secs(60);

/// How often an idle instance looks whether one-off events appeared.
const IDLE_LOOK: Duration = Duration::from_secs(10);

/// The advisory lock that serializes writing firings across instances.
const LOCK: i64 = grafton_execute::CATALOG_DDL_LOCK + 1;

fn text(v: impl Into<String>) -> grafton_sql::Param {
    param(Value::String(v.into()), "text")
}

impl Events {
    /// Tops up each served cron trigger's firings to [`AHEAD`] waiting, after
    /// its latest. One instance at a time; the others skip (the unique key
    /// keeps each instant one row regardless).
    pub(crate) async fn generate(&self) -> Result<(), ExecuteError> {
        let db = self.engine.database();
        let mut tx = db.begin(STATEMENT_TIMEOUT).await?;
        let try_lock = format!("SELECT pg_try_advisory_xact_lock({LOCK})::text");
        if one_text(&mut tx, &try_lock).await?.as_deref() == Some("true") {
            self.append(&mut tx).await?;
        }
        tx.commit().await
    }

    /// The append itself, in `tx`.
    async fn append(&self, tx: &mut grafton_execute::Tx) -> Result<(), ExecuteError> {
        let schemas = self.engine.schemas();
        let crons = schemas.cron_triggers();
        if crons.is_empty() {
            return Ok(());
        }
        let names: Vec<&str> = crons.iter().map(|c| c.name.as_str()).collect();
        let stats_sql = "SELECT coalesce(json_object_agg(trigger_name, json_build_array(
               to_json(extract(epoch FROM last)), waiting)), '{}')::text FROM (
             SELECT trigger_name, max(scheduled_time) AS last,
               count(*) FILTER (WHERE NOT delivered AND NOT dead AND tries = 0) AS waiting
             FROM grafton_catalog.scheduled_events
             WHERE trigger_name IN (SELECT json_array_elements_text($1::json))
             GROUP BY trigger_name) s";
        let statement = Statement {
            sql: stats_sql.into(),
            params: vec![text(json!(names).to_string())],
            compact: false,
        };
        let rows = tx.rows(&statement, &Map::new()).await?;
        let cell = rows.first().and_then(|r| r.first()).and_then(Value::as_str);
        let stats: HashMap<String, (f64, u64)> = cell
            .and_then(|t| serde_json::from_str(t).ok())
            .unwrap_or_default();
        let now = Utc::now();
        let until = now + chrono::Duration::days(366);
        let mut wanted = Vec::new();
        for c in crons.iter() {
            let (last, waiting) = stats.get(&c.name).copied().unwrap_or((0.0, 0));
            if waiting >= AHEAD as u64 {
                continue;
            }
            let Ok(schedule) = Schedule::parse(&c.schedule) else {
                continue;
            };
            let latest = DateTime::from_timestamp_micros((last * 1e6) as i64).unwrap_or(now);
            let times: Vec<String> = (schedule.instants(latest.max(now), until, AHEAD).iter())
                .map(DateTime::to_rfc3339)
                .collect();
            if !times.is_empty() {
                wanted.push(json!({"name": c.name, "times": times}));
            }
        }
        if wanted.is_empty() {
            return Ok(());
        }
        let insert = "INSERT INTO grafton_catalog.scheduled_events (trigger_name, scheduled_time)
            SELECT w.name, t::timestamptz
            FROM json_to_recordset($1::json) AS w(name text, times json),
                 json_array_elements_text(w.times) t
            ON CONFLICT (trigger_name, scheduled_time) DO NOTHING";
        let statement = Statement {
            sql: insert.into(),
            params: vec![text(Value::Array(wanted).to_string())],
            compact: false,
        };
        tx.rows(&statement, &Map::new()).await?;
        Ok(())
    }

    /// After a metadata change this instance took (and at start): removes
    /// the waiting, unclaimed firings of cron triggers the metadata no longer
    /// names, and the future ones a served trigger's schedule no longer gives;
    /// then tops up.
    pub(crate) async fn reconcile_crons(&self) -> Result<(), ExecuteError> {
        let schemas = self.engine.schemas();
        // Named by the metadata: served, or left out (an unset variable) but there.
        let mut known: Vec<&str> = (schemas.cron_triggers().iter())
            .map(|c| c.name.as_str())
            .collect();
        let left_out = schemas.left_out().iter();
        known.extend(
            left_out
                .filter(|i| i.kind == ObjectKind::CronTrigger)
                .map(|i| i.name.as_str()),
        );
        let now = Utc::now();
        let until = now + chrono::Duration::days(366);
        // Twice the window written ahead: every firing written is in it.
        let given: Vec<Value> = (schemas.cron_triggers().iter())
            .filter_map(|c| {
                let times: Vec<String> = (Schedule::parse(&c.schedule).ok()?)
                    .instants(now, until, 2 * AHEAD)
                    .iter()
                    .map(DateTime::to_rfc3339)
                    .collect();
                Some(json!({"name": c.name, "times": times}))
            })
            .collect();
        let sql = "WITH given AS (SELECT w.name, t::timestamptz AS at
               FROM json_to_recordset($2::json) AS w(name text, times json),
                    json_array_elements_text(w.times) t)
             DELETE FROM grafton_catalog.scheduled_events e
             WHERE e.trigger_name IS NOT NULL AND e.locked_at IS NULL
               AND NOT e.delivered AND NOT e.dead
               AND (e.trigger_name NOT IN (SELECT json_array_elements_text($1::json))
                    OR (e.tries = 0 AND e.scheduled_time > $3::timestamptz
                        AND e.trigger_name IN (SELECT name FROM given)
                        AND NOT EXISTS (SELECT 1 FROM given g
                          WHERE g.name = e.trigger_name AND g.at = e.scheduled_time)))";
        let statement = Statement {
            sql: sql.into(),
            params: vec![
                text(json!(known).to_string()),
                text(Value::Array(given).to_string()),
                text(now.to_rfc3339()),
            ],
            compact: false,
        };
        let db = self.engine.database();
        let mut tx = db.begin(STATEMENT_TIMEOUT).await?;
        tx.batch(&format!("SELECT pg_advisory_xact_lock({LOCK})"))
            .await?;
        // Only a view as new as the stored metadata deletes: one behind it (a
        // change saved since it was built) would undo that change's firings; it
        // follows soon, and reconciles then.
        if !self.behind_the_store(&mut tx).await? {
            tx.rows(&statement, &Map::new()).await?;
        }
        self.append(&mut tx).await?;
        tx.commit().await
    }

    /// Whether the metadata store holds a newer version than the one served.
    async fn behind_the_store(&self, tx: &mut grafton_execute::Tx) -> Result<bool, ExecuteError> {
        let exists = "SELECT (to_regclass('grafton_catalog.metadata') IS NOT NULL)::text";
        if one_text(tx, exists).await?.as_deref() != Some("true") {
            return Ok(false);
        }
        let served = self.engine.metrics().metadata_version.get();
        let newer = format!(
            "SELECT EXISTS (SELECT 1 FROM grafton_catalog.metadata
               WHERE resource_version > {served})::text"
        );
        Ok(one_text(tx, &newer).await?.as_deref() == Some("true"))
    }

    /// Writes the cron triggers' firings and delivers the firings due, until
    /// aborted: idle (no connection of its own but a look every 10 s) until a
    /// cron trigger is served or a one-off event exists.
    pub(crate) async fn run_schedules(self: std::sync::Arc<Self>) {
        let mut changes = self.engine.schema_changes();
        loop {
            if !self.engine.schemas().cron_triggers().is_empty()
                || self.schedules_exist().await.unwrap_or(false)
            {
                break;
            }
            tokio::select! {
                changed = changes.changed() => if changed.is_err() { return },
                () = self.firings_woken.notified() => {}
                () = tokio::time::sleep(IDLE_LOOK) => {}
            }
        }
        while let Err(e) = self.prepare_schedules().await {
            tracing::error!("the scheduled events' tables could not be created: {e}");
            tokio::time::sleep(self.options.fetch_interval.max(Duration::from_secs(5))).await;
        }
        if let Err(e) = self.reconcile_crons().await {
            tracing::warn!("cron triggers: writing their firings: {e}");
        }
        let mut generating = tokio::time::interval(GENERATE_EVERY);
        generating.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut cleanup = tokio::time::interval(self.options.cleanup_interval);
        cleanup.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut counting = tokio::time::interval(Duration::from_secs(15));
        counting.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut running = tokio::task::JoinSet::new();
        let (pool, batch) = (self.options.http_pool_size, self.options.fetch_batch_size);
        loop {
            // As the event triggers' loop: claims in batches, not one per call
            // finished.
            let room = pool.saturating_sub(running.len());
            let worth = (pool / 2).min(batch).max(1);
            if room > 0 && (room >= worth || running.is_empty()) {
                match self.claim_firings(room.min(batch)).await {
                    Ok(firings) => {
                        for firing in firings {
                            let me = self.clone();
                            running.spawn(async move { me.deliver_firing(firing).await });
                        }
                    }
                    Err(e) => tracing::warn!("scheduled events: claiming: {e}"),
                }
            }
            let written = tokio::select! {
                () = self.firings_woken.notified() => Ok(()),
                () = tokio::time::sleep(self.options.fetch_interval) => Ok(()),
                changed = changes.changed() => match changed {
                    Err(_) => return,
                    Ok(()) => self.reconcile_crons().await,
                },
                _ = generating.tick() => self.generate().await,
                _ = cleanup.tick() => {
                    self.clean_up_firings().await;
                    Ok(())
                }
                _ = counting.tick() => {
                    self.count_pending(crate::call::Log::Scheduled).await;
                    Ok(())
                }
                Some(_) = running.join_next(), if !running.is_empty() => Ok(()),
            };
            if let Err(e) = written {
                tracing::warn!("cron triggers: writing their firings: {e}");
            }
        }
    }
}
