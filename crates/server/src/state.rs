//! What every request handler shares: the engine, the authenticator and the
//! settings (`AppState`), the operational endpoints' handles (`Ops`), and the
//! client's address (`Peer`).

use grafton_auth::Authenticator;
use std::sync::Arc;

use crate::engine::Engine;

#[derive(Clone)]
pub(crate) struct AppState {
    pub(crate) engine: Arc<Engine>,
    pub(crate) auth: Arc<Authenticator>,
    /// The largest body (and WebSocket message).
    pub(crate) limit: usize,
    pub(crate) ws: crate::options::WsOptions,
    pub(crate) ops: Ops,
    pub(crate) observe: crate::options::ObserveOptions,
    pub(crate) cors: crate::cors::CorsPolicy,
}

/// What the operational endpoints share with the server's lifecycle.
#[derive(Clone)]
pub struct Ops {
    /// The metadata: reloads the schemas, answers `/v1/metadata`.
    pub metadata: std::sync::Arc<grafton_metadata::Metadata>,
    /// True once the server is stopping: `/readyz` turns 503 so load balancers
    /// move traffic away during `--shutdown-delay`, before the port closes.
    pub draining: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// Serve `/metrics` on this port (admin only); off when `--metrics-addr`
    /// moves it to a listener of its own, or `--metrics false`.
    pub metrics: bool,
}

/// The client's address, set on each request by the accept loop.
#[derive(Debug, Clone, Copy)]
pub struct Peer(pub std::net::SocketAddr);
