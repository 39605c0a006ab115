//! The catalog: what Grafton knows about a database, independent of the backend.

use serde::{Deserialize, Serialize};

/// Which database a catalog was read from; decides SQL dialect and type mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Backend {
    /// PostgreSQL, via tokio-postgres.
    Postgres,
    /// SQLite, via rusqlite.
    Sqlite,
}

/// Every table and view Grafton exposes, in a stable order (schema, name).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Catalog {
    /// Tables and views.
    pub tables: Vec<Table>,
    /// Postgres enum types, referenced by `ScalarKind::Enum`.
    pub enums: Vec<EnumType>,
    /// PostgreSQL functions that return rows of a table (candidates for tracking),
    /// by (schema, name).
    pub functions: Vec<Function>,
    /// The schema of each extension type a column uses (`geometry` → `public`):
    /// PostGIS's and ltree's functions and types are called by that schema, so a
    /// `search_path` without it changes nothing.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub type_schemas: std::collections::BTreeMap<String, String>,
    /// Tables and views an extension made (PostGIS's `spatial_ref_sys`), as
    /// `(schema, name)`: served only when metadata tracks them.
    #[serde(default, skip_serializing_if = "std::collections::BTreeSet::is_empty")]
    pub extension_tables: std::collections::BTreeSet<(String, String)>,
}

/// A PostgreSQL function returning a table's rows, or taking one (a computed
/// field's): what tracking it needs to know.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Function {
    /// Schema name.
    pub schema: String,
    /// Function name.
    pub name: String,
    /// Its input arguments, in order.
    pub args: Vec<FunctionArg>,
    /// How many trailing arguments have defaults.
    pub defaults: usize,
    /// What it returns: a table's rows, or a scalar.
    pub returns: Returns,
    /// `RETURNS SETOF t` (a list) rather than `RETURNS t` (one row).
    pub returns_set: bool,
    /// `VOLATILE` (it may write): a mutation unless tracked as a query.
    pub volatile: bool,
    /// Its comment (the root field's description).
    pub comment: Option<String>,
    /// Why it cannot be tracked (overloaded, variadic, OUT arguments), if so.
    pub unsupported: Option<String>,
}

/// What a [`Function`] returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Returns {
    /// Rows (or, unless `returns_set`, one row) of this table (schema, name).
    Table(String, String),
    /// A value of this type: its name and, when Grafton maps it, its kind.
    Scalar(String, Option<ScalarKind>),
}

impl Returns {
    /// The table whose rows it returns.
    pub fn table(&self) -> Option<(&str, &str)> {
        match self {
            Returns::Table(s, t) => Some((s, t)),
            Returns::Scalar(..) => None,
        }
    }
}

/// One input argument of a [`Function`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FunctionArg {
    /// Its name; unnamed arguments are `arg_1`, `arg_2`… as in Hasura.
    pub name: String,
    /// Whether the function names it (only named arguments can be passed by name).
    pub named: bool,
    /// A table's row type: that table (schema, name).
    pub row_of: Option<(String, String)>,
    /// The database type's name (`text`, `int4`…).
    pub db_type: String,
    /// Its GraphQL-facing kind; `None` for a type Grafton cannot bind.
    pub scalar: Option<ScalarKind>,
    /// For an array of a built-in type (`uuid[]`), the element type's name
    /// (`uuid`): passed as a PostgreSQL array literal (`"{a,b}"`) in Hasura's
    /// scalar named after the array type (`_uuid`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array_of: Option<String>,
}

/// A table or a view.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Table {
    /// Schema name (`public`; SQLite uses `main`).
    pub schema: String,
    /// Table name as in the database.
    pub name: String,
    /// Table or view.
    pub kind: TableKind,
    /// Columns in ordinal order.
    pub columns: Vec<Column>,
    /// Primary key column names in key order; empty when there is none.
    pub primary_key: Vec<String>,
    /// Name of the primary key constraint, when the database names it.
    pub primary_key_name: Option<String>,
    /// Unique constraints (and unique indexes) other than the primary key.
    pub unique_constraints: Vec<UniqueConstraint>,
    /// Foreign keys from this table to others (composite keys included).
    pub foreign_keys: Vec<ForeignKey>,
    /// Table comment, used as the GraphQL description.
    pub comment: Option<String>,
    /// Which writes the relation takes.
    pub writes: Writes,
}

/// Which writes a relation takes: a base table all three; a view those PostgreSQL
/// reports it auto-updatable for, or SQLite's `INSTEAD OF` triggers provide.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Writes {
    /// `INSERT`.
    pub insert: bool,
    /// `UPDATE`.
    pub update: bool,
    /// `DELETE`.
    pub delete: bool,
}

impl Writes {
    /// Every write (base tables).
    pub const ALL: Writes = Writes {
        insert: true,
        update: true,
        delete: true,
    };

    /// Whether any write is possible.
    pub fn any(self) -> bool {
        self.insert || self.update || self.delete
    }
}

/// Whether a relation is a base table or a view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TableKind {
    /// A base table.
    Table,
    /// A view (or materialized view).
    View,
}

/// A column and its type.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Column {
    /// Column name as in the database.
    pub name: String,
    /// The database's own type name (`int4`, `timestamptz`, `TEXT`…).
    pub db_type: String,
    /// How the column maps to GraphQL.
    pub scalar: ScalarKind,
    /// True when the column may hold NULL.
    pub nullable: bool,
    /// True when the column has a default (or is generated / autoincrement).
    pub has_default: bool,
    /// Column comment, used as the GraphQL description.
    pub comment: Option<String>,
}

/// A unique constraint or unique index.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct UniqueConstraint {
    /// Constraint (or index) name.
    pub name: String,
    /// Columns in key order.
    pub columns: Vec<String>,
}

/// A foreign key: `columns` of this table reference `ref_columns` of `ref_table`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ForeignKey {
    /// Constraint name (SQLite: synthesized as `<table>_<cols>_fkey`).
    pub name: String,
    /// Referencing columns, in order.
    pub columns: Vec<String>,
    /// Referenced table's schema.
    pub ref_schema: String,
    /// Referenced table's name.
    pub ref_table: String,
    /// Referenced columns, paired with `columns` by position.
    pub ref_columns: Vec<String>,
    /// The database checks it on every row (a validated PostgreSQL constraint): a row
    /// whose referencing columns are all non-null has its referenced row. False on
    /// SQLite, where checking is a per-connection pragma and old rows may dangle.
    pub enforced: bool,
}

/// A Postgres enum type.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EnumType {
    /// Schema name of the type.
    pub schema: String,
    /// Type name.
    pub name: String,
    /// Labels in sort order.
    pub values: Vec<String>,
    /// Each label's description (an enum table's comment column).
    pub descriptions: Vec<Option<String>>,
    /// An enum table's values (Hasura's `is_enum`): the columns are `text` in the
    /// database, so values bind as text, not as this type.
    pub from_table: Option<EnumTable>,
}

/// The table an enum's values are the keys of.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnumTable {
    /// Its schema.
    pub schema: String,
    /// Its name.
    pub table: String,
    /// Its key column, whose values are the enum's: a value written to it must be a
    /// GraphQL enum value.
    pub key: String,
}

pub use crate::scalar_kind::ScalarKind;

impl Column {
    /// A column of `scalar`'s PostgreSQL type, without default or comment.
    pub fn new(name: &str, scalar: ScalarKind, nullable: bool) -> Self {
        Self {
            name: name.to_owned(),
            db_type: scalar.postgres_type().unwrap_or("text").to_owned(),
            scalar,
            nullable,
            has_default: false,
            comment: None,
        }
    }

    /// A PostgreSQL column of a type Grafton does not map (tsvector, arrays…),
    /// exposed as `String`, so read and compared as text. SQLite's declared types
    /// are free text and its values what they are: none is.
    pub fn unmapped(&self, backend: Backend) -> bool {
        backend == Backend::Postgres
            && self.scalar == ScalarKind::Text
            && !matches!(
                self.db_type.as_str(),
                "text" | "varchar" | "bpchar" | "name" | "citext"
            )
    }
}

impl ForeignKey {
    /// `columns` of a table referencing `ref_columns` of `ref_schema.ref_table`,
    /// named as PostgreSQL would (`<columns>_fkey`).
    pub fn new(columns: &[&str], ref_schema: &str, ref_table: &str, ref_columns: &[&str]) -> Self {
        Self {
            name: format!("{}_fkey", columns.join("_")),
            columns: columns.iter().map(|c| (*c).to_owned()).collect(),
            ref_schema: ref_schema.to_owned(),
            ref_table: ref_table.to_owned(),
            ref_columns: ref_columns.iter().map(|c| (*c).to_owned()).collect(),
            enforced: false,
        }
    }
}

impl Catalog {
    /// The schema an extension's types and functions live in: PostGIS's is the
    /// one `geometry` (or `geography`) is in, ltree's the one `ltree` is in;
    /// `public` when no column or function showed it.
    pub fn extension_schema(&self, type_name: &str) -> String {
        (self.type_schemas.get(type_name))
            .or_else(|| match type_name {
                // PostGIS makes both in one schema, and raster beside them.
                "geometry" => {
                    (self.type_schemas.get("geography")).or_else(|| self.type_schemas.get("raster"))
                }
                _ => None,
            })
            .cloned()
            .unwrap_or_else(|| "public".to_owned())
    }

    /// Finds a table by schema and name.
    pub fn table(&self, schema: &str, name: &str) -> Option<&Table> {
        self.tables
            .iter()
            .find(|t| t.schema == schema && t.name == name)
    }

    /// Index of a table by schema and name.
    pub fn table_index(&self, schema: &str, name: &str) -> Option<usize> {
        self.tables
            .iter()
            .position(|t| t.schema == schema && t.name == name)
    }
}

impl Table {
    /// Finds a column by name.
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }
}
