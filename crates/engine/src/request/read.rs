//! Step 9 for a query: its one statement (in the heavy lane when its cost says so,
//! shared with the waiting queries of its plan: `gather`; on a replica when the
//! caller has not just written), and the answer, with introspection merged in
//! when the document asks for it.

use crate::engine::{Caller, Engine};
use crate::error::EngineError;
use crate::planner::{Plan, PlanKind, Planner, Prepared};
use std::sync::Arc;
use tracing::Instrument;

/// Runs a query's `plan` as `caller` and returns the response body's JSON text
/// (a mutation's plan only when its every root field is an action).
#[allow(clippy::too_many_arguments)]
pub(super) async fn run(
    engine: &Engine,
    planner: &Planner,
    plan: &Arc<Plan>,
    prepared: &Prepared,
    caller: &Caller,
    info: &mut crate::RequestInfo,
    started: std::time::Instant,
    request_query: &str,
    primary: bool,
) -> Result<String, EngineError> {
    let statement = match &plan.kind {
        PlanKind::Query(statement) => statement.as_ref(),
        PlanKind::Subscription { .. } => None,
    };
    info.plan = Some(plan.clone());
    let heavy = prepared.cost > crate::admission::LIGHT_COST;
    // A heavy plan waits for the lane with its statement, and holds its place while
    // the statement runs (`gather`: a batch takes one place), not across calls out
    // (actions, remotes, remote joins), which use no connection; a heavy plan with
    // calls out runs alone.
    let calls_out = plan.has_actions || plan.has_remotes || !plan.joins.is_empty();
    let db_started = std::time::Instant::now();
    info.planning = Some(db_started - started);
    let db_json = async {
        match statement {
            Some(statement) => {
                let query = crate::gather::Query {
                    plan: Arc::as_ptr(plan) as usize,
                    single: statement,
                    multiplexed: plan.gathered.as_ref().filter(|_| !(heavy && calls_out)),
                    lane: heavy.then_some(&engine.heavy),
                    queue_wait: engine.heavy.max_wait(),
                    variables: &prepared.variables,
                    budget: planner.budget(),
                    route: match primary {
                        true => grafton_execute::Route::Primary,
                        false => engine.recent.route(caller),
                    },
                };
                let answer = engine
                    .gathering
                    .query(&engine.db, &query)
                    .instrument(grafton_execute::trace::span(
                        engine.db.dialect(),
                        "query",
                        Some(&statement.sql),
                    ))
                    .await;
                let elapsed = db_started.elapsed();
                Some((answer, elapsed))
            }
            None => None,
        }
    };
    // Actions' handlers, remotes and the statement wait at once; without them
    // the statement alone (the common path pays for no join). Their futures are
    // boxed: inline, they would make every query's state (moved into its box per
    // request) four times larger.
    let (db_json, actions, remotes) = match plan.has_actions || plan.has_remotes {
        true => {
            let actions =
                super::actions::run(engine, planner, plan, prepared, caller, request_query);
            let remotes = async {
                match plan.has_remotes {
                    true => super::remote::run(engine, planner, plan, prepared, caller).await,
                    false => Default::default(),
                }
            };
            tokio::join!(db_json, Box::pin(actions), Box::pin(remotes))
        }
        false => (
            db_json.await,
            Ok((serde_json::Map::new(), Vec::new())),
            Default::default(),
        ),
    };
    let mut db_json = match db_json {
        Some((answer, elapsed)) => {
            info.database = Some(elapsed);
            Some(answer?)
        }
        None => None,
    };
    if let Some(text) = db_json.take_if(|_| !plan.joins.is_empty()) {
        let joined =
            super::remote_join::joined(engine, planner, prepared, caller, &plan.joins, text);
        let (text, cookies) = Box::pin(joined).await?;
        info.set_cookies.extend(cookies);
        db_json = Some(text);
    }
    if plan.has_introspection || plan.has_actions || plan.has_remotes {
        let (actions, cookies) = actions?;
        info.set_cookies.extend(cookies);
        let (mut outside, cookies) = remotes;
        info.set_cookies.extend(cookies);
        outside.answers.extend(actions);
        return planner.merge_roots(prepared, db_json, outside);
    }
    let data = db_json.unwrap_or_else(|| "{}".to_owned());
    let mut out = String::with_capacity(data.len() + 10);
    out.push_str("{\"data\":");
    out.push_str(&data);
    out.push('}');
    Ok(out)
}
