//! The task that polls one cohort: on its interval, when a subscriber joins and
//! after a write to a table it reads; each batch of subscribers is one statement.

use super::super::{lock, CohortKey};
use super::Cohort;
use crate::error::EngineError;
use grafton_execute::Database;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, Weak};
use tokio::sync::Semaphore;
use tokio::time::Instant;

/// The task that polls one cohort until its last subscriber leaves.
pub(crate) struct Poller {
    pub(crate) cohort: Arc<Cohort>,
    pub(crate) db: Database,
    pub(crate) polls: Arc<Semaphore>,
    pub(crate) cohorts: Weak<Mutex<HashMap<CohortKey, Arc<Cohort>>>>,
    pub(crate) key: CohortKey,
    /// Each batch's statement time.
    pub(crate) poll_seconds: prometheus::Histogram,
}

impl Poller {
    pub(crate) async fn run(self) {
        let options = self.cohort.options;
        let mut next_full = Instant::now() + options.interval;
        let mut last_poll = Instant::now()
            .checked_sub(options.debounce)
            .unwrap_or_else(Instant::now);
        loop {
            tokio::select! {
                () = tokio::time::sleep_until(next_full) => {}
                () = self.cohort.wake.notified() => {}
            }
            if self.cohort.len() == 0 && self.end() {
                return;
            }
            let changed = self.cohort.changed.swap(false, Ordering::AcqRel);
            let full = changed || Instant::now() >= next_full;
            if !full && !self.cohort.fresh.swap(false, Ordering::AcqRel) {
                continue;
            }
            if changed {
                // Many writes in a row cost one poll per `debounce`, not one each.
                tokio::time::sleep_until(last_poll + options.debounce).await;
            }
            if full {
                self.cohort.fresh.store(false, Ordering::Release);
                next_full = Instant::now() + options.interval;
            }
            last_poll = Instant::now();
            let route = if changed && options.primary_after_change {
                grafton_execute::Route::Primary
            } else {
                grafton_execute::Route::Replica
            };
            self.poll(!full, route).await;
        }
    }

    /// Removes the cohort if it is still empty (under the cohorts' lock, which a
    /// joiner holds too, so none can slip in); false if someone joined meanwhile.
    fn end(&self) -> bool {
        let Some(cohorts) = self.cohorts.upgrade() else {
            return true;
        };
        let mut cohorts = lock(&cohorts);
        if self.cohort.len() > 0 {
            return false;
        }
        if cohorts
            .get(&self.key)
            .is_some_and(|c| Arc::ptr_eq(c, &self.cohort))
        {
            cohorts.remove(&self.key);
        }
        true
    }

    /// One poll: every batch's statement, at most `concurrency` at once over all
    /// cohorts, each batch delivered as it completes.
    async fn poll(&self, fresh_only: bool, route: grafton_execute::Route) {
        let mut running = tokio::task::JoinSet::new();
        let concurrency = self.cohort.options.concurrency.max(1);
        for (ids, json) in self.cohort.batches(fresh_only) {
            let cohort = self.cohort.clone();
            let db = self.db.clone();
            let polls = self.polls.clone();
            let seconds = self.poll_seconds.clone();
            running.spawn(async move {
                let Ok(_permit) = polls.acquire_owned().await else {
                    return;
                };
                let started = Instant::now();
                // Answers are kept only as far as the memory budget has room for
                // them, shared by the polls that may run at once.
                let room = cohort.memory.free() / concurrency;
                let answers = db
                    .poll(&cohort.statement, json.clone(), cohort.budget, route, room)
                    .await;
                seconds.observe(started.elapsed().as_secs_f64());
                match answers {
                    // One subscriber's values can fail the whole statement (a value the
                    // database cannot cast, say): then each runs alone, so the error
                    // reaches only its own subscriber. A timeout is not split: it
                    // would cost one time limit per subscriber.
                    Err(e)
                        if ids.len() > 1 && e.kind() != grafton_execute::DbErrorKind::Timeout =>
                    {
                        let rows: Vec<serde_json::Value> =
                            serde_json::from_str(&json).unwrap_or_default();
                        for (group, row) in ids.iter().zip(rows) {
                            let one = format!("[{row}]");
                            let answer =
                                (db.poll(&cohort.statement, one, cohort.budget, route, 0)).await;
                            let group = std::slice::from_ref(group);
                            cohort.deliver(group, answer.map_err(EngineError::from));
                        }
                    }
                    answers => cohort.deliver(&ids, answers.map_err(EngineError::from)),
                }
            });
        }
        while running.join_next().await.is_some() {}
    }
}
