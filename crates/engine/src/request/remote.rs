//! Step 9 for remote schemas' root fields: each remote's fields of the request
//! sent to it as one document (a query's remotes at once, a mutation's one
//! after the other), with the caller's session as headers, within the role's
//! time limit. A remote that fails gives its fields `null` and a
//! `remote-schema-error`; the errors a remote answers are passed on as it
//! sent them; the rest of the answer stands.

use crate::engine::{Caller, Engine};
use crate::planner::{Outside, Plan, Planner, Prepared, Source};
use grafton_remote::forward::{RemoteAnswer, RemoteCall};
use serde_json::{json, Map, Value};

/// The answers of `plan`'s remote root fields, and the remotes' `Set-Cookie`s.
pub(super) async fn run(
    engine: &Engine,
    planner: &Planner,
    plan: &Plan,
    prepared: &Prepared,
    caller: &Caller,
) -> (Outside, Vec<String>) {
    // Each remote's root fields, in document order: a query's in one call per
    // remote; a mutation's only while the next field is the same remote's
    // (its fields run in document order).
    let mut groups: Vec<(usize, Vec<(&str, &grafton_ir::RemoteRoot)>)> = Vec::new();
    for (key, source) in &plan.roots {
        if let Source::Remote(root) = source {
            let open = match plan.sequential {
                true => groups.last_mut().filter(|(i, _)| *i == root.remote),
                false => groups.iter_mut().find(|(i, _)| *i == root.remote),
            };
            match open {
                Some((_, fields)) => fields.push((key.as_str(), root)),
                None => groups.push((root.remote, vec![(key.as_str(), root)])),
            }
        }
    }
    let session = super::actions::session(caller);
    let cx = Cx {
        engine,
        planner,
        plan,
        prepared,
        caller,
        session: &session,
    };
    let answers: Vec<Option<Result<RemoteAnswer, String>>> = match plan.sequential {
        true => {
            let mut out = Vec::new();
            for (i, fields) in &groups {
                out.push(call(&cx, *i, fields).await);
            }
            out
        }
        false => {
            let calls = groups.iter().map(|(i, fields)| call(&cx, *i, fields));
            futures_util::future::join_all(calls).await
        }
    };
    let mut outside = Outside::default();
    let mut cookies = Vec::new();
    for ((i, fields), answer) in groups.iter().zip(answers) {
        let remote = planner.model().remote_schemas.get(*i);
        let mut data = Map::new();
        match answer {
            Some(Ok(mut answer)) => {
                data = answer.data.take().unwrap_or_default();
                outside.errors.append(&mut answer.errors);
                cookies.append(&mut answer.set_cookies);
            }
            Some(Err(message)) => outside.errors.push(json!({
                "message": message,
                "extensions": {"path": "$", "code": "remote-schema-error"},
            })),
            None => outside.errors.push(json!({
                "message": "the remote schema is no longer served",
                "extensions": {"path": "$", "code": "remote-schema-error"},
            })),
        }
        for (key, root) in fields {
            let mut value = data.remove(*key).unwrap_or(Value::Null);
            let filled = match remote {
                Some(r) => related(&cx, &r.introspected, &mut value, &root.fields).await,
                None => Ok(Vec::new()),
            };
            match filled {
                Ok(mut set) => cookies.append(&mut set),
                // A remote's error, as its join gave it (another remote's
                // errors inside).
                // Past the response size (or another limit): the request fails.
                Err(e @ crate::error::EngineError::Limit(_)) => outside.refused = Some(e),
                Err(crate::error::EngineError::Action(e)) => {
                    value = Value::Null;
                    let mut extensions = e.extensions;
                    extensions.insert("path".into(), json!(format!("$.{key}")));
                    outside
                        .errors
                        .push(json!({"message": e.message, "extensions": extensions}));
                }
                Err(e) => {
                    // The statement failed: the field has no answer.
                    value = Value::Null;
                    outside.errors.push(json!({
                        "message": e.to_string(),
                        "extensions": {"path": format!("$.{key}"), "code": "unexpected"},
                    }));
                }
            }
            let non_null = root
                .fields
                .first()
                .is_some_and(|f| f.definition.ty.is_non_null());
            outside.null_data |= value.is_null() && non_null;
            outside.answers.insert((*key).to_owned(), value);
        }
    }
    (outside, cookies)
}

/// What every remote call of one request is made with.
pub(super) struct Cx<'a> {
    engine: &'a Engine,
    planner: &'a Planner,
    plan: &'a Plan,
    prepared: &'a Prepared,
    caller: &'a Caller,
    session: &'a Map<String, Value>,
}

/// Sends remote `i` its `fields` (`None`: the remote is no longer served).
async fn call(
    cx: &Cx<'_>,
    i: usize,
    fields: &[(&str, &grafton_ir::RemoteRoot)],
) -> Option<Result<RemoteAnswer, String>> {
    let remote = cx.planner.model().remote_schemas.get(i)?;
    let seconds = remote.config.definition.timeout().max(1);
    let timeout = std::time::Duration::from_secs(seconds).min(cx.planner.limits().time);
    let definitions = cx.prepared.operation().map(|op| &op.variables[..]);
    let call = RemoteCall {
        config: &remote.config,
        introspected: &remote.introspected,
        document: cx.prepared.document(),
        variable_definitions: definitions.unwrap_or_default(),
        mutation: cx.plan.sequential,
        fields: (fields.iter()).map(|(k, r)| (*k, &r.fields[..])).collect(),
        variables: &cx.prepared.variables,
        session: cx.session,
        rels: grafton_remote::holes::Rels {
            tables: &cx.planner.model().action_relationships,
            remotes: &cx.planner.model().remote_type_remote_rels,
        },
        client_headers: &cx.caller.headers,
        timeout,
    };
    let Some(client) = cx.engine.remote.as_ref() else {
        return Some(Err("the outgoing HTTP client could not be built".to_owned()));
    };
    let started = std::time::Instant::now();
    let answer = grafton_remote::forward::send(client, &call).await;
    let metrics = &cx.engine.metrics().remotes;
    let name = remote.config.name.as_str();
    let seconds = metrics.seconds.with_label_values(&[name]);
    seconds.observe(started.elapsed().as_secs_f64());
    let result = match &answer {
        Ok(a) if a.errors.is_empty() => "ok",
        Ok(_) => "errors",
        Err(_) => "failed",
    };
    metrics.calls.with_label_values(&[name, result]).inc();
    Some(answer.map_err(|e| e.to_string()))
}

/// Fills the relationships from the remote's types in `value` (the answer to
/// `fields`); the `Set-Cookie`s of the remotes they call.
pub(super) async fn related(
    cx: &Cx<'_>,
    remote: &grafton_schema::remote::RemoteIntrospected,
    value: &mut Value,
    fields: &[apollo_compiler::Node<apollo_compiler::executable::Field>],
) -> Result<Vec<String>, crate::error::EngineError> {
    // The answers it puts in place count against the response size as they
    // are copied (the whole answer is checked again once written).
    let placed = std::sync::atomic::AtomicU64::new(0);
    let (engine, planner, prepared) = (cx.engine, cx.planner, cx.prepared);
    let (caller, session) = (cx.caller, cx.session);
    let join =
        super::remote_holes::JoinCx::new(engine, planner, prepared, caller, session, &placed);
    super::remote_holes::fill(join, remote, value, fields).await
}
