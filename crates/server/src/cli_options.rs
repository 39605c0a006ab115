//! The binary's shared flags (schema and listening) and how they become
//! [`ServeOptions`].

use crate::cli_access::seconds;
use clap::Args;
use grafton_schema::Convention;
use grafton_server::{ServeOptions, StartError};
use std::path::PathBuf;

/// Options shared by every command that builds a schema.
#[derive(Args, Clone)]
pub(crate) struct SchemaOptions {
    /// YAML config file (relationships, permissions, column JSON Schemas, view keys).
    #[arg(long, env = "GRAFTON_CONFIG")]
    pub(crate) config: Option<PathBuf>,
    /// Hasura metadata to import (relationships and permissions): a tables.yaml file
    /// or a metadata directory. The config file wins where both say something.
    #[arg(
        long,
        env = "GRAFTON_HASURA_METADATA",
        conflicts_with = "metadata_from"
    )]
    pub(crate) hasura_metadata: Option<PathBuf>,
    /// Hasura metadata (a metadata directory or a tables.yaml) an empty metadata
    /// store starts from; once the store holds metadata, it is served instead and
    /// changed through /v1/metadata. Without it or --hasura-metadata, the store
    /// starts empty (every table served, as without metadata).
    #[arg(long, env = "GRAFTON_METADATA_FROM")]
    pub(crate) metadata_from: Option<PathBuf>,
    /// Naming convention of the generated schema [default: the Hasura source's
    /// naming_convention, else hasura-default].
    #[arg(long, env = "GRAFTON_NAMING",
          value_parser = ["hasura-default", "graphql-default", "phrag"])]
    pub(crate) naming: Option<String>,
    /// PostgreSQL schemas to expose (comma-separated).
    #[arg(
        long = "schema",
        env = "GRAFTON_SCHEMA",
        default_value = "public",
        value_delimiter = ','
    )]
    pub(crate) schemas: Vec<String>,
    /// Refuse documents that declare variables they do not use, as the GraphQL spec
    /// says (Hasura, and so Grafton by default, accepts them).
    #[arg(long, env = "GRAFTON_STRICT_GRAPHQL")]
    pub(crate) strict_graphql: bool,
    /// A remote schema without permissions is admin's only (else every role
    /// sees it whole); a remote with permissions is always each permitted
    /// role's part.
    #[arg(long, env = "GRAFTON_ENABLE_REMOTE_SCHEMA_PERMISSIONS")]
    pub(crate) enable_remote_schema_permissions: bool,
    /// Whether every role that may read a tracked query function's table may call it
    /// (Hasura's default); `false`: it also needs the function's `permissions`.
    #[arg(long, env = "GRAFTON_INFER_FUNCTION_PERMISSIONS", value_name = "BOOL")]
    pub(crate) infer_function_permissions: Option<bool>,
    /// Serve every table, view and foreign key of the exposed schemas, not only
    /// what the Hasura metadata tracks (the default without metadata);
    /// `--auto-track=false` serves only the tables the config lists.
    #[arg(long, env = "GRAFTON_AUTO_TRACK", value_name = "BOOL", num_args = 0..=1,
          require_equals = true, default_missing_value = "true")]
    pub(crate) auto_track: Option<bool>,
    /// Refuse to start when the metadata names something Grafton cannot serve (a
    /// table not in the database, a function it cannot call, an event trigger),
    /// instead of leaving it out with a warning as Hasura does.
    #[arg(long, env = "GRAFTON_STRICT_METADATA")]
    pub(crate) strict_metadata: bool,
    /// The allow list applies even when it lists nothing: then only admin runs
    /// documents (Hasura's HASURA_GRAPHQL_ENABLE_ALLOWLIST). Without it, the
    /// metadata's or --allow-list's list applies whenever it lists something.
    #[arg(long, env = "GRAFTON_ENABLE_ALLOWLIST", value_name = "BOOL", num_args = 0..=1,
          default_missing_value = "true", default_value_t = false, action = clap::ArgAction::Set)]
    pub(crate) enable_allowlist: bool,
    /// Only the documents in this file run, for every role but admin: GraphQL
    /// (`.graphql`) or an Apollo persisted-query manifest (`.json`).
    #[arg(long, env = "GRAFTON_ALLOW_LIST")]
    pub(crate) allow_list: Option<PathBuf>,
    /// Rows a list without `limit` returns (off by default, as in Hasura). A
    /// safety net against `{ table { … } }` on a big table; see docs/limits.md.
    #[arg(long, env = "GRAFTON_DEFAULT_LIMIT")]
    pub(crate) default_limit: Option<u64>,
    /// Largest response in bytes, for every role (api_limits may set it per role).
    #[arg(long, env = "GRAFTON_MAX_RESPONSE_BYTES", default_value_t = 64 * 1024 * 1024)]
    pub(crate) max_response_bytes: u64,
    /// Seconds a request's database work may take, for every role; the statement
    /// is cancelled in the database when it passes (api_limits' time_limit may
    /// lower it per role).
    #[arg(long, env = "GRAFTON_REQUEST_TIMEOUT", default_value_t = 60.0)]
    pub(crate) request_timeout: f64,
    /// Seconds a request may wait for its turn (a heavy-query or max_concurrent
    /// place, a database connection); one that would wait longer is refused with
    /// `overloaded` (503). See docs/limits.md.
    #[arg(long, env = "GRAFTON_QUEUE_TIMEOUT", default_value_t = 2.0)]
    pub(crate) queue_timeout: f64,
}

/// Options for listening.
#[derive(Args, Clone)]
pub(crate) struct ListenOptions {
    /// Address to listen on.
    #[arg(long, env = "GRAFTON_HOST", default_value = "127.0.0.1")]
    pub(crate) host: String,
    /// Port to listen on.
    #[arg(long, env = "GRAFTON_PORT", default_value_t = 8080)]
    pub(crate) port: u16,
    /// Database connections in the pool.
    #[arg(long, env = "GRAFTON_POOL_SIZE", default_value_t = 10)]
    pub(crate) pool_size: usize,
    /// Queries of one shape waiting for a connection answered by one statement, at
    /// most (PostgreSQL; 1: each runs alone).
    #[arg(long, env = "GRAFTON_QUERY_BATCH_SIZE", default_value_t = 32,
          value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) query_batch_size: u16,
    /// Statements of light queries running at once, past which they wait and are
    /// multiplexed, and of heavy ones half of it, rounded up, when that is below
    /// the pool (PostgreSQL; off with --query-batch-size 1) [default: --pool-size,
    /// or, for a database on this machine with no replicas, 2 × cores + 1 when that
    /// is fewer].
    #[arg(long, env = "GRAFTON_QUERY_CONCURRENCY",
          value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) query_concurrency: Option<u16>,
    /// A PostgreSQL streaming replica that serves queries and subscription polls
    /// (repeatable; the environment variable takes a comma-separated list).
    /// Mutations always run on the primary. See docs/deploy.md.
    #[arg(
        long = "read-replica-url",
        env = "GRAFTON_READ_REPLICA_URLS",
        value_delimiter = ',',
        hide_env_values = true
    )]
    pub(crate) read_replicas: Vec<String>,
    /// After a caller's mutation, its reads (and subscription polls woken by a
    /// write) go to the primary for this many milliseconds, so it reads its own
    /// writes while the replicas replay them [default: 0, off].
    #[arg(long, env = "GRAFTON_PRIMARY_AFTER_WRITE_MS")]
    pub(crate) primary_after_write_ms: Option<u64>,
    /// Redis (`redis://host:port/db`), where several instances behind a load
    /// balancer share rate-limit counts and automatic persisted queries.
    #[arg(long, env = "GRAFTON_REDIS_URL", hide_env_values = true)]
    pub(crate) redis_url: Option<String>,
    /// `@cached` answers kept in memory at most, in bytes (least recently used
    /// are dropped first).
    #[arg(long, env = "GRAFTON_CACHE_MAX_BYTES", default_value_t = 64 * 1024 * 1024)]
    pub(crate) cache_max_bytes: u64,
    /// The longest `@cached(ttl:)` honoured, in seconds.
    #[arg(long, env = "GRAFTON_CACHE_MAX_TTL", default_value_t = 3600)]
    pub(crate) cache_max_ttl: u64,
    /// Largest accepted request body in bytes.
    #[arg(long, env = "GRAFTON_MAX_BODY_BYTES", default_value_t = 1024 * 1024)]
    pub(crate) max_body_bytes: usize,
    /// Seconds a client has to send a request's headers; an idle keep-alive
    /// connection is closed after as long.
    #[arg(long, env = "GRAFTON_HEADER_TIMEOUT", default_value_t = 10)]
    pub(crate) header_timeout: u64,
    /// Seconds a client has to send a request's body.
    #[arg(long, env = "GRAFTON_BODY_TIMEOUT", default_value_t = 10)]
    pub(crate) body_timeout: u64,
    /// Most connections open at once (HTTP and WebSocket); one past it is closed
    /// at once, counted in /metrics and logged [default: what the open-files
    /// limit, raised to its hard limit at start-up, leaves after the database
    /// pools and 64 files, at most 100,000].
    #[arg(long, env = "GRAFTON_MAX_CONNECTIONS")]
    pub(crate) max_connections: Option<usize>,
    /// Credentials and browser origins.
    #[command(flatten)]
    pub(crate) access: crate::cli_access::AccessOptions,
    /// Threads that serve HTTP and plan requests [default: half the cores, at least
    /// one]. SQLite's queries run on threads of their own and PostgreSQL's in its
    /// processes, so a machine shared with its database is best served by fewer;
    /// see docs/performance.md.
    #[arg(long, env = "GRAFTON_THREADS", value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) threads: Option<u16>,
    /// Seconds between two polls of a live query (a write through Grafton to a
    /// table it reads makes it poll at once).
    #[arg(long, env = "GRAFTON_LIVE_QUERY_INTERVAL", default_value_t = 1.0)]
    pub(crate) live_query_interval: f64,
    /// Event-trigger webhook calls at once, over every trigger.
    #[arg(long, env = "GRAFTON_EVENTS_HTTP_POOL_SIZE", default_value_t = 100,
          value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) events_http_pool_size: u16,
    /// Seconds between two looks at the event log while nothing is due (the
    /// capture notifies nothing: a NOTIFY per write serializes the writers'
    /// commits).
    #[arg(long, env = "GRAFTON_EVENTS_FETCH_INTERVAL", default_value_t = 0.1)]
    pub(crate) events_fetch_interval: f64,
    /// Hours delivered and dead events (and every invocation log) are kept before
    /// the clean-up deletes them.
    #[arg(long, env = "GRAFTON_EVENTS_RETENTION_HOURS", default_value_t = 168.0)]
    pub(crate) events_retention_hours: f64,
    /// Seconds after which an event claimed by an instance that never finished it
    /// (it crashed) is delivered again; webhook calls are held under it.
    #[arg(long, env = "GRAFTON_EVENTS_CLAIM_TIMEOUT", default_value_t = 360.0)]
    pub(crate) events_claim_timeout: f64,
    /// Events claimed for delivery at once.
    #[arg(long, env = "GRAFTON_EVENTS_FETCH_BATCH_SIZE", default_value_t = 100,
          value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) events_fetch_batch_size: u16,
    /// Seconds between two looks at the action log for asynchronous actions'
    /// calls written by other instances (one written by this instance is called
    /// at once); 0: this instance calls none.
    #[arg(
        long,
        env = "GRAFTON_ASYNC_ACTIONS_FETCH_INTERVAL",
        default_value_t = 1.0
    )]
    pub(crate) async_actions_fetch_interval: f64,
    /// Asynchronous actions' handlers called at once by this instance.
    #[arg(long, env = "GRAFTON_ASYNC_ACTIONS_FETCH_BATCH_SIZE", default_value_t = 10,
          value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) async_actions_fetch_batch_size: u16,
    /// Live-query subscribers answered by one SQL statement.
    #[arg(long, env = "GRAFTON_LIVE_QUERY_BATCH_SIZE", default_value_t = 100,
          value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) live_query_batch_size: u16,
    /// Bytes of live-query answers queued for subscribers at once, over every
    /// connection; an answer that would pass it ends its subscription with
    /// `subscription-memory-exceeded`.
    #[arg(long, env = "GRAFTON_LIVE_QUERY_MAX_BYTES", default_value_t = 268_435_456,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) live_query_max_bytes: u64,
    /// Seconds between two keep-alive messages on a WebSocket; a client silent for
    /// three of them is disconnected.
    #[arg(long, env = "GRAFTON_WS_KEEP_ALIVE", default_value_t = 10.0)]
    pub(crate) ws_keep_alive: f64,
    /// Seconds a WebSocket client has to send `connection_init`.
    #[arg(long, env = "GRAFTON_WS_INIT_TIMEOUT", default_value_t = 10.0)]
    pub(crate) ws_init_timeout: f64,
    /// The APIs served, comma-separated: graphql, metadata (Hasura's
    /// HASURA_GRAPHQL_ENABLED_APIS; pgdump, config, developer and metrics are
    /// accepted and served by no endpoint either way).
    #[arg(long, env = "GRAFTON_ENABLED_APIS", default_value = "graphql,metadata")]
    pub(crate) enabled_apis: String,
    /// Operations (subscriptions, and queries still running) one WebSocket may hold.
    #[arg(long, env = "GRAFTON_WS_MAX_OPERATIONS", default_value_t = 100)]
    pub(crate) ws_max_operations: usize,
    /// Serve the console (GraphiQL, embedded) at /console [default: on for `demo`,
    /// off for `serve`]. The admin secret is typed into its headers editor.
    #[arg(long, env = "GRAFTON_ENABLE_CONSOLE", num_args = 0..=1, default_missing_value = "true")]
    pub(crate) enable_console: Option<bool>,
    /// Serve Prometheus metrics at /metrics (admin only on the main port; see
    /// --metrics-addr). `--metrics false` turns them off.
    #[arg(long, env = "GRAFTON_METRICS", num_args = 0..=1, default_value_t = true,
          default_missing_value = "true", action = clap::ArgAction::Set)]
    pub(crate) metrics: bool,
    /// Serve /metrics on this address (host:port) instead, without credentials:
    /// for a network only the scraper reaches.
    #[arg(long, env = "GRAFTON_METRICS_ADDR")]
    pub(crate) metrics_addr: Option<String>,
    /// Log lines as text or as JSON objects (one per line).
    #[arg(long, env = "GRAFTON_LOG_FORMAT", default_value = "text", value_parser = ["text", "json"])]
    pub(crate) log_format: String,
    /// Log one line per request: request id, role, operation, status, error code,
    /// total and database time.
    #[arg(long, env = "GRAFTON_LOG_REQUESTS")]
    pub(crate) log_requests: bool,
    /// Requests slower than this many milliseconds are logged as warnings, with
    /// their SQL.
    #[arg(long, env = "GRAFTON_SLOW_REQUEST_MS")]
    pub(crate) slow_request_ms: Option<u64>,
    /// Export traces (OpenTelemetry) to this collector's OTLP/HTTP address, e.g.
    /// http://127.0.0.1:4318 (`/v1/traces` is added).
    #[arg(long, env = "GRAFTON_OTLP_ENDPOINT")]
    pub(crate) otlp_endpoint: Option<String>,
    /// Share of requests traced (0 to 1) when the caller's traceparent does not
    /// decide.
    #[arg(long, env = "GRAFTON_OTLP_SAMPLING_RATIO", default_value_t = 1.0)]
    pub(crate) otlp_sampling_ratio: f64,
    /// The traces' service.name.
    #[arg(long, env = "GRAFTON_OTLP_SERVICE_NAME", default_value = "grafton")]
    pub(crate) otlp_service_name: String,
    /// Database spans carry their SQL text (never the values bound to it).
    #[arg(long, env = "GRAFTON_OTLP_INCLUDE_SQL")]
    pub(crate) otlp_include_sql: bool,
    /// Add a Server-Timing header (plan, db, total) to GraphQL responses.
    #[arg(long, env = "GRAFTON_SERVER_TIMING")]
    pub(crate) server_timing: bool,
    /// Reload the schema when the PostgreSQL schema changes: installs an event
    /// trigger (needs a superuser once) that notifies Grafton of each DDL.
    #[arg(long, env = "GRAFTON_WATCH")]
    pub(crate) watch: bool,
    /// Seconds a stopping server (SIGTERM, Ctrl-C) keeps accepting requests while
    /// /readyz answers 503, so a load balancer moves traffic away first.
    #[arg(long, env = "GRAFTON_SHUTDOWN_DELAY", default_value_t = 0.0)]
    pub(crate) shutdown_delay: f64,
    /// Seconds a stopping server (SIGTERM, Ctrl-C) waits for open requests and
    /// WebSockets before closing them.
    #[arg(long, env = "GRAFTON_SHUTDOWN_TIMEOUT", default_value_t = 30.0)]
    pub(crate) shutdown_timeout: f64,
}

/// The connection cap: `--max-connections`, else what the open-files limit
/// (raised first) leaves for clients.
fn max_connections(l: &ListenOptions) -> usize {
    use grafton_server::file_limit;
    let files = file_limit::raise_file_limit();
    // Each pool (the primary's, each replica's) may hold `pool_size` connections.
    let database = l.pool_size * (1 + l.read_replicas.len());
    match (l.max_connections, files) {
        (Some(cap), Some(files)) if cap as u64 > file_limit::room_for_clients(files, database) => {
            tracing::warn!(
                "--max-connections {cap} is more than the open-files limit ({files}) leaves for \
                 clients; accepting past it will fail"
            );
            cap.max(1)
        }
        (Some(cap), _) => cap.max(1),
        (None, Some(files)) => file_limit::default_max_connections(files, database),
        (None, None) => 1024,
    }
}

/// The options of a command; `console` is the console's default for it.
pub(crate) fn options(
    database_url: String,
    schema: &SchemaOptions,
    listen: Option<(&ListenOptions, bool)>,
) -> Result<ServeOptions, StartError> {
    let mut o = ServeOptions {
        database_url,
        naming: (schema.naming.as_deref()).map(|n| n.parse::<Convention>().unwrap_or_default()),
        schemas: schema.schemas.clone(),
        strict_graphql: schema.strict_graphql,
        remote_schema_permissions: schema.enable_remote_schema_permissions,
        infer_function_permissions: schema.infer_function_permissions,
        auto_track: schema.auto_track,
        strict_metadata: schema.strict_metadata,
        enable_allowlist: schema.enable_allowlist,
        limits: grafton_engine::ServerLimits {
            max_response_bytes: schema.max_response_bytes,
            request_timeout: seconds(schema.request_timeout, "--request-timeout")?,
            default_limit: schema.default_limit,
            queue_timeout: seconds(schema.queue_timeout, "--queue-timeout")?,
        },
        ..ServeOptions::default()
    };
    let sources = grafton_server::ConfigSources {
        config: schema.config.clone(),
        hasura_metadata: schema.hasura_metadata.clone(),
        allow_list: schema.allow_list.clone(),
    };
    o.config = sources.load()?;
    o.sources = Some(sources);
    // The metadata is kept in the database unless it is served from files.
    o.metadata_store = schema.hasura_metadata.is_none();
    o.metadata_from.clone_from(&schema.metadata_from);
    if let Some((l, console)) = listen {
        o.http.console = l.enable_console.unwrap_or(console);
        o.host = l.host.clone();
        o.port = l.port;
        o.pool_size = l.pool_size;
        o.read_replicas.clone_from(&l.read_replicas);
        o.redis_url.clone_from(&l.redis_url);
        o.primary_after_write = l
            .primary_after_write_ms
            .map(std::time::Duration::from_millis);
        o.http.max_body_bytes = l.max_body_bytes;
        o.cache_max_bytes = l.cache_max_bytes;
        o.query_batch_size = usize::from(l.query_batch_size);
        o.query_concurrency = l.query_concurrency.map(usize::from);
        o.cache_max_ttl = std::time::Duration::from_secs(l.cache_max_ttl);
        o.http.body_timeout = std::time::Duration::from_secs(l.body_timeout.max(1));
        o.http.connections = grafton_server::ConnectionLimits {
            max_connections: max_connections(l),
            header_timeout: std::time::Duration::from_secs(l.header_timeout.max(1)),
        };
        o.live.interval = seconds(l.live_query_interval, "--live-query-interval")?;
        o.events.http_pool_size = usize::from(l.events_http_pool_size);
        o.events.fetch_interval = seconds(l.events_fetch_interval, "--events-fetch-interval")?;
        o.events.fetch_batch_size = usize::from(l.events_fetch_batch_size);
        o.events.claim_timeout = seconds(l.events_claim_timeout, "--events-claim-timeout")?;
        o.events.retention = seconds(
            l.events_retention_hours * 3600.0,
            "--events-retention-hours",
        )?;
        o.events.async_fetch_interval = match l.async_actions_fetch_interval {
            0.0 => std::time::Duration::ZERO,
            v => seconds(v, "--async-actions-fetch-interval")?,
        };
        o.events.async_fetch_batch_size = usize::from(l.async_actions_fetch_batch_size);
        o.live.batch_size = usize::from(l.live_query_batch_size);
        o.live.max_bytes = usize::try_from(l.live_query_max_bytes).unwrap_or(usize::MAX);
        o.live.concurrency = (l.pool_size / 2).max(1);
        o.http.ws.max_operations = l.ws_max_operations.max(1);
        o.http.ws.keep_alive = seconds(l.ws_keep_alive, "--ws-keep-alive")?;
        o.http.ws.init_timeout = seconds(l.ws_init_timeout, "--ws-init-timeout")?;
        o.http.apis = grafton_server::ops::Apis::parse(&l.enabled_apis).map_err(|message| {
            StartError::Config {
                path: "--enabled-apis".into(),
                message,
            }
        })?;
        o.http.cors = l.access.cors()?;
        o.watch = l.watch;
        o.metrics = l.metrics;
        o.metrics_addr.clone_from(&l.metrics_addr);
        o.http.observe = grafton_server::observe::ObserveOptions {
            server_timing: l.server_timing,
            slow_request: l.slow_request_ms.map(std::time::Duration::from_millis),
        };
        o.signals = true;
        o.shutdown_timeout = seconds(l.shutdown_timeout, "--shutdown-timeout")?;
        o.shutdown_delay = match l.shutdown_delay {
            0.0 => std::time::Duration::ZERO,
            d => seconds(d, "--shutdown-delay")?,
        };
        o.auth = l.access.auth()?;
    }
    Ok(o)
}
