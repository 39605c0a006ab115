//! A `grafton serve` killed (SIGKILL) while it keeps a `replace_metadata` leaves the
//! old metadata or the new, never a mix (issue 31): each kill lands at another
//! moment of the request (before the build, during it, around the commit), and
//! what the database holds afterwards is read with psql, then served by a new
//! process.

use crate::lifecycle::Process;
use crate::metadata_api::authors_database;
use crate::{free_port, Db, ADMIN_SECRET};
use serde_json::{json, Value};
use std::time::Duration;

/// The stored document and version, read behind Grafton's back.
fn stored(url: &str) -> (Value, u64) {
    let text = grafton_testkit::psql(
        url,
        b"SELECT json_build_object('m', metadata, 'v', resource_version) FROM grafton_catalog.metadata",
    );
    let row: Value = serde_json::from_str(text.trim()).expect("one row");
    (row["m"].clone(), row["v"].as_u64().expect("version"))
}

async fn metadata(base: String, body: Value) -> Result<Value, String> {
    let response = reqwest::Client::new()
        .post(format!("{base}/v1/metadata"))
        .header("x-hasura-admin-secret", ADMIN_SECRET)
        .json(&body)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    response.json().await.map_err(|e| e.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_in_the_middle_of_replace_metadata_leaves_old_or_new() {
    let url = authors_database("metadata_crash", Db::Postgres);
    let old = json!({"version": 3, "sources": [{"name": "default", "kind": "postgres",
        "tables": [{"table": {"schema": "public", "name": "authors"}}]}]});
    let new = json!({"version": 3, "sources": [{"name": "default", "kind": "postgres", "tables": [
        {"table": {"schema": "public", "name": "authors"},
         "array_relationships": [{"name": "articles", "using": {"foreign_key_constraint_on":
            {"table": {"schema": "public", "name": "articles"}, "column": "author_id"}}}],
         "select_permissions": [{"role": "user", "permission": {"columns": ["id", "name"], "filter": {}}}]},
        {"table": {"schema": "public", "name": "articles"},
         "object_relationships": [{"name": "author", "using": {"foreign_key_constraint_on": "author_id"}}],
         "select_permissions": [{"role": "user", "permission": {"columns": ["id", "title"], "filter": {"author": {"id": {"_eq": "X-Hasura-User-Id"}}}}}]},
    ]}]});
    let mut outcomes = (0, 0);
    for delay_ms in [0u64, 2, 5, 10, 20, 40, 80, 160] {
        let port = free_port();
        let server = Process::serve(&url, port, &[]);
        let reset = json!({"type": "replace_metadata", "args": old});
        metadata(server.base.clone(), reset)
            .await
            .expect("the old metadata is kept");
        let (_, before) = stored(&url);
        let base = server.base.clone();
        let replace = json!({"type": "replace_metadata", "args": new});
        let sent = tokio::spawn(metadata(base, replace));
        tokio::time::sleep(Duration::from_millis(delay_ms)).await;
        server.signal("KILL");
        let _ = sent.await;
        drop(server);
        let (doc, version) = stored(&url);
        if doc == old {
            assert_eq!(
                version, before,
                "{delay_ms} ms: the old document under a new version"
            );
            outcomes.0 += 1;
        } else {
            assert_eq!(
                doc, new,
                "{delay_ms} ms: neither the old document nor the new"
            );
            assert_eq!(version, before + 1, "{delay_ms} ms");
            outcomes.1 += 1;
        }
        // A new process serves what is stored.
        let server = Process::serve(&url, free_port(), &[]);
        let export = json!({"type": "export_metadata", "args": {}});
        let exported = metadata(server.base.clone(), export).await;
        assert_eq!(exported.expect("export"), doc, "{delay_ms} ms");
    }
    eprintln!(
        "kills that left the old metadata: {}, the new: {}",
        outcomes.0, outcomes.1
    );
}
