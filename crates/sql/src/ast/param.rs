//! Bind parameters and the types they are bound as.

use serde::Serialize;

/// A bind parameter's origin: a request variable or a literal from the document.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum ParamValue {
    /// The value of a GraphQL variable, looked up at execution time.
    Variable(String),
    /// A value written in the document (or inlined from a variable).
    Literal(serde_json::Value),
}

/// The SQL type a parameter is bound as (a cast on PostgreSQL; affinity hints on SQLite).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub enum SqlType {
    /// A built-in type name such as `int4`, `text`, `timestamptz`.
    Builtin(&'static str),
    /// A user-defined type (Postgres enum), schema-qualified.
    Named {
        /// Type schema.
        schema: String,
        /// Type name.
        name: String,
    },
    /// A value stored into a column of this type: PostgreSQL binds it as the
    /// type; SQLite as text (JSON for `json`/`jsonb`), which the column's affinity
    /// converts. Rendering replaces it with the type bound.
    Stored(Box<SqlType>),
    /// A PostGIS value given as GeoJSON: bound as text and read by
    /// `"schema".ST_GeomFromGeoJSON` (and cast to geography), as Hasura reads it.
    Spatial {
        /// The schema PostGIS was created in.
        schema: String,
        /// `geography` rather than `geometry`.
        geography: bool,
    },
}

/// One step of a JSON path.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum JsonStep {
    /// An object's key.
    Key(String),
    /// An array's element; negative counts from the end.
    Index(i64),
}

impl std::fmt::Display for SqlType {
    /// The type's name: `int4`, `schema.name`; a stored value's type is its column's.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Builtin(name) => f.write_str(name),
            Self::Named { schema, name } => write!(f, "{schema}.{name}"),
            Self::Stored(inner) => inner.fmt(f),
            Self::Spatial { schema, geography } => {
                let ty = if *geography { "geography" } else { "geometry" };
                write!(f, "{schema}.{ty}")
            }
        }
    }
}

/// A bind parameter: its value source, its type, and whether it is a list (for `_in`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Param {
    /// Where the value comes from.
    pub value: ParamValue,
    /// The type to bind it as.
    pub ty: SqlType,
    /// True for a list of values (`= ANY($n)` / `IN (SELECT value FROM json_each(?n))`).
    pub list: bool,
}
