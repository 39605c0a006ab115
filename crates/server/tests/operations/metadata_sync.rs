//! Several instances on one database serve one metadata (issue 31): a change made
//! through any of them is served by the others within a second (PostgreSQL's
//! NOTIFY; SQLite looks every second), `/metrics` says which version each serves,
//! and a server whose metadata comes from files refuses changes, saying where its
//! metadata comes from.

use crate::metadata_api::{authors_database, metadata, query_as, store_options};
use crate::{Db, ADMIN_SECRET, BOTH};
use grafton_server::{ConfigSources, ServeOptions};
use serde_json::json;
use std::time::{Duration, Instant};

async fn metrics(base: &str) -> String {
    reqwest::Client::new()
        .get(format!("{base}/metrics"))
        .header("x-hasura-admin-secret", ADMIN_SECRET)
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_permission_created_through_one_instance_is_enforced_by_the_other() {
    for db in BOTH {
        let url = authors_database("metadata_sync", db);
        let a = grafton_server::start(&store_options(url.clone()))
            .await
            .expect("A starts");
        let b = grafton_server::start(&store_options(url.clone()))
            .await
            .expect("B starts");
        let (a_base, b_base) = (format!("http://{}", a.addr), format!("http://{}", b.addr));
        let user = [
            ("x-hasura-admin-secret", ADMIN_SECRET),
            ("x-hasura-role", "user"),
        ];
        let before = query_as(&b_base, &user, "{ authors { id } }").await;
        assert!(before["errors"].is_array(), "{db:?}: {before}");

        let create = json!({"type": "pg_create_select_permission", "args": {"table": "authors",
            "role": "user", "permission": {"columns": ["id"], "filter": {"id": {"_eq": 2}}}}});
        let (status, body) = metadata(&a_base, create).await;
        assert_eq!(status, 200, "{db:?}: {body}");
        let changed = Instant::now();
        let served = loop {
            let answer = query_as(&b_base, &user, "{ authors { id } }").await;
            if answer["data"].is_object() || changed.elapsed() > Duration::from_secs(5) {
                break answer;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        let took = changed.elapsed();
        assert_eq!(
            served["data"],
            json!({"authors": [{"id": 2}]}),
            "{db:?}: {served}"
        );
        // PostgreSQL tells B at once; SQLite is looked at four times a second.
        assert!(
            took < Duration::from_secs(2),
            "{db:?}: B served the change after {took:?}"
        );
        eprintln!("{db:?}: served by the other instance after {took:?}");
        for base in [&a_base, &b_base] {
            let text = metrics(base).await;
            assert!(
                text.contains("grafton_metadata_resource_version 2"),
                "{db:?}: {text}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_from_files_is_read_only() {
    let url = authors_database("metadata_files", Db::Postgres);
    let dir = tempfile::tempdir().expect("tempdir");
    let tables = dir.path().join("tables.yaml");
    std::fs::write(&tables, "- table: {schema: public, name: authors}\n").expect("metadata");
    let sources = ConfigSources {
        hasura_metadata: Some(tables.clone()),
        ..ConfigSources::default()
    };
    let mut o = ServeOptions {
        database_url: url,
        port: 0,
        config: sources.load().expect("loads"),
        sources: Some(sources),
        ..ServeOptions::default()
    };
    o.auth.admin_secret = Some(ADMIN_SECRET.into());
    let server = grafton_server::start(&o).await.expect("starts");
    let base = format!("http://{}", server.addr);
    let (status, body) = metadata(
        &base,
        json!({"type": "pg_track_table", "args": {"table": "articles"}}),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("not-supported")),
        "{body}"
    );
    let error = body["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("--hasura-metadata") && error.contains("--metadata-from"),
        "{error}"
    );
    // It still exports what it serves, from the files.
    let (status, doc) = metadata(&base, json!({"type": "export_metadata", "args": {}})).await;
    assert_eq!(status, 200, "{doc}");
    assert_eq!(
        doc["sources"][0]["tables"],
        json!([{"table": {"schema": "public", "name": "authors"}}])
    );
}

/// Two instances started at once from `--metadata-from` over an empty store: one
/// stores it, the other finds it stored and serves it; both built their schemas
/// once at start-up (no reload counted), and agree on the version.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_seeding_at_once_agree() {
    let url = authors_database("metadata_seed_race", Db::Postgres);
    let dir = tempfile::tempdir().expect("tempdir");
    let tables = dir.path().join("tables.yaml");
    std::fs::write(&tables, "- table: {schema: public, name: authors}\n").expect("metadata");
    let mut o = store_options(url);
    o.metadata_from = Some(tables);
    let (a, b) = tokio::join!(grafton_server::start(&o), grafton_server::start(&o));
    let (a, b) = (a.expect("A starts"), b.expect("B starts"));
    for server in [&a, &b] {
        let base = format!("http://{}", server.addr);
        let text = metrics(&base).await;
        assert!(
            text.contains("grafton_metadata_resource_version 2"),
            "{text}"
        );
        let (_, doc) = metadata(&base, json!({"type": "export_metadata", "args": {}})).await;
        assert_eq!(
            doc["sources"][0]["tables"],
            json!([{"table": {"schema": "public", "name": "authors"}}])
        );
    }
    // One of them built once; the one that lost the race reloaded what won.
    let reloads = |t: &str| t.contains("grafton_schema_reloads_total{result=\"ok\"} 1");
    let (ta, tb) = (
        metrics(&format!("http://{}", a.addr)).await,
        metrics(&format!("http://{}", b.addr)).await,
    );
    assert!(!(reloads(&ta) && reloads(&tb)), "both rebuilt at start-up");
    // A restart over the stored metadata builds once.
    drop((a, b));
    let again = grafton_server::start(&store_options(o.database_url.clone()))
        .await
        .expect("restarts");
    let text = metrics(&format!("http://{}", again.addr)).await;
    assert!(
        text.contains("grafton_metadata_resource_version 2"),
        "{text}"
    );
    assert!(!reloads(&text), "a restart built its schemas twice: {text}");
}
