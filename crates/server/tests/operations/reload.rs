//! Reloading the schema after a migration, without a restart.

use crate::{migrate, own_database, post, Db, ADMIN_SECRET, BOTH};
use grafton_server::{ConfigSources, ServeOptions};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// The `user` role reads `items`; the file is re-read at each reload.
const CONFIG: &str = "
tables:
  items:
    permissions:
      user:
        select: {columns: [id, label], filter: {}}
";

async fn reload(base: &str, secret: Option<&str>) -> (u16, Value) {
    metadata_as(base, secret, json!({"type": "reload_metadata", "args": {}})).await
}

/// Posts `body` to `/v1/metadata` with the admin secret.
async fn metadata(base: &str, body: Value) -> (u16, Value) {
    metadata_as(base, Some(ADMIN_SECRET), body).await
}

async fn metadata_as(base: &str, secret: Option<&str>, body: Value) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .post(format!("{base}/v1/metadata"))
        .json(&body);
    if let Some(secret) = secret {
        request = request.header("x-hasura-admin-secret", secret);
    }
    let response = request.send().await.expect("metadata request");
    let status = response.status().as_u16();
    (status, response.json().await.expect("JSON body"))
}

fn options(url: String, config: &std::path::Path) -> ServeOptions {
    let sources = ConfigSources {
        config: Some(config.to_path_buf()),
        ..ConfigSources::default()
    };
    let mut o = ServeOptions {
        database_url: url,
        port: 0,
        config: sources.load().expect("config"),
        sources: Some(sources),
        ..ServeOptions::default()
    };
    o.auth.admin_secret = Some(ADMIN_SECRET.into());
    o.auth.unauthorized_role = Some("user".into());
    o
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_metadata_serves_new_tables_columns_and_permissions() {
    for db in BOTH {
        let url = own_database("reload", db);
        let dir = tempfile::tempdir().expect("tempdir");
        let config = dir.path().join("grafton.yaml");
        std::fs::write(&config, CONFIG).expect("config");
        let server = grafton_server::start(&options(url.clone(), &config))
            .await
            .expect("server starts");
        let base = format!("http://{}", server.addr);

        migrate(
            db,
            &url,
            "CREATE TABLE extra (id INTEGER PRIMARY KEY, name TEXT);
             INSERT INTO extra VALUES (7, 'seven');
             ALTER TABLE items ADD COLUMN note TEXT;",
        );
        let query = "{ extra { id name } items(order_by: {id: asc}) { id note } }";
        let before = post(&server.url(), query).await;
        assert_eq!(
            before["errors"][0]["extensions"]["code"], "validation-failed",
            "{db:?}: {before}"
        );

        let (status, body) = reload(&base, Some(ADMIN_SECRET)).await;
        assert_eq!(status, 200, "{db:?}: {body}");
        assert_eq!(body, json!({"message": "success", "is_consistent": true}));
        let after = post(&server.url(), query).await;
        assert_eq!(
            after,
            json!({"data": {"extra": [{"id": 7, "name": "seven"}],
                             "items": [{"id": 1, "note": null}, {"id": 2, "note": null}]}}),
            "{db:?}"
        );

        // The config file is read again too: `user` gets `extra`.
        let anonymous = |q: &'static str| {
            let url = server.url();
            async move {
                reqwest::Client::new()
                    .post(url)
                    .json(&json!({ "query": q }))
                    .send()
                    .await
                    .expect("request")
                    .json::<Value>()
                    .await
                    .expect("JSON")
            }
        };
        let denied = anonymous("{ extra { id } }").await;
        assert_eq!(
            denied["errors"][0]["extensions"]["code"], "validation-failed",
            "{db:?}: {denied}"
        );
        std::fs::write(
            &config,
            format!("{CONFIG}  extra:\n    permissions:\n      user:\n        select: {{columns: [id], filter: {{}}}}\n"),
        )
        .expect("config");
        let (status, body) = reload(&base, Some(ADMIN_SECRET)).await;
        assert_eq!(status, 200, "{db:?}: {body}");
        let allowed = anonymous("{ extra { id } }").await;
        assert_eq!(allowed, json!({"data": {"extra": [{"id": 7}]}}), "{db:?}");

        // A permission that cannot be served is left out whole, as Hasura does: the
        // reload succeeds, says it is not consistent, and lists it.
        std::fs::write(&config, "tables:\n  items:\n    permissions:\n      user:\n        select: {columns: [nope], filter: {}}\n").expect("config");
        migrate(db, &url, "CREATE TABLE later (id INTEGER PRIMARY KEY);");
        let (status, body) = reload(&base, Some(ADMIN_SECRET)).await;
        assert_eq!(status, 200, "{db:?}: {body}");
        assert_eq!(body["is_consistent"], false, "{db:?}: {body}");
        assert_eq!(
            body["inconsistent_objects"][0]["type"], "select_permission",
            "{db:?}: {body}"
        );
        let reason = body["inconsistent_objects"][0]["reason"]
            .as_str()
            .unwrap_or("");
        assert!(reason.contains("no column 'nope'"), "{db:?}: {body}");
        let later = post(&server.url(), "{ later { id } }").await;
        assert_eq!(later, json!({"data": {"later": []}}), "{db:?}");
        let items = anonymous("{ items { id } }").await;
        assert_eq!(
            items["errors"][0]["extensions"]["code"], "validation-failed",
            "{db:?}: {items}"
        );
        let (status, listed) = metadata(
            &base,
            json!({"type": "get_inconsistent_metadata", "args": {}}),
        )
        .await;
        assert_eq!(status, 200, "{db:?}: {listed}");
        assert_eq!(
            listed["inconsistent_objects"], body["inconsistent_objects"],
            "{db:?}"
        );

        // A config that does not parse keeps the schema being served, and says why.
        std::fs::write(&config, "tables:\n  items:\n    permisions: {}\n").expect("config");
        migrate(
            db,
            &url,
            "CREATE TABLE later_still (id INTEGER PRIMARY KEY);",
        );
        let (status, body) = reload(&base, Some(ADMIN_SECRET)).await;
        assert_eq!(status, 400, "{db:?}: {body}");
        assert_eq!(body["code"], "reload-failed", "{db:?}: {body}");
        assert!(
            body["error"].as_str().unwrap_or("").contains("permisions"),
            "{db:?}: the error names the bad key: {body}"
        );
        let still = post(&server.url(), "{ later_still { id } }").await;
        assert_eq!(
            still["errors"][0]["extensions"]["code"], "validation-failed",
            "{db:?}: the failed reload changed nothing: {still}"
        );
        assert_eq!(
            post(&server.url(), "{ later { id } }").await,
            later,
            "{db:?}"
        );
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metadata_api_is_for_admin_only() {
    let url = own_database("reload_admin", Db::Sqlite);
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("grafton.yaml");
    std::fs::write(&config, CONFIG).expect("config");
    let server = grafton_server::start(&options(url, &config))
        .await
        .expect("server starts");
    let base = format!("http://{}", server.addr);
    // No credentials: the unauthorized role, which is not admin (Hasura: 400).
    let (status, body) = reload(&base, None).await;
    assert_eq!(
        (status, &body["code"], &body["error"], &body["path"]),
        (
            400,
            &json!("access-denied"),
            &json!("restricted access : admin only"),
            &json!("$.args")
        ),
        "{body}"
    );
    let (status, body) = reload(&base, Some("wrong")).await;
    assert_eq!(
        (status, &body["code"]),
        (401, &json!("access-denied")),
        "{body}"
    );
    let response = reqwest::Client::new()
        .post(format!("{base}/v1/metadata"))
        .header("x-hasura-admin-secret", ADMIN_SECRET)
        .json(&json!({"type": "replace_metadata", "args": {}}))
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.expect("JSON");
    assert_eq!(body["code"], "not-supported", "{body}");
    assert_eq!(body["path"], "$.type", "{body}");
    // A command Hasura does not know either is a parse error, as Hasura answers it.
    let (status, body) = metadata(&base, json!({"type": "frobnicate", "args": {}})).await;
    assert_eq!(
        (status, &body["code"], &body["error"]),
        (
            400,
            &json!("parse-failed"),
            &json!("unknown metadata command \"frobnicate\"")
        ),
        "{body}"
    );
    // bulk: each answer in order; the first error is the answer, its path inside.
    let consistent = json!({"type": "get_inconsistent_metadata", "args": {}});
    let unserved = json!({"type": "create_rest_endpoint", "args": {}});
    let (status, body) = metadata(
        &base,
        json!({"type": "bulk", "args": [consistent, {"type": "reload_metadata", "args": {}}]}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body[0]["is_consistent"], true, "{body}");
    assert_eq!(body[1]["message"], "success", "{body}");
    let (status, body) = metadata(
        &base,
        json!({"type": "bulk", "args": [consistent, unserved, consistent]}),
    )
    .await;
    assert_eq!(
        (status, &body["code"], &body["path"]),
        (400, &json!("not-supported"), &json!("$.args[1].type")),
        "{body}"
    );
    // bulk_keep_going: every command answered, an error in its own slot.
    let (status, body) = metadata(
        &base,
        json!({"type": "bulk_keep_going", "args": [unserved, consistent]}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body[0]["code"], "not-supported", "{body}");
    assert_eq!(body[0]["path"], "$.args[0].type", "{body}");
    assert_eq!(body[1]["is_consistent"], true, "{body}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_reloads_after_ddl_on_postgres() {
    let url = own_database("watch", Db::Postgres);
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("grafton.yaml");
    std::fs::write(&config, CONFIG).expect("config");
    let mut o = options(url.clone(), &config);
    o.watch = true;
    let server = grafton_server::start(&o).await.expect("server starts");
    migrate(
        Db::Postgres,
        &url,
        "CREATE TABLE watched (id integer PRIMARY KEY); INSERT INTO watched VALUES (3);",
    );
    let migrated = Instant::now();
    let answer = loop {
        let body = post(&server.url(), "{ watched { id } }").await;
        if body.get("data").is_some() || migrated.elapsed() > Duration::from_secs(10) {
            break body;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(answer, json!({"data": {"watched": [{"id": 3}]}}));
    eprintln!("served {:?} after the DDL", migrated.elapsed());
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_is_refused_on_sqlite() {
    let url = own_database("watch_sqlite", Db::Sqlite);
    let o = ServeOptions {
        database_url: url,
        port: 0,
        watch: true,
        ..ServeOptions::default()
    };
    let error = grafton_server::start(&o).await.err().expect("refused");
    assert!(
        error.to_string().contains("--watch needs PostgreSQL"),
        "{error}"
    );
}
