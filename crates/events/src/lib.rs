//! Event triggers (Hasura's): each row a trigger covers that a transaction
//! changes, captured in that transaction by a PostgreSQL trigger into Grafton's
//! event log (`capture`), then delivered to the trigger's webhook at least once,
//! by whichever instance claims it first (`deliver`), with retries and logs.

mod api;
mod async_actions;
mod call;
pub mod capture;
mod cleanup;
mod cron_firings;
mod deliver;
mod install;
pub mod schedule;
pub mod scheduled_api;
mod sql;
mod sqlite_capture;
mod sqlite_log;
pub mod trigger_cleanup;
use grafton_remote::webhook;

use grafton_engine::events::ServedTrigger;
use grafton_engine::Engine;
use std::sync::Arc;
use std::time::Duration;

/// How events are delivered.
#[derive(Debug, Clone, Copy)]
pub struct EventOptions {
    /// Webhook calls at once, over all triggers (`--events-http-pool-size`).
    pub http_pool_size: usize,
    /// How often the log is looked at when no notification came
    /// (`--events-fetch-interval`).
    pub fetch_interval: Duration,
    /// Events claimed at once (`--events-fetch-batch-size`).
    pub fetch_batch_size: usize,
    /// A claim older than this is taken to be a crashed instance's: the event is
    /// delivered again.
    pub claim_timeout: Duration,
    /// The most bytes of a webhook's answer read (and logged).
    pub max_response_bytes: usize,
    /// How long delivered and dead events, and invocation logs, are kept
    /// (`--events-retention`).
    pub retention: Duration,
    /// How often the clean-up runs.
    pub cleanup_interval: Duration,
    /// How often the action log is looked at for asynchronous actions' calls
    /// written by other instances (`--async-actions-fetch-interval`; zero: this
    /// instance calls none). A call written by this one is looked at at once.
    pub async_fetch_interval: Duration,
    /// Asynchronous actions' handlers called at once
    /// (`--async-actions-fetch-batch-size`).
    pub async_fetch_batch_size: usize,
}

impl Default for EventOptions {
    fn default() -> Self {
        Self {
            http_pool_size: 100,
            fetch_interval: Duration::from_millis(100),
            fetch_batch_size: 100,
            claim_timeout: Duration::from_secs(360),
            max_response_bytes: 64 * 1024,
            retention: Duration::from_secs(7 * 24 * 3600),
            cleanup_interval: Duration::from_secs(300),
            async_fetch_interval: Duration::from_secs(1),
            async_fetch_batch_size: 10,
        }
    }
}

/// The event machinery of one instance.
pub struct Events {
    engine: Arc<Engine>,
    options: EventOptions,
    client: reqwest::Client,
    /// This process's name in the log's `locked_by`.
    instance: String,
    calls: tokio::sync::Semaphore,
    /// The triggers installed in the database by this instance, last time.
    installed: tokio::sync::Mutex<Option<Vec<ServedTrigger>>>,
    /// Wakes the deliveries (a manual invocation, a redelivery).
    woken: Arc<tokio::sync::Notify>,
    /// Wakes the scheduled events' deliveries (a one-off event created).
    firings_woken: tokio::sync::Notify,
    /// See [`Self::sqlite_ddl`].
    sqlite_ddl: Arc<tokio::sync::Notify>,
    /// Whether this instance has made sure the scheduled events' tables exist.
    schedules_ready: tokio::sync::Mutex<bool>,
    /// Deliveries' outcomes, to the recorder.
    records: tokio::sync::mpsc::Sender<call::Record>,
    /// Whether this instance claimed an asynchronous action's call (then it
    /// gives back what it did not finish, at shutdown).
    async_claimed: std::sync::atomic::AtomicBool,
    /// The recorder's end, taken when deliveries start.
    recorded: std::sync::Mutex<Option<tokio::sync::mpsc::Receiver<call::Record>>>,
}

impl Events {
    /// The event machinery of `engine`.
    pub fn new(engine: Arc<Engine>, options: EventOptions) -> Result<Self, String> {
        let client = reqwest::Client::builder()
            // A webhook's redirect is not followed: its URL comes from metadata only.
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(10))
            .pool_max_idle_per_host(options.http_pool_size)
            .build()
            .map_err(|e| format!("the events' HTTP client: {e}"))?;
        let instance = format!(
            "{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        );
        let (records, recorded) = tokio::sync::mpsc::channel(options.http_pool_size.max(1) * 2);
        Ok(Self {
            records,
            recorded: std::sync::Mutex::new(Some(recorded)),
            engine,
            options,
            client,
            instance,
            calls: tokio::sync::Semaphore::new(options.http_pool_size.max(1)),
            installed: tokio::sync::Mutex::new(None),
            woken: Arc::new(tokio::sync::Notify::new()),
            firings_woken: tokio::sync::Notify::new(),
            sqlite_ddl: Arc::new(tokio::sync::Notify::new()),
            schedules_ready: tokio::sync::Mutex::new(false),
            async_claimed: Default::default(),
        })
    }

    /// Whether the event trigger `name` is served.
    pub fn serves_trigger(&self, name: &str) -> bool {
        let schemas = self.engine.schemas();
        let triggers = schemas.event_triggers();
        triggers.iter().any(|t| t.config.name == name)
    }

    /// Whether cron triggers and scheduled events are served (PostgreSQL).
    pub fn schedules_served(&self) -> bool {
        !self.sqlite()
    }

    /// On SQLite, where no DDL is watched: says so (for a schema reload, then
    /// a reinstall with the tables' columns as they are) when the file's schema
    /// changed since the last look: a table rebuilt by another tool drops its
    /// triggers with it, a column added is missing from the payloads. The
    /// reinstall changes it once more; the reload after it finds every trigger
    /// in place and runs no DDL.
    async fn follow_sqlite_schema(&self, last: &mut Option<i64>) {
        let Ok(version) = self.schema_version_sqlite().await else {
            return;
        };
        let changed = match *last {
            Some(v) => v != version,
            // The first look: whatever happened before it, the triggers must be
            // there.
            None => !self.in_place().await.unwrap_or(true),
        };
        if changed {
            self.sqlite_ddl.notify_one();
        }
        *last = Some(version);
    }

    /// Notified when another client changed the SQLite file's schema: the
    /// server reloads the schema on it.
    pub fn sqlite_ddl(&self) -> Arc<tokio::sync::Notify> {
        self.sqlite_ddl.clone()
    }

    /// Wakes the deliveries now.
    fn wake(&self) {
        self.woken.notify_one();
    }

    fn count(&self, result: &str) {
        let metrics = self.engine.metrics();
        metrics.events.deliveries.with_label_values(&[result]).inc();
    }

    /// Installs the triggers, then keeps them in step with the schemas served and
    /// delivers events until aborted: at once after a notification, else every
    /// `fetch_interval`; at most `http_pool_size` calls at once.
    pub async fn run(self: Arc<Self>) {
        let recorded = self
            .recorded
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        let _recorder = recorded.map(|rx| AbortOnDrop(tokio::spawn(self.clone().recorder(rx))));
        // Cron triggers and scheduled events are PostgreSQL's.
        let _schedules =
            (!self.sqlite()).then(|| AbortOnDrop(tokio::spawn(self.clone().run_schedules())));
        let _async_actions = AbortOnDrop(tokio::spawn(self.clone().run_async_actions()));
        self.run_triggers().await;
    }

    /// The event triggers' part of [`Self::run`].
    async fn run_triggers(self: Arc<Self>) {
        let mut changes = self.engine.schema_changes();
        // Idle (no connection of its own) until a trigger is served or a log from
        // earlier runs may hold events to deliver.
        loop {
            if let Err(e) = self.reconcile().await {
                tracing::error!("event triggers could not be installed: {e}");
            }
            let served = !self.engine.schemas().event_triggers().is_empty();
            if served || self.has_log().await.unwrap_or(false) {
                break;
            }
            if changes.changed().await.is_err() {
                return;
            }
        }
        let woken = self.woken.clone();
        let mut schema_version = None;
        let mut running = tokio::task::JoinSet::new();
        let mut cleanup = tokio::time::interval(self.options.cleanup_interval);
        cleanup.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // Every 15 s (or at the default clean-up's pace when that is finer) the
        // waiting events are counted and the triggers' own clean-ups looked at.
        let mut own_cleanups =
            tokio::time::interval(self.options.cleanup_interval.min(Duration::from_secs(15)));
        own_cleanups.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut cleaned = std::collections::HashMap::new();
        loop {
            // Each delivery in flight holds a call: claim no more than can be called.
            let room = self.options.http_pool_size.saturating_sub(running.len());
            // Claims come in batches: not one event per finished delivery, but once
            // half the pool (or a batch) is free, or nothing is in flight.
            let worth = (self.options.http_pool_size / 2)
                .min(self.options.fetch_batch_size)
                .max(1);
            if room > 0 && (room >= worth || running.is_empty()) {
                match self.claim(room.min(self.options.fetch_batch_size)).await {
                    Ok(events) => {
                        let claimed = events.len();
                        for event in events {
                            let me = self.clone();
                            running.spawn(async move { me.deliver(event).await });
                        }
                        // A full batch: there may be more waiting.
                        if claimed == room.min(self.options.fetch_batch_size) && claimed > 0 {
                            tokio::task::yield_now().await;
                            continue;
                        }
                    }
                    Err(e) => tracing::warn!("events: claiming: {e}"),
                }
            }
            tokio::select! {
                () = woken.notified() => {}
                () = tokio::time::sleep(self.options.fetch_interval) => {
                    if self.sqlite() {
                        self.follow_sqlite_schema(&mut schema_version).await;
                    }
                }
                Ok(()) = changes.changed() => {
                    if let Err(e) = self.reconcile().await {
                        tracing::error!("event triggers could not be installed: {e}");
                    }
                }
                Some(_) = running.join_next(), if !running.is_empty() => {}
                _ = cleanup.tick() => match self.clean_up().await {
                    Ok(deleted) if deleted >= cleanup::PASS_LIMIT => {
                        // More is due: the next pass in a second.
                        cleanup.reset_after(Duration::from_secs(1));
                    }
                    Ok(_) => {}
                    Err(e) => tracing::warn!("cleaning up the event log: {e}"),
                },
                _ = own_cleanups.tick() => {
                    self.count_pending(call::Log::Table).await;
                    self.scheduled_cleanups(&mut cleaned).await;
                }
            }
        }
    }
}

/// Ends a task with its owner.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
