//! PostgreSQL: a deadpool of tokio-postgres clients and cached prepared statements.

use crate::error::{DbErrorKind, ExecuteError};
use crate::params::{postgres_text, value_of};
use deadpool_postgres::{
    Config, ManagerConfig, Pool, PoolConfig, RecyclingMethod, Runtime, Timeouts,
};
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
}

/// The text of a `json` (or `text`) result, taken without parsing.
struct RawJson(String);

impl<'a> FromSql<'a> for RawJson {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(RawJson(std::str::from_utf8(raw)?.to_owned()))
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
        other => ExecuteError::Database {
            kind: DbErrorKind::Unavailable,
            message: format!("database unavailable: {other}"),
        },
    }
}

impl PgDatabase {
    /// Creates the pool and checks that a connection can be made.
    pub async fn connect(url: &str, pool_size: usize) -> Result<Self, ExecuteError> {
        let mut cfg = Config::new();
        cfg.url = Some(url.to_owned());
        cfg.manager = Some(ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        });
        let mut pool_cfg = PoolConfig::new(pool_size.max(1));
        pool_cfg.timeouts = Timeouts {
            wait: Some(Duration::from_secs(10)),
            create: Some(Duration::from_secs(5)),
            recycle: Some(Duration::from_secs(5)),
        };
        cfg.pool = Some(pool_cfg);
        let pool = cfg
            .create_pool(Some(Runtime::Tokio1), NoTls)
            .map_err(|e| ExecuteError::Config(format!("invalid PostgreSQL URL: {e}")))?;
        match pool.get().await {
            Ok(_) => Ok(Self { pool }),
            Err(deadpool_postgres::PoolError::Backend(e)) => {
                Err(ExecuteError::Connect(postgres_cause(&e)))
            }
            Err(e) => Err(ExecuteError::Connect(e.to_string())),
        }
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
    ) -> Result<String, ExecuteError> {
        let client = self.client().await?;
        query_json_on(&client, statement, variables).await
    }

    /// A pooled connection.
    pub(crate) async fn client(&self) -> Result<deadpool_postgres::Object, ExecuteError> {
        self.pool.get().await.map_err(pool_error)
    }

    pub(crate) async fn ping(&self) -> Result<(), ExecuteError> {
        let client = self.pool.get().await.map_err(pool_error)?;
        client.simple_query("SELECT 1").await?;
        Ok(())
    }
}

/// The most statements one pooled connection keeps prepared (then it starts over),
/// so many distinct query shapes cannot grow a PostgreSQL backend without bound.
pub const STATEMENT_CACHE_SIZE: usize = 256;

/// Prepares (once per connection) and runs `statement` on `client`. Parameters
/// travel as text and are cast in the SQL.
pub(crate) async fn query(
    client: &deadpool_postgres::Object,
    statement: &Statement,
    variables: &Map<String, Value>,
) -> Result<Vec<tokio_postgres::Row>, ExecuteError> {
    let types = vec![Type::TEXT; statement.params.len()];
    // Every prepared statement costs the server backend memory: past the bound the
    // connection's cache starts over (dropped statements are closed on the server).
    if client.statement_cache.size() >= STATEMENT_CACHE_SIZE {
        client.statement_cache.clear();
    }
    let prepared = client.prepare_typed_cached(&statement.sql, &types).await?;
    let values: Vec<Option<String>> = statement
        .params
        .iter()
        .map(|p| postgres_text(p, value_of(p, variables)))
        .collect();
    let refs: Vec<&(dyn ToSql + Sync)> = values.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
    Ok(client.query(&prepared, &refs).await?)
}

/// Runs a statement whose one row and column is JSON on `client`; returns its text.
pub(crate) async fn query_json_on(
    client: &deadpool_postgres::Object,
    statement: &Statement,
    variables: &Map<String, Value>,
) -> Result<String, ExecuteError> {
    let rows = query(client, statement, variables).await?;
    let json: Option<RawJson> = match rows.first() {
        Some(row) => row.try_get(0)?,
        None => None,
    };
    Ok(json
        .map(|j| crate::compact::compact_json(&j.0))
        .unwrap_or_else(|| "null".to_owned()))
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
