//! A role's part of a remote schema (Hasura's remote schema permissions): the
//! remote's introspection cut to the types, fields, arguments, values and
//! members the role's SDL lists, each checked against the remote's own (same
//! kind, same types, every required argument kept); an argument with
//! `@preset(value: …)` leaves the role's schema and is added to every call,
//! an input object's field with one to every value of that type a call
//! carries (a string naming `x-hasura-*` is the caller's session variable
//! unless `static: true`).

use apollo_compiler::ast::{self, Definition};
use grafton_schema::remote::{Preset, PresetValue, RolePresets};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The SDL's definitions by name: the kind of each, its members' names and
/// their definitions.
struct Allowed<'a> {
    types: BTreeMap<String, &'a Definition>,
}

/// A type reference of the introspection as SDL text (the remote's names).
fn plain(v: &Value) -> String {
    match v["kind"].as_str() {
        Some("NON_NULL") => format!("{}!", plain(&v["ofType"])),
        Some("LIST") => format!("[{}]", plain(&v["ofType"])),
        _ => v["name"].as_str().unwrap_or_default().to_owned(),
    }
}

fn kind_of(d: &Definition) -> &'static str {
    match d {
        Definition::ObjectTypeDefinition(_) => "OBJECT",
        Definition::InterfaceTypeDefinition(_) => "INTERFACE",
        Definition::UnionTypeDefinition(_) => "UNION",
        Definition::EnumTypeDefinition(_) => "ENUM",
        Definition::InputObjectTypeDefinition(_) => "INPUT_OBJECT",
        Definition::ScalarTypeDefinition(_) => "SCALAR",
        _ => "",
    }
}

/// The remote's introspection `answer` cut to the role's `sdl`, and the
/// presets it sets, in the remote's names.
pub fn restrict(answer: &Value, sdl: &str) -> Result<(Value, RolePresets), String> {
    let doc = ast::Document::parse(sdl, "permission.graphql")
        .map_err(|e| format!("its SDL does not parse: {}", e.errors))?;
    let schema = &answer["data"]["__schema"];
    let root = |key: &str| schema[key]["name"].as_str().map(str::to_owned);
    let mut allowed = Allowed {
        types: BTreeMap::new(),
    };
    // Its root types' names, as Hasura reads them: a `schema {}` block's, else
    // `Query` and `Mutation` stand for the remote's roots.
    let mut aliases: BTreeMap<String, String> = BTreeMap::new();
    for d in &doc.definitions {
        if let Definition::SchemaDefinition(s) = d {
            for op in &s.root_operations {
                let upstream = match op.0 {
                    ast::OperationType::Query => root("queryType"),
                    ast::OperationType::Mutation => root("mutationType"),
                    ast::OperationType::Subscription => root("subscriptionType"),
                };
                if let Some(upstream) = upstream {
                    aliases.insert(op.1.to_string(), upstream);
                }
            }
        }
    }
    if aliases.is_empty() {
        for (name, key) in [("Query", "queryType"), ("Mutation", "mutationType")] {
            if let Some(upstream) = root(key) {
                aliases.insert(name.to_owned(), upstream);
            }
        }
    }
    for d in &doc.definitions {
        // `directive @preset …` declared in the SDL is not a type.
        if matches!(d, Definition::DirectiveDefinition(_)) {
            continue;
        }
        if let Some(name) = d.name() {
            let name = aliases
                .get(name.as_str())
                .cloned()
                .unwrap_or_else(|| name.to_string());
            if allowed.types.insert(name.clone(), d).is_some() {
                return Err(format!("duplicate definitions of type \"{name}\""));
            }
        }
    }
    let mut presets = RolePresets::default();
    let mut types = Vec::new();
    let upstream: Vec<&Value> = schema["types"].as_array().into_iter().flatten().collect();
    for (name, d) in &allowed.types {
        let found = upstream
            .iter()
            .find(|t| t["name"].as_str() == Some(name.as_str()));
        match found {
            None => {
                return Err(format!(
                    "\"{name}\" does not exist in the upstream remote schema"
                ))
            }
            Some(t) if t["kind"].as_str() != Some(kind_of(d)) => {
                return Err(format!(
                    "\"{name}\" is not a {} upstream",
                    kind_of(d).to_lowercase()
                ))
            }
            _ => {}
        }
    }
    for t in upstream {
        let name = t["name"].as_str().unwrap_or_default();
        if name.starts_with("__") || crate::names::is_built_in(name) {
            types.push(t.clone());
            continue;
        }
        let Some(d) = allowed.types.get(name) else {
            continue;
        };
        types.push(cut(t, d, &allowed, &mut presets)?);
    }
    let mut schema = schema.as_object().cloned().unwrap_or_default();
    schema.insert("types".into(), Value::Array(types));
    for key in ["mutationType", "subscriptionType"] {
        let kept = (schema.get(key).and_then(|r| r["name"].as_str()))
            .is_some_and(|n| allowed.types.contains_key(n));
        if !kept {
            schema.insert(key.into(), Value::Null);
        }
    }
    let query = schema.get("queryType").and_then(|r| r["name"].as_str());
    if !query.is_some_and(|q| allowed.types.contains_key(q)) {
        return Err("its SDL has no query root (`type Query`)".into());
    }
    let mut data = Map::new();
    data.insert("__schema".into(), Value::Object(schema));
    Ok((serde_json::json!({"data": data}), presets))
}

/// Upstream type `t` cut to its definition `d` in the role's SDL.
fn cut(
    t: &Value,
    d: &Definition,
    allowed: &Allowed<'_>,
    presets: &mut RolePresets,
) -> Result<Value, String> {
    let name = t["name"].as_str().unwrap_or_default();
    let mut t = t.clone();
    let listed = |key: &str, names: Vec<String>, t: &mut Value| -> Result<(), String> {
        let Some(items) = t[key].as_array() else {
            return Ok(());
        };
        for n in &names {
            if !items.iter().any(|i| i["name"].as_str() == Some(n.as_str())) {
                return Err(format!("\"{n}\" does not exist in \"{name}\" upstream"));
            }
        }
        let kept: Vec<Value> = (items.iter())
            .filter(|i| {
                i["name"]
                    .as_str()
                    .is_some_and(|n| names.contains(&n.to_owned()))
            })
            .cloned()
            .collect();
        t[key] = Value::Array(kept);
        Ok(())
    };
    match d {
        Definition::ObjectTypeDefinition(_) | Definition::InterfaceTypeDefinition(_) => {
            let (fields, implements) = match d {
                Definition::ObjectTypeDefinition(o) => (&o.fields, &o.implements_interfaces),
                Definition::InterfaceTypeDefinition(i) => (&i.fields, &i.implements_interfaces),
                _ => unreachable!("matched above"),
            };
            let mut kept = Vec::new();
            for f in fields {
                let up = (t["fields"].as_array().into_iter().flatten())
                    .find(|u| u["name"].as_str() == Some(f.name.as_str()));
                let Some(up) = up else {
                    return Err(format!(
                        "field \"{}\" does not exist in \"{name}\" upstream",
                        f.name
                    ));
                };
                if plain(&up["type"]) != f.ty.to_string() {
                    return Err(format!(
                        "expected type of \"{name}.{}\" to be {} but received {}",
                        f.name,
                        plain(&up["type"]),
                        f.ty
                    ));
                }
                let mut up = up.clone();
                let (args, set) = arguments(name, f, &up)?;
                if !set.is_empty() {
                    (presets.arguments).insert((name.to_owned(), f.name.to_string()), set);
                }
                up["args"] = Value::Array(args);
                kept.push(up);
            }
            t["fields"] = Value::Array(kept);
            let names = implements.iter().map(|i| i.to_string()).collect();
            listed("interfaces", names, &mut t)?;
        }
        Definition::EnumTypeDefinition(e) => {
            let names = e.values.iter().map(|v| v.value.to_string()).collect();
            listed("enumValues", names, &mut t)?;
        }
        Definition::UnionTypeDefinition(u) => {
            let names = u.members.iter().map(|m| m.to_string()).collect();
            listed("possibleTypes", names, &mut t)?;
        }
        Definition::InputObjectTypeDefinition(i) => {
            let names = i.fields.iter().map(|f| f.name.to_string()).collect();
            listed("inputFields", names, &mut t)?;
            // A field with a preset leaves the role's type; its value is the preset's.
            let mut set = Vec::new();
            for f in &i.fields {
                let Some(p) = f.directives.get("preset") else {
                    continue;
                };
                let up = (t["inputFields"].as_array().into_iter().flatten())
                    .find(|u| u["name"].as_str() == Some(f.name.as_str()))
                    .map(|u| u["type"].clone())
                    .unwrap_or_default();
                set.push(preset(f, p, &up)?);
            }
            if !set.is_empty() {
                if let Some(fields) = t["inputFields"].as_array_mut() {
                    fields.retain(|u| !set.iter().any(|p| u["name"].as_str() == Some(&p.arg)));
                }
                presets.input_fields.insert(name.to_owned(), set);
            }
        }
        _ => {}
    }
    // The interfaces' possible types are those the role's SDL keeps.
    if let Some(possible) = t["possibleTypes"].as_array().cloned() {
        if matches!(d, Definition::InterfaceTypeDefinition(_)) {
            let kept: Vec<Value> = (possible.into_iter())
                .filter(|p| {
                    p["name"]
                        .as_str()
                        .is_some_and(|n| allowed.types.contains_key(n))
                })
                .collect();
            t["possibleTypes"] = Value::Array(kept);
        }
    }
    Ok(t)
}

/// Field `f`'s arguments the role passes (upstream's, cut to the SDL's), and
/// the presets it sets; every required upstream argument must be in the SDL.
fn arguments(
    parent: &str,
    f: &ast::FieldDefinition,
    up: &Value,
) -> Result<(Vec<Value>, Vec<Preset>), String> {
    let upstream: Vec<&Value> = up["args"].as_array().into_iter().flatten().collect();
    let (mut kept, mut set) = (Vec::new(), Vec::new());
    for a in &f.arguments {
        let Some(u) = upstream
            .iter()
            .find(|u| u["name"].as_str() == Some(a.name.as_str()))
        else {
            return Err(format!(
                "argument \"{}\" does not exist in \"{parent}.{}\" upstream",
                a.name, f.name
            ));
        };
        if plain(&u["type"]) != a.ty.to_string() {
            return Err(format!(
                "expected type of argument \"{parent}.{}({})\" to be {}",
                f.name,
                a.name,
                plain(&u["type"])
            ));
        }
        match a.directives.get("preset") {
            Some(p) => set.push(preset(a, p, &u["type"])?),
            None => kept.push((*u).clone()),
        }
    }
    for u in &upstream {
        let required = u["type"]["kind"] == "NON_NULL" && u["defaultValue"].is_null();
        let name = u["name"].as_str().unwrap_or_default();
        if required && !f.arguments.iter().any(|a| a.name == name) {
            return Err(format!(
                "field: \"{parent}.{}\" expects the non nullable argument \"{name}\" to be present",
                f.name
            ));
        }
    }
    Ok((kept, set))
}

/// The preset `@preset(value:, static:)` of argument `a` (its type `ty`).
fn preset(a: &ast::InputValueDefinition, p: &ast::Directive, ty: &Value) -> Result<Preset, String> {
    let value = p
        .specified_argument_by_name("value")
        .ok_or_else(|| format!("preset argument \"value\" not found at \"{}\"", a.name))?;
    let fixed = matches!(
        p.specified_argument_by_name("static").map(|s| &**s),
        Some(ast::Value::Boolean(true))
    );
    let session = match &**value {
        ast::Value::String(s) if !fixed && s.to_ascii_lowercase().starts_with("x-hasura-") => {
            Some(s.to_ascii_lowercase())
        }
        _ => None,
    };
    let value = match session {
        Some(var) => {
            let mut named = ty;
            while named["ofType"].is_object() {
                if named["kind"] == "LIST" {
                    return Err(format!(
                        "illegal preset value at \"{}\": session arguments can only be set for singleton values",
                        a.name
                    ));
                }
                named = &named["ofType"];
            }
            let kind = match (named["kind"].as_str(), named["name"].as_str()) {
                (Some("ENUM"), _) => "Enum",
                (_, Some(n @ ("Int" | "Float" | "Boolean"))) => n,
                _ => "String",
            };
            PresetValue::Session {
                var,
                kind: kind.to_owned(),
            }
        }
        None => PresetValue::Literal(value.to_string()),
    };
    Ok(Preset {
        arg: a.name.to_string(),
        value,
    })
}
