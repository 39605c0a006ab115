//! A remote's answer with Grafton's own fields in it: a relationship from one
//! of its types to a table (one statement per relationship field, see
//! `action_related`) or to another remote schema (one call per relationship
//! field, every object's distinct values at once, see [`join`]); the other
//! remote's answers may hold such fields in turn, filled the same way (as
//! deep as the document goes).

use crate::engine::{Caller, Engine};
use crate::error::EngineError;
use crate::planner::{Planner, Prepared};
use apollo_compiler::executable::Field;
use apollo_compiler::Node;
use futures_util::future::BoxFuture;
use grafton_remote::holes::Rels;
use grafton_remote::join::{JoinCall, JoinError};
use grafton_remote::output::Hole;
use grafton_remote::ActionError;
use grafton_schema::remote::RemoteIntrospected;
use grafton_schema::RemoteStep;
use serde_json::{Map, Value};

/// What every call of one request is made with.
#[derive(Clone, Copy)]
pub(super) struct JoinCx<'a> {
    pub(super) engine: &'a Engine,
    pub(super) planner: &'a Planner,
    pub(super) prepared: &'a Prepared,
    pub(super) caller: &'a Caller,
    pub(super) session: &'a Map<String, Value>,
}

impl JoinCx<'_> {
    /// The model's relationships from the remotes' types.
    fn rels(&self) -> Rels<'_> {
        let model = self.planner.model();
        Rels {
            tables: &model.action_relationships,
            remotes: &model.remote_type_remote_rels,
        }
    }
}

/// Remote `remote`'s answer for each of `rows` (the document's `fields` asked
/// at the end of `path`, each row's values filling its arguments) in one call,
/// their own relationships filled; and the remotes' `Set-Cookie`s.
pub(super) async fn join(
    cx: JoinCx<'_>,
    remote: usize,
    path: &[RemoteStep],
    fields: &[Node<Field>],
    rows: &[Map<String, Value>],
) -> Result<(Vec<Value>, Vec<String>), EngineError> {
    let (engine, planner, prepared) = (cx.engine, cx.planner, cx.prepared);
    let gone = || {
        ActionError::new(
            "the remote relationship is no longer served",
            "remote-schema-error",
        )
    };
    let remote = planner
        .model()
        .remote_schemas
        .get(remote)
        .ok_or_else(gone)?;
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
        session: cx.session,
        rels: cx.rels(),
        client_headers: &cx.caller.headers,
        timeout: std::time::Duration::from_secs(seconds).min(planner.limits().time),
        path,
        fields,
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
    let (values, mut cookies) = answer.map_err(|e| {
        let message = e.to_string();
        let mut error = ActionError::new(message, "remote-schema-error");
        if let JoinError::Errors(errors) = e {
            // Hasura's answer: the request fails, the remote's errors inside.
            error = ActionError::new("Errors from remote server", "unexpected");
            let internal = serde_json::json!({ "errors": errors });
            error.extensions.insert("internal".into(), internal);
        }
        EngineError::from(error)
    })?;
    let mut all = Value::Array(values);
    cookies.extend(fill(cx, &remote.introspected, &mut all, fields).await?);
    let values = match all {
        Value::Array(values) => values,
        _ => Vec::new(),
    };
    Ok((values, cookies))
}

/// Fills the relationships from `remote`'s types in `value` (its answer to
/// `fields`); the `Set-Cookie`s of the remotes called.
pub(super) fn fill<'a>(
    cx: JoinCx<'a>,
    remote: &'a RemoteIntrospected,
    value: &'a mut Value,
    fields: &'a [Node<Field>],
) -> BoxFuture<'a, Result<Vec<String>, EngineError>> {
    Box::pin(async move {
        let document = cx.prepared.document();
        let holes = grafton_remote::holes::find(value, fields, document, cx.rels(), remote);
        let model = cx.planner.model();
        let (to_remotes, to_tables): (Vec<Hole>, Vec<Hole>) = holes.into_iter().partition(|h| {
            (model.remote_type_remote_rels.iter())
                .any(|r| r.object == h.object && r.field == h.field)
        });
        if !to_tables.is_empty() {
            let db = &cx.engine.db;
            super::action_related::fill(db, cx.planner, cx.prepared, value, to_tables).await?;
        }
        let mut cookies = Vec::new();
        for group in super::action_related::grouped(to_remotes) {
            let first = &group[0];
            let rel = (model.remote_type_remote_rels.iter())
                .find(|r| r.object == first.object && r.field == first.field);
            let Some(rel) = rel else { continue };
            // Each distinct set of values once; an object without one, null.
            let mut distinct: Vec<&Map<String, Value>> = Vec::new();
            let which: Vec<Option<usize>> = (group.iter())
                .map(|h| {
                    if h.source.values().any(Value::is_null) {
                        return None;
                    }
                    let at = distinct.iter().position(|d| **d == h.source);
                    Some(at.unwrap_or_else(|| {
                        distinct.push(&h.source);
                        distinct.len() - 1
                    }))
                })
                .collect();
            let rows: Vec<Map<String, Value>> = distinct.into_iter().cloned().collect();
            let (answers, mut set) = join(cx, rel.remote, &rel.path, &first.fields, &rows).await?;
            cookies.append(&mut set);
            for (hole, i) in group.iter().zip(which) {
                let answer = i
                    .and_then(|i| answers.get(i))
                    .cloned()
                    .unwrap_or(Value::Null);
                if let Some(slot) = value.pointer_mut(&hole.pointer) {
                    *slot = answer;
                }
            }
        }
        Ok(cookies)
    })
}
