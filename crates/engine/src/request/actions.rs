//! Step 9 for action root fields: each handler called through the engine's one
//! outgoing client (a query's at once, a mutation's one after the other, in
//! document order), its answer checked against the action's output type and
//! shaped to the selection.

use crate::engine::{Caller, Engine};
use crate::error::EngineError;
use crate::planner::{Plan, Planner, Prepared, Source};
use grafton_remote::output::Shaper;
use grafton_remote::{ActionCall, ActionError};
use serde_json::{Map, Value};

/// The answers of `plan`'s action root fields, by response key, and the
/// `Set-Cookie` values their handlers answered.
pub(super) async fn run(
    engine: &Engine,
    planner: &Planner,
    plan: &Plan,
    prepared: &Prepared,
    caller: &Caller,
    request_query: &str,
) -> Result<(Map<String, Value>, Vec<String>), EngineError> {
    let cx = Cx {
        engine,
        planner,
        prepared,
        caller,
        session: session(caller),
        request_query,
        mutation: plan.sequential,
    };
    let calls = (plan.roots.iter()).filter_map(|(key, source)| match source {
        Source::Action(a) => Some((key, a)),
        _ => None,
    });
    let mut out = Map::new();
    let mut cookies = Vec::new();
    if plan.sequential {
        for (key, root) in calls {
            let (value, set) = answer(&cx, root).await?;
            out.insert(key.clone(), value);
            cookies.extend(set);
        }
        return Ok((out, cookies));
    }
    let answers = futures_util::future::join_all(calls.map(|(key, root)| {
        let cx = &cx;
        async move { (key, answer(cx, root).await) }
    }))
    .await;
    for (key, answer) in answers {
        let (value, set) = answer?;
        out.insert(key.clone(), value);
        cookies.extend(set);
    }
    Ok((out, cookies))
}

/// What every action of one request is answered with.
struct Cx<'a> {
    engine: &'a Engine,
    planner: &'a Planner,
    prepared: &'a Prepared,
    caller: &'a Caller,
    /// The session sent to the handlers (and written with an asynchronous call).
    session: Map<String, Value>,
    request_query: &'a str,
    /// A mutation (an asynchronous action is called), else a query (its
    /// result is read).
    mutation: bool,
}

/// The session a handler is sent: the caller's variables, with its role.
pub(crate) fn session(caller: &Caller) -> Map<String, Value> {
    let mut session = caller.vars.clone();
    if !session.contains_key("x-hasura-role") {
        let role = caller.role.as_deref().unwrap_or("admin");
        session.insert("x-hasura-role".into(), Value::String(role.to_owned()));
    }
    session
}

/// One action root field's answer, and its handler's `Set-Cookie` values.
async fn answer(
    cx: &Cx<'_>,
    root: &grafton_ir::ActionRoot,
) -> Result<(Value, Vec<String>), EngineError> {
    let Cx {
        engine,
        planner,
        prepared,
        caller,
        ..
    } = *cx;
    let model = planner.model();
    let Some(action) = model.actions.get(root.action) else {
        return Err(ActionError::new("the action is no longer served", "not-supported").into());
    };
    let Some(field) = root.fields.first() else {
        return Ok((Value::Null, Vec::new()));
    };
    let related = |object: &str, field: &str| {
        (model.action_relationships.iter()).any(|r| r.object == object && r.field == field)
    };
    let shaper = Shaper {
        schema: &model.schema,
        document: prepared.document(),
        variables: &prepared.variables,
        related: &related,
        holes: Default::default(),
    };
    if action.definition.kind == grafton_schema::config::ActionKind::Asynchronous {
        let answer = match cx.mutation {
            true => {
                let input = arguments(&shaper, field);
                super::async_actions::enqueue(engine, caller, &cx.session, action, input).await?
            }
            false => {
                let reader = engine.reader(planner, prepared, caller, &cx.session);
                super::async_actions::result(&reader, root, action).await?.0
            }
        };
        return Ok((answer, Vec::new()));
    }
    let input = arguments(&shaper, field);
    let call = ActionCall {
        action,
        input,
        session: &cx.session,
        request_query: Some(cx.request_query),
        client_headers: &caller.headers,
        // Within the request's own time limit.
        timeout: std::time::Duration::from_secs(action.definition.timeout.max(1))
            .min(planner.limits().time),
    };
    let output = engine.call_action(call).await?;
    let count = |result: &str| engine.count_action(&action.name, result);
    let fields: Vec<_> = root.fields.iter().collect();
    let mut answer = shaper
        .shape(&field.definition.ty, &output.value, &fields, "$")
        .map_err(|why| {
            let message = format!(
                "the action's handler answered a value that does not fit its output type: {why}"
            );
            count("invalid_answer");
            EngineError::from(ActionError::new(message, "unexpected"))
        })?;
    count("ok");
    let holes = (shaper.holes.into_inner()).unwrap_or_else(|p| p.into_inner());
    if !holes.is_empty() {
        super::action_related::fill(&engine.db, planner, prepared, &mut answer, holes).await?;
    }
    Ok((answer, output.set_cookies))
}

/// A field's arguments as a handler's `input`.
fn arguments(shaper: &Shaper<'_>, field: &apollo_compiler::executable::Field) -> Value {
    let input: Map<String, Value> = (field.arguments.iter())
        .filter_map(|a| Some((a.name.to_string(), shaper.argument(&a.value)?)))
        .collect();
    Value::Object(input)
}
