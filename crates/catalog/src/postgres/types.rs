//! What a PostgreSQL column's type is to Grafton: its `db_type` and scalar kind.

use std::collections::HashMap;

use tokio_postgres::Row;

use crate::{CatalogError, ScalarKind};

/// The column's `db_type`, its scalar kind, and (when it is not mapped exactly)
/// the type name to warn about.
pub(super) fn column_type(
    row: &Row,
    enum_index: &HashMap<u32, usize>,
) -> Result<(String, ScalarKind, Option<String>), CatalogError> {
    let type_oid: Option<u32> = row.try_get("type_oid")?;
    let name: String = row
        .try_get::<_, Option<String>>("type_name")?
        .unwrap_or_default();
    let schema: String = row
        .try_get::<_, Option<String>>("type_schema")?
        .unwrap_or_default();
    let typtype: String = row
        .try_get::<_, Option<String>>("type_type")?
        .unwrap_or_default();
    let element: Option<String> = row.try_get("element_type_name")?;

    if let Some(element) = element {
        let db_type = format!("{element}[]");
        // An array of a built-in type is a GraphQL list; others travel as text.
        return Ok(match scalar_for_type_name(&element) {
            Some(scalar)
                if !matches!(
                    scalar,
                    ScalarKind::Json | ScalarKind::Jsonb | ScalarKind::Bytea
                ) =>
            {
                (db_type, ScalarKind::Array(Box::new(scalar)), None)
            }
            _ => (db_type.clone(), ScalarKind::Text, Some(db_type)),
        });
    }
    if typtype == "e" {
        if let Some(&i) = type_oid.and_then(|oid| enum_index.get(&oid)) {
            return Ok((name, ScalarKind::Enum(i), None));
        }
    }
    // A composite (row) type travels as JSON: PostgreSQL builds its JSON object when
    // read and json_populate_record fills it from one when written.
    if typtype == "c" {
        return Ok((name, ScalarKind::Json, None));
    }
    // PostGIS's and ltree's types, in whatever schema their extension was made.
    if typtype == "b" {
        match name.as_str() {
            "geometry" => return Ok((name, ScalarKind::Geometry, None)),
            "geography" => return Ok((name, ScalarKind::Geography, None)),
            "ltree" => return Ok((name, ScalarKind::Ltree, None)),
            "raster" => return Ok((name, ScalarKind::Raster, None)),
            _ => {}
        }
    }
    let builtin = typtype == "b" && (schema == "pg_catalog" || name == "citext");
    match builtin.then(|| scalar_for_type_name(&name)).flatten() {
        Some(scalar) => Ok((name, scalar, None)),
        None => Ok((name.clone(), ScalarKind::Text, Some(name))),
    }
}

/// The scalar kind of a built-in PostgreSQL base type, by its `pg_type` name.
pub(super) fn scalar_for_type_name(name: &str) -> Option<ScalarKind> {
    Some(match name {
        "int2" | "int4" => ScalarKind::Int,
        "int8" => ScalarKind::BigInt,
        "float4" | "float8" => ScalarKind::Float,
        "numeric" => ScalarKind::Numeric,
        "text" | "varchar" | "bpchar" | "name" | "citext" => ScalarKind::Text,
        "bool" => ScalarKind::Boolean,
        "uuid" => ScalarKind::Uuid,
        "timestamptz" => ScalarKind::Timestamptz,
        "timestamp" => ScalarKind::Timestamp,
        "date" => ScalarKind::Date,
        "time" => ScalarKind::Time,
        "timetz" => ScalarKind::Timetz,
        "interval" => ScalarKind::Interval,
        "json" => ScalarKind::Json,
        "jsonb" => ScalarKind::Jsonb,
        "bytea" => ScalarKind::Bytea,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_builtin_type_names() {
        assert_eq!(scalar_for_type_name("int4"), Some(ScalarKind::Int));
        assert_eq!(scalar_for_type_name("int8"), Some(ScalarKind::BigInt));
        assert_eq!(scalar_for_type_name("bpchar"), Some(ScalarKind::Text));
        assert_eq!(
            scalar_for_type_name("timestamptz"),
            Some(ScalarKind::Timestamptz)
        );
        assert_eq!(scalar_for_type_name("tsvector"), None);
    }
}
