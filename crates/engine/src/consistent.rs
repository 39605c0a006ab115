//! Every schema built from the config, leaving out what cannot be served: a build
//! that meets objects it cannot serve (Hasura's inconsistent metadata) takes them
//! out of the config and builds again, until what is left is consistent. Each stage
//! reports every object it refuses at once, so this takes a few rounds, not one per
//! object. `--strict-metadata` refuses to start instead, naming them all.

use crate::error::BuildError;
use crate::options::EngineOptions;
use crate::schemas::{RoleSchema, NO_PERMISSIONS};
use grafton_catalog::{Backend, Catalog};
use grafton_schema::inconsistent::{self, Inconsistency};
use grafton_schema::{Config, Convention, Naming, SchemaError, SchemaModel};

/// What one consistent build gives.
pub(crate) struct Built {
    /// The config served (inherited roles written out).
    pub(crate) config: Config,
    /// The admin model.
    pub(crate) model: SchemaModel,
    /// Each role's model and rules.
    pub(crate) roles: Vec<RoleSchema>,
    /// Everything left out: what was refused, and what is not served yet.
    pub(crate) left_out: Vec<Inconsistency>,
    /// The event triggers served.
    pub(crate) event_triggers: Vec<crate::events::ServedTrigger>,
    pub(crate) cron_triggers: Vec<grafton_schema::config::CronTriggerConfig>,
}

/// Why one round stopped.
enum Stop {
    Inconsistent(Vec<Inconsistency>),
    Fatal(BuildError),
}

impl From<SchemaError> for Stop {
    fn from(e: SchemaError) -> Self {
        match e {
            SchemaError::Inconsistent(list) => Stop::Inconsistent(list),
            e => Stop::Fatal(BuildError::Schema(e)),
        }
    }
}

/// Builds every schema from `options.config` over `catalog`, leaving out (or, when
/// strict, refusing) the objects in `refused` and any the build cannot serve.
pub(crate) fn build(
    catalog: &Catalog,
    options: &EngineOptions,
    backend: Backend,
    refused: Vec<Inconsistency>,
) -> Result<Built, BuildError> {
    let mut config = options.config.clone();
    let mut left_out = config.left_out.clone();
    // Already out of the config; applied again for what leaving them out implies
    // (an inherited role whose own permission went is dropped whole).
    for object in &left_out {
        inconsistent::remove(&mut config, object);
    }
    for object in refused {
        inconsistent::remove(&mut config, &object);
        left_out.push(object);
    }
    loop {
        match round(catalog, &config, options, backend) {
            Ok((expanded, model, roles)) => {
                let (event_triggers, refused) = crate::events::served(&expanded, &model, backend);
                left_out.extend(refused);
                let (cron_triggers, refused) = crate::schedules::served(&expanded, backend);
                left_out.extend(refused);
                if options.strict_metadata && !left_out.is_empty() {
                    return Err(BuildError::Inconsistent(left_out));
                }
                return Ok(Built {
                    config: expanded,
                    model,
                    roles,
                    left_out,
                    event_triggers,
                    cron_triggers,
                });
            }
            Err(Stop::Inconsistent(list)) => {
                let mut progress = false;
                for object in &list {
                    progress |= inconsistent::remove(&mut config, object);
                }
                if !progress {
                    // Nothing left to take out: a bug, said as it is.
                    return Err(BuildError::Schema(SchemaError::Inconsistent(list)));
                }
                left_out.extend(list);
            }
            // What cannot be built without what was left out says so first.
            Err(Stop::Fatal(_)) if options.strict_metadata && !left_out.is_empty() => {
                return Err(BuildError::Inconsistent(left_out));
            }
            Err(Stop::Fatal(e)) => {
                if let Some(summary) = inconsistent::summary(&left_out) {
                    tracing::warn!("{summary}");
                }
                return Err(e);
            }
        }
    }
}

/// One attempt: the admin model, then every role's rules and model.
fn round(
    catalog: &Catalog,
    config: &Config,
    options: &EngineOptions,
    backend: Backend,
) -> Result<(Config, SchemaModel, Vec<RoleSchema>), Stop> {
    let default_schema = match backend {
        Backend::Postgres => "public",
        Backend::Sqlite => "main",
    };
    // Inherited roles become ordinary permissions before anything reads them.
    let (config, inherited_warnings) =
        grafton_schema::inherited::expand(config, catalog, default_schema)?;
    for w in &inherited_warnings {
        tracing::warn!("{w}");
    }
    let naming = Naming::new(options.naming);
    let model = grafton_schema::build(catalog.clone(), &config, naming, backend)?;
    // One schema per role named in the config, built now, never per request.
    // An action's or a remote schema permission's roles too, and an inherited
    // role one of whose roles has one.
    let action_roles: std::collections::BTreeSet<&String> = (config.actions.iter())
        .flat_map(|a| a.permissions.iter().map(|p| &p.role))
        .chain((config.remote_schemas.iter()).flat_map(|r| r.permissions.iter().map(|p| &p.role)))
        .collect();
    let inheriting = (config.inherited_roles.iter())
        .filter(|(_, parents)| parents.iter().any(|p| action_roles.contains(p)))
        .map(|(role, _)| role);
    let roles: std::collections::BTreeSet<&String> = (config.tables.values())
        .flat_map(|t| t.permissions.keys())
        .chain(action_roles.iter().copied())
        .chain(inheriting)
        .collect();
    // Rules are written as Hasura writes them (`_eq`, column names) whatever naming
    // the API uses: read them against a hasura-default model (same table and
    // relationship ids).
    let hasura_model;
    let rules_model = if options.naming == Convention::HasuraDefault || roles.is_empty() {
        &model
    } else {
        let hasura = Naming::new(Convention::HasuraDefault);
        hasura_model = grafton_schema::build(catalog.clone(), &config, hasura, backend)?;
        &hasura_model
    };
    let problems: Vec<Inconsistency> = (roles.iter())
        .flat_map(|role| grafton_ir::permissions::problems(rules_model, &config, role))
        .collect();
    if !problems.is_empty() {
        return Err(Stop::Inconsistent(problems));
    }
    let mut role_models = Vec::new();
    let mut roles: Vec<&str> = roles.into_iter().map(String::as_str).collect();
    roles.push(NO_PERMISSIONS);
    for role in roles {
        let rules = grafton_ir::permissions::compile(rules_model, &config, role)
            .map_err(|e| Stop::Fatal(BuildError::Permissions(e.to_string())))?;
        // Roles with `backend_only` permissions get a second schema: the one requests
        // from trusted backends (admin secret + x-hasura-use-backend-only-permissions) see.
        let views: &[bool] = if has_backend_only(&config, role) {
            &[false, true]
        } else {
            &[false]
        };
        for &backend_only in views {
            let model = grafton_schema::build_for_role(
                catalog.clone(),
                &config,
                naming,
                backend,
                Some(role),
                backend_only,
            )
            .map_err(|e| match e {
                SchemaError::Inconsistent(list) => Stop::Inconsistent(list),
                e => Stop::Fatal(BuildError::Permissions(format!(
                    "schema of role '{role}': {e}"
                ))),
            })?;
            role_models.push(RoleSchema {
                model,
                rules: rules.clone(),
                backend_only,
            });
        }
    }
    Ok((config, model, role_models))
}

/// Whether any of `role`'s insert, update or delete permissions is `backend_only`.
fn has_backend_only(config: &Config, role: &str) -> bool {
    config
        .tables
        .values()
        .filter_map(|t| t.permissions.get(role))
        .any(|p| {
            p.insert.as_ref().is_some_and(|x| x.backend_only)
                || p.update.as_ref().is_some_and(|x| x.backend_only)
                || p.delete.as_ref().is_some_and(|x| x.backend_only)
        })
}
