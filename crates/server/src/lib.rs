//! Grafton's server: loads the schema from a database and serves GraphQL over HTTP.
//! The `grafton` binary is a thin CLI over [`start`].

pub mod engine;
pub mod error;
pub mod http;
mod lenient;
mod mutate;

use grafton_execute::{Database, ExecuteError, Target};
use grafton_schema::{Config, Convention, Naming, SchemaError};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

pub use engine::{Engine, GraphqlRequest, RoleSchema, Transport};

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

/// Connects, introspects and builds the engine.
pub async fn build_engine(options: &ServeOptions) -> Result<Engine, StartError> {
    let target = Target::parse(&options.database_url)?;
    let db = Database::connect(&target, options.pool_size).await?;
    let introspected = db.introspect(&options.schemas).await?;
    for w in &introspected.warnings {
        tracing::warn!("{w}");
    }
    let naming = Naming::new(options.naming);
    let model = grafton_schema::build(
        introspected.catalog.clone(),
        &options.config,
        naming,
        db.backend(),
    )?;
    for w in &model.warnings {
        tracing::warn!("{w}");
    }
    // One schema per role named in the config, built now, never per request.
    let roles: std::collections::BTreeSet<&String> = options
        .config
        .tables
        .values()
        .flat_map(|t| t.permissions.keys())
        .collect();
    // Rules are written as Hasura writes them (`_eq`, column names) whatever naming
    // the API uses: read them against a hasura-default model (same table and
    // relationship ids).
    let hasura_model;
    let rules_model = if options.naming == Convention::HasuraDefault || roles.is_empty() {
        &model
    } else {
        hasura_model = grafton_schema::build(
            introspected.catalog.clone(),
            &options.config,
            Naming::new(Convention::HasuraDefault),
            db.backend(),
        )?;
        &hasura_model
    };
    let mut role_models = Vec::new();
    let mut roles: Vec<&str> = roles.into_iter().map(String::as_str).collect();
    roles.push(engine::NO_PERMISSIONS);
    for role in roles {
        let rules =
            grafton_ir::permissions::compile(rules_model, &options.config, role).map_err(|e| {
                StartError::Config {
                    path: "permissions".into(),
                    message: e.to_string(),
                }
            })?;
        // Roles with `backend_only` permissions get a second schema: the one requests
        // from trusted backends (admin secret + x-hasura-use-backend-only-permissions) see.
        let views: &[bool] = if has_backend_only(&options.config, role) {
            &[false, true]
        } else {
            &[false]
        };
        for &backend_only in views {
            let model = grafton_schema::build_for_role(
                introspected.catalog.clone(),
                &options.config,
                naming,
                db.backend(),
                Some(role),
                backend_only,
            )
            .map_err(|e| StartError::Config {
                path: "permissions".into(),
                message: format!("schema of role '{role}': {e}"),
            })?;
            role_models.push(RoleSchema {
                model,
                rules: rules.clone(),
                backend_only,
            });
        }
    }
    Ok(Engine::with_roles(model, role_models, db).with_strict_graphql(options.strict_graphql))
}

/// Whether any of `role`'s insert, update or delete permissions is `backend_only`.
fn has_backend_only(config: &Config, role: &str) -> bool {
    config
        .tables
        .values()
        .filter_map(|t| t.permissions.get(role))
        .any(|p| {
            p.insert.as_ref().is_some_and(|x| x.backend_only)
                || p.update.as_ref().is_some_and(|x| x.backend_only)
                || p.delete.as_ref().is_some_and(|x| x.backend_only)
        })
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
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let handle = tokio::spawn(async move {
        let shutdown = async move {
            tokio::select! {
                _ = rx => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        };
        if let Err(e) = axum::serve(listener, app)
            .with_graceful_shutdown(shutdown)
            .await
        {
            tracing::error!("server error: {e}");
        }
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
