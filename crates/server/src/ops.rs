//! Operational endpoints: `/healthz` (the process answers), `/readyz` (schema
//! loaded and database reachable), `GET /v1/version`, `/metrics`, and the route of
//! Hasura's metadata API (`crate::metadata`).

pub use crate::options::Apis;
pub use crate::state::Ops;
use crate::state::{AppState, Peer};
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
    let router = crate::cache_api::routes(router)
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/v1/version", get(version));
    let router = match apis.config {
        true => router.route("/v1alpha1/config", get(config)),
        false => router,
    };
    match apis.metadata {
        // The metadata handlers read their bodies themselves, under their own cap.
        true => router
            .route("/v1/metadata", post(crate::metadata::handle))
            .route("/v2/query", post(crate::metadata::query))
            .route("/v1/query", post(crate::metadata::legacy_query))
            .route("/v1/graphql/explain", post(crate::metadata::explain)),
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

/// Hasura's `/v1alpha1/config` (what the CLI and console ask at start-up), for
/// admin: how the server authenticates, and no console assets directory.
async fn config(
    State(state): State<AppState>,
    peer: Option<Extension<Peer>>,
    headers: HeaderMap,
) -> Response {
    let peer = peer.map(|Extension(p)| p);
    match crate::caller::caller(&state.auth, &headers, peer).await {
        Ok(caller) if caller.role.is_none() => {}
        Ok(_) => {
            let body = json!({"code": "access-denied", "error": "restricted access : admin only", "path": "$"});
            return (StatusCode::BAD_REQUEST, Json(body)).into_response();
        }
        Err(e) => return (e.status(false), e.to_string()).into_response(),
    }
    let auth = state.auth.summary();
    Json(json!({
        "version": env!("CARGO_PKG_VERSION"),
        "is_admin_secret_set": auth.admin_secret,
        "is_auth_hook_set": auth.webhook,
        "is_jwt_set": auth.jwt,
        "is_allow_list_enabled": false,
        "console_assets_dir": null,
    }))
    .into_response()
}

async fn version() -> Json<Value> {
    Json(json!({ "version": env!("CARGO_PKG_VERSION") }))
}
