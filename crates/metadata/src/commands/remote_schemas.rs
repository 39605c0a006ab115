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

/// The remote schema `args.remote_schema`'s permissions, made a list if absent.
fn permissions_of<'d>(doc: &'d mut Value, args: &Value) -> Result<&'d mut Vec<Value>, Refusal> {
    let name = text(args, "remote_schema")?.to_owned();
    let remotes = remotes(doc)?;
    let Some(i) = position(remotes, &name) else {
        return Err(Refusal::new(
            "not-exists",
            format!("remote schema \"{name}\" doesn't exist"),
            "$.args",
        ));
    };
    let Some(remote) = remotes[i].as_object_mut() else {
        return Err(missing(&name));
    };
    list(remote, "permissions")
}

/// `add_remote_schema_permissions`: `{remote_schema, role, definition: {schema},
/// comment?}`.
pub fn permit(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let role = text(args, "role")?.to_owned();
    let remote = text(args, "remote_schema")?.to_owned();
    if role == "admin" {
        return Err(Refusal::new(
            "constraint-violation",
            "cannot define permission for admin role",
            "$.args",
        ));
    }
    if role.trim().is_empty() {
        return Err(Refusal::parse("role: expected a non-empty role name"));
    }
    let mut permission = Map::new();
    permission.insert("role".into(), Value::String(role.clone()));
    let definition = args.get("definition").cloned().unwrap_or(Value::Null);
    permission.insert("definition".into(), definition);
    if let Some(c) = args.get("comment").filter(|c| !c.is_null()) {
        permission.insert("comment".into(), c.clone());
    }
    let permission = Value::Object(permission);
    serde_json::from_value::<grafton_schema::config::RemoteSchemaPermission>(permission.clone())
        .map_err(|e| Refusal::new("parse-failed", e.to_string(), "$.args"))?;
    let permissions = permissions_of(doc, args)?;
    if permissions
        .iter()
        .any(|p| p.get("role").and_then(Value::as_str) == Some(&role))
    {
        return Err(Refusal::new(
            "already-exists",
            format!(
                "permissions for role: \"{role}\" for remote schema:\"{remote}\" already exists"
            ),
            "$.args",
        ));
    }
    permissions.push(permission);
    Ok(())
}

/// `drop_remote_schema_permissions`: `{remote_schema, role}`.
pub fn forbid(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let role = text(args, "role")?.to_owned();
    let remote = text(args, "remote_schema")?.to_owned();
    let permissions = permissions_of(doc, args)?;
    let before = permissions.len();
    permissions.retain(|p| p.get("role").and_then(Value::as_str) != Some(&role));
    if permissions.len() == before {
        return Err(Refusal::new(
            "not-exists",
            format!(
                "permissions for role: \"{role}\" for remote schema:\"{remote}\" doesn't exist"
            ),
            "$.args",
        ));
    }
    Ok(())
}
