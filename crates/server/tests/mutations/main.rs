//! Mutation and permission tests: their own SQLite file and PostgreSQL database
//! (writes would disturb the read tests' fixed data), one server per backend with
//! a config that attaches JSON Schemas to columns and gives two roles permissions
//! on a multi-tenant fixture. Tests run one at a time ([`serial`]) so table
//! checksums and counts see only their own writes.

#[path = "../common/mod.rs"]
mod common;

mod concurrency;
mod errors;
mod inserts;
mod partial_roles;
mod permissions;
mod rule_language;
mod surface;
mod updates_deletes;
mod upserts;
mod validation;
mod views;

use common::{on_server_runtime, start_server};
pub use common::{Db, BOTH};
use grafton_server::ServeOptions;
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::OnceLock;

/// Column schemas, and two roles on the multi-tenant tables: `user` (its own
/// organisation's rows, some columns, writes to its own documents) and `manager`
/// (all columns and aggregates of its organisation).
const CONFIG: &str = r#"
tables:
  # A writable view: its key finds the rows it wrote.
  acme_documents:
    primary_key: [id]
    relationships:
      owner: {type: object, table: users, columns: {owner_id: id}}
  venues:
    columns:
      details:
        json_schema: schemas/details.json
  events:
    columns:
      code:
        json_schema: {type: string, pattern: '^[A-Z]{3}$'}
  projects:
    permissions:
      # An upsert's conflict branch must obey the update permission: check and set.
      planner:
        select: {columns: [id, code, budget, updated_by]}
        insert: {columns: [code, budget], check: {budget: {_lt: 5000}}}
        update:
          columns: [budget]
          check: {budget: {_lt: 1000}}
          set: {updated_by: X-Hasura-User-Id}
      # Every column it may update is a preset: updates set the presets only.
      stamper:
        select: {columns: [id, code, updated_by]}
        update: {columns: [], set: {updated_by: X-Hasura-User-Id}}
  organisations:
    permissions:
      anonymous:
        select: {columns: [name]}
      user:
        select: {columns: [id, name], filter: {id: {_eq: X-Hasura-Org-Id}}}
      user_short:
        select: {columns: [id, name], filter: {id: X-Hasura-Org-Id}}
      browser:
        select: {columns: [id], filter: {id: X-Hasura-Org-Id}}
      manager:
        select: {columns: "*", filter: {id: {_eq: X-Hasura-Org-Id}}, allow_aggregations: true}
  users:
    # A one-to-one through the remote table's key, and a manual one inserted after
    # its parent (Hasura's foreign_key_constraint_on: {table, column} and insertion_order).
    foreign_key_relationships:
      profile: {type: object, table: profiles, columns: [user_id]}
    relationships:
      bio_row: {type: object, table: profiles, columns: {id: user_id}, insertion_order: after_parent}
    permissions:
      user:
        select: {columns: [id, org_id, name], filter: {org_id: {_eq: X-Hasura-Org-Id}}}
      user_short:
        select: {columns: [id, org_id, name], filter: {$and: [{org_id: {$eq: X-Hasura-Org-Id}}]}}
      manager:
        select: {columns: "*", filter: {org_id: {_eq: X-Hasura-Org-Id}}, allow_aggregations: true}
  documents:
    permissions:
      user:
        select:
          columns: [id, org_id, owner_id, title, body]
          filter: {org: {id: {_eq: X-Hasura-Org-Id}}}
          limit: 2
        insert:
          columns: [id, title, body]
          check: {title: {_nlike: "%forbidden%"}}
          set: {org_id: X-Hasura-Org-Id, owner_id: X-Hasura-User-Id}
        update:
          columns: [title, body]
          filter: {owner_id: {_eq: X-Hasura-User-Id}}
          check: {title: {_nlike: "%forbidden%"}}
        delete:
          filter: {owner_id: {_eq: X-Hasura-User-Id}}
      # The same rules as `user`, in Hasura's shorthand and `$` spellings.
      user_short:
        select:
          columns: [id, org_id, owner_id, title, body]
          filter: {org: {id: X-Hasura-Org-Id}}
          limit: 2
        insert:
          columns: [id, title, body]
          check: {$not: {title: {$like: "%forbidden%"}}}
          set: {org_id: X-Hasura-Org-Id, owner_id: X-Hasura-User-Id}
        update:
          columns: [title, body]
          filter: {owner_id: X-Hasura-User-Id}
          check: {title: {$nlike: "%forbidden%"}}
        delete:
          filter: {$or: [{owner_id: X-Hasura-User-Id}]}
      manager:
        select: {columns: "*", filter: {org_id: {_eq: X-Hasura-Org-Id}}, allow_aggregations: true}
        update: {columns: [secret], filter: {org_id: {_eq: X-Hasura-Org-Id}}}
      # Partial roles, as Hasura builds them: one that may count but see no column,
      # one whose limit caps lists but not counts, one that may write but not read.
      counter:
        select: {columns: [], allow_aggregations: true, filter: {org_id: X-Hasura-Org-Id}}
      capped:
        select: {columns: [id, title], allow_aggregations: true, limit: 1, filter: {org_id: X-Hasura-Org-Id}}
      writer:
        insert:
          columns: [title, body]
          set: {org_id: X-Hasura-Org-Id, owner_id: X-Hasura-User-Id}
        update: {columns: [body], filter: {owner_id: X-Hasura-User-Id}}
        delete: {filter: {owner_id: X-Hasura-User-Id}}
      # Hasura's query_root_fields: only the aggregate at the root; relationships still reach it.
      browser:
        select: {columns: [id, title], allow_aggregations: true, query_root_fields: [select_aggregate], filter: {org_id: X-Hasura-Org-Id}}
      # Writes only trusted backends may make (admin secret + the backend-only header).
      service:
        select: {columns: [id, title]}
        insert: {columns: [title, org_id], backend_only: true}
"#;

/// The config: a JSON Schema file with a transitive `$ref` for `venues.details`,
/// an inline schema for the text column `events.code`.
fn config_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("grafton-mut-config-{}", std::process::id()));
        let schemas = dir.join("schemas");
        std::fs::create_dir_all(&schemas).expect("config dir");
        let write = |name: &str, v: Value| {
            std::fs::write(schemas.join(name), v.to_string()).expect("schema file")
        };
        write(
            "details.json",
            json!({
                "type": "object",
                "properties": {
                    "address": {"$ref": "address.json"},
                    "tags": {"type": "array", "items": {"type": "string"}}
                },
                "required": ["address"]
            }),
        );
        write(
            "address.json",
            json!({
                "type": "object",
                "properties": {"street": {"type": "string"}, "zip": {"$ref": "common.json#/$defs/zip"}},
                "required": ["zip"]
            }),
        );
        write(
            "common.json",
            json!({"$defs": {"zip": {"type": "string", "pattern": "^[0-9]{3}-[0-9]{4}$"}}}),
        );
        std::fs::write(dir.join("grafton.yaml"), CONFIG).expect("config file");
        dir
    })
}

struct Setup {
    sqlite: PathBuf,
    postgres: String,
}

fn setup() -> &'static Setup {
    static SETUP: OnceLock<Setup> = OnceLock::new();
    SETUP.get_or_init(|| {
        let (sqlite, postgres) = common::own_databases(
            "mut",
            common::fixture_sql("mutations", false),
            common::fixture_sql("mutations", true),
        );
        Setup { sqlite, postgres }
    })
}

/// The SQLite file, for tests that start their own engine on it.
pub fn setup_sqlite() -> String {
    setup().sqlite.display().to_string()
}

/// The PostgreSQL database's URL, for tests that start their own server on it.
pub fn setup_postgres() -> String {
    setup().postgres.clone()
}

/// The GraphQL endpoint of a backend's server, started on first use.
pub fn url(db: Db) -> &'static str {
    static SQLITE: OnceLock<String> = OnceLock::new();
    static POSTGRES: OnceLock<String> = OnceLock::new();
    let start = |database_url: String| {
        let config = grafton_server::load_config(&config_dir().join("grafton.yaml"))
            .unwrap_or_else(|e| panic!("config: {e}"));
        format!(
            "{}/v1/graphql",
            start_server(ServeOptions {
                database_url,
                port: 0,
                pool_size: 8,
                config,
                ..Default::default()
            })
        )
    };
    match db {
        Db::Sqlite => SQLITE.get_or_init(|| start(setup().sqlite.display().to_string())),
        Db::Postgres => POSTGRES.get_or_init(|| start(setup().postgres.clone())),
    }
}

/// One test at a time: they share tables, and checksums must see only their own writes.
pub async fn serial() -> tokio::sync::MutexGuard<'static, ()> {
    static LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    LOCK.lock().await
}

/// POSTs a request; returns status and body.
pub async fn post(db: Db, query: &str, variables: Value) -> (StatusCode, Value) {
    let mut body = json!({ "query": query });
    if !variables.is_null() {
        body["variables"] = variables;
    }
    let (status, value, _) = common::post_to(url(db), &body).await;
    (status, value)
}

/// POSTs as `role` of organisation `org`, user `user`.
pub async fn post_as(
    db: Db,
    role: &str,
    (org, user): (&str, &str),
    query: &str,
    variables: Value,
) -> (StatusCode, Value) {
    let mut body = json!({ "query": query });
    if !variables.is_null() {
        body["variables"] = variables;
    }
    let headers = [
        ("x-hasura-role", role),
        ("x-hasura-org-id", org),
        ("X-Hasura-User-Id", user),
    ];
    let (status, value, _) = common::post_with_headers(url(db), &headers, &body).await;
    (status, value)
}

/// POSTs and asserts success; returns `data`.
pub async fn ok(db: Db, query: &str, variables: Value) -> Value {
    let (status, v) = post(db, query, variables).await;
    assert_eq!(status, StatusCode::OK, "{db:?}: {v}");
    assert!(v.get("errors").is_none(), "{db:?}: errors for {query}: {v}");
    v["data"].clone()
}

/// POSTs, asserts an error with `code` and no data; returns the first error.
pub async fn fails(db: Db, query: &str, variables: Value, code: &str) -> Value {
    let (_, v) = post(db, query, variables).await;
    assert_eq!(
        v["errors"][0]["extensions"]["code"], code,
        "{db:?}: expected {code} for {query}: {v}"
    );
    assert!(v["data"].is_null(), "{db:?}: data despite the error: {v}");
    v["errors"][0].clone()
}

/// A checksum of every table's contents, straight from the database.
pub fn checksum(db: Db) -> String {
    match db {
        Db::Sqlite => {
            let conn = rusqlite::Connection::open(&setup().sqlite).expect("open SQLite");
            let mut out = String::new();
            for table in ["venues", "events", "counters", "documents", "projects"] {
                let sql = format!("SELECT quote(t.rowid) || ':' || json_array(t.*) FROM \"{table}\" AS t ORDER BY t.rowid");
                let sql = sql.replace("json_array(t.*)", &all_columns(&conn, table));
                let mut stmt = conn.prepare(&sql).expect("checksum query");
                let rows: Vec<String> = stmt
                    .query_map([], |r| r.get(0))
                    .expect("checksum rows")
                    .collect::<Result<_, _>>()
                    .expect("checksum values");
                out.push_str(&format!("{table}={}\n", rows.join(";")));
            }
            out
        }
        Db::Postgres => {
            let sql = "SELECT 'venues=' || coalesce(md5(string_agg(t::text, ';' ORDER BY id)), '') FROM venues t \
                       UNION ALL SELECT 'events=' || coalesce(md5(string_agg(t::text, ';' ORDER BY id)), '') FROM events t \
                       UNION ALL SELECT 'counters=' || coalesce(md5(string_agg(t::text, ';' ORDER BY id)), '') FROM counters t \
                       UNION ALL SELECT 'documents=' || coalesce(md5(string_agg(t::text, ';' ORDER BY id)), '') FROM documents t \
                       UNION ALL SELECT 'projects=' || coalesce(md5(string_agg(t::text, ';' ORDER BY id)), '') FROM projects t;";
            let url = setup().postgres.clone();
            on_server_runtime(async move {
                let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                    .await
                    .expect("connect for checksum");
                tokio::spawn(conn);
                let rows = client.query(sql, &[]).await.expect("checksum query");
                rows.iter()
                    .map(|r| r.get::<_, String>(0))
                    .collect::<Vec<_>>()
                    .join("\n")
            })
        }
    }
}

fn all_columns(conn: &rusqlite::Connection, table: &str) -> String {
    let mut stmt = conn
        .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
        .expect("table info");
    let cols: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .expect("columns")
        .collect::<Result<_, _>>()
        .expect("column names");
    let quoted: Vec<String> = cols.iter().map(|c| format!("quote(t.\"{c}\")")).collect();
    format!("json_array({})", quoted.join(", "))
}

/// The HS256 key of the tests' JWT config.
pub const JWT_KEY: &str = "a-test-secret-of-at-least-32-bytes!!";

/// `claims` signed with [`JWT_KEY`].
pub fn sign(claims: &Value) -> String {
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        claims,
        &jsonwebtoken::EncodingKey::from_secret(JWT_KEY.as_bytes()),
    )
    .expect("token")
}

/// The start-up error of an engine over `database_url` with `config` (empty if it
/// builds).
pub fn engine_error(database_url: String, config: grafton_schema::Config) -> String {
    let options = ServeOptions {
        database_url,
        port: 0,
        config,
        strict_metadata: true,
        ..Default::default()
    };
    let result =
        on_server_runtime(async move { grafton_server::build_engine(&options).await.map(|_| ()) });
    result.err().map(|e| e.to_string()).unwrap_or_default()
}
