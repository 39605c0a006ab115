//! The two error types: a request rejected ([`AuthError`]) and a configuration refused at
//! start-up ([`ConfigError`]).

/// Why a request was rejected. The message says which check failed; it never contains the
/// token or the secret that was sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct AuthError {
    /// The class of failure, which decides the error code and the HTTP status.
    pub kind: AuthErrorKind,
    /// What failed, for the client (Hasura puts it in `errors[].message`).
    pub message: String,
}

/// The class of an [`AuthError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AuthErrorKind {
    /// The JWT (or the keys to check it) failed: malformed, bad signature, expired, wrong
    /// issuer or audience, claims missing or invalid. Code `invalid-jwt`, HTTP 401.
    InvalidJwt,
    /// No credentials where they are required, or a wrong admin secret. Code
    /// `access-denied`, HTTP 401.
    AccessDenied,
    /// Authenticated, but the role asked for in `x-hasura-role` (or the token's default
    /// role) is not in the token's `x-hasura-allowed-roles`. Code `access-denied`, HTTP 403.
    RoleNotAllowed,
    /// The auth webhook failed: unreachable, too slow, or an answer that is neither a
    /// session nor a 401. Code `auth-webhook-error`, HTTP 500.
    Webhook,
}

impl AuthError {
    /// Hasura's error code for this failure: `"invalid-jwt"` or `"access-denied"`.
    pub fn code(&self) -> &'static str {
        match self.kind {
            AuthErrorKind::InvalidJwt => "invalid-jwt",
            AuthErrorKind::AccessDenied | AuthErrorKind::RoleNotAllowed => "access-denied",
            AuthErrorKind::Webhook => "auth-webhook-error",
        }
    }

    /// The HTTP status to answer with: 401, or 403 for a role outside the allowed roles.
    pub fn status(&self) -> u16 {
        match self.kind {
            AuthErrorKind::InvalidJwt | AuthErrorKind::AccessDenied => 401,
            AuthErrorKind::RoleNotAllowed => 403,
            AuthErrorKind::Webhook => 500,
        }
    }

    pub(crate) fn invalid_jwt(message: impl Into<String>) -> Self {
        AuthError {
            kind: AuthErrorKind::InvalidJwt,
            message: message.into(),
        }
    }

    pub(crate) fn access_denied(message: impl Into<String>) -> Self {
        AuthError {
            kind: AuthErrorKind::AccessDenied,
            message: message.into(),
        }
    }

    pub(crate) fn webhook(message: impl Into<String>) -> Self {
        AuthError {
            kind: AuthErrorKind::Webhook,
            message: message.into(),
        }
    }

    pub(crate) fn role_not_allowed(message: impl Into<String>) -> Self {
        AuthError {
            kind: AuthErrorKind::RoleNotAllowed,
            message: message.into(),
        }
    }
}

/// Why the authentication settings were refused at start-up. Messages name the setting
/// at fault and never include a key or a secret.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The admin secret is set but empty.
    #[error("the admin secret must not be empty")]
    EmptyAdminSecret,
    /// An unauthorized role was given where every request is admin anyway.
    #[error(
        "--unauthorized-role needs an admin secret or a JWT secret: without either, every request is admin"
    )]
    UnauthorizedRoleWithoutAuth,
    /// The unauthorized role is an empty string.
    #[error("the unauthorized role must not be empty")]
    EmptyUnauthorizedRole,
    /// The JWT secret is not the JSON object Hasura's `HASURA_GRAPHQL_JWT_SECRET` takes.
    #[error("the JWT secret is not valid JSON config: {0}")]
    JwtJson(String),
    /// The JWT secret parses but a setting in it is wrong.
    #[error("invalid JWT secret: {0}")]
    Jwt(String),
    /// The `key` of the JWT secret cannot be used with its `type`.
    #[error("invalid JWT secret key for {alg}: {reason}")]
    Key {
        /// The algorithm named by `type`.
        alg: String,
        /// What is wrong with the key.
        reason: String,
    },
    /// The local JWKS file named by `jwk_url` cannot be read or holds no usable key.
    #[error("cannot load the JWKS file {path}: {reason}")]
    JwksFile {
        /// The file's path.
        path: String,
        /// Why it cannot be used.
        reason: String,
    },
    /// The auth webhook's settings are wrong.
    #[error("auth hook: {0}")]
    Hook(String),
    /// The auth webhook is combined with a setting Hasura refuses beside it.
    #[error("{0}")]
    HookCombination(&'static str),
    /// The HTTP client for fetching a remote JWKS could not be built.
    #[error("cannot build the HTTP client for the JWKS: {0}")]
    HttpClient(String),
}
