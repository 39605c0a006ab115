//! Building the engine at start-up: connect, introspect, and build every schema.

use crate::engine::Engine;
pub use crate::error::BuildError;
pub use crate::options::EngineOptions;
use crate::schemas::Schemas;
use grafton_execute::{Database, Target};

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
        Some(url) => Some(crate::shared::Shared::connect(url, &options.database_url).await?),
        None => None,
    };
    let cache = std::sync::Arc::new(crate::remotes::RemoteCache::default());
    let client = grafton_remote::Client::new(Default::default()).ok();
    let outside = Outside {
        client: client.as_ref(),
        cache: &cache,
    };
    let schemas = schemas(&db, options, shared.as_ref(), outside).await?;
    let mut engine = Engine::with_schemas(schemas, db);
    engine.remote_cache = cache;
    Ok(engine
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
    /// Introspects the database and builds every schema `options` asks for, without
    /// serving them: how a reload, or a metadata change tried before it is kept,
    /// builds (`grafton-metadata` orders them). Serve the result with
    /// [`Engine::replace_schemas`]; on any error the old set stays.
    pub async fn build_schemas(&self, options: &EngineOptions) -> Result<Schemas, BuildError> {
        let outside = Outside {
            client: self.remote.as_ref(),
            cache: &self.remote_cache,
        };
        schemas(self.database(), options, self.shared(), outside).await
    }

    /// Remote schemas' introspections kept between builds.
    pub fn remote_cache(&self) -> &crate::remotes::RemoteCache {
        &self.remote_cache
    }
}

/// What a build calls out with: remote schemas are introspected through the
/// client, their introspections kept in the cache.
struct Outside<'a> {
    client: Option<&'a grafton_remote::Client>,
    cache: &'a crate::remotes::RemoteCache,
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
    outside: Outside<'_>,
) -> Result<Schemas, BuildError> {
    crate::limits::validate(&options.config.api_limits).map_err(BuildError::Limits)?;
    let mut with_remotes;
    let options = match (&options.config.remote_schemas.is_empty(), outside.client) {
        (false, Some(client)) => {
            with_remotes = options.clone();
            with_remotes.config.remote_schema_permissions = options.remote_schema_permissions;
            crate::remotes::introspect(&mut with_remotes.config, client, outside.cache).await;
            &with_remotes
        }
        _ => options,
    };
    let started = std::time::Instant::now();
    let schemas = exposed_schemas(&options.schemas, &options.config, db.backend());
    let mut introspected = db.introspect(&schemas).await?;
    for w in &introspected.warnings {
        tracing::warn!("{w}");
    }
    let refused = crate::enum_tables::apply(db, &mut introspected.catalog, &options.config).await?;
    let introspected_at = std::time::Instant::now();
    let built = build_schemas(
        &introspected.catalog,
        options,
        db.backend(),
        refused,
        shared,
    );
    tracing::debug!(
        introspect_ms = (introspected_at - started).as_secs_f64() * 1000.0,
        build_ms = introspected_at.elapsed().as_secs_f64() * 1000.0,
        tables = introspected.catalog.tables.len(),
        "schemas built"
    );
    built
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
    let relay = crate::relay::RelayRecipe {
        catalog: catalog.clone(),
        config: built.config.clone(),
        naming: grafton_schema::Naming::new(options.naming),
        backend,
        dialect,
    };
    Schemas::new(built.model, built.roles, dialect)
        .with_relay_recipe(relay)
        .with_strict_graphql(options.strict_graphql)
        .with_limits(&built.config.api_limits, &options.limits, shared)
        .with_trusted(&built.config)
        .map(|s| {
            s.with_left_out(built.left_out)
                .with_event_triggers(built.event_triggers)
                .with_cron_triggers(built.cron_triggers)
        })
        .map_err(BuildError::Limits)
}
