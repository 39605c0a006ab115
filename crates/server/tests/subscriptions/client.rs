//! A small GraphQL-over-WebSocket client on tokio-tungstenite: it speaks either
//! protocol, answers pings, and skips keep-alives.

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::time::Duration;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::Message;

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// The two subprotocols.
pub const TRANSPORT_WS: &str = "graphql-transport-ws";
pub const LEGACY: &str = "graphql-ws";

pub struct Client {
    socket: Socket,
    /// Which subprotocol the server chose.
    pub protocol: String,
}

/// What the server did next.
#[derive(Debug, PartialEq)]
pub enum Event {
    Message(Value),
    Closed(u16, String),
    /// Nothing arrived in time.
    Silent,
}

impl Client {
    /// Opens a socket to `server` asking for `protocol` (`None`: no subprotocol).
    pub async fn open(server: &grafton_server::Running, protocol: Option<&str>) -> Self {
        Self::try_open(server, protocol)
            .await
            .expect("WebSocket handshake")
    }

    /// [`Client::open`], or the handshake's failure.
    pub async fn try_open(
        server: &grafton_server::Running,
        protocol: Option<&str>,
    ) -> Result<Self, tokio_tungstenite::tungstenite::Error> {
        Self::open_with(server, protocol, &[]).await
    }

    /// [`Client::try_open`] with more headers on the upgrade request (`Origin`,
    /// `Cookie`…).
    pub async fn open_with(
        server: &grafton_server::Running,
        protocol: Option<&str>,
        headers: &[(&'static str, &str)],
    ) -> Result<Self, tokio_tungstenite::tungstenite::Error> {
        Self::open_at(server, "/v1/graphql", protocol, headers).await
    }

    /// [`Client::open_with`] at another of the server's endpoints (`path`).
    pub async fn open_at(
        server: &grafton_server::Running,
        path: &str,
        protocol: Option<&str>,
        headers: &[(&'static str, &str)],
    ) -> Result<Self, tokio_tungstenite::tungstenite::Error> {
        let url = format!("ws://{}{path}", server.addr);
        let mut request = url.into_client_request().expect("request");
        if let Some(p) = protocol {
            request.headers_mut().insert(
                "sec-websocket-protocol",
                HeaderValue::from_str(p).expect("header"),
            );
        }
        for (name, value) in headers {
            let value = HeaderValue::from_str(value).expect("header");
            request.headers_mut().insert(*name, value);
        }
        let (socket, response) = tokio_tungstenite::connect_async(request).await?;
        let protocol = response
            .headers()
            .get("sec-websocket-protocol")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        Ok(Self { socket, protocol })
    }

    /// Opens a socket and completes `connection_init` with `payload`; panics unless
    /// acknowledged.
    pub async fn connect(server: &grafton_server::Running, protocol: &str, payload: Value) -> Self {
        Self::connect_at(server, "/v1/graphql", protocol, payload).await
    }

    /// [`Client::connect`] at another of the server's endpoints (`path`).
    pub async fn connect_at(
        server: &grafton_server::Running,
        path: &str,
        protocol: &str,
        payload: Value,
    ) -> Self {
        let opened = Self::open_at(server, path, Some(protocol), &[]).await;
        let mut c = opened.expect("WebSocket handshake");
        c.send(json!({"type": "connection_init", "payload": payload}))
            .await;
        match c.next(Duration::from_secs(5)).await {
            Event::Message(m) if m["type"] == "connection_ack" => c,
            other => panic!("no connection_ack: {other:?}"),
        }
    }

    /// Connects as admin.
    pub async fn admin(server: &grafton_server::Running, protocol: &str) -> Self {
        let payload = json!({"headers": {"x-hasura-admin-secret": crate::ADMIN_SECRET}});
        Self::connect(server, protocol, payload).await
    }

    /// Connects as role `user` with `x-hasura-user-id: user_id`.
    pub async fn user(server: &grafton_server::Running, protocol: &str, user_id: &str) -> Self {
        let payload = json!({"headers": {
            "x-hasura-admin-secret": crate::ADMIN_SECRET,
            "x-hasura-role": "user",
            "x-hasura-user-id": user_id,
        }});
        Self::connect(server, protocol, payload).await
    }

    pub async fn send(&mut self, message: Value) {
        self.send_text(&message.to_string()).await;
    }

    pub async fn send_text(&mut self, text: &str) {
        self.socket
            .send(Message::Text(text.into()))
            .await
            .expect("send");
    }

    /// Starts operation `id` (`subscribe` or `start`, by protocol).
    pub async fn start(&mut self, id: &str, query: &str, variables: Value) {
        let kind = if self.protocol == LEGACY {
            "start"
        } else {
            "subscribe"
        };
        self.send(
            json!({"type": kind, "id": id, "payload": {"query": query, "variables": variables}}),
        )
        .await;
    }

    /// Stops operation `id`.
    pub async fn stop(&mut self, id: &str) {
        let kind = if self.protocol == LEGACY {
            "stop"
        } else {
            "complete"
        };
        self.send(json!({"type": kind, "id": id})).await;
    }

    /// The next message that is not a keep-alive, or the close, within `wait`.
    pub async fn next(&mut self, wait: Duration) -> Event {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let frame = match tokio::time::timeout_at(deadline, self.socket.next()).await {
                Err(_) => return Event::Silent,
                Ok(None) | Ok(Some(Err(_))) => return Event::Closed(1006, String::new()),
                Ok(Some(Ok(frame))) => frame,
            };
            match frame {
                Message::Text(text) => {
                    let value: Value = serde_json::from_str(&text).expect("JSON message");
                    if value["type"] == "error" || value["payload"].get("errors").is_some() {
                        crate::common::assert_no_sql(&value["payload"].to_string());
                    }
                    match value["type"].as_str() {
                        Some("ka") | Some("pong") => continue,
                        Some("ping") => {
                            self.send(json!({"type": "pong"})).await;
                            continue;
                        }
                        _ => return Event::Message(value),
                    }
                }
                Message::Close(frame) => {
                    return match frame {
                        Some(f) => Event::Closed(u16::from(f.code), f.reason.to_string()),
                        None => Event::Closed(u16::from(CloseCode::Status), String::new()),
                    }
                }
                _ => continue,
            }
        }
    }

    /// The next message, which must be a result for `id`: its payload.
    pub async fn result(&mut self, id: &str) -> Value {
        self.result_within(id, Duration::from_secs(5)).await
    }

    /// [`Client::result`], waiting up to `wait`.
    pub async fn result_within(&mut self, id: &str, wait: Duration) -> Value {
        match self.next(wait).await {
            Event::Message(m) if m["id"] == id && (m["type"] == "next" || m["type"] == "data") => {
                m["payload"].clone()
            }
            other => panic!("expected a result for {id}, got {other:?}"),
        }
    }

    /// The next message, which must be an `error` for `id` (within `wait`): its
    /// first error's code.
    pub async fn error_code(&mut self, id: &str, wait: Duration) -> String {
        match self.next(wait).await {
            Event::Message(m) if m["type"] == "error" && m["id"] == id => m["payload"][0]
                ["extensions"]["code"]
                .as_str()
                .unwrap_or("")
                .to_owned(),
            other => panic!("expected an error for {id}, got {other:?}"),
        }
    }

    /// Closes the socket.
    pub async fn close(mut self) {
        let _ = self.socket.close(None).await;
    }
}
