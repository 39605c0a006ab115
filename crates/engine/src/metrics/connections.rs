//! The client connections under `--max-connections`: open, the cap, and those
//! closed at once because the cap was reached (HTTP and WebSocket alike).

use prometheus::{IntCounter, IntGauge, Registry};

/// Set by the accept loop.
#[derive(Clone)]
pub struct ConnectionMetrics {
    /// Connections open now (a WebSocket counts while it lives).
    pub open: IntGauge,
    /// The cap (`--max-connections`).
    pub max: IntGauge,
    /// Connections closed at accept because the cap was reached.
    pub refused: IntCounter,
}

impl ConnectionMetrics {
    /// Registered in `r`.
    pub(crate) fn new(r: &Registry) -> Self {
        let gauge = |name: &str, help: &str| {
            super::register(
                r,
                IntGauge::new(name, help).unwrap_or_else(|e| panic!("metric: {e}")),
            )
        };
        Self {
            open: gauge(
                "grafton_connections_open",
                "Client connections open (HTTP and WebSocket).",
            ),
            max: gauge(
                "grafton_connections_max",
                "Most client connections open at once (--max-connections).",
            ),
            refused: super::register(
                r,
                IntCounter::new(
                    "grafton_connections_refused_total",
                    "Client connections closed at once because --max-connections were open.",
                )
                .unwrap_or_else(|e| panic!("metric: {e}")),
            ),
        }
    }
}
