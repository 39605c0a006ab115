//! Hasura's cache API, admin only: `POST /pro/cache/clear` drops every kept
//! `@cached` answer, or one (`?key=`, an `X-Hasura-Query-Cache-Key`), or a family
//! (`?family=`, an `X-Hasura-Query-Family-Cache-Key`); `GET /pro/cache/metrics`
//! says what the cache holds and how it served.

use crate::state::{AppState, Peer};
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use grafton_engine::response_cache::key::from_hex;
use serde_json::json;
use std::collections::HashMap;

/// Adds the cache API's routes.
pub(crate) fn routes(router: Router<AppState>) -> Router<AppState> {
    router
        .route("/pro/cache/clear", post(clear))
        .route("/pro/cache/metrics", get(metrics))
}

/// Refused unless the caller is admin (Hasura's answer).
async fn admin(state: &AppState, headers: &HeaderMap, peer: Option<Peer>) -> Option<Response> {
    match crate::caller::caller(&state.auth, headers, peer).await {
        Ok(caller) if caller.role.is_none() => None,
        Ok(_) => {
            let body = json!({"code": "access-denied", "error": "restricted access : admin only", "path": "$"});
            Some((StatusCode::BAD_REQUEST, Json(body)).into_response())
        }
        Err(e) => Some((e.status(false), e.to_string()).into_response()),
    }
}

async fn clear(
    State(state): State<AppState>,
    peer: Option<Extension<Peer>>,
    headers: HeaderMap,
    Query(params): Query<HashMap<String, String>>,
) -> Response {
    if let Some(refused) = admin(&state, &headers, peer.map(|Extension(p)| p)).await {
        return refused;
    }
    let cache = state.engine.response_cache();
    let bad = |what: &str| {
        let body = json!({"code": "bad-request", "error": format!("'{what}' is not a cache key"), "path": "$"});
        (StatusCode::BAD_REQUEST, Json(body)).into_response()
    };
    // Other instances' memory hears of any clear as "anything changed".
    let cleared = match (params.get("key"), params.get("family")) {
        (Some(k), _) => match from_hex(k) {
            Some(key) => json!({"cleared": u8::from(cache.clear_key(&key))}),
            None => return bad(k),
        },
        (None, Some(f)) => match from_hex(f) {
            Some(family) => {
                cache.clear_family(&family);
                json!({"cleared": "family"})
            }
            None => return bad(f),
        },
        (None, None) => {
            cache.clear();
            json!({"cleared": "all"})
        }
    };
    state.engine.announce_everything_changed();
    Json(json!({"message": "success", "result": cleared})).into_response()
}

async fn metrics(
    State(state): State<AppState>,
    peer: Option<Extension<Peer>>,
    headers: HeaderMap,
) -> Response {
    if let Some(refused) = admin(&state, &headers, peer.map(|Extension(p)| p)).await {
        return refused;
    }
    let (entries, bytes) = state.engine.response_cache().usage();
    let m = &state.engine.metrics().response_cache;
    Json(json!({
        "entries": entries,
        "bytes": bytes,
        "hits": m.hits.get(),
        "misses": m.misses.get(),
        "invalidations": m.invalidations.get(),
        "evictions": m.evictions.get(),
    }))
    .into_response()
}
