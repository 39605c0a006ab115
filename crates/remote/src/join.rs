//! A remote relationship's one call for a whole request: every distinct set of
//! the rows' values is one aliased field (`f0: user(id: 1) { … } f1: …`) of a
//! single document, and each answer goes back to the rows that asked it. The
//! selection is the client's, in the remote's names, written once and
//! repeated; the caller's session goes as headers, as for a remote's root
//! fields.

use crate::client::Client;
use crate::forward::{RemoteError, MAX_DOCUMENT_BYTES};
use apollo_compiler::ast;
use apollo_compiler::executable::Field;
use apollo_compiler::{ExecutableDocument, Node};
use grafton_schema::config::RemoteSchemaConfig;
use grafton_schema::remote::RemoteIntrospected;
use grafton_schema::RemoteStep;
use serde_json::{json, Map, Value};
use std::fmt::Write;
use std::time::Duration;

/// One remote relationship's call.
pub struct JoinCall<'a> {
    /// The remote.
    pub config: &'a RemoteSchemaConfig,
    /// Its types' names as served (the role's part of it).
    pub introspected: &'a RemoteIntrospected,
    /// The request's document (its fragments).
    pub document: &'a ExecutableDocument,
    /// The operation's variable definitions.
    pub variable_definitions: &'a [Node<ast::VariableDefinition>],
    /// The request's coerced variables.
    pub variables: &'a Map<String, Value>,
    /// The caller's session variables (each sent as a header).
    pub session: &'a Map<String, Value>,
    /// Relationships from the remotes' types (the model's).
    pub rels: crate::holes::Rels<'a>,
    /// The client's headers, sent on when the remote forwards them.
    pub client_headers: &'a [(String, String)],
    /// The most the call may take.
    pub timeout: Duration,
    /// The remote's fields to the one answered, with the arguments they get.
    pub path: &'a [RemoteStep],
    /// The document's fields under the relationship's response key.
    pub fields: &'a [Node<Field>],
    /// Each distinct row's values: column name → value.
    pub rows: &'a [Map<String, Value>],
}

/// Why a join has no answer.
#[derive(Debug, thiserror::Error)]
pub enum JoinError {
    /// The remote could not be called, or answered no GraphQL answer.
    #[error(transparent)]
    Failed(#[from] RemoteError),
    /// The remote answered errors (as Hasura, the request fails with them).
    #[error("Errors from remote server")]
    Errors(Vec<Value>),
}

/// The document and variables sent for `call`.
pub fn request(call: &JoinCall<'_>) -> Result<Value, String> {
    let mut p = crate::print::Printer::new(
        call.introspected,
        call.document,
        call.session,
        call.variables,
        call.rels,
    );
    // The selection, written once.
    let scalar = call
        .fields
        .iter()
        .all(|f| f.selection_set.selections.is_empty());
    let selection = match call.fields {
        _ if scalar => String::new(),
        [one] => {
            p.set(&one.selection_set);
            std::mem::take(&mut p.out)
        }
        many => {
            p.out.push_str(" {");
            for f in many {
                p.out.push_str(" ...");
                p.set(&f.selection_set);
            }
            p.out.push_str(" }");
            std::mem::take(&mut p.out)
        }
    };
    // The client's arguments, given to the last field.
    let mut asked = String::new();
    if let (Some(f), Some(last)) = (call.fields.first(), call.path.last()) {
        for a in p.arguments(&last.parent, &last.served, &f.arguments) {
            let _ = write!(asked, ", {a}");
        }
    }
    // A preset whose session variable is missing refuses the call (never
    // sent without it).
    if let Some(e) = p.error.take() {
        return Err(e);
    }
    let mut presets = Vec::new();
    for step in call.path {
        let key = (step.parent.clone(), step.served.clone());
        let mut text = String::new();
        for preset in call.introspected.presets.get(&key).into_iter().flatten() {
            match p.preset(&preset.value) {
                Ok(v) => {
                    let _ = write!(text, ", {}: {v}", preset.arg);
                }
                Err(e) => return Err(e),
            }
        }
        presets.push(text);
    }
    let mut out = String::from(" {");
    for (i, row) in call.rows.iter().enumerate() {
        let _ = write!(out, " f{i}: ");
        for (level, step) in call.path.iter().enumerate() {
            let last = level + 1 == call.path.len();
            out.push_str(&step.name);
            let mut args = String::new();
            let key = (step.parent.clone(), step.served.clone());
            let types = call.introspected.input_presets.args.get(&key);
            for (name, value) in &step.arguments {
                let _ = write!(args, ", {name}: ");
                match types.and_then(|t| t.get(name)) {
                    // An input object with a role's presets in it.
                    Some(ty) => {
                        p.json(&substituted(value, row), ty, &mut args);
                        if let Some(e) = p.error.take() {
                            return Err(e);
                        }
                    }
                    None => literal(value, row, &mut args)?,
                }
            }
            args.push_str(&presets[level]);
            if last {
                args.push_str(&asked);
            }
            if let Some(args) = args.strip_prefix(", ") {
                let _ = write!(out, "({args})");
            }
            match last {
                true => out.push_str(&selection),
                false => out.push_str(" { "),
            }
        }
        for _ in 1..call.path.len() {
            out.push_str(" }");
        }
        if out.len() > MAX_DOCUMENT_BYTES {
            return Err(format!(
                "its part of the request, one field for each of {} distinct rows, is longer than {MAX_DOCUMENT_BYTES} bytes",
                call.rows.len()
            ));
        }
    }
    out.push_str(" }");
    let mut definitions = Vec::new();
    let mut variables = Map::new();
    for d in call.variable_definitions {
        if !p.used.contains(d.name.as_str()) {
            continue;
        }
        let ty = crate::print::remote_type(&d.ty, call.introspected);
        definitions.push(format!("${}: {ty}", d.name));
        if let Some(v) = call.variables.get(d.name.as_str()) {
            variables.insert(d.name.to_string(), v.clone());
        }
    }
    let declared = match definitions.is_empty() {
        true => String::new(),
        false => format!("({})", definitions.join(", ")),
    };
    Ok(json!({"query": format!("query{declared}{out}"), "variables": variables}))
}

/// `value` with each string `"$column"` the row's value.
fn substituted(value: &Value, row: &Map<String, Value>) -> Value {
    match value {
        Value::String(s) => match s.strip_prefix('$').and_then(|c| row.get(c)) {
            Some(v) => v.clone(),
            None => value.clone(),
        },
        Value::Array(items) => Value::Array(items.iter().map(|i| substituted(i, row)).collect()),
        Value::Object(fields) => Value::Object(
            (fields.iter())
                .map(|(k, v)| (k.clone(), substituted(v, row)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `value` as a GraphQL literal, a string `"$column"` the row's value; an
/// object key that is not a GraphQL name (a JSON column's) refuses the call.
pub(crate) fn literal(
    value: &Value,
    row: &Map<String, Value>,
    out: &mut String,
) -> Result<(), String> {
    match value {
        Value::String(s) => match s.strip_prefix('$').and_then(|c| row.get(c)) {
            Some(v) => literal(v, &Map::new(), out)?,
            None => {
                let _ = write!(out, "{value}");
            }
        },
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                literal(item, row, out)?;
            }
            out.push(']');
        }
        Value::Object(fields) => {
            out.push('{');
            for (i, (k, v)) in fields.iter().enumerate() {
                let name = crate::names::checked_name(k).map_err(|_| {
                    format!("\"{k}\" is not a GraphQL name: it cannot be an argument's key")
                })?;
                if i > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "{name}: ");
                literal(v, row, out)?;
            }
            out.push('}');
        }
        other => {
            let _ = write!(out, "{other}");
        }
    }
    Ok(())
}

/// Sends `call`; the answer for each of its rows, in order, `__typename`s
/// named as served, and the remote's `Set-Cookie`s.
pub async fn send(
    client: &Client,
    call: &JoinCall<'_>,
) -> Result<(Vec<Value>, Vec<String>), JoinError> {
    let fail = |why: String| RemoteError {
        name: call.config.name.clone(),
        why,
    };
    if call.rows.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let headers =
        crate::forward::headers(call.config, call.session, call.client_headers).map_err(fail)?;
    let body = request(call).map_err(fail)?;
    let (mut value, cookies) =
        crate::forward::post(client, call.config, &headers, call.timeout, &body).await?;
    match value.get_mut("errors").map(Value::take) {
        None | Some(Value::Null) => {}
        Some(Value::Array(list)) if list.is_empty() => {}
        Some(Value::Array(list)) => return Err(JoinError::Errors(list)),
        Some(_) => {
            return Err(fail("its answer's \"errors\" is not a list of errors".into()).into())
        }
    }
    let Some(Value::Object(mut data)) = value.get_mut("data").map(Value::take) else {
        return Err(fail("its answer has no data".into()).into());
    };
    let mut out = Vec::with_capacity(call.rows.len());
    for i in 0..call.rows.len() {
        let Some(mut v) = data.remove(&format!("f{i}")) else {
            return Err(fail(format!("failed to lookup key 'f{i}' in response")).into());
        };
        for step in &call.path[1..] {
            v = match v {
                Value::Object(mut o) => o.remove(&step.name).unwrap_or(Value::Null),
                _ => Value::Null,
            };
        }
        if !call.introspected.type_renames.is_empty() {
            for f in call.fields {
                crate::typenames::served(
                    &mut v,
                    &f.selection_set,
                    call.introspected,
                    call.document,
                );
            }
        }
        out.push(v);
    }
    Ok((out, cookies))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rows_values_are_written_as_graphql_literals_and_a_key_that_is_not_a_name_refused() {
        let row: Map<String, Value> = serde_json::from_value(json!({
            "id": 7, "tag": "a \"b\"\n", "doc": {"k": [1, "$id"]}
        }))
        .expect("row");
        let mut out = String::new();
        let args = json!({"where": {"id": {"_eq": "$id"}, "tag": "$tag"}, "doc": "$doc"});
        literal(&args, &row, &mut out).expect("written");
        assert_eq!(
            out,
            r#"{where: {id: {_eq: 7}, tag: "a \"b\"\n"}, doc: {k: [1, "$id"]}}"#
        );
        // A JSON column's key could otherwise write fields into the document.
        let hostile: Map<String, Value> =
            serde_json::from_value(json!({"doc": {"a: 1}) { secret } z: f(b: {c": 1}}))
                .expect("row");
        let mut out = String::new();
        let refused = literal(&json!("$doc"), &hostile, &mut out).expect_err("refused");
        assert!(refused.contains("is not a GraphQL name"), "{refused}");
    }
}
