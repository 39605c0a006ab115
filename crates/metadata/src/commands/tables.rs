//! Tracking tables: `pg_track_table`, `pg_untrack_table`, `pg_set_table_customization`,
//! `pg_set_table_is_enum`.

use crate::document::{list, source, table_index, tracked_table, QualifiedName};
use crate::Refusal;
use serde_json::{json, Map, Value};

/// `pg_track_table` (v1 `{table, is_enum?}` and v2 `{table, configuration?}`).
pub fn track(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let table = QualifiedName::read(args.get("table"), "table")?;
    let tables = list(source(doc, args)?, "tables")?;
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

/// `pg_untrack_table`: the entry goes. What led to it (another table's
/// relationship, a permission reading through one) is found by building the result:
/// a `dependency-error`, or with `cascade` dropped too (`change.rs`).
pub fn untrack(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let table = QualifiedName::read(args.get("table"), "table")?;
    let tables = list(source(doc, args)?, "tables")?;
    let Some(i) = table_index(tables, &table) else {
        return Err(Refusal::new(
            "already-untracked",
            format!("view/table already untracked: \"{}\"", table.display()),
            "$.args",
        ));
    };
    tables.remove(i);
    Ok(())
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
