//! The HTTP edge: GraphQL over HTTP on `/v1/graphql` and `/graphql`; the
//! operational endpoints are in [`crate::ops`].

use crate::caller::{caller, caller_with_request};
use crate::engine::{Answer, Engine, GraphqlRequest, Transport};
use crate::error::RequestError;
use crate::observe::Observed;
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{DefaultBodyLimit, FromRequest, Query, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::get;
use axum::Extension;
use axum::Router;
use grafton_auth::Authenticator;
use serde_json::{Map, Value};
use std::sync::Arc;
use tracing::Instrument;

pub use crate::options::HttpOptions;
use crate::respond::Style;
pub(crate) use crate::state::AppState;
pub use crate::state::Peer;

/// The router for an engine.
pub fn router(
    engine: Arc<Engine>,
    auth: Arc<Authenticator>,
    ops: crate::ops::Ops,
    options: &HttpOptions,
) -> Router {
    let limit = options.max_body_bytes;
    let router = match options.console {
        true => crate::console::routes(Router::new()),
        false => crate::console::disabled(Router::new()),
    };
    let metrics = ops.metrics;
    let router = crate::ops::routes(router, metrics, options.apis);
    let router = match options.apis.graphql {
        true => router
            .route(
                "/v1/graphql",
                get(graphql_get::<GRAPHQL>).post(graphql_post::<GRAPHQL>),
            )
            // Hasura's older endpoint: the same API, errors with their own status.
            .route(
                "/v1alpha1/graphql",
                get(graphql_get::<ALPHA>).post(graphql_post::<ALPHA>),
            )
            .route(
                "/graphql",
                get(graphql_get::<GRAPHQL>).post(graphql_post::<GRAPHQL>),
            )
            // The Relay API: the same roles, answered by their Relay schemas.
            .route(
                "/v1beta1/relay",
                get(graphql_get::<RELAY>).post(graphql_post::<RELAY>),
            ),
        false => router,
    };
    let router = router
        .layer(DefaultBodyLimit::max(limit))
        .layer(tower_http::timeout::RequestBodyTimeoutLayer::new(
            options.body_timeout,
        ))
        .with_state(AppState {
            engine,
            auth,
            limit,
            ws: options.ws,
            ops,
            observe: options.observe,
            cors: options.cors.clone(),
        });
    // Outermost: a preflight is answered before routing (which knows no OPTIONS).
    match options.cors.layer() {
        Some(cors) => router.layer(cors),
        None => router,
    }
}

/// The endpoint a handler serves: `/v1/graphql` (and `/graphql`), Hasura's older
/// `/v1alpha1/graphql`, or the Relay API's `/v1beta1/relay`.
const GRAPHQL: u8 = 0;
const ALPHA: u8 = 1;
const RELAY: u8 = 2;

/// A POST to the endpoint `API` names.
async fn graphql_post<const API: u8>(State(state): State<AppState>, request: Request) -> Response {
    let style = Style::of(request.headers(), API == ALPHA);
    let relay = API == RELAY;
    let mut observed = Observed::begin("http", request.headers());
    let span = observed.span.clone();
    let result = async {
        // Credentials, media type and a per-request rate limit first: a refused
        // caller never gets as far as the body (nothing buffered, nothing parsed).
        let peer = request.extensions().get::<Peer>().copied();
        // An auth hook in POST mode is sent the GraphQL request: read it first.
        let early = match state.auth.wants_request() {
            true => None,
            false => {
                let mut caller = caller(&state.auth, request.headers(), peer).await?;
                crate::caller::keep_headers(&state.engine, &mut caller, request.headers());
                caller.relay = relay;
                observed.caller(&caller);
                Some(caller)
            }
        };
        let content_type = request
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let media = content_type.split(';').next().unwrap_or("").trim();
        if !media.eq_ignore_ascii_case("application/json") {
            return Err(RequestError::UnsupportedMediaType(content_type.to_owned()));
        }
        let engine = &state.engine;
        let info = &mut observed.info;
        let answer = match early {
            Some(caller) => {
                let body = read_json(request, &state);
                engine.request(&caller, Transport::Post, body, info).await?
            }
            None => {
                let headers = request.headers().clone();
                let value = read_json(request, &state).await?;
                let mut caller =
                    caller_with_request(&state.auth, &headers, peer, Some(&value)).await?;
                crate::caller::keep_headers(&state.engine, &mut caller, &headers);
                caller.relay = relay;
                observed.caller(&caller);
                let body = std::future::ready(Ok::<_, RequestError>(value));
                let info = &mut observed.info;
                engine.request(&caller, Transport::Post, body, info).await?
            }
        };
        Ok(match answer {
            Answer::One(body) => body,
            Answer::Batch(answers) => batch(answers),
        })
    }
    .instrument(span)
    .await;
    observed.finish(&state, result, style)
}

/// The body, as JSON, within the size limit.
async fn read_json(request: Request, state: &AppState) -> Result<Value, RequestError> {
    let body = Bytes::from_request(request, state).await.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            RequestError::TooLarge(state.limit)
        } else {
            RequestError::BadRequest(e.body_text())
        }
    })?;
    serde_json::from_slice(&body).map_err(|e| RequestError::InvalidJson(e.to_string()))
}

/// A batch's answer: the array of its elements' answers, in order; an element
/// that failed answers its error.
fn batch(answers: Vec<Result<String, grafton_engine::EngineError>>) -> String {
    let mut out = String::from("[");
    for (i, answer) in answers.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match answer.map_err(RequestError::from) {
            Ok(body) => out.push_str(&body),
            Err(e) => out.push_str(&e.body().to_string()),
        }
    }
    out.push(']');
    out
}

/// A GET to the endpoint `API` names: a WebSocket upgrade or a query.
async fn graphql_get<const API: u8>(
    State(state): State<AppState>,
    peer: Option<Extension<Peer>>,
    slot: Option<Extension<crate::listen::Slot>>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
    headers: HeaderMap,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Response {
    if let Ok(upgrade) = upgrade {
        let peer = peer.map(|Extension(p)| p);
        let slot = slot.map(|Extension(s)| s);
        return crate::ws::upgrade(state, upgrade, headers, peer, slot, API == RELAY);
    }
    let style = Style::of(&headers, API == ALPHA);
    let mut observed = Observed::begin("http", &headers);
    let span = observed.span.clone();
    let result = async {
        let peer = peer.map(|Extension(p)| p);
        let mut caller = caller(&state.auth, &headers, peer).await?;
        crate::caller::keep_headers(&state.engine, &mut caller, &headers);
        caller.relay = API == RELAY;
        observed.caller(&caller);
        let Query(pairs) = query.map_err(|e| RequestError::BadRequest(e.body_text()))?;
        let mut object = Map::new();
        for (k, v) in pairs {
            let value = match k.as_str() {
                "variables" | "extensions" if !v.is_empty() => serde_json::from_str(&v)
                    .map_err(|e| RequestError::BadRequest(format!("invalid JSON in '{k}': {e}")))?,
                _ => Value::String(v),
            };
            object.insert(k, value);
        }
        let request = GraphqlRequest::from_json(Value::Object(object))
            .map_err(grafton_engine::EngineError::from)?;
        Ok(state
            .engine
            .execute(&request, Transport::Get, &caller, &mut observed.info)
            .await?)
    }
    .instrument(span)
    .await;
    observed.finish(&state, result, style)
}
