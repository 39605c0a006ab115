//! The socket's edges: reading credentials from `connection_init`, writing frames
//! with a deadline, closing with a code.

use axum::extract::ws::{CloseFrame, Message, WebSocket};
use axum::http::{HeaderMap, HeaderName, HeaderValue};
use futures_util::SinkExt;
use serde_json::{Map, Value};
use std::time::Duration;

/// Runs `f` when dropped.
pub(crate) fn scopeguard(f: impl FnOnce()) -> impl Drop {
    struct Guard<F: FnOnce()>(Option<F>);
    impl<F: FnOnce()> Drop for Guard<F> {
        fn drop(&mut self) {
            if let Some(f) = self.0.take() {
                f();
            }
        }
    }
    Guard(Some(f))
}

/// A copy of `headers` in memory of its own. Parsed values share the buffer the
/// request was read into (8 KiB or more): a connection keeping them for its
/// lifetime would pin that buffer, per connection.
pub(crate) fn owned(headers: &HeaderMap) -> HeaderMap {
    (headers.iter())
        .filter_map(|(name, value)| {
            // Names are owned already; values are copied out of the shared buffer.
            Some((
                name.clone(),
                HeaderValue::from_bytes(value.as_bytes()).ok()?,
            ))
        })
        .collect()
}

/// The headers a connection authenticates with: the upgrade request's, overridden
/// by `connection_init`'s `payload.headers`, or its top-level string keys (Hasura
/// takes both shapes).
pub(crate) fn init_headers(upgrade: &HeaderMap, payload: &Map<String, Value>) -> HeaderMap {
    let mut headers = upgrade.clone();
    let given = match payload.get("headers") {
        Some(Value::Object(h)) => h,
        _ => payload,
    };
    for (name, value) in given {
        let (Ok(name), Some(Ok(value))) = (
            HeaderName::try_from(name.to_ascii_lowercase()),
            value.as_str().map(HeaderValue::from_str),
        ) else {
            continue;
        };
        headers.insert(name, value);
    }
    headers
}

/// The upgrade's `Origin` when it is another site's: a page's own origin names the
/// host the request was sent to (`Host`, or `X-Forwarded-Host` behind a proxy).
/// Without `Origin` the client is not a browser, and carries nothing a browser adds
/// on its own. A page on another site must not borrow its visitor's cookies.
pub(crate) fn foreign_origin(headers: &HeaderMap) -> Option<String> {
    let origin = headers.get(axum::http::header::ORIGIN)?;
    let text = String::from_utf8_lossy(origin.as_bytes()).into_owned();
    let authority = url::Url::parse(&text).ok().and_then(|u| {
        let host = u.host_str()?.to_ascii_lowercase();
        Some(match u.port() {
            Some(port) => format!("{host}:{port}"),
            None => host,
        })
    });
    let own = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|h| {
                authority.as_deref().is_some_and(|a| {
                    let h = h.trim().to_ascii_lowercase();
                    // A default port may be written or left out.
                    h == a || h.strip_suffix(":80").or(h.strip_suffix(":443")) == Some(a)
                })
            })
    };
    (!own("host") && !own("x-forwarded-host")).then_some(text)
}

pub(crate) fn json_error(message: &str, code: &str) -> Value {
    serde_json::json!([{ "message": message, "extensions": { "code": code } }])
}

/// Sends one frame, giving up (false) when it fails or the client does not take
/// it within `wait`: a client that stops reading cannot hold its connection.
pub(crate) async fn send(socket: &mut WebSocket, message: Message, wait: Duration) -> bool {
    matches!(
        tokio::time::timeout(wait, socket.send(message)).await,
        Ok(Ok(()))
    )
}

/// Sends text frames in one write (queued, then flushed once), giving up as [`send`]
/// does when the client takes no step of it within `wait`.
pub(crate) async fn send_all(
    socket: &mut WebSocket,
    messages: Vec<String>,
    wait: Duration,
) -> bool {
    if messages.is_empty() {
        return true;
    }
    // Each step (a frame, or the flush) gets `wait`: a batch of large answers to a
    // slow reader gets as long as one frame each did.
    for message in messages {
        let fed = tokio::time::timeout(wait, socket.feed(Message::Text(message.into())));
        if !matches!(fed.await, Ok(Ok(()))) {
            return false;
        }
    }
    matches!(tokio::time::timeout(wait, socket.flush()).await, Ok(Ok(())))
}

pub(crate) async fn close_with(
    socket: &mut WebSocket,
    code: u16,
    reason: &str,
) -> Result<(), axum::Error> {
    // A close reason is at most 123 bytes.
    let mut end = reason.len().min(123);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    let frame = CloseFrame {
        code,
        reason: reason[..end].into(),
    };
    socket.send(Message::Close(Some(frame))).await
}
