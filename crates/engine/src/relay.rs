//! The Relay API's schemas (`/v1beta1/relay`): each planner's twin over the
//! Relay schema, built from the same catalog, metadata and rules at the API's
//! first request (a project that never asks for it never pays for it), and
//! sharing its twin's limits, gates, rate counts and allow list.

use crate::planner::Planner;
use grafton_catalog::{Backend, Catalog};
use grafton_schema::{Config, Naming, View};
use grafton_sql::Dialect;
use std::sync::Arc;

/// What the Relay API's schemas are built from: what the set's were.
pub(crate) struct RelayRecipe {
    pub(crate) catalog: Catalog,
    pub(crate) config: Config,
    pub(crate) naming: Naming,
    pub(crate) backend: Backend,
    pub(crate) dialect: Dialect,
}

/// One planner of the set the Relay schemas twin: its role and view.
pub(crate) type Twin = (Option<String>, bool, Arc<Planner>);

/// The Relay planners built: admin's, each role view's, and the roles whose
/// Relay schema could not be built (logged; their requests are refused).
pub(crate) struct Built {
    pub(crate) admin: Arc<Planner>,
    pub(crate) roles: Vec<Twin>,
    pub(crate) failed: Vec<(String, bool)>,
}

/// What a request is told when its role's Relay schema could not be built
/// (the details, which name schema objects, go to the log).
pub(crate) const UNAVAILABLE: &str =
    "the Relay API's schema could not be built for this role; the server's log says why";

impl RelayRecipe {
    /// The Relay planners of `twins` (admin's among them). One role's failure
    /// leaves the others served; admin's fails the whole API.
    pub(crate) fn build(&self, twins: Vec<Twin>) -> Result<Built, String> {
        let mut admin = None;
        let mut roles = Vec::with_capacity(twins.len());
        let mut failed = Vec::new();
        for (role, backend_only, twin) in twins {
            let view = View {
                role: role.as_deref(),
                backend_only,
                relay: true,
            };
            let catalog = self.catalog.clone();
            let model =
                grafton_schema::build_view(catalog, &self.config, self.naming, self.backend, view);
            let model = match (model, role.as_deref()) {
                (Ok(model), _) => model,
                (Err(e), Some(r)) => {
                    tracing::error!(
                        role = r,
                        "the Relay schema of role '{r}' cannot be built: {e}"
                    );
                    failed.push((r.to_owned(), backend_only));
                    continue;
                }
                (Err(e), None) => {
                    tracing::error!("the Relay schema cannot be built: {e}");
                    return Err(UNAVAILABLE.to_owned());
                }
            };
            let rules = twin.rules.as_deref().cloned();
            let mut planner = Planner::for_role(model, rules, self.dialect);
            planner.share_settings(&twin);
            match role {
                None => admin = Some(Arc::new(planner)),
                Some(_) => roles.push((role, backend_only, Arc::new(planner))),
            }
        }
        let admin = admin.ok_or(UNAVAILABLE)?;
        Ok(Built {
            admin,
            roles,
            failed,
        })
    }
}

impl Planner {
    /// Takes `twin`'s settings, and shares its counts and gates.
    fn share_settings(&mut self, twin: &Planner) {
        self.strict = twin.strict;
        self.limits = twin.limits.clone();
        self.default_limit = twin.default_limit;
        self.allowed = twin.allowed.clone();
        self.introspection_disabled = twin.introspection_disabled;
        self.rate = twin.rate.clone();
        self.gate = twin.gate.clone();
        self.live = twin.live.clone();
        self.cache_stats = twin.cache_stats.clone();
    }
}
