//! `@cached`'s answers: served from the cache or not, dropped because something
//! they read changed, pushed out by the byte bound, and the bytes kept.

use prometheus::{IntCounter, IntGauge, Registry};

/// The response cache's metrics.
#[derive(Clone)]
pub struct ResponseCacheMetrics {
    /// Requests answered from the cache.
    pub hits: IntCounter,
    /// `@cached` requests the cache had no fresh answer for.
    pub misses: IntCounter,
    /// Kept answers dropped because a table they read was written (or a clear).
    pub invalidations: IntCounter,
    /// Kept answers pushed out by the byte bound.
    pub evictions: IntCounter,
    /// Bytes of answers kept now.
    pub bytes: IntGauge,
}

impl ResponseCacheMetrics {
    /// Registered in `r`.
    pub(crate) fn new(r: &Registry) -> Self {
        let counter = |name: &str, help: &str| {
            let c = IntCounter::new(name, help).unwrap_or_else(|e| panic!("metric {name}: {e}"));
            super::register(r, c)
        };
        Self {
            hits: counter(
                "grafton_response_cache_hits_total",
                "@cached requests answered from the cache.",
            ),
            misses: counter(
                "grafton_response_cache_misses_total",
                "@cached requests the cache had no fresh answer for (run against the database).",
            ),
            invalidations: counter(
                "grafton_response_cache_invalidations_total",
                "Kept answers dropped because a table they read was written since.",
            ),
            evictions: counter(
                "grafton_response_cache_evictions_total",
                "Kept answers pushed out by the byte bound (--cache-max-bytes).",
            ),
            bytes: super::register(
                r,
                IntGauge::new(
                    "grafton_response_cache_bytes",
                    "Bytes of answers the response cache keeps now.",
                )
                .unwrap_or_else(|e| panic!("metric: {e}")),
            ),
        }
    }
}
