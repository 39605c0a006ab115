//! The plan stage: IR, SQL and cost for one operation shape, cached per document.

use super::document::DocEntry;
use super::{Plan, PlanKind, Planner};
use crate::error::EngineError;
use crate::limits::cost::Cost;
use apollo_compiler::executable::{Operation, OperationType};
use grafton_ir::Root;
use grafton_sql::Dialect;
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

impl Planner {
    /// The plan for this operation and these variables' shape, built on a cache miss.
    pub(super) fn plan(
        &self,
        entry: &DocEntry,
        operation: &Operation,
        variables: &Map<String, Value>,
        use_cache: bool,
    ) -> Result<Arc<Plan>, EngineError> {
        let op_name = operation.name.as_ref().map(|n| n.as_str()).unwrap_or("");
        if use_cache {
            let key = plan_key(op_name, &lock(&entry.shape_vars), variables);
            if let Some(plan) = entry.plans.get(&key) {
                self.cache_stats.plan_hit.inc();
                return Ok(plan);
            }
            self.cache_stats.plan_miss.inc();
        }
        let mut query =
            grafton_ir::build_query(&self.model, &entry.document, operation, variables)?;
        if let Some(rows) = self.default_limit {
            crate::limits::default_limit(&mut query, rows);
        }
        let introspection_nodes = entry
            .shapes
            .get(&operation.name)
            .map_or(0, |s| s.introspection_nodes);
        let select = grafton_translate::translate_query(&self.model, self.rules.as_deref(), &query);
        let live = operation.operation_type == OperationType::Subscription;
        let multiplexed = select
            .as_ref()
            .filter(|_| live)
            .map(|select| grafton_sql::render::render_multiplexed(select, self.dialect))
            .map(|mut m| {
                // Each subscriber's answer within the role's size, checked in PostgreSQL.
                if self.dialect == Dialect::Postgres {
                    m.statement = grafton_sql::render::size_guard_multiplexed(
                        &m.statement,
                        self.limits.max_response_bytes,
                    );
                }
                m
            });
        let statement = select
            .filter(|_| !live)
            .map(|select| grafton_sql::render(&select, self.dialect))
            .map(|st| match self.dialect {
                // PostgreSQL sends a response in one piece: never receive one
                // past the limit (SQLite's is checked before it is copied).
                Dialect::Postgres => {
                    grafton_sql::render::size_guard_postgres(&st, self.limits.max_response_bytes)
                }
                Dialect::Sqlite => st,
            });
        let session_vars = statement
            .iter()
            .chain(multiplexed.as_ref().map(|m| &m.statement))
            .flat_map(|s| &s.params)
            .filter_map(|p| match &p.value {
                grafton_sql::ParamValue::Variable(v) if v.contains('-') => Some(v.clone()),
                _ => None,
            })
            .collect();
        let roots: Vec<(String, bool)> = query
            .root
            .iter()
            .map(|(k, r)| (k.clone(), matches!(r, Root::Introspection)))
            .collect();
        let has_introspection = roots.iter().any(|(_, intro)| *intro);
        // Key the plan on every variable known to shape this document, including the
        // ones this build just discovered.
        let key = {
            let mut shape = lock(&entry.shape_vars);
            shape.extend(query.shape_vars.iter().cloned());
            plan_key(op_name, &shape, variables)
        };
        let kind = match multiplexed {
            Some(multiplexed) => PlanKind::Subscription {
                multiplexed,
                stream: query.stream.clone(),
            },
            None => PlanKind::Query(statement),
        };
        let plan = Arc::new(Plan {
            cost: Cost::of(&query, self.rules.as_deref(), introspection_nodes),
            kind,
            key: key.clone(),
            non_negative_vars: query.non_negative_vars.iter().cloned().collect(),
            roots,
            has_introspection,
            session_vars,
        });
        if use_cache {
            entry.plans.insert(key, plan.clone());
        }
        Ok(plan)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding this lock cannot leave the set inconsistent.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Operation name, which variables were provided (presence can drop a field), and the
/// values of the variables that shape the plan.
fn plan_key(op: &str, shape: &BTreeSet<String>, variables: &Map<String, Value>) -> String {
    let mut key = String::from(op);
    key.push('\u{0}');
    let mut names: Vec<&String> = variables.keys().collect();
    names.sort();
    for n in names {
        key.push_str(n);
        key.push(',');
    }
    for s in shape {
        key.push('\u{0}');
        key.push_str(s);
        key.push('=');
        key.push_str(&variables.get(s).map(|v| v.to_string()).unwrap_or_default());
    }
    key
}
