//! Executing rendered statements: one pool per backend, values bound as parameters,
//! and the single JSON value the database built returned as text, unparsed.

pub mod changes;
mod compact;
pub mod ddl_watch;

pub use compact::compact_json;
mod error;
mod gathered;
mod locality;
mod params;
mod pg_params;
mod pg_pool;
mod poll;
mod postgres;
mod replicas;
mod routed;
mod run_sql;
mod sqlite;
mod sqlite_json;
mod sqlite_json_compare;
pub mod trace;
mod tx;

pub use error::{ConstraintViolation, DbErrorKind, ExecuteError};
pub use gathered::{GatherRead, Gathered};
pub use poll::{subscriber_value, subscriber_values, Answer};
pub use postgres::STATEMENT_CACHE_SIZE;
pub use replicas::{display_name, ReplicaStatus, Route};
pub use run_sql::SqlRows;
pub use tx::Tx;

use grafton_catalog::{Backend, Introspected};
use grafton_sql::{Dialect, Statement};
use serde_json::{Map, Value};

/// The PostgreSQL advisory lock every change to Grafton's own schema
/// (`grafton_catalog`: the metadata store, the event log and triggers) holds for
/// its transaction, so instances starting at once never race to create it.
pub const CATALOG_DDL_LOCK: i64 = 727_140;

/// A snapshot of the pool, for metrics.
#[derive(Debug, Clone, Copy, Default)]
pub struct PoolStatus {
    /// The most connections it opens.
    pub max: usize,
    /// Connections open now.
    pub open: usize,
    /// Open and not in use.
    pub idle: usize,
    /// Requests waiting for a connection.
    pub waiting: usize,
}

/// The pool's size and the settings of its connections.
#[derive(Debug, Clone, Copy)]
pub struct PoolOptions {
    /// Connections in the pool.
    pub size: usize,
    /// PostgreSQL's `statement_timeout` for every pooled session: a backstop under
    /// Grafton's own per-request deadlines, for a statement whose cancel got lost.
    pub statement_timeout: std::time::Duration,
    /// The longest a caller waits for a free connection before it is told every
    /// connection stayed busy.
    pub wait: std::time::Duration,
}

impl PoolOptions {
    /// `size` connections, with a 60 s statement timeout and a 2 s wait.
    pub fn new(size: usize) -> Self {
        Self {
            size,
            statement_timeout: std::time::Duration::from_secs(60),
            wait: std::time::Duration::from_secs(2),
        }
    }
}

/// What one query may take.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// How long it may run.
    pub timeout: std::time::Duration,
    /// The largest JSON it may return, in bytes.
    pub max_bytes: u64,
}

/// Where the database is, parsed from a URL or a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A `postgres://` / `postgresql://` connection URL.
    Postgres(String),
    /// A SQLite file path.
    Sqlite(std::path::PathBuf),
}

impl Target {
    /// Parses `postgres://…`, `postgresql://…`, `sqlite://path`, `sqlite:path` or a plain path.
    pub fn parse(url: &str) -> Result<Self, ExecuteError> {
        let url = url.trim();
        if url.is_empty() {
            return Err(ExecuteError::Config("the database URL is empty".into()));
        }
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(Self::Postgres(url.to_owned()));
        }
        if let Some(path) = url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"))
        {
            return Ok(Self::Sqlite(path.into()));
        }
        if url.contains("://") {
            return Err(ExecuteError::Config(format!(
                "unsupported database URL '{url}': use postgres://… or sqlite://path"
            )));
        }
        Ok(Self::Sqlite(url.into()))
    }
}

/// A query's statement, as a read a replica can run.
struct JsonRead<'a> {
    statement: &'a Statement,
    variables: &'a Map<String, Value>,
    max_bytes: u64,
}

impl replicas::Read for JsonRead<'_> {
    type Output = String;

    fn run<'a>(
        &'a self,
        db: &'a postgres::PgDatabase,
        timeout: std::time::Duration,
    ) -> impl std::future::Future<Output = Result<String, ExecuteError>> + Send + 'a {
        let budget = Budget {
            timeout,
            max_bytes: self.max_bytes,
        };
        db.query_json(self.statement, self.variables, budget)
    }
}

/// A connection pool to one database.
#[derive(Clone)]
pub enum Database {
    /// PostgreSQL via deadpool-postgres.
    Postgres(routed::Routed),
    /// SQLite via a deadpool of rusqlite connections.
    Sqlite(sqlite::SqliteDatabase),
}

impl Database {
    /// Opens a pool of connections and checks that one connects.
    pub async fn connect(target: &Target, pool: PoolOptions) -> Result<Self, ExecuteError> {
        match target {
            Target::Postgres(url) => Ok(Self::Postgres(routed::Routed::new(
                postgres::PgDatabase::connect(url, pool).await?,
            ))),
            Target::Sqlite(path) => Ok(Self::Sqlite(
                sqlite::SqliteDatabase::open(path, pool.size, pool.wait).await?,
            )),
        }
    }

    /// Which backend this is.
    pub fn backend(&self) -> Backend {
        match self {
            Self::Postgres(_) => Backend::Postgres,
            Self::Sqlite(_) => Backend::Sqlite,
        }
    }

    /// The SQL dialect to render for this database.
    pub fn dialect(&self) -> Dialect {
        match self {
            Self::Postgres(_) => Dialect::Postgres,
            Self::Sqlite(_) => Dialect::Sqlite,
        }
    }

    /// Reads the catalog (Postgres: the given schemas).
    pub async fn introspect(&self, schemas: &[String]) -> Result<Introspected, ExecuteError> {
        match self {
            Self::Postgres(db) => db.primary.introspect(schemas).await,
            Self::Sqlite(db) => db.introspect().await,
        }
    }

    /// Adds read replicas (PostgreSQL only): [`Database::query_json`] and
    /// [`Database::poll`] run there when routed so, each replica with a pool of
    /// `pool`'s size, checked every second (see the `replicas` module).
    pub async fn with_read_replicas(
        self,
        urls: &[String],
        pool: PoolOptions,
    ) -> Result<Self, ExecuteError> {
        if urls.is_empty() {
            return Ok(self);
        }
        match self {
            Self::Postgres(mut db) => {
                db.replicas = Some(replicas::Replicas::open(urls, pool, &db.primary).await?);
                Ok(Self::Postgres(db))
            }
            Self::Sqlite(_) => Err(ExecuteError::Config(
                "read replicas are PostgreSQL streaming replicas; a SQLite database has none"
                    .into(),
            )),
        }
    }

    /// Each read replica's state (empty without replicas).
    pub fn replicas(&self) -> Vec<ReplicaStatus> {
        match self {
            Self::Postgres(db) => db.replicas.as_ref().map(|r| r.status()).unwrap_or_default(),
            Self::Sqlite(_) => Vec::new(),
        }
    }

    /// Runs a read-only statement whose one row and column is JSON, where `route`
    /// says (a replica, when there are any and one is up); returns that JSON's
    /// text. The statement is stopped in the database when `budget.timeout` passes
    /// or when this future is dropped; a JSON longer than `budget.max_bytes` is
    /// refused.
    pub async fn query_json(
        &self,
        statement: &Statement,
        variables: &Map<String, Value>,
        budget: Budget,
        route: Route,
    ) -> Result<String, ExecuteError> {
        match self {
            Self::Postgres(db) => {
                let read = JsonRead {
                    statement,
                    variables,
                    max_bytes: budget.max_bytes,
                };
                db.read(route, budget.timeout, &read).await
            }
            Self::Sqlite(db) => db.query_json(statement, variables, budget).await,
        }
    }

    /// The most connections the pool opens.
    pub fn max_connections(&self) -> usize {
        match self {
            Self::Postgres(db) => db.primary.max_connections(),
            Self::Sqlite(db) => db.max_connections(),
        }
    }

    /// Whether its reads run on this machine's cores: PostgreSQL on a loopback
    /// address or a Unix socket with no read replicas, or SQLite.
    pub fn on_this_host(&self) -> bool {
        match self {
            Self::Postgres(db) => db.replicas.is_none() && db.primary.on_this_host(),
            Self::Sqlite(_) => true,
        }
    }

    /// The pool now: connections open, idle, and requests waiting for one.
    pub fn pool_status(&self) -> PoolStatus {
        let s = match self {
            Self::Postgres(db) => db.primary.pool_status(),
            Self::Sqlite(db) => db.pool_status(),
        };
        PoolStatus {
            max: s.max_size,
            open: s.size,
            idle: s.available,
            waiting: s.waiting,
        }
    }

    /// Checks that the database answers.
    pub async fn ping(&self) -> Result<(), ExecuteError> {
        match self {
            Self::Postgres(db) => db.primary.ping().await,
            Self::Sqlite(db) => db.ping().await,
        }
    }
}
