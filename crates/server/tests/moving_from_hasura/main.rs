//! Hasura projects beyond tables (issue 16), fed from Hasura-format metadata and from
//! the config file, on both backends: custom names, enum tables, inherited roles,
//! and actions (issue 33).

mod actions;
mod cli;
mod computed_fields;
mod custom_names;
mod enum_tables;
mod functions;
mod inconsistent;
mod inherited_roles;
mod projects;
mod remote_js;
mod remote_relationships;
mod remote_schemas;
mod remote_to_remote;
mod remote_type_relationships;
mod schemas;
mod snapshots;
mod source;
mod through_the_api;
mod tracking;

use grafton_server::{Running, ServeOptions};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// Authors and their posts, the same on both backends.
pub const FIXTURE: &str = include_str!("../fixtures/sql/moving_from_hasura.sql");

/// A SQLite file and a PostgreSQL database holding [`FIXTURE`].
pub fn databases(name: &'static str) -> [String; 2] {
    databases_with(name, FIXTURE)
}

/// A SQLite file and a PostgreSQL database holding `sql`.
pub fn databases_with(name: &'static str, sql: &'static str) -> [String; 2] {
    std::thread::spawn(move || {
        let sqlite = grafton_testkit::sqlite_path(name);
        let conn = rusqlite::Connection::open(&sqlite).expect("create SQLite file");
        conn.execute_batch(sql).expect("SQLite fixture");
        let postgres = grafton_testkit::fresh_database(name);
        grafton_testkit::psql(&postgres, sql.as_bytes());
        [sqlite.display().to_string(), postgres]
    })
    .join()
    .unwrap_or_else(|p| std::panic::resume_unwind(p))
}

/// A Hasura metadata directory (v3 layout) with these table files.
pub fn metadata(name: &str, tables: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("grafton-{name}-{}", std::process::id()));
    let dir_tables = dir.join("databases/default/tables");
    std::fs::create_dir_all(&dir_tables).expect("metadata dir");
    let includes: String = (tables.iter())
        .map(|(file, _)| format!("- \"!include {file}\"\n"))
        .collect();
    std::fs::write(dir_tables.join("tables.yaml"), includes).expect("tables.yaml");
    for (file, text) in tables {
        std::fs::write(dir_tables.join(file), text).expect("table file");
    }
    dir
}

/// A server on `url` with the Hasura metadata at `dir`.
pub async fn serve(url: &str, dir: &Path) -> Running {
    let config = grafton_schema::hasura::load(dir).expect("metadata loads");
    grafton_server::start(&ServeOptions {
        database_url: url.to_owned(),
        port: 0,
        config,
        ..ServeOptions::default()
    })
    .await
    .expect("server starts")
}

/// Posts `query` as `role` (`None`: admin) with `x-hasura-user-id: 1`; the body.
pub async fn post(server: &Running, role: Option<&str>, query: &str) -> Value {
    let headers: &[(&str, &str)] = match role {
        Some(role) => &[("x-hasura-role", role), ("x-hasura-user-id", "1")],
        None => &[],
    };
    post_body(server, &json!({ "query": query }), headers).await
}

/// Posts a whole GraphQL request body with these headers; the answer's body.
pub async fn post_body(server: &Running, body: &Value, headers: &[(&str, &str)]) -> Value {
    let mut request = reqwest::Client::new().post(server.url()).json(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("answer");
    response.json().await.expect("json")
}

pub type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A `graphql-transport-ws` subscription with `headers` in its `connection_init`.
pub async fn subscribe(server: &Running, headers: Value, query: &str) -> Socket {
    use futures_util::SinkExt;
    use tokio_tungstenite::tungstenite::{client::IntoClientRequest, Message};
    let mut request = format!("ws://{}/v1/graphql", server.addr)
        .into_client_request()
        .expect("request");
    request.headers_mut().insert(
        "sec-websocket-protocol",
        "graphql-transport-ws".parse().expect("header"),
    );
    let (mut ws, _) = tokio_tungstenite::connect_async(request)
        .await
        .expect("socket");
    let init = json!({"type": "connection_init", "payload": {"headers": headers}});
    let start = json!({"type": "subscribe", "id": "1", "payload": {"query": query}});
    for m in [init, start] {
        ws.send(Message::Text(m.to_string().into()))
            .await
            .expect("send");
    }
    ws
}

/// The data of the next `next` message (after the ack), within 10 s.
pub async fn next_data(ws: &mut Socket) -> serde_json::Value {
    use futures_util::StreamExt;
    loop {
        let message = tokio::time::timeout(std::time::Duration::from_secs(10), ws.next())
            .await
            .expect("a message in time")
            .expect("open")
            .expect("message");
        let Ok(text) = message.into_text() else {
            continue;
        };
        let v: serde_json::Value = serde_json::from_str(&text).expect("json");
        match v["type"].as_str() {
            Some("next") => return v["payload"]["data"].clone(),
            Some("connection_ack" | "ka") => continue,
            _ => panic!("unexpected {v}"),
        }
    }
}

/// A server on `url` keeping its metadata in the database, with the admin
/// `secret`.
pub async fn store_server(url: String, secret: &str) -> Running {
    let mut o = ServeOptions {
        database_url: url,
        port: 0,
        metadata_store: true,
        ..ServeOptions::default()
    };
    o.auth.admin_secret = Some(secret.into());
    grafton_server::start(&o).await.expect("starts")
}

/// Posts `body` to the server's `/v1/metadata` with the admin `secret`; the
/// status and the answer.
pub async fn metadata_api(server: &Running, secret: &str, body: Value) -> (u16, Value) {
    let response = reqwest::Client::new()
        .post(format!("http://{}/v1/metadata", server.addr))
        .header("x-hasura-admin-secret", secret)
        .json(&body)
        .send()
        .await
        .expect("metadata");
    let status = response.status().as_u16();
    (status, response.json::<Value>().await.expect("JSON"))
}

/// The server's `get_inconsistent_metadata` answer (no admin secret set).
pub async fn inconsistent(server: &Running) -> Value {
    let answer = reqwest::Client::new()
        .post(format!("http://{}/v1/metadata", server.addr))
        .json(&json!({"type": "get_inconsistent_metadata", "args": {}}))
        .send()
        .await
        .expect("answer");
    answer.json().await.expect("json")
}
