//! One GraphQL request, as the steps it takes. The transport (HTTP, WebSocket)
//! authenticates the caller (credentials come in headers, cookies or a WebSocket's
//! `connection_init`) and then calls [`Engine::request`] once, which reads as the
//! list of the remaining steps; each is a function below, with its own span in a
//! traced request, and its refusal (each step's error type; all of them become an
//! [`EngineError`], which the server maps to a code and a status).
//!
//! 1. `role`: the caller's role gives its planner ([`NoPermissions`]);
//! 2. `admit`: the role's rate limit takes one request, before the body is read
//!    ([`RateLimited`]);
//! 3. `read`: the transport's body, as request objects (an array is a batch)
//!    ([`ShapeError`]);
//! 4. `persisted`: a persisted query's hash becomes its document
//!    ([`types::PersistedError`]);
//! 5. `check`: parse and validate (cached), the document's limits, the allow
//!    list, what the transport may run (the planner's errors: parse, validation,
//!    limit, allow list, method);
//! 6. `spend`: a per-root-field rate limit, once the document says how many
//!    ([`RateLimited`]);
//! 7. `prepare`: coerce the variables, bind the session, then the plan (IR,
//!    translate, render; cached) and its cost (the planner's errors: variables, IR,
//!    cost);
//! 8. `queue`: the role's `max_concurrent` gate (a heavy query's lane is in `run`)
//!    ([`crate::admission::Overloaded`]);
//! 9. run and respond: a query's one statement (`read::run`) or a mutation's one
//!    transaction (`write::run`), giving the response body's JSON text (the
//!    database's errors, a write's failed check, the response size).
//!
//! Steps 5, 7 and 9 answer [`EngineError`] itself: the planner and the executor
//! serve subscriptions, `explain` and live-query polls too, where the same
//! variants reach the same mapping.

mod action_call;
mod action_related;
mod actions;
mod admit;
pub(crate) mod async_actions;
mod cached;
mod persisted;
mod read;
mod remote;
mod remote_holes;
mod remote_join;
mod subscribe;
pub mod types;
mod write;

use admit::{admit, queue, spend};

use crate::engine::{Caller, Engine};
use crate::error::EngineError;
use crate::planner::{Action, Checked, PlanKind, Planner, Prepared};
use crate::RequestInfo;
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;
pub use types::RateLimited;
use types::{Answer, GraphqlRequest, ShapeError, Transport};

impl Engine {
    /// Serves one body as `caller`: the steps above, in order. `body` is read only
    /// once the caller is admitted, so a refused client costs no buffering or
    /// parsing; its error type is the transport's own.
    pub async fn request<E: From<EngineError>>(
        &self,
        caller: &Caller,
        transport: Transport,
        body: impl Future<Output = Result<Value, E>>,
        info: &mut RequestInfo,
    ) -> Result<Answer, E> {
        let planner = self.role(caller).await?;
        admit(&planner, caller).await.map_err(EngineError::from)?;
        let body = body.await?;
        if body.is_array() {
            // Labelled so before its checks: a refused batch is counted as one.
            info.operation = Some("batch");
        }
        match read(&planner, body)? {
            Read::One(req) => {
                let steps = Box::pin(self.steps(&planner, &req, transport, caller, info));
                Ok(Answer::One(steps.await?))
            }
            Read::Batch(requests) => {
                let mut answers = Vec::with_capacity(requests.len());
                for (i, req) in requests.iter().enumerate() {
                    let mut one = RequestInfo::default();
                    // The body was admitted as the first; each other is counted too.
                    let admitted = match i {
                        0 => Ok(()),
                        _ => admit(&planner, caller).await.map_err(EngineError::from),
                    };
                    answers.push(match admitted {
                        Ok(()) => {
                            Box::pin(self.steps(&planner, req, transport, caller, &mut one)).await
                        }
                        Err(e) => Err(e),
                    });
                    // Each element's handlers' cookies reach the one response.
                    info.set_cookies.append(&mut one.set_cookies);
                }
                Ok(Answer::Batch(answers))
            }
        }
    }

    /// Serves one request already read (a GET's query string, a WebSocket's
    /// `subscribe` of a query or mutation): [`Engine::request`] from step 4.
    pub async fn execute(
        &self,
        req: &GraphqlRequest,
        transport: Transport,
        caller: &Caller,
        info: &mut RequestInfo,
    ) -> Result<String, EngineError> {
        let planner = self.role(caller).await?;
        admit(&planner, caller).await?;
        Box::pin(self.steps(&planner, req, transport, caller, info)).await
    }

    /// Steps 4 to 9 of one admitted request. Its callers box it: the steps' state
    /// is large, and inline it would grow every poll's stack frame, leaving less
    /// room for parsing and validating a deeply nested document.
    async fn steps(
        &self,
        planner: &Planner,
        req: &GraphqlRequest,
        transport: Transport,
        caller: &Caller,
        info: &mut RequestInfo,
    ) -> Result<String, EngineError> {
        let started = std::time::Instant::now();
        let stored = self.persisted(req).await?;
        let req = stored.as_ref().unwrap_or(req);
        let checked = check(planner, req, transport, info)?;
        spend(planner, caller, &checked).await?;
        let prepared = prepare(planner, checked, req, caller)?;
        let pending = match cached::lookup(self, planner, &prepared, req, caller, info).await {
            cached::Cached::Hit(body) => return Ok(body),
            cached::Cached::Miss(pending) => Some(pending),
            cached::Cached::No => None,
        };
        let _role = queue(planner).await?;
        match &prepared.action {
            Action::Mutation(mutation) => {
                // Boxed, as a query's calls out are (`read::run`): the state of a
                // mutation would otherwise size every query's, moved per request.
                let write = write::run(self, planner, mutation, &prepared, caller, info, started);
                Box::pin(write).await
            }
            Action::Plan(plan) => {
                let query = req.query.as_str();
                // An answer to keep is read on the primary: a lagging replica's
                // would be kept as fresh under the generations of now.
                let primary = pending.is_some();
                let body = read::run(
                    self, planner, plan, &prepared, caller, info, started, query, primary,
                )
                .await?;
                if let Some(pending) = pending {
                    info.cache = pending.keep(self, caller, planner, &body).await;
                }
                Ok(body)
            }
        }
    }

    /// Step 1: the planner of the caller's role (a role with no permissions
    /// anywhere has none, and is refused).
    /// The Relay API's planner of `role` (`None`: admin), built if it is not yet.
    pub async fn relay_planner(&self, role: Option<&str>) -> Result<Arc<Planner>, EngineError> {
        let caller = Caller {
            role: role.map(str::to_owned),
            relay: true,
            ..Caller::default()
        };
        self.role(&caller).await
    }

    pub(crate) async fn role(&self, caller: &Caller) -> Result<Arc<Planner>, EngineError> {
        let schemas = self.schemas();
        let schemas = match caller.relay {
            true => schemas
                .relay()
                .await
                .map_err(crate::error::EngineError::Unavailable)?,
            false => &schemas,
        };
        if schemas.unavailable(caller.role.as_deref(), caller.backend_only) {
            let why = crate::relay::UNAVAILABLE.to_owned();
            return Err(crate::error::EngineError::Unavailable(why));
        }
        Ok(schemas
            .planner_for(caller.role.as_deref(), caller.backend_only)?
            .clone())
    }
}

/// What a body holds.
enum Read {
    One(GraphqlRequest),
    Batch(Vec<GraphqlRequest>),
}

/// Step 3: the body as request objects. A JSON array is a batch (Apollo and
/// Hasura clients send them), within the role's `batch_limit`; a malformed element
/// refuses the whole batch before any of it runs.
fn read(planner: &Planner, body: Value) -> Result<Read, EngineError> {
    let items = match body {
        Value::Array(items) => items,
        one => return Ok(Read::One(GraphqlRequest::from_json(one)?)),
    };
    if items.is_empty() {
        return Err(ShapeError("the batch is empty".into()).into());
    }
    let limit = planner.limits().batch;
    crate::limits::check(crate::LimitKind::Batch, limit, items.len() as u64)?;
    let requests = items.into_iter().enumerate().map(|(i, item)| {
        GraphqlRequest::from_json(item)
            .map_err(|ShapeError(m)| ShapeError(format!("batch element {i}: {m}")))
    });
    Ok(Read::Batch(requests.collect::<Result<_, _>>()?))
}

/// Step 5: the document, parsed and validated (cached), checked as written.
fn check(
    planner: &Planner,
    req: &GraphqlRequest,
    transport: Transport,
    info: &mut RequestInfo,
) -> Result<Checked, EngineError> {
    let checked =
        trace_span!("graphql.parse_validate").in_scope(|| planner.check(req, transport))?;
    let (operation, name) = checked.operation(req.operation_name.as_deref());
    info.operation = Some(operation);
    info.name = name;
    Ok(checked)
}

/// Step 7: variables coerced, the session bound, the plan (cached) and its cost.
/// A subscription is answered by subscribing ([`Engine::subscribe`]), not here.
fn prepare(
    planner: &Planner,
    checked: Checked,
    req: &GraphqlRequest,
    caller: &Caller,
) -> Result<Prepared, EngineError> {
    let prepared = trace_span!("graphql.plan")
        .in_scope(|| planner.prepare_checked(checked, req, &caller.vars))?;
    if let Action::Plan(plan) = &prepared.action {
        if matches!(plan.kind, PlanKind::Subscription { .. }) {
            return Err(EngineError::validation(
                "a subscription is answered by subscribing (Engine::subscribe), not once",
            ));
        }
    }
    Ok(prepared)
}

/// A trace span (target `grafton::trace`: only the OpenTelemetry layer listens),
/// made only inside a traced request (the server's request span is current);
/// else `Span::none()`, which costs nothing.
macro_rules! trace_span {
    ($name:literal $(, $($field:tt)*)?) => {
        if tracing::Span::current().is_none() {
            tracing::Span::none()
        } else {
            tracing::info_span!(target: "grafton::trace", $name $(, $($field)*)?)
        }
    };
}
use trace_span;
