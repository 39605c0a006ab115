//! Actions in the metadata: `create_action`, `update_action`, `drop_action`,
//! `create_action_permission`, `drop_action_permission` and `set_custom_types`,
//! with Hasura's args and refusals. Whether the result can be served (its types
//! known, its handler's environment set) is decided by building it.

use crate::document::{list, text};
use crate::Refusal;
use grafton_schema::config::{ActionConfig, CustomTypes};
use serde_json::{Map, Value};

/// The document's actions, made a list if absent.
fn actions(doc: &mut Value) -> Result<&mut Vec<Value>, Refusal> {
    let Some(map) = doc.as_object_mut() else {
        return Err(Refusal::new(
            "unexpected",
            "the metadata is not an object",
            "$",
        ));
    };
    list(map, "actions")
}

fn position(actions: &[Value], name: &str) -> Option<usize> {
    (actions.iter()).position(|a| a.get("name").and_then(Value::as_str) == Some(name))
}

fn missing(name: &str) -> Refusal {
    Refusal::new(
        "not-exists",
        format!("action with name \"{name}\" does not exist"),
        "$.args",
    )
}

/// The action `{name, definition, comment?}` as the document keeps it, read as
/// the start-up reader reads it (a wrong field is refused with its path).
fn action(args: &Value, permissions: Option<Value>) -> Result<(String, Value), Refusal> {
    let name = text(args, "name")?.to_owned();
    let mut action = Map::new();
    action.insert("name".into(), Value::String(name.clone()));
    let Some(definition) = args.get("definition") else {
        return Err(Refusal::parse("key \"definition\" not found"));
    };
    action.insert("definition".into(), definition.clone());
    if let Some(c) = args.get("comment").filter(|c| !c.is_null()) {
        action.insert("comment".into(), c.clone());
    }
    if let Some(p) = permissions {
        action.insert("permissions".into(), p);
    }
    let action = Value::Object(action);
    serde_json::from_value::<ActionConfig>(action.clone())
        .map_err(|e| Refusal::new("parse-failed", e.to_string(), "$.args"))?;
    Ok((name, action))
}

/// `create_action`: `{name, definition, comment?}`.
pub fn create(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let (name, action) = action(args, None)?;
    let actions = actions(doc)?;
    if position(actions, &name).is_some() {
        return Err(Refusal::new(
            "already-exists",
            format!("action with name \"{name}\" already exists"),
            "$.args",
        ));
    }
    actions.push(action);
    Ok(())
}

/// `update_action`: `{name, definition, comment?}`, its permissions kept (and
/// its comment replaced, absent or not, as Hasura's).
pub fn update(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let name = text(args, "name")?.to_owned();
    let actions = actions(doc)?;
    let Some(i) = position(actions, &name) else {
        return Err(missing(&name));
    };
    let permissions = actions[i].get("permissions").cloned();
    actions[i] = action(args, permissions)?.1;
    Ok(())
}

/// `drop_action`: `{name, clear_data?}` (its permissions go with it).
pub fn drop(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let name = text(args, "name")?;
    let actions = actions(doc)?;
    let Some(i) = position(actions, name) else {
        return Err(missing(name));
    };
    actions.remove(i);
    Ok(())
}

/// The permissions of the action `args.action`, made a list if absent.
fn permissions_of<'d>(doc: &'d mut Value, name: &str) -> Result<&'d mut Vec<Value>, Refusal> {
    let actions = actions(doc)?;
    let Some(i) = position(actions, name) else {
        return Err(missing(name));
    };
    let Some(action) = actions[i].as_object_mut() else {
        return Err(missing(name));
    };
    list(action, "permissions")
}

/// `create_action_permission`: `{action, role, definition?, comment?}`.
pub fn permit(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let name = text(args, "action")?.to_owned();
    let role = text(args, "role")?.to_owned();
    let permissions = permissions_of(doc, &name)?;
    if (permissions.iter()).any(|p| p.get("role").and_then(Value::as_str) == Some(&role)) {
        return Err(Refusal::new(
            "already-exists",
            format!("permission for role \"{role}\" is already defined on \"{name}\""),
            "$.args",
        ));
    }
    let mut permission = Map::new();
    permission.insert("role".into(), Value::String(role));
    if let Some(c) = args.get("comment").filter(|c| !c.is_null()) {
        permission.insert("comment".into(), c.clone());
    }
    permissions.push(Value::Object(permission));
    Ok(())
}

/// `drop_action_permission`: `{action, role}`.
pub fn forbid(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let name = text(args, "action")?.to_owned();
    let role = text(args, "role")?;
    let permissions = permissions_of(doc, &name)?;
    let before = permissions.len();
    permissions.retain(|p| p.get("role").and_then(Value::as_str) != Some(role));
    if permissions.len() == before {
        return Err(Refusal::new(
            "not-exists",
            format!("permission for role: \"{role}\" is not defined on \"{name}\""),
            "$.args",
        ));
    }
    Ok(())
}

/// `set_custom_types`: `{input_objects?, objects?, scalars?, enums?}`, replacing
/// every custom type.
pub fn set_custom_types(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    serde_json::from_value::<CustomTypes>(args.clone())
        .map_err(|e| Refusal::new("parse-failed", e.to_string(), "$.args"))?;
    let Some(map) = doc.as_object_mut() else {
        return Err(Refusal::new(
            "unexpected",
            "the metadata is not an object",
            "$",
        ));
    };
    map.insert("custom_types".into(), args.clone());
    Ok(())
}

/// The actions `body` dropped whose calls go too (`drop_action` with
/// `clear_data`, true unless said otherwise, as Hasura's), in bulks too.
pub fn cleared(body: &Value) -> Vec<String> {
    let kind = body.get("type").and_then(Value::as_str).unwrap_or_default();
    let args = body.get("args").unwrap_or(&Value::Null);
    match kind {
        "drop_action" if args.get("clear_data") != Some(&Value::Bool(false)) => {
            (args.get("name").and_then(Value::as_str).map(str::to_owned))
                .into_iter()
                .collect()
        }
        "bulk" | "bulk_atomic" => (args.as_array().into_iter().flatten())
            .flat_map(cleared)
            .collect(),
        _ => Vec::new(),
    }
}
