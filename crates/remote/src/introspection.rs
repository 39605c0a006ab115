//! A remote schema's introspection: the standard introspection query, and its
//! answer written as SDL with the remote schema's customization applied (type
//! names' prefix, suffix and mapping; field names' per type), checked by
//! apollo-compiler as a schema of its own before it is merged.

use crate::names::{checked_name, is_built_in};
use apollo_compiler::schema::ExtendedType;
use grafton_schema::config::Customization;
use grafton_schema::remote::{RemoteField, RemoteIntrospected, RemoteType};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The introspection query sent to a remote schema (types nested seven deep).
pub const QUERY: &str = "query IntrospectionQuery { __schema { queryType { name } \
mutationType { name } subscriptionType { name } types { ...FullType } } } \
fragment FullType on __Type { kind name description \
fields(includeDeprecated: true) { name description args { ...InputValue } type { ...TypeRef } \
isDeprecated deprecationReason } inputFields { ...InputValue } interfaces { ...TypeRef } \
enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason } \
possibleTypes { ...TypeRef } } \
fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue } \
fragment TypeRef on __Type { kind name ofType { kind name ofType { kind name ofType { kind name \
ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } } }";

/// The names a customization gives.
struct Renames<'a> {
    custom: Option<&'a Customization>,
    roots: [Option<String>; 3],
}

impl Renames<'_> {
    fn ty(&self, name: &str) -> String {
        let namespace = self.custom.and_then(|c| c.root_fields_namespace.as_deref());
        let Some(names) = self.custom.and_then(|c| c.type_names.as_ref()) else {
            let root = self.roots.iter().flatten().any(|r| r == name);
            return match (namespace, root) {
                (Some(ns), true) => format!("{ns}{name}"),
                _ => name.to_owned(),
            };
        };
        if let Some(to) = names.mapping.get(name) {
            return to.clone();
        }
        let root = self.roots.iter().flatten().any(|r| r == name);
        // Under a namespace, the root types are its (`libQuery`), as Hasura names them.
        if let Some(ns) = self.custom.and_then(|c| c.root_fields_namespace.as_deref()) {
            if root {
                return format!("{ns}{name}");
            }
        }
        if name.starts_with("__") || is_built_in(name) || root {
            return name.to_owned();
        }
        let (prefix, suffix) = (names.prefix.as_deref(), names.suffix.as_deref());
        format!("{}{name}{}", prefix.unwrap_or(""), suffix.unwrap_or(""))
    }

    fn field(&self, parent: &str, name: &str) -> String {
        let custom = self.custom.map(|c| c.field_names.as_slice()).unwrap_or(&[]);
        let Some(f) = custom.iter().find(|f| f.parent_type == parent) else {
            return name.to_owned();
        };
        if let Some(to) = f.mapping.get(name) {
            return to.clone();
        }
        if name.starts_with("__") {
            return name.to_owned();
        }
        let (prefix, suffix) = (f.prefix.as_deref(), f.suffix.as_deref());
        format!("{}{name}{}", prefix.unwrap_or(""), suffix.unwrap_or(""))
    }
}

/// `default` when it is one GraphQL value and nothing else.
fn default_value(default: &str) -> Result<&str, String> {
    let probe = format!("input Probe {{ f: Int = {default} }}");
    let parsed = apollo_compiler::ast::Document::parse(probe, "default.graphql");
    let one = parsed.ok().is_some_and(|d| {
        matches!(d.definitions.as_slice(), [apollo_compiler::ast::Definition::InputObjectTypeDefinition(i)]
            if i.fields.len() == 1 && i.fields[0].default_value.is_some())
    });
    match one {
        true => Ok(default),
        false => Err(format!("'{default}' is not a GraphQL value")),
    }
}

/// `text` as a GraphQL string (JSON's escapes are GraphQL's).
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into())
}

fn described(out: &mut String, indent: &str, v: &Value) {
    if let Some(d) = v["description"].as_str().filter(|d| !d.is_empty()) {
        let _ = writeln!(out, "{indent}{}", quoted(d));
    }
}

fn deprecated(v: &Value) -> String {
    match v["isDeprecated"].as_bool() {
        Some(true) => match v["deprecationReason"].as_str() {
            Some(reason) => format!(" @deprecated(reason: {})", quoted(reason)),
            None => " @deprecated".into(),
        },
        _ => String::new(),
    }
}

/// A type reference (`{kind, name, ofType}`) as SDL.
fn type_ref(v: &Value, renames: &Renames<'_>) -> Result<String, String> {
    match v["kind"].as_str() {
        Some("NON_NULL") => Ok(format!("{}!", type_ref(&v["ofType"], renames)?)),
        Some("LIST") => Ok(format!("[{}]", type_ref(&v["ofType"], renames)?)),
        _ => match v["name"].as_str() {
            Some(name) => Ok(renames.ty(checked_name(name)?)),
            None => Err("a type reference without a name".into()),
        },
    }
}

/// An argument or input field: its SDL name (with its description) and type
/// (with its default value).
fn input_value(v: &Value, renames: &Renames<'_>) -> Result<(String, String), String> {
    let name = checked_name(v["name"].as_str().ok_or("an input value without a name")?)?;
    let name = match v["description"].as_str().filter(|d| !d.is_empty()) {
        Some(d) => format!("{} {name}", quoted(d)),
        None => name.to_owned(),
    };
    let mut ty = type_ref(&v["type"], renames)?;
    if let Some(default) = v["defaultValue"].as_str() {
        let _ = write!(ty, " = {}", default_value(default)?);
    }
    Ok((name, ty))
}

/// The fields of an object or interface (`parent`: its remote name).
fn fields(
    parent: &str,
    v: &Value,
    renames: &Renames<'_>,
    field_renames: &mut BTreeMap<(String, String), String>,
) -> Result<Vec<RemoteField>, String> {
    let mut out = Vec::new();
    for f in v["fields"].as_array().into_iter().flatten() {
        let remote = checked_name(f["name"].as_str().ok_or("a field without a name")?)?;
        let name = renames.field(parent, remote);
        if name != remote {
            field_renames.insert((renames.ty(parent), name.clone()), remote.to_owned());
        }
        let args = (f["args"].as_array().into_iter().flatten())
            .map(|a| input_value(a, renames))
            .collect::<Result<_, _>>()?;
        out.push(RemoteField {
            name,
            args,
            ty: format!("{}{}", type_ref(&f["type"], renames)?, deprecated(f)),
            description: f["description"].as_str().map(str::to_owned),
        });
    }
    Ok(out)
}

fn write_fields(out: &mut String, fields: &[RemoteField]) {
    for f in fields {
        if let Some(d) = f.description.as_deref().filter(|d| !d.is_empty()) {
            let _ = writeln!(out, "  {}", quoted(d));
        }
        let _ = write!(out, "  {}", f.name);
        if !f.args.is_empty() {
            let args: Vec<String> = (f.args.iter()).map(|(n, t)| format!("{n}: {t}")).collect();
            let _ = write!(out, "({})", args.join(", "));
        }
        let _ = writeln!(out, ": {}", f.ty);
    }
}

/// The names of `v`'s `interfaces` or `possibleTypes`, renamed.
fn names(v: &Value, renames: &Renames<'_>) -> Result<Vec<String>, String> {
    (v.as_array().into_iter().flatten())
        .filter_map(|t| t["name"].as_str())
        .map(|n| checked_name(n).map(|n| renames.ty(n)))
        .collect()
}

/// The remote schema's introspection answer (`{"data": {"__schema": …}}`)
/// with `custom`'s names: its types and root fields as served, checked as a
/// schema of its own.
pub fn read(answer: &Value, custom: Option<&Customization>) -> Result<RemoteIntrospected, String> {
    read_with(answer, custom, Default::default())
}

/// [`read`], with a role's `presets` (in the remote's names).
pub fn read_with(
    answer: &Value,
    custom: Option<&Customization>,
    presets: grafton_schema::remote::RolePresets,
) -> Result<RemoteIntrospected, String> {
    let schema = &answer["data"]["__schema"];
    if !schema.is_object() {
        return Err(match &answer["errors"] {
            Value::Null => "its answer to the introspection query has no data.__schema".into(),
            errors => format!("it answered the introspection query with errors: {errors}"),
        });
    }
    let root = |key: &str| schema[key]["name"].as_str().map(str::to_owned);
    let roots = [
        root("queryType"),
        root("mutationType"),
        root("subscriptionType"),
    ];
    let renames = Renames { custom, roots };
    let mut out = RemoteIntrospected {
        raw: answer.clone(),
        ..Default::default()
    };
    for ((parent, field), set) in presets.arguments {
        let key = (renames.ty(&parent), renames.field(&parent, &field));
        out.presets.insert(key, set);
    }
    let input_presets: BTreeMap<String, _> = (presets.input_fields.into_iter())
        .map(|(ty, set)| (renames.ty(&ty), set))
        .collect();
    let mut whole = String::new();
    // The root types, served as types only where another type names them (a
    // Relay payload's `query: Query`).
    let mut root_types = Vec::new();
    for t in schema["types"].as_array().into_iter().flatten() {
        let Some(remote) = t["name"].as_str() else {
            return Err("a type without a name".into());
        };
        let remote = checked_name(remote)?;
        if remote.starts_with("__") || is_built_in(remote) {
            continue;
        }
        let name = renames.ty(remote);
        if name != remote {
            out.type_renames.insert(name.clone(), remote.to_owned());
            out.served_names.insert(remote.to_owned(), name.clone());
        }
        if renames.roots[..2].iter().flatten().any(|r| r == remote) {
            let list = fields(remote, t, &renames, &mut out.field_renames)?;
            let mut sdl = String::new();
            let _ = writeln!(sdl, "type {name} {{");
            write_fields(&mut sdl, &list);
            sdl.push_str("}\n");
            whole.push_str(&sdl);
            root_types.push(RemoteType {
                name: name.clone(),
                scalar: false,
                sdl: sdl.clone(),
            });
            match renames.roots[0].as_deref() == Some(remote) {
                true => out.query = list,
                false => out.mutation = list,
            }
            continue;
        }
        if renames.roots[2].as_deref() == Some(remote) {
            // Subscriptions are not forwarded: the root is left out.
            continue;
        }
        let mut sdl = String::new();
        described(&mut sdl, "", t);
        let kind = t["kind"].as_str().unwrap_or_default();
        match kind {
            "SCALAR" => {
                let _ = writeln!(sdl, "scalar {name}");
            }
            "OBJECT" | "INTERFACE" => {
                let keyword = if kind == "OBJECT" {
                    "type"
                } else {
                    "interface"
                };
                let _ = write!(sdl, "{keyword} {name}");
                let implements = names(&t["interfaces"], &renames)?;
                if !implements.is_empty() {
                    let _ = write!(sdl, " implements {}", implements.join(" & "));
                }
                sdl.push_str(" {\n");
                write_fields(
                    &mut sdl,
                    &fields(remote, t, &renames, &mut out.field_renames)?,
                );
                sdl.push_str("}\n");
            }
            "UNION" => {
                let members = names(&t["possibleTypes"], &renames)?;
                let _ = writeln!(sdl, "union {name} = {}", members.join(" | "));
            }
            "ENUM" => {
                let _ = writeln!(sdl, "enum {name} {{");
                for v in t["enumValues"].as_array().into_iter().flatten() {
                    described(&mut sdl, "  ", v);
                    let value = v["name"].as_str().ok_or("an enum value without a name")?;
                    let value = checked_name(value)?;
                    let _ = writeln!(sdl, "  {value}{}", deprecated(v));
                }
                sdl.push_str("}\n");
            }
            "INPUT_OBJECT" => {
                let _ = writeln!(sdl, "input {name} {{");
                for f in t["inputFields"].as_array().into_iter().flatten() {
                    let (n, ty) = input_value(f, &renames)?;
                    let _ = writeln!(sdl, "  {n}: {ty}");
                }
                sdl.push_str("}\n");
            }
            other => return Err(format!("type {remote} is of an unknown kind '{other}'")),
        }
        whole.push_str(&sdl);
        out.types.push(RemoteType {
            scalar: kind == "SCALAR",
            name,
            sdl,
        });
    }
    let query = match &renames.roots[0] {
        Some(q) => renames.ty(q),
        None => return Err("it has no query type".into()),
    };
    out.query_type = query.clone();
    out.mutation_type = renames.roots[1].as_deref().map(|m| renames.ty(m));
    let _ = write!(whole, "schema {{ query: {query}");
    if let Some(m) = &renames.roots[1] {
        let _ = write!(whole, " mutation: {}", renames.ty(m));
    }
    whole.push_str(" }\n");
    let schema = apollo_compiler::Schema::parse_and_validate(&whole, "remote.graphql")
        .map_err(|e| format!("its schema does not validate: {}", e.errors))?;
    out.input_presets = crate::input_presets::plan(&schema, input_presets);
    let named: std::collections::BTreeSet<&str> = (out.types.iter())
        .filter_map(|t| schema.types.get(t.name.as_str()))
        .flat_map(|t| match t {
            ExtendedType::Object(o) => o
                .fields
                .values()
                .map(|f| f.ty.inner_named_type().as_str())
                .collect(),
            ExtendedType::Interface(i) => i
                .fields
                .values()
                .map(|f| f.ty.inner_named_type().as_str())
                .collect(),
            _ => Vec::new(),
        })
        .collect();
    // Under a namespace every root type is served: its field's type.
    let namespace = custom.and_then(|c| c.root_fields_namespace.clone());
    out.namespace = namespace.clone();
    let referenced: Vec<RemoteType> = (root_types.into_iter())
        .filter(|r| namespace.is_some() || named.contains(r.name.as_str()))
        .collect();
    out.types.extend(referenced);
    Ok(out)
}

/// Introspects `config`'s remote (its own headers only: no session, no
/// client's) within `timeout`; its types as served.
pub async fn fetch(
    client: &crate::Client,
    config: &grafton_schema::config::RemoteSchemaConfig,
    timeout: std::time::Duration,
) -> Result<RemoteIntrospected, String> {
    let mut headers = vec![(
        "User-Agent".to_owned(),
        crate::action::USER_AGENT.to_owned(),
    )];
    crate::forward::configured(&config.definition.headers, &mut headers)?;
    let body = serde_json::json!({"query": QUERY, "operationName": "IntrospectionQuery"});
    let (answer, _) = crate::forward::post(client, config, &headers, timeout, &body)
        .await
        .map_err(|e| e.why)?;
    read(&answer, config.definition.customization.as_ref())
}

/// The names `custom` renames that the remote does not have (a `field_names`
/// type, a `type_names.mapping` key): said at start-up, since they rename
/// nothing.
pub fn unknown_names(answer: &Value, custom: Option<&Customization>) -> Vec<String> {
    let Some(custom) = custom else {
        return Vec::new();
    };
    let types: Vec<&str> = (answer["data"]["__schema"]["types"]
        .as_array()
        .into_iter()
        .flatten())
    .filter_map(|t| t["name"].as_str())
    .collect();
    let mapped = custom.type_names.iter().flat_map(|t| t.mapping.keys());
    let parents = custom.field_names.iter().map(|f| &f.parent_type);
    (mapped.chain(parents))
        .filter(|n| !types.contains(&n.as_str()))
        .cloned()
        .collect()
}
