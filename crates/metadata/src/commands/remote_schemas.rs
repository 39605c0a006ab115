//! Remote schemas in the metadata: `add_remote_schema`, `update_remote_schema`
//! and `remove_remote_schema`, with Hasura's args and refusals. Whether the
//! result can be served (the remote introspected, its types and fields clashing
//! with nothing) is decided by building it.

use crate::document::{list, text};
use crate::Refusal;
use grafton_schema::config::RemoteSchemaConfig;
use serde_json::{Map, Value};

/// The document's remote schemas, made a list if absent.
fn remotes(doc: &mut Value) -> Result<&mut Vec<Value>, Refusal> {
    let Some(map) = doc.as_object_mut() else {
        return Err(Refusal::new(
            "unexpected",
            "the metadata is not an object",
            "$",
        ));
    };
    list(map, "remote_schemas")
}

/// Where the remote schema `name` is in `remotes`.
pub(crate) fn position(remotes: &[Value], name: &str) -> Option<usize> {
    (remotes.iter()).position(|r| r.get("name").and_then(Value::as_str) == Some(name))
}

/// Hasura's refusal for a remote schema that does not exist.
pub(crate) fn missing(name: &str) -> Refusal {
    Refusal::new(
        "not-exists",
        format!("remote schema with name \"{name}\" doesn't exist"),
        "$.args",
    )
}

/// The remote schema `{name, definition, comment?}` as the document keeps it,
/// with `kept` (its permissions), read as the start-up reader reads it.
fn remote(args: &Value, kept: Option<Value>) -> Result<(String, Value), Refusal> {
    let name = text(args, "name")?.to_owned();
    let Some(definition) = args.get("definition") else {
        return Err(Refusal::parse("key \"definition\" not found"));
    };
    let mut remote = Map::new();
    remote.insert("name".into(), Value::String(name.clone()));
    remote.insert("definition".into(), definition.clone());
    if let Some(c) = args.get("comment").filter(|c| !c.is_null()) {
        remote.insert("comment".into(), c.clone());
    }
    if let Some(p) = kept {
        remote.insert("permissions".into(), p);
    }
    let remote = Value::Object(remote);
    let parsed = serde_json::from_value::<RemoteSchemaConfig>(remote.clone())
        .map_err(|e| Refusal::new("parse-failed", e.to_string(), "$.args"))?;
    grafton_remote::forward::url(&parsed)
        .map_err(|e| Refusal::new("invalid-params", e, "$.args.definition"))?;
    Ok((name, remote))
}

/// `add_remote_schema`: `{name, definition, comment?}`.
pub fn add(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let (name, remote) = remote(args, None)?;
    let remotes = remotes(doc)?;
    if position(remotes, &name).is_some() {
        return Err(Refusal::new(
            "already-exists",
            format!("remote schema with name \"{name}\" already exists"),
            "$.args",
        ));
    }
    remotes.push(remote);
    Ok(())
}

/// `update_remote_schema`: `{name, definition, comment?}`, its permissions and
/// remote relationships kept.
pub fn update(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let name = text(args, "name")?.to_owned();
    let remotes = remotes(doc)?;
    let Some(i) = position(remotes, &name) else {
        return Err(missing(&name));
    };
    // Its permissions and relationships are kept (nothing of the user's
    // metadata goes without a command that says so).
    let kept = remotes[i].clone();
    let mut updated = remote(args, kept.get("permissions").cloned())?.1;
    if let (Some(rels), Some(o)) = (kept.get("remote_relationships"), updated.as_object_mut()) {
        o.insert("remote_relationships".into(), rels.clone());
    }
    remotes[i] = updated;
    Ok(())
}

/// `remove_remote_schema`: `{name}` (its permissions go with it).
pub fn remove(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let name = text(args, "name")?;
    let remotes = remotes(doc)?;
    let Some(i) = position(remotes, name) else {
        return Err(Refusal::new(
            "not-exists",
            "no such remote schema",
            "$.args",
        ));
    };
    remotes.remove(i);
    Ok(())
}
