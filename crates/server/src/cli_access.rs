//! The flags of who may call: credentials (admin secret, JWTs, the auth hook, the
//! unauthorized role) and browser origins (CORS), and what they become.

use clap::Args;
use grafton_server::StartError;

/// Credentials and CORS.
#[derive(Args, Clone)]
pub(crate) struct AccessOptions {
    /// Requests carrying it in `x-hasura-admin-secret` (or `x-grafton-admin-secret`)
    /// are admin. Without it and without --jwt-secret every request is admin.
    #[arg(long, env = "GRAFTON_ADMIN_SECRET", hide_env_values = true)]
    pub(crate) admin_secret: Option<String>,
    /// Hasura's JWT config as JSON: {"type": "HS256", "key": "…"} or {"jwk_url": "…"},
    /// with claims_namespace, claims_namespace_path, claims_format, audience, issuer,
    /// allowed_skew, header.
    /// Repeat it for several issuers: the token's `iss` picks the secret whose
    /// `issuer` it is.
    #[arg(long, env = "GRAFTON_JWT_SECRET", hide_env_values = true)]
    pub(crate) jwt_secret: Vec<String>,
    /// Several JWT configs as one JSON array (Hasura's HASURA_GRAPHQL_JWT_SECRETS);
    /// the token's `iss` picks the one whose `issuer` it is.
    #[arg(long, env = "GRAFTON_JWT_SECRETS", hide_env_values = true)]
    pub(crate) jwt_secrets: Option<String>,
    /// Webhook auth (Hasura's HASURA_GRAPHQL_AUTH_HOOK): each request's headers go
    /// to this URL, whose answer gives its role and session variables. Needs
    /// --admin-secret. See README, "Authentication".
    #[arg(long, env = "GRAFTON_AUTH_HOOK", hide_env_values = true)]
    pub(crate) auth_hook: Option<String>,
    /// GET (the client's headers as headers) or POST (a JSON body with the headers
    /// and the GraphQL request) [default: GET].
    #[arg(long, env = "GRAFTON_AUTH_HOOK_MODE")]
    pub(crate) auth_hook_mode: Option<String>,
    /// POST mode: send the GraphQL request too (`false`: only the headers).
    #[arg(long, env = "GRAFTON_AUTH_HOOK_SEND_REQUEST_BODY", value_name = "BOOL",
          default_value_t = true, action = clap::ArgAction::Set)]
    pub(crate) auth_hook_send_request_body: bool,
    /// Seconds one call to the auth hook may take (it also bounds the wait for
    /// one of its 64 calls in flight); past it the request gets
    /// `auth-webhook-error`.
    #[arg(long, env = "GRAFTON_AUTH_HOOK_TIMEOUT", default_value_t = 10.0)]
    pub(crate) auth_hook_timeout: f64,
    /// The role of requests without credentials (else they get 401).
    #[arg(long, env = "GRAFTON_UNAUTHORIZED_ROLE")]
    pub(crate) unauthorized_role: Option<String>,
    /// Browser origins that may call the API, comma-separated: exact origins and
    /// wildcards such as `https://*.example.com` or `http://localhost:*`
    /// [default: * (every origin, as Hasura)]. See docs/deploy.md, "CORS".
    #[arg(long, env = "GRAFTON_CORS_DOMAIN")]
    pub(crate) cors_domain: Option<String>,
    /// No CORS headers at all (browsers then refuse other sites' pages), and no
    /// cookies read on WebSocket upgrades (unless --ws-read-cookie). Wins over
    /// --cors-domain, as in Hasura.
    #[arg(long, env = "GRAFTON_DISABLE_CORS")]
    pub(crate) disable_cors: bool,
    /// With --disable-cors, read cookies on WebSocket upgrades anyway.
    #[arg(long, env = "GRAFTON_WS_READ_COOKIE")]
    pub(crate) ws_read_cookie: bool,
}

impl AccessOptions {
    /// The authentication settings.
    pub(crate) fn auth(&self) -> Result<grafton_auth::AuthConfig, StartError> {
        if self.auth_hook.is_none() && self.auth_hook_mode.is_some() {
            tracing::warn!("--auth-hook-mode is ignored: no --auth-hook is set");
        }
        Ok(grafton_auth::AuthConfig {
            admin_secret: self.admin_secret.clone(),
            jwt_secrets: jwt_secrets(&self.jwt_secret, self.jwt_secrets.as_deref())?,
            unauthorized_role: self.unauthorized_role.clone(),
            auth_hook: match &self.auth_hook {
                None => None,
                Some(url) => Some(grafton_auth::AuthHook {
                    mode: self
                        .auth_hook_mode
                        .as_deref()
                        .unwrap_or("GET")
                        .parse()
                        .map_err(|message| StartError::Config {
                            path: "--auth-hook-mode".into(),
                            message,
                        })?,
                    send_request_body: self.auth_hook_send_request_body,
                    timeout: seconds(self.auth_hook_timeout, "--auth-hook-timeout")?,
                    ..grafton_auth::AuthHook::new(url.clone())
                }),
            },
            ..Default::default()
        })
    }

    /// Which browser origins may call.
    pub(crate) fn cors(&self) -> Result<grafton_server::cors::CorsPolicy, StartError> {
        if self.ws_read_cookie && !self.disable_cors {
            return Err(StartError::Config {
                path: "--ws-read-cookie".into(),
                message: "can only be used with --disable-cors (as in Hasura): with CORS on, a listed origin's cookies are read anyway".into(),
            });
        }
        if self.disable_cors && self.cors_domain.is_some() {
            tracing::warn!(
                "--disable-cors wins over --cors-domain (as in Hasura): no CORS headers are sent"
            );
        }
        Ok(match (&self.cors_domain, self.disable_cors) {
            (_, true) => grafton_server::cors::CorsPolicy::Disabled {
                ws_read_cookie: self.ws_read_cookie,
            },
            (Some(domains), false) => {
                grafton_server::cors::CorsPolicy::parse(domains).map_err(|message| {
                    StartError::Config {
                        path: "--cors-domain".into(),
                        message,
                    }
                })?
            }
            (None, false) => grafton_server::cors::CorsPolicy::AllowAll,
        })
    }
}

/// Every JWT config: each `--jwt-secret`, then each member of `--jwt-secrets`.
fn jwt_secrets(each: &[String], array: Option<&str>) -> Result<Vec<String>, StartError> {
    let mut all = each.to_vec();
    if let Some(text) = array {
        let bad = |message: String| StartError::Config {
            path: "--jwt-secrets (HASURA_GRAPHQL_JWT_SECRETS)".into(),
            message,
        };
        let list: Vec<serde_json::Value> = serde_json::from_str(text)
            .map_err(|e| bad(format!("not a JSON array of JWT configs: {e}")))?;
        if list.is_empty() {
            return Err(bad("the array is empty".into()));
        }
        all.extend(list.iter().map(serde_json::Value::to_string));
    }
    Ok(all)
}

/// A flag's positive number of seconds.
pub(crate) fn seconds(value: f64, flag: &str) -> Result<std::time::Duration, StartError> {
    std::time::Duration::try_from_secs_f64(value)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| StartError::Config {
            path: flag.into(),
            message: format!("{value} is not a positive number of seconds"),
        })
}
