//! The GraphQL-facing kinds of column types, and what each allows.

use serde::{Deserialize, Serialize};

/// The GraphQL-facing kind of a column type. Closed: anything else is `Text` with a
/// warning at start-up.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ScalarKind {
    /// 16/32-bit integers → `Int`.
    Int,
    /// 64-bit integers → `bigint`.
    BigInt,
    /// float4/float8/real → `Float`.
    Float,
    /// numeric/decimal → `numeric`.
    Numeric,
    /// Strings → `String`.
    Text,
    /// Booleans → `Boolean`.
    Boolean,
    /// uuid → `uuid`.
    Uuid,
    /// timestamptz → `timestamptz`.
    Timestamptz,
    /// timestamp → `timestamp`.
    Timestamp,
    /// date → `date`.
    Date,
    /// time → `time`.
    Time,
    /// timetz → `timetz`.
    Timetz,
    /// interval → `interval`.
    Interval,
    /// json → `json`.
    Json,
    /// jsonb → `jsonb`.
    Jsonb,
    /// bytea → `bytea`.
    Bytea,
    /// A Postgres enum: index into `Catalog::enums`.
    Enum(usize),
    /// PostGIS `geometry` → `geometry`, read and written as GeoJSON.
    Geometry,
    /// PostGIS `geography` → `geography`, read and written as GeoJSON.
    Geography,
    /// The `ltree` extension's label path → `ltree`.
    Ltree,
    /// PostGIS `raster` → `raster`, read and written as hex WKB text (its own
    /// text form), compared with `_eq` and `ST_Intersects` only.
    Raster,
    /// A one-dimensional array of a built-in type (PostgreSQL's `text[]`) → `[String!]`,
    /// as Hasura (2.29 and later) serves it.
    Array(Box<ScalarKind>),
}

impl ScalarKind {
    /// Whether values of this kind can be summed and averaged.
    pub fn is_numeric(&self) -> bool {
        matches!(self, Self::Int | Self::BigInt | Self::Float | Self::Numeric)
    }

    /// Whether `min`/`max` are defined for this kind.
    pub fn is_comparable(&self) -> bool {
        !matches!(
            self,
            Self::Json
                | Self::Boolean
                | Self::Bytea
                | Self::Array(_)
                | Self::Geometry
                | Self::Geography
                | Self::Raster
        )
    }

    /// The extension type this kind stands for (its schema is in
    /// [`Catalog::type_schemas`]).
    pub fn extension_type(&self) -> Option<&'static str> {
        match self {
            Self::Geometry => Some("geometry"),
            Self::Geography => Some("geography"),
            Self::Ltree => Some("ltree"),
            Self::Raster => Some("raster"),
            _ => None,
        }
    }

    /// A PostGIS type, read and written as GeoJSON.
    pub fn is_spatial(&self) -> bool {
        matches!(self, Self::Geometry | Self::Geography)
    }

    /// A PostGIS type, which has `=` but no `<>`: `_neq` is `NOT =`.
    pub fn lacks_neq(&self) -> bool {
        matches!(self, Self::Geometry | Self::Geography | Self::Raster)
    }

    /// The PostGIS type a `_cast` turns this one into (geometry ↔ geography).
    pub fn spatial_counterpart(&self) -> Option<ScalarKind> {
        match self {
            Self::Geometry => Some(Self::Geography),
            Self::Geography => Some(Self::Geometry),
            _ => None,
        }
    }

    /// Whether the text-only operators (`_like`, `_ilike`, …) apply.
    pub fn is_text(&self) -> bool {
        matches!(self, Self::Text)
    }

    /// The PostgreSQL built-in type this kind stands for (`None` for enums,
    /// which are user-defined types).
    pub fn postgres_type(&self) -> Option<&'static str> {
        Some(match self {
            Self::Int => "int4",
            Self::BigInt => "int8",
            Self::Float => "float8",
            Self::Numeric => "numeric",
            Self::Text => "text",
            Self::Boolean => "bool",
            Self::Uuid => "uuid",
            Self::Timestamptz => "timestamptz",
            Self::Timestamp => "timestamp",
            Self::Date => "date",
            Self::Time => "time",
            Self::Timetz => "timetz",
            Self::Interval => "interval",
            Self::Json => "json",
            Self::Jsonb => "jsonb",
            Self::Bytea => "bytea",
            Self::Enum(_)
            | Self::Array(_)
            | Self::Geometry
            | Self::Geography
            | Self::Ltree
            | Self::Raster => return None,
        })
    }

    /// An array kind's PostgreSQL type, as `pg_catalog` names it (`_text` for
    /// `text[]`): what its values are cast to.
    pub fn postgres_array_type(&self) -> Option<String> {
        match self {
            Self::Array(element) => element.postgres_type().map(|t| format!("_{t}")),
            _ => None,
        }
    }
}
