//! A connection's operations: starting one (a live query joins its cohort, anything
//! else runs once), its answers, planning live queries again after a reload, and
//! ending them.

use super::{protocol, wire::json_error, Connection, Done, Op};
use crate::engine::{Caller, Delivery, GraphqlRequest, Resume, Sink, Transport};
use crate::error::RequestError;
use crate::observe::Observed;
use crate::state::AppState;
use axum::http::HeaderMap;
use serde_json::Value;
use std::collections::HashMap;
use tokio::task::JoinSet;
use tracing::Instrument;

impl Connection {
    /// Starts an operation: a subscription joins its cohort; anything else runs once.
    pub(super) async fn start(
        &mut self,
        id: String,
        payload: Value,
        caller: Caller,
        sink: &Sink,
        running: &mut JoinSet<Done>,
    ) -> Vec<String> {
        let max = self.state.ws.max_operations;
        if self.ops.len() >= max {
            let e = json_error(
                &format!("this connection already runs {max} operations, the most it may"),
                "subscription-limit-exceeded",
            );
            return vec![protocol::error(&id, &e)];
        }
        let request = match GraphqlRequest::from_json(payload) {
            Ok(r) => r,
            Err(e) => {
                let e = RequestError::from(grafton_engine::EngineError::from(e));
                return vec![protocol::error(&id, &e.body()["errors"])];
            }
        };
        let engine = self.state.engine.clone();
        if engine.is_subscription(&request, &caller).await {
            let key = self.next_key;
            self.next_key += 1;
            let mut observed = Observed::begin("ws", &HeaderMap::new());
            observed.caller(&caller);
            observed.info.operation = Some("subscription");
            let subscribed = engine
                .subscribe(&request, &caller, sink.clone(), key)
                .await
                .map_err(RequestError::from);
            observed.done(&self.state, &subscribed);
            return match subscribed {
                Ok(subscription) => {
                    let op = Op::Live(key, subscription, Box::new(request));
                    self.ops.insert(id.clone(), op);
                    self.ids.insert(key, id);
                    Vec::new()
                }
                Err(e) => vec![protocol::error(&id, &e.body()["errors"])],
            };
        }
        let task_id = id.clone();
        let state = self.state.clone();
        let handle = running.spawn(async move {
            let result = run_once(&state, &request, &caller).await;
            (task_id, result)
        });
        self.ops.insert(id, Op::Once(handle));
        Vec::new()
    }

    /// A query or mutation finished: its result then `complete`, or its `error`
    /// (unless its id was completed, and perhaps reused, meanwhile).
    pub(super) fn finished(
        &mut self,
        task: tokio::task::Id,
        id: String,
        result: Result<String, RequestError>,
    ) -> Vec<String> {
        if !matches!(self.ops.get(&id), Some(Op::Once(handle)) if handle.id() == task) {
            return Vec::new();
        }
        self.ops.remove(&id);
        match result {
            Ok(body) => vec![
                protocol::next(self.protocol, &id, &body),
                protocol::complete(&id),
            ],
            Err(e) if e.is_request_error() => vec![protocol::error(&id, &e.body()["errors"])],
            Err(e) => vec![
                protocol::next(self.protocol, &id, &e.body().to_string()),
                protocol::complete(&id),
            ],
        }
    }

    /// The credentials expired: an `invalid-jwt` error for every operation, which
    /// all end.
    pub(super) fn expired(&mut self) -> Vec<String> {
        let errors = json_error(
            "the session expired (the JWT's exp, or the auth hook's max-age or Expires)",
            "invalid-jwt",
        );
        let ids: Vec<String> = self.ops.keys().cloned().collect();
        ids.iter()
            .map(|id| {
                self.stop(id);
                protocol::error(id, &errors)
            })
            .collect()
    }

    /// A live answer: `next`, or, when it is the subscription's last, `error`.
    pub(super) fn delivered(&mut self, d: &Delivery) -> Vec<String> {
        let Some(id) = self.ids.get(&d.key).cloned() else {
            return Vec::new();
        };
        let body = match &d.result {
            Ok(body) => return vec![protocol::next(self.protocol, &id, body)],
            Err(e) => crate::error::execution_error_body(e),
        };
        if d.last {
            self.stop(&id);
            return vec![protocol::error(&id, &body["errors"])];
        }
        vec![protocol::next(self.protocol, &id, &body.to_string())]
    }

    /// The schemas were reloaded: every live query is planned again under them, or
    /// ends with the error that planning met (a field or row no longer granted).
    /// Deliveries planned under the old schemas (`first`, and what `queued` still
    /// holds) are dropped unsent: their subscriptions resume from before them.
    pub(super) async fn replan(
        &mut self,
        sink: &Sink,
        queued: &mut tokio::sync::mpsc::Receiver<Box<Delivery>>,
        first: Option<Box<Delivery>>,
    ) -> Vec<String> {
        let Some(caller) = self.caller.clone() else {
            return Vec::new();
        };
        let live: Vec<String> = (self.ops.iter())
            .filter(|(_, op)| matches!(op, Op::Live(..)))
            .map(|(id, _)| id.clone())
            .collect();
        // Every old plan stops before any new one starts (each holds a place in the
        // session's subscription_limit), and once stopped queues nothing more...
        let mut stopped = Vec::new();
        for id in live {
            let Some(Op::Live(old_key, old, mut request)) = self.ops.remove(&id) else {
                continue;
            };
            self.ids.remove(&old_key);
            // The document itself, not a persisted query's hash that may be forgotten.
            request.query = old.document().to_owned();
            request.persisted_hash = None;
            let resume = old.resume();
            drop(old);
            stopped.push((id, old_key, request, resume));
        }
        // ...so what is queued now is all it will ever have queued, never to be sent.
        let mut rewound: HashMap<u64, Resume> = HashMap::new();
        for dropped in first
            .into_iter()
            .chain(std::iter::from_fn(|| queued.try_recv().ok()))
        {
            let Delivery { key, before, .. } = *dropped;
            if let Some(before) = before {
                rewound.entry(key).or_insert(before);
            }
        }
        let mut out = Vec::new();
        for (id, old_key, request, resume) in stopped {
            let resume = rewound.remove(&old_key).unwrap_or(resume);
            let key = self.next_key;
            self.next_key += 1;
            let engine = self.state.engine.clone();
            match engine
                .resubscribe(&request, &caller, sink.clone(), key, resume)
                .await
            {
                Ok(subscription) => {
                    self.ops
                        .insert(id.clone(), Op::Live(key, subscription, request));
                    self.ids.insert(key, id);
                }
                Err(e) => {
                    let e = RequestError::from(e);
                    out.push(protocol::error(&id, &e.body()["errors"]));
                }
            }
        }
        out
    }

    pub(super) fn stop(&mut self, id: &str) {
        match self.ops.remove(id) {
            Some(Op::Live(key, _subscription, _)) => {
                self.ids.remove(&key);
            }
            Some(Op::Once(handle)) => handle.abort(),
            None => {}
        }
    }
}

async fn run_once(
    state: &AppState,
    request: &GraphqlRequest,
    caller: &Caller,
) -> Result<String, RequestError> {
    let mut observed = Observed::begin("ws", &HeaderMap::new());
    observed.caller(caller);
    let span = observed.span.clone();
    let result = state
        .engine
        .execute(request, Transport::WebSocket, caller, &mut observed.info)
        .instrument(span)
        .await
        .map_err(RequestError::from);
    observed.done(state, &result);
    result
}
