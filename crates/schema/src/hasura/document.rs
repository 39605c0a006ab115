//! Hasura's metadata document (what `export_metadata` answers and `replace_metadata`
//! takes: `{version, sources: [{name, kind, tables, functions, ...}], ...}`) read
//! into Grafton's config. The files of a metadata directory are read into one
//! first (`directory.rs`), so both take the same path.

use super::{convert, functions, project, Entry};
use crate::config::Config;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The config the metadata document `doc` asks for. The first source's tables and
/// functions are served; the others are reported (Grafton serves one database).
pub fn to_config(doc: &Value) -> Result<Config, String> {
    let Some(doc) = doc.as_object() else {
        return Err("the metadata must be an object".into());
    };
    let sources = doc.get("sources").and_then(Value::as_array);
    let first = sources.and_then(|s| s.first());
    let mut entries = Vec::new();
    let mut fns = Vec::new();
    if let Some(source) = first {
        let list = |key: &str| source.get(key).and_then(Value::as_array).cloned();
        for (i, t) in list("tables").unwrap_or_default().iter().enumerate() {
            let at = format!("sources[0].tables[{i}]");
            entries.push(typed::<Entry>(t, &at).map_err(|e| named(t, "table", e))?);
        }
        for (i, f) in list("functions").unwrap_or_default().iter().enumerate() {
            let at = format!("sources[0].functions[{i}]");
            fns.push(typed::<functions::Entry>(f, &at).map_err(|e| named(f, "function", e))?);
        }
    }
    let mut config = convert::convert(entries)?;
    project::apply(doc, &mut config)?;
    functions::apply(fns, &mut config);
    // Hasura serves what its metadata tracks, and nothing else.
    config.auto_track = Some(false);
    Ok(config)
}

/// An entry's error, naming the table or function it is about.
fn named(entry: &Value, kind: &str, error: String) -> String {
    let key = entry
        .get(kind)
        .cloned()
        .map(serde_json::from_value::<super::TableName>);
    match key {
        Some(Ok(name)) => format!("{kind} {}: {error}", name.key()),
        _ => error,
    }
}

/// `value` read as a `T`; an error names the path in the document (`at`, then
/// the field inside it).
pub(super) fn typed<T: DeserializeOwned>(value: &Value, at: &str) -> Result<T, String> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let inner = e.path().to_string();
        let path = if inner == "." {
            at.to_owned()
        } else {
            format!("{at}.{inner}")
        };
        format!("{path}: {}", e.into_inner())
    })
}

/// `null`, `{}` or `[]`: a part of the metadata that says nothing.
pub(super) fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}
