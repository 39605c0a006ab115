//! SQLite: a deadpool of rusqlite connections in WAL mode (many readers), each with
//! Grafton's aggregate functions registered and a prepared-statement cache.

use crate::error::{DbErrorKind, ExecuteError};
use crate::params::{sqlite_value, value_of};
use deadpool::managed::{self, Metrics, RecycleError, RecycleResult};
use deadpool::Runtime;
use deadpool_sync::SyncWrapper;
use grafton_catalog::Introspected;
use grafton_sql::Statement;
use rusqlite::functions::{Aggregate, Context, FunctionFlags};
use rusqlite::{Connection, OpenFlags};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub(crate) struct Manager {
    path: PathBuf,
}

/// A pooled SQLite connection (used on its own worker thread) and the handle that
/// interrupts its running statement from any thread.
pub(crate) struct SqliteConn {
    conn: SyncWrapper<Connection>,
    pub(crate) interrupt: std::sync::Arc<rusqlite::InterruptHandle>,
}

impl std::ops::Deref for SqliteConn {
    type Target = SyncWrapper<Connection>;

    fn deref(&self) -> &Self::Target {
        &self.conn
    }
}

impl managed::Manager for Manager {
    type Type = SqliteConn;
    type Error = rusqlite::Error;

    async fn create(&self) -> Result<Self::Type, Self::Error> {
        let path = self.path.clone();
        let conn = SyncWrapper::new(Runtime::Tokio1, move || open(&path)).await?;
        let interrupt = conn
            .interact(|c| c.get_interrupt_handle())
            .await
            .map_err(|e| rusqlite::Error::UserFunctionError(e.to_string().into()))?;
        Ok(SqliteConn {
            conn,
            interrupt: std::sync::Arc::new(interrupt),
        })
    }

    async fn recycle(&self, conn: &mut Self::Type, _: &Metrics) -> RecycleResult<Self::Error> {
        // A connection is reusable unless a panic poisoned it; no query per checkout.
        if conn.conn.is_mutex_poisoned() {
            return Err(RecycleError::message("connection poisoned by a panic"));
        }
        Ok(())
    }
}

type Pool = managed::Pool<Manager>;

/// A pooled connection.
pub(crate) type PooledConnection = managed::Object<Manager>;

/// A pool of connections to one SQLite file.
#[derive(Clone)]
pub struct SqliteDatabase {
    pool: Pool,
    /// SQLite has one writer at a time; write transactions queue here.
    writer: std::sync::Arc<tokio::sync::Mutex<()>>,
}

/// Runs `f` on the connection's worker thread.
pub(crate) async fn interact<T, F>(conn: &PooledConnection, f: F) -> Result<T, ExecuteError>
where
    F: FnOnce(&mut Connection) -> rusqlite::Result<T> + Send + 'static,
    T: Send + 'static,
{
    conn.interact(f)
        .await
        .map_err(interact_error)?
        .map_err(ExecuteError::from)
}

/// The statement's parameters as SQLite values, in placeholder order.
pub(crate) fn bind_values(
    statement: &Statement,
    variables: &Map<String, Value>,
) -> Vec<rusqlite::types::Value> {
    statement
        .params
        .iter()
        .map(|p| sqlite_value(p, value_of(p, variables)))
        .collect()
}

/// Runs a statement whose one row and column is JSON on `conn`; returns its text,
/// copied out of SQLite only when it is at most `max_bytes` long.
pub(crate) async fn query_json_on(
    conn: &PooledConnection,
    statement: &Statement,
    variables: &Map<String, Value>,
    max_bytes: u64,
) -> Result<String, ExecuteError> {
    use rusqlite::types::ValueRef;
    let values = bind_values(statement, variables);
    let sql = statement.sql.clone();
    let answer = interact(conn, move |c| {
        let mut stmt = c.prepare_cached(&sql)?;
        stmt.query_row(rusqlite::params_from_iter(values.iter()), |row| {
            Ok(match row.get_ref(0)? {
                ValueRef::Text(t) if t.len() as u64 > max_bytes => Err(t.len() as u64),
                ValueRef::Null => Ok(None),
                _ => Ok(Some(row.get::<_, String>(0)?)),
            })
        })
    })
    .await?;
    match answer {
        Ok(json) => Ok(json.unwrap_or_else(|| "null".to_owned())),
        Err(bytes) => Err(ExecuteError::TooLarge(bytes)),
    }
}

/// Runs `work` on `conn` for at most `timeout`. Past it, or when the caller goes
/// away (this future dropped), the statement is interrupted rather than left
/// running on the worker thread.
pub(crate) async fn within<T>(
    conn: &PooledConnection,
    timeout: Duration,
    work: impl std::future::Future<Output = Result<T, ExecuteError>>,
) -> Result<T, ExecuteError> {
    let guard = Interrupt(Some(conn.interrupt.clone()));
    match tokio::time::timeout(timeout, work).await {
        Ok(answer) => {
            guard.disarm();
            answer
        }
        Err(_) => Err(ExecuteError::Timeout(timeout)),
    }
}

/// Interrupts the connection's statement when dropped armed.
struct Interrupt(Option<std::sync::Arc<rusqlite::InterruptHandle>>);

impl Interrupt {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for Interrupt {
    fn drop(&mut self) {
        if let Some(handle) = self.0.take() {
            handle.interrupt();
        }
    }
}

fn open(path: &Path) -> rusqlite::Result<Connection> {
    // No CREATE flag: a mistyped path is an error, not a new empty database.
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI,
    )?;
    conn.busy_timeout(Duration::from_secs(5))?;
    conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))?;
    conn.execute_batch(
        "PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL; PRAGMA case_sensitive_like = ON;",
    )?;
    // 128 KiB of page cache per connection, not SQLite's 2 MB: every connection
    // caches the same file, which the OS page cache holds once anyway (a miss is
    // a `pread`); at 20 connections the default alone was 40 MB of RSS
    // (docs/performance.md, "SQLite memory").
    conn.execute_batch("PRAGMA cache_size = -128;")?;
    conn.set_prepared_statement_cache_capacity(256);
    register_functions(&conn)?;
    Ok(conn)
}

fn interact_error(e: deadpool_sync::InteractError) -> ExecuteError {
    ExecuteError::Database {
        kind: DbErrorKind::Other,
        message: format!("database worker failed: {e}"),
    }
}

fn pool_error(e: managed::PoolError<rusqlite::Error>) -> ExecuteError {
    match e {
        managed::PoolError::Backend(e) => e.into(),
        managed::PoolError::Timeout(managed::TimeoutType::Wait) => ExecuteError::Database {
            kind: DbErrorKind::Busy,
            message: "every database connection stayed busy".into(),
        },
        other => ExecuteError::Database {
            kind: DbErrorKind::Unavailable,
            message: format!("database unavailable: {other}"),
        },
    }
}

impl SqliteDatabase {
    /// Opens the pool and checks that the file opens as a database; a caller waits
    /// at most `wait` for a connection.
    pub async fn open(path: &Path, pool_size: usize, wait: Duration) -> Result<Self, ExecuteError> {
        if !path.exists() {
            return Err(ExecuteError::Connect(format!(
                "SQLite file '{}' does not exist",
                path.display()
            )));
        }
        let pool = Pool::builder(Manager {
            path: path.to_owned(),
        })
        .max_size(pool_size.max(1))
        .runtime(Runtime::Tokio1)
        .wait_timeout(Some(wait))
        .build()
        .map_err(|e| ExecuteError::Config(e.to_string()))?;
        let db = Self {
            pool,
            writer: Default::default(),
        };
        db.ping()
            .await
            .map_err(|e| ExecuteError::Connect(format!("{}: {e}", path.display())))?;
        Ok(db)
    }

    pub(crate) async fn introspect(&self) -> Result<Introspected, ExecuteError> {
        let conn = self.pool.get().await.map_err(pool_error)?;
        conn.interact(|c| grafton_catalog::introspect_sqlite(c))
            .await
            .map_err(interact_error)?
            .map_err(ExecuteError::from)
    }

    pub(crate) async fn query_json(
        &self,
        statement: &Statement,
        variables: &Map<String, Value>,
        budget: crate::Budget,
    ) -> Result<String, ExecuteError> {
        let conn = self.pool.get().await.map_err(pool_error)?;
        let run = query_json_on(&conn, statement, variables, budget.max_bytes);
        within(&conn, budget.timeout, run).await
    }

    pub(crate) fn max_connections(&self) -> usize {
        self.pool.status().max_size
    }

    pub(crate) fn pool_status(&self) -> deadpool::Status {
        self.pool.status()
    }

    /// A pooled connection, for reading.
    pub(crate) async fn connection(&self) -> Result<PooledConnection, ExecuteError> {
        self.pool.get().await.map_err(pool_error)
    }

    /// The write lock, waited for at most `wait` (a writer that cannot start within
    /// its own time limit is refused as busy), then a connection to write on.
    pub(crate) async fn writer(
        &self,
        wait: Duration,
    ) -> Result<(PooledConnection, tokio::sync::OwnedMutexGuard<()>), ExecuteError> {
        let lock = self.writer.clone().lock_owned();
        let guard = tokio::time::timeout(wait, lock)
            .await
            .map_err(|_| ExecuteError::Database {
                kind: DbErrorKind::Busy,
                message: format!(
                    "another write held the database for longer than this request's time limit ({} ms)",
                    wait.as_millis()
                ),
            })?;
        let conn = self.pool.get().await.map_err(pool_error)?;
        Ok((conn, guard))
    }

    pub(crate) async fn ping(&self) -> Result<(), ExecuteError> {
        let conn = self.pool.get().await.map_err(pool_error)?;
        conn.interact(|c| c.query_row("SELECT count(*) FROM sqlite_schema", [], |_| Ok(())))
            .await
            .map_err(interact_error)?
            .map_err(ExecuteError::from)
    }
}

/// Which variance statistic a registered aggregate computes.
#[derive(Clone, Copy)]
enum Stat {
    VarSamp,
    VarPop,
    StddevSamp,
    StddevPop,
}

/// Welford's running mean and sum of squares: stable where `Σx² − (Σx)²/n` is not.
#[derive(Default)]
struct Welford {
    n: f64,
    mean: f64,
    m2: f64,
}

impl Aggregate<Welford, Option<f64>> for Stat {
    fn init(&self, _: &mut Context<'_>) -> rusqlite::Result<Welford> {
        Ok(Welford::default())
    }

    fn step(&self, ctx: &mut Context<'_>, acc: &mut Welford) -> rusqlite::Result<()> {
        let x: Option<f64> = ctx.get(0)?;
        if let Some(x) = x {
            acc.n += 1.0;
            let delta = x - acc.mean;
            acc.mean += delta / acc.n;
            acc.m2 += delta * (x - acc.mean);
        }
        Ok(())
    }

    fn finalize(&self, _: &mut Context<'_>, acc: Option<Welford>) -> rusqlite::Result<Option<f64>> {
        let Some(acc) = acc else { return Ok(None) };
        let var = match self {
            Stat::VarSamp | Stat::StddevSamp if acc.n > 1.0 => acc.m2 / (acc.n - 1.0),
            Stat::VarPop | Stat::StddevPop if acc.n > 0.0 => acc.m2 / acc.n,
            _ => return Ok(None),
        };
        Ok(Some(match self {
            Stat::StddevSamp | Stat::StddevPop => var.sqrt(),
            _ => var,
        }))
    }
}

/// SQLite lacks Postgres's variance family (these match its NULL rules), and prints
/// integral floats as `2.0` where Postgres prints `2`: `grafton_float` makes both
/// backends answer the same bytes.
fn register_functions(conn: &Connection) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    conn.create_scalar_function("grafton_float", 1, flags, |ctx| {
        use rusqlite::types::{Value, ValueRef};
        Ok(match ctx.get_raw(0) {
            // 2^53: beyond it not every integer is a float, so keep the float.
            ValueRef::Real(f) if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 => {
                Value::Integer(f as i64)
            }
            ValueRef::Real(f) => Value::Real(f),
            ValueRef::Integer(i) => Value::Integer(i),
            ValueRef::Null => Value::Null,
            ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
            ValueRef::Blob(b) => Value::Blob(b.to_vec()),
        })
    })?;
    // A Relay cursor or global id: the standard base64 of a JSON text.
    conn.create_scalar_function("grafton_base64", 1, flags, |ctx| {
        use base64::Engine as _;
        let text = ctx.get::<Option<String>>(0)?;
        Ok(text.map(|t| base64::engine::general_purpose::STANDARD.encode(t)))
    })?;
    for (name, stat) in [
        ("grafton_var_samp", Stat::VarSamp),
        ("grafton_var_pop", Stat::VarPop),
        ("grafton_stddev_samp", Stat::StddevSamp),
        ("grafton_stddev_pop", Stat::StddevPop),
    ] {
        conn.create_aggregate_function(name, 1, flags, stat)?;
    }
    crate::sqlite_json::register(conn)?;
    crate::sqlite_json_compare::register(conn)
}
