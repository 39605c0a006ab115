//! The metadata document of what is served when nothing is stored: every table
//! and view tracked, and each relationship the database's foreign keys give,
//! written as Hasura would track them. `export_metadata` answers it, and the first
//! change through the API starts from it, so tracking nothing new loses nothing.

use grafton_engine::Schemas;
use grafton_schema::model::RelKind;
use serde_json::{json, Map, Value};

/// The document of what `schemas` serve.
pub fn document(schemas: &Schemas) -> Value {
    let model = schemas.admin_model();
    let catalog = &model.catalog;
    let name = |id: usize| {
        let t = &catalog.tables[model.tables[id].catalog_index];
        // SQLite's one schema is written as Hasura's default.
        let schema = if t.schema == "main" {
            "public"
        } else {
            t.schema.as_str()
        };
        json!({"schema": schema, "name": t.name})
    };
    let mut tables = Vec::with_capacity(model.tables.len());
    for (id, table) in model.tables.iter().enumerate() {
        let columns = &catalog.tables[table.catalog_index].columns;
        let mut entry = Map::new();
        entry.insert("table".into(), name(id));
        for (kind, key) in [
            (RelKind::Object, "object_relationships"),
            (RelKind::Array, "array_relationships"),
        ] {
            let rels: Vec<Value> = (model.relationships.iter())
                .filter(|r| r.source == id && r.kind == kind)
                .map(|r| {
                    let target = &catalog.tables[model.tables[r.target].catalog_index].columns;
                    let mapping: Map<String, Value> = (r.mapping.iter())
                        .map(|&(s, t)| (columns[s].name.clone(), json!(target[t].name)))
                        .collect();
                    let mut manual =
                        json!({"remote_table": name(r.target), "column_mapping": mapping});
                    if kind == RelKind::Object && r.after_parent {
                        manual["insertion_order"] = json!("after_parent");
                    }
                    json!({"name": r.name, "using": {"manual_configuration": manual}})
                })
                .collect();
            if !rels.is_empty() {
                entry.insert(key.into(), Value::Array(rels));
            }
        }
        tables.push(Value::Object(entry));
    }
    let mut doc = crate::document::empty();
    doc["sources"][0]["tables"] = Value::Array(tables);
    // A config file's cron triggers stay the file's (they are not written into
    // the store, where they would outlive the file).
    doc
}
