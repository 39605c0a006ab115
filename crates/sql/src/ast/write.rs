//! Write statements: `INSERT`, `UPDATE`, `DELETE`, what they return, and the rows
//! they wrote found again by identity.

use super::{Expr, SqlType};
use serde::Serialize;

/// A table as the target of a write.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TableRef {
    /// Schema, or `None` for SQLite's main database.
    pub schema: Option<String>,
    /// Table name.
    pub name: String,
    /// Alias used by column references in filters and `SET` values.
    pub alias: String,
    /// A view: SQLite resolves no alias of a view in `UPDATE` and `DELETE`, where
    /// it is named by itself (the alias's references rendered as its name).
    pub view: bool,
}

/// A write statement. Each returns the rows it wrote through `returning`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Write {
    /// `INSERT … SELECT` from a JSON array of rows.
    Insert(Insert),
    /// `UPDATE … SET … WHERE …`.
    Update(Update),
    /// `DELETE … WHERE …`.
    Delete(Delete),
}

/// `INSERT INTO table (columns) SELECT … FROM <rows param> [ON CONFLICT …] RETURNING …`.
///
/// The rows travel as one JSON array parameter, so a batch is one statement with one
/// parameter whatever its size. Postgres is sent objects keyed by column name
/// (`json_populate_recordset` converts each to the column's type); SQLite arrays in
/// `columns` order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Insert {
    /// Target table.
    pub table: TableRef,
    /// Columns written; empty inserts one row of defaults (`DEFAULT VALUES`).
    pub columns: Vec<InsertColumn>,
    /// The rows, each its values in `columns` order.
    pub rows: Vec<Vec<serde_json::Value>>,
    /// Upsert behaviour.
    pub on_conflict: Option<Conflict>,
    /// What it returns of each row.
    pub returning: Vec<Returning>,
}

/// A column written by an insert.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InsertColumn {
    /// Column name.
    pub name: String,
    /// The value is JSON to store as JSON text (SQLite reads it with `->`, not `->>`).
    pub json: bool,
    /// A PostGIS column (its [`SqlType::Spatial`](crate::SqlType::Spatial)): the
    /// GeoJSON value is read by `ST_GeomFromGeoJSON`, not by the row's record.
    pub spatial: Option<crate::SqlType>,
}

/// `ON CONFLICT (columns) DO UPDATE SET … WHERE …` or `DO NOTHING`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Conflict {
    /// The unique key's columns (works for constraints and unique indexes alike).
    pub columns: Vec<String>,
    /// Columns set from the proposed row; empty means `DO NOTHING`.
    pub update: Vec<String>,
    /// Further assignments of the update branch (a role's update presets).
    pub set: Vec<(String, Expr)>,
    /// Only update existing rows matching this.
    pub filter: Option<Expr>,
}

/// `UPDATE table AS alias SET … WHERE … RETURNING …`. On PostgreSQL the
/// [`Expr::Written`] values of `set` travel in one JSON object joined as `"_r"`
/// through `json_populate_record`, so each converts to its column's type.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Update {
    /// Target table.
    pub table: TableRef,
    /// `column = value` assignments.
    pub set: Vec<(String, Expr)>,
    /// Rows to update.
    pub filter: Option<Expr>,
    /// What it returns of each row.
    pub returning: Vec<Returning>,
}

/// `DELETE FROM table AS alias WHERE … RETURNING …`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Delete {
    /// Target table.
    pub table: TableRef,
    /// Rows to delete.
    pub filter: Option<Expr>,
    /// What it returns of each row.
    pub returning: Vec<Returning>,
}

/// One value a write returns of each row it wrote, read as [`Expr::ReadText`].
/// References to the table's alias are the written row (SQLite's `RETURNING`
/// takes no qualifier: they are rendered bare there).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Returning {
    /// A column of the written row.
    Column(String),
    /// An expression over the written row (its JSON object).
    Expr(Expr),
    /// The row's physical identity: `ctid` and `tableoid` (PostgreSQL), `rowid`
    /// (SQLite).
    Identity,
    /// Whether an upsert inserted the row rather than updated it (PostgreSQL's
    /// `xmax = 0`, as Hasura tells them apart); SQLite has no such mark and
    /// returns nothing for it.
    Inserted,
}

/// Rows a write returned, to find again: each row's identity as the write
/// returned it ([`Returning::Identity`], or a view's key values). Rendering binds
/// them as lists: PostgreSQL `(ctid, tableoid)` pairs as two lists, or one list
/// per key column; SQLite rowids as one list, or one JSON array of key arrays.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Identities {
    /// Each row's identity values, in the order the rows are read.
    pub rows: Vec<Vec<serde_json::Value>>,
    /// The key columns and their types, for a view (which has no physical
    /// identity); empty for a table.
    pub key: Vec<(String, SqlType)>,
}
