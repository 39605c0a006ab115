//! Grafton's server: loads the schema from a database and serves GraphQL over HTTP.
//! The `grafton` binary is a thin CLI over [`start`].

pub mod error;
pub mod http;
mod listen;
pub mod ws;

pub use listen::ConnectionLimits;

use grafton_execute::ExecuteError;
use grafton_schema::{Config, Convention, SchemaError};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// The engine (planner, execution, mutations), re-exported for the CLI and tests.
pub use grafton_engine as engine;
pub use grafton_engine::{Engine, GraphqlRequest, RoleSchema, Transport};

/// What to serve and how.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// `postgres://…`, `sqlite://path` or a path.
    pub database_url: String,
    /// Address to listen on.
    pub host: String,
    /// Port to listen on (0 picks a free one).
    pub port: u16,
    /// Parsed config file.
    pub config: Config,
    /// Naming convention.
    pub naming: Convention,
    /// Connections in the pool.
    pub pool_size: usize,
    /// Postgres schemas to expose.
    pub schemas: Vec<String>,
    /// HTTP settings.
    pub http: http::HttpOptions,
    /// Admin secret, JWT and unauthorized role.
    pub auth: grafton_auth::AuthConfig,
    /// Refuse documents declaring variables they do not use (the spec's rule).
    pub strict_graphql: bool,
    /// The server's own limits (response size, request timeout, default row limit).
    pub limits: grafton_engine::ServerLimits,
    /// How live queries poll.
    pub live: grafton_engine::LiveOptions,
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            database_url: String::new(),
            host: "127.0.0.1".into(),
            port: 8080,
            config: Config::default(),
            naming: Convention::HasuraDefault,
            pool_size: 10,
            schemas: vec!["public".into()],
            http: http::HttpOptions::default(),
            auth: grafton_auth::AuthConfig::default(),
            strict_graphql: false,
            limits: grafton_engine::ServerLimits::default(),
            live: grafton_engine::LiveOptions::default(),
        }
    }
}

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
    let engine_options = grafton_engine::EngineOptions {
        database_url: options.database_url.clone(),
        config: options.config.clone(),
        naming: options.naming,
        pool_size: options.pool_size,
        schemas: options.schemas.clone(),
        strict_graphql: options.strict_graphql,
        limits: options.limits.clone(),
    };
    Ok(grafton_engine::build(&engine_options)
        .await?
        .with_live(options.live))
}

/// A running server.
pub struct Running {
    /// The bound address.
    pub addr: SocketAddr,
    /// The engine behind it.
    pub engine: Arc<Engine>,
    handle: tokio::task::JoinHandle<()>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Running {
    /// The GraphQL endpoint URL.
    pub fn url(&self) -> String {
        format!("http://{}/v1/graphql", self.addr)
    }

    /// Stops accepting connections and waits for the server task to end.
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        let _ = (&mut self.handle).await;
    }

    /// Waits until the server stops (it stops on Ctrl-C when started by the CLI).
    pub async fn wait(self) {
        let _ = self.handle.await;
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
    let engine = Arc::new(build_engine(options).await?);
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
    let app = http::router(engine.clone(), Arc::new(auth), &options.http);
    let connections = options.http.connections;
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let handle = tokio::spawn(async move {
        let shutdown = async move {
            tokio::select! {
                _ = rx => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        };
        listen::serve(listener, app, connections, shutdown).await;
    });
    tracing::info!(
        tables = engine.model().tables.len(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        "schema loaded; serving"
    );
    Ok(Running {
        addr,
        engine,
        handle,
        shutdown: Some(tx),
    })
}
