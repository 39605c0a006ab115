//! The answer to a GraphQL request over HTTP: its media type (what the client's
//! `Accept` prefers), status and headers, from the engine's result.

use crate::error::RequestError;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

const GRAPHQL_RESPONSE: &str = "application/graphql-response+json";

/// Whether the client prefers `application/graphql-response+json` (the spec's media
/// type) over `application/json`; no Accept header means `application/json`.
pub(crate) fn wants_graphql_response(headers: &HeaderMap) -> bool {
    let Some(accept) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    for part in accept.split(',') {
        let media = part.split(';').next().unwrap_or("").trim();
        if media.eq_ignore_ascii_case(GRAPHQL_RESPONSE) {
            return true;
        }
        if media.eq_ignore_ascii_case("application/json") {
            return false;
        }
    }
    false
}

/// How an endpoint answers: the media type the client prefers, and whether it is
/// Hasura's older `/v1alpha1/graphql`, whose errors keep their own status (400,
/// 500…) where `/v1/graphql` answers 200.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Style {
    /// `application/graphql-response+json` (request errors are 4xx).
    pub(crate) graphql_response: bool,
    /// `/v1alpha1/graphql`.
    pub(crate) alpha: bool,
}

impl Style {
    /// The style of a request with these headers at `/v1/graphql` (`alpha` false).
    pub(crate) fn of(headers: &HeaderMap, alpha: bool) -> Self {
        Style {
            graphql_response: wants_graphql_response(headers),
            alpha,
        }
    }

    /// The status `e` is answered with.
    fn status(self, e: &RequestError) -> StatusCode {
        match e.status(self.graphql_response || self.alpha) {
            // Hasura's v1alpha1 keeps each error's own status: 500 for what it
            // did not expect, 400 for the rest.
            StatusCode::OK if self.alpha => match e.code() {
                "unexpected" => StatusCode::INTERNAL_SERVER_ERROR,
                _ => StatusCode::BAD_REQUEST,
            },
            status => status,
        }
    }
}

pub(crate) fn respond(result: Result<String, RequestError>, style: Style) -> Response {
    let content_type = if style.graphql_response {
        HeaderValue::from_static("application/graphql-response+json; charset=utf-8")
    } else {
        HeaderValue::from_static("application/json; charset=utf-8")
    };
    let (status, body, retry_after) = match result {
        Ok(body) => (StatusCode::OK, body.into_bytes(), None),
        Err(e) => {
            if matches!(
                e,
                RequestError::Engine(grafton_engine::EngineError::Execute(_))
            ) {
                tracing::warn!(error = %e, "request failed in the database");
            }
            // Straight to bytes: `Value`'s Display goes through a formatter adapter.
            let body = serde_json::to_vec(&e.body()).unwrap_or_default();
            (style.status(&e), body, e.retry_after())
        }
    };
    let mut response = (status, body).into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, content_type);
    if status == StatusCode::METHOD_NOT_ALLOWED {
        response
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("POST"));
    }
    // Overloaded, rate-limited, or the database is away: tell clients when to come
    // back rather than hammer the server.
    if let Some(seconds) = retry_after {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    response
}
