//! What each request leaves behind for the people running Grafton: its request id
//! (`x-request-id`, echoed or made), its metrics, one log line (`--log-requests`),
//! a warning with its SQL when slow (`--slow-request-ms`), and a `Server-Timing`
//! header (`--server-timing`).

use crate::error::RequestError;
pub use crate::options::ObserveOptions;
use crate::state::AppState;
use axum::http::{HeaderMap, HeaderName, HeaderValue};
use axum::response::Response;
use grafton_engine::RequestInfo;
use std::time::{Duration, Instant};

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");
const SERVER_TIMING: HeaderName = HeaderName::from_static("server-timing");

/// One request being answered.
pub(crate) struct Observed {
    started: Instant,
    transport: &'static str,
    id: HeaderValue,
    /// The caller's role once authenticated (`Some(None)`: admin); `None` until
    /// then, and for a request refused before it was.
    role: Option<Option<String>>,
    /// What the engine learned.
    pub(crate) info: RequestInfo,
    /// The request's trace span (the parent of the engine's), continuing the
    /// caller's `traceparent`.
    pub(crate) span: tracing::Span,
}

impl Observed {
    /// Starts the clock; the request id is the client's `x-request-id` when it is
    /// a reasonable token, else a new one.
    pub(crate) fn begin(transport: &'static str, headers: &HeaderMap) -> Self {
        let given = headers
            .get(REQUEST_ID)
            .filter(|v| v.len() <= 128 && v.as_bytes().iter().all(|b| b.is_ascii_graphic()));
        let id = match given {
            Some(v) => v.clone(),
            None => HeaderValue::from_str(&new_id()).unwrap_or(HeaderValue::from_static("-")),
        };
        // Sampled here, before any span exists: a request left out costs nothing.
        let span = match crate::telemetry::sampled(headers) {
            true => {
                let span = tracing::info_span!(
                    target: "grafton::trace",
                    "graphql.request",
                    otel.kind = "server",
                    graphql.operation.type = tracing::field::Empty,
                    graphql.operation.name = tracing::field::Empty,
                    http.response.status_code = tracing::field::Empty,
                    error.type = tracing::field::Empty,
                    request_id = id.to_str().unwrap_or("-"),
                    transport,
                );
                crate::telemetry::continue_trace(&span, headers);
                span
            }
            false => tracing::Span::none(),
        };
        Self {
            started: Instant::now(),
            transport,
            id,
            role: None,
            info: RequestInfo::default(),
            span,
        }
    }

    /// The caller is known.
    pub(crate) fn caller(&mut self, caller: &grafton_engine::engine::Caller) {
        self.role = Some(caller.role.clone());
    }

    /// The role for logs: `-` before authentication, `admin` for admin.
    fn role_label(&self) -> &str {
        match &self.role {
            None => "-",
            Some(None) => "admin",
            Some(Some(role)) => role,
        }
    }

    /// The request id.
    pub(crate) fn id(&self) -> &str {
        self.id.to_str().unwrap_or("-")
    }

    /// Answers the request and records it.
    pub(crate) fn finish(
        self,
        state: &AppState,
        result: Result<String, RequestError>,
        style: crate::respond::Style,
    ) -> Response {
        let (code, refused) = match &result {
            Ok(_) => ("", false),
            Err(e) => (e.code(), e.is_refusal()),
        };
        // Only in a traced request: a span without a parent would start a trace.
        let mut response = match self.span.is_none() {
            true => crate::respond::respond(result, style),
            false => {
                tracing::info_span!(target: "grafton::trace", parent: &self.span, "graphql.response")
                    .in_scope(|| crate::respond::respond(result, style))
            }
        };
        let status = response.status().as_u16();
        let total = self.started.elapsed();
        self.record(state, status, code, refused, total);
        let headers = response.headers_mut();
        if state.observe.server_timing {
            if let Ok(v) = HeaderValue::from_str(&server_timing(&self.info, total)) {
                headers.insert(SERVER_TIMING, v);
            }
        }
        headers.insert(REQUEST_ID, self.id);
        if let Some(c) = &self.info.cache {
            let pairs = [
                ("x-hasura-query-cache-key", c.key.clone()),
                ("x-hasura-query-family-cache-key", c.family.clone()),
                // Keyed by role and session: no shared cache may serve it to another.
                ("cache-control", format!("max-age={}, private", c.max_age)),
            ];
            for (name, value) in pairs {
                if let Ok(v) = HeaderValue::from_str(&value) {
                    headers.insert(name, v);
                }
            }
        }
        // An action handler's cookies, passed on as Hasura passes them.
        for cookie in &self.info.set_cookies {
            if let Ok(v) = HeaderValue::from_str(cookie) {
                headers.append(axum::http::header::SET_COOKIE, v);
            }
        }
        response
    }

    /// Records an operation answered over a WebSocket (no HTTP response of its own).
    pub(crate) fn done<T>(&self, state: &AppState, result: &Result<T, RequestError>) {
        let (status, code, refused) = match result {
            Ok(_) => (200, "", false),
            Err(e) => (e.status(false).as_u16(), e.code(), e.is_refusal()),
        };
        self.record(state, status, code, refused, self.started.elapsed());
    }

    /// Counts the request in the metrics, writes its log lines and completes its
    /// span.
    pub(crate) fn record(
        &self,
        state: &AppState,
        status: u16,
        code: &str,
        refused: bool,
        total: Duration,
    ) {
        if !self.span.is_none() {
            let operation = self.info.operation.unwrap_or("");
            let name = self.info.name.as_ref().map_or("", |n| n.as_str());
            let span = &self.span;
            crate::telemetry::rename(span, format!("{operation} {name}").trim().to_owned());
            span.record("graphql.operation.type", operation);
            span.record("graphql.operation.name", name);
            span.record("http.response.status_code", i64::from(status));
            if !code.is_empty() {
                span.record("error.type", code);
            }
        }
        let metrics = state.engine.metrics();
        metrics.request(self.transport, &self.info, status, code, refused, total);
        let ms = |d: Option<Duration>| d.map_or(0.0, |d| d.as_secs_f64() * 1000.0);
        let name = self.info.name.as_ref().map_or("", |n| n.as_str());
        let slow = state
            .observe
            .slow_request
            .is_some_and(|limit| total > limit);
        if slow {
            let sql = self
                .info
                .plan
                .as_ref()
                .and_then(|p| p.statement())
                .map_or("", |s| s.sql.as_str());
            tracing::warn!(
                target: "grafton::request",
                request_id = self.id(),
                role = self.role_label(),
                operation = self.info.operation.unwrap_or(""),
                name,
                status,
                code,
                total_ms = ms(Some(total)),
                db_ms = ms(self.info.database),
                sql,
                "slow request"
            );
        } else {
            tracing::info!(
                target: "grafton::request",
                request_id = self.id(),
                transport = self.transport,
                role = self.role_label(),
                operation = self.info.operation.unwrap_or(""),
                name,
                status,
                code,
                total_ms = ms(Some(total)),
                db_ms = ms(self.info.database),
                "request"
            );
        }
    }
}

/// `plan;dur=0.120, db;dur=0.850, total;dur=1.020` (milliseconds).
fn server_timing(info: &RequestInfo, total: Duration) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(64);
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    if let Some(plan) = info.planning {
        let _ = write!(out, "plan;dur={:.3}, ", ms(plan));
    }
    if let Some(db) = info.database {
        let _ = write!(out, "db;dur={:.3}, ", ms(db));
    }
    let _ = write!(out, "total;dur={:.3}", ms(total));
    out
}

/// A new request id: 32 hex digits, unique within the process and unpredictable
/// across processes.
fn new_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    static SEED: std::sync::OnceLock<std::collections::hash_map::RandomState> =
        std::sync::OnceLock::new();
    let seed = SEED.get_or_init(std::collections::hash_map::RandomState::new);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let mut a = seed.build_hasher();
    a.write_u64(n);
    let mut b = seed.build_hasher();
    b.write_u64(!n);
    format!("{:016x}{:016x}", a.finish(), b.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_ids_are_echoed_when_sane_and_made_otherwise() {
        let mut headers = HeaderMap::new();
        headers.insert(REQUEST_ID, HeaderValue::from_static("abc-123"));
        assert_eq!(Observed::begin("http", &headers).id(), "abc-123");
        headers.insert(REQUEST_ID, HeaderValue::from_static("has space"));
        let made = Observed::begin("http", &headers);
        assert_eq!(made.id().len(), 32);
        assert_ne!(made.id(), Observed::begin("http", &HeaderMap::new()).id());
    }

    #[test]
    fn server_timing_lists_the_parts_known() {
        let info = RequestInfo {
            planning: Some(Duration::from_micros(120)),
            database: Some(Duration::from_micros(850)),
            ..RequestInfo::default()
        };
        assert_eq!(
            server_timing(&info, Duration::from_micros(1020)),
            "plan;dur=0.120, db;dur=0.850, total;dur=1.020"
        );
    }
}
