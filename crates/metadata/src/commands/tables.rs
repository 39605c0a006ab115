//! Tracking tables: `pg_track_table`, `pg_untrack_table`, `pg_set_table_customization`,
//! `pg_set_table_is_enum`.

use crate::document::{list, source, table_index, tracked_table, QualifiedName};
use crate::Refusal;
use serde_json::{json, Map, Value};

/// `pg_track_table` (v1 `{table, is_enum?}` and v2 `{table, configuration?}`).
pub fn track(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let table = QualifiedName::read(args.get("table"), "table")?;
    let tables = list(source(doc, args)?, "tables");
    if table_index(tables, &table).is_some() {
        return Err(Refusal::new(
            "already-tracked",
            format!("view/table already tracked: \"{}\"", table.display()),
            "$.args",
        ));
    }
    let mut entry = Map::new();
    entry.insert("table".into(), table.to_json());
    if let Some(c) = args.get("configuration").filter(|c| !c.is_null()) {
        entry.insert("configuration".into(), c.clone());
    }
    if args.get("is_enum") == Some(&Value::Bool(true)) {
        entry.insert("is_enum".into(), json!(true));
    }
    tables.push(Value::Object(entry));
    Ok(())
}

/// `pg_untrack_table`: the entry goes, and with `cascade` the relationships of
/// other tables that lead to it; without, those are a `dependency-error`.
pub fn untrack(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let table = QualifiedName::read(args.get("table"), "table")?;
    let cascade = args.get("cascade") == Some(&Value::Bool(true));
    let source_name = args
        .get("source")
        .and_then(Value::as_str)
        .unwrap_or("default");
    let tables = list(source(doc, args)?, "tables");
    let Some(i) = table_index(tables, &table) else {
        return Err(Refusal::new(
            "already-untracked",
            format!("view/table already untracked: \"{}\"", table.display()),
            "$.args",
        ));
    };
    tables.remove(i);
    let mut dependents = Vec::new();
    for entry in tables.iter_mut().filter_map(Value::as_object_mut) {
        let owner = QualifiedName::read(entry.get("table"), "table").map(|t| t.display());
        for kind in ["object_relationships", "array_relationships"] {
            let Some(Value::Array(rels)) = entry.get_mut(kind) else {
                continue;
            };
            rels.retain(|r| {
                let leads = leads_to(r, &table);
                if leads {
                    let name = r.get("name").and_then(Value::as_str).unwrap_or("?");
                    dependents.push(format!(
                        "relationship {}.{name} in source \"{source_name}\"",
                        owner.clone().unwrap_or_default()
                    ));
                }
                !leads
            });
            if rels.is_empty() {
                entry.remove(kind);
            }
        }
    }
    if !dependents.is_empty() && !cascade {
        dependents.sort();
        return Err(Refusal::new(
            "dependency-error",
            format!(
                "cannot drop due to the following dependent objects: {}",
                dependents.join(", ")
            ),
            "$.args",
        ));
    }
    Ok(())
}

/// Whether relationship `r` (of another table) joins to `table`.
fn leads_to(r: &Value, table: &QualifiedName) -> bool {
    let using = r.get("using");
    let manual = using.and_then(|u| u.get("manual_configuration"));
    if let Some(remote) = manual.and_then(|m| m.get("remote_table")) {
        return QualifiedName::read(Some(remote), "table").is_ok_and(|t| &t == table);
    }
    let fk = using.and_then(|u| u.get("foreign_key_constraint_on"));
    fk.and_then(|f| f.get("table"))
        .is_some_and(|t| QualifiedName::read(Some(t), "table").is_ok_and(|t| &t == table))
}

/// `pg_set_table_customization`: the table's `configuration`, replaced whole.
pub fn customize(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let configuration = args.get("configuration").cloned().unwrap_or(json!({}));
    let entry = tracked_table(doc, args)?;
    entry.insert("configuration".into(), configuration);
    Ok(())
}

/// `pg_set_table_is_enum`.
pub fn set_is_enum(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let Some(is_enum) = args.get("is_enum").and_then(Value::as_bool) else {
        return Err(Refusal::parse("key \"is_enum\" not found"));
    };
    let entry = tracked_table(doc, args)?;
    if is_enum {
        entry.insert("is_enum".into(), json!(true));
    } else {
        entry.remove("is_enum");
    }
    Ok(())
}
