//! Request errors and their mapping to GraphQL errors, codes and HTTP statuses.
//! This is the only place where layer errors become `extensions.code` values.

use axum::http::StatusCode;
use grafton_engine::request::types::PersistedError;
use grafton_engine::{EngineError, LimitKind};
use grafton_execute::{DbErrorKind, ExecuteError};
use grafton_ir::IrError;
use serde_json::{json, Value};

/// Everything that can go wrong with one GraphQL request.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// The body is not JSON.
    #[error("invalid JSON in request body: {0}")]
    InvalidJson(String),
    /// The JSON is not a GraphQL request (`query` missing, wrong types…).
    #[error("{0}")]
    BadRequest(String),
    /// The body is larger than the configured limit.
    #[error("request body is larger than the limit of {0} bytes")]
    TooLarge(usize),
    /// The content type is not JSON.
    #[error("unsupported content type '{0}': send application/json")]
    UnsupportedMediaType(String),
    /// The engine refused or failed the request.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// Authentication failed or the role is not allowed.
    #[error("{message}")]
    Auth {
        /// `invalid-jwt` or `access-denied`.
        code: &'static str,
        /// What failed.
        message: String,
        /// HTTP status.
        status: u16,
    },
}

impl RequestError {
    /// The stable `extensions.code`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidJson(_) => "invalid-json",
            Self::BadRequest(_) => "parse-failed",
            Self::TooLarge(_) => "request-too-large",
            Self::UnsupportedMediaType(_) => "unsupported-media-type",
            Self::Auth { code, .. } => code,
            Self::Engine(e) => engine_code(e),
        }
    }

    /// True when a limit, a rate limit or admission control refused the request
    /// (what `grafton_rejections_total` counts).
    pub fn is_refusal(&self) -> bool {
        use EngineError as E;
        match self {
            Self::TooLarge(_) => true,
            Self::Engine(E::Limit(_) | E::Overloaded(_) | E::RateLimited(_) | E::NotAllowed) => {
                true
            }
            Self::Engine(E::Execute(e)) => {
                matches!(e.kind(), DbErrorKind::Busy | DbErrorKind::Timeout)
            }
            _ => false,
        }
    }

    /// True when the request failed before execution (GraphQL "request error"):
    /// the response then has no `data` key.
    pub fn is_request_error(&self) -> bool {
        use EngineError as E;
        match self {
            // Too deep for the database to compile: refused like an invalid document.
            Self::Engine(E::Execute(e)) => e.kind() == DbErrorKind::TooComplex,
            Self::Engine(E::Ir(IrError::DataException(_)) | E::Permission(_)) => false,
            // Only known once the database answered: an execution error.
            Self::Engine(E::Limit(l)) => l.kind != LimitKind::ResponseBytes,
            _ => true,
        }
    }

    /// The HTTP status. `graphql_response` is true when the client accepts
    /// `application/graphql-response+json`, where request errors are 4xx; with
    /// `application/json` validation errors stay 200, as Hasura answers.
    pub fn status(&self, graphql_response: bool) -> StatusCode {
        use EngineError as E;
        match self {
            Self::InvalidJson(_)
            | Self::BadRequest(_)
            | Self::Engine(E::ParseFailed(_) | E::Shape(_)) => StatusCode::BAD_REQUEST,
            Self::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::Engine(E::MethodNotAllowed(_)) => StatusCode::METHOD_NOT_ALLOWED,
            // A bad value is found where SQLite cannot check it, or by Postgres: same answer.
            Self::Engine(E::Ir(IrError::DataException(_)) | E::Permission(_)) => StatusCode::OK,
            // As Hasura: an action's error is a GraphQL error, whatever the handler's status.
            Self::Engine(E::Action(_)) => StatusCode::OK,
            Self::Auth { status, .. } => {
                StatusCode::from_u16(*status).unwrap_or(StatusCode::UNAUTHORIZED)
            }
            Self::Engine(E::NoPermissions(_)) => StatusCode::FORBIDDEN,
            Self::Engine(E::Limit(l)) if l.kind == LimitKind::ResponseBytes => StatusCode::OK,
            Self::Engine(E::Persisted(PersistedError::Mismatch)) => StatusCode::BAD_REQUEST,
            Self::Engine(
                E::Validation(_)
                | E::Ir(_)
                | E::Limit(_)
                | E::Persisted(PersistedError::NotFound)
                | E::NotAllowed,
            ) => {
                if graphql_response {
                    StatusCode::BAD_REQUEST
                } else {
                    StatusCode::OK
                }
            }
            Self::Engine(E::Execute(e))
                if matches!(e.kind(), DbErrorKind::Unavailable | DbErrorKind::Busy) =>
            {
                StatusCode::SERVICE_UNAVAILABLE
            }
            Self::Engine(E::Overloaded(_)) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Engine(E::RateLimited(_)) => StatusCode::TOO_MANY_REQUESTS,
            Self::Engine(E::Execute(e))
                if e.kind() == DbErrorKind::TooComplex && graphql_response =>
            {
                StatusCode::BAD_REQUEST
            }
            Self::Engine(E::Execute(_)) => StatusCode::OK,
            Self::Engine(E::Unavailable(_)) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// Seconds a client should wait before retrying (`Retry-After`), when it should.
    pub fn retry_after(&self) -> Option<u64> {
        match self {
            Self::Engine(EngineError::RateLimited(r)) => {
                Some((r.wait.as_secs_f64().ceil() as u64).max(1))
            }
            _ if self.status(false) == StatusCode::SERVICE_UNAVAILABLE => Some(1),
            _ => None,
        }
    }

    /// The response body: `{"errors": […]}` (plus `"data": null` for execution errors).
    pub fn body(&self) -> Value {
        let code = self.code();
        let errors: Vec<Value> = match self {
            Self::Engine(EngineError::ParseFailed(list) | EngineError::Validation(list)) => list
                .iter()
                .map(|e| {
                    let mut v = json!({ "message": e.message, "extensions": { "code": code } });
                    if !e.locations.is_empty() {
                        v["locations"] = json!(e
                            .locations
                            .iter()
                            .map(|l| json!({"line": l.line, "column": l.column}))
                            .collect::<Vec<_>>());
                    }
                    v
                })
                .collect(),
            Self::Engine(EngineError::Ir(IrError::InvalidInput { path, pointer, .. })) => {
                vec![json!({
                    "message": self.to_string(),
                    "extensions": { "code": code, "path": path, "pointer": pointer }
                })]
            }
            // The handler's own `extensions`, verbatim (as Hasura passes them on).
            Self::Engine(EngineError::Action(a)) => {
                vec![json!({ "message": a.message, "extensions": a.extensions })]
            }
            Self::Engine(EngineError::Execute(ExecuteError::Constraint(v))) => {
                let mut ext = json!({ "code": code });
                if let Some(c) = &v.constraint {
                    ext["constraint"] = json!(c);
                }
                if let Some(t) = &v.table {
                    ext["table"] = json!(t);
                }
                if !v.columns.is_empty() {
                    ext["columns"] = json!(v.columns);
                }
                vec![json!({ "message": v.message, "extensions": ext })]
            }
            Self::Engine(e) => {
                vec![json!({ "message": engine_message(e), "extensions": { "code": code } })]
            }
            other => vec![json!({ "message": other.to_string(), "extensions": { "code": code } })],
        };
        if self.is_request_error() {
            json!({ "errors": errors })
        } else {
            json!({ "data": null, "errors": errors })
        }
    }
}

/// The stable code of an engine error.
pub(crate) fn engine_code(e: &EngineError) -> &'static str {
    use EngineError as E;
    match e {
        E::ParseFailed(_) | E::Shape(_) => "parse-failed",
        E::Validation(_) => "validation-failed",
        E::MethodNotAllowed(_) => "method-not-allowed",
        E::Ir(IrError::Validation(_)) => "validation-failed",
        E::Ir(IrError::NotSupported(_)) => "not-supported",
        E::Ir(IrError::InvalidInput { .. }) => "validation-failed",
        E::Ir(IrError::DataException(_)) => "data-exception",
        E::Ir(IrError::MissingSession(_)) => "access-denied",
        E::Ir(IrError::MixedActions) => "validation-failed",
        // The label counted; the body has the handler's own code.
        E::Action(_) => "action-webhook-error",
        E::Permission(_) => "permission-error",
        E::NoPermissions(_) => "access-denied",
        E::Limit(l) => limit_code(l.kind),
        E::Overloaded(_) => "overloaded",
        E::RateLimited(_) => "rate-limited",
        // Apollo's clients look for this code to send the document.
        E::Persisted(PersistedError::NotFound) => "PERSISTED_QUERY_NOT_FOUND",
        E::Persisted(PersistedError::Mismatch) => "parse-failed",
        E::NotAllowed => "validation-failed",
        E::Unavailable(_) => "unexpected",
        E::Execute(e) => match e.kind() {
            DbErrorKind::DataException => "data-exception",
            DbErrorKind::InvalidEscape => "bad-request",
            DbErrorKind::ConstraintViolation => "constraint-violation",
            DbErrorKind::Unavailable => "database-unavailable",
            DbErrorKind::TooComplex => "validation-failed",
            DbErrorKind::Timeout => "timeout",
            DbErrorKind::Busy => "overloaded",
            DbErrorKind::Conflict | DbErrorKind::Other => "unexpected",
        },
    }
}

/// An execution result for an error met after the operation started (a live
/// query's poll): `{"data": null, "errors": [{message, extensions: {code}}]}`.
pub(crate) fn execution_error_body(e: &EngineError) -> Value {
    json!({
        "data": null,
        "errors": [{ "message": engine_message(e), "extensions": { "code": engine_code(e) } }]
    })
}

/// What a client is told of an engine error. A statement the database could not
/// compile for its size is described, not quoted: the database's own words name
/// parts of the statement, which holds other roles' permission rules.
fn engine_message(e: &EngineError) -> String {
    match e {
        EngineError::Execute(x) if x.kind() == DbErrorKind::TooComplex => {
            "the query is too large or too deeply nested for the database to run; send a smaller one"
                .to_owned()
        }
        other => other.to_string(),
    }
}

/// The stable code of each limit.
fn limit_code(kind: LimitKind) -> &'static str {
    match kind {
        LimitKind::Depth => "depth-limit-exceeded",
        LimitKind::Nodes => "node-limit-exceeded",
        LimitKind::RootFields => "root-field-limit-exceeded",
        LimitKind::Cost => "cost-limit-exceeded",
        LimitKind::Batch => "batch-limit-exceeded",
        LimitKind::ResponseBytes | LimitKind::Introspection => "response-too-large",
        LimitKind::Subscriptions => "subscription-limit-exceeded",
        LimitKind::LiveMemory => "subscription-memory-exceeded",
    }
}
