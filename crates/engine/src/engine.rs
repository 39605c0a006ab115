//! The engine: each role's planner plus the database. A request (HTTP, a batch
//! element, a WebSocket message) enters here the same way, so permissions and limits
//! hold on every transport.

use crate::planner::Planner;
use crate::schemas::{RoleSchema, Schemas};
use grafton_execute::Database;
use grafton_schema::SchemaModel;
use std::sync::Arc;

pub use crate::caller::Caller;

/// The schemas (admin's and each role's, swapped whole by a reload), the database
/// and the caches: shared by every request.
pub struct Engine {
    schemas: arc_swap::ArcSwap<Schemas>,
    pub(crate) db: Database,
    /// Where queries estimated heavy wait, so they never hold every connection.
    pub(crate) heavy: crate::admission::Gate,
    /// Automatic persisted queries this instance knows.
    pub(crate) documents: crate::trusted::LocalDocuments,
    /// What instances share (Redis): rate-limit counts, persisted queries.
    pub(crate) shared: Option<Arc<crate::shared::Shared>>,
    /// Live queries' cohorts.
    pub(crate) live: crate::live::Live,
    /// Who wrote lately, whose reads go to the primary (with read replicas).
    pub(crate) recent: crate::reads::RecentWrites,
    /// Prometheus metrics.
    metrics: Arc<crate::Metrics>,
    /// Counts the schema sets served: open subscriptions re-plan when it moves.
    pub(crate) changes: tokio::sync::watch::Sender<u64>,
    /// The one client calls out of requests go through (action handlers);
    /// `None` if it could not be built (actions then answer that).
    pub(crate) remote: Option<grafton_remote::Client>,
    /// Whether the asynchronous actions' log was made sure of (created when
    /// missing), once per process.
    pub(crate) action_log_ready: Arc<tokio::sync::OnceCell<()>>,
    /// Wakes the asynchronous actions' worker: a call was written.
    pub(crate) async_written: Arc<tokio::sync::Notify>,
    /// Moves when this instance finished an asynchronous call.
    pub(crate) async_done: tokio::sync::watch::Sender<u64>,
    /// Remote schemas' introspections kept between builds.
    pub(crate) remote_cache: Arc<crate::remotes::RemoteCache>,
    /// `@cached`'s answers.
    pub(crate) cache: crate::response_cache::Shared,
    /// Queries of one shape waiting for a connection, answered by one statement.
    pub(crate) gathering: crate::gather::Groups,
}

impl Engine {
    /// An engine serving `model` (admin only) from `db`.
    pub fn new(model: SchemaModel, db: Database) -> Self {
        Self::with_roles(model, Vec::new(), db)
    }

    /// An engine with the admin `model` and each role's model and rules.
    pub fn with_roles(model: SchemaModel, roles: Vec<RoleSchema>, db: Database) -> Self {
        let schemas = Schemas::new(model, roles, db.dialect());
        Self::with_schemas(schemas, db)
    }

    /// An engine serving `schemas` from `db`.
    pub fn with_schemas(schemas: Schemas, db: Database) -> Self {
        let metrics = Arc::new(crate::Metrics::new());
        let live = crate::live::LiveOptions::default();
        let enum_tables = schemas.enum_tables();
        let cache = Arc::new(arc_swap::ArcSwap::from_pointee(
            crate::response_cache::ResponseCache::new(
                crate::response_cache::DEFAULT_MAX_BYTES,
                crate::response_cache::DEFAULT_MAX_TTL,
                metrics.response_cache.clone(),
                None,
            ),
        ));
        let engine = Self {
            schemas: arc_swap::ArcSwap::from_pointee(schemas.count_in(&metrics.cache)),
            heavy: crate::admission::heavy_lane(
                db.max_connections(),
                None,
                crate::admission::QUEUE_WAIT,
            ),
            documents: crate::trusted::LocalDocuments::default(),
            shared: None,
            live: crate::live::Live::new(live, metrics.poll_seconds.clone(), cache.clone()),
            cache,
            recent: crate::reads::RecentWrites::new(std::time::Duration::ZERO),
            gathering: crate::gather::Groups::new(
                crate::gather::DEFAULT_BATCH_SIZE,
                None,
                metrics.gather.clone(),
            ),
            metrics,
            changes: tokio::sync::watch::Sender::new(0),
            remote: grafton_remote::Client::new(Default::default()).ok(),
            action_log_ready: Arc::default(),
            async_written: Arc::default(),
            async_done: tokio::sync::watch::Sender::new(0),
            remote_cache: Arc::default(),
            db,
        };
        engine.live.set_enum_tables(enum_tables);
        let max_wait = crate::admission::QUEUE_WAIT;
        engine.with_lanes(crate::gather::DEFAULT_BATCH_SIZE, None, max_wait)
    }

    /// Batches of at most `max`; light queries' statements at most `places` at once
    /// (`None`: the default where the database runs), heavy ones at most half of
    /// those; either waits at most `max_wait`.
    fn with_lanes(
        mut self,
        max: usize,
        places: Option<usize>,
        max_wait: std::time::Duration,
    ) -> Self {
        let light = crate::admission::light_gate(&self.db, places, max_wait);
        self.gathering = crate::gather::Groups::new(max, light, self.metrics.gather.clone());
        let light = self.gathering.places();
        self.heavy = crate::admission::heavy_lane(self.db.max_connections(), light, max_wait);
        self
    }

    /// Whether an action or a remote schema served forwards the client's headers
    /// (so requests keep them).
    pub fn forwards_client_headers(&self) -> bool {
        let schemas = self.schemas.load();
        let model = schemas.admin_model();
        let actions = model.actions.iter();
        let remotes = model.remote_schemas.iter();
        actions
            .into_iter()
            .any(|a| a.definition.forward_client_headers)
            || remotes
                .into_iter()
                .any(|r| r.config.definition.forward_client_headers)
    }

    /// Calls out of requests (action handlers) go through a client with `options`.
    pub fn with_remote(mut self, options: grafton_remote::ClientOptions) -> Result<Self, String> {
        self.remote = Some(grafton_remote::Client::new(options)?);
        Ok(self)
    }

    /// Heavy queries wait at most `max_wait` for their lane (`--queue-timeout`).
    pub fn with_queue_timeout(self, max_wait: std::time::Duration) -> Self {
        // The same places: none when there is no gate (a cap at the pool is none).
        let places = self.gathering.places().unwrap_or(usize::MAX);
        let max = self.gathering.max();
        self.with_lanes(max, Some(places), max_wait)
    }

    /// How live queries poll (`--live-query-interval` and friends).
    pub fn with_live(mut self, mut options: crate::live::LiveOptions) -> Self {
        options.primary_after_change |= self.recent.on();
        self.live = crate::live::Live::new(
            options,
            self.metrics.poll_seconds.clone(),
            self.cache.clone(),
        );
        self.live.set_enum_tables(self.schemas.load().enum_tables());
        self
    }

    /// Notified when an enum table was written (through any instance, or by a
    /// writer whose triggers notify): its values are the schema's, so the server
    /// reloads it.
    pub fn enum_table_writes(&self) -> Arc<tokio::sync::Notify> {
        if !self.schemas.load().enum_tables().is_empty() {
            // Other instances' writes arrive through PostgreSQL's change feed.
            self.live.listen(&self.db);
        }
        self.live.enum_written()
    }

    /// Shares persisted queries through `shared` (rate limits take it from the
    /// schemas, built with it).
    pub fn with_shared(mut self, shared: Option<Arc<crate::shared::Shared>>) -> Self {
        self.shared = shared;
        self
    }

    /// The shared store, if instances share one.
    pub fn shared(&self) -> Option<&Arc<crate::shared::Shared>> {
        self.shared.as_ref()
    }

    /// After a caller's mutation, its reads go to the primary for `window`
    /// (`--primary-after-write-ms`; zero: never), and so do subscription polls
    /// woken by a write.
    pub fn with_primary_after_write(mut self, window: std::time::Duration) -> Self {
        self.recent = crate::reads::RecentWrites::new(window);
        self.live.primary_after_change(self.recent.on());
        self
    }

    /// `@cached` keeps at most `max_bytes` of answers, none past `max_ttl`
    /// (`--cache-max-bytes`, `--cache-max-ttl`), and shares them through Redis when
    /// the engine has it (so call this after [`Engine::with_shared`]).
    pub fn with_response_cache(self, max_bytes: u64, max_ttl: std::time::Duration) -> Self {
        let metrics = self.metrics.response_cache.clone();
        let shared = self.shared.clone();
        let cache = crate::response_cache::ResponseCache::new(max_bytes, max_ttl, metrics, shared);
        self.cache.store(Arc::new(cache));
        self
    }

    /// How many light queries' statements run at once, when fewer than the pool's
    /// connections (`--query-concurrency`, or its default where the database runs).
    pub fn query_concurrency(&self) -> Option<usize> {
        self.gathering.places()
    }

    /// How many heavy queries' statements run at once (the heavy lane's places).
    pub fn heavy_concurrency(&self) -> usize {
        self.heavy.size()
    }

    /// Queries of one shape waiting for a connection are answered by one statement
    /// of at most `max` of them (`--query-batch-size`; 1: each runs alone), and
    /// light queries' statements run at most `places` at once (`--query-concurrency`;
    /// `None`: the default, see [`light_gate`](crate::admission::light_gate)), heavy
    /// ones at most half of those (see [`heavy_lane`](crate::admission::heavy_lane)).
    pub fn with_query_batch_size(self, max: usize, places: Option<usize>) -> Self {
        let max_wait = self.heavy.max_wait();
        self.with_lanes(max, places, max_wait)
    }

    /// Data changed in ways no table names (SQL run through the metadata API):
    /// every kept answer goes stale, here and on the other instances.
    pub fn everything_changed(&self) {
        self.live.changed_everything(&self.db);
    }

    /// Tells the other instances that anything may have changed (their kept
    /// answers go stale), leaving this one's alone (the cache API's clears).
    pub fn announce_everything_changed(&self) {
        if let Some(feed) = self.live.feed(&self.db) {
            feed.publish(Vec::new());
        }
    }

    /// `@cached`'s answers (the cache API clears them).
    pub fn response_cache(&self) -> Arc<crate::response_cache::ResponseCache> {
        self.cache.load_full()
    }

    /// The engine's metrics.
    pub fn metrics(&self) -> &Arc<crate::Metrics> {
        &self.metrics
    }

    /// Every metric in Prometheus's text format.
    pub fn render_metrics(&self) -> String {
        self.metrics.render(
            self.db.pool_status(),
            &self.db.replicas(),
            self.live.counts(),
            self.live.queued_bytes(),
            self.shared.as_ref().is_some_and(|s| s.is_open()),
        )
    }

    /// The schemas served now.
    pub fn schemas(&self) -> Arc<Schemas> {
        self.schemas.load_full()
    }

    /// Serves `schemas` from now on, keeping what outlives a reload (see
    /// [`Schemas::carry_over`]); requests already running finish on the old set.
    pub fn replace_schemas(&self, schemas: Schemas) {
        let old = self.schemas.load_full();
        let schemas = schemas.carry_over(&old).count_in(&self.metrics.cache);
        let enum_tables = schemas.enum_tables();
        if !enum_tables.is_empty() {
            // Other instances' writes to them arrive through the change feed.
            self.live.listen(&self.db);
        }
        self.live.set_enum_tables(enum_tables);
        self.schemas.store(Arc::new(schemas));
        // New rules may answer a kept key differently.
        self.cache.load().changed_everything();
        // After the store: whoever sees the change finds the new planners.
        self.changes.send_modify(|n| *n += 1);
    }

    /// The planner of a role (`None`: admin); `backend_only` picks the trusted
    /// backends' view where the role has one. A role with no permissions anywhere
    /// has no schema: its requests are refused.
    pub fn planner_for(
        &self,
        role: Option<&str>,
        backend_only: bool,
    ) -> Result<Arc<Planner>, crate::request::types::NoPermissions> {
        self.schemas.load().planner_for(role, backend_only).cloned()
    }

    /// Admin's planner (and through it the schema model).
    pub fn planner(&self) -> Arc<Planner> {
        self.schemas.load().admin.clone()
    }

    /// The database.
    pub fn database(&self) -> &Database {
        &self.db
    }
}
