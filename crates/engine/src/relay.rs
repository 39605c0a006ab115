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

impl RelayRecipe {
    /// The Relay planners of `twins`: admin's, and each role's views'.
    pub(crate) fn build(&self, twins: Vec<Twin>) -> Result<(Arc<Planner>, Vec<Twin>), String> {
        let mut admin = None;
        let mut planners = Vec::with_capacity(twins.len());
        for (role, backend_only, twin) in twins {
            let view = View {
                role: role.as_deref(),
                backend_only,
                relay: true,
            };
            let model = grafton_schema::build_view(
                self.catalog.clone(),
                &self.config,
                self.naming,
                self.backend,
                view,
            )
            .map_err(|e| match &role {
                Some(r) => format!("the Relay schema of role '{r}': {e}"),
                None => format!("the Relay schema: {e}"),
            })?;
            let rules = twin.rules.as_deref().cloned();
            let mut planner = Planner::for_role(model, rules, self.dialect);
            planner.share_settings(&twin);
            match role {
                None => admin = Some(Arc::new(planner)),
                Some(_) => planners.push((role, backend_only, Arc::new(planner))),
            }
        }
        let admin = admin.ok_or("the Relay schema: no admin schema to twin")?;
        Ok((admin, planners))
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
