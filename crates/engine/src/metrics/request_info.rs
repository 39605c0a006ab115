//! What the engine learned about one request.

use std::time::Duration;

/// What the engine learned about one request, for metrics, logs and traces.
#[derive(Default, Clone)]
pub struct RequestInfo {
    /// `query`, `mutation` or `subscription`, once the document validated.
    pub operation: Option<&'static str>,
    /// The operation's name, if it has one.
    pub name: Option<apollo_compiler::Name>,
    /// Time spent in the database (statements and transaction).
    pub database: Option<Duration>,
    /// Time spent before the database: parse, validate, plan (cached or not).
    pub planning: Option<Duration>,
    /// The plan run, for a slow-request log line with its SQL.
    pub plan: Option<std::sync::Arc<crate::Plan>>,
    /// `Set-Cookie` values action handlers answered, for the HTTP response.
    pub set_cookies: Vec<String>,
    /// An `@cached` query's cache headers.
    pub cache: Option<crate::response_cache::CacheHeaders>,
}
