//! SQL text run as it is written (Hasura's `run_sql`, how migrations are applied):
//! one or more statements in the transaction the caller opened, the last
//! statement's rows returned as text, bounded in bytes as well as in time.

use crate::error::ExecuteError;
use crate::tx::{gone, Conn, Tx};
use futures_util::{pin_mut, StreamExt};
use rusqlite::fallible_iterator::FallibleIterator;
use tokio_postgres::SimpleQueryMessage;

/// The rows of the last statement that returned rows: its column names, then each
/// row's cells as text (`None`: NULL).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlRows {
    /// Column names.
    pub columns: Vec<String>,
    /// The rows, each cell as text.
    pub rows: Vec<Vec<Option<String>>>,
}

/// The rows read past `max_bytes` of cells.
fn too_large(bytes: usize) -> ExecuteError {
    ExecuteError::TooLarge(u64::try_from(bytes).unwrap_or(u64::MAX))
}

impl Tx {
    /// Runs `sql` (any number of statements, no parameters); the rows of the last
    /// statement if it returned rows (`None`: it was a command). `read_only` holds
    /// for all of it, even past a `COMMIT` the SQL itself runs. The SQL may change
    /// its session (`SET ROLE`): a PostgreSQL connection is closed when the
    /// transaction ends, never pooled again; the time limit is Grafton's own cancel,
    /// which a `COMMIT` in the SQL cannot end.
    pub async fn run_sql(
        &mut self,
        sql: &str,
        max_bytes: usize,
        read_only: bool,
    ) -> Result<Option<SqlRows>, ExecuteError> {
        let timeout = self.timeout;
        self.close = true;
        match self.conn.as_mut().ok_or_else(gone)? {
            Conn::Postgres(client) => {
                if read_only {
                    let read_only = "SET TRANSACTION READ ONLY; \
                        SET SESSION default_transaction_read_only = on";
                    client.batch_execute(read_only).await?;
                }
                let run = postgres(client, sql, max_bytes);
                let (rows, settled) = crate::postgres::bounded(client, timeout, run).await;
                self.discard_unless(settled);
                rows
            }
            Conn::Sqlite { conn, .. } => {
                let sql = sql.to_owned();
                let work = crate::sqlite::interact(conn, move |c| {
                    if !read_only {
                        return sqlite(c, &sql, max_bytes);
                    }
                    // On for the whole batch (a COMMIT in it included), off after.
                    c.pragma_update(None, "query_only", true)?;
                    let rows = sqlite(c, &sql, max_bytes);
                    let reset = c.pragma_update(None, "query_only", false);
                    let rows = rows?;
                    reset.map(|()| rows)
                });
                match crate::sqlite::within(conn, self.timeout, work).await {
                    Err(ExecuteError::Database { message, .. }) if message.contains(TOO_LARGE) => {
                        Err(too_large(max_bytes))
                    }
                    other => other,
                }
            }
        }
    }
}

async fn postgres(
    client: &crate::pg_pool::Object,
    sql: &str,
    max_bytes: usize,
) -> Result<Option<SqlRows>, ExecuteError> {
    let stream = client.simple_query_raw(sql).await?;
    pin_mut!(stream);
    let (mut current, mut last): (Option<SqlRows>, Option<SqlRows>) = (None, None);
    let mut bytes = 0usize;
    while let Some(message) = stream.next().await {
        match message? {
            SimpleQueryMessage::RowDescription(columns) => {
                let columns = columns.iter().map(|c| c.name().to_owned()).collect();
                current = Some(SqlRows {
                    columns,
                    rows: Vec::new(),
                });
            }
            SimpleQueryMessage::Row(row) => {
                let cells: Vec<Option<String>> = (0..row.len())
                    .map(|i| row.get(i).map(str::to_owned))
                    .collect();
                bytes += cells.iter().flatten().map(String::len).sum::<usize>() + cells.len();
                if bytes > max_bytes {
                    return Err(too_large(bytes));
                }
                if let Some(current) = current.as_mut() {
                    current.rows.push(cells);
                }
            }
            // Each statement ends here: the last one decides what is answered.
            SimpleQueryMessage::CommandComplete(_) => last = current.take(),
            _ => {}
        }
    }
    Ok(last)
}

/// The marker of SQLite's rows past the byte cap (rusqlite's errors carry text).
const TOO_LARGE: &str = "grafton: run_sql rows past the byte cap";

fn sqlite(
    conn: &mut rusqlite::Connection,
    sql: &str,
    max_bytes: usize,
) -> rusqlite::Result<Option<SqlRows>> {
    let mut batch = rusqlite::Batch::new(conn, sql);
    let mut last = None;
    let mut bytes = 0usize;
    while let Some(mut statement) = batch.next()? {
        let width = statement.column_count();
        if width == 0 {
            statement.raw_execute()?;
            last = None;
            continue;
        }
        let columns = statement
            .column_names()
            .into_iter()
            .map(str::to_owned)
            .collect();
        let mut out = SqlRows {
            columns,
            rows: Vec::new(),
        };
        let mut rows = statement.raw_query();
        while let Some(row) = rows.next()? {
            let mut cells = Vec::with_capacity(width);
            for i in 0..width {
                use rusqlite::types::ValueRef;
                cells.push(match row.get_ref(i)? {
                    ValueRef::Null => None,
                    ValueRef::Integer(n) => Some(n.to_string()),
                    ValueRef::Real(f) => Some(f.to_string()),
                    ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into_owned()),
                    ValueRef::Blob(b) => Some(format!("\\x{}", hex(b))),
                });
            }
            bytes += cells.iter().flatten().map(String::len).sum::<usize>() + width;
            if bytes > max_bytes {
                return Err(rusqlite::Error::UserFunctionError(TOO_LARGE.into()));
            }
            out.rows.push(cells);
        }
        last = Some(out);
    }
    Ok(last)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
