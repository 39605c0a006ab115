//! Who sends a request.

use serde_json::{Map, Value};

/// Who sends a request: admin (`role: None`) or a role, with session variables
/// (lower-case `x-hasura-*` names) that permission rules may read.
#[derive(Debug, Clone, Default)]
pub struct Caller {
    /// The role; `None` is admin.
    pub role: Option<String>,
    /// Session variables.
    pub vars: Map<String, Value>,
    /// The role's `backend_only` permissions apply (a trusted backend's request).
    pub backend_only: bool,
    /// The client's address, for rate limits keyed by IP.
    pub ip: Option<std::net::IpAddr>,
    /// When the credentials expire (a JWT's `exp`): a WebSocket ends then.
    pub expires: Option<std::time::SystemTime>,
    /// The request's trace as a W3C `traceparent` (Grafton's own span when
    /// traces are exported, else the caller's), for events' `trace_context`.
    pub traceparent: Option<String>,
    /// The client's request headers, for an action that forwards them.
    pub headers: Vec<(String, String)>,
    /// The request came to the Relay API (`/v1beta1/relay`): the role's Relay
    /// schema answers it.
    pub relay: bool,
}
