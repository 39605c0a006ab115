//! What can go wrong with one request inside the engine. Transport errors (bodies,
//! media types, credentials) belong to the server, which also maps these to GraphQL
//! errors, codes and HTTP statuses.

use apollo_compiler::response::GraphQLError;
use grafton_execute::ExecuteError;
use grafton_ir::IrError;

/// Why a request failed in the engine.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The GraphQL document does not parse.
    #[error("not a valid graphql query")]
    ParseFailed(Vec<GraphQLError>),
    /// The document does not validate against the schema, or variables are wrong.
    #[error("validation failed")]
    Validation(Vec<GraphQLError>),
    /// A mutation, a subscription or a query that may write was sent over GET
    /// (what is not allowed, said whole).
    #[error("{0} over GET; use POST")]
    MethodNotAllowed(String),
    /// Valid GraphQL that Grafton refuses or does not serve yet.
    #[error(transparent)]
    Ir(#[from] IrError),
    /// The database failed.
    #[error(transparent)]
    Execute(#[from] ExecuteError),
    /// A write broke the role's insert or update check: nothing was written.
    #[error("{0}")]
    Permission(String),
    /// The request is over one of its role's limits: nothing was sent to the database.
    #[error(transparent)]
    Limit(#[from] crate::limits::LimitExceeded),
    /// Too many requests run or wait already: refused at once.
    #[error(transparent)]
    Overloaded(#[from] crate::admission::Overloaded),
    /// The client spent its rate limit's allowance.
    #[error(transparent)]
    RateLimited(#[from] crate::request::types::RateLimited),
    /// The body is not a GraphQL request object (or a batch of them).
    #[error(transparent)]
    Shape(#[from] crate::request::types::ShapeError),
    /// A persisted query that cannot be run.
    #[error(transparent)]
    Persisted(#[from] crate::request::types::PersistedError),
    /// The document is not in the role's allow list.
    #[error("query is not allowed: it is not in the allow list")]
    NotAllowed,
    /// An action's handler gave no output (its own error, or one calling it).
    #[error(transparent)]
    Action(#[from] grafton_remote::ActionError),
    /// The role has no schema (only when no empty one was built for it).
    #[error(transparent)]
    NoPermissions(#[from] crate::request::types::NoPermissions),
    /// What the request asks for cannot be served now (the Relay API, when its
    /// schema could not be built: the reason).
    #[error("{0}")]
    Unavailable(String),
}

impl EngineError {
    /// A validation error with a single message.
    pub fn validation(message: impl Into<String>) -> Self {
        Self::Validation(vec![GraphQLError::new(
            message.into(),
            None,
            &Default::default(),
        )])
    }
}

/// Why the engine could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// Database URL, connection or catalog problems.
    #[error(transparent)]
    Database(#[from] ExecuteError),
    /// The schema could not be built.
    #[error(transparent)]
    Schema(#[from] grafton_schema::SchemaError),
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
