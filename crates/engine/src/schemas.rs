//! The schemas an engine serves: admin's planner and each role's. A reload builds
//! a new set and swaps it in whole; requests already running keep the set they
//! started with.

use crate::planner::Planner;
use crate::request::types::NoPermissions;
use crate::RoleLimits;
use grafton_schema::SchemaModel;
use grafton_sql::Dialect;
use std::collections::HashMap;
use std::sync::Arc;

/// The role name of the schema every role named by no permission shares (an empty
/// one, with only `no_queries_available`: its requests fail validation, as in Hasura).
pub const NO_PERMISSIONS: &str = "";

/// A role's schema model and rules; `backend_only` for the view of trusted backends.
pub struct RoleSchema {
    /// The role's schema model.
    pub model: SchemaModel,
    /// Its row rules.
    pub rules: grafton_ir::permissions::RoleRules,
    /// Whether this is the trusted-backend view (its `backend_only` permissions count).
    pub backend_only: bool,
}

/// Admin's planner and each role's (two for roles with `backend_only` writes).
pub struct Schemas {
    pub(crate) admin: Arc<Planner>,
    roles: HashMap<String, Arc<Planner>>,
    /// The roles with `backend_only` permissions, as trusted backends see them.
    backend_roles: HashMap<String, Arc<Planner>>,
    /// The metadata objects left out of this set (inconsistent, or not served yet).
    left_out: Vec<grafton_schema::inconsistent::Inconsistency>,
    /// The event triggers served.
    event_triggers: Arc<Vec<crate::events::ServedTrigger>>,
    /// The cron triggers served.
    cron_triggers: Arc<Vec<grafton_schema::config::CronTriggerConfig>>,
    /// What the Relay API's planners are built from, and those planners once built.
    relay_recipe: Option<Arc<crate::relay::RelayRecipe>>,
    relay: tokio::sync::OnceCell<Result<Arc<Schemas>, String>>,
    /// Roles this set has no schema for, though it should (a Relay schema
    /// that could not be built): their requests are refused.
    unavailable: std::collections::HashSet<(String, bool)>,
}

impl Schemas {
    /// The admin `model` and each role's model and rules, planned in `dialect`.
    pub fn new(model: SchemaModel, roles: Vec<RoleSchema>, dialect: Dialect) -> Self {
        let (mut front, mut back) = (HashMap::new(), HashMap::new());
        for r in roles {
            let name = r.rules.role.clone();
            let planner = Arc::new(Planner::for_role(r.model, Some(r.rules), dialect));
            if r.backend_only {
                back.insert(name, planner);
            } else {
                front.insert(name, planner);
            }
        }
        Self::with_planners(Arc::new(Planner::new(model, dialect)), front, back)
    }

    fn with_planners(
        admin: Arc<Planner>,
        roles: HashMap<String, Arc<Planner>>,
        backend_roles: HashMap<String, Arc<Planner>>,
    ) -> Self {
        Self {
            admin,
            roles,
            backend_roles,
            left_out: Vec::new(),
            event_triggers: Arc::default(),
            cron_triggers: Arc::default(),
            relay_recipe: None,
            relay: tokio::sync::OnceCell::new(),
            unavailable: Default::default(),
        }
    }

    /// A set of planners already built (the Relay API's): admin's, and each
    /// role's with its view.
    fn from_planners(admin: Arc<Planner>, planners: Vec<crate::relay::Twin>) -> Self {
        let (mut front, mut back) = (HashMap::new(), HashMap::new());
        for (role, backend_only, planner) in planners {
            let Some(role) = role else { continue };
            match backend_only {
                false => front.insert(role, planner),
                true => back.insert(role, planner),
            };
        }
        Self::with_planners(admin, front, back)
    }

    /// Builds the Relay API's planners from `recipe` when it is first asked for.
    pub(crate) fn with_relay_recipe(mut self, recipe: crate::relay::RelayRecipe) -> Self {
        self.relay_recipe = Some(Arc::new(recipe));
        self
    }

    /// The Relay API's planners: built at the first call (off the async workers),
    /// then kept for this set's life. The error says why they cannot be built.
    pub(crate) async fn relay(&self) -> Result<&Schemas, String> {
        let recipe = (self.relay_recipe.clone()).ok_or("the Relay API is not served here")?;
        let built = self
            .relay
            .get_or_init(|| async {
                let twins = self.twins();
                let build = tokio::task::spawn_blocking(move || recipe.build(twins));
                match build.await {
                    Ok(Ok(built)) => {
                        let mut schemas = Schemas::from_planners(built.admin, built.roles);
                        schemas.unavailable = built.failed.into_iter().collect();
                        Ok(Arc::new(schemas))
                    }
                    Ok(Err(e)) => Err(e),
                    Err(e) => {
                        tracing::error!("building the Relay schema failed: {e}");
                        Err(crate::relay::UNAVAILABLE.to_owned())
                    }
                }
            })
            .await;
        match built {
            Ok(schemas) => Ok(schemas),
            Err(e) => Err(e.clone()),
        }
    }

    /// Whether `role`'s schema (its `backend_only` view's) should exist here but
    /// could not be built.
    pub(crate) fn unavailable(&self, role: Option<&str>, backend_only: bool) -> bool {
        let Some(r) = role else { return false };
        let failed = |view: bool| self.unavailable.contains(&(r.to_owned(), view));
        // A trusted backend's request without a view of its own is the role's.
        let own_view = backend_only && self.backend_roles.contains_key(r);
        failed(backend_only) || (backend_only && !own_view && failed(false))
    }

    /// Every planner with its role and view.
    fn twins(&self) -> Vec<crate::relay::Twin> {
        let admin = std::iter::once((None, false, self.admin.clone()));
        let front = (self.roles.iter()).map(|(n, p)| (Some(n.clone()), false, p.clone()));
        let back = (self.backend_roles.iter()).map(|(n, p)| (Some(n.clone()), true, p.clone()));
        admin.chain(front).chain(back).collect()
    }

    /// Records what was left out of this set.
    pub fn with_left_out(
        mut self,
        left_out: Vec<grafton_schema::inconsistent::Inconsistency>,
    ) -> Self {
        self.left_out = left_out;
        self
    }

    /// The event triggers this set serves.
    pub fn with_event_triggers(mut self, triggers: Vec<crate::events::ServedTrigger>) -> Self {
        self.event_triggers = Arc::new(triggers);
        self
    }

    /// The event triggers served.
    pub fn event_triggers(&self) -> &Arc<Vec<crate::events::ServedTrigger>> {
        &self.event_triggers
    }

    /// The cron triggers this set serves.
    pub fn with_cron_triggers(
        mut self,
        triggers: Vec<grafton_schema::config::CronTriggerConfig>,
    ) -> Self {
        self.cron_triggers = Arc::new(triggers);
        self
    }

    /// The cron triggers served.
    pub fn cron_triggers(&self) -> &Arc<Vec<grafton_schema::config::CronTriggerConfig>> {
        &self.cron_triggers
    }

    /// The metadata objects left out of this set: inconsistent, or not served yet
    /// (Hasura's `get_inconsistent_metadata`).
    pub fn left_out(&self) -> &[grafton_schema::inconsistent::Inconsistency] {
        &self.left_out
    }

    /// Every planner with its role (`None`: admin) and view, to configure them
    /// before the set is shared. Only callable while this set is the sole owner
    /// of its planners (that is, before it is served).
    fn planners_mut(&mut self) -> impl Iterator<Item = (Option<&str>, bool, &mut Planner)> {
        let admin = std::iter::once((None, false, &mut self.admin));
        let front = self
            .roles
            .iter_mut()
            .map(|(n, p)| (Some(n.as_str()), false, p));
        let back = (self.backend_roles.iter_mut()).map(|(n, p)| (Some(n.as_str()), true, p));
        admin
            .chain(front)
            .chain(back)
            .filter_map(|(name, backend, p)| Arc::get_mut(p).map(|p| (name, backend, p)))
    }

    /// Applies the GraphQL spec's rule on unused variables (`--strict-graphql`).
    pub fn with_strict_graphql(mut self, strict: bool) -> Self {
        for (_, _, p) in self.planners_mut() {
            p.strict = strict;
        }
        self
    }

    /// Applies `api_limits` (each role's own, admin exempt unless named) and the
    /// server's safety rails to every planner.
    pub fn with_limits(
        mut self,
        api: &grafton_schema::api_limits::ApiLimits,
        server: &crate::ServerLimits,
        shared: Option<&Arc<crate::shared::Shared>>,
    ) -> Self {
        use crate::limits::rate::RoleRate;
        for (name, _, p) in self.planners_mut() {
            p.limits = RoleLimits::resolve(api, server, name);
            p.default_limit = server.default_limit;
            p.gate = gate(&p.limits, server.queue_timeout).map(Arc::new);
            p.rate = (p.limits.rate.as_ref()).map(|r| Arc::new(RoleRate::new(r, name, shared)));
        }
        self
    }

    /// Applies the allow list and the introspection switches to every role (admin
    /// is never limited by either).
    pub fn with_trusted(mut self, config: &grafton_schema::Config) -> Result<Self, String> {
        let allow = crate::trusted::AllowList::from_config(config)?;
        let off = &config.graphql_schema_introspection.disabled_for_roles;
        for (name, _, p) in self.planners_mut() {
            if let Some(name) = name {
                p.allowed = allow.for_role(name);
                p.introspection_disabled = off.iter().any(|r| r == name);
            }
        }
        Ok(self)
    }

    /// Keeps what outlives a reload from the set being replaced: each role's counts
    /// of live subscriptions (per session), and its rate-limit counts and `max_concurrent` gate
    /// while those limits are unchanged, so a reload neither resets a client's
    /// allowance nor lets a role past its limits.
    pub(crate) fn carry_over(mut self, old: &Schemas) -> Self {
        for (name, backend, p) in self.planners_mut() {
            let Some(before) = old.lookup(name, backend) else {
                continue;
            };
            p.live = before.live.clone();
            if before.limits.rate == p.limits.rate {
                p.rate = before.rate.clone();
            }
            if before.limits.max_concurrent == p.limits.max_concurrent {
                p.gate = before.gate.clone();
            }
        }
        self
    }

    /// Every planner counts its cache lookups in `stats` (the engine's).
    pub(crate) fn count_in(mut self, stats: &crate::metrics::CacheStats) -> Self {
        for (_, _, p) in self.planners_mut() {
            p.cache_stats = stats.clone();
        }
        self
    }

    /// The planner of exactly this role and view.
    fn lookup(&self, role: Option<&str>, backend_only: bool) -> Option<&Arc<Planner>> {
        match (role, backend_only) {
            (None, _) => Some(&self.admin),
            (Some(r), false) => self.roles.get(r),
            (Some(r), true) => self.backend_roles.get(r),
        }
    }

    /// The planner of a role (`None`: admin); `backend_only` picks the trusted
    /// backends' view where the role has one. A role with no permissions anywhere
    /// shares the empty schema; without one it is refused.
    pub fn planner_for(
        &self,
        role: Option<&str>,
        backend_only: bool,
    ) -> Result<&Arc<Planner>, NoPermissions> {
        let Some(r) = role else {
            return Ok(&self.admin);
        };

        let backend = backend_only.then(|| self.backend_roles.get(r)).flatten();
        backend
            .or_else(|| self.roles.get(r))
            .or_else(|| self.roles.get(NO_PERMISSIONS))
            .ok_or_else(|| NoPermissions(r.to_owned()))
    }

    /// The names of the enum tables these schemas read their enums from.
    pub(crate) fn enum_tables(&self) -> std::collections::HashSet<String> {
        (self.admin.model().catalog.enums.iter())
            .filter_map(|e| e.from_table.as_ref().map(|t| t.table.clone()))
            .collect()
    }

    /// Admin's schema model: every table, relationship and function served.
    pub fn admin_model(&self) -> &grafton_schema::SchemaModel {
        self.admin.model()
    }

    /// The number of role schemas (admin's not counted).
    pub fn role_count(&self) -> usize {
        self.roles.len() + self.backend_roles.len()
    }
}

/// The `max_concurrent` gate of a role's limits, where requests wait at most
/// `max_wait`.
fn gate(limits: &RoleLimits, max_wait: std::time::Duration) -> Option<crate::admission::Gate> {
    limits.max_concurrent.map(|n| {
        crate::admission::Gate::new(
            usize::try_from(n).unwrap_or(usize::MAX),
            "the role's max_concurrent",
        )
        .waiting_at_most(max_wait)
    })
}
