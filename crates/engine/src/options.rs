//! What the engine is asked to serve.

use grafton_schema::{Config, Convention};

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
    /// `--enable-remote-schema-permissions`: a remote schema without
    /// permissions is admin's only (else every role's).
    pub remote_schema_permissions: bool,
    /// Refuse to start when any metadata object cannot be served, instead of
    /// leaving it out (`--strict-metadata`).
    pub strict_metadata: bool,
    /// The server's own limits (response size, request timeout, default row limit,
    /// queue timeout).
    pub limits: crate::ServerLimits,
}
