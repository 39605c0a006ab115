//! JWT mode: find the token in the request, verify it, and turn its Hasura claims into a
//! session.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use headers::{Cookie, HeaderMapExt};
use http::HeaderMap;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Map, Value};

use crate::config::{ClaimsFormat, ClaimsLocation, JwtConfig, KeySpec, TokenSource};
use crate::error::{AuthError, ConfigError};
use crate::jsonpath;
use crate::jwks::RemoteJwks;
use crate::keys::{self, KeySet};
use crate::session::{self, Session};

mod claims;
use claims::{hasura_members, session_from_claims};

const ALLOWED_ROLES: &str = "x-hasura-allowed-roles";
const DEFAULT_ROLE: &str = "x-hasura-default-role";

/// Where the verification keys live.
enum Keys {
    /// Known at start-up: an inline key or a local JWKS file.
    Fixed(Arc<KeySet>),
    /// Fetched and cached.
    Remote(RemoteJwks),
}

/// A configured JWT verifier.
pub(crate) struct JwtAuth {
    keys: Keys,
    required_alg: Option<Algorithm>,
    audience: Option<Vec<String>>,
    issuer: Option<String>,
    allowed_skew: u64,
    claims: ClaimsLocation,
    format: ClaimsFormat,
    source: TokenSource,
}

/// The parts of a token's header that choose the key.
struct TokenHeader {
    alg: Algorithm,
    kid: Option<String>,
}

impl JwtAuth {
    /// Builds the verifier, loading a local JWKS file now and fetching a remote one once
    /// (a failed fetch is retried by requests, not fatal).
    pub async fn new(config: JwtConfig) -> Result<JwtAuth, ConfigError> {
        let keys = match config.keys {
            KeySpec::Inline { alg, key } => Keys::Fixed(Arc::new(KeySet::inline(alg, key))),
            KeySpec::File(path) => {
                let file_error = |reason: String| ConfigError::JwksFile {
                    path: path.display().to_string(),
                    reason,
                };
                let body = std::fs::read(&path).map_err(|e| file_error(e.to_string()))?;
                Keys::Fixed(Arc::new(keys::parse_jwks(&body).map_err(file_error)?))
            }
            KeySpec::Remote(url) => {
                let remote = RemoteJwks::new(url)?;
                remote.prefetch().await;
                Keys::Remote(remote)
            }
        };
        Ok(JwtAuth {
            keys,
            required_alg: config.required_alg,
            audience: config.audience,
            issuer: config.issuer,
            allowed_skew: config.allowed_skew,
            claims: config.claims,
            format: config.format,
            source: config.source,
        })
    }

    /// The `issuer` the secret requires, if any.
    pub fn issuer(&self) -> Option<&str> {
        self.issuer.as_deref()
    }

    /// The token the request carries, if any. An `Authorization` header that is not
    /// `Bearer <token>` is an error, as in Hasura.
    pub fn token(&self, headers: &HeaderMap) -> Result<Option<String>, AuthError> {
        match &self.source {
            TokenSource::Authorization => {
                let Some(value) = headers.get(http::header::AUTHORIZATION) else {
                    return Ok(None);
                };
                let text = String::from_utf8_lossy(value.as_bytes());
                let mut words = text.split_ascii_whitespace();
                match (words.next(), words.next(), words.next()) {
                    (Some(scheme), Some(token), None) if scheme.eq_ignore_ascii_case("bearer") => {
                        Ok(Some(token.to_string()))
                    }
                    _ => Err(AuthError::invalid_jwt(
                        "Malformed Authorization header: expected \"Bearer <token>\"",
                    )),
                }
            }
            TokenSource::Cookie(name) => Ok(headers
                .typed_get::<Cookie>()
                .and_then(|cookies| cookies.get(name).map(unquote))
                .filter(|token| !token.is_empty())),
        }
    }

    /// What a request without a token is told when there is no unauthorized role.
    pub fn missing_token_message(&self) -> String {
        match &self.source {
            TokenSource::Authorization => {
                "Missing Authorization header in JWT authentication mode".to_string()
            }
            TokenSource::Cookie(name) => {
                format!("Missing cookie {name:?} in JWT authentication mode")
            }
        }
    }

    /// Verifies `token` and builds the session, honouring an `x-hasura-role` header.
    pub async fn session(&self, token: &str, headers: &HeaderMap) -> Result<Session, AuthError> {
        let payload = self.verify(token).await?;
        let claims = self.hasura_claims(&payload)?;
        let mut session = session_from_claims(claims, session::requested_role(headers))?;
        // A long-lived connection (a WebSocket) ends when its token does.
        session.expires = payload
            .get("exp")
            .and_then(Value::as_f64)
            .and_then(|exp| std::time::Duration::try_from_secs_f64(exp).ok())
            .and_then(|d| UNIX_EPOCH.checked_add(d));
        Ok(session)
    }

    /// Checks the signature and the registered claims; returns the payload.
    async fn verify(&self, token: &str) -> Result<Value, AuthError> {
        let header = read_header(token)?;
        if let Some(required) = self.required_alg.filter(|alg| *alg != header.alg) {
            return Err(not_verified(&format!(
                "the token is signed with {:?} but only {required:?} is accepted",
                header.alg
            )));
        }
        let keys = match &self.keys {
            Keys::Fixed(keys) => keys.clone(),
            Keys::Remote(remote) => remote.keys(header.kid.as_deref()).await?,
        };
        let mut candidates = keys.candidates(header.kid.as_deref()).peekable();
        if candidates.peek().is_none() {
            return Err(not_verified(if header.kid.is_some() {
                "no key in the JWKS has the token's kid"
            } else {
                "the JWKS has no keys"
            }));
        }
        let mut usable = candidates
            .filter(|key| key.algorithms.contains(&header.alg))
            .peekable();
        if usable.peek().is_none() {
            return Err(not_verified(&format!(
                "the token's algorithm {:?} is not the one its key is for",
                header.alg
            )));
        }
        let validation = self.validation(header.alg);
        let mut outcome = Err(not_verified("invalid signature"));
        for key in usable {
            match jsonwebtoken::decode::<Value>(token, &key.key, &validation) {
                Ok(data) => {
                    outcome = Ok(data.claims);
                    break;
                }
                Err(e) if matches!(e.kind(), ErrorKind::InvalidSignature) => continue,
                Err(e) => {
                    outcome = Err(verification_error(e.kind()));
                    break;
                }
            }
        }
        let payload = outcome?;
        self.check_issued_at(&payload)?;
        Ok(payload)
    }

    fn validation(&self, alg: Algorithm) -> Validation {
        let mut validation = Validation::new(alg);
        validation.leeway = self.allowed_skew;
        validation.validate_exp = true;
        validation.validate_nbf = true;
        // Hasura requires none of the registered claims; only `aud` when an audience is set.
        validation.required_spec_claims = HashSet::new();
        match &self.audience {
            Some(audience) => {
                validation.set_audience(audience);
                validation.required_spec_claims.insert("aud".to_string());
            }
            None => validation.validate_aud = false,
        }
        if let Some(issuer) = &self.issuer {
            validation.set_issuer(&[issuer]);
        }
        validation
    }

    /// Rejects a token issued in the future (beyond the allowed skew), as Hasura does.
    fn check_issued_at(&self, payload: &Value) -> Result<(), AuthError> {
        let Some(iat) = payload.get("iat") else {
            return Ok(());
        };
        let iat = iat
            .as_f64()
            .ok_or_else(|| not_verified("the iat claim is not a number"))?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        if iat > now + self.allowed_skew as f64 {
            return Err(not_verified("the token is issued in the future (iat)"));
        }
        Ok(())
    }

    /// The `x-hasura-*` claims, names lower-cased.
    fn hasura_claims(&self, payload: &Value) -> Result<Map<String, Value>, AuthError> {
        let (found, missing, place) = match &self.claims {
            ClaimsLocation::Map(map) => return map.claims(payload),
            ClaimsLocation::Namespace(namespace) => (
                payload.get(namespace),
                format!("claims key: '{namespace}' not found"),
                format!("claims key '{namespace}'"),
            ),
            ClaimsLocation::Path(steps) => {
                let path = jsonpath::display(steps);
                (
                    jsonpath::lookup(payload, steps),
                    format!("claims not found at claims_namespace_path: '{path}'"),
                    format!("claims at claims_namespace_path '{path}'"),
                )
            }
        };
        let found = found.ok_or_else(|| AuthError::invalid_jwt(missing))?;
        let object = match (self.format, found) {
            (ClaimsFormat::Json, Value::Object(object)) => object.clone(),
            (ClaimsFormat::Json, _) => {
                return Err(AuthError::invalid_jwt(format!(
                    "the {place} are not a JSON object (claims_format is json)"
                )))
            }
            (ClaimsFormat::StringifiedJson, found) => match found
                .as_str()
                .and_then(|text| serde_json::from_str::<Value>(text).ok())
            {
                Some(Value::Object(object)) => object,
                _ => {
                    return Err(AuthError::invalid_jwt(format!(
                        "the {place} are not a string holding a JSON object (claims_format is stringified_json)"
                    )))
                }
            },
        };
        hasura_members(object)
    }
}

/// A JWT rejection that says which check failed.
fn not_verified(what: &str) -> AuthError {
    AuthError::invalid_jwt(format!("Could not verify JWT: {what}"))
}

fn malformed(what: &str) -> AuthError {
    AuthError::invalid_jwt(format!("Could not verify JWT: malformed token ({what})"))
}

/// Reads the token's header without trusting it: only to pick the algorithm and key.
fn read_header(token: &str) -> Result<TokenHeader, AuthError> {
    let parts: Vec<&str> = token.split('.').collect();
    let [header, _, _] = parts.as_slice() else {
        return Err(malformed("a JWT has three parts separated by dots"));
    };
    let bytes = URL_SAFE_NO_PAD
        .decode(header)
        .map_err(|_| malformed("the header is not base64url"))?;
    let header: Value =
        serde_json::from_slice(&bytes).map_err(|_| malformed("the header is not JSON"))?;
    let alg = header
        .get("alg")
        .and_then(Value::as_str)
        .ok_or_else(|| malformed("the header has no alg"))?;
    if alg.eq_ignore_ascii_case("none") {
        return Err(not_verified(
            "unsigned tokens (alg \"none\") are not accepted",
        ));
    }
    let alg = alg
        .parse::<Algorithm>()
        .map_err(|_| not_verified("the token's algorithm is not supported"))?;
    let kid = match header.get("kid") {
        None | Some(Value::Null) => None,
        Some(Value::String(kid)) => Some(kid.clone()),
        Some(_) => return Err(malformed("the header's kid is not a string")),
    };
    Ok(TokenHeader { alg, kid })
}

/// What a failed `jsonwebtoken::decode` means, for the client.
fn verification_error(kind: &ErrorKind) -> AuthError {
    match kind {
        ErrorKind::InvalidSignature => not_verified("invalid signature"),
        ErrorKind::ExpiredSignature => not_verified("the token has expired (exp)"),
        ErrorKind::ImmatureSignature => not_verified("the token is not valid yet (nbf)"),
        ErrorKind::InvalidIssuer => {
            not_verified("the token's issuer (iss) is not the configured one")
        }
        ErrorKind::InvalidAudience => {
            not_verified("the token's audience (aud) is not the configured one")
        }
        ErrorKind::MissingRequiredClaim(claim) => {
            not_verified(&format!("the token has no {claim} claim"))
        }
        ErrorKind::InvalidClaimFormat(claim) => {
            not_verified(&format!("the token's {claim} claim is malformed"))
        }
        ErrorKind::InvalidAlgorithm => not_verified("the token's algorithm is not accepted"),
        ErrorKind::Base64(_) => malformed("a part is not base64url"),
        ErrorKind::Json(_) => malformed("the payload is not a JSON object"),
        ErrorKind::Utf8(_) => malformed("a part is not UTF-8"),
        ErrorKind::InvalidToken => malformed("not a JWT"),
        ErrorKind::InvalidRsaKey(_)
        | ErrorKind::InvalidEcdsaKey
        | ErrorKind::InvalidEddsaKey
        | ErrorKind::InvalidKeyFormat => not_verified("the verification key cannot be used"),
        _ => not_verified("verification failed"),
    }
}

/// A cookie value, without the double quotes RFC 6265 allows around it.
fn unquote(value: &str) -> String {
    value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or(value)
        .to_string()
}
