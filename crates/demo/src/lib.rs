//! The deterministic meetup dataset of the seed benchmark (Phrag's).
//!
//! Seven tables — `members`, `groups`, `venues`, `meetups` and the link
//! tables `meetups_members`, `groups_members`, `member_follow` — with `rows`
//! rows in each main table and about `2 × rows` in each link table. The same
//! `rows` always gives the same data, on either backend: `grafton demo`
//! serves it from SQLite ([`create_sqlite`]) and the benchmark suite loads it
//! into PostgreSQL ([`write_postgres_copy`], [`postgres_sql`]). Both consume
//! the row iterators of [`Table::rows`], which is what makes them identical.

#![warn(missing_docs)]

mod data;
mod ddl;
mod postgres;
mod progress;
mod sqlite;

use std::io;
use std::path::{Path, PathBuf};

pub use data::{Column, ColumnType, Table, Value};

/// What to generate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoOptions {
    /// Rows in each main table (`members`, `groups`, `venues`, `meetups`);
    /// ids are `1..=rows`.
    pub rows: u64,
    /// Show a progress bar on stderr while loading.
    pub progress: bool,
}

impl Default for DemoOptions {
    /// 10,000 rows per table, no progress bar: big enough to feel real in
    /// `grafton demo`, small enough to build in well under a second.
    fn default() -> Self {
        DemoOptions {
            rows: 10_000,
            progress: false,
        }
    }
}

/// What [`create_sqlite`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoSummary {
    /// `false` when the database already held the demo schema and was left
    /// untouched.
    pub created: bool,
    /// Rows in each table, in load order (counted from the file when it
    /// already existed).
    pub rows_per_table: Vec<(String, u64)>,
}

/// Why a demo database could not be built.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// SQLite refused an operation.
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// Writing the PostgreSQL script failed.
    #[error("writing the PostgreSQL script: {0}")]
    Io(#[from] io::Error),
    /// The file has some of the demo's table names but not the demo schema.
    #[error(
        "{} already has table(s) {} but is not a complete demo database; \
         use another file or remove them",
        path.display(),
        tables.join(", ")
    )]
    Conflict {
        /// The database file.
        path: PathBuf,
        /// The demo table names already present.
        tables: Vec<String>,
    },
}

/// Create the demo database in the SQLite file at `path` (created if
/// missing), or leave it untouched and return `created: false` if it
/// already has all seven demo tables.
///
/// The schema and data go in in one transaction with prepared inserts; the
/// file is then switched to WAL and analysed.
pub fn create_sqlite(path: &Path, opts: &DemoOptions) -> Result<DemoSummary, DemoError> {
    sqlite::create(path, opts)
}

/// Write a `psql` script (DDL, `COPY … FROM STDIN` data, foreign keys,
/// indexes, `ANALYZE`) that builds the same dataset in PostgreSQL; load it
/// with `psql -f FILE` into a database without these tables. Streams, so it
/// suits any size.
pub fn write_postgres_copy(w: &mut impl io::Write, opts: &DemoOptions) -> Result<(), DemoError> {
    postgres::write(w, opts)
}

/// The script of [`write_postgres_copy`] as one string (about 350 bytes per
/// row of a main table: prefer the writer for large datasets).
pub fn postgres_sql(opts: &DemoOptions) -> String {
    postgres::to_string(opts)
}
