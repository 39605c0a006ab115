//! A server of a test's own: a fresh PostgreSQL database loaded with a fixture,
//! served with Hasura metadata behind an admin secret; requests with headers, and
//! the ids a condition selects, by GraphQL and by plain SQL.

use grafton_server::{start, Running, ServeOptions};
use serde_json::{json, Value};

/// A fresh database loaded with `fixture`, served with `metadata` (Hasura's
/// `tables.yaml` form) behind [`crate::ADMIN_SECRET`].
pub async fn serve(prefix: &str, fixture: &str, metadata: &str) -> (String, Running) {
    serve_with_functions(prefix, fixture, metadata, "[]").await
}

/// [`serve`], with tracked functions (Hasura's `functions.yaml` form): the
/// metadata is written as Hasura's directory.
pub async fn serve_with_functions(
    prefix: &str,
    fixture: &str,
    tables: &str,
    functions: &str,
) -> (String, Running) {
    serve_with_options(prefix, fixture, tables, functions, ServeOptions::default()).await
}

/// [`serve_with_functions`], starting from `options` (the database, the metadata
/// and the admin secret are set here).
pub async fn serve_with_options(
    prefix: &str,
    fixture: &str,
    tables: &str,
    functions: &str,
    options: ServeOptions,
) -> (String, Running) {
    let url = grafton_testkit::fresh_database(prefix);
    grafton_testkit::psql(&url, fixture.as_bytes());
    let dir = std::env::temp_dir().join(format!("grafton-{prefix}-{}", std::process::id()));
    let default = dir.join("databases/default");
    std::fs::create_dir_all(&default).expect("metadata directory");
    let files = [
        ("version.yaml", "version: 3\n"),
        (
            "databases/databases.yaml",
            "- name: default\n  kind: postgres\n  configuration: {connection_info: {database_url: unused}}\n  tables: \"!include default/tables.yaml\"\n  functions: \"!include default/functions.yaml\"\n",
        ),
        ("databases/default/tables.yaml", tables),
        ("databases/default/functions.yaml", functions),
    ];
    for (file, text) in files {
        std::fs::write(dir.join(file), text).expect("metadata file");
    }
    let config = grafton_schema::hasura::load(&dir).expect("metadata loads");
    let server = start(&ServeOptions {
        config,
        ..admin_options(&url, options)
    })
    .await
    .expect("server starts");
    (url, server)
}

/// `options` serving `database_url` on a free port, with the tests' admin secret.
pub fn admin_options(database_url: &str, options: ServeOptions) -> ServeOptions {
    ServeOptions {
        database_url: database_url.to_owned(),
        port: 0,
        auth: grafton_auth::AuthConfig {
            admin_secret: Some(crate::ADMIN_SECRET.into()),
            ..Default::default()
        },
        ..options
    }
}

/// A GraphQL request with the admin secret and `headers`.
pub async fn post(url: &str, headers: &[(&str, &str)], query: &str, variables: Value) -> Value {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("x-hasura-admin-secret", crate::ADMIN_SECRET);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    request
        .json(&json!({ "query": query, "variables": variables }))
        .send()
        .await
        .expect("request")
        .json()
        .await
        .expect("json body")
}

/// The ids `condition` selects from `table`, by plain SQL, as a JSON list.
pub fn ids_by_sql(url: &str, table: &str, condition: &str) -> Value {
    let sql =
        format!("SELECT coalesce(json_agg(id ORDER BY id), '[]') FROM {table} WHERE {condition}");
    serde_json::from_str(grafton_testkit::query_one(url, &sql).trim()).expect("ids")
}

/// The `id`s of a list of rows.
pub fn ids(v: &Value) -> Value {
    Value::Array(
        (v.as_array().into_iter().flatten())
            .map(|row| row["id"].clone())
            .collect(),
    )
}
