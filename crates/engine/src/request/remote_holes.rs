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
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// What every call of one request is made with.
#[derive(Clone, Copy)]
pub(super) struct JoinCx<'a> {
    engine: &'a Engine,
    planner: &'a Planner,
    prepared: &'a Prepared,
    caller: &'a Caller,
    session: &'a Map<String, Value>,
    /// When the calls must be done: one time limit for all of them, however
    /// many levels they go.
    deadline: Instant,
    /// The bytes of the answers put in place so far, against the role's
    /// response size (checked before each is copied).
    placed: &'a AtomicU64,
}

impl<'a> JoinCx<'a> {
    /// A context whose calls have the role's time limit from now.
    pub(super) fn new(
        engine: &'a Engine,
        planner: &'a Planner,
        prepared: &'a Prepared,
        caller: &'a Caller,
        session: &'a Map<String, Value>,
        placed: &'a AtomicU64,
    ) -> Self {
        let deadline = Instant::now() + planner.limits().time;
        Self {
            engine,
            planner,
            prepared,
            caller,
            session,
            deadline,
            placed,
        }
    }

    /// The planner (the role's model and limits).
    pub(super) fn planner(&self) -> &'a Planner {
        self.planner
    }

    /// Counts `bytes` more put in place; refused past the response size.
    fn place(&self, bytes: u64) -> Result<(), EngineError> {
        let max = self.planner.limits().max_response_bytes;
        let total = (self.placed.fetch_add(bytes, Ordering::Relaxed)).saturating_add(bytes);
        crate::limits::check(crate::LimitKind::ResponseBytes, Some(max), total)?;
        Ok(())
    }
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
    let left = cx.deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        let why = "the request's time limit was reached before the remote was called";
        return Err(ActionError::new(why, "remote-schema-error").into());
    }
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
        timeout: std::time::Duration::from_secs(seconds).min(left),
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
            let mut index: HashMap<String, usize> = HashMap::new();
            let which: Vec<Option<usize>> = (group.iter())
                .map(|h| {
                    if h.source.values().any(Value::is_null) {
                        return None;
                    }
                    let key = Value::Object(h.source.clone()).to_string();
                    Some(*index.entry(key).or_insert_with(|| {
                        distinct.push(&h.source);
                        distinct.len() - 1
                    }))
                })
                .collect();
            let rows: Vec<Map<String, Value>> = distinct.into_iter().cloned().collect();
            let (answers, mut set) = join(cx, rel.remote, &rel.path, &first.fields, &rows).await?;
            cookies.append(&mut set);
            let sizes: Vec<u64> = (answers.iter())
                .map(|a| serde_json::to_string(a).map_or(0, |t| t.len() as u64))
                .collect();
            for (hole, i) in group.iter().zip(which) {
                // Counted before it is copied (`null`: 4 bytes).
                cx.place(i.and_then(|i| sizes.get(i)).copied().unwrap_or(4))?;
                let answer = i.and_then(|i| answers.get(i)).cloned();
                if let Some(slot) = value.pointer_mut(&hole.pointer) {
                    *slot = answer.unwrap_or(Value::Null);
                }
            }
        }
        Ok(cookies)
    })
}
