//! Webhook mode (Hasura's `HASURA_GRAPHQL_AUTH_HOOK`): the request's headers (GET),
//! or `{"headers": …, "request": …}` (POST), go to the hook; a 200 whose JSON
//! object holds `X-Hasura-Role` and other `X-Hasura-*` variables admits the
//! request as that session, a 401 refuses it. `Cache-Control: max-age` or
//! `Expires` (keys of the answer, as Hasura reads them, or its headers) keeps the
//! session for that long, so a cached request costs no call. Every call is
//! bounded: a timeout, a byte cap on the answer, a cap on calls in flight, no
//! redirects; the hook's URL comes from the configuration only.

use std::str::FromStr;
use std::time::{Duration, Instant, SystemTime};

use http::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::error::{AuthError, ConfigError};
use crate::jwks::freshness;
use crate::session::{self, Session};

mod answer;
use answer::session_from_answer;

/// The webhook settings.
#[derive(Debug, Clone)]
pub struct AuthHook {
    /// The hook's URL (`http` or `https`).
    pub url: String,
    /// GET (the client's headers as headers) or POST (as a JSON body).
    pub mode: HookMode,
    /// POST mode: also send the GraphQL request (`request`), as Hasura does by default.
    pub send_request_body: bool,
    /// How long one call may take.
    pub timeout: Duration,
    /// Calls in flight at once; a request that finds none free within the timeout is
    /// refused.
    pub max_in_flight: usize,
    /// Sessions kept from answers that allow caching.
    pub cache_entries: usize,
}

impl AuthHook {
    /// A hook at `url` with Hasura's defaults (GET, request body sent in POST mode)
    /// and Grafton's bounds.
    pub fn new(url: impl Into<String>) -> AuthHook {
        AuthHook {
            url: url.into(),
            mode: HookMode::Get,
            send_request_body: true,
            timeout: Duration::from_secs(10),
            max_in_flight: 64,
            cache_entries: 10_000,
        }
    }
}

/// How the request reaches the hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookMode {
    /// `GET`, with the client's headers.
    Get,
    /// `POST`, with a JSON body.
    Post,
}

impl FromStr for HookMode {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text.trim().to_ascii_uppercase().as_str() {
            "GET" => Ok(HookMode::Get),
            "POST" => Ok(HookMode::Post),
            _ => Err(format!("auth hook mode {text:?}: expected GET or POST")),
        }
    }
}

/// Client headers Hasura never forwards (its `commonClientHeadersIgnored`): to an
/// auth hook, or to an action's handler.
pub const IGNORED_CLIENT_HEADERS: &[&str] = &[
    "content-length",
    "content-md5",
    "user-agent",
    "host",
    "origin",
    "referer",
    "accept",
    "accept-encoding",
    "accept-language",
    "accept-datetime",
    "cache-control",
    "connection",
    "dnt",
    "content-type",
];

/// The WebSocket handshake's own headers, never sent to the hook either.
const HANDSHAKE: &[&str] = &[
    "upgrade",
    "sec-websocket-key",
    "sec-websocket-version",
    "sec-websocket-extensions",
];

/// Headers that differ on every request and decide nothing: left out of the cache key.
const NOT_IN_KEY: &[&str] = &["x-request-id", "traceparent", "tracestate"];

/// The largest answer read from the hook.
const MAX_ANSWER_BYTES: usize = 64 * 1024;
/// The longest a session is kept, whatever the hook says.
const MAX_LIFETIME: Duration = Duration::from_secs(24 * 60 * 60);

#[derive(Clone)]
struct Cached {
    session: Session,
    until: Instant,
}

/// A configured hook, its HTTP client, its cache and its bound on calls.
pub(crate) struct Webhook {
    url: reqwest::Url,
    mode: HookMode,
    send_request_body: bool,
    timeout: Duration,
    client: reqwest::Client,
    slots: tokio::sync::Semaphore,
    /// Keyed by a SHA-256 of what was sent: no credential is kept as a key.
    cache: quick_cache::sync::Cache<[u8; 32], Cached>,
}

impl Webhook {
    pub(crate) fn new(hook: AuthHook) -> Result<Webhook, ConfigError> {
        let bad = |m: String| ConfigError::Hook(m);
        let url = reqwest::Url::parse(&hook.url)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https"))
            .ok_or_else(|| bad("the auth hook must be an http:// or https:// URL".into()))?;
        if hook.timeout.is_zero() || hook.max_in_flight == 0 {
            return Err(bad(
                "the auth hook's timeout and calls in flight must be positive".into(),
            ));
        }
        let client = reqwest::Client::builder()
            .timeout(hook.timeout)
            .connect_timeout(hook.timeout.min(Duration::from_secs(5)))
            .redirect(reqwest::redirect::Policy::none())
            .pool_max_idle_per_host(hook.max_in_flight)
            .user_agent(concat!("grafton/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ConfigError::HttpClient(e.to_string()))?;
        Ok(Webhook {
            url,
            mode: hook.mode,
            send_request_body: hook.send_request_body,
            timeout: hook.timeout,
            client,
            slots: tokio::sync::Semaphore::new(hook.max_in_flight),
            cache: quick_cache::sync::Cache::new(hook.cache_entries.max(1)),
        })
    }

    /// Whether the hook wants the GraphQL request (POST mode with the body sent).
    pub(crate) fn wants_request(&self) -> bool {
        self.mode == HookMode::Post && self.send_request_body
    }

    /// The session the hook gives the request with these headers (and, in POST
    /// mode, this GraphQL request).
    pub(crate) async fn session(
        &self,
        headers: &HeaderMap,
        request: Option<&Value>,
    ) -> Result<Session, AuthError> {
        let forwarded: Vec<(&HeaderName, &HeaderValue)> = headers
            .iter()
            .filter(|(name, _)| {
                let name = name.as_str();
                !IGNORED_CLIENT_HEADERS.contains(&name) && !HANDSHAKE.contains(&name)
            })
            .collect();
        let request = request.filter(|_| self.wants_request());
        let key = cache_key(self.mode, &forwarded, request);
        if let Some(hit) = self.cache.get(&key) {
            if hit.until > Instant::now() {
                return Ok(hit.session);
            }
            self.cache.remove(&key);
        }
        let (mut session, lifetime) = self.call(&forwarded, request, headers).await?;
        if let Some(lifetime) = lifetime.filter(|l| !l.is_zero()) {
            let lifetime = lifetime.min(MAX_LIFETIME);
            // As Hasura: a WebSocket authenticated by this answer ends when it expires.
            session.expires = Some(SystemTime::now() + lifetime);
            let until = Instant::now() + lifetime;
            self.cache.insert(
                key,
                Cached {
                    session: session.clone(),
                    until,
                },
            );
        }
        Ok(session)
    }

    async fn call(
        &self,
        forwarded: &[(&HeaderName, &HeaderValue)],
        request: Option<&Value>,
        headers: &HeaderMap,
    ) -> Result<(Session, Option<Duration>), AuthError> {
        let _slot = tokio::time::timeout(self.timeout, self.slots.acquire())
            .await
            .ok()
            .and_then(Result::ok)
            .ok_or_else(|| AuthError::webhook("too many auth hook calls in flight; try again"))?;
        let call = match self.mode {
            HookMode::Get => {
                let mut sent = HeaderMap::new();
                for (name, value) in forwarded {
                    sent.append((*name).clone(), (*value).clone());
                }
                self.client.get(self.url.clone()).headers(sent)
            }
            HookMode::Post => {
                let mut body = serde_json::json!({ "headers": header_object(headers) });
                if self.send_request_body {
                    body["request"] = request.cloned().unwrap_or(Value::Null);
                }
                self.client.post(self.url.clone()).json(&body)
            }
        };
        let mut response = call.send().await.map_err(|e| {
            tracing::warn!(error = %e.without_url(), "auth hook call failed");
            AuthError::webhook("webhook authentication request failed")
        })?;
        match response.status().as_u16() {
            200 => {}
            401 => {
                return Err(AuthError::access_denied(
                    "Authentication hook unauthorized this request",
                ))
            }
            status => {
                // The hook's body stays out of the answer and the log: it may hold
                // anything, secrets included.
                tracing::warn!(status, "auth hook answered neither 200 nor 401");
                return Err(AuthError::webhook(
                    "Invalid response from authorization hook",
                ));
            }
        }
        let mut body = Vec::new();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) if body.len() + chunk.len() <= MAX_ANSWER_BYTES => {
                    body.extend_from_slice(&chunk)
                }
                Ok(Some(_)) => {
                    return Err(invalid(&format!(
                        "the answer is larger than {MAX_ANSWER_BYTES} bytes"
                    )))
                }
                Ok(None) => break,
                Err(e) => {
                    tracing::warn!(error = %e.without_url(), "auth hook answer not read");
                    return Err(AuthError::webhook("webhook authentication request failed"));
                }
            }
        }
        let answer: Map<String, Value> = serde_json::from_slice(&body)
            .map_err(|_| invalid("the answer is not a JSON object"))?;
        let requested = session::requested_role(headers);
        let (session, lifetime_headers) = session_from_answer(answer, requested)?;
        let lifetime = freshness(&lifetime_headers, SystemTime::now())
            .or_else(|| freshness(response.headers(), SystemTime::now()));
        Ok((session, lifetime))
    }
}

pub(super) fn invalid(why: &str) -> AuthError {
    tracing::warn!("auth hook answer refused: {why}");
    AuthError::webhook(format!("Invalid response from authorization hook: {why}"))
}

/// The client's headers as the POST body's `headers` object (the last of a
/// repeated header wins, as in Hasura).
fn header_object(headers: &HeaderMap) -> Map<String, Value> {
    headers
        .iter()
        .map(|(name, value)| {
            let text = String::from_utf8_lossy(value.as_bytes()).into_owned();
            (name.as_str().to_owned(), Value::String(text))
        })
        .collect()
}

fn cache_key(
    mode: HookMode,
    forwarded: &[(&HeaderName, &HeaderValue)],
    request: Option<&Value>,
) -> [u8; 32] {
    let mut keyed: Vec<_> = forwarded
        .iter()
        .filter(|(name, _)| !NOT_IN_KEY.contains(&name.as_str()))
        .collect();
    keyed.sort_by(|a, b| (a.0.as_str(), a.1.as_bytes()).cmp(&(b.0.as_str(), b.1.as_bytes())));
    let mut hash = Sha256::new();
    hash.update([mode as u8]);
    for (name, value) in keyed {
        // Lengths first: no two header lists hash the same bytes.
        hash.update((name.as_str().len() as u64).to_le_bytes());
        hash.update(name.as_str());
        hash.update((value.len() as u64).to_le_bytes());
        hash.update(value.as_bytes());
    }
    if let Some(request) = request {
        hash.update(request.to_string());
    }
    hash.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cache_keys_ignore_tracing_headers_only() {
        let (a, b) = (
            HeaderName::from_static("authorization"),
            HeaderName::from_static("x-request-id"),
        );
        let (v1, v2) = (
            HeaderValue::from_static("Bearer 1"),
            HeaderValue::from_static("Bearer 2"),
        );
        let key = |pairs: &[(&HeaderName, &HeaderValue)]| cache_key(HookMode::Get, pairs, None);
        assert_eq!(key(&[(&a, &v1), (&b, &v1)]), key(&[(&a, &v1), (&b, &v2)]));
        assert_ne!(key(&[(&a, &v1)]), key(&[(&a, &v2)]));
        assert_ne!(
            key(&[(&a, &v1)]),
            cache_key(HookMode::Post, &[(&a, &v1)], None)
        );
        assert_ne!(
            key(&[(&a, &v1)]),
            cache_key(HookMode::Get, &[(&a, &v1)], Some(&json!({"query": "{a}"})))
        );
    }
}
