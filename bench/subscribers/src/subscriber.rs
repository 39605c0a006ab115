//! One socket: `connection_init` as role `user` (its own `x-hasura-user-id`), one
//! subscription per row the user owns, and every result timed against the update's
//! commit.

use crate::stats::Shared;
use crate::Args;
use futures_util::{SinkExt, StreamExt};
use serde::Deserialize;
use serde_json::json;
use std::ops::RangeInclusive;
use std::sync::Arc;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;

/// The subscription, per target.
fn query(target: &str) -> &'static str {
    match target {
        "postgraphile" => "subscription ($id: Int!) { liveItemById(id: $id) { id v } }",
        _ => "subscription ($id: Int!) { live_items_by_pk(id: $id) { id v } }",
    }
}

/// A server message, read only as far as the run needs it (borrowing the frame's
/// text, so a result costs no allocation: the client must not be the limit).
#[derive(Deserialize)]
struct Incoming<'a> {
    #[serde(rename = "type", borrow)]
    kind: &'a str,
    #[serde(borrow)]
    id: Option<&'a str>,
    payload: Option<Payload>,
}

#[derive(Deserialize)]
struct Payload {
    data: Option<Data>,
}

/// The result's one field, under either target's name.
#[derive(Deserialize)]
struct Data {
    #[serde(alias = "liveItemById")]
    live_items_by_pk: Option<Row>,
}

#[derive(Deserialize)]
struct Row {
    v: i64,
}

/// Runs user `user`'s socket, subscribed to `rows`, until `done`; returns the last
/// `v` each subscription received (-1: none).
pub async fn run(
    user: usize,
    rows: RangeInclusive<usize>,
    args: Args,
    shared: Arc<Shared>,
    mut done: tokio::sync::watch::Receiver<bool>,
) -> Vec<i64> {
    let mut last = vec![-1; rows.clone().count()];
    if let Err(e) = subscribe(user, &rows, &args, &shared, &mut done, &mut last).await {
        shared.error(format!("user {user}: {e}"));
    }
    last
}

async fn subscribe(
    user: usize,
    rows: &RangeInclusive<usize>,
    args: &Args,
    shared: &Shared,
    done: &mut tokio::sync::watch::Receiver<bool>,
    last: &mut [i64],
) -> Result<(), String> {
    let mut request = args
        .url
        .as_str()
        .into_client_request()
        .map_err(|e| e.to_string())?;
    let protocol = HeaderValue::from_str(&args.protocol).map_err(|e| e.to_string())?;
    request
        .headers_mut()
        .insert("sec-websocket-protocol", protocol);
    // A small read buffer: tungstenite zeroes the free part of it before every read,
    // which at its default 128 KiB was half of this client's CPU.
    let config = WebSocketConfig::default().read_buffer_size(4096);
    let (mut socket, _) =
        tokio_tungstenite::connect_async_with_config(request, Some(config), false)
            .await
            .map_err(|e| format!("connect: {e}"))?;
    let query = query(&args.target);
    let payload = match args.target.as_str() {
        "postgraphile" => json!({}),
        _ => json!({"headers": {
            "x-hasura-admin-secret": args.admin_secret,
            "x-hasura-role": "user",
            "x-hasura-user-id": user.to_string(),
        }}),
    };
    let init = json!({"type": "connection_init", "payload": payload});
    let start = if args.protocol == "graphql-ws" {
        "start"
    } else {
        "subscribe"
    };
    let mut messages = vec![init];
    for (k, row) in rows.clone().enumerate() {
        messages.push(json!({"type": start, "id": k.to_string(),
            "payload": {"query": query, "variables": {"id": row}}}));
    }
    for message in messages {
        socket
            .send(Message::Text(message.to_string().into()))
            .await
            .map_err(|e| format!("send: {e}"))?;
    }
    loop {
        let frame = tokio::select! {
            frame = socket.next() => frame,
            _ = done.wait_for(|d| *d) => break,
        };
        let text = match frame {
            Some(Ok(Message::Text(text))) => text,
            Some(Ok(Message::Close(frame))) => return Err(format!("closed: {frame:?}")),
            Some(Ok(_)) => continue,
            Some(Err(e)) => return Err(format!("read: {e}")),
            None => return Err("closed".into()),
        };
        let message: Incoming = serde_json::from_str(&text).map_err(|e| format!("{e}: {text}"))?;
        match message.kind {
            "next" | "data" => {
                let v = (message.payload.and_then(|p| p.data))
                    .and_then(|d| d.live_items_by_pk)
                    .map(|row| row.v);
                let k = message.id.and_then(|id| id.parse::<usize>().ok());
                let (Some(v), Some(slot)) = (v, k.and_then(|k| last.get_mut(k))) else {
                    return Err(format!("unexpected result: {text}"));
                };
                shared.received(*slot, v);
                *slot = v;
            }
            "ping" => {
                let pong = json!({"type": "pong"}).to_string();
                let _ = socket.send(Message::Text(pong.into())).await;
            }
            "connection_ack" | "ka" | "pong" => {}
            _ => return Err(format!("unexpected message: {text}")),
        }
    }
    let _ = socket.close(None).await;
    Ok(())
}
