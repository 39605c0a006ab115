//! A metadata directory's `actions.graphql`, merged into the document as the
//! Hasura CLI merges it before it applies metadata: `actions.yaml` holds each
//! action's handler, headers and permissions and each custom object's
//! relationships; the SDL holds the actions' arguments and output types (fields
//! of `Query` and `Mutation`, or their extensions) and the custom types' fields.

use apollo_compiler::ast::{self, Definition};
use serde_json::{json, Map, Value};

/// Merges the SDL `text` into `doc`'s `actions` and `custom_types`.
pub(super) fn merge(text: &str, doc: &mut Map<String, Value>) -> Result<(), String> {
    // `hasura init` writes an empty one; comments alone say nothing either.
    let said = text.lines().any(|l| {
        let l = l.trim();
        !l.is_empty() && !l.starts_with('#')
    });
    if !said {
        return Ok(());
    }
    let parsed = ast::Document::parse(text, "actions.graphql").map_err(|e| e.errors.to_string())?;
    let mut fields: Vec<(&str, &ast::FieldDefinition)> = Vec::new();
    let mut types = Map::new();
    let mut push = |key: &str, entry: Value| {
        let list = types.entry(key).or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(list) = list {
            list.push(entry);
        }
    };
    for definition in &parsed.definitions {
        match definition {
            Definition::ObjectTypeDefinition(o) if is_root(&o.name) => {
                fields.extend(o.fields.iter().map(|f| (root_kind(&o.name), &**f)));
            }
            Definition::ObjectTypeExtension(o) if is_root(&o.name) => {
                fields.extend(o.fields.iter().map(|f| (root_kind(&o.name), &**f)));
            }
            Definition::ObjectTypeDefinition(o) => push(
                "objects",
                json!({"name": o.name.as_str(), "description": describe(&o.description),
                       "fields": o.fields.iter().map(|f| field(&f.name, &f.ty, &f.description))
                           .collect::<Vec<_>>()}),
            ),
            Definition::InputObjectTypeDefinition(o) => push(
                "input_objects",
                json!({"name": o.name.as_str(), "description": describe(&o.description),
                       "fields": o.fields.iter().map(|f| field(&f.name, &f.ty, &f.description))
                           .collect::<Vec<_>>()}),
            ),
            Definition::EnumTypeDefinition(e) => push(
                "enums",
                json!({"name": e.name.as_str(), "description": describe(&e.description),
                       "values": e.values.iter().map(|v| json!({
                           "value": v.value.as_str(), "description": describe(&v.description),
                           "is_deprecated": v.directives.get("deprecated").is_some()}))
                           .collect::<Vec<_>>()}),
            ),
            Definition::ScalarTypeDefinition(s) => push(
                "scalars",
                json!({"name": s.name.as_str(), "description": describe(&s.description)}),
            ),
            other => {
                return Err(format!(
                    "actions.graphql: {} definitions are not action types",
                    kind_of(other)
                ))
            }
        }
    }
    merge_actions(doc, &fields)?;
    merge_types(doc, types)
}

fn is_root(name: &str) -> bool {
    matches!(name, "Query" | "Mutation")
}

fn root_kind(name: &str) -> &'static str {
    match name {
        "Query" => "query",
        _ => "mutation",
    }
}

fn describe(d: &Option<apollo_compiler::Node<str>>) -> Value {
    d.as_ref()
        .map_or(Value::Null, |d| Value::String(d.to_string()))
}

fn field(name: &str, ty: &ast::Type, description: &Option<apollo_compiler::Node<str>>) -> Value {
    json!({"name": name, "type": ty.to_string(), "description": describe(description)})
}

fn kind_of(d: &Definition) -> &'static str {
    match d {
        Definition::InterfaceTypeDefinition(_) | Definition::InterfaceTypeExtension(_) => {
            "interface"
        }
        Definition::UnionTypeDefinition(_) | Definition::UnionTypeExtension(_) => "union",
        Definition::DirectiveDefinition(_) => "directive",
        Definition::SchemaDefinition(_) | Definition::SchemaExtension(_) => "schema",
        Definition::OperationDefinition(_) | Definition::FragmentDefinition(_) => "operation",
        _ => "type extension",
    }
}

/// Each action of `actions.yaml` takes its arguments, output type and kind of
/// root from its field in the SDL; an action without one is an error, as the
/// CLI's.
fn merge_actions(
    doc: &mut Map<String, Value>,
    fields: &[(&str, &ast::FieldDefinition)],
) -> Result<(), String> {
    let listed = |name: &str| {
        let actions = doc.get("actions").and_then(Value::as_array);
        (actions.into_iter().flatten()).any(|a| a.get("name").and_then(Value::as_str) == Some(name))
    };
    // An SDL action without its yaml entry has no handler: kept (as the CLI
    // keeps it), so that it is reported rather than vanishing.
    let orphans: Vec<Value> = (fields.iter())
        .filter(|(_, f)| !listed(&f.name))
        .map(|(_, f)| json!({"name": f.name.as_str()}))
        .collect();
    if !orphans.is_empty() {
        let actions = doc
            .entry("actions")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(list) = actions {
            list.extend(orphans);
        }
    }
    let Some(Value::Array(actions)) = doc.get_mut("actions") else {
        return Ok(());
    };
    for action in actions.iter_mut() {
        let Some(name) = action
            .get("name")
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            continue;
        };
        let Some((root, f)) = fields.iter().find(|(_, f)| f.name == name.as_str()) else {
            return Err(format!(
                "actions.graphql: action '{name}' of actions.yaml has no field in type Query or Mutation"
            ));
        };
        let Some(object) = action.as_object_mut() else {
            continue;
        };
        if object.get("comment").is_none_or(Value::is_null) {
            if let Some(d) = &f.description {
                object.insert("comment".into(), Value::String(d.to_string()));
            }
        }
        let definition = object
            .entry("definition")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(definition) = definition {
            let arguments: Vec<Value> = (f.arguments.iter())
                .map(|a| field(&a.name, &a.ty, &a.description))
                .collect();
            definition.insert("arguments".into(), Value::Array(arguments));
            definition.insert("output_type".into(), Value::String(f.ty.to_string()));
            definition.insert("type".into(), Value::String((*root).to_owned()));
        }
        strip_nulls(action);
    }
    Ok(())
}

/// The SDL's types become `custom_types`, each object keeping the relationships
/// `actions.yaml` gives it.
fn merge_types(doc: &mut Map<String, Value>, types: Map<String, Value>) -> Result<(), String> {
    let yaml = doc.remove("custom_types").unwrap_or(Value::Null);
    // A yaml entry with no SDL type would otherwise vanish.
    for (key, list) in yaml.as_object().into_iter().flatten() {
        for entry in list.as_array().into_iter().flatten() {
            let name = entry.get("name").and_then(Value::as_str).unwrap_or("?");
            let in_sdl = (types
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten())
            .any(|t| t.get("name").and_then(Value::as_str) == Some(name));
            if !in_sdl {
                return Err(format!(
                    "actions.yaml: custom type '{name}' ({key}) is not defined in actions.graphql"
                ));
            }
        }
    }
    let relationships = |name: &str| -> Option<Value> {
        let objects = yaml.get("objects")?.as_array()?;
        let object = objects
            .iter()
            .find(|o| o.get("name") == Some(&json!(name)))?;
        object
            .get("relationships")
            .filter(|r| !r.is_null())
            .cloned()
    };
    let mut merged = Map::new();
    for (key, list) in types {
        let Value::Array(mut list) = list else {
            continue;
        };
        for entry in list.iter_mut() {
            strip_nulls(entry);
            if key == "objects" {
                let name = entry["name"].as_str().unwrap_or_default().to_owned();
                if let (Some(r), Some(o)) = (relationships(&name), entry.as_object_mut()) {
                    o.insert("relationships".into(), r);
                }
            }
        }
        merged.insert(key, Value::Array(list));
    }
    if !merged.is_empty() {
        doc.insert("custom_types".into(), Value::Object(merged));
    }
    Ok(())
}

/// Drops `"description": null` (and the like) throughout.
fn strip_nulls(v: &mut Value) {
    match v {
        Value::Object(o) => {
            o.retain(|_, v| !v.is_null());
            o.values_mut().for_each(strip_nulls);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_nulls),
        _ => {}
    }
}
