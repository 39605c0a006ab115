//! A Hasura deployment moved by its environment alone: the real `grafton serve`,
//! started with nothing but the `HASURA_GRAPHQL_*` variables of a docker-compose
//! file, serves the metadata's API with the admin secret, JWTs of two issuers,
//! the unauthorized role, CORS for the listed origin, the console, only the APIs
//! enabled, and names the one variable it does not serve.

use crate::lifecycle::Process;
use crate::{free_port, own_database, Db, ADMIN_SECRET};
use serde_json::{json, Value};
use std::process::Command;

const KEY_A: &str = "issuer-a-secret-of-at-least-32-bytes";
const KEY_B: &str = "issuer-b-secret-of-at-least-32-bytes";

fn token(key: &str, iss: &str) -> String {
    let exp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs()
        + 600;
    let claims = json!({"iss": iss, "exp": exp, "https://hasura.io/jwt/claims": {
        "x-hasura-allowed-roles": ["user"], "x-hasura-default-role": "user"}});
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(key.as_bytes()),
    )
    .expect("token")
}

/// A Hasura v3 metadata directory tracking `items`, as `hasura metadata export`
/// writes it.
fn metadata() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let files = [
        ("version.yaml", "version: 3\n"),
        (
            "databases/databases.yaml",
            "- name: default\n  kind: postgres\n  configuration:\n    connection_info:\n      database_url:\n        from_env: HASURA_GRAPHQL_DATABASE_URL\n  tables: \"!include default/tables/tables.yaml\"\n",
        ),
        ("databases/default/tables/tables.yaml", "- \"!include public_items.yaml\"\n"),
        (
            "databases/default/tables/public_items.yaml",
            "table:\n  name: items\n  schema: public\nselect_permissions:\n  - role: user\n    permission:\n      columns: [id, label]\n      filter: {}\n  - role: anonymous\n    permission:\n      columns: [id]\n      filter: {}\n",
        ),
    ];
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    dir
}

async fn post(process: &Process, headers: &[(&str, &str)], query: &str) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .post(process.url())
        .json(&json!({ "query": query }));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("request");
    (
        response.status().as_u16(),
        response.json().await.unwrap_or(Value::Null),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compose_files_hasura_variables_are_enough() {
    let url = own_database("hasura_env", Db::Postgres);
    let metadata = metadata();
    let port = free_port();
    let secrets = json!([
        {"type": "HS256", "key": KEY_A, "issuer": "https://a.example"},
        {"type": "HS256", "key": KEY_B, "issuer": "https://b.example"},
    ]);
    let mut command = Command::new(env!("CARGO_BIN_EXE_grafton"));
    command
        .arg("serve")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GRAFTON_LOG", "info")
        .env("HASURA_GRAPHQL_DATABASE_URL", &url)
        .env("HASURA_GRAPHQL_METADATA_DIR", metadata.path())
        .env("HASURA_GRAPHQL_SERVER_HOST", "127.0.0.1")
        .env("HASURA_GRAPHQL_SERVER_PORT", port.to_string())
        .env("HASURA_GRAPHQL_ADMIN_SECRET", ADMIN_SECRET)
        .env("HASURA_GRAPHQL_JWT_SECRETS", secrets.to_string())
        .env("HASURA_GRAPHQL_UNAUTHORIZED_ROLE", "anonymous")
        .env("HASURA_GRAPHQL_ENABLE_CONSOLE", "true")
        .env("HASURA_GRAPHQL_CORS_DOMAIN", "http://localhost:3000")
        .env("HASURA_GRAPHQL_ENABLED_APIS", "graphql")
        .env(
            "HASURA_GRAPHQL_LIVE_QUERIES_MULTIPLEXED_REFETCH_INTERVAL",
            "500",
        )
        .env("HASURA_GRAPHQL_ENABLE_TELEMETRY", "false")
        .env("HASURA_GRAPHQL_STRINGIFY_NUMERIC_TYPES", "true");
    let process = Process::start(command, port);
    let query = "{ items(order_by: {id: asc}) { id } }";

    let (status, body) = post(&process, &[("x-hasura-admin-secret", ADMIN_SECRET)], query).await;
    assert_eq!(
        (status, &body["data"]["items"]),
        (200, &json!([{"id": 1}, {"id": 2}]))
    );
    for (key, iss) in [(KEY_A, "https://a.example"), (KEY_B, "https://b.example")] {
        let bearer = format!("Bearer {}", token(key, iss));
        let (_, body) = post(
            &process,
            &[("authorization", &bearer)],
            "{ items { label } }",
        )
        .await;
        assert_eq!(
            body["data"]["items"].as_array().map(Vec::len),
            Some(2),
            "{iss}: {body}"
        );
    }
    let third = format!("Bearer {}", token(KEY_A, "https://c.example"));
    let (status, body) = post(&process, &[("authorization", &third)], query).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["errors"][0]["extensions"]["code"], "invalid-jwt");
    // Without credentials: the unauthorized role, which sees no label.
    let (_, body) = post(&process, &[], "{ items { label } }").await;
    assert_eq!(
        body["errors"][0]["extensions"]["code"], "validation-failed",
        "{body}"
    );

    let client = reqwest::Client::new();
    let answer = client
        .post(process.url())
        .header("origin", "http://localhost:3000")
        .json(&json!({ "query": query }))
        .send()
        .await
        .expect("cors");
    assert_eq!(
        answer.headers()["access-control-allow-origin"],
        "http://localhost:3000"
    );
    let console = client
        .get(format!("{}/console", process.base))
        .send()
        .await
        .expect("console");
    assert_eq!(console.status(), 200);
    let metadata_api = client
        .post(format!("{}/v1/metadata", process.base))
        .header("x-hasura-admin-secret", ADMIN_SECRET)
        .json(&json!({"type": "reload_metadata", "args": {}}))
        .send()
        .await
        .expect("metadata");
    assert_eq!(metadata_api.status(), 404, "ENABLED_APIS=graphql");

    let log = process.log();
    assert!(
        log.contains("HASURA_GRAPHQL_STRINGIFY_NUMERIC_TYPES") && !log.contains("ENABLE_TELEMETRY"),
        "{log}"
    );
}
