//! Operational endpoints: `/healthz` (the process answers), `/readyz` (schema
//! loaded and database reachable), `GET /v1/version`, and Hasura's metadata API
//! for `reload_metadata` and `get_inconsistent_metadata` (admin only).

pub use crate::options::Apis;
pub use crate::state::Ops;
use crate::state::{AppState, Peer};
use axum::extract::rejection::JsonRejection;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use serde_json::{json, Value};

/// Adds the operational routes.
pub(crate) fn routes(router: Router<AppState>, metrics: bool, apis: Apis) -> Router<AppState> {
    let router = match metrics {
        true => router.route("/metrics", get(admin_metrics)),
        false => router,
    };
    let router = router
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/v1/version", get(version));
    match apis.metadata {
        true => router.route("/v1/metadata", post(metadata)),
        false => router,
    }
}

/// Alive: the process serves HTTP. Touches nothing else, so a slow database never
/// gets a healthy process restarted.
async fn healthz() -> &'static str {
    "OK"
}

/// Ready: the schema is loaded (it is before the port opens) and the database
/// answers; a load balancer sends traffic only while this is 200.
async fn readyz(State(state): State<AppState>) -> Response {
    if state
        .ops
        .draining
        .load(std::sync::atomic::Ordering::Relaxed)
    {
        return (StatusCode::SERVICE_UNAVAILABLE, "STOPPING").into_response();
    }
    match state.engine.database().ping().await {
        Ok(()) => (StatusCode::OK, "OK").into_response(),
        Err(e) => (StatusCode::SERVICE_UNAVAILABLE, format!("ERROR: {e}")).into_response(),
    }
}

/// The Prometheus text format's media type.
const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// `/metrics` on the main port: admin only, by `Authorization: Bearer <admin
/// secret>` (what Prometheus sends) or any admin credential.
async fn admin_metrics(
    State(state): State<AppState>,
    peer: Option<Extension<Peer>>,
    headers: HeaderMap,
) -> Response {
    if !state.auth.is_admin_bearer(&headers) {
        let peer = peer.map(|Extension(p)| p);
        match crate::caller::caller(&state.auth, &headers, peer).await {
            Ok(caller) if caller.role.is_none() => {}
            Ok(_) => return (StatusCode::FORBIDDEN, "metrics are for admin only").into_response(),
            Err(e) => return (e.status(false), e.to_string()).into_response(),
        }
    }
    metrics_text(&state.engine)
}

/// Every metric, read now.
pub(crate) fn metrics_text(engine: &crate::Engine) -> Response {
    let text = engine.render_metrics();
    ([(axum::http::header::CONTENT_TYPE, PROMETHEUS_TEXT)], text).into_response()
}

/// `--metrics-addr`: a listener of its own serving `/metrics` only, without
/// credentials (for a network only the scraper reaches).
pub(crate) async fn metrics_listener(
    addr: &str,
    engine: std::sync::Arc<crate::Engine>,
) -> Result<(std::net::SocketAddr, tokio::task::JoinHandle<()>), std::io::Error> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let app = Router::new().route(
        "/metrics",
        get(move || {
            let engine = engine.clone();
            async move { metrics_text(&engine) }
        }),
    );
    let handle = tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::warn!("metrics listener: {e}");
        }
    });
    Ok((bound, handle))
}

async fn version() -> Json<Value> {
    Json(json!({ "version": env!("CARGO_PKG_VERSION") }))
}

/// A metadata API error in Hasura's shape.
fn refuse(status: StatusCode, code: &str, error: impl Into<String>, path: &str) -> Response {
    let body = json!({ "code": code, "error": error.into(), "path": path });
    (status, Json(body)).into_response()
}

/// `POST /v1/metadata`: `{"type": "reload_metadata", "args": {}}` re-reads the
/// config, re-introspects the database and swaps the schema;
/// `get_inconsistent_metadata` lists what was left out. Admin only.
async fn metadata(
    State(state): State<AppState>,
    peer: Option<Extension<Peer>>,
    headers: HeaderMap,
    body: Result<Json<Value>, JsonRejection>,
) -> Response {
    let peer = peer.map(|Extension(p)| p);
    let caller = match crate::caller::caller(&state.auth, &headers, peer).await {
        Ok(caller) => caller,
        Err(e) => {
            let status = e.status(false);
            return refuse(status, e.code(), e.to_string(), "$");
        }
    };
    if caller.role.is_some() {
        return refuse(
            StatusCode::FORBIDDEN,
            "access-denied",
            "restricted access: admin only",
            "$",
        );
    }
    let body = match body {
        Ok(Json(body)) => body,
        Err(e) => return refuse(StatusCode::BAD_REQUEST, "invalid-json", e.body_text(), "$"),
    };
    match body.get("type").and_then(Value::as_str) {
        Some("reload_metadata") => {}
        Some("get_inconsistent_metadata") => {
            let schemas = state.engine.schemas();
            return Json(consistency(schemas.left_out())).into_response();
        }
        Some(other) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                "not-supported",
                format!("Grafton's metadata API serves 'reload_metadata' and 'get_inconsistent_metadata' only, not '{other}'; the rest of the metadata lives in the config file"),
                "$.type",
            )
        }
        None => {
            return refuse(
                StatusCode::BAD_REQUEST,
                "parse-failed",
                "the body needs a 'type' string",
                "$",
            )
        }
    }
    match state.ops.reloader.reload("reload_metadata").await {
        Ok(_) => {
            let mut answer = consistency(state.engine.schemas().left_out());
            answer["message"] = json!("success");
            if answer["is_consistent"] == json!(true) {
                answer
                    .as_object_mut()
                    .map(|o| o.remove("inconsistent_objects"));
            }
            Json(answer).into_response()
        }
        Err(e) => refuse(
            StatusCode::BAD_REQUEST,
            "reload-failed",
            format!("{e}; the previous schema is still served"),
            "$",
        ),
    }
}

/// Hasura's answer to `get_inconsistent_metadata`: whether everything is served,
/// and each object left out.
fn consistency(left_out: &[grafton_schema::inconsistent::Inconsistency]) -> Value {
    json!({
        "is_consistent": left_out.is_empty(),
        "inconsistent_objects": left_out.iter().map(|i| i.to_json()).collect::<Vec<_>>(),
    })
}
