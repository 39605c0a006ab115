//! The adversarial cases of the hardening review (issue 27), kept so every later
//! change runs them: permissions revoked under open subscriptions, cross-site
//! WebSockets, SQL in error messages, SQLite's `DISTINCT ON` under inherited roles,
//! VOLATILE functions on read paths, per-session subscription limits, the live-query
//! memory budget, a hung Redis, and enum and naming edge cases. Each ran against
//! the code before its fix and failed.

#[path = "../subscriptions/client.rs"]
#[allow(dead_code)]
mod client;
#[path = "../common/mod.rs"]
mod common;

mod auth_hook;
mod cors;
mod distinct;
mod enums;
mod errors;
mod live;
mod names;
mod origin;
mod redis;
mod volatile;

use grafton_server::{Running, ServeOptions};
use serde_json::{json, Value};

/// The admin secret of every server here (the WebSocket client reads it).
pub const ADMIN_SECRET: &str = "hardening-secret";

/// `documents`: rows 1–2 owned by `a`, 3–4 by `b`.
pub const DOCUMENTS: &str = include_str!("../fixtures/sql/hardening.sql");

/// A SQLite file and a PostgreSQL database (in that order) holding `sql`.
pub fn databases(name: &'static str, sql: &str) -> [String; 2] {
    let (sqlite, postgres) = common::own_databases(name, sql.to_owned(), sql.to_owned());
    [sqlite.display().to_string(), postgres]
}

/// Options for a server over `url` with the Grafton config `yaml` and the admin secret.
pub fn options(url: &str, yaml: &str) -> ServeOptions {
    let mut o = ServeOptions {
        database_url: url.to_owned(),
        port: 0,
        config: serde_norway::from_str(yaml).expect("config"),
        ..ServeOptions::default()
    };
    o.auth.admin_secret = Some(ADMIN_SECRET.into());
    o
}

/// Starts a server over `url` with the config `yaml`.
pub async fn serve(url: &str, yaml: &str) -> Running {
    grafton_server::start(&options(url, yaml))
        .await
        .expect("server starts")
}

/// Sends `reload_metadata` as admin: the status and the body.
pub async fn reload(server: &Running) -> (u16, String) {
    let response = reqwest::Client::new()
        .post(format!("http://{}/v1/metadata", server.addr))
        .header("x-hasura-admin-secret", ADMIN_SECRET)
        .json(&json!({"type": "reload_metadata", "args": {}}))
        .send()
        .await
        .expect("reload");
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

/// Posts `query` as `role` (`None`: admin) with `x-hasura-user-id: user`; the body
/// (checked for SQL by the common harness).
pub async fn post_as(server: &Running, role: Option<&str>, user: &str, query: &str) -> Value {
    let mut headers = vec![("x-hasura-admin-secret", ADMIN_SECRET)];
    if let Some(role) = role {
        headers.push(("x-hasura-role", role));
        headers.push(("x-hasura-user-id", user));
    }
    let (_, body, _) =
        common::post_with_headers(&server.url(), &headers, &json!({ "query": query })).await;
    body
}
