//! Step 9 for remote relationships: the statement answered each row's values
//! where a remote relationship's field is; each relationship of the document
//! is then one call to its remote for every row at once (each distinct set of
//! values once, rows without a value answered null), and the answers put in
//! the rows' place. The document's relationships are called at once.

use crate::engine::{Caller, Engine};
use crate::error::EngineError;
use crate::planner::{Planner, Prepared};
use grafton_ir::JoinSite;
use grafton_remote::join::{JoinCall, JoinError};
use grafton_remote::ActionError;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// `text` (the statement's answer, a JSON object) with `sites`' remote
/// answers in it; the remotes' `Set-Cookie`s.
pub(crate) async fn joined(
    engine: &Engine,
    planner: &Planner,
    prepared: &Prepared,
    caller: &Caller,
    sites: &[JoinSite],
    text: String,
) -> Result<(String, Vec<String>), EngineError> {
    let mut data: Map<String, Value> = serde_json::from_str(&text).map_err(|e| {
        EngineError::Execute(grafton_execute::ExecuteError::Config(format!(
            "database returned invalid JSON: {e}"
        )))
    })?;
    let cookies = join(engine, planner, prepared, caller, sites, &mut data).await?;
    let text = Value::Object(data).to_string();
    let max = planner.limits().max_response_bytes;
    crate::limits::check(
        crate::LimitKind::ResponseBytes,
        Some(max),
        text.len() as u64,
    )?;
    Ok((text, cookies))
}

/// Puts each of `sites`' remote answers in `data` (the statement's answer);
/// the remotes' `Set-Cookie`s.
pub(crate) async fn join(
    engine: &Engine,
    planner: &Planner,
    prepared: &Prepared,
    caller: &Caller,
    sites: &[JoinSite],
    data: &mut Map<String, Value>,
) -> Result<Vec<String>, EngineError> {
    // Each site's distinct rows, and which of them each place asks.
    let mut asked: Vec<Asked> = Vec::new();
    for site in sites {
        let mut places = Vec::new();
        if let Some(v) = data.get(&site.path[0]) {
            find(v, &site.path[1..], &mut places);
        }
        let mut distinct: Vec<Map<String, Value>> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        let which = (places.iter())
            .map(|v| {
                let row = v.as_object()?;
                if row.values().any(Value::is_null) {
                    return None;
                }
                let key = v.to_string();
                let i = *index.entry(key).or_insert_with(|| {
                    distinct.push(row.clone());
                    distinct.len() - 1
                });
                Some(i)
            })
            .collect();
        asked.push((distinct, which));
    }
    let session = super::actions::session(caller);
    let calls = (sites.iter().zip(&asked))
        .map(|(site, (rows, _))| call(engine, planner, prepared, caller, &session, site, rows));
    let answers = futures_util::future::join_all(calls).await;
    let mut cookies = Vec::new();
    for ((site, (_, which)), answer) in sites.iter().zip(&asked).zip(answers) {
        let (values, mut set) = answer?;
        cookies.append(&mut set);
        let mut places = Vec::new();
        if let Some(v) = data.get_mut(&site.path[0]) {
            find_mut(v, &site.path[1..], &mut places);
        }
        for (place, i) in places.into_iter().zip(which) {
            *place = i
                .and_then(|i| values.get(i).cloned())
                .unwrap_or(Value::Null);
        }
    }
    Ok(cookies)
}

/// One site's distinct rows, and which of them each of its places asks
/// (`None`: a row without the values, answered null).
type Asked = (Vec<Map<String, Value>>, Vec<Option<usize>>);

/// The places `path` leads to from `v` (a list on the way: each element's).
fn find<'v>(v: &'v Value, path: &[String], out: &mut Vec<&'v Value>) {
    match (v, path.split_first()) {
        (Value::Array(items), _) if !path.is_empty() => {
            items.iter().for_each(|i| find(i, path, out))
        }
        (_, None) => out.push(v),
        (Value::Object(o), Some((key, rest))) => {
            if let Some(v) = o.get(key) {
                find(v, rest, out)
            }
        }
        _ => {}
    }
}

/// [`find`], for writing.
fn find_mut<'v>(v: &'v mut Value, path: &[String], out: &mut Vec<&'v mut Value>) {
    let Some((key, rest)) = path.split_first() else {
        out.push(v);
        return;
    };
    match v {
        Value::Array(items) => items.iter_mut().for_each(|i| find_mut(i, path, out)),
        Value::Object(o) => {
            if let Some(v) = o.get_mut(key) {
                find_mut(v, rest, out)
            }
        }
        _ => {}
    }
}

/// One site's call: the answer for each of `rows`, and the `Set-Cookie`s.
async fn call(
    engine: &Engine,
    planner: &Planner,
    prepared: &Prepared,
    caller: &Caller,
    session: &Map<String, Value>,
    site: &JoinSite,
    rows: &[Map<String, Value>],
) -> Result<(Vec<Value>, Vec<String>), EngineError> {
    let model = planner.model();
    let gone = || {
        ActionError::new(
            "the remote relationship is no longer served",
            "remote-schema-error",
        )
    };
    let rel = model
        .remote_relationships
        .get(site.join.rel)
        .ok_or_else(gone)?;
    let remote = model.remote_schemas.get(rel.remote).ok_or_else(gone)?;
    if rows.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let Some(client) = engine.remote.as_ref() else {
        let e = ActionError::new(
            "the outgoing HTTP client could not be built",
            "remote-schema-error",
        );
        return Err(e.into());
    };
    let seconds = remote.config.definition.timeout().max(1);
    let definitions = prepared.operation().map(|op| &op.variables[..]);
    let call = JoinCall {
        config: &remote.config,
        introspected: &remote.introspected,
        document: prepared.document(),
        variable_definitions: definitions.unwrap_or_default(),
        variables: &prepared.variables,
        session,
        client_headers: &caller.headers,
        timeout: std::time::Duration::from_secs(seconds).min(planner.limits().time),
        path: &rel.path,
        fields: &site.join.fields,
        rows,
    };
    let started = std::time::Instant::now();
    let answer = grafton_remote::join::send(client, &call).await;
    let metrics = &engine.metrics().remotes;
    let name = remote.config.name.as_str();
    let seconds = metrics.seconds.with_label_values(&[name]);
    seconds.observe(started.elapsed().as_secs_f64());
    let result = match &answer {
        Ok(_) => "ok",
        Err(JoinError::Errors(_)) => "errors",
        Err(JoinError::Failed(_)) => "failed",
    };
    metrics.calls.with_label_values(&[name, result]).inc();
    answer.map_err(|e| {
        let message = e.to_string();
        let mut error = ActionError::new(message, "remote-schema-error");
        if let JoinError::Errors(errors) = e {
            // Hasura's answer: the request fails, the remote's errors inside.
            error = ActionError::new("Errors from remote server", "unexpected");
            let internal = serde_json::json!({ "errors": errors });
            error.extensions.insert("internal".into(), internal);
        }
        error.into()
    })
}
