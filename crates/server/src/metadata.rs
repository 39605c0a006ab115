//! `POST /v1/metadata`, `/v2/query` (`run_sql`) and the older `/v1/query` (admin
//! only): the caller checked, the body read, and the command handed to
//! `grafton_metadata`, whose refusals (Hasura's `{path, error, code}`) get their
//! HTTP status here: 409 for a stale `resource_version`, 413 past the body cap,
//! 500 when the store failed, 400 for the rest, as Hasura answers.

use crate::state::{AppState, Peer};
use axum::extract::Request;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use grafton_metadata::Refusal;
use serde_json::Value;

/// The largest metadata request: a whole project's metadata in one
/// `replace_metadata`.
const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

fn respond(refusal: &Refusal) -> Response {
    let status = match refusal.code {
        _ if refusal.server_fault => StatusCode::INTERNAL_SERVER_ERROR,
        "conflict" => StatusCode::CONFLICT,
        "request-too-large" => StatusCode::PAYLOAD_TOO_LARGE,
        _ => StatusCode::BAD_REQUEST,
    };
    (status, Json(refusal.body())).into_response()
}

/// Which API a request is to.
#[derive(Clone, Copy)]
enum Api {
    Metadata,
    Query,
    LegacyQuery,
    Explain,
}

/// `POST /v1/metadata`.
pub(crate) async fn handle(
    state: State<AppState>,
    peer: Option<Extension<Peer>>,
    headers: HeaderMap,
    request: Request,
) -> Response {
    serve(state, peer, headers, request, Api::Metadata).await
}

/// `POST /v2/query`.
pub(crate) async fn query(
    state: State<AppState>,
    peer: Option<Extension<Peer>>,
    headers: HeaderMap,
    request: Request,
) -> Response {
    serve(state, peer, headers, request, Api::Query).await
}

/// `POST /v1/query`.
pub(crate) async fn legacy_query(
    state: State<AppState>,
    peer: Option<Extension<Peer>>,
    headers: HeaderMap,
    request: Request,
) -> Response {
    serve(state, peer, headers, request, Api::LegacyQuery).await
}

/// `POST /v1/graphql/explain`.
pub(crate) async fn explain(
    state: State<AppState>,
    peer: Option<Extension<Peer>>,
    headers: HeaderMap,
    request: Request,
) -> Response {
    serve(state, peer, headers, request, Api::Explain).await
}

async fn serve(
    State(state): State<AppState>,
    peer: Option<Extension<Peer>>,
    headers: HeaderMap,
    request: Request,
    api: Api,
) -> Response {
    let peer = peer.map(|Extension(p)| p);
    let caller = match crate::caller::caller(&state.auth, &headers, peer).await {
        Ok(caller) => caller,
        Err(e) => {
            let body = serde_json::json!({"code": e.code(), "error": e.to_string(), "path": "$"});
            return (e.status(false), Json(body)).into_response();
        }
    };
    // Read once the caller is known, within its own cap (a whole project's metadata
    // is larger than a query), as JSON whatever its content type says, as Hasura
    // reads it (`curl -d` sends a form's type).
    let bytes = match axum::body::to_bytes(request.into_body(), MAX_BODY_BYTES).await {
        Ok(bytes) => bytes,
        Err(_) => {
            let error = format!("the body is larger than {MAX_BODY_BYTES} bytes, or was cut off");
            return respond(&Refusal::new("request-too-large", error, "$"));
        }
    };
    let body: Value = match serde_json::from_slice(&bytes) {
        Ok(body) => body,
        Err(e) => return respond(&Refusal::new("invalid-json", e.to_string(), "$")),
    };
    // Hasura reads the body before it checks the caller, and answers 400.
    if caller.role.is_some() {
        return respond(&Refusal::new(
            "access-denied",
            "restricted access : admin only",
            "$.args",
        ));
    }
    let metadata = &state.ops.metadata;
    let answer = match api {
        Api::Metadata => metadata.command(&body).await,
        Api::Query => metadata.query(&body).await,
        Api::LegacyQuery => metadata.legacy_query(&body).await,
        Api::Explain => explained(&state, body).await,
    };
    match answer {
        Ok(answer) => Json(answer).into_response(),
        Err(refusal) => respond(&refusal),
    }
}

/// Hasura's explain request `{query: {query, variables?, operationName?}, user?}`:
/// planned for the role and session in `user` (admin when it names none).
async fn explained(state: &AppState, body: Value) -> Result<Value, Refusal> {
    let mut body = body;
    let query = body
        .get_mut("query")
        .map(Value::take)
        .unwrap_or(Value::Null);
    let request = grafton_engine::GraphqlRequest::from_json(query)
        .map_err(|e| Refusal::new("parse-failed", e.to_string(), "$.query"))?;
    let mut vars = serde_json::Map::new();
    if let Some(user) = body.get("user").and_then(Value::as_object) {
        for (k, v) in user {
            vars.insert(k.to_ascii_lowercase(), v.clone());
        }
    }
    let role = (vars.get(grafton_auth::ROLE_VAR).and_then(Value::as_str))
        .filter(|r| *r != grafton_auth::ADMIN_ROLE)
        .map(str::to_owned);
    let caller = grafton_engine::Caller {
        role,
        vars,
        backend_only: false,
        ip: None,
        expires: None,
        traceparent: None,
        headers: Vec::new(),
        relay: false,
    };
    match state.engine.explain(&caller, &request).await {
        Ok(fields) => Ok(Value::Array(fields)),
        Err(e) => {
            let body = crate::error::execution_error_body(&e);
            let message = body["errors"][0]["message"].as_str().map(str::to_owned);
            let error = message.unwrap_or_else(|| e.to_string());
            Err(Refusal::new(
                crate::error::engine_code(&e),
                error,
                "$.query",
            ))
        }
    }
}
