//! Limits, timeouts and the size of responses: their own SQLite file and PostgreSQL
//! database (a 50-node chain, a few large rows and a view that runs for minutes),
//! servers started with `api_limits` in their config, and real HTTP requests.
//! Every limit is tried at its boundary: just under passes, just over fails.

#[path = "../common/mod.rs"]
mod common;

mod admission;
mod batch;
mod connections;
mod health;
mod rate;
mod response_size;
mod shape_and_cost;
mod time;
mod trusted;

use common::{on_server_runtime, start_server};
pub use common::{Db, BOTH};
use grafton_server::ServeOptions;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::OnceLock;

pub const ADMIN_SECRET: &str = "limits-secret";

/// Rows in `nodes`: node `i` has parent `i - 1`.
pub const NODES: usize = 50;

/// `tests/fixtures/sql/limits*.sql`, with the rows of `nodes` and `blobs`.
fn ddl(postgres: bool) -> String {
    let nodes: Vec<String> = (1..=NODES)
        .map(|i| {
            let parent = if i == 1 {
                "NULL".to_owned()
            } else {
                (i - 1).to_string()
            };
            format!("({i}, {parent}, 'n{i}')")
        })
        .collect();
    // 20 rows of 1,000 characters: 20 kB of response.
    let blobs: Vec<String> = (1..=20)
        .map(|i| format!("({i}, '{}')", "x".repeat(1000)))
        .collect();
    format!(
        "{}
         INSERT INTO nodes (id, parent_id, label) VALUES {};
         INSERT INTO blobs (id, body) VALUES {};",
        common::fixture_sql("limits", postgres),
        nodes.join(", "),
        blobs.join(", ")
    )
}

/// Roles: `user` (the global limits), `deep` (a deeper limit), `capped` (a row
/// limit of 5 on `nodes`), `small` (2,000-byte responses), `hasty` (1 s of time),
/// `solo` (3 s, one request at a time), `limited` (3 requests a minute per user) and `ops` (4
/// root fields a minute per IP).
/// Admin is exempt except for the depth limit `per_role.admin` gives it.
pub const CONFIG: &str = r#"
api_limits:
  depth_limit: {global: 4, per_role: {deep: 8, admin: 12}}
  node_limit: {global: 20}
  root_field_limit: {global: 3}
  batch_limit: {global: 3}
  cost_limit: {global: 1000}
  max_response_bytes: {per_role: {small: 2000}}
  time_limit: {per_role: {hasty: 1, solo: 3}}
  max_concurrent: {per_role: {solo: 1}}
  rate_limit:
    per_role:
      limited: {max_reqs_per_min: 3, unique_params: [x-hasura-user-id]}
      ops: {max_reqs_per_min: 4, unique_params: IP, per_root_field: true}
tables:
  nodes:
    permissions:
      user: {select: {columns: "*", filter: {}, allow_aggregations: true}}
      deep: {select: {columns: "*", filter: {}}}
      capped: {select: {columns: "*", filter: {}, limit: 5}}
      limited: {select: {columns: "*", filter: {}}}
      ops: {select: {columns: "*", filter: {}}}
  blobs:
    permissions:
      user: {select: {columns: "*", filter: {}}}
      small: {select: {columns: "*", filter: {}}}
  slow:
    permissions:
      hasty: {select: {columns: "*", filter: {}}}
      solo: {select: {columns: "*", filter: {}}}
  sleepy:
    permissions:
      hasty:
        select: {columns: "*", filter: {}}
        insert: {columns: "*", check: {}}
      solo:
        select: {columns: "*", filter: {}}
        insert: {columns: "*", check: {}}
"#;

struct Setup {
    sqlite: PathBuf,
    postgres: String,
    config: grafton_schema::Config,
}

fn setup() -> &'static Setup {
    static SETUP: OnceLock<Setup> = OnceLock::new();
    SETUP.get_or_init(|| {
        let (sqlite, postgres) = common::own_databases("limits", ddl(false), ddl(true));
        let config = serde_norway::from_str(CONFIG).expect("config");
        Setup {
            sqlite,
            postgres,
            config,
        }
    })
}

pub fn database_url(db: Db) -> String {
    match db {
        Db::Sqlite => setup().sqlite.display().to_string(),
        Db::Postgres => setup().postgres.clone(),
    }
}

/// Options for a server over `db` with the limits config and an admin secret.
pub fn options(db: Db) -> ServeOptions {
    let mut o = ServeOptions {
        database_url: database_url(db),
        port: 0,
        config: setup().config.clone(),
        ..ServeOptions::default()
    };
    o.auth.admin_secret = Some(ADMIN_SECRET.into());
    o
}

/// The GraphQL URL of the shared server for `db`.
pub fn url(db: Db) -> &'static str {
    static SQLITE: OnceLock<String> = OnceLock::new();
    static POSTGRES: OnceLock<String> = OnceLock::new();
    let cell = match db {
        Db::Sqlite => &SQLITE,
        Db::Postgres => &POSTGRES,
    };
    cell.get_or_init(|| start_server(options(db)) + "/v1/graphql")
}

/// Starts a server of its own (for options the shared ones lack).
pub fn start(options: ServeOptions) -> String {
    start_server(options) + "/v1/graphql"
}

/// Posts a JSON body as `role` (`None`: admin); returns the status and the body.
pub async fn post_json(url: &str, role: Option<&str>, body: &Value) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("x-hasura-admin-secret", ADMIN_SECRET)
        .json(body);
    if let Some(role) = role {
        request = request.header("x-hasura-role", role);
    }
    let response = request.send().await.expect("request");
    let status = response.status().as_u16();
    (status, response.json().await.expect("JSON body"))
}

/// Posts `query` as `role` (`None`: admin); returns the status and the body.
pub async fn post(url: &str, role: Option<&str>, query: &str, variables: Value) -> (u16, Value) {
    post_json(url, role, &json!({"query": query, "variables": variables})).await
}

/// A Hasura metadata directory named `name`: `nodes` readable by `user`, plus the
/// project-wide `files` (file name, YAML).
pub fn hasura_metadata(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("grafton-{name}-{}", std::process::id()));
    let tables = dir.join("databases/default/tables");
    std::fs::create_dir_all(&tables).expect("metadata dir");
    std::fs::write(
        tables.join("public_nodes.yaml"),
        "table: {schema: public, name: nodes}\nobject_relationships:\n  - {name: parent, using: {foreign_key_constraint_on: parent_id}}\nselect_permissions:\n  - role: user\n    permission: {columns: '*', filter: {}}\n",
    )
    .expect("table file");
    for (file, yaml) in files {
        std::fs::write(dir.join(file), yaml).expect("metadata file");
    }
    dir
}

/// The body's `extensions.code`, or "" when it has no error.
pub fn code(body: &Value) -> &str {
    body["errors"][0]["extensions"]["code"]
        .as_str()
        .unwrap_or("")
}

/// Asserts success and returns `data`.
pub fn data(body: Value) -> Value {
    assert!(body.get("errors").is_none(), "unexpected errors: {body}");
    body["data"].clone()
}

/// `parent { parent { … id } }` nested so that the whole operation is `depth` deep.
pub fn chain(depth: usize) -> String {
    let mut q = "id".to_owned();
    for _ in 1..depth.saturating_sub(1) {
        q = format!("parent {{ {q} }}");
    }
    format!("{{ nodes_by_pk(id: {NODES}) {{ {q} }} }}")
}

/// Runs a test body on the servers' runtime.
pub fn run<T: Send>(fut: impl std::future::Future<Output = T> + Send) -> T {
    on_server_runtime(fut)
}
