//! The read replicas' gauges: up, lag (seconds and bytes), reads and failures,
//! labelled by `host:port/database`, read at scrape.

use prometheus::{GaugeVec, IntCounterVec, IntGaugeVec, Opts, Registry};

/// Gauges and counters of every replica.
pub(crate) struct ReplicaMetrics {
    up: IntGaugeVec,
    lag_seconds: GaugeVec,
    lag_bytes: IntGaugeVec,
    reads: IntCounterVec,
    failures: IntCounterVec,
    pool: IntGaugeVec,
}

impl ReplicaMetrics {
    /// Registered in `r`.
    pub(crate) fn new(r: &Registry) -> Self {
        let lag_seconds = GaugeVec::new(
            Opts::new(
                "grafton_replica_lag_seconds",
                "Seconds since the last commit a read replica replayed, when it has WAL left to replay (0 when caught up).",
            ),
            &["replica"],
        )
        .unwrap_or_else(|e| panic!("metric: {e}"));
        Self {
            up: super::gauge_vec(
                r,
                "grafton_replica_up",
                "1 while a read replica serves reads, 0 while it is taken out.",
                &["replica"],
            ),
            lag_seconds: super::register(r, lag_seconds),
            lag_bytes: super::gauge_vec(
                r,
                "grafton_replica_lag_bytes",
                "Bytes of the primary's WAL a read replica has not replayed.",
                &["replica"],
            ),
            reads: super::counter_vec(
                r,
                "grafton_replica_reads_total",
                "Reads a replica answered.",
                &["replica"],
            ),
            failures: super::counter_vec(
                r,
                "grafton_replica_failures_total",
                "Failed health checks and statements of a replica (each takes it out, or keeps it out).",
                &["replica"],
            ),
            pool: super::gauge_vec(
                r,
                "grafton_replica_pool_connections",
                "A replica's pool: state is max, open, idle, in_use or waiting.",
                &["replica", "state"],
            ),
        }
    }

    /// Sets every series from `replicas`.
    pub(crate) fn set(&self, replicas: &[grafton_execute::ReplicaStatus]) {
        let int = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        for r in replicas {
            let name = [r.name.as_str()];
            self.up.with_label_values(&name).set(i64::from(r.up));
            self.lag_seconds.with_label_values(&name).set(r.lag_seconds);
            self.lag_bytes
                .with_label_values(&name)
                .set(int(r.lag_bytes));
            // Counters only go up: add what is new since the last scrape.
            let reads = self.reads.with_label_values(&name);
            reads.inc_by(r.reads.saturating_sub(reads.get()));
            let failures = self.failures.with_label_values(&name);
            failures.inc_by(r.failures.saturating_sub(failures.get()));
            let pool = r.pool;
            for (state, n) in [
                ("max", pool.max),
                ("open", pool.open),
                ("idle", pool.idle),
                ("in_use", pool.open.saturating_sub(pool.idle)),
                ("waiting", pool.waiting),
            ] {
                self.pool
                    .with_label_values(&[r.name.as_str(), state])
                    .set(i64::try_from(n).unwrap_or(i64::MAX));
            }
        }
    }
}
