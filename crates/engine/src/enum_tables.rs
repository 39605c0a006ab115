//! Enum tables (Hasura's `is_enum`): a table whose key is one text column (and at
//! most one other text column, a description) lends its rows to a GraphQL enum,
//! `<table>_enum`, which becomes the type of every column referencing that key, in
//! outputs, inputs and comparisons. Its rows are read at start-up and on each reload.

use crate::error::BuildError;
use grafton_catalog::{Backend, Catalog, EnumType, ScalarKind};
use grafton_execute::{Budget, Database, Route};
use grafton_schema::inconsistent::{Inconsistency, ObjectKind};
use grafton_schema::naming::is_enum_value;
use grafton_schema::Config;
use grafton_sql::Statement;
use std::time::Duration;

/// The most values one enum table may have (it is a type, not data).
const MAX_VALUES: usize = 1_000;

/// Reads every enum table `config` names and retypes the columns that reference one.
/// An enum table that cannot be one is left out (returned, as inconsistent metadata).
pub(crate) async fn apply(
    db: &Database,
    catalog: &mut Catalog,
    config: &Config,
) -> Result<Vec<Inconsistency>, BuildError> {
    let default_schema = match db.backend() {
        Backend::Postgres => "public",
        Backend::Sqlite => "main",
    };
    let mut left_out = Vec::new();
    for (key, tc) in config.tables.iter().filter(|(_, tc)| tc.is_enum) {
        let refuse = |why: String| Inconsistency::new(ObjectKind::Table, key, why);
        let (schema, name) = key.split_once('.').unwrap_or((default_schema, key));
        let Some(ti) = catalog.table_index(schema, name) else {
            left_out.push(refuse(format!("table '{key}' is not in the database")));
            continue;
        };
        let table = &catalog.tables[ti];
        let text = |c: &str| {
            (table.columns.iter()).any(|col| col.name == c && col.scalar == ScalarKind::Text)
        };
        let [pk] = table.primary_key.as_slice() else {
            left_out.push(refuse(format!(
                "enum table {key}: its primary key must be one text column"
            )));
            continue;
        };
        let others: Vec<&str> = (table.columns.iter())
            .map(|c| c.name.as_str())
            .filter(|c| c != pk)
            .collect();
        if !text(pk) || others.len() > 1 || !others.iter().all(|c| text(c)) {
            left_out.push(refuse(format!(
                "enum table {key}: it must have a text primary key and at most one other \
                 column, of text (its values' descriptions)"
            )));
            continue;
        }
        let rows = read(db, schema, name, pk, others.first().copied()).await?;
        if rows.is_empty() || rows.len() > MAX_VALUES {
            left_out.push(refuse(format!(
                "enum table {key}: it has {} rows; an enum needs 1 to {MAX_VALUES}",
                rows.len()
            )));
            continue;
        }
        if let Some((bad, _)) = rows.iter().find(|(v, _)| !is_enum_value(v)) {
            left_out.push(refuse(format!(
                "enum table {key}: '{bad}' is not a GraphQL enum value (letters, digits and _, \
                 not starting with a digit or __, not true, false or null)"
            )));
            continue;
        }
        let base = tc.custom_name.clone().unwrap_or_else(|| match schema {
            s if s == default_schema => name.to_owned(),
            s => format!("{s}_{name}"),
        });
        let (values, descriptions) = rows.into_iter().unzip();
        let index = catalog.enums.len();
        catalog.enums.push(EnumType {
            schema: schema.to_owned(),
            name: format!("{base}_enum"),
            values,
            descriptions,
            from_table: Some(grafton_catalog::EnumTable {
                schema: schema.to_owned(),
                table: name.to_owned(),
                key: pk.clone(),
            }),
        });
        let (schema, name, pk) = (schema.to_owned(), name.to_owned(), pk.clone());
        for t in &mut catalog.tables {
            let referencing: Vec<String> = (t.foreign_keys.iter())
                .filter(|fk| fk.ref_schema == schema && fk.ref_table == name)
                .filter(|fk| fk.ref_columns == [pk.clone()])
                .flat_map(|fk| fk.columns.clone())
                .collect();
            for c in t
                .columns
                .iter_mut()
                .filter(|c| referencing.contains(&c.name))
            {
                c.scalar = ScalarKind::Enum(index);
            }
        }
    }
    Ok(left_out)
}

/// The enum table's rows: each key and its description, in key order.
async fn read(
    db: &Database,
    schema: &str,
    table: &str,
    key: &str,
    comment: Option<&str>,
) -> Result<Vec<(String, Option<String>)>, BuildError> {
    let q = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    let (k, c) = (q(key), comment.map_or("NULL".to_owned(), q));
    let from = format!("{}.{}", q(schema), q(table));
    let sql = match db.backend() {
        Backend::Postgres => format!(
            "SELECT coalesce(json_agg(json_build_array({k}, {c}) ORDER BY {k}), '[]')::text FROM {from}"
        ),
        Backend::Sqlite => format!(
            "SELECT coalesce(json_group_array(json_array(k, c)), '[]') \
             FROM (SELECT {k} AS k, {c} AS c FROM {from} ORDER BY {k})"
        ),
    };
    let statement = Statement {
        sql,
        params: Vec::new(),
        compact: false,
    };
    let budget = Budget {
        timeout: Duration::from_secs(10),
        max_bytes: 1024 * 1024,
    };
    let text = db
        .query_json(&statement, &Default::default(), budget, Route::Primary)
        .await?;
    let rows: Vec<(String, Option<String>)> = serde_json::from_str(&text).map_err(|e| {
        BuildError::Schema(grafton_schema::SchemaError::Config(format!(
            "enum table {schema}.{table}: its rows did not read as text: {e}"
        )))
    })?;
    Ok(rows)
}
