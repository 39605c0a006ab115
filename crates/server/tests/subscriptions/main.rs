//! Subscriptions over real WebSockets (tokio-tungstenite speaking both protocols)
//! against real servers on their own SQLite file and PostgreSQL database: first
//! results, change-driven and interval refresh, tenants, cohorts, protocol errors.
//! The npm `graphql-ws` client is exercised by `tests/conformance/ws.mjs`.

#[path = "../common/mod.rs"]
mod common;

mod client;
mod live;
mod notify;
mod protocol;
mod sessions;
mod stream;

use common::on_server_runtime;
pub use common::{Db, BOTH};
use grafton_server::{Running, ServeOptions};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

pub const ADMIN_SECRET: &str = "subscriptions-secret";

/// `user` reads and writes its own rows (`x-hasura-user-id`), without `secret`.
const CONFIG: &str = r#"
tables:
  items:
    permissions:
      user:
        select: {columns: [id, owner, label], filter: {owner: {_eq: X-Hasura-User-Id}}}
        update: {columns: [label], filter: {owner: {_eq: X-Hasura-User-Id}}}
"#;

struct Setup {
    sqlite: PathBuf,
    postgres: String,
}

fn setup() -> &'static Setup {
    static SETUP: OnceLock<Setup> = OnceLock::new();
    SETUP.get_or_init(|| {
        let (sqlite, postgres) = common::own_databases(
            "subscriptions",
            common::fixture_sql("subscriptions", false),
            common::fixture_sql("subscriptions", true),
        );
        Setup { sqlite, postgres }
    })
}

/// Options for a server over `db` with the config, an admin secret and a live-query
/// interval.
pub fn options(db: Db, interval: Duration) -> ServeOptions {
    let mut o = ServeOptions {
        database_url: database_url(db),
        port: 0,
        config: serde_norway::from_str(CONFIG).expect("config"),
        ..ServeOptions::default()
    };
    o.auth.admin_secret = Some(ADMIN_SECRET.into());
    o.live.interval = interval;
    o
}

/// The database behind `db`'s servers.
pub fn database_url(db: Db) -> String {
    match db {
        Db::Sqlite => setup().sqlite.display().to_string(),
        Db::Postgres => setup().postgres.clone(),
    }
}

/// Starts a server that lives for the whole process.
pub fn start(options: ServeOptions) -> &'static Running {
    let running = on_server_runtime(async move { grafton_server::start(&options).await })
        .unwrap_or_else(|e| panic!("grafton_server::start failed: {e}"));
    Box::leak(Box::new(running))
}

/// Writes to the database behind Grafton's back (an external writer).
pub fn write_directly(db: Db, sql: &str) {
    match db {
        Db::Sqlite => {
            let conn = rusqlite::Connection::open(&setup().sqlite).expect("open");
            conn.busy_timeout(Duration::from_secs(5)).expect("busy");
            conn.execute_batch(sql).expect("external write");
        }
        Db::Postgres => {
            grafton_testkit::psql(&setup().postgres, sql.as_bytes());
        }
    }
}

/// Posts `query` over HTTP as admin; returns the body.
pub async fn post(server: &Running, query: &str, variables: Value) -> Value {
    reqwest::Client::new()
        .post(server.url())
        .header("x-hasura-admin-secret", ADMIN_SECRET)
        .json(&json!({"query": query, "variables": variables}))
        .send()
        .await
        .expect("request")
        .json()
        .await
        .expect("JSON body")
}

/// Runs a test body on the servers' runtime.
pub fn run<T: Send>(fut: impl std::future::Future<Output = T> + Send) -> T {
    on_server_runtime(fut)
}
