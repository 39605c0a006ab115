//! What the server is asked to serve, and the engine's options made from it.

use crate::{http, ConfigSources};
use grafton_schema::{Config, Convention};

/// What to serve and how.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// `postgres://…`, `sqlite://path` or a path.
    pub database_url: String,
    /// Address to listen on.
    pub host: String,
    /// Port to listen on (0 picks a free one).
    pub port: u16,
    /// Parsed config file (when `sources` is `None`: a reload keeps it).
    pub config: Config,
    /// The files `config` was read from, read again by a reload.
    pub sources: Option<ConfigSources>,
    /// Reload when the PostgreSQL schema changes (an event trigger NOTIFYs).
    pub watch: bool,
    /// SIGTERM and Ctrl-C stop the server, SIGHUP reloads it (the CLI's servers).
    pub signals: bool,
    /// Serve Prometheus metrics at `/metrics`.
    pub metrics: bool,
    /// Serve `/metrics` on this address (no credentials) instead of the main port
    /// (admin only).
    pub metrics_addr: Option<String>,
    /// How long a stopping server keeps accepting with `/readyz` at 503, so a load
    /// balancer moves traffic away before the port closes.
    pub shutdown_delay: std::time::Duration,
    /// How long a stopping server waits for open requests and sockets.
    pub shutdown_timeout: std::time::Duration,
    /// Naming convention (`None`: the Hasura source's `naming_convention`, else
    /// hasura-default).
    pub naming: Option<Convention>,
    /// Connections in the pool (and in each read replica's).
    pub pool_size: usize,
    /// PostgreSQL streaming replicas for queries and subscription polls (the
    /// config file's `database.read_replicas` when empty).
    pub read_replicas: Vec<String>,
    /// After a caller's mutation, its reads go to the primary for this long (the
    /// config file's `database.primary_after_write_ms` when `None`).
    pub primary_after_write: Option<std::time::Duration>,
    /// Postgres schemas to expose.
    pub schemas: Vec<String>,
    /// Redis, where instances share rate-limit counts and persisted queries.
    pub redis_url: Option<String>,
    /// HTTP settings.
    pub http: http::HttpOptions,
    /// Admin secret, JWT and unauthorized role.
    pub auth: grafton_auth::AuthConfig,
    /// Refuse documents declaring variables they do not use (the spec's rule).
    pub strict_graphql: bool,
    /// `--infer-function-permissions`: wins over the config file's
    /// `infer_function_permissions` (default true).
    pub infer_function_permissions: Option<bool>,
    /// `--strict-metadata`: refuse to start when a metadata object cannot be
    /// served, instead of leaving it out and reporting it.
    pub strict_metadata: bool,
    /// `--enable-allowlist`: the allow list applies even when empty.
    pub enable_allowlist: bool,
    /// `--auto-track`: wins over the config's `auto_track` (default: true without
    /// Hasura metadata, false with it).
    pub auto_track: Option<bool>,
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
            sources: None,
            watch: false,
            signals: false,
            metrics: true,
            metrics_addr: None,
            shutdown_delay: std::time::Duration::ZERO,
            shutdown_timeout: std::time::Duration::from_secs(30),
            naming: None,
            pool_size: 10,
            read_replicas: Vec::new(),
            primary_after_write: None,
            schemas: vec!["public".into()],
            redis_url: None,
            http: http::HttpOptions::default(),
            auth: grafton_auth::AuthConfig::default(),
            strict_graphql: false,
            infer_function_permissions: None,
            auto_track: None,
            enable_allowlist: false,
            strict_metadata: false,
            limits: grafton_engine::ServerLimits::default(),
            live: grafton_engine::LiveOptions::default(),
        }
    }
}

/// The engine's options from the server's, with `config`.
pub(crate) fn engine_options(
    options: &ServeOptions,
    mut config: Config,
) -> grafton_engine::EngineOptions {
    let database = config.database.clone();
    let naming = options.naming.or(config.naming).unwrap_or_default();
    if options.infer_function_permissions.is_some() {
        config.infer_function_permissions = options.infer_function_permissions;
    }
    config.enforce_allow_list |= options.enable_allowlist;
    if options.auto_track.is_some() {
        config.auto_track = options.auto_track;
    }
    grafton_engine::EngineOptions {
        database_url: options.database_url.clone(),
        config,
        naming,
        pool_size: options.pool_size,
        read_replicas: if options.read_replicas.is_empty() {
            database.read_replicas
        } else {
            options.read_replicas.clone()
        },
        primary_after_write: options.primary_after_write.unwrap_or_else(|| {
            std::time::Duration::from_millis(database.primary_after_write_ms.unwrap_or(0))
        }),
        schemas: options.schemas.clone(),
        redis_url: options.redis_url.clone(),
        strict_graphql: options.strict_graphql,
        strict_metadata: options.strict_metadata,
        limits: options.limits.clone(),
    }
}
