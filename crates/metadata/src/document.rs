//! Reading and editing Hasura's metadata document: its sources, their tables, and a
//! table's entry, found by the `{schema, name}` (or bare name) Hasura's args use.

use crate::Refusal;
use serde_json::{json, Map, Value};

/// A table as Hasura's args name it: `"t"` or `{"schema": "s", "name": "t"}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QualifiedName {
    /// Its schema (`public` when not named).
    pub schema: String,
    /// Its name.
    pub name: String,
}

impl QualifiedName {
    /// Reads `value` (a string or `{schema?, name}`).
    pub fn read(value: Option<&Value>, what: &str) -> Result<Self, Refusal> {
        let path = format!("$.args.{what}");
        match value {
            Some(Value::String(name)) => Ok(Self {
                schema: "public".into(),
                name: name.clone(),
            }),
            Some(Value::Object(o)) => {
                let Some(name) = o.get("name").and_then(Value::as_str) else {
                    return Err(Refusal::new(
                        "parse-failed",
                        "key \"name\" not found",
                        &path,
                    ));
                };
                let schema = o.get("schema").and_then(Value::as_str).unwrap_or("public");
                Ok(Self {
                    schema: schema.to_owned(),
                    name: name.to_owned(),
                })
            }
            Some(_) => Err(Refusal::new(
                "parse-failed",
                format!("{what}: expected a name or {{schema, name}}"),
                &path,
            )),
            None => Err(Refusal::new(
                "parse-failed",
                format!("key \"{what}\" not found"),
                "$.args",
            )),
        }
    }

    /// As Hasura writes it in metadata.
    pub fn to_json(&self) -> Value {
        json!({"schema": self.schema, "name": self.name})
    }

    /// As Hasura quotes it in messages: the name in `public`, else `schema.name`.
    pub fn display(&self) -> String {
        if self.schema == "public" {
            self.name.clone()
        } else {
            format!("{}.{}", self.schema, self.name)
        }
    }
}

/// A document with one `default` PostgreSQL source and nothing in it: what a
/// fresh Hasura exports, and what `clear_metadata` leaves (sources are kept).
pub fn empty() -> Value {
    json!({
        "version": 3,
        "sources": [{
            "name": "default",
            "kind": "postgres",
            "tables": [],
            "configuration": {
                "connection_info": {
                    "database_url": {"from_env": "HASURA_GRAPHQL_DATABASE_URL"},
                    "isolation_level": "read-committed",
                    "use_prepared_statements": true
                }
            }
        }]
    })
}

/// What `clear_metadata` leaves of `doc`: as Hasura, the `default` source's name,
/// kind and connection, tracking nothing; everything else goes.
pub fn cleared(doc: &Value) -> Value {
    let sources = doc.get("sources").and_then(Value::as_array);
    let default = sources
        .into_iter()
        .flatten()
        .find(|s| s.get("name").and_then(Value::as_str) == Some("default"));
    let Some(default) = default else {
        return empty();
    };
    let mut kept = Map::new();
    for key in ["name", "kind", "configuration"] {
        if let Some(v) = default.get(key) {
            kept.insert(key.into(), v.clone());
        }
    }
    kept.insert("tables".into(), json!([]));
    json!({"version": 3, "sources": [kept]})
}

/// The source `args.source` names (`default` when it names none).
pub fn source<'a>(doc: &'a mut Value, args: &Value) -> Result<&'a mut Map<String, Value>, Refusal> {
    let name = args
        .get("source")
        .and_then(Value::as_str)
        .unwrap_or("default");
    if !doc.get("sources").is_some_and(Value::is_array) {
        doc["sources"] = json!([]);
    }
    let sources = doc["sources"].as_array_mut().into_iter().flatten();
    let found = sources
        .filter_map(Value::as_object_mut)
        .enumerate()
        .find(|(_, s)| s.get("name").and_then(Value::as_str) == Some(name));
    match found {
        Some((0, source)) => Ok(source),
        // Only the first source is served: a change to another would answer
        // success and serve nothing.
        Some(_) => Err(Refusal::new(
            "not-supported",
            format!("Grafton serves one source (the first); \"{name}\" is not served"),
            "$.args.source",
        )),
        None => Err(Refusal::new(
            "not-exists",
            format!("source with name \"{name}\" does not exist"),
            "$.args",
        )),
    }
}

/// The list under `key` of a source (`tables`, `functions`), a table's entry
/// (`select_permissions`) or the document (`inherited_roles`), made a list if absent.
pub fn list<'a>(map: &'a mut Map<String, Value>, key: &str) -> Result<&'a mut Vec<Value>, Refusal> {
    let entry = map.entry(key).or_insert_with(|| json!([]));
    if entry.is_null() {
        *entry = json!([]);
    }
    entry.as_array_mut().ok_or_else(|| {
        Refusal::new(
            "unexpected",
            format!("the metadata's \"{key}\" is not a list"),
            "$.args",
        )
    })
}

/// The index of the entry whose `field` (`table`, `function`) names `name`.
pub fn index_of(list: &[Value], field: &str, name: &QualifiedName) -> Option<usize> {
    (list.iter()).position(|e| QualifiedName::read(e.get(field), field).is_ok_and(|n| &n == name))
}

/// The index of `table`'s entry in a source's tables.
pub fn table_index(tables: &[Value], table: &QualifiedName) -> Option<usize> {
    index_of(tables, "table", table)
}

/// The entry of the table `args.table` in `args.source`, or Hasura's `not-exists`.
pub fn tracked_table<'a>(
    doc: &'a mut Value,
    args: &Value,
) -> Result<&'a mut Map<String, Value>, Refusal> {
    let table = QualifiedName::read(args.get("table"), "table")?;
    let source_name = args
        .get("source")
        .and_then(Value::as_str)
        .unwrap_or("default")
        .to_owned();
    let tables = list(source(doc, args)?, "tables")?;
    let Some(i) = table_index(tables, &table) else {
        return Err(Refusal::new(
            "not-exists",
            format!(
                "table \"{}\" does not exist in source: {source_name}",
                table.display()
            ),
            "$.args.table",
        ));
    };
    match &mut tables[i] {
        Value::Object(entry) => Ok(entry),
        _ => Err(Refusal::new(
            "unexpected",
            "a table entry is not an object",
            "$.args.table",
        )),
    }
}

/// A string argument, or Hasura's `parse-failed` when it is missing.
pub fn text<'a>(args: &'a Value, key: &str) -> Result<&'a str, Refusal> {
    args.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| Refusal::parse(format!("key \"{key}\" not found")))
}
