//! A role's permissions on a table: `pg_create_{select,insert,update,delete}_permission`,
//! `pg_drop_*_permission`, `pg_set_permission_comment`. The rules themselves are
//! checked when the new metadata is built, by the reader that checks them at start.

use crate::document::{text, tracked_table};
use crate::Refusal;
use serde_json::{json, Value};

/// The entry's list for a permission type (`select` → `select_permissions`).
pub fn list_key(kind: &str) -> Result<&'static str, Refusal> {
    Ok(match kind {
        "select" => "select_permissions",
        "insert" => "insert_permissions",
        "update" => "update_permissions",
        "delete" => "delete_permissions",
        other => {
            return Err(Refusal::parse(format!(
                "unknown permission type \"{other}\": expected select, insert, update or delete"
            )))
        }
    })
}

fn position(list: &[Value], role: &str) -> Option<usize> {
    list.iter()
        .position(|p| p.get("role").and_then(Value::as_str) == Some(role))
}

/// `pg_create_<kind>_permission`.
pub fn create(doc: &mut Value, args: &Value, kind: &str) -> Result<(), Refusal> {
    let role = text(args, "role")?.to_owned();
    let Some(permission) = args.get("permission").filter(|p| p.is_object()) else {
        return Err(Refusal::parse("key \"permission\" not found"));
    };
    let key = list_key(kind)?;
    let entry = tracked_table(doc, args)?;
    let list = crate::document::list(entry, key)?;
    if position(list, &role).is_some() {
        return Err(Refusal::new(
            "already-exists",
            format!(
                "{kind} permission already defined on table \"{}\" with role \"{role}\"",
                table_name(args)
            ),
            "$.args",
        ));
    }
    let mut p = json!({"role": role, "permission": permission});
    if let Some(c) = args.get("comment").filter(|c| c.is_string()) {
        p["comment"] = c.clone();
    }
    list.push(p);
    Ok(())
}

fn table_name(args: &Value) -> String {
    crate::document::QualifiedName::read(args.get("table"), "table")
        .map(|t| t.display())
        .unwrap_or_default()
}

fn missing(kind: &str, role: &str, args: &Value) -> Refusal {
    Refusal::new(
        "permission-denied",
        format!(
            "{kind} permission on \"{}\" for role \"{role}\" does not exist",
            table_name(args)
        ),
        "$.args",
    )
}

/// `pg_drop_<kind>_permission`.
pub fn drop(doc: &mut Value, args: &Value, kind: &str) -> Result<(), Refusal> {
    let role = text(args, "role")?.to_owned();
    let key = list_key(kind)?;
    let entry = tracked_table(doc, args)?;
    let Some(Value::Array(list)) = entry.get_mut(key) else {
        return Err(missing(kind, &role, args));
    };
    let i = position(list, &role).ok_or_else(|| missing(kind, &role, args))?;
    list.remove(i);
    Ok(())
}

/// `pg_set_permission_comment` (`{table, role, permission, comment}`; Hasura's
/// docs name the type `type`, its server reads `permission`: both are read).
pub fn comment(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let role = text(args, "role")?.to_owned();
    let kind = text(args, "permission")
        .or_else(|_| text(args, "type"))?
        .to_owned();
    let key = list_key(&kind)?;
    let comment = args.get("comment").cloned().unwrap_or(Value::Null);
    let entry = tracked_table(doc, args)?;
    let Some(Value::Array(list)) = entry.get_mut(key) else {
        return Err(missing(&kind, &role, args));
    };
    let i = position(list, &role).ok_or_else(|| missing(&kind, &role, args))?;
    if let Some(p) = list[i].as_object_mut() {
        match comment {
            Value::Null => {
                p.remove("comment");
            }
            c => {
                p.insert("comment".into(), c);
            }
        }
    }
    Ok(())
}
