//! The project-wide parts: `add_inherited_role`, `drop_inherited_role`,
//! `set_api_limits`, `remove_api_limits`, and query collections with the allow
//! list (`create_query_collection`, `drop_query_collection`,
//! `add_query_to_collection`, `drop_query_from_collection`,
//! `add_collection_to_allowlist`, `drop_collection_from_allowlist`,
//! `update_scope_of_collection_in_allowlist`).

use crate::document::{list, text};
use crate::Refusal;
use serde_json::{json, Map, Value};

fn root(doc: &mut Value) -> Result<&mut Map<String, Value>, Refusal> {
    doc.as_object_mut()
        .ok_or_else(|| Refusal::new("unexpected", "the metadata is not an object", "$"))
}

fn position(list: &[Value], field: &str, name: &str) -> Option<usize> {
    list.iter()
        .position(|v| v.get(field).and_then(Value::as_str) == Some(name))
}

/// `add_inherited_role`: `{role_name, role_set}`; one of that name is replaced.
pub fn add_inherited_role(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let name = text(args, "role_name")?.to_owned();
    let Some(set) = args.get("role_set").and_then(Value::as_array) else {
        return Err(Refusal::parse("key \"role_set\" not found"));
    };
    if set.iter().any(|r| r.as_str() == Some(name.as_str())) {
        return Err(Refusal::new(
            "invalid-params",
            "an inherited role name cannot be in the role combination",
            "$.args",
        ));
    }
    let roles = list(root(doc)?, "inherited_roles")?;
    roles.retain(|r| r.get("role_name").and_then(Value::as_str) != Some(name.as_str()));
    roles.push(json!({"role_name": name, "role_set": set}));
    Ok(())
}

/// `drop_inherited_role`: `{role_name}`.
pub fn drop_inherited_role(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let name = text(args, "role_name")?.to_owned();
    let roles = list(root(doc)?, "inherited_roles")?;
    let i = position(roles, "role_name", &name).ok_or_else(|| {
        Refusal::new(
            "not-exists",
            format!("\"{name}\" inherited role doesn't exist"),
            "$.args",
        )
    })?;
    roles.remove(i);
    Ok(())
}

/// `set_api_limits`: the limits, replaced whole (checked by building them).
pub fn set_api_limits(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    if !args.is_object() {
        return Err(Refusal::parse("the limits must be an object"));
    }
    root(doc)?.insert("api_limits".into(), args.clone());
    Ok(())
}

/// `remove_api_limits`: never refused.
pub fn remove_api_limits(doc: &mut Value, _: &Value) -> Result<(), Refusal> {
    root(doc)?.remove("api_limits");
    Ok(())
}

fn no_collection(name: &str, path: &str) -> Refusal {
    Refusal::new(
        "not-exists",
        format!("query collection with name \"{name}\" does not exist"),
        path,
    )
}

/// The queries of a collection's definition, each `{name, query}` with the query
/// parsing as GraphQL.
fn queries(definition: Option<&Value>) -> Result<Vec<Value>, Refusal> {
    let queries = (definition
        .and_then(|d| d.get("queries"))
        .and_then(Value::as_array))
    .ok_or_else(|| Refusal::parse("key \"definition.queries\" not found"))?;
    let mut names = Vec::new();
    for q in queries {
        let name = q.get("name").and_then(Value::as_str);
        let query = q.get("query").and_then(Value::as_str);
        let (Some(name), Some(query)) = (name, query) else {
            return Err(Refusal::parse(
                "each query needs a \"name\" and a \"query\"",
            ));
        };
        graphql_parses(query)?;
        if names.contains(&name) {
            return Err(Refusal::new(
                "not-supported",
                format!("found duplicate query names \"{name}\""),
                "$.args.definition.queries",
            ));
        }
        names.push(name);
    }
    Ok(queries.clone())
}

fn graphql_parses(query: &str) -> Result<(), Refusal> {
    apollo_compiler::ast::Document::parse(query, "query.graphql")
        .map(|_| ())
        .map_err(|e| Refusal::parse(format!("not a GraphQL document: {e}")))
}

/// `create_query_collection`: `{name, definition: {queries}, comment?}`.
pub fn create_collection(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let name = text(args, "name")?.to_owned();
    let queries = queries(args.get("definition"))?;
    let collections = list(root(doc)?, "query_collections")?;
    if position(collections, "name", &name).is_some() {
        return Err(Refusal::new(
            "already-exists",
            format!("query collection with name \"{name}\" already exists"),
            "$.args.name",
        ));
    }
    let mut collection = json!({"name": name, "definition": {"queries": queries}});
    if let Some(c) = args.get("comment").filter(|c| c.is_string()) {
        collection["comment"] = c.clone();
    }
    collections.push(collection);
    Ok(())
}

/// `drop_query_collection`: `{collection, cascade}`; one in the allow list needs
/// `cascade`, which takes it from the allow list too.
pub fn drop_collection(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let name = text(args, "collection")?.to_owned();
    let Some(cascade) = args.get("cascade").and_then(Value::as_bool) else {
        return Err(Refusal::parse("key \"cascade\" not found"));
    };
    let doc = root(doc)?;
    let collections = list(doc, "query_collections")?;
    let i = position(collections, "name", &name)
        .ok_or_else(|| no_collection(&name, "$.args.collection"))?;
    collections.remove(i);
    let allowed = list(doc, "allowlist")?;
    if let Some(i) = position(allowed, "collection", &name) {
        if !cascade {
            return Err(Refusal::new(
                "dependency-error",
                format!("query collection with name \"{name}\" is present in the allowlist; cannot proceed to drop. please use cascade to confirm you wish to drop it from the allowlist as well"),
                "$.args.collection",
            ));
        }
        allowed.remove(i);
    }
    Ok(())
}

/// The queries of the collection `args.collection_name`.
fn collection_queries<'a>(doc: &'a mut Value, args: &Value) -> Result<&'a mut Vec<Value>, Refusal> {
    let name = text(args, "collection_name")?.to_owned();
    let collections = list(root(doc)?, "query_collections")?;
    let i = position(collections, "name", &name).ok_or_else(|| no_collection(&name, "$.args"))?;
    let definition = &mut collections[i]["definition"];
    if !definition.is_object() {
        *definition = json!({"queries": []});
    }
    match definition.as_object_mut() {
        Some(d) => list(d, "queries"),
        None => Err(Refusal::new(
            "unexpected",
            "a collection's definition is not an object",
            "$.args",
        )),
    }
}

/// `add_query_to_collection`: `{collection_name, query_name, query}`.
pub fn add_query(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let collection = text(args, "collection_name")?.to_owned();
    let name = text(args, "query_name")?.to_owned();
    let query = text(args, "query")?.to_owned();
    graphql_parses(&query)?;
    let queries = collection_queries(doc, args)?;
    if position(queries, "name", &name).is_some() {
        return Err(Refusal::new(
            "already-exists",
            format!("query with name \"{name}\" already exists in collection \"{collection}\""),
            "$.args",
        ));
    }
    queries.push(json!({"name": name, "query": query}));
    Ok(())
}

/// `drop_query_from_collection`: `{collection_name, query_name}`.
pub fn drop_query(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let collection = text(args, "collection_name")?.to_owned();
    let name = text(args, "query_name")?.to_owned();
    let queries = collection_queries(doc, args)?;
    let i = position(queries, "name", &name).ok_or_else(|| {
        Refusal::new(
            "not-found",
            format!("query with name \"{name}\" not found in collection \"{collection}\""),
            "$.args",
        )
    })?;
    queries.remove(i);
    Ok(())
}

/// An allow-list scope: `{global: true}` (the default) or `{global: false, roles}`.
fn scope(args: &Value) -> Result<Value, Refusal> {
    let Some(scope) = args.get("scope").filter(|s| !s.is_null()) else {
        return Ok(json!({"global": true}));
    };
    let at = "$.args.scope";
    let global = scope.get("global").and_then(Value::as_bool);
    let roles = scope.get("roles").and_then(Value::as_array);
    match (global, roles) {
        (None, _) => Err(Refusal::new("parse-failed", "key \"global\" not found", at)),
        (Some(true), Some(_)) => Err(Refusal::new(
            "parse-failed",
            "roles are not allowed when global is true",
            at,
        )),
        (Some(true), None) => Ok(json!({"global": true})),
        (Some(false), None) => Err(Refusal::new("parse-failed", "key \"roles\" not found", at)),
        (Some(false), Some(roles)) if roles.is_empty() => Err(Refusal::new(
            "parse-failed",
            "parsing NonEmpty failed, unexpected empty list",
            "$.args.scope.roles",
        )),
        (Some(false), Some(roles)) => Ok(json!({"global": false, "roles": roles})),
    }
}

/// `add_collection_to_allowlist`: `{collection, scope?}`; already listed: 200
/// with Hasura's message, the scope left as it was.
pub fn allow(doc: &mut Value, args: &Value) -> Result<Option<Value>, Refusal> {
    let name = text(args, "collection")?.to_owned();
    let scope = scope(args)?;
    let doc = root(doc)?;
    if position(list(doc, "query_collections")?, "name", &name).is_none() {
        return Err(no_collection(&name, "$.args.collection"));
    }
    let allowed = list(doc, "allowlist")?;
    if position(allowed, "collection", &name).is_some() {
        return Ok(Some(
            json!({"message": format!("collection \"{name}\" already exists in the allowlist, scope ignored; to change scope, use update_scope_of_collection_in_allowlist")}),
        ));
    }
    allowed.push(json!({"collection": name, "scope": scope}));
    Ok(None)
}

/// The allow list's entry of `args.collection`.
fn listed<'a>(doc: &'a mut Value, args: &Value) -> Result<(&'a mut Vec<Value>, usize), Refusal> {
    let name = text(args, "collection")?.to_owned();
    let doc = root(doc)?;
    if position(list(doc, "query_collections")?, "name", &name).is_none() {
        return Err(no_collection(&name, "$.args.collection"));
    }
    let allowed = list(doc, "allowlist")?;
    let i = position(allowed, "collection", &name).ok_or_else(|| {
        Refusal::new(
            "not-found",
            format!("collection \"{name}\" doesn't exist in the allowlist"),
            "$.args",
        )
    })?;
    Ok((allowed, i))
}

/// `drop_collection_from_allowlist`: `{collection}`.
pub fn disallow(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let (allowed, i) = listed(doc, args)?;
    allowed.remove(i);
    Ok(())
}

/// `update_scope_of_collection_in_allowlist`: `{collection, scope}`.
pub fn rescope(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let scope = scope(args)?;
    let (allowed, i) = listed(doc, args)?;
    allowed[i]["scope"] = scope;
    Ok(())
}
