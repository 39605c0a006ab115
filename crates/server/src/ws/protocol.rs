//! The two GraphQL-over-WebSocket protocols: reading client messages into one form
//! and writing server messages in each protocol's words.
//!
//! - `graphql-transport-ws` (the `graphql-ws` library): `connection_init`,
//!   `subscribe`, `complete`, `ping`/`pong`; the server answers `connection_ack`,
//!   `next`, `error`, `complete`, and closes with 44xx codes on protocol faults.
//! - `graphql-ws` (Apollo's `subscriptions-transport-ws`, Hasura's console):
//!   `connection_init`, `start`, `stop`, `connection_terminate`; the server answers
//!   `connection_ack`, `connection_error`, `ka`, `data`, `error`, `complete`.

use serde_json::{json, Map, Value};

/// Which protocol a socket speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Protocol {
    /// `graphql-transport-ws`.
    TransportWs,
    /// The legacy `graphql-ws` subprotocol.
    Legacy,
}

/// The subprotocol names, in the server's order of preference.
pub(crate) const SUBPROTOCOLS: [&str; 2] = ["graphql-transport-ws", "graphql-ws"];

impl Protocol {
    pub(crate) fn from_name(name: &str) -> Option<Self> {
        match name {
            "graphql-transport-ws" => Some(Self::TransportWs),
            "graphql-ws" => Some(Self::Legacy),
            _ => None,
        }
    }
}

/// A client message, whichever protocol sent it.
#[derive(Debug)]
pub(crate) enum ClientMessage {
    Init(Map<String, Value>),
    /// An operation to start: its id and its request object.
    Start(String, Value),
    /// The client stops an operation.
    Stop(String),
    Ping(Option<Value>),
    Pong,
    /// Legacy `connection_terminate`.
    Terminate,
}

/// Reads a text frame; `Err` is the reason for closing with 4400.
pub(crate) fn parse(protocol: Protocol, text: &str) -> Result<ClientMessage, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| format!("invalid message: {e}"))?;
    let Value::Object(mut message) = value else {
        return Err("invalid message: not a JSON object".into());
    };
    let kind = match message.get("type") {
        Some(Value::String(t)) => t.clone(),
        _ => return Err("invalid message: no \"type\"".into()),
    };
    let id = |message: &mut Map<String, Value>| match message.remove("id") {
        Some(Value::String(id)) if !id.is_empty() => Ok(id),
        _ => Err(format!("invalid message: \"{kind}\" needs a string \"id\"")),
    };
    match (protocol, kind.as_str()) {
        (_, "connection_init") => match message.remove("payload") {
            None | Some(Value::Null) => Ok(ClientMessage::Init(Map::new())),
            Some(Value::Object(p)) => Ok(ClientMessage::Init(p)),
            Some(_) => Err("invalid message: the connection_init payload must be an object".into()),
        },
        (Protocol::TransportWs, "subscribe") | (Protocol::Legacy, "start") => {
            let id = id(&mut message)?;
            match message.remove("payload") {
                Some(payload @ Value::Object(_)) => Ok(ClientMessage::Start(id, payload)),
                _ => Err(format!(
                    "invalid message: \"{kind}\" needs an object \"payload\""
                )),
            }
        }
        (Protocol::TransportWs, "complete") | (Protocol::Legacy, "stop") => {
            Ok(ClientMessage::Stop(id(&mut message)?))
        }
        (Protocol::TransportWs, "ping") => Ok(ClientMessage::Ping(message.remove("payload"))),
        (Protocol::TransportWs, "pong") => Ok(ClientMessage::Pong),
        (Protocol::Legacy, "connection_terminate") => Ok(ClientMessage::Terminate),
        _ => Err(format!("invalid message type \"{kind}\"")),
    }
}

/// `connection_ack`.
pub(crate) fn ack() -> String {
    json!({"type": "connection_ack"}).to_string()
}

/// A result for operation `id`: `body` is a response's JSON text.
pub(crate) fn next(protocol: Protocol, id: &str, body: &str) -> String {
    let kind = match protocol {
        Protocol::TransportWs => "next",
        Protocol::Legacy => "data",
    };
    let id = Value::String(id.to_owned());
    format!("{{\"type\":\"{kind}\",\"id\":{id},\"payload\":{body}}}")
}

/// An operation refused before it ran: `errors` is the list of GraphQL errors.
pub(crate) fn error(id: &str, errors: &Value) -> String {
    json!({"type": "error", "id": id, "payload": errors}).to_string()
}

/// Operation `id` is over.
pub(crate) fn complete(id: &str) -> String {
    json!({"type": "complete", "id": id}).to_string()
}

/// `pong` (graphql-transport-ws), echoing a ping's payload.
pub(crate) fn pong(payload: Option<Value>) -> String {
    match payload {
        Some(p) => json!({"type": "pong", "payload": p}).to_string(),
        None => json!({"type": "pong"}).to_string(),
    }
}

/// Keep-alive: `ping` (graphql-transport-ws) or `ka` (legacy).
pub(crate) fn keep_alive(protocol: Protocol) -> String {
    match protocol {
        Protocol::TransportWs => json!({"type": "ping"}).to_string(),
        Protocol::Legacy => json!({"type": "ka"}).to_string(),
    }
}

/// Legacy `connection_error`, sent before closing a connection whose init failed.
pub(crate) fn connection_error(message: &str) -> String {
    json!({"type": "connection_error", "payload": {"message": message}}).to_string()
}

/// Close codes (graphql-transport-ws; the legacy protocol closes with them too).
pub(crate) mod close {
    /// A message the protocol does not allow.
    pub(crate) const BAD_REQUEST: u16 = 4400;
    /// An operation before `connection_ack`.
    pub(crate) const UNAUTHORIZED: u16 = 4401;
    /// Credentials refused, or expired.
    pub(crate) const FORBIDDEN: u16 = 4403;
    /// No subprotocol the server speaks.
    pub(crate) const SUBPROTOCOL: u16 = 4406;
    /// No `connection_init` in time.
    pub(crate) const INIT_TIMEOUT: u16 = 4408;
    /// An operation id already in use.
    pub(crate) const DUPLICATE_ID: u16 = 4409;
    /// A second `connection_init`.
    pub(crate) const TOO_MANY_INITS: u16 = 4429;
}
