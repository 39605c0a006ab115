//! The engine: each role's planner plus the database. A request (HTTP, a batch
//! element, a WebSocket message) enters here the same way, so permissions and limits
//! hold on every transport.

use crate::error::EngineError;
use crate::planner::{missing_session, GraphqlRequest, Planner, Transport};
use grafton_execute::Database;
use grafton_ir::permissions::RoleRules;
use grafton_schema::SchemaModel;
use serde_json::{Map, Value};

/// Who sends a request: admin (`role: None`) or a role, with session variables
/// (lower-case `x-hasura-*` names) that permission rules may read.
#[derive(Debug, Clone, Default)]
pub struct Caller {
    /// The role; `None` is admin.
    pub role: Option<String>,
    /// Session variables.
    pub vars: Map<String, Value>,
    /// The role's `backend_only` permissions apply (a trusted backend's request).
    pub backend_only: bool,
}

/// How the request arrived, for the rules that depend on it.
/// The schemas (admin's and each role's), the database and the caches: shared by
/// every request.
pub struct Engine {
    planner: Planner,
    roles: std::collections::HashMap<String, Planner>,
    /// The roles with `backend_only` permissions, as trusted backends see them.
    backend_roles: std::collections::HashMap<String, Planner>,
    db: Database,
}

/// The role name of the schema every role named by no permission shares (an empty
/// one, with only `no_queries_available`: its requests fail validation, as in Hasura).
pub const NO_PERMISSIONS: &str = "";

/// A role's schema model and rules; `backend_only` for the view of trusted backends.
pub struct RoleSchema {
    /// The role's schema model.
    pub model: SchemaModel,
    /// Its row rules.
    pub rules: RoleRules,
    /// Whether this is the trusted-backend view (its `backend_only` permissions count).
    pub backend_only: bool,
}

impl Engine {
    /// An engine serving `model` (admin only) from `db`.
    pub fn new(model: SchemaModel, db: Database) -> Self {
        Self::with_roles(model, Vec::new(), db)
    }

    /// An engine with the admin `model` and each role's model and rules.
    pub fn with_roles(model: SchemaModel, roles: Vec<RoleSchema>, db: Database) -> Self {
        let dialect = db.dialect();
        let (mut front, mut back) = (
            std::collections::HashMap::new(),
            std::collections::HashMap::new(),
        );
        for r in roles {
            let name = r.rules.role.clone();
            let planner = Planner::for_role(r.model, Some(r.rules), dialect);
            if r.backend_only {
                back.insert(name, planner);
            } else {
                front.insert(name, planner);
            }
        }
        Self {
            planner: Planner::new(model, dialect),
            roles: front,
            backend_roles: back,
            db,
        }
    }

    /// Applies the GraphQL spec's rule on unused variables (`--strict-graphql`).
    pub fn with_strict_graphql(mut self, strict: bool) -> Self {
        let planners = std::iter::once(&mut self.planner)
            .chain(self.roles.values_mut())
            .chain(self.backend_roles.values_mut());
        for p in planners {
            p.strict = strict;
        }
        self
    }

    /// The planner of a role (`None`: admin); `backend_only` picks the trusted
    /// backends' view where the role has one. A role with no permissions anywhere
    /// has no schema: its requests are refused.
    pub fn planner_for(
        &self,
        role: Option<&str>,
        backend_only: bool,
    ) -> Result<&Planner, EngineError> {
        let Some(r) = role else {
            return Ok(&self.planner);
        };
        let backend = backend_only.then(|| self.backend_roles.get(r)).flatten();
        backend
            .or_else(|| self.roles.get(r))
            .or_else(|| self.roles.get(NO_PERMISSIONS))
            .ok_or_else(|| EngineError::NoPermissions(r.to_owned()))
    }

    /// The schema model.
    pub fn model(&self) -> &SchemaModel {
        self.planner.model()
    }

    /// The planner.
    pub fn planner(&self) -> &Planner {
        &self.planner
    }

    /// The database.
    pub fn database(&self) -> &Database {
        &self.db
    }

    /// Runs a request as `caller` and returns the response body's JSON text.
    pub async fn execute(
        &self,
        req: &GraphqlRequest,
        transport: Transport,
        caller: &Caller,
    ) -> Result<String, EngineError> {
        let planner = self.planner_for(caller.role.as_deref(), caller.backend_only)?;
        let prepared = planner.prepare_as(req, transport, &caller.vars)?;
        if let Some(mutation) = &prepared.mutation {
            // A mutation's statements are built as it runs; refuse up front, as queries
            // are, when the role's rules need a session variable the caller lacks.
            let rules = planner.rules.as_deref();
            let needed = rules.into_iter().flat_map(|r| &r.session_vars);
            if let Some(missing) = needed
                .into_iter()
                .find(|v| !prepared.variables.contains_key(*v))
            {
                return Err(missing_session(missing));
            }
            let data = crate::mutate::run(
                planner.model(),
                planner.rules.as_deref(),
                &self.db,
                mutation,
                &prepared.variables,
            )
            .await?;
            return Ok(format!("{{\"data\":{data}}}"));
        }
        let db_json = match &prepared.plan.statement {
            Some(statement) => Some(self.db.query_json(statement, &prepared.variables).await?),
            None => None,
        };
        if prepared.plan.has_introspection {
            return planner.merge_introspection(&prepared, db_json);
        }
        let data = db_json.unwrap_or_else(|| "{}".to_owned());
        let mut out = String::with_capacity(data.len() + 10);
        out.push_str("{\"data\":");
        out.push_str(&data);
        out.push('}');
        Ok(out)
    }
}
