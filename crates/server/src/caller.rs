//! Who is calling: a request's credentials made a [`Caller`] through the
//! authenticator (admin secret, JWT, auth hook, or the unauthorized role).

use crate::engine::Caller;
use crate::error::RequestError;
use crate::state::Peer;
use axum::http::HeaderMap;
use grafton_auth::{Authenticator, Role};
use serde_json::Value;

/// Who is calling, from the request's credentials (admin secret, JWT, or none).
pub(crate) async fn caller(
    auth: &Authenticator,
    headers: &HeaderMap,
    peer: Option<Peer>,
) -> Result<Caller, RequestError> {
    caller_with_request(auth, headers, peer, None).await
}

/// [`caller`], with the GraphQL request for an auth hook that is sent it.
pub(crate) async fn caller_with_request(
    auth: &Authenticator,
    headers: &HeaderMap,
    peer: Option<Peer>,
    request: Option<&Value>,
) -> Result<Caller, RequestError> {
    let session = auth
        .authenticate_request(headers, request)
        .await
        .map_err(|e| RequestError::Auth {
            code: e.code(),
            status: e.status(),
            message: e.message,
        })?;
    Ok(Caller {
        role: match session.role {
            Role::Admin => None,
            Role::Named(name) => Some(name),
        },
        vars: session
            .vars
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect(),
        backend_only: session.backend_only,
        ip: peer.map(|Peer(addr)| addr.ip()),
        expires: session.expires,
        traceparent: crate::telemetry::traceparent(headers),
        headers: Vec::new(),
        relay: false,
    })
}

/// The client's headers kept for the actions that forward them: copied only
/// when one served does (every request would pay for the copy otherwise).
pub(crate) fn keep_headers(
    engine: &grafton_engine::Engine,
    caller: &mut Caller,
    headers: &HeaderMap,
) {
    if engine.forwards_client_headers() {
        caller.headers = (headers.iter())
            .filter_map(|(n, v)| Some((n.as_str().to_owned(), v.to_str().ok()?.to_owned())))
            .collect();
    }
}
