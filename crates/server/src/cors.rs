//! Cross-origin requests as Hasura answers them: every origin by default,
//! `--cors-domain` for a list (exact origins and `scheme://*.host:port`
//! wildcards), `--disable-cors` for none. The HTTP side is tower-http's CORS
//! layer; the WebSocket upgrade (which browsers do not preflight) is checked here.

use axum::http::{request::Parts, HeaderName, HeaderValue, Method};
use std::sync::Arc;
use std::time::Duration;
use tower_http::cors::{AllowHeaders, AllowOrigin, CorsLayer};

/// How long a browser may keep a preflight's answer: Hasura's 20 days (browsers
/// cap it lower, Chromium at two hours).
const MAX_AGE: Duration = Duration::from_secs(1_728_000);

/// Which origins may call the API from a browser.
#[derive(Debug, Clone, Default)]
pub enum CorsPolicy {
    /// Every origin (Hasura's default): the request's `Origin` is echoed.
    #[default]
    AllowAll,
    /// Only these.
    Origins(Arc<Origins>),
    /// No CORS headers at all; cookies are not read on WebSocket upgrades unless
    /// `ws_read_cookie` (Hasura's `--ws-read-cookie`).
    Disabled {
        /// Read cookies on WebSocket upgrades anyway.
        ws_read_cookie: bool,
    },
}

/// A `--cors-domain` list.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Origins {
    exact: Vec<String>,
    wildcards: Vec<Wildcard>,
}

/// `scheme://*.host[:port]`: one more label in front of `host`.
#[derive(Debug, PartialEq, Eq)]
struct Wildcard {
    scheme: String,
    host: String,
    port: Option<String>,
}

impl CorsPolicy {
    /// Parses Hasura's `HASURA_GRAPHQL_CORS_DOMAIN`: `*`, or origins separated by
    /// commas, each `scheme://host[:port]` with `*.` allowed in front of the host.
    pub fn parse(text: &str) -> Result<CorsPolicy, String> {
        let entries: Vec<&str> = text
            .split(',')
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .collect();
        if entries.is_empty() {
            return Err("no origin given; use * for every origin".into());
        }
        if entries.contains(&"*") {
            return Ok(CorsPolicy::AllowAll);
        }
        let mut origins = Origins::default();
        for entry in entries {
            let normal = normalise(entry);
            let (scheme, rest) = normal
                .split_once("://")
                .filter(|(s, r)| !s.is_empty() && !r.is_empty())
                .ok_or_else(|| format!("{entry:?} is not an origin like https://app.example.com or https://*.example.com"))?;
            if rest.contains('/') {
                return Err(format!(
                    "{entry:?} has a path; an origin is scheme://host[:port]"
                ));
            }
            let (host, port) = match rest.rsplit_once(':') {
                Some((h, p)) if p == "*" || p.parse::<u16>().is_ok() => (h, Some(p.to_owned())),
                Some(_) => return Err(format!("{entry:?} has a port that is not a number")),
                None => (rest, None),
            };
            match host.strip_prefix("*.") {
                Some(suffix) if !suffix.is_empty() && !suffix.contains('*') => {
                    origins.wildcards.push(Wildcard {
                        scheme: scheme.to_owned(),
                        host: suffix.to_owned(),
                        port,
                    });
                }
                _ if host.contains('*') || port.as_deref() == Some("*") => {
                    return Err(format!(
                        "{entry:?}: a wildcard may only be the first label of the host, as in https://*.example.com"
                    ))
                }
                _ => origins.exact.push(normal),
            }
        }
        Ok(CorsPolicy::Origins(Arc::new(origins)))
    }

    /// Whether a page on `origin` may call the API.
    pub fn allows(&self, origin: &str) -> bool {
        match self {
            CorsPolicy::AllowAll => true,
            CorsPolicy::Origins(origins) => origins.allows(origin),
            CorsPolicy::Disabled { .. } => false,
        }
    }

    /// The HTTP layer that answers preflights and marks allowed answers; none when
    /// CORS is disabled.
    pub(crate) fn layer(&self) -> Option<CorsLayer> {
        let origin = match self {
            CorsPolicy::Disabled { .. } => return None,
            // Echoed, not `*`: credentials (cookies) are allowed, as in Hasura.
            CorsPolicy::AllowAll => AllowOrigin::mirror_request(),
            CorsPolicy::Origins(origins) => {
                let origins = origins.clone();
                AllowOrigin::predicate(move |origin: &HeaderValue, _: &Parts| {
                    origin.to_str().is_ok_and(|o| origins.allows(o))
                })
            }
        };
        Some(
            CorsLayer::new()
                .allow_origin(origin)
                .allow_credentials(true)
                .allow_methods([
                    Method::GET,
                    Method::POST,
                    Method::PUT,
                    Method::PATCH,
                    Method::DELETE,
                    Method::OPTIONS,
                ])
                .allow_headers(AllowHeaders::mirror_request())
                .expose_headers([
                    HeaderName::from_static("x-hasura-query-cache-key"),
                    HeaderName::from_static("x-hasura-query-family-cache-key"),
                    HeaderName::from_static("warning"),
                ])
                .max_age(MAX_AGE),
        )
    }
}

impl Origins {
    fn allows(&self, origin: &str) -> bool {
        let origin = normalise(origin);
        if self.exact.contains(&origin) {
            return true;
        }
        let Some((scheme, rest)) = origin.split_once("://") else {
            return false;
        };
        let (host, port) = match rest.rsplit_once(':') {
            Some((h, p)) if p.parse::<u16>().is_ok() => (h, Some(p)),
            _ => (rest, None),
        };
        self.wildcards.iter().any(|w| {
            w.scheme == scheme
                && match (&w.port, port) {
                    (Some(p), _) if p == "*" => true,
                    (Some(p), Some(q)) => p == q,
                    (None, None) => true,
                    _ => false,
                }
                && host
                    .strip_suffix(w.host.as_str())
                    .and_then(|label| label.strip_suffix('.'))
                    .is_some_and(|label| !label.is_empty() && !label.contains('.'))
        })
    }
}

/// Origins compare without case and without a trailing slash.
fn normalise(origin: &str) -> String {
    origin.trim().trim_end_matches('/').to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hasura_lists() {
        let policy =
            CorsPolicy::parse("https://*.foo.com, http://localhost:3000, https://*.bar.io:8443")
                .unwrap();
        assert!(policy.allows("http://localhost:3000"));
        assert!(policy.allows("HTTP://LOCALHOST:3000/"));
        assert!(!policy.allows("http://localhost:3001"));
        assert!(!policy.allows("https://localhost:3000"));
        assert!(policy.allows("https://app.foo.com"));
        assert!(!policy.allows("https://foo.com"));
        assert!(!policy.allows("https://a.b.foo.com"));
        assert!(!policy.allows("http://app.foo.com"));
        assert!(!policy.allows("https://app.foo.com:444"));
        assert!(!policy.allows("https://appfoo.com"));
        assert!(!policy.allows("https://app.foo.com.evil.net"));
        assert!(policy.allows("https://x.bar.io:8443"));
        assert!(!policy.allows("https://x.bar.io"));
        assert!(!policy.allows("null"));
        let any_port = CorsPolicy::parse("http://*.localhost:*").unwrap();
        assert!(any_port.allows("http://a.localhost:5173"));
        assert!(any_port.allows("http://a.localhost"));
    }

    #[test]
    fn star_and_refusals() {
        assert!(matches!(
            CorsPolicy::parse("*").unwrap(),
            CorsPolicy::AllowAll
        ));
        assert!(matches!(
            CorsPolicy::parse("http://a.com, *").unwrap(),
            CorsPolicy::AllowAll
        ));
        for bad in [
            "",
            " , ",
            "localhost:3000",
            "https://a.com/path",
            "https://a.*.com",
            "https://*",
            "http://a.com:port",
        ] {
            assert!(CorsPolicy::parse(bad).is_err(), "{bad:?} should be refused");
        }
        assert!(!CorsPolicy::Disabled {
            ws_read_cookie: false
        }
        .allows("http://a.com"));
    }
}
