//! Actions' handler calls: how many, by action and result, and how long each
//! takes. The action's name is metadata (bounded), never a request's value.

use prometheus::{HistogramVec, IntCounterVec, Registry};

/// The actions' metrics.
pub struct ActionMetrics {
    /// Handler calls by action and result (`ok`, `handler_error`: its own 4xx
    /// error, `webhook_error`: no usable answer, `invalid_answer`: an answer that
    /// does not fit the output type).
    pub calls: IntCounterVec,
    /// Seconds one handler call took (answered or not), by action.
    pub seconds: HistogramVec,
}

impl ActionMetrics {
    /// Registered in `r`.
    pub(crate) fn new(r: &Registry) -> Self {
        Self {
            calls: super::counter_vec(
                r,
                "grafton_action_calls_total",
                "Action handler calls, by action and result: ok, handler_error (the handler's own error), webhook_error (no usable answer: down, slow, another status, no JSON, too large) or invalid_answer (an answer that does not fit the output type).",
                &["action", "result"],
            ),
            seconds: super::histogram_vec(
                r,
                "grafton_action_call_seconds",
                "Seconds one action handler call took (answered or not), by action.",
                &["action"],
            ),
        }
    }
}
