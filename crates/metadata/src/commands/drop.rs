//! Removing an object the build reported as inconsistent from the document: what
//! `drop_inconsistent_metadata` does to each, and what `cascade` does to the
//! objects a drop leaves dangling (a relationship to an untracked table, a
//! permission reading through a dropped relationship).

use crate::document::QualifiedName;
use grafton_schema::inconsistent::{Inconsistency, ObjectKind};
use serde_json::{Map, Value};

/// A config key (`name` or `schema.name`) as the document names tables.
fn qualified(key: &str) -> QualifiedName {
    match key.split_once('.') {
        Some((schema, name)) => QualifiedName {
            schema: schema.to_owned(),
            name: name.to_owned(),
        },
        None => QualifiedName {
            schema: "public".to_owned(),
            name: key.to_owned(),
        },
    }
}

/// Removes from `list` the elements whose `field` is `name`; whether any was.
fn remove_named(list: Option<&mut Value>, field: &str, name: &str) -> bool {
    let Some(Value::Array(list)) = list else {
        return false;
    };
    let before = list.len();
    list.retain(|v| v.get(field).and_then(Value::as_str) != Some(name));
    list.len() != before
}

/// The first source's entry under `key` (`tables`, `functions`) whose `field`
/// names `object`, and its index.
fn entry_of<'a>(
    doc: &'a mut Value,
    key: &str,
    field: &str,
    object: &QualifiedName,
) -> Option<(&'a mut Vec<Value>, usize)> {
    let list = doc
        .get_mut("sources")?
        .get_mut(0)?
        .get_mut(key)?
        .as_array_mut()?;
    let i = list
        .iter()
        .position(|e| QualifiedName::read(e.get(field), field).is_ok_and(|t| &t == object))?;
    Some((list, i))
}

fn table_entry<'a>(doc: &'a mut Value, key: &str) -> Option<&'a mut Map<String, Value>> {
    let (list, i) = entry_of(doc, "tables", "table", &qualified(key))?;
    list[i].as_object_mut()
}

/// Removes the object `i` names from `doc`; whether something was removed (the
/// first source itself, or its settings, cannot be).
pub fn object(doc: &mut Value, i: &Inconsistency) -> bool {
    use ObjectKind::*;
    let on_table = |doc: &mut Value, list: &str, field: &str| {
        let Some(table) = i.table.as_deref() else {
            return false;
        };
        let Some(entry) = table_entry(doc, table) else {
            return false;
        };
        let removed = remove_named(entry.get_mut(list), field, &i.name);
        if entry
            .get(list)
            .and_then(Value::as_array)
            .is_some_and(Vec::is_empty)
        {
            entry.remove(list);
        }
        removed
    };
    let top =
        |doc: &mut Value, key: &str, field: &str| remove_named(doc.get_mut(key), field, &i.name);
    let source = |doc: &mut Value, key: &str, field: &str| {
        let list = doc
            .get_mut("sources")
            .and_then(|s| s.get_mut(0))
            .and_then(|s| s.get_mut(key));
        remove_named(list, field, &i.name)
    };
    match i.kind {
        Table => match entry_of(doc, "tables", "table", &qualified(&i.name)) {
            Some((list, at)) => {
                list.remove(at);
                true
            }
            None => false,
        },
        Function => match entry_of(doc, "functions", "function", &qualified(&i.name)) {
            Some((list, at)) => {
                list.remove(at);
                true
            }
            None => false,
        },
        ObjectRelation => on_table(doc, "object_relationships", "name"),
        ArrayRelation => on_table(doc, "array_relationships", "name"),
        SelectPermission => on_table(doc, "select_permissions", "role"),
        InsertPermission => on_table(doc, "insert_permissions", "role"),
        UpdatePermission => on_table(doc, "update_permissions", "role"),
        DeletePermission => on_table(doc, "delete_permissions", "role"),
        ComputedField => on_table(doc, "computed_fields", "name"),
        EventTrigger => on_table(doc, "event_triggers", "name"),
        RemoteRelationship => on_table(doc, "remote_relationships", "name"),
        ApolloFederationConfig => (i.table.as_deref())
            .and_then(|t| table_entry(doc, t))
            .is_some_and(|e| e.remove("apollo_federation_config").is_some()),
        InheritedRole => top(doc, "inherited_roles", "role_name"),
        Action => top(doc, "actions", "name"),
        CronTrigger => top(doc, "cron_triggers", "name"),
        RemoteSchema => top(doc, "remote_schemas", "name"),
        // `remote.role`: that role's permission alone.
        RemoteSchemaPermission => match i.name.rsplit_once('.') {
            Some((remote, role)) => {
                let remotes = doc.get_mut("remote_schemas").and_then(Value::as_array_mut);
                let found = (remotes.into_iter().flatten())
                    .find(|r| r.get("name").and_then(Value::as_str) == Some(remote));
                remove_named(found.and_then(|r| r.get_mut("permissions")), "role", role)
            }
            None => false,
        },
        Endpoint => top(doc, "rest_endpoints", "name"),
        // `Type.relationship`: that relationship alone.
        CustomTypes => match i.name.split_once('.') {
            Some((ty, rel)) => {
                let objects = doc
                    .pointer_mut("/custom_types/objects")
                    .and_then(Value::as_array_mut);
                let object = (objects.into_iter().flatten())
                    .find(|o| o.get("name").and_then(Value::as_str) == Some(ty));
                let relationships = object
                    .and_then(|o| o.get_mut("relationships"))
                    .and_then(Value::as_array_mut);
                relationships.is_some_and(|r| {
                    let before = r.len();
                    r.retain(|x| x.get("name").and_then(Value::as_str) != Some(rel));
                    before != r.len()
                })
            }
            None => doc
                .as_object_mut()
                .is_some_and(|d| d.remove("custom_types").is_some()),
        },
        NativeQuery => source(doc, "native_queries", "root_field_name"),
        LogicalModel => source(doc, "logical_models", "name"),
        // A second source goes whole; the first one stays, whatever it says.
        Source => match doc.get_mut("sources").and_then(Value::as_array_mut) {
            Some(sources) => {
                let at = sources
                    .iter()
                    .skip(1)
                    .position(|s| s.get("name").and_then(Value::as_str) == Some(i.name.as_str()));
                at.map(|at| sources.remove(at + 1)).is_some()
            }
            None => false,
        },
    }
}

/// How Hasura names a dependent object in a `dependency-error`.
pub fn dependent(i: &Inconsistency) -> String {
    let table = i
        .table
        .as_deref()
        .map(|t| qualified(t).display())
        .unwrap_or_default();
    match i.kind {
        ObjectKind::ObjectRelation | ObjectKind::ArrayRelation => {
            format!("relationship {table}.{} in source \"default\"", i.name)
        }
        k if ObjectKind::permission(k.name().trim_end_matches("_permission")).is_some() => {
            let kind = k.name().trim_end_matches("_permission");
            format!("permission {table}.{}.{kind} in source \"default\"", i.name)
        }
        _ => i.describe(),
    }
}
