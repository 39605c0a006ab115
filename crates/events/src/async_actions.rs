//! The asynchronous actions' worker: calls written to the action log by their
//! mutations are claimed (`FOR UPDATE SKIP LOCKED` on PostgreSQL, so each
//! instance calls different ones; a claim expires with its instance), their
//! handlers called through the engine (its bounded client, the action's
//! timeout), and their outcomes written back; finished calls are deleted after
//! the retention. Idle, with no connection of its own, while no asynchronous
//! action is served.

use crate::Events;
use grafton_engine::action_log;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// Finished calls deleted per clean-up statement.
const CLEANUP_BATCH: u64 = 1_000;

impl Events {
    /// Claims and calls asynchronous actions until aborted: at once when this
    /// instance writes one, else every `async_fetch_interval`; at most
    /// `async_fetch_batch_size` handlers called at once.
    pub(crate) async fn run_async_actions(self: Arc<Self>) {
        if self.options.async_fetch_interval.is_zero() {
            return;
        }
        let mut changes = self.engine.schema_changes();
        let written = self.engine.async_actions_written();
        let mut running = tokio::task::JoinSet::new();
        let mut cleanup = tokio::time::interval(self.options.cleanup_interval);
        cleanup.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let actions = self.engine.async_actions();
            if actions.is_empty() && running.is_empty() {
                // Nothing to call until a schema serves an asynchronous action.
                if changes.changed().await.is_err() {
                    return;
                }
                continue;
            }
            let room = self
                .options
                .async_fetch_batch_size
                .saturating_sub(running.len());
            if room > 0 && !actions.is_empty() {
                match self.claim_calls(&actions, room).await {
                    Ok(calls) => {
                        let full = calls.len() == room;
                        // Within the claim: a slower call would be claimed again.
                        let most = (self.options.claim_timeout)
                            .saturating_sub(Duration::from_secs(60))
                            .max(Duration::from_secs(1));
                        for call in calls {
                            let me = self.clone();
                            running.spawn(async move {
                                let id = call.id.clone();
                                if let Err(e) = me.engine.process_async_action(call, most).await {
                                    tracing::warn!(call = %id, "asynchronous action: {e}");
                                }
                            });
                        }
                        if full {
                            tokio::task::yield_now().await;
                            continue;
                        }
                    }
                    Err(e) => tracing::warn!("asynchronous actions: claiming: {e}"),
                }
            }
            tokio::select! {
                () = written.notified() => {}
                () = tokio::time::sleep(self.options.async_fetch_interval) => {}
                Ok(()) = changes.changed() => {}
                Some(_) = running.join_next(), if !running.is_empty() => {}
                _ = cleanup.tick() => self.clean_up_calls().await,
            }
        }
    }

    async fn claim_calls(
        &self,
        actions: &[String],
        limit: usize,
    ) -> Result<Vec<action_log::Claimed>, grafton_engine::error::EngineError> {
        let db = self.engine.action_log().await?;
        let claimed = action_log::claim(
            db,
            actions,
            &self.instance,
            limit,
            self.options.claim_timeout,
        )
        .await?;
        if !claimed.is_empty() {
            self.async_claimed.store(true, Ordering::Release);
        }
        Ok(claimed)
    }

    /// Deletes finished calls older than the retention, a batch at a time.
    async fn clean_up_calls(&self) {
        let Ok(db) = self.engine.action_log().await else {
            return;
        };
        for _ in 0..100 {
            match action_log::clean_up(db, self.options.retention, CLEANUP_BATCH).await {
                Ok(n) if n == CLEANUP_BATCH => continue,
                Ok(_) => return,
                Err(e) => {
                    tracing::warn!("cleaning up the action log: {e}");
                    return;
                }
            }
        }
    }

    /// Gives back the calls this instance claimed and did not finish.
    pub(crate) async fn release_calls(&self) {
        if !self.async_claimed.load(Ordering::Acquire) {
            return;
        }
        let db = self.engine.database();
        let released = tokio::time::timeout(
            Duration::from_secs(10),
            action_log::release(db, &self.instance),
        )
        .await;
        match released {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!("giving back claimed asynchronous actions: {e}"),
            Err(_) => tracing::warn!("giving back claimed asynchronous actions: timed out"),
        }
    }
}
