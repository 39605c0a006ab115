//! What the engine serves, and where it comes from: the metadata store (changed
//! through the API, shared by every instance on the database) or read-only files.
//! Every change is tried first: the new document is built into schemas with the
//! same reader that checks metadata at start-up, and kept (stored, then served)
//! only if it builds and adds nothing that cannot be served.

use crate::answers::{consistency, store_refusal};
use crate::commands;
use crate::start::{with_document, Start};
use crate::store::{Store, StoreError};

use crate::Refusal;
use grafton_engine::{Engine, EngineOptions, Reloaded};
use grafton_schema::Config;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Where the metadata comes from.
pub enum Source {
    /// Files, read-only: the Hasura metadata directory when there is one (what
    /// `export_metadata` answers), and what to say when a change is asked for.
    Files {
        /// `--hasura-metadata`.
        hasura: Option<PathBuf>,
        /// Where the metadata comes from, for the refusal of a change.
        described: String,
    },
    /// The metadata store in the database.
    Store(Store),
}

/// The config the settings files give (`--config`, `--allow-list`; with
/// [`Source::Files`], the Hasura metadata too), read again at each reload.
pub type Settings = Arc<dyn Fn() -> Result<Config, String> + Send + Sync>;

/// The engine's options for a config.
pub type Options = Arc<dyn Fn(Config) -> EngineOptions + Send + Sync>;

/// The metadata of one engine.
pub struct Metadata {
    pub(crate) engine: Arc<Engine>,
    pub(crate) source: Source,
    settings: Settings,
    pub(crate) options: Options,
    /// One change or reload at a time: each reads, builds and serves in order.
    pub(crate) lock: tokio::sync::Mutex<()>,
    /// The version served (0: files, or nothing stored).
    served: AtomicU64,
    /// The database's own tables (catalog state, whichever the source).
    pub(crate) catalog: Store,
    /// Event triggers: installed in the database before a change is answered.
    events: std::sync::OnceLock<Arc<grafton_events::Events>>,
}

/// Why a reload failed; the old schemas keep serving.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ReloadError(pub String);

impl Metadata {
    /// The metadata of `engine`, from `source`.
    pub fn new(engine: Arc<Engine>, source: Source, settings: Settings, options: Options) -> Self {
        Self {
            source,
            settings,
            options,
            lock: tokio::sync::Mutex::new(()),
            served: AtomicU64::new(0),
            catalog: Store::new(engine.database().clone()),
            events: std::sync::OnceLock::new(),
            engine,
        }
    }

    /// The engine served.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// The store, when the metadata lives in one.
    pub fn store(&self) -> Option<&Store> {
        match &self.source {
            Source::Store(store) => Some(store),
            Source::Files { .. } => None,
        }
    }

    /// The `resource_version` served (0: files, or nothing stored).
    pub fn served_version(&self) -> u64 {
        self.served.load(Ordering::SeqCst)
    }

    pub(crate) fn serve(&self, schemas: grafton_engine::Schemas, version: u64) {
        // The version first: what reacts to the new schemas reads it.
        self.mark_served(version);
        self.engine.replace_schemas(schemas);
    }

    /// The event machinery whose triggers follow what is served.
    pub fn set_events(&self, events: Arc<grafton_events::Events>) {
        let _ = self.events.set(events);
    }

    /// The event machinery, where there is one (PostgreSQL).
    pub(crate) fn events(&self) -> Option<&Arc<grafton_events::Events>> {
        self.events.get()
    }

    /// Installs the served event triggers in the database (when there is event
    /// machinery), after a reload.
    pub(crate) async fn install_triggers(&self) {
        if let Some(events) = self.events.get() {
            if let Err(e) = events.reconcile().await {
                tracing::error!("event triggers could not be installed: {e}");
            }
        }
    }

    /// Installs a change's event triggers before it is kept: one that cannot be
    /// installed refuses the change.
    pub(crate) async fn install_triggers_of(
        &self,
        schemas: &grafton_engine::Schemas,
    ) -> Result<(), Refusal> {
        let Some(events) = self.events.get() else {
            return Ok(());
        };
        (events.reconcile_with(schemas.event_triggers()).await).map_err(|e| {
            Refusal::new(
                "postgres-error",
                format!("the event triggers could not be installed: {e}"),
                "$.args",
            )
        })
    }

    /// At start-up, once the engine serves what [`first_metadata`] found: a
    /// stored version is recorded as served, a seed (`--metadata-from` over an
    /// empty store) is stored. Two instances seeding at once: one wins, and the
    /// other reloads what it stored.
    pub async fn started(&self, first: Start) -> Result<(), ReloadError> {
        let Source::Store(store) = &self.source else {
            return Ok(());
        };
        match first {
            Start::Empty => Ok(()),
            Start::Stored(version) => {
                self.mark_served(version);
                Ok(())
            }
            Start::Seed(seed) => {
                let _one = self.lock.lock().await;
                match store.save(&seed, crate::store::FIRST_VERSION).await {
                    Ok(version) => {
                        tracing::info!(version, "the metadata store was empty: seeded");
                        self.mark_served(version);
                        Ok(())
                    }
                    Err(StoreError::Conflict { .. }) => {
                        drop(_one);
                        let why = "start-up: another instance seeded the store first";
                        self.reload(why).await.map(|_| ())
                    }
                    Err(e) => Err(ReloadError(e.to_string())),
                }
            }
        }
    }

    fn mark_served(&self, version: u64) {
        self.served.store(version, Ordering::SeqCst);
        let gauge = i64::try_from(version).unwrap_or(i64::MAX);
        self.engine.metrics().metadata_version.set(gauge);
    }

    /// The config for a metadata document (none: the settings alone).
    pub(crate) fn config_for(&self, doc: Option<&Value>) -> Result<Config, Refusal> {
        let config =
            (self.settings)().map_err(|e| Refusal::new("invalid-configuration", e, "$"))?;
        match doc {
            Some(doc) => {
                with_document(config, doc).map_err(|e| Refusal::new("parse-failed", e, "$.args"))
            }
            None => Ok(config),
        }
    }

    /// Reads the metadata again (the store, or the files), introspects and serves
    /// the result; the old schemas stay on any error. Logs the outcome either way.
    pub async fn reload(&self, why: &str) -> Result<Reloaded, ReloadError> {
        let done = self.reload_if(why, false).await?;
        done.ok_or_else(|| ReloadError("nothing to reload".into()))
    }

    /// Reloads (`only_newer`: only when the store holds a version other than the
    /// one served, checked under the lock, so a change this instance just made is
    /// not rebuilt again when its own notification arrives).
    async fn reload_if(
        &self,
        why: &str,
        only_newer: bool,
    ) -> Result<Option<Reloaded>, ReloadError> {
        let _one = self.lock.lock().await;
        let started = std::time::Instant::now();
        let result = async {
            let (doc, version) = match &self.source {
                Source::Store(store) => {
                    let stored = store.load().await.map_err(|e| e.to_string())?;
                    let version = if stored.metadata.is_some() {
                        stored.version
                    } else {
                        0
                    };
                    (stored.metadata, version)
                }
                Source::Files { .. } => (None, 0),
            };
            if only_newer && version == self.served_version() {
                return Ok(None);
            }
            let config = self.config_for(doc.as_ref()).map_err(|r| r.error)?;
            let schemas = (self.engine.build_schemas(&(self.options)(config)).await)
                .map_err(|e| e.to_string())?;
            let done = Reloaded {
                tables: schemas.admin_model().tables.len(),
                roles: schemas.role_count(),
                elapsed: started.elapsed(),
            };
            self.serve(schemas, version);
            self.install_triggers().await;
            Ok::<_, String>(Some((done, version)))
        }
        .await;
        if matches!(result, Ok(None)) {
            return Ok(None);
        }
        self.engine.metrics().reload(result.is_ok());
        match result {
            Ok(None) => Ok(None),
            Ok(Some((done, version))) => {
                tracing::info!(
                    why,
                    version,
                    tables = done.tables,
                    roles = done.roles,
                    elapsed_ms = done.elapsed.as_secs_f64() * 1000.0,
                    "schema reloaded"
                );
                Ok(Some(done))
            }
            Err(e) => {
                tracing::error!(why, error = %e, "reload failed; still serving the previous schema");
                Err(ReloadError(e))
            }
        }
    }

    /// Reloads when the store holds a version other than the one served: another
    /// instance changed the metadata.
    pub async fn follow(&self) {
        let Source::Store(store) = &self.source else {
            return;
        };
        // A look without the lock first: most looks (SQLite's) find nothing new.
        match store.load().await {
            Ok(stored) if stored.metadata.is_some() && stored.version != self.served_version() => {
                let why = "the metadata changed on another instance";
                let _ = self.reload_if(why, true).await;
            }
            Ok(_) => {}
            Err(e) => tracing::warn!("the metadata store: {e}"),
        }
    }

    /// The metadata document served: the store's, the files', or (nothing stored)
    /// the document of what is served now.
    pub(crate) async fn document(&self) -> Result<(Value, u64), Refusal> {
        match &self.source {
            Source::Store(store) => {
                let stored = store.load().await.map_err(store_refusal)?;
                let doc = match stored.metadata {
                    Some(doc) => doc,
                    None => crate::generated::document(&self.engine.schemas()),
                };
                Ok((doc, stored.version))
            }
            Source::Files {
                hasura: Some(path), ..
            } => {
                let doc = grafton_schema::hasura::read_document(path)
                    .map_err(|e| Refusal::new("unexpected", e, "$"))?;
                Ok((doc, crate::store::FIRST_VERSION))
            }
            Source::Files { hasura: None, .. } => Ok((
                crate::generated::document(&self.engine.schemas()),
                crate::store::FIRST_VERSION,
            )),
        }
    }

    /// One request to `/v1/metadata`: its answer, or its refusal.
    pub async fn command(&self, body: &Value) -> Result<Value, Refusal> {
        let (kind, args) = commands::envelope(body)?;
        match kind {
            "export_metadata" => {
                let (doc, version) = self.document().await?;
                let doc = commands::exported(doc);
                if body.get("version").and_then(Value::as_u64) == Some(2) {
                    return Ok(json!({"resource_version": version, "metadata": doc}));
                }
                Ok(doc)
            }
            "get_inconsistent_metadata" => Ok(consistency(self.engine.schemas().left_out())),
            "get_catalog_state" => {
                let states = self.catalog.catalog_state().await.map_err(store_refusal)?;
                let state = |k: &str| states.get(k).cloned().unwrap_or_else(|| json!({}));
                Ok(json!({
                    "id": state("id"),
                    "cli_state": state("cli"),
                    "console_state": state("console"),
                }))
            }
            "set_catalog_state" => {
                let kind = args.get("type").and_then(Value::as_str);
                let Some(kind) = kind.filter(|k| *k == "cli" || *k == "console") else {
                    return Err(Refusal::new(
                        "parse-failed",
                        "type: expected \"cli\" or \"console\"",
                        "$.args.type",
                    ));
                };
                let state = args.get("state").cloned().unwrap_or_else(|| json!({}));
                if !state.is_object() {
                    return Err(Refusal::parse("state: expected an object"));
                }
                (self.catalog.set_catalog_state(kind, &state).await).map_err(store_refusal)?;
                Ok(json!({"message": "success"}))
            }
            "reload_metadata" => {
                // Hasura's `reload_remote_schemas`: every remote (the default),
                // none, or those named.
                let cache = self.engine.remote_cache();
                match args.get("reload_remote_schemas") {
                    Some(Value::Bool(false)) => {}
                    Some(Value::Array(names)) => names
                        .iter()
                        .filter_map(Value::as_str)
                        .for_each(|n| cache.forget(n)),
                    _ => cache.forget_all(),
                }
                if let Err(e) = self.reload("reload_metadata").await {
                    return Err(Refusal::new(
                        "reload-failed",
                        format!("{e}; the previous schema is still served"),
                        "$",
                    ));
                }
                let mut answer = consistency(self.engine.schemas().left_out());
                answer["message"] = json!("success");
                if answer["is_consistent"] == json!(true) {
                    answer
                        .as_object_mut()
                        .map(|o| o.remove("inconsistent_objects"));
                }
                Ok(answer)
            }
            "bulk_keep_going" => {
                let Some(items) = args.as_array() else {
                    return Err(Refusal::parse(
                        "bulk_keep_going takes a list of commands as its args",
                    ));
                };
                let mut answers = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    let answer = Box::pin(self.command(item)).await;
                    answers.push(match answer {
                        Ok(answer) => answer,
                        Err(refusal) => refusal.within(&format!("$.args[{i}]")).body(),
                    });
                }
                Ok(Value::Array(answers))
            }
            "bulk" if !commands::writes_any(args) => {
                // Reads only (no store needed): answered in order, the first refusal
                // is the answer.
                let items = args.as_array().map(Vec::as_slice).unwrap_or_default();
                let mut answers = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    let answer = Box::pin(self.command(item)).await;
                    answers.push(answer.map_err(|r| r.within(&format!("$.args[{i}]")))?);
                }
                Ok(Value::Array(answers))
            }
            "reload_remote_schema" | "introspect_remote_schema" => {
                self.remote_schema(kind, args).await
            }
            kind if commands::EVENT_LOG.contains(&kind) => self.event_log(kind, args).await,
            kind if commands::writes(kind) => {
                let answer = self.change(body).await?;
                self.after_change(body).await;
                Ok(answer)
            }
            other => Err(commands::unserved(other)),
        }
    }
}
