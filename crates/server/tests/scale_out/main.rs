//! Scale-out against real components: a PostgreSQL primary with a streaming
//! replica (`pg_basebackup -R`), restarts of the database under load, and (with
//! `redis-server`) several Grafton instances sharing their state.

mod failover;
mod instances;
mod replicas;

use grafton_server::{Running, ServeOptions};
use serde_json::{json, Value};
use std::time::Duration;

/// A table, and a view that says whether the server answering is a standby.
pub const FIXTURE: &str = include_str!("../fixtures/sql/scale_out.sql");

/// A server on `url` with `options` changed by `change`.
pub async fn serve(url: &str, change: impl FnOnce(&mut ServeOptions)) -> Running {
    let mut options = ServeOptions {
        database_url: url.to_owned(),
        port: 0,
        pool_size: 4,
        ..ServeOptions::default()
    };
    change(&mut options);
    grafton_server::start(&options)
        .await
        .expect("server starts")
}

/// Posts `query` (as admin); the status and the body.
pub async fn post(client: &reqwest::Client, server: &Running, query: &str) -> (u16, Value) {
    let response = client
        .post(server.url())
        .timeout(Duration::from_secs(10))
        .json(&json!({ "query": query }))
        .send()
        .await
        .expect("the server answers");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// Whether the answering database is a standby: `Some(true)` for a replica,
/// `Some(false)` for the primary, `None` for an error.
pub async fn standby(client: &reqwest::Client, server: &Running) -> Option<bool> {
    let (_, body) = post(client, server, "{ whereami { standby } }").await;
    body["data"]["whereami"][0]["standby"].as_bool()
}

/// Runs `f` (a `pg_ctl` call) off the runtime's threads.
pub async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f).await.expect("pg_ctl")
}
