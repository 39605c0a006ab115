//! Write transactions: one pooled connection, `BEGIN` … `COMMIT`, for all the
//! statements of one mutation operation. Nothing commits unless every step worked.

use crate::error::{DbErrorKind, ExecuteError};
use crate::Database;
use grafton_sql::Statement;
use serde_json::{Map, Value};
use tracing::Instrument;

/// An open transaction. Dropped without [`commit`](Tx::commit) (an error, a
/// cancelled request, a panic) it rolls back before the connection is reused.
pub struct Tx {
    pub(crate) conn: Option<Conn>,
    /// How long each statement may run (SQLite interrupts it past that; PostgreSQL
    /// transactions carry it as `statement_timeout`).
    pub(crate) timeout: std::time::Duration,
    /// False for [`Database::autocommit`]: each statement commits by itself.
    pub(crate) open: bool,
    /// Close a PostgreSQL connection once the transaction ends rather than pool
    /// it: its session may hold settings its SQL made (`SET ROLE`, `search_path`).
    pub(crate) close: bool,
}

pub(crate) enum Conn {
    /// Boxed: a pooled PostgreSQL connection is much larger than SQLite's handle.
    Postgres(Box<crate::pg_pool::Object>),
    Sqlite {
        conn: crate::sqlite::PooledConnection,
        /// Held for the transaction: one writer at a time, queued in Grafton rather
        /// than spinning in SQLite's busy handler.
        _writer: tokio::sync::OwnedMutexGuard<()>,
    },
}

pub(crate) fn gone() -> ExecuteError {
    ExecuteError::Database {
        kind: DbErrorKind::Other,
        message: "the transaction has already ended".into(),
    }
}

impl Database {
    /// Runs `statement` (no variables) on its own, committed by itself, for at
    /// most `timeout`; its rows (as [`Tx::rows`] gives them).
    pub async fn rows_alone(
        &self,
        statement: &Statement,
        timeout: std::time::Duration,
    ) -> Result<Vec<Vec<Value>>, ExecuteError> {
        let mut tx = self.autocommit(timeout).await?;
        let rows = tx.rows(statement, &Map::new()).await?;
        tx.commit().await?;
        Ok(rows)
    }

    /// A connection for one write statement that commits by itself (no `BEGIN`): a
    /// single statement is atomic on its own. SQLite's writer lock is still taken.
    /// The statement runs for at most `timeout`: SQLite interrupts it, PostgreSQL's
    /// is cancelled (the session's own statement timeout is the server-wide one).
    pub async fn autocommit(&self, timeout: std::time::Duration) -> Result<Tx, ExecuteError> {
        let conn = match self {
            Database::Postgres(db) => Conn::Postgres(Box::new(db.primary.client().await?)),
            Database::Sqlite(db) => {
                let (conn, writer) = db.writer(timeout).await?;
                Conn::Sqlite {
                    conn,
                    _writer: writer,
                }
            }
        };
        Ok(Tx {
            conn: Some(conn),
            timeout,
            open: false,
            close: false,
        })
    }

    /// Starts a write transaction whose statements may each run for `timeout`.
    pub async fn begin(&self, timeout: std::time::Duration) -> Result<Tx, ExecuteError> {
        let conn = match self {
            Database::Postgres(db) => {
                let client = db.primary.client().await?;
                // LOCAL: the setting ends with the transaction, so the pooled session
                // keeps its own.
                let ms = timeout.as_millis().max(1);
                client
                    .batch_execute(&format!("BEGIN; SET LOCAL statement_timeout = {ms}"))
                    .await?;
                Conn::Postgres(Box::new(client))
            }
            Database::Sqlite(db) => {
                let (conn, writer) = db.writer(timeout).await?;
                // IMMEDIATE takes the write lock now, so no later statement can fail
                // to upgrade a read lock half-way through the mutation.
                crate::sqlite::interact(&conn, |c| c.execute_batch("BEGIN IMMEDIATE")).await?;
                Conn::Sqlite {
                    conn,
                    _writer: writer,
                }
            }
        };
        Ok(Tx {
            conn: Some(conn),
            timeout,
            open: true,
            close: false,
        })
    }
}

impl Tx {
    /// Runs a statement and returns its rows. Postgres values come back as text
    /// (statements cast what they return); SQLite values as their JSON equivalents.
    pub async fn rows(
        &mut self,
        statement: &Statement,
        variables: &Map<String, Value>,
    ) -> Result<Vec<Vec<Value>>, ExecuteError> {
        let span = crate::trace::span(self.dialect(), "statement", Some(&statement.sql));
        self.rows_untraced(statement, variables)
            .instrument(span)
            .await
    }

    async fn rows_untraced(
        &mut self,
        statement: &Statement,
        variables: &Map<String, Value>,
    ) -> Result<Vec<Vec<Value>>, ExecuteError> {
        let (open, timeout) = (self.open, self.timeout);
        match self.conn.as_mut().ok_or_else(gone)? {
            Conn::Postgres(client) => {
                let run = crate::postgres::query(client, statement, variables);
                let (rows, settled) = bounded(client, open, timeout, run).await;
                self.discard_unless(settled);
                let rows = rows?;
                let mut out = Vec::with_capacity(rows.len());
                for row in rows {
                    let mut values = Vec::with_capacity(row.len());
                    for i in 0..row.len() {
                        let v: Option<String> = row.try_get(i)?;
                        values.push(v.map(Value::String).unwrap_or(Value::Null));
                    }
                    out.push(values);
                }
                Ok(out)
            }
            Conn::Sqlite { conn, .. } => {
                let values = crate::sqlite::bind_values(statement, variables);
                let sql = statement.sql.clone();
                let work = crate::sqlite::interact(conn, move |c| {
                    let mut stmt = c.prepare_cached(&sql)?;
                    let width = stmt.column_count();
                    let mut rows = stmt.query(rusqlite::params_from_iter(values.iter()))?;
                    let mut out = Vec::new();
                    while let Some(row) = rows.next()? {
                        let mut values = Vec::with_capacity(width);
                        for i in 0..width {
                            values.push(sqlite_json(row.get_ref(i)?));
                        }
                        out.push(values);
                    }
                    Ok(out)
                });
                crate::sqlite::within(conn, self.timeout, work).await
            }
        }
    }

    /// Runs a statement whose one row and column is JSON; returns that JSON's text.
    pub async fn json(
        &mut self,
        statement: &Statement,
        variables: &Map<String, Value>,
    ) -> Result<String, ExecuteError> {
        let span = crate::trace::span(self.dialect(), "statement", Some(&statement.sql));
        self.json_untraced(statement, variables)
            .instrument(span)
            .await
    }

    async fn json_untraced(
        &mut self,
        statement: &Statement,
        variables: &Map<String, Value>,
    ) -> Result<String, ExecuteError> {
        let (open, timeout) = (self.open, self.timeout);
        match self.conn.as_mut().ok_or_else(gone)? {
            Conn::Postgres(client) => {
                let run = crate::postgres::query_json_on(client, statement, variables, u64::MAX);
                let (json, settled) = bounded(client, open, timeout, run).await;
                self.discard_unless(settled);
                json
            }
            Conn::Sqlite { conn, .. } => {
                let work = crate::sqlite::query_json_on(conn, statement, variables, u64::MAX);
                crate::sqlite::within(conn, self.timeout, work).await
            }
        }
    }

    /// Runs SQL text with no parameters and no result (one or more statements: DDL,
    /// `NOTIFY`), under the transaction's statement timeout.
    pub async fn batch(&mut self, sql: &str) -> Result<(), ExecuteError> {
        let (open, timeout) = (self.open, self.timeout);
        match self.conn.as_mut().ok_or_else(gone)? {
            Conn::Postgres(client) => {
                let run = async { client.batch_execute(sql).await.map_err(Into::into) };
                let (done, settled) = bounded(client, open, timeout, run).await;
                self.discard_unless(settled);
                done
            }
            Conn::Sqlite { conn, .. } => {
                let sql = sql.to_owned();
                let work = crate::sqlite::interact(conn, move |c| c.execute_batch(&sql));
                crate::sqlite::within(conn, self.timeout, work).await
            }
        }
    }

    /// The SQL dialect of the connection (for spans).
    fn dialect(&self) -> grafton_sql::Dialect {
        match self.conn {
            Some(Conn::Sqlite { .. }) => grafton_sql::Dialect::Sqlite,
            _ => grafton_sql::Dialect::Postgres,
        }
    }

    /// Closes a PostgreSQL connection whose state is unknown (a cancel that did not
    /// settle) instead of letting it go back to the pool; the transaction is over.
    pub(crate) fn discard_unless(&mut self, settled: bool) {
        if settled {
            return;
        }
        if let Some(Conn::Postgres(client)) = self.conn.take() {
            let _ = crate::pg_pool::Object::take(*client);
        }
    }

    /// Commits. On error the transaction is rolled back (by the database).
    pub async fn commit(mut self) -> Result<(), ExecuteError> {
        let conn = self.conn.take().ok_or_else(gone)?;
        if !self.open {
            return Ok(());
        }
        match conn {
            Conn::Postgres(client) => {
                let result = client.batch_execute("COMMIT").await.map_err(Into::into);
                if self.close {
                    let _ = crate::pg_pool::Object::take(*client);
                }
                result
            }
            Conn::Sqlite { conn, _writer } => {
                let result = crate::sqlite::interact(&conn, |c| c.execute_batch("COMMIT")).await;
                if result.is_err() {
                    // A failed COMMIT can leave the transaction open; end it here.
                    let _ = crate::sqlite::interact(&conn, |c| c.execute_batch("ROLLBACK")).await;
                }
                result
            }
        }
    }

    /// Rolls back and returns the connection to the pool.
    pub async fn rollback(mut self) {
        if let (Some(conn), true) = (self.conn.take(), self.open) {
            rollback(conn, self.close).await;
        }
    }
}

/// Awaits a PostgreSQL statement. In a transaction its `statement_timeout` bounds
/// it; on its own it is cancelled past `timeout` ([`crate::postgres::bounded`]).
pub(crate) async fn bounded<T>(
    client: &crate::pg_pool::Object,
    open: bool,
    timeout: std::time::Duration,
    run: impl std::future::Future<Output = Result<T, ExecuteError>>,
) -> (Result<T, ExecuteError>, bool) {
    if open {
        (run.await, true)
    } else {
        crate::postgres::bounded(client, timeout, run).await
    }
}

async fn rollback(conn: Conn, close: bool) {
    match conn {
        Conn::Postgres(client) => {
            // A connection whose state is unknown must not serve another request.
            if client.batch_execute("ROLLBACK").await.is_err() || close {
                let _ = crate::pg_pool::Object::take(*client);
            }
        }
        Conn::Sqlite { conn, _writer } => {
            let _ = crate::sqlite::interact(&conn, |c| {
                if c.is_autocommit() {
                    Ok(())
                } else {
                    c.execute_batch("ROLLBACK")
                }
            })
            .await;
        }
    }
}

impl Drop for Tx {
    /// Dropped holding its connection: the request went away mid-mutation (the client
    /// hung up, or an error unwound). PostgreSQL's statement is cancelled rather than
    /// left to its statement_timeout (a cancel that finds the session idle is
    /// ignored; one that hits the ROLLBACK fails it, and the connection is closed),
    /// then an open transaction is rolled back; with none open, the connection goes
    /// back once the cancelled statement has ended. SQLite's statement was interrupted by
    /// its deadline guard; its transaction is rolled back here.
    fn drop(&mut self) {
        let Some(conn) = self.conn.take() else {
            return;
        };
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (open, close) = (self.open, self.close);
        match conn {
            Conn::Postgres(client) => {
                handle.spawn(async move {
                    if open {
                        let _ = client
                            .cancel_token()
                            .cancel_query(tokio_postgres::NoTls)
                            .await;
                        rollback(Conn::Postgres(client), close).await;
                    } else {
                        // No transaction to end: wait for the cancelled statement, so
                        // the connection goes back to the pool idle.
                        crate::postgres::settle(*client).await;
                    }
                });
            }
            sqlite if open => {
                handle.spawn(rollback(sqlite, false));
            }
            Conn::Sqlite { .. } => {}
        }
    }
}

fn sqlite_json(v: rusqlite::types::ValueRef<'_>) -> Value {
    use rusqlite::types::ValueRef;
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::from(i),
        ValueRef::Real(f) => serde_json::Number::from_f64(f)
            .map(Value::Number)
            .unwrap_or(Value::Null),
        ValueRef::Text(t) => Value::String(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::String(String::from_utf8_lossy(b).into_owned()),
    }
}
