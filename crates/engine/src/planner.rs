//! Everything before the database: parse + validate (cached) → IR → SQL (cached).
//! No I/O; benchmarked on its own (`cargo bench -p grafton --bench request_path`).

mod document;
mod explain;
mod introspect;
pub(crate) use introspect::Outside;
mod plan;
mod prepared;
pub use plan::{Action, Plan, PlanKind, Source};
pub use prepared::{Checked, Prepared};

use crate::error::EngineError;
use crate::limits::shape::Shape;
use crate::limits::{LimitKind, RoleLimits};
pub use crate::request::types::{GraphqlRequest, Transport};
use apollo_compiler::collections::HashMap;
use apollo_compiler::executable::OperationType;
use apollo_compiler::response::JsonMap;
use apollo_compiler::schema::Implementers;
use apollo_compiler::{request, Name};
use document::{operation, DocEntry};
pub use explain::{Explained, ExplainedFields};

use grafton_ir::permissions::RoleRules;
use grafton_schema::SchemaModel;
use grafton_sql::Dialect;
use quick_cache::sync::Cache;
use serde_json::{Map, Value};
use std::sync::Arc;

/// Parsing, validation and planning for one role, with their caches. Does no I/O.
pub struct Planner {
    model: Arc<SchemaModel>,
    /// The role's row rules (`None`: admin).
    pub(crate) rules: Option<Arc<RoleRules>>,
    dialect: Dialect,
    implementers: HashMap<Name, Implementers>,
    /// Keyed by document text; per-role keys come with permissions.
    documents: Cache<String, Arc<DocEntry>>,
    /// Refuse documents that declare variables they do not use (the GraphQL spec's
    /// rule); off by default, as Hasura accepts them and clients rely on it.
    pub(crate) strict: bool,
    /// The role's limits.
    pub(crate) limits: RoleLimits,
    /// Rows a list without `limit` returns (`--default-limit`).
    pub(crate) default_limit: Option<u64>,
    /// The documents the role may run (`None`: any).
    pub(crate) allowed: Option<Arc<std::collections::HashSet<String>>>,
    /// `__schema` and `__type` are refused.
    pub(crate) introspection_disabled: bool,
    /// The role's rate limit, if it has one.
    pub(crate) rate: Option<Arc<crate::limits::rate::RoleRate>>,
    /// The role's `max_concurrent` gate, if it has one.
    pub(crate) gate: Option<Arc<crate::admission::Gate>>,
    /// The size of this schema's full introspection, measured on first use.
    introspection_size: std::sync::OnceLock<u64>,
    /// The role's live subscriptions now (for its `subscription_limit`).
    pub(crate) live: Arc<crate::live::sessions::SessionCounts>,
    /// Unique for the process's life (an address may be reused after a reload):
    /// live queries' cohorts are keyed by it.
    pub(crate) id: u64,
    /// Hits and misses of its caches (the engine's counters once it serves it).
    pub(crate) cache_stats: crate::metrics::CacheStats,
    /// Its schema and rules, hashed (`@cached` keys: instances agree on it).
    pub(crate) fingerprint: std::sync::OnceLock<crate::response_cache::CacheKey>,
}

/// The next [`Planner::id`].
static NEXT_PLANNER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

const DOCUMENT_CACHE_SIZE: usize = 1024;
const PLANS_PER_DOCUMENT: usize = 64;

impl Planner {
    /// An admin planner for `model`, rendering SQL in `dialect`.
    pub fn new(model: SchemaModel, dialect: Dialect) -> Self {
        Self::for_role(model, None, dialect)
    }

    /// A planner for a role's `model` and `rules` (`None`: admin).
    pub fn for_role(model: SchemaModel, rules: Option<RoleRules>, dialect: Dialect) -> Self {
        Self {
            implementers: model.schema.implementers_map(),
            model: Arc::new(model),
            rules: rules.map(Arc::new),
            dialect,
            documents: Cache::new(DOCUMENT_CACHE_SIZE),
            strict: false,
            limits: RoleLimits::default(),
            default_limit: None,
            gate: None,
            rate: None,
            allowed: None,
            introspection_disabled: false,
            introspection_size: std::sync::OnceLock::new(),
            live: Arc::default(),
            id: NEXT_PLANNER.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            cache_stats: Default::default(),
            fingerprint: std::sync::OnceLock::new(),
        }
    }

    /// The limits this planner enforces.
    pub fn limits(&self) -> &RoleLimits {
        &self.limits
    }

    /// What one query of this role may take in the database.
    pub(crate) fn budget(&self) -> grafton_execute::Budget {
        grafton_execute::Budget {
            timeout: self.limits.time,
            max_bytes: self.limits.max_response_bytes,
        }
    }

    /// The schema model.
    pub fn model(&self) -> &SchemaModel {
        &self.model
    }

    /// Validates the request and finds (or builds and caches) its plan.
    pub fn prepare(
        &self,
        req: &GraphqlRequest,
        transport: Transport,
    ) -> Result<Prepared, EngineError> {
        self.prepare_as(req, transport, &Map::new())
    }

    /// [`prepare`](Self::prepare) with the caller's session variables, which the
    /// role's rules bind as parameters.
    pub fn prepare_as(
        &self,
        req: &GraphqlRequest,
        transport: Transport,
        session: &Map<String, Value>,
    ) -> Result<Prepared, EngineError> {
        let checked = self.check(req, transport)?;
        self.prepare_checked(checked, req, session)
    }

    /// The request's document, from the cache (else parsed, validated and cached),
    /// checked as written: within the role's shape limits, allowed, fit for the
    /// transport. For a cached document this reads no variable and plans nothing, so
    /// a per-root-field rate limit can refuse the request this early.
    pub fn check(
        &self,
        req: &GraphqlRequest,
        transport: Transport,
    ) -> Result<Checked, EngineError> {
        let entry = match self.documents.get(&req.query) {
            Some(entry) => {
                self.cache_stats.document_hit.inc();
                entry
            }
            None => {
                self.cache_stats.document_miss.inc();
                let entry = self.parse(req)?;
                self.documents.insert(req.query.clone(), entry.clone());
                entry
            }
        };
        let shape = self.check_entry(&entry, req, transport)?;
        Ok(Checked { entry, shape })
    }

    /// Whether the request names a subscription operation (parsing, and caching, its
    /// document if need be); false for a document that does not parse or validate.
    pub fn is_subscription(&self, req: &GraphqlRequest) -> bool {
        let entry = match self.documents.get(&req.query) {
            Some(entry) => entry,
            None => match self.parse(req) {
                Ok(entry) => {
                    self.documents.insert(req.query.clone(), entry.clone());
                    entry
                }
                Err(_) => return false,
            },
        };
        operation(&entry, req.operation_name.as_deref())
            .is_ok_and(|op| op.operation_type == OperationType::Subscription)
    }

    /// Prepares a [`check`](Self::check)ed request: its variables coerced, the session's
    /// bound, its plan (cached) and its cost within the role's limit.
    pub fn prepare_checked(
        &self,
        checked: Checked,
        req: &GraphqlRequest,
        session: &Map<String, Value>,
    ) -> Result<Prepared, EngineError> {
        self.prepare_with(checked, req, true, session)
    }

    /// Like [`prepare`](Self::prepare) but bypassing both caches: the full cost of a
    /// request seen for the first time (for benchmarks).
    pub fn prepare_uncached(&self, req: &GraphqlRequest) -> Result<Prepared, EngineError> {
        let entry = self.parse(req)?;
        let shape = self.check_entry(&entry, req, Transport::Post)?;
        self.prepare_with(Checked { entry, shape }, req, false, &Map::new())
    }

    /// The operation's shape, once it passes the checks on the document as written.
    fn check_entry(
        &self,
        entry: &DocEntry,
        req: &GraphqlRequest,
        transport: Transport,
    ) -> Result<Shape, EngineError> {
        let operation = operation(entry, req.operation_name.as_deref())?;
        // Limits on the document as written: before variables, IR or SQL.
        let shape = entry
            .shapes
            .get(&operation.name)
            .copied()
            .unwrap_or_default();
        self.limits.check_shape(&shape)?;
        if self.introspection_disabled && shape.introspection_roots > 0 {
            return Err(EngineError::validation(
                "introspection is disabled for this role",
            ));
        }
        if let Some(allowed) = &self.allowed {
            let known = entry.normalized.get(&operation.name);
            if !known.is_some_and(|k| allowed.contains(k)) {
                return Err(EngineError::NotAllowed);
            }
        }
        if transport == Transport::Get && operation.operation_type != OperationType::Query {
            return Err(EngineError::MethodNotAllowed(format!(
                "{} operations are not allowed",
                operation.operation_type
            )));
        }
        if transport == Transport::Get {
            // A cross-site page can make a browser send a GET with its cookies.
            if let Some(f) = document::volatile_call(&self.model, &entry.document, operation) {
                return Err(EngineError::MethodNotAllowed(format!(
                    "a query calling '{f}', a VOLATILE function that may write, is not allowed"
                )));
            }
            if let Some(a) = document::action_root(&self.model, &entry.document, operation, false) {
                return Err(EngineError::MethodNotAllowed(format!(
                    "a query calling '{a}' (an action, or a remote schema sent the client's headers: it may act for the caller) is not allowed"
                )));
            }
            if let Some(a) = document::forwarding_join(&self.model, &entry.document, operation) {
                return Err(EngineError::MethodNotAllowed(format!(
                    "a query reaching '{a}' (a remote relationship whose remote schema is sent the client's headers: it may act for the caller) is not allowed"
                )));
            }
        }
        if transport != Transport::WebSocket
            && operation.operation_type == OperationType::Subscription
        {
            return Err(EngineError::validation(
                "subscriptions are served over WebSocket (graphql-transport-ws or graphql-ws) at this path",
            ));
        }
        Ok(shape)
    }

    fn prepare_with(
        &self,
        checked: Checked,
        req: &GraphqlRequest,
        use_cache: bool,
        session: &Map<String, Value>,
    ) -> Result<Prepared, EngineError> {
        let Checked { entry, shape } = checked;
        let operation = operation(&entry, req.operation_name.as_deref())?;
        let raw_vars: JsonMap = req
            .variables
            .iter()
            .map(|(k, v)| (k.as_str().into(), serde_json_bytes::Value::from(v.clone())))
            .collect();
        let coerced = request::coerce_variable_values(&self.model.schema, operation, &raw_vars)
            .map_err(|e| EngineError::validation(e.message().to_string()))?;
        let mut variables: Map<String, Value> = coerced
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_owned(),
                    serde_json::to_value(v).unwrap_or(Value::Null),
                )
            })
            .collect();
        // Session variable names contain '-', which GraphQL variable names cannot.
        variables.extend(session.iter().map(|(k, v)| (k.clone(), v.clone())));
        let model = &self.model;
        if model.functions.iter().any(|f| f.session_arg.is_some())
            || model.computed.iter().any(|c| c.session_arg.is_some())
        {
            let all = Value::Object(session.clone());
            variables.insert(grafton_ir::SESSION_JSON_VAR.to_owned(), all);
        }
        if let Some(rules) = &self.rules {
            grafton_ir::permissions::bind_session_arrays(rules, &mut variables)?;
        }
        let mutation = operation.operation_type == OperationType::Mutation;
        let actions =
            document::action_root(&self.model, &entry.document, operation, true).is_some();
        if mutation && !actions {
            let mutation = grafton_ir::build_mutation(
                &self.model,
                self.rules.as_deref(),
                &entry.document,
                operation,
                &variables,
            )?;
            grafton_ir::bind_derived(&mutation.derived, &mut variables)
                .map_err(EngineError::validation)?;
            return Ok(Prepared {
                operation_name: req.operation_name.clone(),
                entry,
                coerced,
                variables,
                action: Action::Mutation(mutation),
                cost: 0,
                shape,
            });
        }
        let plan = self.plan(&entry, operation, &variables, use_cache)?;
        if let Some(missing) = plan
            .session_vars
            .iter()
            .find(|v| !variables.contains_key(*v))
        {
            return Err(missing_session(missing));
        }
        grafton_ir::bind_derived(&plan.derived, &mut variables).map_err(EngineError::validation)?;
        let cost = plan.cost.eval(&variables);
        crate::limits::check(LimitKind::Cost, self.limits.cost, cost)?;
        for name in &plan.non_negative_vars {
            if variables
                .get(name)
                .and_then(Value::as_i64)
                .is_some_and(|n| n < 0)
            {
                return Err(EngineError::validation(format!(
                    "variable \"{name}\" is used as a limit or offset and must not be negative"
                )));
            }
        }
        Ok(Prepared {
            operation_name: req.operation_name.clone(),
            entry,
            coerced,
            variables,
            action: Action::Plan(plan),
            cost,
            shape,
        })
    }
}

/// A session variable the rules need and the request lacks (a list use, `name[]`,
/// is reported by the variable's own name).
pub(crate) fn missing_session(name: &str) -> EngineError {
    grafton_ir::IrError::MissingSession(name.trim_end_matches("[]").to_owned()).into()
}
