//! Subscriptions enter the engine here: checked, counted and planned as a query
//! is, then joined to their cohort (see `live.rs`).

use super::admit::take;
use super::{GraphqlRequest, Transport};
use crate::engine::{Caller, Engine};
use crate::error::EngineError;
use serde_json::Value;

impl Engine {
    /// Starts a live query for `caller`: the request is checked, counted and
    /// planned as a query is, and must be a subscription. Its answers (the first
    /// one at once, then each change) go to `sink` under `key`; dropping the
    /// returned [`Subscription`] ends it.
    pub async fn subscribe(
        &self,
        req: &GraphqlRequest,
        caller: &Caller,
        sink: crate::live::Sink,
        key: u64,
    ) -> Result<crate::live::Subscription, EngineError> {
        self.join_live(req, caller, sink, key, None).await
    }

    /// Plans an open subscription again after a reload, as [`Engine::subscribe`]
    /// does, from where it was (`resume`: no unchanged answer sent again, a stream
    /// going on from its cursor), without spending the client's rate limit again:
    /// the request is the one it already paid for.
    pub async fn resubscribe(
        &self,
        req: &GraphqlRequest,
        caller: &Caller,
        sink: crate::live::Sink,
        key: u64,
        resume: crate::live::Resume,
    ) -> Result<crate::live::Subscription, EngineError> {
        self.join_live(req, caller, sink, key, Some(resume)).await
    }

    async fn join_live(
        &self,
        req: &GraphqlRequest,
        caller: &Caller,
        sink: crate::live::Sink,
        key: u64,
        resume: Option<crate::live::Resume>,
    ) -> Result<crate::live::Subscription, EngineError> {
        let planner = self.role(caller).await?;
        let stored = self.persisted(req).await?;
        let req = stored.as_ref().unwrap_or(req);
        let checked = planner.check(req, Transport::WebSocket)?;
        if let Some(rate) = planner.rate.as_ref().filter(|_| resume.is_none()) {
            let n = match rate.per_root_field {
                true => u32::try_from(checked.shape.root_fields).unwrap_or(u32::MAX),
                false => 1,
            };
            take(rate, caller, n).await?;
        }
        let prepared = planner.prepare_checked(checked, req, &caller.vars)?;
        let plan = match &prepared.action {
            crate::planner::Action::Plan(plan) => plan.clone(),
            crate::planner::Action::Mutation(_) => {
                return Err(EngineError::validation(
                    "not a subscription, or a subscription that reads no table",
                ))
            }
        };
        if plan.has_actions && planner.is_subscription(req) {
            return self.watch_action(planner, prepared, &plan, caller, req, sink, key);
        }
        let crate::planner::PlanKind::Subscription {
            multiplexed,
            stream,
        } = &plan.kind
        else {
            return Err(EngineError::validation(
                "not a subscription, or a subscription that reads no table",
            ));
        };
        let mut variables = prepared.variables.clone();
        if let Some(stream) = stream {
            // The cursor starts at its initial value, then moves with each batch.
            let initial = match &stream.initial {
                grafton_sql::ParamValue::Literal(v) => v.clone(),
                grafton_sql::ParamValue::Variable(name) => {
                    variables.get(name).cloned().unwrap_or(Value::Null)
                }
            };
            variables.insert(grafton_ir::STREAM_CURSOR_VAR.to_owned(), initial);
        }
        let values = grafton_execute::subscriber_values(
            self.db.dialect(),
            &multiplexed.statement.params,
            &variables,
        );
        self.live.join(
            &self.db,
            crate::live::Joining {
                planner: &planner,
                document: &req.query,
                plan: plan.clone(),
                values,
                sink,
                key,
                session: crate::live::sessions::session_key(&caller.vars, caller.ip),
                resume: resume.unwrap_or_default(),
            },
        )
    }

    /// A subscription to an asynchronous action's result (its plan's one root
    /// field): a task of its own reads it (see `live/action_watch.rs`).
    #[allow(clippy::too_many_arguments)]
    fn watch_action(
        &self,
        planner: std::sync::Arc<crate::Planner>,
        prepared: crate::planner::Prepared,
        plan: &crate::planner::Plan,
        caller: &Caller,
        req: &GraphqlRequest,
        sink: crate::live::Sink,
        key: u64,
    ) -> Result<crate::live::Subscription, EngineError> {
        let Some((response_key, crate::planner::Source::Action(root))) = plan.roots.first() else {
            return Err(EngineError::validation(
                "not a subscription, or a subscription that reads no table",
            ));
        };
        let watch = crate::live::Watch {
            db: self.db.clone(),
            ready: self.action_log_ready.clone(),
            planner: planner.clone(),
            prepared,
            admin: caller.role.is_none(),
            session: super::actions::session(caller),
            response_key: response_key.clone(),
            root: root.clone(),
            finished: self.async_finished(),
            sink,
            key,
        };
        let session = crate::live::sessions::session_key(&caller.vars, caller.ip);
        self.live.watch(&planner, session, &req.query, watch)
    }

    /// Changes with every reload of the schemas: each open subscription must then be
    /// planned again ([`Engine::resubscribe`]), since its permissions may have changed.
    pub fn schema_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Whether the request's operation is a subscription (else it is answered once,
    /// as over HTTP). Unknown documents answer false; their errors come later.
    pub async fn is_subscription(&self, req: &GraphqlRequest, caller: &Caller) -> bool {
        let Ok(planner) = self.role(caller).await else {
            return false;
        };
        // A persisted query is judged by the document its hash stands for.
        match self.persisted(req).await {
            Ok(Some(stored)) => planner.is_subscription(&stored),
            Ok(None) => planner.is_subscription(req),
            Err(_) => false,
        }
    }

    /// Live cohorts and subscribers now.
    pub fn live_counts(&self) -> (usize, usize) {
        self.live.counts()
    }

    /// Bytes of live answers queued for subscribers now.
    pub fn live_queued_bytes(&self) -> usize {
        self.live.queued_bytes()
    }
}
