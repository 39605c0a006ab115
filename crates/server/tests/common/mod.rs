//! Shared harness for Grafton's integration tests.
//!
//! Every backend is set up once per test binary: a SQLite file and a fresh
//! PostgreSQL database (the testkit's throwaway cluster, or
//! `GRAFTON_TEST_DATABASE_URL`), both holding the demo dataset (200 rows per
//! main table) plus a small extra fixture ([`FIXTURE_SQL`]). One Grafton
//! server per backend (and a few more with other options, started lazily)
//! runs on a dedicated multi-thread runtime that lives as long as the
//! process, so tests can be ordinary `#[tokio::test]`s that only make HTTP
//! requests.

#![allow(dead_code)]

use grafton_demo::{DemoOptions, Table, Value as DemoValue};
use grafton_schema::Convention;
use grafton_server::{Running, ServeOptions};
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::future::Future;
use std::path::PathBuf;
use std::sync::OnceLock;
use tokio::runtime::Runtime;

/// Rows per main table of the demo dataset.
pub const ROWS: u64 = 200;

/// Rows of the extra tables of [`fixture_ddl`], identical on both backends.
pub const FIXTURE_DATA: &str = "
INSERT INTO categories (id, name, parent_id) VALUES
  (1, 'root', NULL), (2, 'tools', 1), (3, 'toys', 1), (4, 'hammers', 2), (5, 'orphan', NULL);
INSERT INTO gadgets (id, name, active, weight, rating, qty, note, category_id) VALUES
  (1, 'anvil', TRUE, 3, 2.25, 1, NULL, 4),
  (2, 'ball', FALSE, 0.5, NULL, 5, 'round', 3),
  (3, 'chisel', TRUE, 2.25, 0.5, 1, 'sharp; don''t \"touch\"', 2),
  (4, 'drum', FALSE, 3, 3, 5, NULL, 3),
  (5, 'easel', TRUE, 0.5, NULL, 3, 'wooden', NULL);
INSERT INTO shelves (aisle, slot, label) VALUES (1, 1, 'A1'), (1, 2, 'A2'), (2, 1, 'B1');
INSERT INTO boxes (id, aisle, slot, content) VALUES
  (1, 1, 1, 'nails'), (2, 1, 1, 'screws'), (3, 2, 1, 'bolts'), (4, 1, 2, 'glue');
INSERT INTO audit_log (event, amount) VALUES ('created', 10), ('deleted', NULL), ('created', 5);
";

/// The extra tables for one backend (only type names and `chr`/`char` differ),
/// with the rows of `texts` and `"order"`; [`FIXTURE_DATA`] fills the others.
pub fn fixture_ddl(postgres: bool) -> String {
    let (int, text, boolean, float, chr) = if postgres {
        ("integer", "text", "boolean", "double precision", "chr")
    } else {
        ("INTEGER", "TEXT", "BOOLEAN", "REAL", "char")
    };
    format!(
        "
CREATE TABLE categories (
  id {int} NOT NULL PRIMARY KEY,
  name {text} NOT NULL,
  parent_id {int} REFERENCES categories (id)
);
CREATE TABLE gadgets (
  id {int} NOT NULL PRIMARY KEY,
  name {text} NOT NULL,
  active {boolean} NOT NULL,
  weight {float} NOT NULL,
  rating {float},
  qty {int} NOT NULL,
  note {text},
  category_id {int} REFERENCES categories (id)
);
CREATE TABLE shelves (
  aisle {int} NOT NULL,
  slot {int} NOT NULL,
  label {text} NOT NULL,
  PRIMARY KEY (aisle, slot)
);
CREATE TABLE boxes (
  id {int} NOT NULL PRIMARY KEY,
  aisle {int} NOT NULL,
  slot {int} NOT NULL,
  content {text} NOT NULL,
  FOREIGN KEY (aisle, slot) REFERENCES shelves (aisle, slot)
);
CREATE TABLE audit_log (
  event {text} NOT NULL,
  amount {int}
);
CREATE TABLE texts (
  id {int} NOT NULL PRIMARY KEY,
  body {text} NOT NULL
);
CREATE TABLE \"order\" (
  \"group\" {int} NOT NULL PRIMARY KEY,
  \"Select\" {text},
  \"two words\" {text}
);
INSERT INTO texts (id, body) VALUES
  (1, 'plain'),
  (2, 'line1' || {chr}(10) || 'line2'),
  (3, 'tab' || {chr}(9) || 'bed' || {chr}(13)),
  (4, 'caf\u{e9} \u{65e5}\u{672c}\u{8a9e} \u{1f389}'),
  (5, 'quote \" backslash \\ slash /'),
  (6, 'ctrl' || {chr}(1) || {chr}(31) || 'x'),
  (7, ''),
  (8, '</script><!--'),
  (9, 'it''s 100% _true_');
INSERT INTO \"order\" (\"group\", \"Select\", \"two words\") VALUES (1, 'a', 'b'), (2, NULL, 'it''s');
"
    )
}

/// The rows of `texts`, as Rust strings.
pub const TEXTS: [&str; 9] = [
    "plain",
    "line1\nline2",
    "tab\tbed\r",
    "caf\u{e9} \u{65e5}\u{672c}\u{8a9e} \u{1f389}",
    "quote \" backslash \\ slash /",
    "ctrl\u{1}\u{1f}x",
    "",
    "</script><!--",
    "it's 100% _true_",
];

/// A backend, for the test binaries with databases of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Db {
    Sqlite,
    Postgres,
}

/// Both backends.
pub const BOTH: [Db; 2] = [Db::Sqlite, Db::Postgres];

/// A test binary's own SQLite file and PostgreSQL database, loaded with
/// `sqlite_sql` (in one transaction, the file in WAL mode already so servers
/// starting at once do not race to switch it) and `postgres_sql`.
pub fn own_databases(
    name: &'static str,
    sqlite_sql: String,
    postgres_sql: String,
) -> (PathBuf, String) {
    // On a plain thread: the testkit and psql block.
    std::thread::spawn(move || {
        let sqlite = grafton_testkit::sqlite_path(name);
        let conn = rusqlite::Connection::open(&sqlite).expect("create SQLite file");
        conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))
            .expect("WAL");
        conn.execute_batch(&format!("BEGIN; {sqlite_sql} COMMIT;"))
            .expect("SQLite fixture");
        let postgres = grafton_testkit::fresh_database(name);
        grafton_testkit::psql(&postgres, postgres_sql.as_bytes());
        (sqlite, postgres)
    })
    .join()
    .unwrap_or_else(|p| std::panic::resume_unwind(p))
}

/// A running server the tests can talk to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {
    /// Hasura naming over the SQLite file.
    Sqlite,
    /// Hasura naming over PostgreSQL.
    Postgres,
    /// `graphql-default` naming over the SQLite file.
    GraphqlDefault,
    /// `phrag` naming over the SQLite file.
    Phrag,
    /// SQLite with `http.max_body_bytes = 1024`.
    SmallBody,
}

/// Both backends, for tests that must pass on each.
pub const BACKENDS: [Server; 2] = [Server::Sqlite, Server::Postgres];

struct Databases {
    sqlite_path: PathBuf,
    postgres_url: String,
}

/// The runtime every server runs on; it is never shut down.
pub fn runtime() -> &'static Runtime {
    static RT: OnceLock<Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_stack_size(grafton_server::WORKER_STACK_BYTES)
            .thread_name("grafton-it-server")
            .enable_all()
            .build()
            .expect("server runtime")
    })
}

/// Runs `fut` to completion on the server runtime, from any context (a plain
/// thread does the blocking, so this also works inside a test's runtime).
pub fn on_server_runtime<T: Send>(fut: impl Future<Output = T> + Send) -> T {
    std::thread::scope(|s| {
        s.spawn(|| runtime().block_on(fut))
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

fn databases() -> &'static Databases {
    static DBS: OnceLock<Databases> = OnceLock::new();
    DBS.get_or_init(|| {
        // Run on a plain thread: the testkit and psql block.
        std::thread::spawn(|| Databases {
            sqlite_path: make_sqlite(),
            postgres_url: make_postgres(),
        })
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

fn make_sqlite() -> PathBuf {
    let path = grafton_testkit::sqlite_path("it");
    grafton_demo::create_sqlite(
        &path,
        &DemoOptions {
            rows: ROWS,
            progress: false,
        },
    )
    .expect("demo dataset in SQLite");
    let conn = rusqlite::Connection::open(&path).expect("open SQLite file");
    conn.execute_batch(&format!(
        "BEGIN; {} {} COMMIT;",
        fixture_ddl(false),
        FIXTURE_DATA
    ))
    .expect("fixture in SQLite");
    path
}

fn make_postgres() -> String {
    let url = grafton_testkit::fresh_database("it");
    let mut script = Vec::new();
    grafton_demo::write_postgres_copy(
        &mut script,
        &DemoOptions {
            rows: ROWS,
            progress: false,
        },
    )
    .expect("demo script");
    script.extend_from_slice(fixture_ddl(true).as_bytes());
    script.extend_from_slice(FIXTURE_DATA.as_bytes());
    script.extend_from_slice(b"ANALYZE;\n");
    grafton_testkit::psql(&url, &script);
    url
}

/// The SQLite file the SQLite servers serve.
pub fn sqlite_path() -> PathBuf {
    databases().sqlite_path.clone()
}

/// The URL of the PostgreSQL database the Postgres server serves.
pub fn postgres_url() -> String {
    databases().postgres_url.clone()
}

/// Starts a server on the shared runtime and keeps it alive for the process.
pub fn start_server(options: ServeOptions) -> String {
    let running: Running = on_server_runtime(async move { grafton_server::start(&options).await })
        .unwrap_or_else(|e| panic!("grafton_server::start failed: {e}"));
    let base = format!("http://{}", running.addr);
    // Dropping `Running` would stop the server: keep it for the whole process.
    Box::leak(Box::new(running));
    base
}

fn sqlite_options() -> ServeOptions {
    ServeOptions {
        database_url: sqlite_path().display().to_string(),
        port: 0,
        ..Default::default()
    }
}

/// The base URL (`http://127.0.0.1:port`) of a server, started on first use.
pub fn base_url(server: Server) -> &'static str {
    static SQLITE: OnceLock<String> = OnceLock::new();
    static POSTGRES: OnceLock<String> = OnceLock::new();
    static GRAPHQL_DEFAULT: OnceLock<String> = OnceLock::new();
    static PHRAG: OnceLock<String> = OnceLock::new();
    static SMALL_BODY: OnceLock<String> = OnceLock::new();
    match server {
        Server::Sqlite => SQLITE.get_or_init(|| start_server(sqlite_options())),
        Server::Postgres => POSTGRES.get_or_init(|| {
            start_server(ServeOptions {
                database_url: postgres_url(),
                port: 0,
                pool_size: 4,
                ..Default::default()
            })
        }),
        Server::GraphqlDefault => GRAPHQL_DEFAULT.get_or_init(|| {
            start_server(ServeOptions {
                naming: Some(Convention::GraphqlDefault),
                ..sqlite_options()
            })
        }),
        Server::Phrag => PHRAG.get_or_init(|| {
            start_server(ServeOptions {
                naming: Some(Convention::Phrag),
                ..sqlite_options()
            })
        }),
        Server::SmallBody => SMALL_BODY.get_or_init(|| {
            let mut options = sqlite_options();
            options.http.max_body_bytes = 1024;
            start_server(options)
        }),
    }
}

/// The GraphQL endpoint of a server.
pub fn graphql_url(server: Server) -> String {
    format!("{}/v1/graphql", base_url(server))
}

/// A client for one test (clients are not shared across test runtimes).
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(60))
        .build()
        .expect("reqwest client")
}

/// POSTs `{"query", "variables"}` as `application/json`; returns the status,
/// the parsed body and the raw body.
pub async fn post(server: Server, query: &str, variables: Value) -> (StatusCode, Value, String) {
    let mut body = json!({ "query": query });
    if !variables.is_null() {
        body["variables"] = variables;
    }
    post_body(server, &body).await
}

/// POSTs an arbitrary JSON request object.
pub async fn post_body(server: Server, body: &Value) -> (StatusCode, Value, String) {
    post_to(&graphql_url(server), body).await
}

/// POSTs a JSON request object to a GraphQL endpoint URL.
pub async fn post_to(url: &str, body: &Value) -> (StatusCode, Value, String) {
    post_with_headers(url, &[], body).await
}

/// POSTs a JSON request object with extra headers (auth, roles, session variables).
pub async fn post_with_headers(
    url: &str,
    headers: &[(&str, &str)],
    body: &Value,
) -> (StatusCode, Value, String) {
    let mut request = client()
        .post(url)
        .header("content-type", "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request
        .body(body.to_string())
        .send()
        .await
        .unwrap_or_else(|e| panic!("POST to {url} failed: {e}"));
    let status = response.status();
    let raw = response.text().await.expect("response body");
    let value: Value = serde_json::from_str(&raw)
        .unwrap_or_else(|e| panic!("{url} answered non-JSON ({status}): {e}: {raw}"));
    if let Some(errors) = value.get("errors") {
        assert_no_sql(&errors.to_string());
    }
    (status, value, raw)
}

/// Panics when an error quotes SQL: no answer may carry a statement, which holds
/// other roles' permission rules. The error paths of the tests' HTTP and WebSocket
/// clients go through here.
pub fn assert_no_sql(errors: &str) {
    for marker in [
        "SELECT ",
        "json_build_object",
        "json_group_array",
        "FROM \"",
    ] {
        assert!(
            !errors.contains(marker),
            "an error quotes SQL ({marker}): {errors}"
        );
    }
}

/// Runs a request with a full request object on both backends, asserts that
/// the statuses and raw bodies are identical, and returns the parsed body.
pub async fn both_body(body: Value) -> Value {
    let (s1, v1, raw1) = post_body(Server::Sqlite, &body).await;
    let (s2, _v2, raw2) = post_body(Server::Postgres, &body).await;
    assert_eq!(
        raw1, raw2,
        "SQLite and PostgreSQL answer differently to {body}\n  sqlite:   {raw1}\n  postgres: {raw2}"
    );
    assert_eq!(s1, s2, "statuses differ for {body}");
    assert_eq!(s1, StatusCode::OK, "status for {body}: {raw1}");
    v1
}

/// Runs `query` with `variables` on both backends, asserts the two raw
/// bodies are byte-identical, and returns the parsed body.
pub async fn both(query: &str, variables: Value) -> Value {
    let mut body = json!({ "query": query });
    if !variables.is_null() {
        body["variables"] = variables;
    }
    both_body(body).await
}

/// [`both`], asserting there are no errors, and returning `data`.
pub async fn data(query: &str, variables: Value) -> Value {
    let v = both(query, variables).await;
    assert!(v.get("errors").is_none(), "errors for {query}: {v}");
    v["data"].clone()
}

/// An HS256 token signed with `key`, expiring `expires_in` from now, with these
/// Hasura claims (under the default namespace).
pub fn hs256_token(key: &str, expires_in: std::time::Duration, claims: Value) -> String {
    let exp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        + expires_in;
    let claims = json!({"exp": exp.as_secs(), "https://hasura.io/jwt/claims": claims});
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(key.as_bytes()),
    )
    .expect("token")
}

/// The `extensions.code` of the first error.
pub fn error_code(v: &Value) -> &str {
    v["errors"][0]["extensions"]["code"]
        .as_str()
        .unwrap_or_else(|| panic!("no error code in {v}"))
}

/// The standard GraphiQL introspection query.
pub const INTROSPECTION_QUERY: &str = r#"
    query IntrospectionQuery {
      __schema {
        queryType { name }
        mutationType { name }
        subscriptionType { name }
        types {
          ...FullType
        }
        directives {
          name
          description
          locations
          args {
            ...InputValue
          }
        }
      }
    }

    fragment FullType on __Type {
      kind
      name
      description
      fields(includeDeprecated: true) {
        name
        description
        args {
          ...InputValue
        }
        type {
          ...TypeRef
        }
        isDeprecated
        deprecationReason
      }
      inputFields {
        ...InputValue
      }
      interfaces {
        ...TypeRef
      }
      enumValues(includeDeprecated: true) {
        name
        description
        isDeprecated
        deprecationReason
      }
      possibleTypes {
        ...TypeRef
      }
    }

    fragment InputValue on __InputValue {
      name
      description
      type { ...TypeRef }
      defaultValue
    }

    fragment TypeRef on __Type {
      kind
      name
      ofType {
        kind
        name
        ofType {
          kind
          name
          ofType {
            kind
            name
            ofType {
              kind
              name
              ofType {
                kind
                name
                ofType {
                  kind
                  name
                  ofType {
                    kind
                    name
                  }
                }
              }
            }
          }
        }
      }
    }
"#;

// ---------------------------------------------------------------------------
// Oracle: the demo rows, straight from the generator (no SQL involved).

/// A venue row.
#[derive(Debug, Clone)]
pub struct Venue {
    pub id: i64,
    pub name: String,
    pub postal_code: String,
    pub prefecture: String,
    pub city: String,
    pub street1: String,
    pub street2: Option<String>,
    pub building: Option<String>,
}

/// A meetup row.
#[derive(Debug, Clone)]
pub struct Meetup {
    pub id: i64,
    pub title: String,
    pub start_at: String,
    pub end_at: String,
    pub venue_id: i64,
    pub group_id: i64,
}

/// A member row.
#[derive(Debug, Clone)]
pub struct Member {
    pub id: i64,
    pub first_name: String,
    pub last_name: String,
    pub email: String,
}

fn int(v: &DemoValue) -> i64 {
    match v {
        DemoValue::Int(i) => *i,
        other => panic!("not an int: {other:?}"),
    }
}

fn text(v: &DemoValue) -> String {
    match v {
        DemoValue::Text(s) => s.clone(),
        other => panic!("not text: {other:?}"),
    }
}

fn opt_text(v: &DemoValue) -> Option<String> {
    match v {
        DemoValue::Null => None,
        other => Some(text(other)),
    }
}

/// All venues, in id order.
pub fn venues() -> Vec<Venue> {
    Table::Venues
        .rows(ROWS)
        .map(|r| Venue {
            id: int(&r[0]),
            name: text(&r[1]),
            postal_code: text(&r[2]),
            prefecture: text(&r[3]),
            city: text(&r[4]),
            street1: text(&r[5]),
            street2: opt_text(&r[6]),
            building: opt_text(&r[7]),
        })
        .collect()
}

/// All meetups, in id order.
pub fn meetups() -> Vec<Meetup> {
    Table::Meetups
        .rows(ROWS)
        .map(|r| Meetup {
            id: int(&r[0]),
            title: text(&r[1]),
            start_at: text(&r[2]),
            end_at: text(&r[3]),
            venue_id: int(&r[4]),
            group_id: int(&r[5]),
        })
        .collect()
}

/// All members, in id order.
pub fn members() -> Vec<Member> {
    Table::Members
        .rows(ROWS)
        .map(|r| Member {
            id: int(&r[0]),
            first_name: text(&r[1]),
            last_name: text(&r[2]),
            email: text(&r[3]),
        })
        .collect()
}

/// All `(meetup_id, member_id)` links, in key order.
pub fn meetups_members() -> Vec<(i64, i64)> {
    Table::MeetupsMembers
        .rows(ROWS)
        .map(|r| (int(&r[0]), int(&r[1])))
        .collect()
}

/// `[{"id": …}, …]` for a list of ids.
pub fn ids_json(ids: impl IntoIterator<Item = i64>) -> Value {
    Value::Array(ids.into_iter().map(|id| json!({ "id": id })).collect())
}

/// The ids in a list of objects with an `id` field.
pub fn ids_of(list: &Value) -> Vec<i64> {
    list.as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"))
        .iter()
        .map(|o| o["id"].as_i64().unwrap_or_else(|| panic!("no id in {o}")))
        .collect()
}
