//! Errors raised while reading a database's catalog.

/// Why introspection failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// A catalog query against PostgreSQL failed.
    #[error("postgres introspection failed: {0}")]
    Postgres(#[from] tokio_postgres::Error),
    /// A catalog query against SQLite failed.
    #[error("sqlite introspection failed: {0}")]
    Sqlite(#[from] rusqlite::Error),
}
