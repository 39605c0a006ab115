//! Remote schemas' calls: how many, by remote and result, and how long each
//! takes. The remote's name is metadata (bounded), never a request's value; its
//! URL and headers are never a label.

use prometheus::{HistogramVec, IntCounterVec, Registry};

/// The remote schemas' metrics.
pub struct RemoteMetrics {
    /// Calls by remote and result (`ok`, `errors`: it answered GraphQL errors,
    /// `failed`: no usable answer).
    pub calls: IntCounterVec,
    /// Seconds one call took (answered or not), by remote.
    pub seconds: HistogramVec,
}

impl RemoteMetrics {
    /// Registered in `r`.
    pub(crate) fn new(r: &Registry) -> Self {
        Self {
            calls: super::counter_vec(
                r,
                "grafton_remote_schema_calls_total",
                "Calls to remote schemas, by remote and result: ok, errors (it answered GraphQL errors) or failed (no usable answer: down, slow, no JSON, too large).",
                &["remote", "result"],
            ),
            seconds: super::histogram_vec(
                r,
                "grafton_remote_schema_call_seconds",
                "Seconds one call to a remote schema took (answered or not), by remote.",
                &["remote"],
            ),
        }
    }
}
