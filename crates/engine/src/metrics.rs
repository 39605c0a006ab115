//! Prometheus metrics of one engine, in a registry of its own (two engines in one
//! process, as in the tests, count apart). Counters are plain atomics, cheap on
//! the request path; gauges of the pool and of live queries are read at scrape.

use prometheus::core::Collector;
use prometheus::{
    Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts,
    Registry,
};
use std::collections::HashSet;

pub mod actions;
mod connections;
pub mod events;
pub mod gather;
pub mod remotes;
mod replicas;
mod request_info;
pub mod response_cache;
pub use connections::ConnectionMetrics;
/// The counter and gauge types of [`ConnectionMetrics`], for the accept loop.
pub use prometheus::{IntCounter as Counter, IntGauge as Gauge};
pub use request_info::RequestInfo;
use std::sync::RwLock;
use std::time::Duration;

/// Operation names kept as label values; later ones count as `other`, so a client
/// inventing names cannot grow the series without bound.
pub const MAX_OPERATION_NAMES: usize = 100;

/// Request latencies, in seconds: 0.5 ms to 10 s.
const LATENCY_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// Hits and misses of the planner's caches, shared by every planner of an engine.
#[derive(Clone)]
pub struct CacheStats {
    pub(crate) document_hit: IntCounter,
    pub(crate) document_miss: IntCounter,
    pub(crate) plan_hit: IntCounter,
    pub(crate) plan_miss: IntCounter,
}

impl Default for CacheStats {
    /// Counters registered nowhere (a planner outside an engine).
    fn default() -> Self {
        let c = |name: &str| IntCounter::new(name, name).expect("a constant, valid metric name");
        Self {
            document_hit: c("document_hit"),
            document_miss: c("document_miss"),
            plan_hit: c("plan_hit"),
            plan_miss: c("plan_miss"),
        }
    }
}

/// Every metric of one engine.
pub struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    request_seconds: HistogramVec,
    database_seconds: HistogramVec,
    rejections: IntCounterVec,
    pub(crate) cache: CacheStats,
    /// Open GraphQL WebSockets.
    pub ws_connections: IntGauge,
    pub(crate) poll_seconds: Histogram,
    reloads: IntCounterVec,
    pool: IntGaugeVec,
    live: IntGaugeVec,
    live_bytes: IntGauge,
    redis_bypassed: IntGauge,
    /// The `resource_version` of the metadata served (0: none from the store).
    pub metadata_version: IntGauge,
    /// Event triggers' deliveries.
    pub events: events::EventMetrics,
    /// Actions' handler calls.
    pub actions: actions::ActionMetrics,
    /// Remote schemas' calls.
    pub remotes: remotes::RemoteMetrics,
    /// `@cached`'s answers.
    pub response_cache: response_cache::ResponseCacheMetrics,
    /// Multiplexed queries.
    pub gather: gather::GatherMetrics,
    replicas: replicas::ReplicaMetrics,
    /// Client connections under the cap.
    pub connections: ConnectionMetrics,
    names: RwLock<HashSet<String>>,
}

/// Registers `collector` in `registry`; every name here is unique and valid.
fn register<C: Collector + Clone + 'static>(registry: &Registry, collector: C) -> C {
    if let Err(e) = registry.register(Box::new(collector.clone())) {
        tracing::warn!("metric not registered: {e}");
    }
    collector
}

fn counter_vec(r: &Registry, name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
    let vec = IntCounterVec::new(Opts::new(name, help), labels)
        .unwrap_or_else(|e| panic!("metric {name}: {e}"));
    register(r, vec)
}

fn histogram_vec(r: &Registry, name: &str, help: &str, labels: &[&str]) -> HistogramVec {
    let opts = HistogramOpts::new(name, help).buckets(LATENCY_BUCKETS.to_vec());
    let vec = HistogramVec::new(opts, labels).unwrap_or_else(|e| panic!("metric {name}: {e}"));
    register(r, vec)
}

fn gauge_vec(r: &Registry, name: &str, help: &str, labels: &[&str]) -> IntGaugeVec {
    let vec = IntGaugeVec::new(Opts::new(name, help), labels)
        .unwrap_or_else(|e| panic!("metric {name}: {e}"));
    register(r, vec)
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// A registry with every metric, the process's (RSS, CPU, open files) included.
    pub fn new() -> Self {
        let r = Registry::new();
        #[cfg(target_os = "linux")]
        if let Err(e) = r.register(Box::new(
            prometheus::process_collector::ProcessCollector::for_self(),
        )) {
            tracing::warn!("process metrics not registered: {e}");
        }
        let cache = counter_vec(
            &r,
            "grafton_cache_lookups_total",
            "Lookups in the planner's caches: cache is document or plan, result hit or miss.",
            &["cache", "result"],
        );
        let build = gauge_vec(&r, "grafton_build_info", "Grafton's version.", &["version"]);
        build.with_label_values(&[env!("CARGO_PKG_VERSION")]).set(1);
        let ws_connections =
            IntGauge::new("grafton_websocket_connections", "Open GraphQL WebSockets.")
                .unwrap_or_else(|e| panic!("metric: {e}"));
        let poll_seconds = Histogram::with_opts(
            HistogramOpts::new(
                "grafton_live_poll_duration_seconds",
                "Time of one live-query poll (one statement for a batch of subscribers).",
            )
            .buckets(LATENCY_BUCKETS.to_vec()),
        )
        .unwrap_or_else(|e| panic!("metric: {e}"));
        Self {
            requests: counter_vec(
                &r,
                "grafton_requests_total",
                "GraphQL operations answered, by transport, operation type and name, HTTP status and error code.",
                &["transport", "operation", "name", "status", "code"],
            ),
            request_seconds: histogram_vec(
                &r,
                "grafton_request_duration_seconds",
                "Time to answer a GraphQL operation, from its arrival to its answer.",
                &["transport", "operation"],
            ),
            database_seconds: histogram_vec(
                &r,
                "grafton_database_duration_seconds",
                "Time an operation spent in the database.",
                &["operation"],
            ),
            rejections: counter_vec(
                &r,
                "grafton_rejections_total",
                "Operations refused by a limit, a rate limit or admission control, by error code.",
                &["code"],
            ),
            cache: CacheStats {
                document_hit: cache.with_label_values(&["document", "hit"]),
                document_miss: cache.with_label_values(&["document", "miss"]),
                plan_hit: cache.with_label_values(&["plan", "hit"]),
                plan_miss: cache.with_label_values(&["plan", "miss"]),
            },
            ws_connections: register(&r, ws_connections),
            poll_seconds: register(&r, poll_seconds),
            reloads: counter_vec(
                &r,
                "grafton_schema_reloads_total",
                "Schema reloads, by result (ok or failed).",
                &["result"],
            ),
            pool: gauge_vec(
                &r,
                "grafton_pool_connections",
                "The database pool: state is max, open, idle, in_use or waiting (requests waiting for a connection).",
                &["state"],
            ),
            live: gauge_vec(
                &r,
                "grafton_live_queries",
                "Live queries: kind is subscriptions or cohorts (subscriptions sharing one plan).",
                &["kind"],
            ),
            live_bytes: register(
                &r,
                IntGauge::new(
                    "grafton_live_queued_bytes",
                    "Bytes of live-query answers queued for subscribers, not yet written (bounded by --live-query-max-bytes).",
                )
                .unwrap_or_else(|e| panic!("metric: {e}")),
            ),
            redis_bypassed: register(
                &r,
                IntGauge::new(
                    "grafton_redis_breaker_open",
                    "1 while Redis is not asked (it failed three calls in a row and has not answered a probe since): the instance counts and remembers on its own.",
                )
                .unwrap_or_else(|e| panic!("metric: {e}")),
            ),
            events: events::EventMetrics::new(&r),
            actions: actions::ActionMetrics::new(&r),
            remotes: remotes::RemoteMetrics::new(&r),
            response_cache: response_cache::ResponseCacheMetrics::new(&r),
            gather: gather::GatherMetrics::new(&r),
            metadata_version: register(
                &r,
                IntGauge::new(
                    "grafton_metadata_resource_version",
                    "The resource_version of the metadata this instance serves (0 when it serves files or an empty store).",
                )
                .unwrap_or_else(|e| panic!("metric: {e}")),
            ),
            replicas: replicas::ReplicaMetrics::new(&r),
            connections: ConnectionMetrics::new(&r),
            names: RwLock::new(HashSet::new()),
            registry: r,
        }
    }

    /// The label for an operation name: itself while fewer than
    /// [`MAX_OPERATION_NAMES`] are known, else `other`.
    fn name_label<'a>(&self, name: Option<&'a str>) -> &'a str {
        let Some(name) = name else { return "" };
        // Read-locked in the common case: a name seen before.
        if self
            .names
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .contains(name)
        {
            return name;
        }
        let mut names = self.names.write().unwrap_or_else(|p| p.into_inner());
        if names.contains(name) {
            return name;
        }
        if names.len() < MAX_OPERATION_NAMES {
            names.insert(name.to_owned());
            return name;
        }
        "other"
    }

    /// Counts one answered operation. `code` is its error code (`""`: none) and
    /// `refused` whether a limit refused it.
    pub fn request(
        &self,
        transport: &str,
        info: &RequestInfo,
        status: u16,
        code: &str,
        refused: bool,
        elapsed: Duration,
    ) {
        let operation = info.operation.unwrap_or("");
        let name = self.name_label(info.name.as_ref().map(|n| n.as_str()));
        let mut status_buf = itoa_buf(status);
        self.requests
            .with_label_values(&[
                transport,
                operation,
                name,
                status_text(&mut status_buf),
                code,
            ])
            .inc();
        self.request_seconds
            .with_label_values(&[transport, operation])
            .observe(elapsed.as_secs_f64());
        if let Some(db) = info.database {
            self.database_seconds
                .with_label_values(&[operation])
                .observe(db.as_secs_f64());
        }
        if refused {
            self.rejections.with_label_values(&[code]).inc();
        }
    }

    /// Counts a reload.
    pub fn reload(&self, ok: bool) {
        let result = if ok { "ok" } else { "failed" };
        self.reloads.with_label_values(&[result]).inc();
    }

    /// Every metric in Prometheus's text format, with the pool, replica and
    /// live-query gauges read now.
    pub fn render(
        &self,
        pool: grafton_execute::PoolStatus,
        replicas: &[grafton_execute::ReplicaStatus],
        live: (usize, usize),
        live_bytes: usize,
        redis_bypassed: bool,
    ) -> String {
        let gauge = |v: &IntGaugeVec, label: &str, n: usize| {
            v.with_label_values(&[label])
                .set(i64::try_from(n).unwrap_or(i64::MAX));
        };
        gauge(&self.pool, "max", pool.max);
        gauge(&self.pool, "open", pool.open);
        gauge(&self.pool, "idle", pool.idle);
        gauge(&self.pool, "in_use", pool.open.saturating_sub(pool.idle));
        gauge(&self.pool, "waiting", pool.waiting);
        gauge(&self.live, "cohorts", live.0);
        gauge(&self.live, "subscriptions", live.1);
        self.live_bytes
            .set(i64::try_from(live_bytes).unwrap_or(i64::MAX));
        self.redis_bypassed.set(i64::from(redis_bypassed));
        self.replicas.set(replicas);
        let families = self.registry.gather();
        prometheus::TextEncoder::new()
            .encode_to_string(&families)
            .unwrap_or_else(|e| format!("# metrics could not be encoded: {e}\n"))
    }
}

/// A status code's digits without allocating.
fn itoa_buf(status: u16) -> [u8; 3] {
    let s = status.min(999);
    [
        b'0' + (s / 100) as u8,
        b'0' + (s / 10 % 10) as u8,
        b'0' + (s % 10) as u8,
    ]
}

fn status_text(buf: &mut [u8; 3]) -> &str {
    std::str::from_utf8(buf).unwrap_or("000")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operation_names_are_bounded() {
        let m = Metrics::new();
        for i in 0..MAX_OPERATION_NAMES {
            assert_eq!(m.name_label(Some(&format!("op{i}"))), format!("op{i}"));
        }
        assert_eq!(m.name_label(Some("one_too_many")), "other");
        assert_eq!(m.name_label(Some("op3")), "op3");
        assert_eq!(m.name_label(None), "");
    }

    #[test]
    fn requests_are_counted_by_label() {
        let m = Metrics::new();
        let info = RequestInfo {
            operation: Some("query"),
            database: Some(Duration::from_millis(2)),
            ..RequestInfo::default()
        };
        m.request("http", &info, 200, "", false, Duration::from_millis(3));
        let refused = RequestInfo::default();
        m.request(
            "http",
            &refused,
            429,
            "rate-limited",
            true,
            Duration::from_millis(1),
        );
        let text = m.render(
            grafton_execute::PoolStatus::default(),
            &[],
            (0, 0),
            0,
            false,
        );
        assert!(text.contains(
            r#"grafton_requests_total{code="",name="",operation="query",status="200",transport="http"} 1"#
        ), "{text}");
        assert!(text.contains(
            r#"grafton_requests_total{code="rate-limited",name="",operation="",status="429",transport="http"} 1"#
        ), "{text}");
        assert!(text.contains(r#"grafton_rejections_total{code="rate-limited"} 1"#));
        assert!(text.contains("grafton_database_duration_seconds_count{operation=\"query\"} 1"));
    }
}
