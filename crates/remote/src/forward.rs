//! A request's part for one remote schema: its root fields written back as one
//! document in the remote's own names (each field under its response key as
//! alias, fragments inlined, only the variables it uses), sent with the
//! caller's session as headers, and the answer read (`data` and `errors`), its
//! `__typename`s named as served.

use crate::client::{CallError, Client};
use apollo_compiler::ast;
use apollo_compiler::executable::Field;
use apollo_compiler::{ExecutableDocument, Node};
use grafton_schema::config::RemoteSchemaConfig;
use grafton_schema::remote::RemoteIntrospected;
use serde_json::{json, Map, Value};
use std::time::Duration;

/// What is sent to one remote schema.
pub struct RemoteCall<'a> {
    /// The remote.
    pub config: &'a RemoteSchemaConfig,
    /// Its types' names as served.
    pub introspected: &'a RemoteIntrospected,
    /// The request's document (its fragments, its variables' types).
    pub document: &'a ExecutableDocument,
    /// The operation's variable definitions.
    pub variable_definitions: &'a [Node<ast::VariableDefinition>],
    /// A mutation (else a query).
    pub mutation: bool,
    /// Its root fields, by response key.
    pub fields: Vec<(&'a str, &'a [Node<Field>])>,
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
}

/// A remote's answer: its data by response key (absent when it gave none) and
/// its errors as it sent them.
#[derive(Debug, Default)]
pub struct RemoteAnswer {
    /// `data`.
    pub data: Option<Map<String, Value>>,
    /// `errors`.
    pub errors: Vec<Value>,
    /// Its `Set-Cookie` headers.
    pub set_cookies: Vec<String>,
}

/// Why a remote gave no answer.
#[derive(Debug, thiserror::Error)]
#[error("the remote schema '{name}': {why}")]
pub struct RemoteError {
    /// The remote's name.
    pub name: String,
    /// What went wrong (never its URL, which may hold a secret).
    pub why: String,
}

pub use crate::print::MAX_DOCUMENT_BYTES;

/// A field under a namespace root field: where its answer goes.
struct Slot {
    /// The namespace field's response key.
    outer: String,
    /// Its own response key there.
    inner: String,
    /// The alias it was sent under (`None`: `__typename`, answered here).
    alias: Option<String>,
    /// The namespace's type (its `__typename`).
    ty: String,
}

/// The document and variables sent for `call`; or why it is not sent.
pub fn request(call: &RemoteCall<'_>) -> Result<Value, String> {
    request_slots(call).map(|(body, _)| body)
}

fn request_slots(call: &RemoteCall<'_>) -> Result<(Value, Vec<Slot>), String> {
    let root = match call.mutation {
        true => call.introspected.mutation_type.as_deref(),
        false => Some(call.introspected.query_type.as_str()),
    };
    let mut p = crate::print::Printer::new(
        call.introspected,
        call.document,
        call.session,
        call.variables,
        call.rels,
    );
    p.out.push_str(" {");
    let namespace = call.introspected.namespace.as_deref();
    let mut slots: Vec<Slot> = Vec::new();
    for (key, fields) in &call.fields {
        for f in fields.iter() {
            if Some(f.name.as_str()) == namespace {
                // The namespace's fields are the remote's root fields.
                let mut inner = Vec::new();
                crate::typenames::collect(
                    &f.selection_set,
                    call.document,
                    &mut inner,
                    &mut Vec::new(),
                );
                let ty = f.selection_set.ty.to_string();
                for g in inner {
                    let at = g.response_key().to_string();
                    let same = |s: &&Slot| s.outer == *key && s.inner == at;
                    let alias = match slots.iter().find(same) {
                        Some(s) => s.alias.clone(),
                        None => {
                            let alias =
                                (g.name != "__typename").then(|| format!("_ns{}", slots.len()));
                            let (outer, inner, ty) = (key.to_string(), at, ty.clone());
                            slots.push(Slot {
                                outer,
                                inner,
                                alias: alias.clone(),
                                ty,
                            });
                            alias
                        }
                    };
                    if let Some(alias) = alias {
                        p.out.push(' ');
                        p.field(&alias, &ty, g);
                    }
                }
                continue;
            }
            p.out.push(' ');
            p.field(key, root.unwrap_or_default(), f);
        }
    }
    p.out.push_str(" }");
    if let Some(e) = p.error {
        return Err(e);
    }
    if p.out.len() > MAX_DOCUMENT_BYTES {
        return Err(format!(
            "its part of the request, fragments inlined, is longer than {MAX_DOCUMENT_BYTES} bytes"
        ));
    }
    let mut definitions = Vec::new();
    let mut variables = Map::new();
    for d in call.variable_definitions {
        if !p.used.contains(d.name.as_str()) {
            continue;
        }
        definitions.push(format!(
            "${}: {}",
            d.name,
            crate::print::remote_type(&d.ty, call.introspected)
        ));
        if let Some(v) = call.variables.get(d.name.as_str()) {
            variables.insert(d.name.to_string(), v.clone());
        }
    }
    let keyword = if call.mutation { "mutation" } else { "query" };
    let declared = match definitions.is_empty() {
        true => String::new(),
        false => format!("({})", definitions.join(", ")),
    };
    let body = json!({"query": format!("{keyword}{declared}{}", p.out), "variables": variables});
    Ok((body, slots))
}

/// The headers sent: the client's when the remote forwards them, then the
/// session's variables, then the remote's own (each wins over the ones before,
/// as Hasura's order is).
pub(crate) fn headers(
    config: &RemoteSchemaConfig,
    session: &Map<String, Value>,
    client_headers: &[(String, String)],
) -> Result<Vec<(String, String)>, String> {
    let d = &config.definition;
    let mut out = vec![(
        "User-Agent".to_owned(),
        crate::action::USER_AGENT.to_owned(),
    )];
    if d.forward_client_headers {
        for (n, v) in crate::action::forwarded(client_headers) {
            set(&mut out, &n, v);
        }
    }
    for (n, v) in session {
        let value = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        set(&mut out, n, value);
    }
    configured(&d.headers, &mut out)?;
    Ok(out)
}

/// Sets the remote's own `headers` in `out`, over any of the same name (a
/// configured value is a `{{ENV}}` template too).
pub(crate) fn configured(
    headers: &[grafton_schema::config::HeaderConf],
    out: &mut Vec<(String, String)>,
) -> Result<(), String> {
    for h in headers {
        let value = match &h.value {
            Some(v) => crate::webhook::templated(v)?,
            None => crate::webhook::header_value(h)?,
        };
        set(out, &h.name, value);
    }
    Ok(())
}

/// Sets header `name` in `out`, over any of the same name.
fn set(out: &mut Vec<(String, String)>, name: &str, value: String) {
    out.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    out.push((name.to_owned(), value));
}

/// The remote's URL.
pub fn url(config: &RemoteSchemaConfig) -> Result<String, String> {
    let d = &config.definition;
    match (&d.url, &d.url_from_env) {
        (Some(url), None) => crate::webhook::templated(url),
        (None, Some(var)) => std::env::var(var)
            .map_err(|_| format!("the environment variable {var} (url_from_env) is not set")),
        (Some(_), Some(_)) => Err("both `url` and `url_from_env` can't be present".into()),
        (None, None) => Err("both `url` and `url_from_env` can't be empty".into()),
    }
}

/// POSTs `body` to `config`'s remote with `headers`; its JSON answer.
pub async fn post(
    client: &Client,
    config: &RemoteSchemaConfig,
    headers: &[(String, String)],
    timeout: Duration,
    body: &Value,
) -> Result<(Value, Vec<String>), RemoteError> {
    let fail = |why: String| RemoteError {
        name: config.name.clone(),
        why,
    };
    let url = url(config).map_err(fail)?;
    let answer = client.post_json(&url, headers, timeout, body).await;
    let answer = answer.map_err(|e| {
        fail(match e {
            CallError::Timeout(s) => format!("it did not answer within {s} s"),
            CallError::TooLarge(n) => format!("it answered more than {n} bytes"),
            CallError::Failed(why) => format!("it could not be called: {why}"),
        })
    })?;
    let value: Value = serde_json::from_slice(&answer.body).map_err(|_| {
        fail(format!(
            "it answered {} with a body that is not JSON",
            answer.status
        ))
    })?;
    Ok((value, answer.set_cookies))
}

/// Sends `call` to its remote; its answer, `__typename`s named as served.
pub async fn send(client: &Client, call: &RemoteCall<'_>) -> Result<RemoteAnswer, RemoteError> {
    let fail = |why: String| RemoteError {
        name: call.config.name.clone(),
        why,
    };
    let headers = headers(call.config, call.session, call.client_headers).map_err(fail)?;
    let (body, slots) = request_slots(call).map_err(fail)?;
    // Nothing for the remote (a namespace's `__typename` alone): no call.
    if slots.iter().all(|s| s.alias.is_none())
        && call.fields.iter().all(|(_, f)| {
            f.iter()
                .all(|f| Some(f.name.as_str()) == call.introspected.namespace.as_deref())
        })
    {
        let mut data = Map::new();
        unnest(&mut data, slots);
        return Ok(RemoteAnswer {
            data: Some(data),
            ..Default::default()
        });
    }
    let (mut value, set_cookies) = post(client, call.config, &headers, call.timeout, &body).await?;
    let errors = match value.get_mut("errors").map(Value::take) {
        None | Some(Value::Null) => Vec::new(),
        // Some servers always send `"errors": []`: no errors.
        Some(Value::Array(list)) => list,
        Some(_) => {
            return Err(fail(
                "its answer's \"errors\" is not a list of errors".into(),
            ))
        }
    };
    let mut data = match value.get_mut("data").map(Value::take) {
        Some(Value::Object(data)) => Some(data),
        None | Some(Value::Null) if !errors.is_empty() => None,
        _ => return Err(fail("its answer has neither data nor errors".into())),
    };
    if let Some(data) = data.as_mut() {
        unnest(data, slots);
    }
    if let Some(data) = data
        .as_mut()
        .filter(|_| !call.introspected.type_renames.is_empty())
    {
        for (key, fields) in &call.fields {
            for f in fields.iter() {
                if let Some(v) = data.get_mut(*key) {
                    crate::typenames::served(v, &f.selection_set, call.introspected, call.document);
                }
            }
        }
    }
    Ok(RemoteAnswer {
        data,
        errors,
        set_cookies,
    })
}

/// The namespace fields' answers put back under them, in document order: every
/// aliased answer taken out first (a client's own key may look like an alias),
/// a field the remote skipped left out.
fn unnest(data: &mut Map<String, Value>, slots: Vec<Slot>) {
    let taken: Vec<(Slot, Option<Value>)> = (slots.into_iter())
        .map(|slot| {
            let value = match &slot.alias {
                Some(alias) => data.remove(alias),
                None => Some(Value::String(slot.ty.clone())),
            };
            (slot, value)
        })
        .collect();
    for (slot, value) in taken {
        let outer = data
            .entry(slot.outer)
            .or_insert_with(|| Value::Object(Map::new()));
        if let (Value::Object(o), Some(value)) = (outer, value) {
            o.insert(slot.inner, value);
        }
    }
}
