//! A remote JWKS: fetched over HTTP(S), cached for as long as the response's
//! `Cache-Control` / `Expires` allow, refetched when stale or when a token names an unknown
//! `kid`, one fetch at a time.
//!
//! - No keys yet (start-up fetch failed, or none made): the request waits for a fetch; requests
//!   arriving meanwhile wait for that same fetch instead of starting their own.
//! - Keys fresh: used as they are.
//! - Keys stale: the first request to notice refetches them (inline); requests arriving
//!   meanwhile use the stale keys rather than wait. A failed refetch keeps the old keys and
//!   is not retried for [`RETRY_AFTER_FAILURE`].
//! - A token's `kid` not among the keys: refetch, at most once per [`UNKNOWN_KID_INTERVAL`]
//!   (tokens naming made-up kids cannot make us hammer the endpoint); a request arriving
//!   while a fetch is running waits for it and looks again.
//!
//! Freshness follows Hasura: `no-cache`, `no-store` or `must-revalidate` without `max-age`
//! mean "refresh every second"; `max-age` (else `s-maxage`) or `Expires` give the lifetime,
//! less the response's `Age`; with none of these the keys are kept until a token names an
//! unknown `kid`. A lifetime under [`MIN_LIFETIME`] counts as that.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use headers::{Age, CacheControl, Date, Expires, HeaderMapExt};
use http::HeaderMap;

use crate::error::{AuthError, ConfigError};
use crate::keys::{self, KeySet};

/// The shortest time fetched keys are considered fresh.
pub(crate) const MIN_LIFETIME: Duration = Duration::from_secs(1);
/// How long after a failed refetch stale keys are used before trying again.
pub(crate) const RETRY_AFTER_FAILURE: Duration = Duration::from_secs(10);
/// How long after a failed fetch, with no keys at all, requests fail without trying again.
const RETRY_WITHOUT_KEYS: Duration = Duration::from_secs(1);
/// The least time between two refetches caused by unknown `kid`s.
pub(crate) const UNKNOWN_KID_INTERVAL: Duration = Duration::from_secs(10);
/// The largest JWKS document accepted.
const MAX_BODY_BYTES: usize = 1024 * 1024;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// A JWKS endpoint and its cached keys.
pub(crate) struct RemoteJwks {
    url: reqwest::Url,
    client: reqwest::Client,
    state: Mutex<State>,
    /// Held while fetching: one fetch at a time.
    fetching: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct State {
    keys: Option<Arc<KeySet>>,
    /// When the keys go stale; `None` when the response set no lifetime.
    stale_at: Option<Instant>,
    last_failure: Option<Instant>,
    last_unknown_kid_fetch: Option<Instant>,
}

impl RemoteJwks {
    /// A JWKS at `url`, not fetched yet.
    pub fn new(url: reqwest::Url) -> Result<RemoteJwks, ConfigError> {
        let client = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(REQUEST_TIMEOUT)
            .user_agent(concat!("grafton/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ConfigError::HttpClient(e.to_string()))?;
        Ok(RemoteJwks {
            url,
            client,
            state: Mutex::new(State::default()),
            fetching: tokio::sync::Mutex::new(()),
        })
    }

    /// Fetches the keys once, at start-up; a failure is logged, not fatal: the first
    /// request tries again.
    pub async fn prefetch(&self) {
        let guard = self.fetching.lock().await;
        if self.fetch(&guard).await.is_err() {
            tracing::warn!(url = %self.url, "the JWKS could not be fetched at start-up; requests will try again");
        }
    }

    /// The keys to check a token naming `kid` against, fetching them when needed.
    pub async fn keys(&self, kid: Option<&str>) -> Result<Arc<KeySet>, AuthError> {
        let now = Instant::now();
        let (keys, stale, retry_ok) = {
            let state = self.state();
            let stale = state.stale_at.is_some_and(|at| now >= at);
            let retry_ok = state
                .last_failure
                .is_none_or(|at| now.duration_since(at) >= RETRY_AFTER_FAILURE);
            (state.keys.clone(), stale, retry_ok)
        };

        let Some(mut keys) = keys else {
            return self.first_keys().await;
        };

        let mut refetched = false;
        if stale && retry_ok {
            // Whoever gets the lock refetches; everyone else goes on with the stale keys.
            if let Ok(guard) = self.fetching.try_lock() {
                if self.state().stale_at.is_some_and(|at| Instant::now() >= at) {
                    // A failure keeps the stale keys (and is logged).
                    refetched = self.fetch(&guard).await.is_ok();
                }
                keys = self.current().unwrap_or(keys);
            }
        }

        if !refetched && !keys.knows(kid) {
            keys = self.refetch_for_unknown_kid().await.unwrap_or(keys);
        }
        Ok(keys)
    }

    /// With no keys yet: wait for a fetch (ours, or one already running).
    async fn first_keys(&self) -> Result<Arc<KeySet>, AuthError> {
        let guard = self.fetching.lock().await;
        if let Some(keys) = self.current() {
            return Ok(keys);
        }
        let recently_failed = self
            .state()
            .last_failure
            .is_some_and(|at| at.elapsed() < RETRY_WITHOUT_KEYS);
        if recently_failed {
            return Err(unavailable());
        }
        self.fetch(&guard).await.map_err(|()| unavailable())
    }

    /// A token names a `kid` the keys lack: refetch if allowed, or wait for a fetch that
    /// is running. `None` when no newer keys were obtained.
    async fn refetch_for_unknown_kid(&self) -> Option<Arc<KeySet>> {
        match self.fetching.try_lock() {
            Ok(guard) => {
                {
                    let mut state = self.state();
                    let now = Instant::now();
                    let allowed = state
                        .last_unknown_kid_fetch
                        .is_none_or(|at| now.duration_since(at) >= UNKNOWN_KID_INTERVAL);
                    if !allowed {
                        return None;
                    }
                    state.last_unknown_kid_fetch = Some(now);
                }
                self.fetch(&guard).await.ok()
            }
            Err(_) => {
                drop(self.fetching.lock().await);
                self.current()
            }
        }
    }

    /// Fetches the JWKS and stores the keys; the lock guard proves we are the only fetcher.
    async fn fetch(
        &self,
        _one_at_a_time: &tokio::sync::MutexGuard<'_, ()>,
    ) -> Result<Arc<KeySet>, ()> {
        match self.download().await {
            Ok((keys, lifetime)) => {
                let keys = Arc::new(keys);
                let mut state = self.state();
                state.keys = Some(keys.clone());
                state.stale_at = lifetime.map(|l| Instant::now() + l.max(MIN_LIFETIME));
                state.last_failure = None;
                tracing::debug!(url = %self.url, keys = keys.keys.len(), ?lifetime, "JWKS fetched");
                Ok(keys)
            }
            Err(reason) => {
                self.state().last_failure = Some(Instant::now());
                tracing::warn!(url = %self.url, %reason, "could not fetch the JWKS");
                Err(())
            }
        }
    }

    async fn download(&self) -> Result<(KeySet, Option<Duration>), String> {
        let mut response = self
            .client
            .get(self.url.clone())
            .header(http::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| e.without_url().to_string())?;
        if !response.status().is_success() {
            return Err(format!("HTTP status {}", response.status()));
        }
        let lifetime = freshness(response.headers(), SystemTime::now());
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| e.without_url().to_string())?
        {
            if body.len() + chunk.len() > MAX_BODY_BYTES {
                return Err(format!(
                    "the document is larger than {MAX_BODY_BYTES} bytes"
                ));
            }
            body.extend_from_slice(&chunk);
        }
        let keys = keys::parse_jwks(&body)?;
        Ok((keys, lifetime))
    }

    fn current(&self) -> Option<Arc<KeySet>> {
        self.state().keys.clone()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // The state is a few plain fields, each written whole: still sound after a panic.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn unavailable() -> AuthError {
    AuthError::invalid_jwt(
        "Could not verify JWT: the signing keys (JWKS) could not be fetched; try again later",
    )
}

/// How long a JWKS response stays fresh, from its headers; `None` when they set no lifetime.
pub(crate) fn freshness(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let age = headers
        .typed_get::<Age>()
        .map_or(Duration::ZERO, |age| Duration::from_secs(age.as_secs()));
    if let Some(cache_control) = headers.typed_get::<CacheControl>() {
        if cache_control.no_cache() || cache_control.no_store() {
            return Some(Duration::ZERO);
        }
        if let Some(max_age) = cache_control
            .max_age()
            .or_else(|| cache_control.s_max_age())
        {
            return Some(max_age.saturating_sub(age));
        }
        if cache_control.must_revalidate() {
            return Some(Duration::ZERO);
        }
    }
    if headers.contains_key(http::header::EXPIRES) {
        // An unparsable Expires means "already expired" (RFC 9111, 5.3).
        let Some(expires) = headers.typed_get::<Expires>() else {
            return Some(Duration::ZERO);
        };
        let base = headers.typed_get::<Date>().map_or(now, SystemTime::from);
        let lifetime = SystemTime::from(expires)
            .duration_since(base)
            .unwrap_or(Duration::ZERO);
        return Some(lifetime.saturating_sub(age));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn lifetime(pairs: &[(&'static str, &str)]) -> Option<Duration> {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, HeaderValue::from_str(value).unwrap());
        }
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        freshness(&headers, now)
    }

    /// Response headers, and the lifetime in seconds they give.
    type Case<'a> = (&'a [(&'static str, &'a str)], Option<u64>);

    fn check(cases: &[Case]) {
        for (headers, seconds) in cases {
            assert_eq!(
                lifetime(headers),
                seconds.map(Duration::from_secs),
                "{headers:?}"
            );
        }
    }

    #[test]
    fn cache_control() {
        check(&[
            (&[], None),
            (&[("cache-control", "public")], None),
            (&[("cache-control", "max-age=300")], Some(300)),
            (
                &[(
                    "cache-control",
                    "public, max-age=19800, must-revalidate, no-transform",
                )],
                Some(19800),
            ),
            (&[("cache-control", "s-maxage=60")], Some(60)),
            (&[("cache-control", "max-age=60, s-maxage=600")], Some(60)),
            (
                &[("cache-control", "max-age=300"), ("age", "100")],
                Some(200),
            ),
            (&[("cache-control", "max-age=300"), ("age", "900")], Some(0)),
            (&[("cache-control", "no-cache")], Some(0)),
            (&[("cache-control", "no-store, max-age=300")], Some(0)),
            (&[("cache-control", "must-revalidate")], Some(0)),
        ]);
    }

    #[test]
    fn expires() {
        // Relative to Date when present, else to now (2023-11-14T22:13:20Z); max-age wins.
        let expires = ("expires", "Tue, 14 Nov 2023 23:00:00 GMT");
        check(&[
            (
                &[("date", "Tue, 14 Nov 2023 22:00:00 GMT"), expires],
                Some(3600),
            ),
            (&[("expires", "Tue, 14 Nov 2023 22:23:20 GMT")], Some(600)),
            (&[("expires", "Mon, 13 Nov 2023 00:00:00 GMT")], Some(0)),
            (&[("expires", "0")], Some(0)),
            (&[("cache-control", "max-age=5"), expires], Some(5)),
        ]);
    }
}
