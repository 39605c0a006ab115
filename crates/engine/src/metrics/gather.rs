//! Multiplexed queries: statements that answered several waiting requests, the
//! requests they answered, and the requests run alone after their batch failed.

use prometheus::{IntCounter, Registry};

/// Multiplexed queries' metrics.
#[derive(Clone)]
pub struct GatherMetrics {
    /// Statements that answered more than one request.
    pub batches: IntCounter,
    /// Requests answered by such a statement.
    pub requests: IntCounter,
    /// Requests run alone after waiting in a group: their batch failed or ran
    /// past its time, or could not start (its leader left, no connection).
    pub retries: IntCounter,
}

impl GatherMetrics {
    /// Registered in `r`.
    pub(crate) fn new(r: &Registry) -> Self {
        let counter = |name: &str, help: &str| {
            let c = IntCounter::new(name, help).unwrap_or_else(|e| panic!("metric {name}: {e}"));
            super::register(r, c)
        };
        Self {
            batches: counter(
                "grafton_query_batches_total",
                "Statements that answered several waiting queries of one shape at once.",
            ),
            requests: counter(
                "grafton_query_batched_requests_total",
                "Queries answered by a statement shared with others of their shape.",
            ),
            retries: counter(
                "grafton_query_batch_retries_total",
                "Queries run alone after waiting in a group: the statement they shared failed or ran past its time, or never ran.",
            ),
        }
    }
}
