//! Building the engine at start-up: connect, introspect, and build every schema.

use crate::engine::Engine;
use crate::schemas::{RoleSchema, Schemas, NO_PERMISSIONS};
use grafton_execute::{Database, ExecuteError, Target};
use grafton_schema::{Config, Convention, Naming, SchemaError};

/// What the engine serves.
#[derive(Debug, Clone, Default)]
pub struct EngineOptions {
    /// `postgres://…`, `sqlite://path` or a path.
    pub database_url: String,
    /// The parsed config (relationships, permissions, column schemas).
    pub config: Config,
    /// Naming convention.
    pub naming: Convention,
    /// Connections in the pool (and in each read replica's).
    pub pool_size: usize,
    /// PostgreSQL streaming replicas for queries and subscription polls.
    pub read_replicas: Vec<String>,
    /// After a caller's mutation, its reads go to the primary for this long.
    pub primary_after_write: std::time::Duration,
    /// PostgreSQL schemas to expose.
    pub schemas: Vec<String>,
    /// Redis, where several instances share rate-limit counts and persisted
    /// queries (`--redis-url`).
    pub redis_url: Option<String>,
    /// Refuse documents declaring variables they do not use (the spec's rule).
    pub strict_graphql: bool,
    /// The server's own limits (response size, request timeout, default row limit,
    /// queue timeout).
    pub limits: crate::ServerLimits,
}

/// Why the engine could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// Database URL, connection or catalog problems.
    #[error(transparent)]
    Database(#[from] ExecuteError),
    /// The schema could not be built.
    #[error(transparent)]
    Schema(#[from] SchemaError),
    /// A permission in the config cannot be served as written.
    #[error("config file permissions: {0}")]
    Permissions(String),
    /// `api_limits` cannot be enforced as written.
    #[error("api_limits: {0}")]
    Limits(String),
    /// The shared store (Redis) could not be reached.
    #[error(transparent)]
    Shared(#[from] crate::shared::SharedError),
}

/// Connects, introspects and builds the engine: the admin schema, and one schema
/// per role named in the config (two for roles with `backend_only` writes).
pub async fn build(options: &EngineOptions) -> Result<Engine, BuildError> {
    let target = Target::parse(&options.database_url)?;
    let pool = grafton_execute::PoolOptions {
        size: options.pool_size,
        statement_timeout: options.limits.request_timeout,
        wait: options.limits.queue_timeout,
    };
    let db = Database::connect(&target, pool)
        .await?
        .with_read_replicas(&options.read_replicas, pool)
        .await?;
    let shared = match &options.redis_url {
        Some(url) => Some(crate::shared::Shared::connect(url).await?),
        None => None,
    };
    let schemas = schemas(&db, options, shared.as_ref()).await?;
    Ok(Engine::with_schemas(schemas, db)
        .with_shared(shared)
        .with_queue_timeout(options.limits.queue_timeout)
        .with_primary_after_write(options.primary_after_write))
}

/// What a reload did.
#[derive(Debug, Clone)]
pub struct Reloaded {
    /// Tables (and views) served now.
    pub tables: usize,
    /// Role schemas built (admin's not counted).
    pub roles: usize,
    /// How long introspection and the build took.
    pub elapsed: std::time::Duration,
}

impl Engine {
    /// Introspects the database again and rebuilds every schema from `options`
    /// (its config re-read by the caller), then serves the new set; requests
    /// already running finish on the old one. On any error the old set stays.
    /// The database connection settings in `options` are not reapplied.
    pub async fn reload(&self, options: &EngineOptions) -> Result<Reloaded, BuildError> {
        let _one = self.reloading.lock().await;
        let started = std::time::Instant::now();
        let schemas = schemas(self.database(), options, self.shared()).await?;
        let reloaded = Reloaded {
            tables: schemas.admin.model().tables.len(),
            roles: schemas.role_count(),
            elapsed: started.elapsed(),
        };
        self.replace_schemas(schemas);
        Ok(reloaded)
    }
}

/// The schemas to read: those asked for (`--schema`), and on PostgreSQL every schema
/// the config names a table or function in (`other.items`), as Hasura's metadata
/// names the schema of each table it tracks.
fn exposed_schemas(
    asked: &[String],
    config: &grafton_schema::Config,
    backend: grafton_catalog::Backend,
) -> Vec<String> {
    let mut schemas = asked.to_vec();
    if backend != grafton_catalog::Backend::Postgres {
        return schemas;
    }
    let keys = config.tables.keys().chain(config.functions.keys());
    for (schema, _) in keys.filter_map(|k| k.split_once('.')) {
        if !schemas.iter().any(|s| s == schema) {
            schemas.push(schema.to_owned());
        }
    }
    schemas
}

/// Introspects `db` and builds every schema `options` asks for.
async fn schemas(
    db: &Database,
    options: &EngineOptions,
    shared: Option<&std::sync::Arc<crate::shared::Shared>>,
) -> Result<Schemas, BuildError> {
    crate::limits::validate(&options.config.api_limits).map_err(BuildError::Limits)?;
    let schemas = exposed_schemas(&options.schemas, &options.config, db.backend());
    let mut introspected = db.introspect(&schemas).await?;
    for w in &introspected.warnings {
        tracing::warn!("{w}");
    }
    crate::enum_tables::apply(db, &mut introspected.catalog, &options.config).await?;
    // Inherited roles become ordinary permissions before anything reads them.
    let default_schema = match db.backend() {
        grafton_catalog::Backend::Postgres => "public",
        grafton_catalog::Backend::Sqlite => "main",
    };
    let (config, inherited_warnings) =
        grafton_schema::inherited::expand(&options.config, &introspected.catalog, default_schema)?;
    for w in &inherited_warnings {
        tracing::warn!("{w}");
    }
    let config = &config;
    let naming = Naming::new(options.naming);
    let model = grafton_schema::build(introspected.catalog.clone(), config, naming, db.backend())?;
    for w in &model.warnings {
        tracing::warn!("{w}");
    }
    // One schema per role named in the config, built now, never per request.
    let roles: std::collections::BTreeSet<&String> = config
        .tables
        .values()
        .flat_map(|t| t.permissions.keys())
        .collect();
    // Rules are written as Hasura writes them (`_eq`, column names) whatever naming
    // the API uses: read them against a hasura-default model (same table and
    // relationship ids).
    let hasura_model;
    let rules_model = if options.naming == Convention::HasuraDefault || roles.is_empty() {
        &model
    } else {
        hasura_model = grafton_schema::build(
            introspected.catalog.clone(),
            config,
            Naming::new(Convention::HasuraDefault),
            db.backend(),
        )?;
        &hasura_model
    };
    let mut role_models = Vec::new();
    let mut roles: Vec<&str> = roles.into_iter().map(String::as_str).collect();
    roles.push(NO_PERMISSIONS);
    for role in roles {
        let rules = grafton_ir::permissions::compile(rules_model, config, role)
            .map_err(|e| BuildError::Permissions(e.to_string()))?;
        // Roles with `backend_only` permissions get a second schema: the one requests
        // from trusted backends (admin secret + x-hasura-use-backend-only-permissions) see.
        let views: &[bool] = if has_backend_only(config, role) {
            &[false, true]
        } else {
            &[false]
        };
        for &backend_only in views {
            let model = grafton_schema::build_for_role(
                introspected.catalog.clone(),
                config,
                naming,
                db.backend(),
                Some(role),
                backend_only,
            )
            .map_err(|e| BuildError::Permissions(format!("schema of role '{role}': {e}")))?;
            role_models.push(RoleSchema {
                model,
                rules: rules.clone(),
                backend_only,
            });
        }
    }
    Schemas::new(model, role_models, db.dialect())
        .with_strict_graphql(options.strict_graphql)
        .with_limits(&config.api_limits, &options.limits, shared)
        .with_trusted(config)
        .map_err(BuildError::Limits)
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
