//! What a request would run, without running it: the statement of a query, the
//! multiplexed statement of a subscription (one per cohort of subscribers), and
//! the cost estimate. The golden plan tests read it; no database is touched.

use super::{Action, PlanKind, Planner, Transport};
use crate::error::EngineError;
use crate::GraphqlRequest;
use grafton_sql::Statement;
use serde_json::{Map, Value};

/// The statements a request compiles to, and its cost.
#[derive(Debug)]
pub struct Explained {
    /// The operation: `query`, `subscription` or `mutation`.
    pub operation: &'static str,
    /// Each statement with what it is for (`query`, `subscription`, `mutation`,
    /// `transaction`).
    pub statements: Vec<(&'static str, Statement)>,
    /// The cost estimate for these variables.
    pub cost: u64,
}

impl Planner {
    /// Plans `req` as a WebSocket would (subscriptions too), with the caller's
    /// `session` variables, and returns what would run. A mutation that is one plain
    /// write explains as its statement (`mutation`); one that runs as several
    /// (nested inserts, checks, writes returning relationships) as each of them
    /// (`transaction`), built from a dry run's made-up rows where the real run
    /// builds each from the rows the one before it wrote.
    pub fn explain(
        &self,
        req: &GraphqlRequest,
        session: &Map<String, Value>,
    ) -> Result<Explained, EngineError> {
        let prepared = self.prepare_as(req, Transport::WebSocket, session)?;
        let (operation, statements) = match &prepared.action {
            Action::Mutation(mutation) => {
                let rules = self.rules.as_deref();
                let variables = &prepared.variables;
                let (one, list) = crate::mutate::explain(&self.model, rules, mutation, variables)?;
                let what = if one { "mutation" } else { "transaction" };
                ("mutation", list.into_iter().map(|s| (what, s)).collect())
            }
            Action::Plan(plan) => match &plan.kind {
                PlanKind::Query(statement) => (
                    "query",
                    statement.iter().map(|s| ("query", s.clone())).collect(),
                ),
                PlanKind::Subscription { multiplexed, .. } => (
                    "subscription",
                    vec![("subscription", multiplexed.statement.clone())],
                ),
            },
        };
        Ok(Explained {
            operation,
            statements,
            cost: prepared.cost,
        })
    }
}
