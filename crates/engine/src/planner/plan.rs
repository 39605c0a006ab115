//! The plan stage: IR, SQL and cost for one operation shape, cached per document.

use super::document::DocEntry;
use super::Planner;
use crate::error::EngineError;
use crate::limits::cost::Cost;
use apollo_compiler::executable::{Operation, OperationType};
use grafton_ir::Root;
use grafton_sql::{Dialect, Statement};
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

/// What a plan runs.
pub enum PlanKind {
    /// A query: its one statement, none when no root field needs the database
    /// (introspection, `__typename`).
    Query(Option<Statement>),
    /// A subscription: one statement answering a whole cohort of subscribers, and
    /// a streaming subscription's cursor (where it starts).
    Subscription {
        /// The cohort's statement.
        multiplexed: grafton_sql::Multiplexed,
        /// A `_stream` field's cursor.
        stream: Option<grafton_ir::Stream>,
    },
}

/// Where a root field's answer comes from.
pub enum Source {
    /// The statement's JSON.
    Database,
    /// The schema (`__schema`, `__type`).
    Introspection,
    /// An action's handler.
    Action(grafton_ir::ActionRoot),
    /// A remote schema.
    Remote(grafton_ir::RemoteRoot),
}

/// What a prepared request does: answer from a plan (cached per shape), or write.
pub enum Action {
    /// A query or subscription.
    Plan(Arc<Plan>),
    /// A mutation's IR, built per request: what it writes is data, not shape.
    Mutation(grafton_ir::Mutation),
}

/// Everything needed to answer one operation shape.
pub struct Plan {
    /// What it runs: a query's statement or a subscription's.
    pub kind: PlanKind,
    /// The key the plan is cached under (operation, variable names, shaping values):
    /// equal keys of one document mean equal plans, even when built twice at once.
    pub(crate) key: String,
    /// Variables used as `limit`/`offset`, checked per request.
    pub(super) non_negative_vars: Vec<String>,
    /// Parameters computed per request from variables (Relay cursors and ids).
    pub(super) derived: Vec<grafton_ir::Derived>,
    /// Root response keys and where each is answered from, in order.
    pub(crate) roots: Vec<(String, Source)>,
    /// Whether any root field is introspection (then responses are merged).
    pub(crate) has_introspection: bool,
    /// Whether any root field is an action (then responses are merged).
    pub(crate) has_actions: bool,
    /// Whether any root field is a remote schema's (then responses are merged).
    pub(crate) has_remotes: bool,
    /// Remote relationships in the statement's answer, joined after it.
    pub(crate) joins: Vec<grafton_ir::JoinSite>,
    /// A mutation's actions, called one after the other (a query's at once).
    pub(crate) sequential: bool,
    /// Session variables the statement binds (each request must carry them).
    pub(crate) session_vars: Vec<String>,
    /// What a query's answer depends on (a cached answer goes stale with it).
    pub(crate) reads: crate::response_cache::Reads,
    /// The cost estimate, evaluated with each request's variables.
    pub(super) cost: Cost,
    /// A query's statement answering many requests at once (PostgreSQL).
    pub(crate) gathered: Option<Statement>,
}

impl Plan {
    /// A query's statement, if it has one.
    pub fn statement(&self) -> Option<&Statement> {
        match &self.kind {
            PlanKind::Query(statement) => statement.as_ref(),
            PlanKind::Subscription { .. } => None,
        }
    }
}

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
        let (select, calls) =
            grafton_translate::translate_query_calling(&self.model, self.rules.as_deref(), &query);
        let live = operation.operation_type == OperationType::Subscription;
        // A query's statement for many requests at once (PostgreSQL: see `gather`).
        let gathered = select
            .as_ref()
            .filter(|_| !live && self.dialect == Dialect::Postgres)
            .map(|select| {
                let m = grafton_sql::render::render_multiplexed(select, self.dialect);
                let max = self.limits.max_response_bytes;
                grafton_sql::render::size_guard_multiplexed(&m.statement, max)
            });
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
        let mut read = Vec::new();
        let statement = select
            .filter(|_| !live)
            .map(|select| {
                let (statement, tables) =
                    grafton_sql::render::render_reading(&select, self.dialect);
                read = tables;
                statement
            })
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
        let roots: Vec<(String, Source)> = (query.root.iter())
            .map(|(k, r)| {
                let source = match r {
                    Root::Introspection => Source::Introspection,
                    Root::Action(a) => Source::Action(a.clone()),
                    Root::Remote(r) => Source::Remote(r.clone()),
                    _ => Source::Database,
                };
                (k.clone(), source)
            })
            .collect();
        let has_introspection = (roots.iter()).any(|(_, s)| matches!(s, Source::Introspection));
        let has_actions = (roots.iter()).any(|(_, s)| matches!(s, Source::Action(_)));
        let has_remotes = (roots.iter()).any(|(_, s)| matches!(s, Source::Remote(_)));
        let joins = grafton_ir::remote_joins(&query);
        if live && !joins.is_empty() {
            // Hasura's answer too (`not-supported`).
            return Err(EngineError::Ir(grafton_ir::IrError::NotSupported(
                "Remote relationships are not allowed in subscriptions".into(),
            )));
        }
        // Key the plan on every variable known to shape this document, including the
        // ones this build just discovered.
        let key = {
            let mut shape = lock(&entry.shape_vars);
            shape.extend(query.shape_vars.iter().cloned());
            plan_key(op_name, &shape, variables)
        };
        let reads = self.reads(calls, read);
        let kind = match multiplexed {
            Some(multiplexed) => PlanKind::Subscription {
                multiplexed,
                stream: query.stream.clone(),
            },
            None => PlanKind::Query(statement),
        };
        let plan = Arc::new(Plan {
            cost: Cost::of(&query, self.rules.as_deref(), introspection_nodes).with_calls(
                crate::limits::cost::remote_type_calls(
                    &query,
                    &self.model.remote_type_remote_rels,
                    &entry.document,
                ),
            ),
            kind,
            key: key.clone(),
            non_negative_vars: query.non_negative_vars.iter().cloned().collect(),
            derived: query.derived.clone(),
            roots,
            has_introspection,
            has_actions,
            has_remotes,
            joins,
            sequential: operation.operation_type == OperationType::Mutation,
            session_vars,
            reads,
            gathered,
        });
        if use_cache {
            entry.plans.insert(key, plan.clone());
        }
        Ok(plan)
    }
}

impl Planner {
    /// What an answer depends on: the tables the statement names, or every table
    /// when it calls SQL functions or reads a view (whose base tables are not named).
    fn reads(
        &self,
        calls: bool,
        read: Vec<(Option<String>, String)>,
    ) -> crate::response_cache::Reads {
        use crate::response_cache::Reads;
        let catalog = &self.model.catalog;
        let view = |(schema, name): &(Option<String>, String)| {
            (catalog.tables.iter())
                .find(|t| &t.name == name && schema.as_ref().is_none_or(|s| *s == t.schema))
                .is_none_or(|t| t.kind == grafton_catalog::TableKind::View)
        };
        if calls || read.iter().any(view) {
            return Reads::Any;
        }
        let mut names: Vec<String> = read.into_iter().map(|(_, name)| name).collect();
        names.sort_unstable();
        names.dedup();
        Reads::Tables(names)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding this lock cannot leave the set inconsistent.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Operation name, which variables were provided (presence can drop a field), and the
/// values of the variables that shape the plan: whole, or (`?name`) only whether
/// it is null, or (`@name`, a Relay global id) only the table it names.
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
        if let Some(name) = s.strip_prefix('?') {
            let null = variables.get(name).is_none_or(Value::is_null);
            key.push(if null { '0' } else { '1' });
        } else if let Some(name) = s.strip_prefix('@') {
            key.push_str(&grafton_ir::relay::node_shape(variables.get(name)));
        } else {
            key.push_str(&variables.get(s).map(|v| v.to_string()).unwrap_or_default());
        }
    }
    key
}
