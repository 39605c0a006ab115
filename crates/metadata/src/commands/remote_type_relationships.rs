//! Relationships from a remote schema's types: Hasura's
//! `create_remote_schema_remote_relationship`,
//! `update_remote_schema_remote_relationship` and
//! `delete_remote_schema_remote_relationship` (`{remote_schema, type_name,
//! name, definition}`), kept on the remote's entry grouped by type as Hasura
//! keeps them. Whether one can be served is decided by building it.

use super::remote_schemas::{missing, position};
use crate::document::{list, text};
use crate::Refusal;
use serde_json::{json, Value};

/// The relationships of the remote's type `type_name`, made a list if absent.
fn of_type<'d>(doc: &'d mut Value, args: &Value) -> Result<&'d mut Vec<Value>, Refusal> {
    let remote = text(args, "remote_schema")?.to_owned();
    let ty = text(args, "type_name")?.to_owned();
    let Some(map) = doc.as_object_mut() else {
        return Err(Refusal::parse("the metadata is not an object"));
    };
    let remotes = list(map, "remote_schemas")?;
    let i = position(remotes, &remote).ok_or_else(|| missing(&remote))?;
    let Some(entry) = remotes[i].as_object_mut() else {
        return Err(Refusal::parse("a remote schema entry is not an object"));
    };
    let groups = list(entry, "remote_relationships")?;
    let at = groups
        .iter()
        .position(|g| g.get("type_name").and_then(Value::as_str) == Some(&ty));
    let at = match at {
        Some(at) => at,
        None => {
            groups.push(json!({"type_name": ty, "relationships": []}));
            groups.len() - 1
        }
    };
    let Some(group) = groups[at].as_object_mut() else {
        return Err(Refusal::parse(
            "a remote relationship group is not an object",
        ));
    };
    list(group, "relationships")
}

fn not_found(args: &Value, name: &str) -> Refusal {
    let ty = args.get("type_name").and_then(Value::as_str).unwrap_or("?");
    Refusal::new(
        "not-exists",
        format!("remote relationship \"{name}\" of type \"{ty}\" does not exist"),
        "$.args",
    )
}

/// `create_remote_schema_remote_relationship` / `update_…`.
pub fn put(doc: &mut Value, args: &Value, update: bool) -> Result<(), Refusal> {
    let name = text(args, "name")?.to_owned();
    let Some(definition) = args.get("definition").cloned() else {
        return Err(Refusal::parse("key \"definition\" not found"));
    };
    let rels = of_type(doc, args)?;
    let at = (rels.iter()).position(|r| r.get("name").and_then(Value::as_str) == Some(&name));
    let rel = json!({"name": name, "definition": definition});
    match (at, update) {
        (Some(i), true) => rels[i] = rel,
        (None, false) => rels.push(rel),
        (Some(_), false) => {
            return Err(Refusal::new(
                "already-exists",
                format!("remote relationship \"{name}\" already exists"),
                "$.args",
            ))
        }
        (None, true) => return Err(not_found(args, &name)),
    }
    Ok(())
}

/// `delete_remote_schema_remote_relationship`.
pub fn delete(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let name = text(args, "name")?.to_owned();
    let rels = of_type(doc, args)?;
    let before = rels.len();
    rels.retain(|r| r.get("name").and_then(Value::as_str) != Some(&name));
    if rels.len() == before {
        return Err(not_found(args, &name));
    }
    Ok(())
}
