//! The JSON Schemas the config attaches to columns, compiled once at start-up.

use super::{find_table, SchemaError};
use crate::config::{Config, JsonSchemaConfig};
use crate::model::*;
use grafton_catalog::{Catalog, ScalarKind};
use std::collections::HashMap;

/// Compiles the JSON Schemas the config attaches to columns (once, at start-up).
pub(super) fn compile_validators(
    catalog: &Catalog,
    config: &Config,
    tables: &[TableInfo],
    default_schema: &str,
) -> Result<HashMap<(TableId, usize), grafton_validate::ColumnSchema>, SchemaError> {
    let mut out = HashMap::new();
    for (key, tc) in &config.tables {
        for (column, cc) in &tc.columns {
            let Some(source) = &cc.json_schema else {
                continue;
            };
            let ci = find_table(catalog, key, default_schema);
            let Some(id) = tables.iter().position(|t| Some(t.catalog_index) == ci) else {
                return Err(SchemaError::Config(format!(
                    "columns of '{key}': the table is not exposed"
                )));
            };
            let t = &catalog.tables[tables[id].catalog_index];
            let index = t
                .columns
                .iter()
                .position(|c| &c.name == column)
                .ok_or_else(|| {
                    SchemaError::Config(format!("'{column}' is not a column of '{key}'"))
                })?;
            if !matches!(
                t.columns[index].scalar,
                ScalarKind::Json | ScalarKind::Jsonb | ScalarKind::Text
            ) {
                return Err(SchemaError::Config(format!(
                    "{key}.{column}: a JSON Schema can only be attached to a json, jsonb or text column"
                )));
            }
            let source = match source {
                JsonSchemaConfig::Path(p) => grafton_validate::SchemaSource::Path(p.into()),
                JsonSchemaConfig::Inline(v) => grafton_validate::SchemaSource::Inline(v.clone()),
            };
            let compiled = grafton_validate::compile(&source, &config.base_dir)
                .map_err(|e| SchemaError::Config(format!("{key}.{column}: {e}")))?;
            out.insert((id, index), compiled);
        }
    }
    Ok(out)
}
