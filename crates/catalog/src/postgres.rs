//! PostgreSQL introspection: four catalog queries (relations with their columns,
//! key constraints and unique indexes, enum types, functions returning a table's
//! rows), pipelined on one connection.

use std::collections::HashMap;

use tokio_postgres::types::Type;
use tokio_postgres::Client;

mod functions;
mod types;

use types::{column_type, scalar_for_type_name};

use crate::{
    normalize, Catalog, CatalogError, Column, EnumType, ForeignKey, Introspected, ScalarKind,
    Table, TableKind, UniqueConstraint, Writes,
};

/// Relations (tables, partitioned tables, views, materialized views) of the given
/// schemas, one row per column in ordinal order (one row with NULL columns for a
/// relation without columns). Domains are resolved to their base type.
const RELATIONS_SQL: &str = r#"
WITH RECURSIVE domain_base(domain_oid, base_oid) AS (
    SELECT t.oid, t.typbasetype FROM pg_catalog.pg_type t WHERE t.typtype = 'd'
  UNION ALL
    SELECT d.domain_oid, t.typbasetype
    FROM domain_base d JOIN pg_catalog.pg_type t ON t.oid = d.base_oid
    WHERE t.typtype = 'd'
)
SELECT n.nspname::text AS table_schema,
       c.relname::text AS table_name,
       c.relkind::text AS relkind,
       pg_catalog.pg_relation_is_updatable(c.oid, false) AS updatable,
       pg_catalog.obj_description(c.oid, 'pg_class') AS table_comment,
       EXISTS (SELECT FROM pg_catalog.pg_depend d
               WHERE d.classid = 'pg_catalog.pg_class'::regclass AND d.objid = c.oid
                 AND d.deptype = 'e') AS from_extension,
       a.attname::text AS column_name,
       et.oid AS type_oid,
       et.typname::text AS type_name,
       etn.nspname::text AS type_schema,
       et.typtype::text AS type_type,
       elt.typname::text AS element_type_name,
       NOT (a.attnotnull OR (at.typtype = 'd' AND at.typnotnull)) AS nullable,
       (a.atthasdef OR a.attidentity <> '' OR a.attgenerated <> ''
        OR (at.typtype = 'd' AND at.typdefault IS NOT NULL)) AS has_default,
       pg_catalog.col_description(c.oid, a.attnum) AS column_comment
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_catalog.pg_attribute a
       ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
LEFT JOIN pg_catalog.pg_type at ON at.oid = a.atttypid
LEFT JOIN domain_base db
       ON db.domain_oid = a.atttypid
      AND NOT EXISTS (SELECT FROM pg_catalog.pg_type x
                      WHERE x.oid = db.base_oid AND x.typtype = 'd')
LEFT JOIN pg_catalog.pg_type et ON et.oid = COALESCE(db.base_oid, a.atttypid)
LEFT JOIN pg_catalog.pg_namespace etn ON etn.oid = et.typnamespace
LEFT JOIN pg_catalog.pg_type elt ON elt.oid = et.typelem AND et.typcategory = 'A'
WHERE c.relkind IN ('r', 'p', 'v', 'm')
  AND NOT c.relispartition
  AND n.nspname = ANY($1)
ORDER BY n.nspname, c.relname, a.attnum
"#;

/// Primary keys, unique constraints and foreign keys (columns paired in key
/// order), then unique indexes that back no constraint and are neither partial
/// nor on expressions (contype `i`).
const CONSTRAINTS_SQL: &str = r#"
SELECT n.nspname::text AS table_schema,
       cl.relname::text AS table_name,
       con.conname::text AS name,
       con.contype::text AS kind,
       ARRAY(SELECT a.attname::text
             FROM unnest(con.conkey) WITH ORDINALITY k(attnum, ord)
             JOIN pg_catalog.pg_attribute a
               ON a.attrelid = con.conrelid AND a.attnum = k.attnum
             ORDER BY k.ord) AS columns,
       rn.nspname::text AS ref_schema,
       rcl.relname::text AS ref_table,
       ARRAY(SELECT a.attname::text
             FROM unnest(con.confkey) WITH ORDINALITY k(attnum, ord)
             JOIN pg_catalog.pg_attribute a
               ON a.attrelid = con.confrelid AND a.attnum = k.attnum
             ORDER BY k.ord) AS ref_columns,
       con.convalidated AS validated
FROM pg_catalog.pg_constraint con
JOIN pg_catalog.pg_class cl ON cl.oid = con.conrelid
JOIN pg_catalog.pg_namespace n ON n.oid = cl.relnamespace
LEFT JOIN pg_catalog.pg_class rcl ON rcl.oid = con.confrelid
LEFT JOIN pg_catalog.pg_namespace rn ON rn.oid = rcl.relnamespace
WHERE con.contype IN ('p', 'u', 'f')
  AND con.conparentid = 0
  AND n.nspname = ANY($1)
UNION ALL
SELECT n.nspname::text,
       cl.relname::text,
       ic.relname::text,
       'i',
       ARRAY(SELECT a.attname::text
             FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(attnum, ord)
             JOIN pg_catalog.pg_attribute a
               ON a.attrelid = i.indrelid AND a.attnum = k.attnum
             WHERE k.ord <= i.indnkeyatts
             ORDER BY k.ord),
       NULL,
       NULL,
       ARRAY[]::text[],
       true
FROM pg_catalog.pg_index i
JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid
JOIN pg_catalog.pg_class cl ON cl.oid = i.indrelid
JOIN pg_catalog.pg_namespace n ON n.oid = cl.relnamespace
WHERE i.indisunique
  AND NOT i.indisprimary
  AND i.indisvalid
  AND i.indpred IS NULL
  AND i.indexprs IS NULL
  AND NOT EXISTS (SELECT FROM pg_catalog.pg_constraint x
                  WHERE x.conindid = i.indexrelid AND x.contype IN ('p', 'u', 'x'))
  AND n.nspname = ANY($1)
"#;

/// Enum types of the given schemas, plus those used by their columns (directly
/// or through a domain), with labels in sort order.
const ENUMS_SQL: &str = r#"
WITH used(type_oid) AS (
    SELECT a.atttypid
    FROM pg_catalog.pg_attribute a
    JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = ANY($1) AND a.attnum > 0 AND NOT a.attisdropped
)
SELECT t.oid AS type_oid,
       n.nspname::text AS type_schema,
       t.typname::text AS type_name,
       ARRAY(SELECT e.enumlabel::text FROM pg_catalog.pg_enum e
             WHERE e.enumtypid = t.oid ORDER BY e.enumsortorder) AS labels
FROM pg_catalog.pg_type t
JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace
WHERE t.typtype = 'e'
  AND (n.nspname = ANY($1)
       OR t.oid IN (SELECT type_oid FROM used)
       OR t.oid IN (SELECT d.typbasetype FROM pg_catalog.pg_type d
                    WHERE d.typtype = 'd' AND d.oid IN (SELECT type_oid FROM used)))
ORDER BY n.nspname, t.typname
"#;

/// Reads the catalog of the given schemas (e.g. `["public"]`) from PostgreSQL.
///
/// Issues three catalog queries, pipelined on the connection: relations with
/// their columns, key constraints and unique indexes, and enum types. Tables come
/// out ordered by (schema, name), columns in ordinal order; types that have no
/// exact GraphQL mapping are exposed as `Text` and reported in `warnings`.
pub async fn introspect_postgres(
    client: &Client,
    schemas: &[String],
) -> Result<Introspected, CatalogError> {
    let params: [(&(dyn tokio_postgres::types::ToSql + Sync), Type); 1] =
        [(&schemas, Type::NAME_ARRAY)];
    let (relations, constraints, enums, functions) = futures_util::future::try_join4(
        client.query_typed(RELATIONS_SQL, &params),
        client.query_typed(CONSTRAINTS_SQL, &params),
        client.query_typed(ENUMS_SQL, &params),
        client.query_typed(functions::FUNCTIONS_SQL, &params),
    )
    .await?;

    let mut warnings = Vec::new();
    let mut catalog = Catalog::default();

    let mut enum_index: HashMap<u32, usize> = HashMap::new();
    for row in &enums {
        let oid: u32 = row.try_get("type_oid")?;
        enum_index.insert(oid, catalog.enums.len());
        catalog.enums.push(EnumType {
            schema: row.try_get("type_schema")?,
            name: row.try_get("type_name")?,
            values: row.try_get("labels")?,
            descriptions: Vec::new(),
            from_table: None,
        });
    }

    let mut table_index: HashMap<(String, String), usize> = HashMap::new();
    for row in &relations {
        let schema: String = row.try_get("table_schema")?;
        let name: String = row.try_get("table_name")?;
        let key = (schema, name);
        let index = match table_index.get(&key) {
            Some(&i) => i,
            None => {
                let relkind: String = row.try_get("relkind")?;
                let kind = match relkind.as_str() {
                    "v" | "m" => TableKind::View,
                    _ => TableKind::Table,
                };
                // A bit per command: UPDATE 4, INSERT 8, DELETE 16 (auto-updatable
                // views; INSTEAD OF triggers and rules count too).
                let mask: i32 = row.try_get("updatable")?;
                let writes = Writes {
                    insert: mask & 8 != 0,
                    update: mask & 4 != 0,
                    delete: mask & 16 != 0,
                };
                catalog.tables.push(Table {
                    schema: key.0.clone(),
                    name: key.1.clone(),
                    kind,
                    columns: Vec::new(),
                    primary_key: Vec::new(),
                    primary_key_name: None,
                    unique_constraints: Vec::new(),
                    foreign_keys: Vec::new(),
                    comment: row.try_get("table_comment")?,
                    writes,
                });
                if row.try_get::<_, bool>("from_extension")? {
                    catalog.extension_tables.insert(key.clone());
                }
                table_index.insert(key, catalog.tables.len() - 1);
                catalog.tables.len() - 1
            }
        };
        let Some(column_name) = row.try_get::<_, Option<String>>("column_name")? else {
            continue;
        };
        let table = &mut catalog.tables[index];
        let (db_type, scalar, warning) = column_type(row, &enum_index)?;
        // The schema of a type named by its own name in SQL: an extension's, one
        // Grafton does not map (a domain, `inet`, `citext`…), and an array's
        // (`inet[]`: its `_inet`'s), which a Relay cursor's value is bound as.
        let unmapped = (scalar == ScalarKind::Text
            && !matches!(db_type.as_str(), "text" | "varchar" | "bpchar" | "name"))
            || db_type.ends_with("[]");
        if let Some(ty) = scalar
            .extension_type()
            .or(unmapped.then_some(db_type.as_str()))
        {
            let schema: Option<String> = row.try_get("type_schema")?;
            (catalog.type_schemas)
                .entry(ty.to_owned())
                .or_insert_with(|| schema.unwrap_or_else(|| "public".to_owned()));
        }
        if let Some(what) = warning {
            warnings.push(format!(
                "column {}.{}.{} has type {what}, exposed as String",
                table.schema, table.name, column_name
            ));
        }
        table.columns.push(Column {
            name: column_name,
            db_type,
            scalar,
            nullable: row.try_get::<_, Option<bool>>("nullable")?.unwrap_or(true),
            has_default: row
                .try_get::<_, Option<bool>>("has_default")?
                .unwrap_or(false),
            comment: row.try_get("column_comment")?,
        });
    }

    for row in &constraints {
        let schema: String = row.try_get("table_schema")?;
        let table_name: String = row.try_get("table_name")?;
        // Constraints of relations that are not exposed (partitions) are skipped.
        let Some(&index) = table_index.get(&(schema, table_name)) else {
            continue;
        };
        let name: String = row.try_get("name")?;
        let kind: String = row.try_get("kind")?;
        let columns: Vec<String> = row.try_get("columns")?;
        let table = &mut catalog.tables[index];
        match kind.as_str() {
            "p" => {
                table.primary_key = columns;
                table.primary_key_name = Some(name);
            }
            "u" | "i" => table
                .unique_constraints
                .push(UniqueConstraint { name, columns }),
            "f" => {
                let ref_schema: Option<String> = row.try_get("ref_schema")?;
                let ref_table: Option<String> = row.try_get("ref_table")?;
                let ref_columns: Vec<String> = row.try_get("ref_columns")?;
                let (Some(ref_schema), Some(ref_table)) = (ref_schema, ref_table) else {
                    continue;
                };
                if !table_index.contains_key(&(ref_schema.clone(), ref_table.clone())) {
                    warnings.push(format!(
                        "foreign key {name} on {}.{} references {ref_schema}.{ref_table}, \
                         which is not introspected; ignored",
                        table.schema, table.name
                    ));
                    continue;
                }
                let enforced: bool = row.try_get("validated")?;
                table.foreign_keys.push(ForeignKey {
                    name,
                    columns,
                    ref_schema,
                    ref_table,
                    ref_columns,
                    enforced,
                });
            }
            _ => {}
        }
    }

    for row in &functions {
        functions::extension_schemas(row, &mut catalog.type_schemas)?;
        catalog
            .functions
            .push(functions::function(row, &enum_index)?);
    }
    normalize(&mut catalog);
    tracing::debug!(
        tables = catalog.tables.len(),
        enums = catalog.enums.len(),
        warnings = warnings.len(),
        "introspected postgres"
    );
    Ok(Introspected { catalog, warnings })
}
