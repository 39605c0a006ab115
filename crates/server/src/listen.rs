//! Accepting connections with bounds: a cap on open connections (one past it is
//! closed at once, counted, and logged at most every ten seconds), a deadline for each request's headers (which also ends idle
//! keep-alive connections) and, through the router, for its body. A client that
//! sends nothing, half a header or half a body cannot hold a socket for long.

use axum::body::Body;
use axum::Router;
use grafton_engine::metrics::ConnectionMetrics;
use grafton_engine::metrics::{Counter as IntCounter, Gauge as IntGauge};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

pub use crate::options::ConnectionLimits;
use tower::ServiceExt;

/// A connection's place under the cap, and the server's shutdown signal: every
/// request carries them, so a WebSocket keeps the place while it lives (after the
/// upgrade, the HTTP connection is over) and closes when the server stops.
#[derive(Clone)]
pub(crate) struct Slot {
    _permit: Arc<Held>,
    /// Turns true when the server stops.
    pub(crate) stopping: watch::Receiver<bool>,
}

/// A place under the cap, counted as open while held.
struct Held {
    _permit: OwnedSemaphorePermit,
    open: IntGauge,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.open.dec();
    }
}

/// How often a refusal at the cap is logged: the first, then a count at most this often.
const REFUSAL_LOG_INTERVAL: Duration = Duration::from_secs(10);

/// Refusals at the cap, logged at warn without flooding the log.
struct Refusals {
    metric: IntCounter,
    max: usize,
    /// Refused since the last line.
    since_log: u64,
    logged: Option<Instant>,
}

impl Refusals {
    fn refused(&mut self) {
        self.metric.inc();
        self.since_log += 1;
        if self
            .logged
            .is_none_or(|at| at.elapsed() >= REFUSAL_LOG_INTERVAL)
        {
            self.log();
        }
    }

    /// Logs the refusals not logged yet, if any, once the interval has passed (a
    /// burst's count is logged even when no refusal follows it).
    fn flush(&mut self) {
        if self.since_log > 0
            && self
                .logged
                .is_none_or(|at| at.elapsed() >= REFUSAL_LOG_INTERVAL)
        {
            self.log();
        }
    }

    fn log(&mut self) {
        let (refused, max) = (self.since_log, self.max);
        tracing::warn!(
            refused,
            max_connections = max,
            "{refused} connection(s) closed at once: --max-connections ({max}) are open; raise \
             it (the open-files limit allows more), or add instances"
        );
        self.since_log = 0;
        self.logged = Some(Instant::now());
    }
}

/// Serves `app` on `listener` until `shutdown` completes, then stops accepting
/// and lets open requests finish (WebSockets close with 1001), for up to `drain`.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    drain: Duration,
    shutdown: impl Future<Output = ()>,
    metrics: ConnectionMetrics,
) {
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    metrics
        .max
        .set(i64::try_from(limits.max_connections).unwrap_or(i64::MAX));
    let mut refusals = Refusals {
        metric: metrics.refused.clone(),
        max: limits.max_connections,
        since_log: 0,
        logged: None,
    };
    let (stop, stopping) = watch::channel(false);
    // HTTP/1.1 only: hyper's header deadline starts when a connection opens (the
    // HTTP/2 auto-detection would first wait, unbounded, for a preface).
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    let mut shutdown = std::pin::pin!(shutdown);
    // Checked every second: a burst's remainder is logged soon after the interval.
    let mut flush = tokio::time::interval(Duration::from_secs(1));
    flush.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(connection) => connection,
                Err(e) => {
                    // Out of file descriptors and the like: back off instead of spinning.
                    tracing::warn!("accept error: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
            _ = flush.tick() => {
                refusals.flush();
                continue;
            }
        };
        let Ok(permit) = slots.clone().try_acquire_owned() else {
            // Over the cap: closing at once beats queueing sockets without bound.
            drop(stream);
            refusals.refused();
            continue;
        };
        metrics.open.inc();
        let slot = Slot {
            _permit: Arc::new(Held {
                _permit: permit,
                open: metrics.open.clone(),
            }),
            stopping: stopping.clone(),
        };
        let mut stopping = stopping.clone();
        let service = TowerToHyperService::new(app.clone().map_request(
            move |mut req: hyper::Request<Incoming>| {
                req.extensions_mut().insert(crate::state::Peer(peer));
                req.extensions_mut().insert(slot.clone());
                req.map(Body::new)
            },
        ));
        let connection = builder
            .serve_connection(TokioIo::new(stream), service)
            .with_upgrades();
        tokio::spawn(async move {
            let mut connection = std::pin::pin!(connection);
            let ended = tokio::select! {
                ended = connection.as_mut() => ended,
                _ = async { stopping.wait_for(|stop| *stop).await.is_ok() } => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(e) = ended {
                tracing::debug!("connection ended: {e}");
            }
        });
    }
    drop(listener);
    let _ = stop.send(true);
    // Every open connection (a WebSocket too) holds a place: all of them back means
    // all of them closed.
    let all = u32::try_from(limits.max_connections).unwrap_or(u32::MAX);
    if tokio::time::timeout(drain, slots.acquire_many(all))
        .await
        .is_err()
    {
        tracing::warn!(
            "connections still open {} s after shutdown; closing them",
            drain.as_secs_f64()
        );
    }
}
