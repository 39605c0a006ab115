//! What a request is before the engine works on it: the GraphQL request object
//! (GraphQL over HTTP §"Request Parameters", Apollo's persisted-query extension),
//! the transport it came by, a body that may be a batch, and the answer.

use serde_json::{Map, Value};

/// A GraphQL request as received.
#[derive(Debug, Default)]
pub struct GraphqlRequest {
    /// The document text.
    pub query: String,
    /// Which operation to run.
    pub operation_name: Option<String>,
    /// Variable values.
    pub variables: Map<String, Value>,
    /// Apollo's `extensions.persistedQuery.sha256Hash`: the document's hash, sent
    /// with the document (to register it) or instead of it.
    pub persisted_hash: Option<String>,
}

/// How a request arrived: what it may do depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// HTTP POST.
    Post,
    /// HTTP GET: queries only.
    Get,
    /// A WebSocket: subscriptions too.
    WebSocket,
}

/// A body that is not a GraphQL request object: the client's mistake, said whole.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ShapeError(pub String);

/// The client spent its rate limit's allowance.
#[derive(Debug, thiserror::Error)]
#[error("rate limit exceeded: {per_minute} requests per minute; retry in {}s", .wait.as_secs_f64().ceil())]
pub struct RateLimited {
    /// The allowance.
    pub per_minute: u64,
    /// How long until the request would fit.
    pub wait: std::time::Duration,
}

/// The caller's role has no schema: no permissions anywhere, and no empty schema
/// built for such roles (step 1's refusal).
#[derive(Debug, thiserror::Error)]
#[error("role \"{0}\" has no permissions")]
pub struct NoPermissions(pub String);

/// A persisted query that cannot be run (step 4's refusals).
#[derive(Debug, thiserror::Error)]
pub enum PersistedError {
    /// A hash the server does not know (the client then sends the document with
    /// its hash, as Apollo's protocol says).
    #[error("PersistedQueryNotFound")]
    NotFound,
    /// The document does not have the hash sent with it.
    #[error("provided sha does not match query")]
    Mismatch,
}

/// The answer to a body: one response, or a batch's, in order (each element's
/// error is its own; the transport renders it).
#[derive(Debug)]
pub enum Answer {
    /// The response body's JSON text.
    One(String),
    /// Each element's response body, or its error.
    Batch(Vec<Result<String, crate::EngineError>>),
}

impl GraphqlRequest {
    /// Reads a request object, checking its shape.
    pub fn from_json(value: Value) -> Result<Self, ShapeError> {
        let bad = |m: &str| Err(ShapeError(m.to_owned()));
        let Value::Object(mut object) = value else {
            return bad("the request body must be a JSON object");
        };
        let persisted_hash = persisted_hash(object.get("extensions"))?;
        let query = match object.remove("query") {
            Some(Value::String(q)) => q,
            Some(_) => return bad("'query' must be a string"),
            // A persisted query may come as its hash alone.
            None if persisted_hash.is_some() => String::new(),
            None => return bad("the request has no 'query'"),
        };
        let operation_name = match object.remove("operationName") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s),
            Some(_) => return bad("'operationName' must be a string"),
        };
        let variables = match object.remove("variables") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m,
            Some(_) => return bad("'variables' must be an object"),
        };
        match object.remove("extensions") {
            None | Some(Value::Null) | Some(Value::Object(_)) => {}
            Some(_) => return bad("'extensions' must be an object"),
        }
        Ok(GraphqlRequest {
            query,
            operation_name,
            variables,
            persisted_hash,
        })
    }
}

/// Apollo's `extensions.persistedQuery`: `{version: 1, sha256Hash: "…"}`.
fn persisted_hash(extensions: Option<&Value>) -> Result<Option<String>, ShapeError> {
    let Some(pq) = extensions.and_then(|e| e.get("persistedQuery")) else {
        return Ok(None);
    };
    if pq.get("version").and_then(Value::as_u64) != Some(1) {
        return Err(ShapeError(
            "unsupported persisted query version: only version 1 is".into(),
        ));
    }
    match pq.get("sha256Hash").and_then(Value::as_str) {
        Some(hash) if hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            Ok(Some(hash.to_owned()))
        }
        _ => Err(ShapeError(
            "persistedQuery.sha256Hash must be a SHA-256 in hex".into(),
        )),
    }
}
