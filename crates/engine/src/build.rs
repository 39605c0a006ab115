//! Building the engine at start-up: connect, introspect, and build every schema.

use crate::engine::Engine;
use crate::schemas::Schemas;
use grafton_execute::{Database, ExecuteError, Target};
use grafton_schema::{Config, Convention, SchemaError};

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
    /// Refuse to start when any metadata object cannot be served, instead of
    /// leaving it out (`--strict-metadata`).
    pub strict_metadata: bool,
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
    /// Metadata objects cannot be served, and `--strict-metadata` is on.
    #[error("{}", grafton_schema::inconsistent::refusal(.0))]
    Inconsistent(Vec<grafton_schema::inconsistent::Inconsistency>),
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
    let refused = crate::enum_tables::apply(db, &mut introspected.catalog, &options.config).await?;
    build_schemas(
        &introspected.catalog,
        options,
        db.backend(),
        refused,
        shared,
    )
}

/// Every schema `options` asks for over a catalog already introspected (no I/O):
/// how the golden plan tests build theirs from a fixture.
pub fn schemas_from_catalog(
    catalog: &grafton_catalog::Catalog,
    options: &EngineOptions,
    backend: grafton_catalog::Backend,
) -> Result<Schemas, BuildError> {
    crate::limits::validate(&options.config.api_limits).map_err(BuildError::Limits)?;
    build_schemas(catalog, options, backend, Vec::new(), None)
}

fn build_schemas(
    catalog: &grafton_catalog::Catalog,
    options: &EngineOptions,
    backend: grafton_catalog::Backend,
    refused: Vec<grafton_schema::inconsistent::Inconsistency>,
    shared: Option<&std::sync::Arc<crate::shared::Shared>>,
) -> Result<Schemas, BuildError> {
    let built = crate::consistent::build(catalog, options, backend, refused)?;
    for w in &built.model.warnings {
        tracing::warn!("{w}");
    }
    if let Some(summary) = grafton_schema::inconsistent::summary(&built.left_out) {
        tracing::warn!("{summary}");
    }
    let dialect = match backend {
        grafton_catalog::Backend::Postgres => grafton_sql::Dialect::Postgres,
        grafton_catalog::Backend::Sqlite => grafton_sql::Dialect::Sqlite,
    };
    Schemas::new(built.model, built.roles, dialect)
        .with_strict_graphql(options.strict_graphql)
        .with_limits(&built.config.api_limits, &options.limits, shared)
        .with_trusted(&built.config)
        .map(|s| s.with_left_out(built.left_out))
        .map_err(BuildError::Limits)
}
