//! What the server is asked to serve, and the engine's options made from it.

use crate::StartError;
use grafton_schema::{Config, Convention};
use std::path::PathBuf;
use std::time::Duration;

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
    /// Keep the metadata in the database (changed through `/v1/metadata`, shared by
    /// every instance) rather than read-only in files: the CLI's servers without
    /// `--hasura-metadata`.
    pub metadata_store: bool,
    /// The Hasura metadata an empty store starts from (`--metadata-from`).
    pub metadata_from: Option<std::path::PathBuf>,
    /// How event triggers' events are delivered.
    pub events: grafton_events::EventOptions,
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
    pub http: HttpOptions,
    /// Admin secret, JWT and unauthorized role.
    pub auth: grafton_auth::AuthConfig,
    /// Refuse documents declaring variables they do not use (the spec's rule).
    pub strict_graphql: bool,
    /// `--enable-remote-schema-permissions`: a remote schema without
    /// permissions is admin's only (else every role's).
    pub remote_schema_permissions: bool,
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
    /// `@cached`: bytes of answers kept at most (`--cache-max-bytes`).
    pub cache_max_bytes: u64,
    /// `@cached`: the longest `ttl` (`--cache-max-ttl`).
    pub cache_max_ttl: std::time::Duration,
    /// Waiting queries of one shape answered by one statement (`--query-batch-size`).
    pub query_batch_size: usize,
    /// Light queries' statements at once (`--query-concurrency`; `None`: the
    /// engine's default).
    pub query_concurrency: Option<usize>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            database_url: String::new(),
            host: "127.0.0.1".into(),
            port: 8080,
            config: Config::default(),
            sources: None,
            metadata_store: false,
            metadata_from: None,
            events: grafton_events::EventOptions::default(),
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
            http: HttpOptions::default(),
            auth: grafton_auth::AuthConfig::default(),
            strict_graphql: false,
            remote_schema_permissions: false,
            infer_function_permissions: None,
            auto_track: None,
            enable_allowlist: false,
            strict_metadata: false,
            limits: grafton_engine::ServerLimits::default(),
            live: grafton_engine::LiveOptions::default(),
            cache_max_bytes: grafton_engine::response_cache::DEFAULT_MAX_BYTES,
            cache_max_ttl: grafton_engine::response_cache::DEFAULT_MAX_TTL,
            query_batch_size: grafton_engine::gather::DEFAULT_BATCH_SIZE,
            query_concurrency: None,
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
    // Metadata may come later through the API (Hasura's workflow starts empty).
    config.serve_empty |= options.metadata_store;
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
        remote_schema_permissions: options.remote_schema_permissions,
        strict_metadata: options.strict_metadata,
        limits: options.limits.clone(),
    }
}

/// The files the config comes from, read at start-up and at each reload.
#[derive(Debug, Clone, Default)]
pub struct ConfigSources {
    /// The YAML config file.
    pub config: Option<PathBuf>,
    /// Hasura metadata (tables.yaml or a metadata directory); the config file wins.
    pub hasura_metadata: Option<PathBuf>,
    /// An allow-list file for every role but admin.
    pub allow_list: Option<PathBuf>,
}

impl ConfigSources {
    /// Reads and merges the files.
    pub fn load(&self) -> Result<Config, StartError> {
        let mut config = match &self.config {
            Some(path) => crate::load_config(path)?,
            None => Config::default(),
        };
        if let Some(path) = &self.hasura_metadata {
            let imported =
                grafton_schema::hasura::load(path).map_err(|message| StartError::Config {
                    path: path.display().to_string(),
                    message,
                })?;
            grafton_schema::hasura::merge(&mut config, imported);
        }
        if let Some(path) = &self.allow_list {
            config.allow_list.push(crate::load_allow_list(path)?);
        }
        Ok(config)
    }
}

/// HTTP settings.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Largest accepted request body, in bytes.
    pub max_body_bytes: usize,
    /// Time a client has to send a request's body once its headers are in.
    pub body_timeout: std::time::Duration,
    /// Open connections and the header deadline.
    pub connections: ConnectionLimits,
    /// GraphQL over WebSocket.
    pub ws: WsOptions,
    /// Serve the console (GraphiQL) at `/console`, and redirect `/` there.
    pub console: bool,
    /// Request ids, logs and timing headers.
    pub observe: ObserveOptions,
    /// Which browser origins may call the API.
    pub cors: crate::cors::CorsPolicy,
    /// Which APIs are served.
    pub apis: Apis,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            max_body_bytes: 1024 * 1024,
            body_timeout: std::time::Duration::from_secs(10),
            connections: ConnectionLimits::default(),
            ws: WsOptions::default(),
            console: false,
            observe: ObserveOptions::default(),
            cors: crate::cors::CorsPolicy::default(),
            apis: Apis::default(),
        }
    }
}

/// WebSocket settings.
#[derive(Debug, Clone, Copy)]
pub struct WsOptions {
    /// Time a client has to send `connection_init`.
    pub init_timeout: Duration,
    /// How often the server sends a keep-alive; a client silent for three of these
    /// is disconnected.
    pub keep_alive: Duration,
    /// Operations (subscriptions, and queries still running) one connection may hold.
    pub max_operations: usize,
}

impl Default for WsOptions {
    fn default() -> Self {
        Self {
            init_timeout: Duration::from_secs(10),
            keep_alive: Duration::from_secs(10),
            max_operations: 100,
        }
    }
}

/// Settings of what requests leave behind.
#[derive(Debug, Clone, Copy, Default)]
pub struct ObserveOptions {
    /// Add `Server-Timing` (plan, db, total) to GraphQL responses.
    pub server_timing: bool,
    /// Requests slower than this are logged as warnings, with their SQL.
    pub slow_request: Option<Duration>,
}

/// Connection limits.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// Most connections open at once.
    pub max_connections: usize,
    /// Time a client has to send a request's headers (and, idle, the next request).
    pub header_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            max_connections: 1024,
            header_timeout: Duration::from_secs(10),
        }
    }
}

/// Which of Hasura's APIs are served (`--enabled-apis`,
/// `HASURA_GRAPHQL_ENABLED_APIS`): one left out answers 404.
#[derive(Debug, Clone, Copy)]
pub struct Apis {
    /// `/v1/graphql` and `/graphql`.
    pub graphql: bool,
    /// `/v1/metadata`, `/v2/query` and `/v1/query`.
    pub metadata: bool,
    /// `/v1alpha1/config`.
    pub config: bool,
}

impl Default for Apis {
    fn default() -> Self {
        Self {
            graphql: true,
            metadata: true,
            config: true,
        }
    }
}

impl Apis {
    /// Hasura's comma-separated list: `graphql`, `metadata`, `config`, and `pgdump`,
    /// `developer`, `metrics`, which Grafton does not serve either way.
    pub fn parse(text: &str) -> Result<Apis, String> {
        let mut apis = Apis {
            graphql: false,
            metadata: false,
            config: false,
        };
        let mut any = false;
        for name in text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            any = true;
            match name.to_ascii_lowercase().as_str() {
                "graphql" => apis.graphql = true,
                "metadata" => apis.metadata = true,
                "config" => apis.config = true,
                "pgdump" | "developer" | "metrics" => {}
                _ => return Err(format!(
                    "unknown API {name:?}; expected graphql, metadata, pgdump, config, developer or metrics"
                )),
            }
        }
        match any {
            true => Ok(apis),
            false => Err("no API given".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Apis;

    #[test]
    fn hasuras_api_lists() {
        let apis = Apis::parse("metadata, GraphQL,pgdump,config").expect("list");
        assert!(apis.graphql && apis.metadata);
        let only = Apis::parse("graphql").expect("list");
        assert!(only.graphql && !only.metadata);
        assert!(Apis::parse("graphql,rest")
            .unwrap_err()
            .contains("\"rest\""));
        assert!(Apis::parse(" , ").is_err());
    }
}
