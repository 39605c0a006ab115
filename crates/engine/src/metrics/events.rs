//! Event triggers' deliveries: how many, by result; how long from the write's
//! commit to its delivery; how long each webhook takes, by trigger.

use prometheus::{HistogramVec, IntCounterVec, Registry};

/// The events' metrics.
pub struct EventMetrics {
    /// Deliveries by result (`delivered`, `retried`, `dead`).
    pub deliveries: IntCounterVec,
    /// Seconds from the event's capture to its delivery (a 2xx answer).
    pub latency: HistogramVec,
    /// Seconds one webhook call took, by trigger.
    pub webhook: HistogramVec,
}

impl EventMetrics {
    /// Registered in `r`.
    pub(crate) fn new(r: &Registry) -> Self {
        Self {
            deliveries: super::counter_vec(
                r,
                "grafton_event_deliveries_total",
                "Event trigger deliveries, by result: delivered (a 2xx answer), retried (to be tried again) or dead (every try failed).",
                &["result"],
            ),
            latency: super::histogram_vec(
                r,
                "grafton_event_delivery_seconds",
                "Seconds from an event's capture (its write's commit) to its delivery, by trigger.",
                &["trigger"],
            ),
            webhook: super::histogram_vec(
                r,
                "grafton_event_webhook_seconds",
                "Seconds one event webhook call took (answered or not), by trigger.",
                &["trigger"],
            ),
        }
    }
}
