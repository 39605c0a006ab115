//! Event triggers' deliveries: how many, by result; how long from the write's
//! commit to its delivery; how long each webhook takes, by trigger; how many
//! wait and how many calls are under way.

use prometheus::{HistogramVec, IntCounterVec, IntGaugeVec, Registry};

/// The events' metrics.
pub struct EventMetrics {
    /// Deliveries by result (`delivered`, `retried`, `dead`).
    pub deliveries: IntCounterVec,
    /// Seconds from the event's capture to its delivery (a 2xx answer).
    pub latency: HistogramVec,
    /// Seconds one webhook call took, by trigger.
    pub webhook: HistogramVec,
    /// Events waiting in each log (`event_log`, `scheduled_events`): due or
    /// to be tried again, as last counted.
    pub pending: IntGaugeVec,
    /// Webhook calls under way, by log.
    pub in_flight: IntGaugeVec,
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
            pending: super::gauge_vec(
                r,
                "grafton_events_pending",
                "Events waiting for delivery (due now, later, or to be tried again), by log, as last counted (every 15 s). Scheduled events count once due.",
                &["log"],
            ),
            in_flight: super::gauge_vec(
                r,
                "grafton_events_in_flight",
                "Webhook calls under way on this instance, by log.",
                &["log"],
            ),
        }
    }
}
