//! Functions and computed fields: `pg_track_function` (v2 args),
//! `pg_untrack_function`, `pg_create_function_permission`,
//! `pg_drop_function_permission`, `pg_add_computed_field`, `pg_drop_computed_field`.
//! Whether a function exists, returns a tracked table or takes the table's row is
//! checked by building the result.

use crate::document::{index_of, list, source, text, tracked_table, QualifiedName};
use crate::Refusal;
use serde_json::{json, Map, Value};

fn source_name(args: &Value) -> &str {
    args.get("source")
        .and_then(Value::as_str)
        .unwrap_or("default")
}

/// The entry of the function `args.function`, or Hasura's `not-exists`.
fn tracked<'a>(doc: &'a mut Value, args: &Value) -> Result<&'a mut Map<String, Value>, Refusal> {
    let function = QualifiedName::read(args.get("function"), "function")?;
    let source_name = source_name(args).to_owned();
    let functions = list(source(doc, args)?, "functions")?;
    let Some(i) = index_of(functions, "function", &function) else {
        return Err(Refusal::new(
            "not-exists",
            format!(
                "function \"{}\" does not exist in source: {source_name}",
                function.display()
            ),
            "$.args",
        ));
    };
    functions[i]
        .as_object_mut()
        .ok_or_else(|| Refusal::new("unexpected", "a function entry is not an object", "$.args"))
}

/// `pg_track_function`: `{function, configuration?, comment?}`.
pub fn track(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let function = QualifiedName::read(args.get("function"), "function")?;
    let functions = list(source(doc, args)?, "functions")?;
    if index_of(functions, "function", &function).is_some() {
        return Err(Refusal::new(
            "already-tracked",
            format!("function already tracked: \"{}\"", function.display()),
            "$.args",
        ));
    }
    let mut entry = Map::new();
    entry.insert("function".into(), function.to_json());
    for key in ["configuration", "comment"] {
        if let Some(v) = args.get(key).filter(|v| !v.is_null()) {
            entry.insert(key.into(), v.clone());
        }
    }
    functions.push(Value::Object(entry));
    Ok(())
}

/// `pg_untrack_function`: its permissions go with it.
pub fn untrack(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    tracked(doc, args)?;
    let function = QualifiedName::read(args.get("function"), "function")?;
    let functions = list(source(doc, args)?, "functions")?;
    if let Some(i) = index_of(functions, "function", &function) {
        functions.remove(i);
    }
    Ok(())
}

fn permission_position(entry: &Map<String, Value>, role: &str) -> Option<usize> {
    let list = entry.get("permissions")?.as_array()?;
    list.iter()
        .position(|p| p.get("role").and_then(Value::as_str) == Some(role))
}

/// `pg_create_function_permission`: `{function, role}`.
pub fn permit(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let role = text(args, "role")?.to_owned();
    let source_name = source_name(args).to_owned();
    let function = QualifiedName::read(args.get("function"), "function")?.display();
    let entry = tracked(doc, args)?;
    if permission_position(entry, &role).is_some() {
        return Err(Refusal::new(
            "already-exists",
            format!("permission of role \"{role}\" already exists for function \"{function}\" in source: \"{source_name}\""),
            "$.args",
        ));
    }
    list(entry, "permissions")?.push(json!({"role": role}));
    Ok(())
}

/// `pg_drop_function_permission`: `{function, role}`.
pub fn forbid(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let role = text(args, "role")?.to_owned();
    let source_name = source_name(args).to_owned();
    let function = QualifiedName::read(args.get("function"), "function")?.display();
    let entry = tracked(doc, args)?;
    let Some(i) = permission_position(entry, &role) else {
        return Err(Refusal::new(
            "not-exists",
            format!("permission of role \"{role}\" does not exist for function \"{function}\" in source: \"{source_name}\""),
            "$.args",
        ));
    };
    list(entry, "permissions")?.remove(i);
    Ok(())
}

/// `pg_add_computed_field`: `{table, name, definition: {function, table_argument?,
/// session_argument?}, comment?}`; one of the same name is replaced, as in Hasura.
pub fn add_computed(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let name = text(args, "name")?.to_owned();
    let Some(definition) = args
        .get("definition")
        .filter(|d| d.get("function").is_some())
    else {
        return Err(Refusal::parse(
            "key \"definition\" (with its \"function\") not found",
        ));
    };
    let mut field = json!({"name": name, "definition": definition});
    if let Some(c) = args.get("comment").filter(|c| c.is_string()) {
        field["comment"] = c.clone();
    }
    let entry = tracked_table(doc, args)?;
    let fields = list(entry, "computed_fields")?;
    fields.retain(|f| f.get("name").and_then(Value::as_str) != Some(name.as_str()));
    fields.push(field);
    Ok(())
}

/// `pg_drop_computed_field`: `{table, name, cascade?}`.
pub fn drop_computed(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let name = text(args, "name")?.to_owned();
    let entry = tracked_table(doc, args)?;
    let fields = list(entry, "computed_fields")?;
    let Some(i) =
        (fields.iter()).position(|f| f.get("name").and_then(Value::as_str) == Some(name.as_str()))
    else {
        return Err(Refusal::new(
            "not-exists",
            format!("computed field \"{name}\" does not exist"),
            "$.args.name",
        ));
    };
    fields.remove(i);
    if fields.is_empty() {
        entry.remove("computed_fields");
    }
    Ok(())
}
