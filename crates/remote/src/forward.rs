//! A request's part for one remote schema: its root fields written back as one
//! document in the remote's own names (each field under its response key as
//! alias, fragments inlined, only the variables it uses), sent with the
//! caller's session as headers, and the answer read (`data` and `errors`), its
//! `__typename`s named as served.

use crate::client::{CallError, Client};
use apollo_compiler::ast::{self, Type};
use apollo_compiler::executable::{Field, Selection, SelectionSet};
use apollo_compiler::{ExecutableDocument, Node};
use grafton_schema::config::RemoteSchemaConfig;
use grafton_schema::remote::RemoteIntrospected;
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use std::fmt::Write;
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

/// Writes a remote's part of a request in its own names.
struct Printer<'a> {
    remote: &'a RemoteIntrospected,
    document: &'a ExecutableDocument,
    used: BTreeSet<String>,
    out: String,
}

impl Printer<'_> {
    fn value(&mut self, v: &ast::Value) {
        collect_variables(v, &mut self.used);
        let _ = write!(self.out, "{v}");
    }

    fn directives(&mut self, directives: &ast::DirectiveList) {
        // Only `@skip` and `@include` mean anything to the remote.
        for d in directives.iter() {
            if d.name == "skip" || d.name == "include" {
                let _ = write!(self.out, " @{}(", d.name);
                for (i, a) in d.arguments.iter().enumerate() {
                    let sep = if i > 0 { ", " } else { "" };
                    let _ = write!(self.out, "{sep}{}: ", a.name);
                    self.value(&a.value);
                }
                self.out.push(')');
            }
        }
    }

    fn field(&mut self, key: &str, parent: &str, f: &Field) {
        let name = self.remote.remote_field(parent, f.name.as_str()).to_owned();
        let _ = write!(self.out, "{key}: {name}");
        if !f.arguments.is_empty() {
            self.out.push('(');
            for (i, a) in f.arguments.iter().enumerate() {
                let sep = if i > 0 { ", " } else { "" };
                let _ = write!(self.out, "{sep}{}: ", a.name);
                self.value(&a.value);
            }
            self.out.push(')');
        }
        self.directives(&f.directives);
        if !f.selection_set.selections.is_empty() {
            self.set(&f.selection_set);
        }
    }

    fn set(&mut self, set: &SelectionSet) {
        // Past the cap, nothing more is written (the call is refused).
        if self.out.len() > MAX_DOCUMENT_BYTES {
            return;
        }
        let parent = set.ty.as_str();
        self.out.push_str(" {");
        for s in &set.selections {
            self.out.push(' ');
            match s {
                Selection::Field(f) => self.field(f.response_key().as_str(), parent, f),
                Selection::InlineFragment(i) => {
                    self.out.push_str("...");
                    if let Some(t) = &i.type_condition {
                        let _ = write!(self.out, " on {}", self.remote.remote_type(t.as_str()));
                    }
                    self.directives(&i.directives);
                    self.set(&i.selection_set);
                }
                Selection::FragmentSpread(spread) => {
                    let Some(fragment) = self.document.fragments.get(&spread.fragment_name) else {
                        continue;
                    };
                    let on = self.remote.remote_type(fragment.type_condition().as_str());
                    let _ = write!(self.out, "... on {on}");
                    self.directives(&spread.directives);
                    self.set(&fragment.selection_set);
                }
            }
        }
        self.out.push_str(" }");
    }
}

fn collect_variables(v: &ast::Value, used: &mut BTreeSet<String>) {
    match v {
        ast::Value::Variable(name) => {
            used.insert(name.to_string());
        }
        ast::Value::List(items) => items.iter().for_each(|i| collect_variables(i, used)),
        ast::Value::Object(fields) => fields.iter().for_each(|(_, v)| collect_variables(v, used)),
        _ => {}
    }
}

/// `ty` in the remote's names.
fn remote_type(ty: &Type, remote: &RemoteIntrospected) -> String {
    match ty {
        Type::Named(n) => remote.remote_type(n.as_str()).to_owned(),
        Type::NonNullNamed(n) => format!("{}!", remote.remote_type(n.as_str())),
        Type::List(inner) => format!("[{}]", remote_type(inner, remote)),
        Type::NonNullList(inner) => format!("[{}]!", remote_type(inner, remote)),
    }
}

/// The longest document sent to a remote: fragments are inlined, and nested
/// spreads could otherwise multiply a small request's size.
pub const MAX_DOCUMENT_BYTES: usize = 1024 * 1024;

/// The document and variables sent for `call`; or why it is not sent.
pub fn request(call: &RemoteCall<'_>) -> Result<Value, String> {
    let root = match call.mutation {
        true => call.introspected.mutation_type.as_deref(),
        false => Some(call.introspected.query_type.as_str()),
    };
    let mut p = Printer {
        remote: call.introspected,
        document: call.document,
        used: BTreeSet::new(),
        out: String::new(),
    };
    p.out.push_str(" {");
    for (key, fields) in &call.fields {
        for f in fields.iter() {
            p.out.push(' ');
            p.field(key, root.unwrap_or_default(), f);
        }
    }
    p.out.push_str(" }");
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
            remote_type(&d.ty, call.introspected)
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
    Ok(json!({"query": format!("{keyword}{declared}{}", p.out), "variables": variables}))
}

/// The headers sent: the client's when the remote forwards them, then the
/// session's variables, then the remote's own (each wins over the ones before,
/// as Hasura's order is).
fn headers(call: &RemoteCall<'_>) -> Result<Vec<(String, String)>, String> {
    let d = &call.config.definition;
    let mut out = vec![(
        "User-Agent".to_owned(),
        crate::action::USER_AGENT.to_owned(),
    )];
    if d.forward_client_headers {
        for (n, v) in crate::action::forwarded(call.client_headers) {
            set(&mut out, &n, v);
        }
    }
    for (n, v) in call.session {
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
    let headers = headers(call).map_err(fail)?;
    let body = request(call).map_err(fail)?;
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
    if let Some(data) = data
        .as_mut()
        .filter(|_| !call.introspected.type_renames.is_empty())
    {
        for (key, fields) in &call.fields {
            for f in fields.iter() {
                if let Some(v) = data.get_mut(*key) {
                    served_typenames(v, &f.selection_set, call.introspected, call.document);
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

/// Renames the remote's `__typename`s in `value` (the answer to `set`) to the
/// names served: each response key of an object once, whatever number of
/// fragments select it.
fn served_typenames(
    value: &mut Value,
    set: &SelectionSet,
    remote: &RemoteIntrospected,
    document: &ExecutableDocument,
) {
    match value {
        Value::Array(items) => items
            .iter_mut()
            .for_each(|v| served_typenames(v, set, remote, document)),
        Value::Object(object) => {
            let mut fields = Vec::new();
            collect(set, document, &mut fields, &mut Vec::new());
            let mut done: Vec<&str> = Vec::new();
            for f in &fields {
                let key = f.response_key().as_str();
                let Some(v) = object.get_mut(key) else {
                    continue;
                };
                if f.name == "__typename" {
                    if !done.contains(&key) {
                        done.push(key);
                        if let Some(name) = v.as_str() {
                            *v = Value::String(remote.served_type(name));
                        }
                    }
                } else if !f.selection_set.selections.is_empty() {
                    served_typenames(v, &f.selection_set, remote, document);
                }
            }
        }
        _ => {}
    }
}

/// The fields of `set`, fragments spread (each fragment once).
fn collect<'a>(
    set: &'a SelectionSet,
    document: &'a ExecutableDocument,
    out: &mut Vec<&'a Node<Field>>,
    seen: &mut Vec<&'a str>,
) {
    for s in &set.selections {
        match s {
            Selection::Field(f) => out.push(f),
            Selection::InlineFragment(i) => collect(&i.selection_set, document, out, seen),
            Selection::FragmentSpread(spread) => {
                let name = spread.fragment_name.as_str();
                if seen.contains(&name) {
                    continue;
                }
                seen.push(name);
                if let Some(fragment) = document.fragments.get(name) {
                    collect(&fragment.selection_set, document, out, seen);
                }
            }
        }
    }
}
