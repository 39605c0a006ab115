//! A table's relationships: `pg_create_object_relationship`,
//! `pg_create_array_relationship`, `pg_drop_relationship`, `pg_rename_relationship`,
//! `pg_set_relationship_comment`.

use crate::document::{text, tracked_table};
use crate::Refusal;
use serde_json::{json, Map, Value};

const KINDS: [&str; 2] = ["object_relationships", "array_relationships"];

/// Where relationship `name` is in a table's entry: its list and index.
fn find(entry: &Map<String, Value>, name: &str) -> Option<(&'static str, usize)> {
    KINDS.iter().find_map(|kind| {
        let list = entry.get(*kind)?.as_array()?;
        let i = list
            .iter()
            .position(|r| r.get("name").and_then(Value::as_str) == Some(name))?;
        Some((*kind, i))
    })
}

fn missing(name: &str) -> Refusal {
    Refusal::new(
        "not-exists",
        format!("relationship \"{name}\" does not exist"),
        "$.args",
    )
}

/// `pg_create_object_relationship` / `pg_create_array_relationship`.
pub fn create(doc: &mut Value, args: &Value, kind: &str) -> Result<(), Refusal> {
    let name = text(args, "name")?.to_owned();
    let Some(using) = args.get("using").filter(|u| u.is_object()) else {
        return Err(Refusal::parse("key \"using\" not found"));
    };
    let table = crate::document::QualifiedName::read(args.get("table"), "table")?;
    let entry = tracked_table(doc, args)?;
    if find(entry, &name).is_some() {
        return Err(Refusal::new(
            "already-exists",
            format!(
                "field with name \"{name}\" already exists in table \"{}\"",
                table.display()
            ),
            "$.args",
        ));
    }
    let mut rel = json!({"name": name, "using": using});
    if let Some(c) = args.get("comment").filter(|c| c.is_string()) {
        rel["comment"] = c.clone();
    }
    crate::document::list(entry, kind)?.push(rel);
    Ok(())
}

/// `pg_drop_relationship`. Permissions that read through it are checked when the
/// new metadata is built (a rule naming a missing relationship is refused).
pub fn drop(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let name = text(args, "relationship")?.to_owned();
    let entry = tracked_table(doc, args)?;
    let (kind, i) = find(entry, &name).ok_or_else(|| missing(&name))?;
    if let Some(Value::Array(list)) = entry.get_mut(kind) {
        list.remove(i);
    }
    Ok(())
}

/// `pg_rename_relationship`.
pub fn rename(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let name = text(args, "name")?.to_owned();
    let new_name = text(args, "new_name")?.to_owned();
    let table = crate::document::QualifiedName::read(args.get("table"), "table")?;
    let entry = tracked_table(doc, args)?;
    if find(entry, &new_name).is_some() {
        return Err(Refusal::new(
            "already-exists",
            format!(
                "cannot rename relationship \"{name}\" to \"{new_name}\" in table \"{}\" as a column/relationship with the name already exists",
                table.display()
            ),
            "$.args",
        ));
    }
    let (kind, i) = find(entry, &name).ok_or_else(|| missing(&name))?;
    if let Some(Value::Array(list)) = entry.get_mut(kind) {
        list[i]["name"] = json!(new_name);
    }
    // The table's own rules that read through it follow the new name, as Hasura's
    // do (another table's rules reaching it through a relationship are checked by
    // the build).
    for key in PERMISSIONS {
        let Some(Value::Array(permissions)) = entry.get_mut(key) else {
            continue;
        };
        for p in permissions.iter_mut() {
            for rule in ["filter", "check"] {
                if let Some(exp) = p.get_mut("permission").and_then(|b| b.get_mut(rule)) {
                    rename_field(exp, &name, &new_name);
                }
            }
        }
    }
    Ok(())
}

const PERMISSIONS: [&str; 4] = [
    "select_permissions",
    "insert_permissions",
    "update_permissions",
    "delete_permissions",
];

/// Renames the field `from` in a boolean expression over one table: its keys, and
/// those of its `_and`, `_or` and `_not` (which stay on that table).
fn rename_field(exp: &mut Value, from: &str, to: &str) {
    match exp {
        Value::Array(items) => items.iter_mut().for_each(|e| rename_field(e, from, to)),
        Value::Object(map) => {
            if let Some(v) = map.remove(from) {
                map.insert(to.to_owned(), v);
            }
            for key in ["_and", "_or", "_not"] {
                if let Some(inner) = map.get_mut(key) {
                    rename_field(inner, from, to);
                }
            }
        }
        _ => {}
    }
}

/// `pg_set_relationship_comment` (`comment` absent or null removes it).
pub fn comment(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let name = text(args, "name")?.to_owned();
    let comment = args.get("comment").cloned().unwrap_or(Value::Null);
    let entry = tracked_table(doc, args)?;
    let (kind, i) = find(entry, &name).ok_or_else(|| missing(&name))?;
    if let Some(Value::Array(list)) = entry.get_mut(kind) {
        match (comment, list[i].as_object_mut()) {
            (Value::Null, Some(r)) => {
                r.remove("comment");
            }
            (c, Some(r)) => {
                r.insert("comment".into(), c);
            }
            _ => {}
        }
    }
    Ok(())
}

/// `pg_create_remote_relationship` / `pg_update_remote_relationship` (and
/// Hasura's older `create_remote_relationship` / `update_remote_relationship`):
/// `{name, table, definition}`, or the older form with the definition's keys
/// (`remote_schema`, `hasura_fields`, `remote_field`) beside `name`.
pub fn put_remote(doc: &mut Value, args: &Value, update: bool) -> Result<(), Refusal> {
    let name = text(args, "name")?.to_owned();
    let definition = match args.get("definition") {
        Some(d) => d.clone(),
        None => {
            let mut d = args.as_object().cloned().unwrap_or_default();
            for key in ["name", "table", "source"] {
                d.remove(key);
            }
            Value::Object(d)
        }
    };
    // Read as the build reads it: a definition it cannot read is refused now.
    grafton_schema::config::RemoteRelationshipConfig::try_from(definition.clone())
        .map_err(|why| Refusal::new("parse-failed", why, "$.args"))?;
    let table = crate::document::QualifiedName::read(args.get("table"), "table")?;
    let entry = tracked_table(doc, args)?;
    let list = crate::document::list(entry, "remote_relationships")?;
    let at = list
        .iter()
        .position(|r| r.get("name").and_then(Value::as_str) == Some(&name));
    let rel = json!({"name": name, "definition": definition});
    match (at, update) {
        (Some(i), true) => list[i] = rel,
        (None, false) => list.push(rel),
        (Some(_), false) => {
            return Err(Refusal::new(
                "already-exists",
                format!(
                    "remote relationship with name \"{name}\" already exists in table \"{}\"",
                    table.display()
                ),
                "$.args",
            ))
        }
        (None, true) => return Err(no_remote(&name, &table)),
    }
    Ok(())
}

/// `pg_delete_remote_relationship` (and `delete_remote_relationship`).
pub fn delete_remote(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let name = text(args, "name")?.to_owned();
    let table = crate::document::QualifiedName::read(args.get("table"), "table")?;
    let entry = tracked_table(doc, args)?;
    let list = crate::document::list(entry, "remote_relationships")?;
    let before = list.len();
    list.retain(|r| r.get("name").and_then(Value::as_str) != Some(&name));
    if list.len() == before {
        return Err(no_remote(&name, &table));
    }
    Ok(())
}

fn no_remote(name: &str, table: &crate::document::QualifiedName) -> Refusal {
    Refusal::new(
        "not-exists",
        format!(
            "remote relationship with name \"{name}\" does not exist in table \"{}\"",
            table.display()
        ),
        "$.args",
    )
}
