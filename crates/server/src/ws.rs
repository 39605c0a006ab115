//! GraphQL over WebSocket on `/v1/graphql` and `/graphql`: both protocols
//! ([`protocol`]), credentials from `connection_init`, live queries from the engine,
//! and queries and mutations answered once. One task per connection; live answers
//! reach it through one bounded channel shared by its subscriptions.

mod operations;
pub(crate) mod protocol;
mod wire;

use crate::cors::CorsPolicy;
use crate::engine::{Caller, Delivery, GraphqlRequest, Sink, Subscription};
use crate::error::RequestError;
use crate::listen::Slot;
pub use crate::options::WsOptions;
use crate::state::{AppState, Peer};
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};
use protocol::{close, ClientMessage, Protocol};
use std::collections::HashMap;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::{AbortHandle, JoinSet};
use tokio::time::Instant;
use wire::{close_with, init_headers, scopeguard, send, send_all};

/// Live answers waiting to be written, per connection: a slow reader skips
/// intermediate answers instead of growing a queue (the latest is sent again).
const DELIVERY_QUEUE: usize = 32;

/// Bytes of frames a connection queues before writing them: the live answers a poll
/// queued for one socket go out in one write, not one each.
const WRITE_BUFFER: usize = 4 * 1024;

/// Accepts the upgrade, choosing the protocol: the client's first that Grafton
/// speaks; none asked for means the legacy one (as Hasura does). `relay`: the
/// socket is the Relay API's (`/v1beta1/relay`).
pub(crate) fn upgrade(
    state: AppState,
    ws: WebSocketUpgrade,
    headers: HeaderMap,
    peer: Option<Peer>,
    slot: Option<Slot>,
    relay: bool,
) -> Response {
    let mut headers = headers;
    let foreign = wire::foreign_origin(&headers);
    // Browsers do not preflight an upgrade: the origin is checked here.
    if let (CorsPolicy::Origins(_), Some(origin)) = (&state.cors, &foreign) {
        if !state.cors.allows(origin) {
            return refuse_origin(origin);
        }
    }
    // Cookies ride along with any page's request: from a site not listed in
    // --cors-domain they prove nothing about who opened the socket (cross-site
    // WebSocket hijacking). With CORS disabled they are not read at all (Hasura).
    let cookies = match state.cors {
        CorsPolicy::AllowAll => foreign.is_none(),
        CorsPolicy::Origins(_) => true,
        CorsPolicy::Disabled { ws_read_cookie } => ws_read_cookie,
    };
    if !cookies {
        headers.remove(header::COOKIE);
    }
    let asked = headers.contains_key(header::SEC_WEBSOCKET_PROTOCOL);
    let ws = ws
        .protocols(protocol::SUBPROTOCOLS)
        .max_message_size(state.limit)
        .max_frame_size(state.limit)
        // Small buffers: thousands of idle subscribers must stay cheap. Frames
        // queue up to WRITE_BUFFER before a write; `send_all` flushes its batch.
        .read_buffer_size(4096)
        .write_buffer_size(WRITE_BUFFER);
    let chosen = ws
        .selected_protocol()
        .and_then(|p| p.to_str().ok())
        .and_then(Protocol::from_name);
    let protocol = match (chosen, asked) {
        (Some(p), _) => Some(p),
        (None, false) => Some(Protocol::Legacy),
        (None, true) => None,
    };
    // Copied here, so the request's own are dropped with it.
    let headers = wire::owned(&headers);
    ws.on_upgrade(move |socket| async move {
        let Some(protocol) = protocol else {
            let mut socket = socket;
            let _ = close_with(
                &mut socket,
                close::SUBPROTOCOL,
                "Subprotocol not acceptable",
            )
            .await;
            return;
        };
        let connection = Connection {
            state,
            protocol,
            headers,
            foreign: foreign.filter(|_| !cookies),
            peer,
            relay,
            caller: None,
            ops: HashMap::new(),
            ids: HashMap::new(),
            next_key: 0,
        };
        connection.run(socket, slot).await;
    })
}

/// An upgrade from an origin `--cors-domain` does not list: Hasura's 400.
fn refuse_origin(origin: &str) -> Response {
    tracing::debug!(origin, "WebSocket upgrade refused: origin not allowed");
    let body = serde_json::json!({
        "message": "received origin header does not match configured CORS domains",
        "extensions": {"path": "$", "code": "access-denied"},
    });
    (axum::http::StatusCode::BAD_REQUEST, axum::Json(body)).into_response()
}

enum Op {
    /// A live query: its delivery key, its subscription and its request (planned
    /// again after a reload).
    Live(u64, Subscription, Box<GraphqlRequest>),
    Once(AbortHandle),
}

struct Connection {
    state: AppState,
    protocol: Protocol,
    /// The upgrade request's headers (without cookies from another site's page);
    /// `connection_init`'s override them.
    headers: HeaderMap,
    /// The upgrade's `Origin`, when another site's page opened the socket and its
    /// cookies were not read.
    foreign: Option<String>,
    peer: Option<Peer>,
    /// The Relay API's socket.
    relay: bool,
    caller: Option<Caller>,
    ops: HashMap<String, Op>,
    /// A live subscription's delivery key → its operation id.
    ids: HashMap<u64, String>,
    next_key: u64,
}

/// What to do after a client message.
enum Flow {
    Continue,
    Close(u16, String),
}

type Done = (String, Result<String, RequestError>);

impl Connection {
    async fn run(mut self, mut socket: WebSocket, slot: Option<Slot>) {
        let open = self.state.engine.metrics().ws_connections.clone();
        open.inc();
        let _open = scopeguard(move || open.dec());
        let options = self.state.ws;
        let (tx, mut deliveries) = mpsc::channel::<Box<Delivery>>(DELIVERY_QUEUE);
        let sink = Sink::new(tx);
        // A reload may change what the caller may see: live queries are planned again.
        let mut schemas = self.state.engine.schema_changes();
        schemas.borrow_and_update();
        // The live answers being written, whose bytes count against the live-query
        // memory budget until they are.
        let mut writing: Vec<Box<Delivery>> = Vec::new();
        let mut running: JoinSet<Done> = JoinSet::new();
        let init_deadline = tokio::time::sleep(options.init_timeout);
        tokio::pin!(init_deadline);
        let mut keep_alive = tokio::time::interval(options.keep_alive);
        keep_alive.tick().await;
        let mut heard = Instant::now();
        // Far enough to never come until connection_init sets the credentials' end.
        let expiry = tokio::time::sleep(Duration::from_secs(86_400 * 365));
        tokio::pin!(expiry);
        // The slot holds this connection's place under --max-connections: kept to the end.
        let mut stopping = slot.as_ref().map(|s| s.stopping.clone());
        let stop = async move {
            match &mut stopping {
                Some(s) => drop(s.wait_for(|stop| *stop).await),
                None => std::future::pending().await,
            }
        };
        tokio::pin!(stop);
        let (code, reason) = loop {
            let out = tokio::select! {
                message = socket.recv() => {
                    heard = Instant::now();
                    match message {
                        // Boxed, as `replan` below: their futures (authentication, planning)
                        // would otherwise sit in every idle connection's task, 5 KiB each.
                        Some(Ok(Message::Text(text))) => match Box::pin(self.on_text(&text, &sink, &mut running)).await {
                            (Flow::Continue, out) => {
                                if let Some(at) = self.caller.as_ref().and_then(|c| c.expires) {
                                    let left = at
                                        .duration_since(std::time::SystemTime::now())
                                        .unwrap_or_default()
                                        .min(Duration::from_secs(86_400 * 365));
                                    expiry.as_mut().reset(Instant::now() + left);
                                }
                                out
                            }
                            (Flow::Close(code, reason), out) => {
                                for o in out {
                                    if !send(&mut socket, Message::Text(o.into()), options.keep_alive).await {
                                        return;
                                    }
                                }
                                break (code, reason);
                            }
                        },
                        Some(Ok(Message::Binary(_))) => {
                            break (close::BAD_REQUEST, "binary messages are not part of the protocol".into())
                        }
                        Some(Ok(Message::Close(_))) => {
                            // Reading on sends the close reply tungstenite queued.
                            let _ = tokio::time::timeout(Duration::from_secs(1), socket.recv()).await;
                            return;
                        }
                        None | Some(Err(_)) => return,
                        Some(Ok(_)) => Vec::new(),
                    }
                }
                Some(d) = deliveries.recv() => {
                    if schemas.has_changed().unwrap_or(false) {
                        // Planned under the schemas a reload replaced: never sent.
                        schemas.borrow_and_update();
                        Box::pin(self.replan(&sink, &mut deliveries, Some(d))).await
                    } else {
                        let mut out = self.delivered(&d);
                        writing.push(d);
                        // What else is queued now goes out in the same write.
                        while writing.len() < DELIVERY_QUEUE {
                            let Ok(d) = deliveries.try_recv() else { break };
                            out.extend(self.delivered(&d));
                            writing.push(d);
                        }
                        out
                    }
                }
                Ok(()) = schemas.changed() => {
                    schemas.borrow_and_update();
                    Box::pin(self.replan(&sink, &mut deliveries, None)).await
                }
                Some(done) = running.join_next_with_id(), if !running.is_empty() => match done {
                    Ok((task, (id, result))) => self.finished(task, id, result),
                    Err(_) => Vec::new(),
                },
                () = &mut init_deadline, if self.caller.is_none() => {
                    break (close::INIT_TIMEOUT, "Connection initialisation timeout".into())
                }
                _ = keep_alive.tick() => {
                    // Any frame counts as a sign of life, a WebSocket pong too: clients
                    // of the legacy protocol never answer `ka`, but every WebSocket
                    // client answers a ping frame.
                    if heard.elapsed() > options.keep_alive * 3 {
                        return;
                    }
                    if !send(&mut socket, Message::Ping(Default::default()), options.keep_alive).await {
                        return;
                    }
                    match self.caller {
                        Some(_) => vec![protocol::keep_alive(self.protocol)],
                        None => Vec::new(),
                    }
                }
                () = &mut stop => break (1001, "the server is shutting down".into()),
                () = &mut expiry, if self.caller.as_ref().is_some_and(|c| c.expires.is_some()) => {
                    // Every operation ends with an error, then the connection.
                    for message in self.expired() {
                        if !send(&mut socket, Message::Text(message.into()), options.keep_alive).await {
                            return;
                        }
                    }
                    break (close::FORBIDDEN, "Forbidden: the session expired".into())
                }
            };
            if !send_all(&mut socket, out, options.keep_alive).await {
                return;
            }
            // Written: their bytes leave the budget.
            writing.clear();
        };
        let _ =
            tokio::time::timeout(options.keep_alive, close_with(&mut socket, code, &reason)).await;
        drop(slot);
    }

    /// Handles one client message: the flow, and the messages to send back.
    async fn on_text(
        &mut self,
        text: &str,
        sink: &Sink,
        running: &mut JoinSet<Done>,
    ) -> (Flow, Vec<String>) {
        let message = match protocol::parse(self.protocol, text) {
            Ok(m) => m,
            Err(reason) => return (Flow::Close(close::BAD_REQUEST, reason), Vec::new()),
        };
        let ok = |out: Vec<String>| (Flow::Continue, out);
        match message {
            ClientMessage::Init(payload) => {
                if self.caller.is_some() {
                    let reason = "Too many initialisation requests".to_owned();
                    return (Flow::Close(close::TOO_MANY_INITS, reason), Vec::new());
                }
                let headers = init_headers(&self.headers, &payload);
                match crate::caller::caller(&self.state.auth, &headers, self.peer).await {
                    Ok(mut caller) => {
                        crate::caller::keep_headers(&self.state.engine, &mut caller, &headers);
                        caller.relay = self.relay;
                        self.caller = Some(caller);
                        // Read once: not kept for the connection's lifetime.
                        self.headers = HeaderMap::new();
                        ok(vec![protocol::ack()])
                    }
                    Err(e) => {
                        let e = match &self.foreign {
                            Some(origin) => format!(
                                "{e}; cookies are not read from another site's page ({origin}): send the token in connection_init"
                            ),
                            None => e.to_string(),
                        };
                        let reason = format!("Forbidden: {e}");
                        let out = match self.protocol {
                            Protocol::Legacy => vec![protocol::connection_error(&e)],
                            Protocol::TransportWs => Vec::new(),
                        };
                        (Flow::Close(close::FORBIDDEN, reason), out)
                    }
                }
            }
            ClientMessage::Start(id, payload) => {
                let Some(caller) = self.caller.clone() else {
                    return (
                        Flow::Close(close::UNAUTHORIZED, "Unauthorized".into()),
                        Vec::new(),
                    );
                };
                if self.ops.contains_key(&id) {
                    if self.protocol == Protocol::TransportWs {
                        let reason = format!("Subscriber for {id} already exists");
                        return (Flow::Close(close::DUPLICATE_ID, reason), Vec::new());
                    }
                    // The legacy protocol restarts an operation under a reused id.
                    self.stop(&id);
                }
                ok(self.start(id, payload, caller, sink, running).await)
            }
            ClientMessage::Stop(id) => {
                self.stop(&id);
                ok(Vec::new())
            }
            ClientMessage::Ping(payload) => ok(vec![protocol::pong(payload)]),
            ClientMessage::Pong => ok(Vec::new()),
            ClientMessage::Terminate => (Flow::Close(1000, "terminated".into()), Vec::new()),
        }
    }
}
