//! `POST /v1/metadata` (admin only): the caller checked, the body read, and the
//! command handed to `grafton_metadata`, whose refusals (Hasura's `{path, error,
//! code}`) get their HTTP status here: 409 for a stale `resource_version`, 500
//! when the store failed, 400 for the rest, as Hasura answers.

use crate::state::{AppState, Peer};
use axum::extract::rejection::JsonRejection;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use grafton_metadata::Refusal;
use serde_json::Value;

fn respond(refusal: &Refusal) -> Response {
    let status = match refusal.code {
        _ if refusal.server_fault => StatusCode::INTERNAL_SERVER_ERROR,
        "conflict" => StatusCode::CONFLICT,
        _ => StatusCode::BAD_REQUEST,
    };
    (status, Json(refusal.body())).into_response()
}

/// `POST /v1/metadata`.
pub(crate) async fn handle(
    State(state): State<AppState>,
    peer: Option<Extension<Peer>>,
    headers: HeaderMap,
    body: Result<Json<Value>, JsonRejection>,
) -> Response {
    let peer = peer.map(|Extension(p)| p);
    let caller = match crate::caller::caller(&state.auth, &headers, peer).await {
        Ok(caller) => caller,
        Err(e) => {
            let body = serde_json::json!({"code": e.code(), "error": e.to_string(), "path": "$"});
            return (e.status(false), Json(body)).into_response();
        }
    };
    let body = match body {
        Ok(Json(body)) => body,
        Err(e) => return respond(&Refusal::new("invalid-json", e.body_text(), "$")),
    };
    // Hasura reads the body before it checks the caller, and answers 400.
    if caller.role.is_some() {
        return respond(&Refusal::new(
            "access-denied",
            "restricted access : admin only",
            "$.args",
        ));
    }
    match state.ops.metadata.command(&body).await {
        Ok(answer) => Json(answer).into_response(),
        Err(refusal) => respond(&refusal),
    }
}
