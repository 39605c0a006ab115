//! Grafton's database catalog: the backend-independent [`model`] of tables,
//! columns, keys and enums, and its introspection from PostgreSQL
//! ([`introspect_postgres`]) and SQLite ([`introspect_sqlite`]).

#![warn(missing_docs)]

pub mod error;
pub mod model;
mod postgres;
mod scalar_kind;
mod sqlite;

pub use error::CatalogError;
pub use model::*;
pub use postgres::introspect_postgres;
pub use sqlite::introspect_sqlite;

/// The result of introspection: the catalog, plus what could not be mapped exactly.
#[derive(Debug, Clone, Default)]
pub struct Introspected {
    /// Tables, views and enums found.
    pub catalog: Catalog,
    /// Human-readable notes for start-up logs, e.g.
    /// `column public.docs.body has type tsvector, exposed as String`.
    pub warnings: Vec<String>,
}

/// Sorts what introspection found into the catalog's stable order: tables by
/// (schema, name), their unique constraints and foreign keys by name.
fn normalize(catalog: &mut Catalog) {
    catalog
        .tables
        .sort_by(|a, b| (&a.schema, &a.name).cmp(&(&b.schema, &b.name)));
    for table in &mut catalog.tables {
        table.unique_constraints.sort_by(|a, b| a.name.cmp(&b.name));
        table.foreign_keys.sort_by(|a, b| a.name.cmp(&b.name));
    }
}
