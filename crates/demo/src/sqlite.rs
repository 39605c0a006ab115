//! Loading the dataset into a SQLite file.

use std::path::Path;

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{params_from_iter, Connection, OptionalExtension, ToSql};

use crate::data::{Table, Value};
use crate::ddl::{self, Backend};
use crate::{progress, DemoError, DemoOptions, DemoSummary};

impl ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Value::Int(i) => ToSqlOutput::Borrowed(ValueRef::Integer(*i)),
            Value::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
            Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
        })
    }
}

/// Create the demo database at `path`, or leave an existing one alone.
///
/// See [`crate::create_sqlite`] for the contract.
pub(crate) fn create(path: &Path, opts: &DemoOptions) -> Result<DemoSummary, DemoError> {
    let mut conn = Connection::open(path)?;

    let present = present_tables(&conn)?;
    if present.len() == Table::ALL.len() {
        // Already a demo database (perhaps of another size, since the load
        // is one transaction it is never half-filled): report what is there
        // rather than what `opts` asked for.
        let mut counts = Vec::with_capacity(Table::ALL.len());
        for table in Table::ALL {
            let sql = format!("SELECT count(*) FROM {}", ddl::quote(table.name()));
            let n: i64 = conn.query_row(&sql, [], |r| r.get(0))?;
            counts.push((table.name().to_owned(), u64::try_from(n).unwrap_or(0)));
        }
        return Ok(DemoSummary {
            created: false,
            rows_per_table: counts,
        });
    }
    if !present.is_empty() {
        // Never write into someone else's tables of the same names.
        return Err(DemoError::Conflict {
            path: path.to_path_buf(),
            tables: present,
        });
    }

    // A bigger page cache for this connection only: the load touches every
    // page of every table and index once, and 2 MB (the default) thrashes.
    conn.pragma_update(None, "cache_size", -65_536)?;

    let rows = opts.rows;
    let total: u64 = Table::ALL.iter().map(|t| t.row_count(rows)).sum();
    let bar = progress::bar(total, opts.progress);

    // One transaction: one fsync for the whole load instead of one per row,
    // and a failed load leaves no half-filled database behind.
    let tx = conn.transaction()?;
    for table in Table::ALL {
        tx.execute_batch(&ddl::create_table(table, Backend::Sqlite))?;
    }
    for table in Table::ALL {
        bar.set_message(table.name());
        let mut stmt = tx.prepare(&ddl::insert(table))?;
        let mut pending = 0;
        for row in table.rows(rows) {
            stmt.execute(params_from_iter(row.iter()))?;
            pending += 1;
            if pending == progress::STEP {
                bar.inc(pending);
                pending = 0;
            }
        }
        bar.inc(pending);
    }
    // Indexes after the data: one sort per index instead of a B-tree
    // insert per row.
    bar.set_message("indexes");
    for table in Table::ALL {
        for sql in ddl::create_indexes(table) {
            tx.execute_batch(&sql)?;
        }
    }
    tx.commit()?;

    // WAL only now: during the load the rollback journal of a new, empty
    // file stays tiny, whereas WAL would first copy every page into the log.
    // The server wants WAL so that readers never block on a writer.
    let _mode: String = conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))?;
    bar.set_message("analyze");
    conn.execute_batch("ANALYZE")?;
    bar.finish_and_clear();

    Ok(DemoSummary {
        created: true,
        rows_per_table: Table::ALL
            .iter()
            .map(|t| (t.name().to_owned(), t.row_count(rows)))
            .collect(),
    })
}

/// The demo tables that already exist in the file, in load order.
fn present_tables(conn: &Connection) -> Result<Vec<String>, DemoError> {
    let mut stmt =
        conn.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1")?;
    let mut present = Vec::new();
    for table in Table::ALL {
        if stmt
            .query_row([table.name()], |_| Ok(()))
            .optional()?
            .is_some()
        {
            present.push(table.name().to_owned());
        }
    }
    Ok(present)
}
