//! PostgreSQL functions that return rows of a table: the candidates for Hasura's
//! tracked functions, with what decides whether and how they can be served.

use std::collections::HashMap;

use tokio_postgres::Row;

use super::scalar_for_type_name;
use crate::{CatalogError, Function, FunctionArg, Returns, ScalarKind};

/// Functions of the given schemas whose result is a table's row type (`RETURNS t`
/// or `RETURNS SETOF t`) or that take one (computed fields), with their input
/// arguments' types (domains resolved to their base type) and how many functions
/// share the name.
pub(super) const FUNCTIONS_SQL: &str = r#"
SELECT n.nspname::text AS schema,
       p.proname::text AS name,
       rn.nspname::text AS ret_schema,
       rc.relname::text AS ret_table,
       CASE WHEN rt.typcategory = 'A' THEN rt.typname::text || ' (an array)'
            ELSE rt.typname::text END AS ret_type,
       (rt.typtype::text || ':' || rtn.nspname::text || ':' || rt.oid::text) AS ret_kind,
       p.proretset AS returns_set,
       p.provolatile::text AS volatility,
       p.pronargdefaults::int4 AS defaults,
       p.provariadic <> 0 AS variadic,
       COALESCE(p.proargmodes::text[], ARRAY[]::text[]) AS modes,
       COALESCE(p.proargnames, ARRAY[]::text[]) AS arg_names,
       ARRAY(SELECT CASE WHEN t.typcategory = 'A' AND t.typelem <> 0
                         THEN (SELECT e.typname::text || '[]'
                               FROM pg_catalog.pg_type e WHERE e.oid = t.typelem)
                         ELSE t.typname::text END
             FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY a(oid, ord)
             JOIN pg_catalog.pg_type d ON d.oid = a.oid
             JOIN pg_catalog.pg_type t
               ON t.oid = CASE WHEN d.typtype = 'd' THEN d.typbasetype ELSE d.oid END
             ORDER BY a.ord) AS arg_types,
       ARRAY(SELECT (t.typtype::text || ':' || tn.nspname::text || ':' || t.oid::text)
             FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY a(oid, ord)
             JOIN pg_catalog.pg_type d ON d.oid = a.oid
             JOIN pg_catalog.pg_type t
               ON t.oid = CASE WHEN d.typtype = 'd' THEN d.typbasetype ELSE d.oid END
             JOIN pg_catalog.pg_namespace tn ON tn.oid = t.typnamespace
             ORDER BY a.ord) AS arg_kinds,
       ARRAY(SELECT COALESCE(tn.nspname::text || '.' || c.relname::text, '')
             FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY a(oid, ord)
             JOIN pg_catalog.pg_type t ON t.oid = a.oid
             JOIN pg_catalog.pg_namespace tn ON tn.oid = t.typnamespace
             LEFT JOIN pg_catalog.pg_class c ON c.oid = t.typrelid AND t.typtype = 'c'
             ORDER BY a.ord) AS arg_rows,
       pg_catalog.obj_description(p.oid, 'pg_proc') AS comment,
       (SELECT count(*) FROM pg_catalog.pg_proc q
        WHERE q.pronamespace = p.pronamespace AND q.proname = p.proname) AS overloads
FROM pg_catalog.pg_proc p
JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
JOIN pg_catalog.pg_type rt ON rt.oid = p.prorettype
JOIN pg_catalog.pg_namespace rtn ON rtn.oid = rt.typnamespace
LEFT JOIN pg_catalog.pg_class rc ON rc.oid = rt.typrelid AND rt.typtype = 'c'
LEFT JOIN pg_catalog.pg_namespace rn ON rn.oid = rc.relnamespace
WHERE p.prokind = 'f'
  AND n.nspname = ANY($1)
  AND (rc.oid IS NOT NULL
       OR EXISTS (SELECT FROM unnest(p.proargtypes::oid[]) a(oid)
                  JOIN pg_catalog.pg_type t ON t.oid = a.oid
                  WHERE t.typtype = 'c' AND t.typrelid <> 0))
ORDER BY n.nspname, p.proname
"#;

/// One row of [`FUNCTIONS_SQL`] as a catalog function.
pub(super) fn function(
    row: &Row,
    enum_index: &HashMap<u32, usize>,
) -> Result<Function, CatalogError> {
    let schema: String = row.try_get("schema")?;
    let name: String = row.try_get("name")?;
    let modes: Vec<String> = row.try_get("modes")?;
    let names: Vec<String> = row.try_get("arg_names")?;
    let types: Vec<String> = row.try_get("arg_types")?;
    let kinds: Vec<String> = row.try_get("arg_kinds")?;
    let rows: Vec<String> = row.try_get("arg_rows")?;
    let overloads: i64 = row.try_get("overloads")?;
    let unsupported = if overloads > 1 {
        Some("it is overloaded (Hasura does not track overloaded functions either)".to_owned())
    } else if row.try_get::<_, bool>("variadic")? {
        Some("it takes VARIADIC arguments".to_owned())
    } else if modes.iter().any(|m| m != "i") {
        Some("it has OUT, INOUT or TABLE arguments (only IN arguments are supported)".to_owned())
    } else {
        None
    };
    let args = types
        .iter()
        .enumerate()
        .map(|(i, db_type)| {
            let given = names.get(i).filter(|n| !n.is_empty());
            FunctionArg {
                name: given.cloned().unwrap_or_else(|| format!("arg_{}", i + 1)),
                named: given.is_some(),
                db_type: db_type.clone(),
                scalar: kinds
                    .get(i)
                    .and_then(|k| arg_scalar(db_type, k, enum_index)),
                array_of: kinds.get(i).and_then(|k| array_of(db_type, k)),
                row_of: (rows.get(i))
                    .and_then(|r| r.split_once('.'))
                    .map(|(s, t)| (s.to_owned(), t.to_owned())),
            }
        })
        .collect();
    Ok(Function {
        schema,
        name,
        args,
        defaults: usize::try_from(row.try_get::<_, i32>("defaults")?).unwrap_or(0),
        returns: match (row.try_get("ret_schema")?, row.try_get("ret_table")?) {
            (Some(schema), Some(table)) => Returns::Table(schema, table),
            _ => {
                let ty: String = row.try_get("ret_type")?;
                let kind: String = row.try_get("ret_kind")?;
                let scalar = arg_scalar(&ty, &kind, enum_index);
                Returns::Scalar(ty, scalar)
            }
        },
        returns_set: row.try_get("returns_set")?,
        volatile: row.try_get::<_, String>("volatility")? == "v",
        comment: row.try_get("comment")?,
        unsupported,
    })
}

/// The element type of an array of a built-in base type (`uuid` for `uuid[]`).
fn array_of(db_type: &str, kind: &str) -> Option<String> {
    let element = db_type.strip_suffix("[]")?;
    let builtin = kind.starts_with("b:pg_catalog:");
    let plain = element
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_');
    (builtin && plain && !element.is_empty()).then(|| element.to_owned())
}

/// An argument type's kind, from `typtype:schema:oid`; `None` when it cannot be bound.
fn arg_scalar(db_type: &str, kind: &str, enum_index: &HashMap<u32, usize>) -> Option<ScalarKind> {
    let mut parts = kind.splitn(3, ':');
    let (typtype, schema, oid) = (parts.next()?, parts.next()?, parts.next()?);
    match typtype {
        "e" => oid
            .parse::<u32>()
            .ok()
            .and_then(|oid| enum_index.get(&oid))
            .map(|&i| ScalarKind::Enum(i)),
        "b" if schema == "pg_catalog" || db_type == "citext" => scalar_for_type_name(db_type),
        // PostGIS's and ltree's types, in whatever schema their extension is.
        "b" => match db_type {
            "geometry" => Some(ScalarKind::Geometry),
            "geography" => Some(ScalarKind::Geography),
            "ltree" => Some(ScalarKind::Ltree),
            "raster" => Some(ScalarKind::Raster),
            _ => None,
        },
        _ => None,
    }
}

/// The schemas of the PostGIS and ltree types a function takes or returns, into
/// `schemas` (a function may be what uses them).
pub(super) fn extension_schemas(
    row: &Row,
    schemas: &mut std::collections::BTreeMap<String, String>,
) -> Result<(), CatalogError> {
    let types: Vec<String> = row.try_get("arg_types")?;
    let kinds: Vec<String> = row.try_get("arg_kinds")?;
    let returned: (Option<String>, Option<String>) =
        (row.try_get("ret_type")?, row.try_get("ret_kind")?);
    for (ty, kind) in types
        .into_iter()
        .zip(kinds)
        .chain(returned.0.zip(returned.1))
    {
        if matches!(ty.as_str(), "geometry" | "geography" | "ltree" | "raster") {
            if let Some(schema) = kind.split(':').nth(1) {
                schemas.entry(ty).or_insert_with(|| schema.to_owned());
            }
        }
    }
    Ok(())
}
