//! Authentication with Hasura's contract: a request's headers become a [`Session`] (a role
//! and `x-hasura-*` session variables) or an [`AuthError`].
//!
//! The modes, as in Hasura:
//! - **dev mode** (no admin secret, no JWT): every request is admin; `x-hasura-role` and
//!   `x-hasura-*` headers are honoured.
//! - **admin secret**: a request carrying `x-hasura-admin-secret` (or `x-grafton-admin-secret`,
//!   or Hasura's old `x-hasura-access-key`) equal to the secret is admin, headers honoured as in
//!   dev mode; a wrong secret is refused. Without the header: the unauthorized role if one is
//!   configured, else refused.
//! - **JWT** (`--jwt-secret`, Hasura's `HASURA_GRAPHQL_JWT_SECRET` JSON): a request without a
//!   valid admin secret header must carry a token (`Authorization: Bearer`, or a cookie), or
//!   gets the unauthorized role. The token's Hasura claims give the allowed roles, the default
//!   role and the session variables; `x-hasura-role` picks among the allowed roles. Several
//!   secrets are told apart by the token's issuer.
//! - **auth webhook** (`--auth-hook`): a request without the admin secret is sent to the
//!   hook, whose answer is its session (cached as the answer allows).
//!
//! Permissions (what a role may see) are not decided here.

#![warn(missing_docs)]

mod claims_map;
mod config;
mod error;
mod issuers;
mod jsonpath;
mod jwks;
mod jwt;
mod keys;
mod session;
mod webhook;

use std::collections::BTreeMap;
use std::fmt;

use http::HeaderMap;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

pub use error::{AuthError, AuthErrorKind, ConfigError};
pub use session::{Role, Session, ADMIN_ROLE, ROLE_VAR, VAR_PREFIX};
pub use webhook::{AuthHook, HookMode, IGNORED_CLIENT_HEADERS};

use jwt::JwtAuth;

/// Hasura's admin secret header.
pub const ADMIN_SECRET_HEADER: &str = "x-hasura-admin-secret";
/// Grafton's own name for the admin secret header.
pub const GRAFTON_ADMIN_SECRET_HEADER: &str = "x-grafton-admin-secret";
/// Hasura's deprecated name for the admin secret header, still accepted.
pub const ACCESS_KEY_HEADER: &str = "x-hasura-access-key";

/// The admin secret headers, in the order they are looked at; never session variables.
const SECRET_HEADERS: [&str; 3] = [
    ADMIN_SECRET_HEADER,
    GRAFTON_ADMIN_SECRET_HEADER,
    ACCESS_KEY_HEADER,
];

/// Which kinds of credentials a server takes (Hasura's `/v1alpha1/config`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuthSummary {
    /// An admin secret is set.
    pub admin_secret: bool,
    /// JWTs are checked.
    pub jwt: bool,
    /// An auth hook is called.
    pub webhook: bool,
}

/// The authentication settings, as given on the command line or in the environment.
#[derive(Clone, Default)]
pub struct AuthConfig {
    /// `--admin-secret` / `GRAFTON_ADMIN_SECRET`: the secret that makes a request admin.
    pub admin_secret: Option<String>,
    /// `--jwt-secret` / `GRAFTON_JWT_SECRET`: Hasura's JWT secret JSON, as text.
    pub jwt: Option<String>,
    /// More JWT secrets (`GRAFTON_JWT_SECRETS`, a repeated `--jwt-secret`): the
    /// token's issuer picks the one that checks it.
    pub jwt_secrets: Vec<String>,
    /// `--auth-hook` / `HASURA_GRAPHQL_AUTH_HOOK`: webhook mode.
    pub auth_hook: Option<AuthHook>,
    /// `--unauthorized-role`: the role of requests without credentials.
    pub unauthorized_role: Option<String>,
}

impl fmt::Debug for AuthConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthConfig")
            .field(
                "admin_secret",
                &self.admin_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("jwt", &self.jwt.as_ref().map(|_| "<redacted>"))
            .field("jwt_secrets", &self.jwt_secrets.len())
            .field("auth_hook", &self.auth_hook.as_ref().map(|h| h.mode))
            .field("unauthorized_role", &self.unauthorized_role)
            .finish()
    }
}

/// Turns request headers into sessions. Built once at start-up, shared by all requests.
pub struct Authenticator {
    /// SHA-256 of the admin secret: compared in constant time, length included.
    admin_secret: Option<[u8; 32]>,
    /// The JWT secrets: none, one, or several told apart by issuer.
    jwts: Vec<JwtAuth>,
    webhook: Option<webhook::Webhook>,
    unauthorized_role: Option<String>,
}

impl fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Authenticator")
            .field("admin_secret", &self.admin_secret.is_some())
            .field("jwts", &self.jwts.len())
            .field("webhook", &self.webhook.is_some())
            .field("unauthorized_role", &self.unauthorized_role)
            .finish()
    }
}

impl Authenticator {
    /// Checks the settings and prepares the keys: parses and validates the JWT secret, reads
    /// a local JWKS file, and tries a first fetch of a remote JWKS (a failure there is only
    /// logged: requests fetch again).
    pub async fn new(config: AuthConfig) -> Result<Authenticator, ConfigError> {
        let admin_secret = match config.admin_secret {
            Some(secret) if secret.is_empty() => return Err(ConfigError::EmptyAdminSecret),
            Some(secret) => Some(digest(secret.as_bytes())),
            None => None,
        };
        let mut jwts = Vec::new();
        for text in config.jwt.iter().chain(&config.jwt_secrets) {
            jwts.push(JwtAuth::new(config::parse(text)?).await?);
        }
        let webhook = match config.auth_hook {
            None => None,
            // As Hasura: the hook is the only way in besides the admin secret.
            Some(_) if !jwts.is_empty() => {
                return Err(ConfigError::HookCombination(
                    "an auth hook and a JWT secret cannot both be set",
                ))
            }
            Some(_) if admin_secret.is_none() => {
                return Err(ConfigError::HookCombination(
                    "an auth hook needs an admin secret (--admin-secret), as in Hasura",
                ))
            }
            Some(_) if config.unauthorized_role.is_some() => {
                return Err(ConfigError::HookCombination(
                    "--unauthorized-role is not allowed with an auth hook: the hook decides anonymous requests' role",
                ))
            }
            Some(hook) => Some(webhook::Webhook::new(hook)?),
        };
        match &config.unauthorized_role {
            Some(role) if role.is_empty() => return Err(ConfigError::EmptyUnauthorizedRole),
            Some(_) if admin_secret.is_none() && jwts.is_empty() => {
                return Err(ConfigError::UnauthorizedRoleWithoutAuth)
            }
            _ => {}
        }
        Ok(Authenticator {
            admin_secret,
            jwts,
            webhook,
            unauthorized_role: config.unauthorized_role,
        })
    }

    /// Which kinds of credentials are set up (never the credentials themselves).
    pub fn summary(&self) -> AuthSummary {
        AuthSummary {
            admin_secret: self.admin_secret.is_some(),
            jwt: !self.jwts.is_empty(),
            webhook: self.webhook.is_some(),
        }
    }

    /// No admin secret and no JWT: every request is admin.
    pub fn dev_mode(&self) -> bool {
        self.admin_secret.is_none() && self.jwts.is_empty() && self.webhook.is_none()
    }

    /// The session for a request, from its headers.
    pub async fn authenticate(&self, headers: &HeaderMap) -> Result<Session, AuthError> {
        self.authenticate_request(headers, None).await
    }

    /// Whether the auth hook wants the GraphQL request itself (POST mode): then it is
    /// read before authentication and passed to [`Self::authenticate_request`].
    pub fn wants_request(&self) -> bool {
        self.webhook
            .as_ref()
            .is_some_and(webhook::Webhook::wants_request)
    }

    /// The session for a request, from its headers and, for an auth hook in POST
    /// mode, its GraphQL request (the parsed body).
    pub async fn authenticate_request(
        &self,
        headers: &HeaderMap,
        request: Option<&serde_json::Value>,
    ) -> Result<Session, AuthError> {
        if self.dev_mode() {
            return Ok(admin_session(headers));
        }
        if let Some(sent) = SECRET_HEADERS.iter().find_map(|name| headers.get(*name)) {
            return if self.is_admin_secret(sent.as_bytes()) {
                Ok(admin_session(headers))
            } else {
                Err(AuthError::access_denied(format!(
                    "invalid {ADMIN_SECRET_HEADER}/{GRAFTON_ADMIN_SECRET_HEADER}"
                )))
            };
        }
        if let Some(hook) = &self.webhook {
            return hook.session(headers, request).await;
        }
        if self.jwts.is_empty() {
            return self.unauthorized(|| {
                format!(
                    "{ADMIN_SECRET_HEADER}/{GRAFTON_ADMIN_SECRET_HEADER} required, but not found"
                )
            });
        }
        match issuers::choose(&self.jwts, headers)? {
            Some((jwt, token)) => jwt.session(&token, headers).await,
            None => self.unauthorized(|| issuers::missing_token_message(&self.jwts)),
        }
    }

    /// Whether `Authorization: Bearer <token>` carries the admin secret: how a
    /// Prometheus scrape (`authorization: {credentials: …}`) proves it is admin.
    pub fn is_admin_bearer(&self, headers: &HeaderMap) -> bool {
        let Some(value) = headers.get(http::header::AUTHORIZATION) else {
            return false;
        };
        let bytes = value.as_bytes();
        let prefix = b"bearer ";
        bytes.len() > prefix.len()
            && bytes[..prefix.len()].eq_ignore_ascii_case(prefix)
            && self.is_admin_secret(&bytes[prefix.len()..])
    }

    fn is_admin_secret(&self, sent: &[u8]) -> bool {
        self.admin_secret
            .is_some_and(|secret| bool::from(secret.ct_eq(&digest(sent))))
    }

    /// The unauthorized role's session (no variables from headers), or a refusal.
    fn unauthorized(&self, message: impl FnOnce() -> String) -> Result<Session, AuthError> {
        match &self.unauthorized_role {
            Some(role) => Ok(Session::new(Role::from_name(role), BTreeMap::new())),
            None => Err(AuthError::access_denied(message())),
        }
    }
}

/// An admin's session: the `x-hasura-role` header's role if given, else admin; every
/// `x-hasura-*` header a session variable.
fn admin_session(headers: &HeaderMap) -> Session {
    let role = session::requested_role(headers).map_or(Role::Admin, |role| Role::from_name(&role));
    let mut session = Session::new(role, session::vars_from_headers(headers, &SECRET_HEADERS));
    session.backend_only = session::header_text(headers, session::BACKEND_ONLY_HEADER)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
    session
}

fn digest(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}
