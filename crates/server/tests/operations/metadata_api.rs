//! The metadata API over the metadata store (issue 31): every change is tried by
//! building it, kept in the database as the next `resource_version`, and served at
//! once; a refused change keeps nothing. On both backends.

use crate::{Db, ADMIN_SECRET, BOTH};
use grafton_server::ServeOptions;
use serde_json::{json, Value};

/// A database of the test's own holding `authors` and `articles`.
pub fn authors_database(name: &'static str, db: Db) -> String {
    let ddl = |postgres| crate::common::fixture_sql("metadata_api", postgres);
    let (sqlite, postgres) = crate::common::own_databases(name, ddl(false), ddl(true));
    match db {
        Db::Sqlite => sqlite.display().to_string(),
        Db::Postgres => postgres,
    }
}

/// A server keeping its metadata in the database, as `grafton serve` does.
pub fn store_options(url: String) -> ServeOptions {
    let mut o = ServeOptions {
        database_url: url,
        port: 0,
        metadata_store: true,
        ..ServeOptions::default()
    };
    o.auth.admin_secret = Some(ADMIN_SECRET.into());
    o
}

/// Posts `body` to `base`'s `/v1/metadata` with `headers`.
pub async fn metadata_with(base: &str, headers: &[(&str, &str)], body: Value) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .post(format!("{base}/v1/metadata"))
        .json(&body);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let response = request.send().await.expect("metadata request");
    let status = response.status().as_u16();
    (status, response.json().await.expect("JSON body"))
}

/// Posts `body` to `/v1/metadata` as admin.
pub async fn metadata(base: &str, body: Value) -> (u16, Value) {
    metadata_with(base, &[("x-hasura-admin-secret", ADMIN_SECRET)], body).await
}

/// Posts a query with `headers`; returns the body.
pub async fn query_as(base: &str, headers: &[(&str, &str)], query: &str) -> Value {
    let mut request = reqwest::Client::new()
        .post(format!("{base}/v1/graphql"))
        .json(&json!({ "query": query }));
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    request
        .send()
        .await
        .expect("request")
        .json()
        .await
        .expect("JSON")
}

/// The version `export_metadata` v2 reports, and the document.
pub async fn exported(base: &str) -> (u64, Value) {
    let (status, body) = metadata(
        base,
        json!({"type": "export_metadata", "version": 2, "args": {}}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let version = body["resource_version"].as_u64().expect("resource_version");
    (version, body["metadata"].clone())
}

const USER: [(&str, &str); 2] = [
    ("x-hasura-admin-secret", ADMIN_SECRET),
    ("x-hasura-role", "user"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_relationships_and_permissions_change_through_the_api() {
    for db in BOTH {
        let url = authors_database("metadata_api", db);
        let server = grafton_server::start(&store_options(url.clone()))
            .await
            .expect("server starts");
        let base = format!("http://{}", server.addr);
        let admin = [("x-hasura-admin-secret", ADMIN_SECRET)];

        // Nothing stored: everything is served, and exported as tracked.
        let (version, doc) = exported(&base).await;
        assert_eq!(version, 1, "{db:?}");
        let tables = &doc["sources"][0]["tables"];
        assert_eq!(tables.as_array().map(Vec::len), Some(2), "{db:?}: {doc}");

        // Cleared: nothing is served.
        let (status, body) = metadata(&base, json!({"type": "clear_metadata", "args": {}})).await;
        assert_eq!(
            (status, body.clone()),
            (200, json!({"message": "success"})),
            "{db:?}"
        );
        let gone = query_as(&base, &admin, "{ authors { id } }").await;
        assert_eq!(
            gone["errors"][0]["extensions"]["code"], "validation-failed",
            "{db:?}: {gone}"
        );
        assert_eq!(exported(&base).await.0, 2, "{db:?}");

        // Tracked again, with a relationship and a permission, in one bulk.
        let bulk = json!({"type": "bulk", "args": [
            {"type": "pg_track_table", "args": {"table": {"schema": "public", "name": "authors"}}},
            {"type": "pg_track_table", "args": {"table": "articles"}},
            {"type": "pg_create_array_relationship", "args": {"table": "authors", "name": "articles",
                "using": {"foreign_key_constraint_on": {"table": "articles", "column": "author_id"}}}},
            {"type": "pg_create_select_permission", "args": {"table": "authors", "role": "user",
                "permission": {"columns": ["id", "name"], "filter": {"id": {"_eq": 1}}}}},
        ]});
        let (status, body) = metadata(&base, bulk).await;
        assert_eq!(status, 200, "{db:?}: {body}");
        assert_eq!(body.as_array().map(Vec::len), Some(4), "{db:?}: {body}");
        let read = query_as(
            &base,
            &admin,
            "{ authors(order_by: {id: asc}) { id articles { id } } }",
        )
        .await;
        assert_eq!(
            read["data"]["authors"][0]["articles"]
                .as_array()
                .map(Vec::len),
            Some(2),
            "{db:?}: {read}"
        );
        let as_user = query_as(&base, &USER, "{ authors { id name } }").await;
        assert_eq!(
            as_user["data"],
            json!({"authors": [{"id": 1, "name": "Ada"}]}),
            "{db:?}: {as_user}"
        );
        assert_eq!(exported(&base).await.0, 3, "{db:?}");

        // Refusals, each with Hasura's code, and nothing changed by any.
        let refused = [
            (
                json!({"type": "pg_track_table", "args": {"table": "authors"}}),
                400,
                "already-tracked",
            ),
            (
                json!({"type": "pg_track_table", "args": {"table": "no_such_table"}}),
                400,
                "invalid-configuration",
            ),
            (
                json!({"type": "pg_create_select_permission", "args": {"table": "authors", "role": "user",
                "permission": {"columns": ["id"], "filter": {}}}}),
                400,
                "already-exists",
            ),
            (
                json!({"type": "pg_create_select_permission", "args": {"table": "articles", "role": "user",
                "permission": {"columns": ["id", "no_such_column"], "filter": {}}}}),
                400,
                "invalid-configuration",
            ),
            (
                json!({"type": "pg_drop_relationship", "args": {"table": "authors", "relationship": "nope"}}),
                400,
                "not-exists",
            ),
            (
                json!({"type": "pg_untrack_table", "args": {"table": "articles"}}),
                400,
                "dependency-error",
            ),
            (
                json!({"type": "pg_create_select_permission", "resource_version": 1, "args": {"table": "articles",
                "role": "user", "permission": {"columns": ["id"], "filter": {}}}}),
                409,
                "conflict",
            ),
            // A bulk whose second command fails keeps nothing of its first.
            (
                json!({"type": "bulk", "args": [
                    {"type": "pg_drop_select_permission", "args": {"table": "authors", "role": "user"}},
                    {"type": "pg_untrack_table", "args": {"table": "nope"}},
                ]}),
                400,
                "already-untracked",
            ),
        ];
        for (body, status, code) in refused {
            let (got, answer) = metadata(&base, body.clone()).await;
            assert_eq!(
                (got, answer["code"].as_str()),
                (status, Some(code)),
                "{db:?}: {body} → {answer}"
            );
        }
        let non_admin =
            metadata_with(&base, &[], json!({"type": "clear_metadata", "args": {}})).await;
        assert_eq!(non_admin.0, 401, "{db:?}: {non_admin:?}");
        assert_eq!(
            exported(&base).await.0,
            3,
            "{db:?}: a refusal changed the version"
        );
        let as_user = query_as(&base, &USER, "{ authors { id name } }").await;
        assert_eq!(
            as_user["data"]["authors"].as_array().map(Vec::len),
            Some(1),
            "{db:?}: {as_user}"
        );

        // Dropped with cascade: the relationship goes with the table.
        let (status, body) = metadata(
            &base,
            json!({"type": "pg_untrack_table",
            "args": {"table": "articles", "cascade": true}}),
        )
        .await;
        assert_eq!(status, 200, "{db:?}: {body}");
        let (version, doc) = exported(&base).await;
        assert_eq!(version, 4, "{db:?}");
        assert_eq!(
            doc["sources"][0]["tables"],
            json!([{
                "table": {"schema": "public", "name": "authors"},
                "select_permissions": [{"role": "user", "permission": {"columns": ["id", "name"], "filter": {"id": {"_eq": 1}}}}],
            }]),
            "{db:?}"
        );

        // The store outlives the server: a new one serves what was stored.
        drop(server);
        let server = grafton_server::start(&store_options(url.clone()))
            .await
            .expect("server restarts");
        let base = format!("http://{}", server.addr);
        assert_eq!(exported(&base).await.0, 4, "{db:?}");
        let gone = query_as(&base, &admin, "{ articles { id } }").await;
        assert_eq!(
            gone["errors"][0]["extensions"]["code"], "validation-failed",
            "{db:?}: {gone}"
        );
        let as_user = query_as(&base, &USER, "{ authors { id name } }").await;
        assert_eq!(
            as_user["data"]["authors"].as_array().map(Vec::len),
            Some(1),
            "{db:?}: {as_user}"
        );
    }
}

/// The one-shot commands plan with what `serve` serves: the stored metadata.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grafton_schema_reads_the_stored_metadata() {
    for db in BOTH {
        let url = authors_database("metadata_schema_cmd", db);
        let server = grafton_server::start(&store_options(url.clone()))
            .await
            .expect("starts");
        let base = format!("http://{}", server.addr);
        let bulk = json!({"type": "bulk", "args": [
            {"type": "clear_metadata", "args": {}},
            {"type": "pg_track_table", "args": {"table": "authors"}},
        ]});
        assert_eq!(metadata(&base, bulk).await.0, 200, "{db:?}");
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_grafton"))
            .args(["schema", "--database-url", &url])
            .output()
            .expect("grafton schema runs");
        let sdl = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{db:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            sdl.contains("authors(") && !sdl.contains("articles("),
            "{db:?}: {sdl}"
        );
    }
}
