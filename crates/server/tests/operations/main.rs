//! Operating a running Grafton: schema reload (the metadata API, SIGHUP, `--watch`),
//! health and readiness, graceful shutdown and restarts, against real databases
//! and, for signals, the real `grafton` binary.

#[path = "../common/mod.rs"]
mod common;

mod console;
mod cors;
mod explain;
mod hasura_env;
mod lifecycle;
mod logs;
mod metadata_api;
mod metadata_crash;
mod metadata_drops;
mod metadata_more;
mod metadata_sync;
mod metrics;
mod reload;
mod run_sql;
mod traces;

pub use common::{Db, BOTH};
use serde_json::{json, Value};
use std::path::PathBuf;

pub const ADMIN_SECRET: &str = "operations-secret";

/// `items` in a database of the test's own (tests here change schemas).
pub fn own_database(name: &'static str, db: Db) -> String {
    let ddl = |postgres| common::fixture_sql("operations", postgres);
    let (sqlite, postgres) = common::own_databases(name, ddl(false), ddl(true));
    match db {
        Db::Sqlite => sqlite.display().to_string(),
        Db::Postgres => postgres,
    }
}

/// Runs DDL or writes on the database behind Grafton's back (a migration).
pub fn migrate(db: Db, url: &str, sql: &str) {
    match db {
        Db::Sqlite => {
            let conn = rusqlite::Connection::open(PathBuf::from(url)).expect("open");
            conn.busy_timeout(std::time::Duration::from_secs(5))
                .expect("busy");
            conn.execute_batch(sql).expect("migration");
        }
        Db::Postgres => {
            grafton_testkit::psql(url, sql.as_bytes());
        }
    }
}

/// Posts `query` as admin to `url`; returns the body.
pub async fn post(url: &str, query: &str) -> Value {
    reqwest::Client::new()
        .post(url)
        .header("x-hasura-admin-secret", ADMIN_SECRET)
        .json(&json!({ "query": query }))
        .send()
        .await
        .expect("request")
        .json()
        .await
        .expect("JSON body")
}

/// A free port on 127.0.0.1 (bound, then released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// A graphql-transport-ws socket to `server` (admin), subscribed to
/// `subscription { items { id } }`, once its first answer arrived.
pub async fn subscribed(
    server: &grafton_server::Running,
) -> tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>> {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::{client::IntoClientRequest, Message};
    let mut request = format!("ws://{}/v1/graphql", server.addr)
        .into_client_request()
        .expect("request");
    request.headers_mut().insert(
        "sec-websocket-protocol",
        "graphql-transport-ws".parse().expect("header"),
    );
    let (mut socket, _) = tokio_tungstenite::connect_async(request).await.expect("ws");
    let frame = |v: Value| Message::Text(v.to_string().into());
    let init =
        json!({"type": "connection_init", "payload": {"x-hasura-admin-secret": ADMIN_SECRET}});
    socket.send(frame(init)).await.expect("init");
    let subscribe = json!({"id": "1", "type": "subscribe", "payload": {"query": "subscription { items { id } }"}});
    socket.send(frame(subscribe)).await.expect("subscribe");
    loop {
        match socket.next().await {
            Some(Ok(Message::Text(t))) if t.contains("\"next\"") => return socket,
            Some(Ok(_)) => continue,
            other => panic!("no first answer: {other:?}"),
        }
    }
}
