//! Grafton's server: loads the schema from a database and serves GraphQL over HTTP.
//! The `grafton` binary is a thin CLI over [`start`].

mod cache_api;
mod caller;
mod console;
pub mod cors;
pub mod error;
pub mod file_limit;
pub mod http;
mod listen;
mod metadata;
mod metadata_source;
pub mod observe;
pub mod ops;
mod options;
pub mod reload;
mod respond;
mod state;
pub mod telemetry;
pub mod ws;

pub use grafton_metadata::Metadata;
pub use listen::ConnectionLimits;
pub use metadata_source::engine_as_served;
use metadata_source::metadata_for;
pub use options::ConfigSources;
pub use options::ServeOptions;

use grafton_execute::ExecuteError;
use grafton_schema::{Config, SchemaError};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// The engine (planner, execution, mutations), re-exported for the CLI and tests.
pub use grafton_engine as engine;
pub use grafton_engine::{Engine, GraphqlRequest, RoleSchema, Transport};

/// The stack of each runtime thread (the async workers, and the blocking pool's
/// threads with them): a main thread's 8 MiB. Planning recurses as deep as a
/// document nests (up to the parser's limit), and one worker runs on the main
/// thread: with several, each gets as much room.
pub const WORKER_STACK_BYTES: usize = 8 * 1024 * 1024;

/// Why the server could not start. Each is one clear line for the terminal.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Database URL, connection or catalog problems.
    #[error(transparent)]
    Database(#[from] ExecuteError),
    /// The schema could not be built.
    #[error(transparent)]
    Schema(#[from] SchemaError),
    /// The config file could not be read.
    #[error("config file {path}: {message}")]
    Config {
        /// The file.
        path: String,
        /// What was wrong.
        message: String,
    },
    /// The engine could not be built (database, schema, permissions).
    #[error(transparent)]
    Engine(#[from] grafton_engine::BuildError),
    /// The authentication settings are wrong.
    #[error("authentication: {0}")]
    Auth(#[from] grafton_auth::ConfigError),
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: String,
        /// The cause.
        source: std::io::Error,
    },
}

/// Reads a YAML config file.
pub fn load_config(path: &Path) -> Result<Config, StartError> {
    let err = |message: String| StartError::Config {
        path: path.display().to_string(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
    let mut config: Config = serde_norway::from_str(&text).map_err(|e| err(e.to_string()))?;
    // Schema files named in the config are relative to the config file.
    config.base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    Ok(config)
}

/// Reads an allow-list file: GraphQL documents (`.graphql`, `.gql`: every
/// operation in it is allowed) or an Apollo persisted-query manifest (`.json`:
/// `{"operations": [{"body": "…"}]}`), as one collection allowed for every role.
pub fn load_allow_list(
    path: &Path,
) -> Result<grafton_schema::trusted::AllowedCollection, StartError> {
    let err = |message: String| StartError::Config {
        path: path.display().to_string(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
    let queries = if path.extension().is_some_and(|e| e == "json") {
        let manifest: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| err(e.to_string()))?;
        let operations = manifest["operations"].as_array().ok_or_else(|| {
            err(
                "expected an Apollo persisted-query manifest: {\"operations\": [{\"body\": …}]}"
                    .into(),
            )
        })?;
        operations
            .iter()
            .map(|op| op["body"].as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| err("every operation of the manifest needs a 'body'".into()))?
    } else {
        vec![text]
    };
    Ok(grafton_schema::trusted::AllowedCollection {
        name: path.display().to_string(),
        queries,
        roles: None,
    })
}

/// Connects, introspects and builds the engine (see [`grafton_engine::build`]).
pub async fn build_engine(options: &ServeOptions) -> Result<Engine, StartError> {
    let engine_options = options::engine_options(options, options.config.clone());
    Ok(grafton_engine::build(&engine_options)
        .await?
        .with_live(options.live)
        .with_response_cache(options.cache_max_bytes, options.cache_max_ttl)
        .with_query_batch_size(options.query_batch_size, options.query_concurrency))
}

/// A running server.
pub struct Running {
    /// The bound address.
    pub addr: SocketAddr,
    /// The engine behind it.
    pub engine: Arc<Engine>,
    /// Its metadata: reloads its schemas (as `reload_metadata` and SIGHUP do) and
    /// answers `/v1/metadata`.
    pub metadata: Arc<Metadata>,
    /// Where `--metrics-addr` serves `/metrics`, if it does.
    pub metrics_addr: Option<SocketAddr>,
    handle: tokio::task::JoinHandle<()>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    /// Tasks that live as long as the server (reloads on DDL or SIGHUP, event
    /// deliveries).
    background: Vec<AbortOnDrop>,
    /// Event triggers' deliveries (PostgreSQL): what they claimed is given back at
    /// a graceful stop.
    events: Option<Arc<grafton_events::Events>>,
}

/// Ends a background task with the server.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Running {
    /// The GraphQL endpoint URL.
    pub fn url(&self) -> String {
        format!("http://{}/v1/graphql", self.addr)
    }

    /// The console's URL.
    pub fn console_url(&self) -> String {
        format!("http://{}/console", self.addr)
    }

    /// Stops accepting connections and waits for open requests to finish.
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        let _ = (&mut self.handle).await;
        self.release().await;
    }

    /// Waits until the server stops (on SIGTERM or Ctrl-C when started with `signals`).
    pub async fn wait(mut self) {
        let _ = (&mut self.handle).await;
        self.release().await;
    }

    /// Stops the background tasks, then gives back the events this instance
    /// claimed and did not deliver, for another instance (or the next start).
    async fn release(&mut self) {
        self.background.clear();
        if let Some(events) = &self.events {
            events.release().await;
        }
    }
}

/// Builds the engine and starts serving in the background.
pub async fn start(options: &ServeOptions) -> Result<Running, StartError> {
    let started = Instant::now();
    let auth = grafton_auth::Authenticator::new(options.auth.clone()).await?;
    if auth.dev_mode() {
        tracing::warn!(
            "no --admin-secret or --jwt-secret: every request is admin (development mode)"
        );
    }
    let (first, start) = metadata_source::first(options).await?;
    let engine = Arc::new(build_engine(&first).await?);
    let metadata = Arc::new(metadata_for(engine.clone(), options)?);
    metadata
        .started(start)
        .await
        .map_err(|e| StartError::Config {
            path: "the metadata store".into(),
            message: e.to_string(),
        })?;
    let reloader = metadata.clone();
    let mut background = Vec::new();
    if options.metadata_store {
        background.push(AbortOnDrop(reload::follow(metadata.clone()).await?));
    }
    // Event triggers are captured by the database (PostgreSQL, or SQLite in the
    // same file) and delivered by every instance.
    let events =
        grafton_events::Events::new(engine.clone(), options.events).map_err(|message| {
            StartError::Config {
                path: "event triggers".into(),
                message,
            }
        })?;
    let events = Arc::new(events);
    // Installed before serving, and before each change is answered.
    if let Err(e) = events.reconcile().await {
        tracing::error!("event triggers could not be installed: {e}");
    }
    metadata.set_events(events.clone());
    background.push(AbortOnDrop(tokio::spawn(events.clone().run())));
    // SQLite's DDL is seen by the events' loop (no watch exists there): a table
    // another tool rebuilt gets its triggers back, with its columns as they are.
    background.push(AbortOnDrop(reload::on_notify(
        metadata.clone(),
        events.sqlite_ddl(),
        "DDL in the SQLite file",
    )));
    let events = Some(events);
    if options.watch {
        let changed = Arc::new(tokio::sync::Notify::new());
        let watch = engine.database().watch_ddl(changed.clone()).await?;
        let reloads = reload::on_notify(reloader.clone(), changed, "DDL in the database");
        background.push(AbortOnDrop(tokio::spawn(async move {
            let _watch = watch;
            let _ = reloads.await;
        })));
    }
    // An enum table's rows are its enum's values: a write to one reloads the schema.
    background.push(AbortOnDrop(reload::on_notify(
        reloader.clone(),
        engine.enum_table_writes(),
        "an enum table was written",
    )));
    if options.signals {
        background.push(AbortOnDrop(sighup(reloader.clone())?));
    }
    let addr = format!("{}:{}", options.host, options.port);
    let listener = tokio::net::TcpListener::bind(&addr)
        .await
        .map_err(|source| StartError::Bind {
            addr: addr.clone(),
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| StartError::Bind {
        addr: addr.clone(),
        source,
    })?;
    let mut metrics_addr = None;
    if let (true, Some(addr)) = (options.metrics, &options.metrics_addr) {
        let (bound, handle) =
            ops::metrics_listener(addr, engine.clone())
                .await
                .map_err(|source| StartError::Bind {
                    addr: addr.clone(),
                    source,
                })?;
        metrics_addr = Some(bound);
        background.push(AbortOnDrop(handle));
    }
    let ops = ops::Ops {
        metadata: reloader.clone(),
        draining: Arc::default(),
        metrics: options.metrics && options.metrics_addr.is_none(),
    };
    let draining = ops.draining.clone();
    let app = http::router(engine.clone(), Arc::new(auth), ops, &options.http);
    let connections = options.http.connections;
    let metrics = engine.metrics().connections.clone();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let signals = options.signals;
    let (delay, drain) = (options.shutdown_delay, options.shutdown_timeout);
    let handle = tokio::spawn(async move {
        let shutdown = async move {
            match signals {
                true => tokio::select! {
                    _ = rx => {}
                    () = terminated() => {}
                },
                false => {
                    let _ = rx.await;
                }
            }
            // Not ready from now on; still serving while load balancers notice.
            draining.store(true, std::sync::atomic::Ordering::Relaxed);
            if !delay.is_zero() {
                tracing::info!("stopping: /readyz answers 503; closing the port in {delay:?}");
                tokio::time::sleep(delay).await;
            }
            tracing::info!("stopping: port closed, finishing open requests");
        };
        listen::serve(listener, app, connections, drain, shutdown, metrics).await;
    });
    tracing::info!(
        tables = engine.planner().model().tables.len(),
        max_connections = options.http.connections.max_connections,
        // A default that depends on where the database runs (README, multiplexed
        // queries): none when the pool is the cap.
        query_concurrency = engine.query_concurrency(),
        heavy_concurrency = engine.heavy_concurrency(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        "schema loaded; serving"
    );
    Ok(Running {
        addr,
        engine,
        metadata: reloader,
        metrics_addr,
        handle,
        shutdown: Some(tx),
        background,
        events,
    })
}

/// SIGTERM (what service managers send) or Ctrl-C.
async fn terminated() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// Reloads the schemas on each SIGHUP.
fn sighup(reloader: Arc<Metadata>) -> Result<tokio::task::JoinHandle<()>, StartError> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut hup = signal(SignalKind::hangup()).map_err(|e| StartError::Config {
            path: "SIGHUP".into(),
            message: e.to_string(),
        })?;
        Ok(tokio::spawn(async move {
            while hup.recv().await.is_some() {
                let _ = reloader.reload("SIGHUP").await;
            }
        }))
    }
    #[cfg(not(unix))]
    {
        let _ = reloader;
        Ok(tokio::spawn(async {}))
    }
}
