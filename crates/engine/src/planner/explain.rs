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

/// A query's root fields, each with the one statement that reads it alone (what
/// Hasura's `/v1/graphql/explain` shows per field), and the values to bind.
#[derive(Debug)]
pub struct ExplainedFields {
    /// Each root field's response key and statement (`__typename` and
    /// introspection fields, which read nothing, are left out).
    pub fields: Vec<(String, Statement)>,
    /// The coerced variables and the session, as the statements bind them.
    pub variables: Map<String, Value>,
}

impl Planner {
    /// Plans a query as [`explain`](Self::explain) does, then each root field on its
    /// own: Grafton runs them as one statement, whose parts these are. Mutations and
    /// subscriptions are refused (Hasura explains queries only).
    pub fn explain_fields(
        &self,
        req: &GraphqlRequest,
        session: &Map<String, Value>,
    ) -> Result<ExplainedFields, EngineError> {
        let prepared = self.prepare_as(req, Transport::Post, session)?;
        let is_query =
            matches!(&prepared.action, Action::Plan(p) if matches!(p.kind, PlanKind::Query(_)));
        if !is_query {
            return Err(EngineError::validation(
                "only queries can be explained (not mutations or subscriptions)",
            ));
        }
        let operation =
            super::document::operation(&prepared.entry, prepared.operation_name.as_deref())?;
        let mut query = grafton_ir::build_query(
            &self.model,
            &prepared.entry.document,
            operation,
            &prepared.variables,
        )?;
        if let Some(rows) = self.default_limit {
            crate::limits::default_limit(&mut query, rows);
        }
        let roots = std::mem::take(&mut query.root);
        let mut fields = Vec::with_capacity(roots.len());
        for (key, root) in roots {
            if matches!(
                root,
                grafton_ir::Root::Typename(_) | grafton_ir::Root::Introspection
            ) {
                continue;
            }
            query.root = vec![(key.clone(), root)];
            let select =
                grafton_translate::translate_query(&self.model, self.rules.as_deref(), &query);
            if let Some(select) = select {
                fields.push((key, grafton_sql::render(&select, self.dialect)));
            }
        }
        Ok(ExplainedFields {
            fields,
            variables: prepared.variables,
        })
    }
}
