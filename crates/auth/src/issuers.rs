//! Several JWT secrets (`HASURA_GRAPHQL_JWT_SECRETS`, or `--jwt-secret` repeated):
//! which one checks a request's token, as Hasura decides it. Each secret looks
//! for its token where its `header` says; a secret and a token found for it
//! match when the secret names no `issuer`, the token has no `iss`, or the two
//! are equal. Exactly one match is verified; none or several is a refusal.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use http::HeaderMap;
use serde_json::Value;

use crate::error::AuthError;
use crate::jwt::JwtAuth;

/// The secret that checks the request's token, and the token; `None` when the
/// request carries no token for any of them.
pub(crate) fn choose<'a>(
    jwts: &'a [JwtAuth],
    headers: &HeaderMap,
) -> Result<Option<(&'a JwtAuth, String)>, AuthError> {
    let mut found = Vec::new();
    for jwt in jwts {
        if let Some(token) = jwt.token(headers)? {
            found.push((jwt, token));
        }
    }
    if jwts.len() == 1 || found.is_empty() {
        return Ok(found.pop());
    }
    let mut matching: Vec<_> = found
        .into_iter()
        .filter(
            |(jwt, token)| match (jwt.issuer(), unverified_issuer(token)) {
                (Some(wanted), Some(iss)) => wanted == iss,
                _ => true,
            },
        )
        .collect();
    match matching.len() {
        0 => Err(AuthError::invalid_jwt(
            "Could not verify JWT: JWTNotInIssuer (no configured JWT secret has the token's issuer)",
        )),
        1 => Ok(matching.pop()),
        _ => Err(AuthError::invalid_jwt(
            "Could not verify JWT: Multiple JWTs found (more than one JWT secret accepts this token's issuer: give each an issuer)",
        )),
    }
}

/// What a request without a token for any secret is told.
pub(crate) fn missing_token_message(jwts: &[JwtAuth]) -> String {
    match jwts {
        [one] => one.missing_token_message(),
        _ => "Missing 'Authorization' or 'Cookie' header in JWT authentication mode".into(),
    }
}

/// The token's `iss`, read before any check: it only picks which secret checks it.
fn unverified_issuer(token: &str) -> Option<String> {
    let payload = token.split('.').nth(1)?;
    let bytes = URL_SAFE_NO_PAD.decode(payload).ok()?;
    let payload: Value = serde_json::from_slice(&bytes).ok()?;
    payload.get("iss")?.as_str().map(str::to_owned)
}
