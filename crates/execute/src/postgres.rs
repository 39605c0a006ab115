//! PostgreSQL: a deadpool of tokio-postgres clients and cached prepared statements.

use crate::error::{DbErrorKind, ExecuteError};
use crate::params::{postgres_text, value_of};
use crate::pg_params::{declared_type, TextParam};
use crate::pg_pool::{Object, Pool};
use deadpool_postgres::{Config, ManagerConfig, PoolConfig, RecyclingMethod, Runtime, Timeouts};
use grafton_catalog::Introspected;
use grafton_sql::Statement;
use serde_json::{Map, Value};
use std::time::Duration;
use tokio_postgres::types::{FromSql, ToSql, Type};
use tokio_postgres::NoTls;

/// A pool of connections to one PostgreSQL database.
#[derive(Clone)]
pub struct PgDatabase {
    pool: Pool,
    /// How the pool connects, for connections of its own (the change feed).
    config: std::sync::Arc<tokio_postgres::Config>,
    /// Whether the server runs on this machine (see [`crate::locality`]), as
    /// `connect` found it; a pool made without connecting says no.
    here: bool,
}

/// The text of a `json` (or `text`) result, borrowed from the row without parsing
/// or copying (it is copied once, compacted).
pub(crate) struct RawJson<'a>(pub(crate) &'a str);

impl<'a> FromSql<'a> for RawJson<'a> {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(RawJson(std::str::from_utf8(raw)?))
    }

    fn accepts(ty: &Type) -> bool {
        *ty == Type::JSON || *ty == Type::TEXT
    }
}

/// A failure to get a connection: whatever the cause (refused, a database that no
/// longer exists, a full server, a timeout), the database is unavailable.
fn pool_error(e: deadpool_postgres::PoolError) -> ExecuteError {
    match e {
        deadpool_postgres::PoolError::Backend(e) => ExecuteError::Database {
            kind: DbErrorKind::Unavailable,
            message: format!("database unavailable: {}", postgres_cause(&e)),
        },
        // Every connection is busy and stayed busy: the server is overloaded, the
        // database is not gone.
        deadpool_postgres::PoolError::Timeout(deadpool::managed::TimeoutType::Wait) => {
            ExecuteError::Database {
                kind: DbErrorKind::Busy,
                message: "every database connection stayed busy".into(),
            }
        }
        other => ExecuteError::Database {
            kind: DbErrorKind::Unavailable,
            message: format!("database unavailable: {other}"),
        },
    }
}

impl PgDatabase {
    /// Creates the pool and checks that a connection can be made.
    pub async fn connect(url: &str, options: crate::PoolOptions) -> Result<Self, ExecuteError> {
        let mut db = Self::lazy(url, options)?;
        match db.pool.get().await {
            Ok(client) => {
                db.here = crate::locality::on_this_host(&db.config, &client).await;
                Ok(db)
            }
            Err(deadpool_postgres::PoolError::Backend(e)) => {
                Err(ExecuteError::Connect(postgres_cause(&e)))
            }
            Err(e) => Err(ExecuteError::Connect(e.to_string())),
        }
    }

    /// Creates the pool; its connections are made when first needed.
    pub(crate) fn lazy(url: &str, options: crate::PoolOptions) -> Result<Self, ExecuteError> {
        let pool_size = options.size;
        let mut cfg = Config::new();
        cfg.url = Some(url.to_owned());
        cfg.options = Some(session_options(url, options.statement_timeout)?);
        let mut pool_cfg = PoolConfig::new(pool_size.max(1));
        pool_cfg.timeouts = Timeouts {
            wait: Some(options.wait),
            create: Some(Duration::from_secs(5)),
            recycle: Some(Duration::from_secs(5)),
        };
        let invalid = |e: String| ExecuteError::Config(format!("invalid PostgreSQL URL: {e}"));
        let pg_config = cfg.get_pg_config().map_err(|e| invalid(e.to_string()))?;
        let manager = deadpool_postgres::Manager::from_config(
            pg_config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(crate::pg_pool::Manager(manager))
            .config(pool_cfg)
            .runtime(Runtime::Tokio1)
            .build()
            .map_err(|e| invalid(e.to_string()))?;
        Ok(Self {
            pool,
            config: std::sync::Arc::new(pg_config),
            here: false,
        })
    }

    pub(crate) async fn introspect(
        &self,
        schemas: &[String],
    ) -> Result<Introspected, ExecuteError> {
        let client = self.pool.get().await.map_err(pool_error)?;
        Ok(grafton_catalog::introspect_postgres(&client, schemas).await?)
    }

    pub(crate) async fn query_json(
        &self,
        statement: &Statement,
        variables: &Map<String, Value>,
        budget: crate::Budget,
    ) -> Result<String, ExecuteError> {
        let max = budget.max_bytes;
        self.with_deadline(budget.timeout, async |client: &Object| {
            query_json_on(client, statement, variables, max).await
        })
        .await
    }

    /// Runs `work` on a pooled connection for at most `timeout`. Past it, or when the
    /// caller goes away (this future dropped), the statement is cancelled in
    /// PostgreSQL, and the connection only goes back to the pool once it is idle.
    pub(crate) async fn with_deadline<T>(
        &self,
        timeout: Duration,
        work: impl AsyncFnOnce(&Object) -> Result<T, ExecuteError>,
    ) -> Result<T, ExecuteError> {
        self.hold().await?.run(timeout, work).await
    }

    /// A pooled connection, held until [`Held::run`] has used it.
    pub(crate) async fn hold(&self) -> Result<Held, ExecuteError> {
        Ok(Held(Running(Some(self.client().await?))))
    }

    pub(crate) fn max_connections(&self) -> usize {
        self.pool.status().max_size
    }

    /// Whether the server runs on this machine (see [`crate::locality`]).
    pub(crate) fn on_this_host(&self) -> bool {
        self.here
    }

    pub(crate) fn pool_status(&self) -> deadpool::Status {
        self.pool.status()
    }

    /// How the pool's connections are made.
    pub(crate) fn config(&self) -> &tokio_postgres::Config {
        &self.config
    }

    /// A pooled connection.
    pub(crate) async fn client(&self) -> Result<Object, ExecuteError> {
        self.pool.get().await.map_err(pool_error)
    }

    pub(crate) async fn ping(&self) -> Result<(), ExecuteError> {
        let client = self.pool.get().await.map_err(pool_error)?;
        client.simple_query("SELECT 1").await?;
        Ok(())
    }
}

/// Every pooled session runs with a statement timeout (a backstop: requests have
/// their own deadlines) and without JIT compilation, which no cancel interrupts and
/// which costs more than it saves on the statements Grafton sends (docs/limits.md).
/// Options already in the URL are kept; these come after, so they win.
fn session_options(url: &str, statement_timeout: Duration) -> Result<String, ExecuteError> {
    let parsed: tokio_postgres::Config = url
        .parse()
        .map_err(|e| ExecuteError::Config(format!("invalid PostgreSQL URL: {e}")))?;
    let mut options = parsed.get_options().unwrap_or("").to_owned();
    if !options.is_empty() {
        options.push(' ');
    }
    let ms = statement_timeout.as_millis().max(1);
    options.push_str(&format!("-c jit=off -c statement_timeout={ms}"));
    Ok(options)
}

/// A pooled connection with a statement that may still be running.
struct Running(Option<Object>);

/// A pooled connection a read holds before it decides what to run on it.
pub(crate) struct Held(Running);

impl Held {
    /// Runs `work` on the connection for at most `timeout`. Past it, or when the
    /// caller goes away (this future dropped), the statement is cancelled in
    /// PostgreSQL, and the connection only goes back to the pool once it is idle.
    pub(crate) async fn run<T>(
        self,
        timeout: Duration,
        work: impl AsyncFnOnce(&Object) -> Result<T, ExecuteError>,
    ) -> Result<T, ExecuteError> {
        let mut running = self.0;
        let client = running
            .0
            .as_ref()
            .ok_or_else(|| ExecuteError::Config("no connection".into()))?;
        match tokio::time::timeout(timeout, work(client)).await {
            Ok(answer) => {
                // Finished: the connection is idle; back to the pool as it is.
                drop(running.0.take());
                answer
            }
            Err(_) => {
                if let Some(client) = running.0.take() {
                    settle(client).await;
                }
                Err(ExecuteError::Timeout(timeout))
            }
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(client) = self.0.take() {
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                handle.spawn(settle(client));
            }
        }
    }
}

/// How long a cancelled statement has to end before its connection is discarded.
const SETTLE_TIME: Duration = Duration::from_secs(2);

/// Runs `work`, a statement on `client` that commits by itself, for at most `limit`.
/// Past it the statement is cancelled and its own answer awaited: one that finished
/// before the cancel arrived keeps its result, so a write that committed is never
/// reported as failed. The flag is false when no answer came in [`SETTLE_TIME`]:
/// the connection's state is unknown and it must not be reused.
pub(crate) async fn bounded<T>(
    client: &Object,
    limit: Duration,
    work: impl std::future::Future<Output = Result<T, ExecuteError>>,
) -> (Result<T, ExecuteError>, bool) {
    tokio::pin!(work);
    if let Ok(answer) = tokio::time::timeout(limit, &mut work).await {
        return (answer, true);
    }
    let _ = client.cancel_token().cancel_query(NoTls).await;
    match tokio::time::timeout(SETTLE_TIME, &mut work).await {
        Ok(Err(e)) if e.kind() == DbErrorKind::Timeout => (Err(ExecuteError::Timeout(limit)), true),
        Ok(answer) => (answer, true),
        Err(_) => (Err(ExecuteError::Timeout(limit)), false),
    }
}

/// Cancels whatever `client` is running and waits for the connection to be idle (an
/// empty query answered after the cancelled one); a connection that does not settle
/// in time is closed instead of going back to the pool.
pub(crate) async fn settle(client: Object) {
    let cancelled = client.cancel_token().cancel_query(NoTls).await;
    let idle = tokio::time::timeout(SETTLE_TIME, client.simple_query("")).await;
    if cancelled.is_err() || !matches!(idle, Ok(Ok(_))) {
        tracing::debug!("a cancelled connection did not settle; closing it");
        let _ = Object::take(client);
    }
}

pub use crate::pg_pool::STATEMENT_CACHE_SIZE;

/// Prepares (once per connection, see [`crate::pg_pool`]) and runs `statement` on
/// `client`. Parameters are declared with their type and travel as text (see
/// [`crate::pg_params`]).
pub(crate) async fn query(
    client: &Object,
    statement: &Statement,
    variables: &Map<String, Value>,
) -> Result<Vec<tokio_postgres::Row>, ExecuteError> {
    let types: Vec<Type> = statement.params.iter().map(declared_type).collect();
    let prepared = crate::pg_pool::prepare(client, &statement.sql, &types).await?;
    let values: Vec<TextParam> = statement
        .params
        .iter()
        .map(|p| TextParam(postgres_text(p, value_of(p, variables))))
        .collect();
    let refs: Vec<&(dyn ToSql + Sync)> = values.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
    Ok(client.query(&prepared, &refs).await?)
}

/// Runs a statement whose one row and column is JSON on `client`; returns its text.
/// A statement wrapped by `grafton_sql::render::size_guard_postgres` has a second
/// column, the JSON's size, and the JSON itself only when it is small enough.
pub(crate) async fn query_json_on(
    client: &Object,
    statement: &Statement,
    variables: &Map<String, Value>,
    max_bytes: u64,
) -> Result<String, ExecuteError> {
    let rows = query(client, statement, variables).await?;
    let Some(row) = rows.first() else {
        return Ok("null".to_owned());
    };
    let json: Option<RawJson> = row.try_get(0)?;
    let size: Option<i32> = if row.len() > 1 { row.try_get(1)? } else { None };
    match (json, size) {
        (Some(j), _) if j.0.len() as u64 > max_bytes => {
            Err(ExecuteError::TooLarge(j.0.len() as u64))
        }
        (Some(j), _) => Ok(crate::compact::compacted(statement, j.0)),
        (None, Some(bytes)) => Err(ExecuteError::TooLarge(bytes.max(0) as u64)),
        (None, None) => Ok("null".to_owned()),
    }
}

/// The innermost useful message of a connection error ("connection refused", …).
fn postgres_cause(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return db.message().to_owned();
    }
    let mut msg = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        msg = format!("{msg}: {s}");
        source = s.source();
    }
    msg
}
