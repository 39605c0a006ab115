//! Start-up failures are one clear line, not a panic or a multi-line dump.

use grafton_server::ServeOptions;
use std::time::Duration;

async fn start_error(database_url: String) -> String {
    let options = ServeOptions {
        database_url: database_url.clone(),
        port: 0,
        ..Default::default()
    };
    let result = tokio::time::timeout(Duration::from_secs(60), grafton_server::start(&options))
        .await
        .unwrap_or_else(|_| panic!("start({database_url}) did not fail within 60 s"));
    match result {
        Ok(running) => {
            let addr = running.addr;
            running.stop().await;
            panic!("start({database_url}) succeeded (listening on {addr})")
        }
        Err(e) => e.to_string(),
    }
}

fn assert_one_line(message: &str) {
    assert!(!message.trim().is_empty(), "empty error message");
    assert!(
        !message.contains('\n') && !message.contains('\r'),
        "the error is not a single line: {message:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_postgres_is_a_one_line_error() {
    // Port 1 on localhost: connection refused.
    let message = start_error("postgres://grafton@127.0.0.1:1/nowhere".to_owned()).await;
    assert_one_line(&message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_sqlite_file_is_a_one_line_error() {
    let dir = grafton_testkit::sqlite_path("missing");
    let in_missing_dir = dir.with_extension("d").join("absent.db");
    let message = start_error(in_missing_dir.display().to_string()).await;
    assert_one_line(&message);

    let absent = grafton_testkit::sqlite_path("absent");
    let message = start_error(absent.display().to_string()).await;
    assert_one_line(&message);
    assert!(
        !absent.exists(),
        "starting on a missing SQLite file must not create it: {}",
        absent.display()
    );
    let message = start_error(format!("sqlite://{}", absent.display())).await;
    assert_one_line(&message);
}

/// Tables whose GraphQL names collide with GraphQL's own, the schema's shared types
/// or another table's generated names are skipped with a warning; the API starts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn colliding_table_names_never_stop_start_up() {
    let ddl = |pg: bool| {
        let t = if pg { "text" } else { "TEXT" };
        format!(
            "CREATE TABLE \"String\" (id int PRIMARY KEY); CREATE TABLE \"Int\" (id int PRIMARY KEY); \
             CREATE TABLE query_root (id int PRIMARY KEY); CREATE TABLE order_by (id int PRIMARY KEY); \
             CREATE TABLE jsonb (id int PRIMARY KEY); CREATE TABLE \"Boolean_comparison_exp\" (id int PRIMARY KEY); \
             CREATE TABLE items (id int PRIMARY KEY, name {t}); \
             CREATE TABLE items_aggregate (id int PRIMARY KEY); CREATE TABLE items_by_pk (id int PRIMARY KEY); \
             CREATE TABLE items_bool (id int PRIMARY KEY); \
             INSERT INTO items VALUES (1, 'kept');"
        )
    };
    let sqlite = grafton_testkit::sqlite_path("collide");
    rusqlite::Connection::open(&sqlite)
        .expect("sqlite file")
        .execute_batch(&ddl(false))
        .expect("sqlite tables");
    let postgres = grafton_testkit::fresh_database("collide");
    grafton_testkit::psql(&postgres, ddl(true).as_bytes());
    for url in [sqlite.display().to_string(), postgres] {
        let running = grafton_server::start(&ServeOptions {
            database_url: url.clone(),
            port: 0,
            ..Default::default()
        })
        .await
        .unwrap_or_else(|e| panic!("{url}: start-up failed: {e}"));
        let body = serde_json::json!({"query": "{ items { name } items_bool { id } __schema { queryType { fields { name } } } }"});
        let (_, v, _) = crate::common::post_to(&running.url(), &body).await;
        assert_eq!(
            v["data"]["items"],
            serde_json::json!([{"name": "kept"}]),
            "{url}: {v}"
        );
        let roots: Vec<&str> = v["data"]["__schema"]["queryType"]["fields"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f["name"].as_str())
            .collect();
        for skipped in [
            "String",
            "Int",
            "query_root",
            "order_by",
            "jsonb",
            "items_by_pk_by_pk",
            "items_aggregate_by_pk",
        ] {
            assert!(!roots.contains(&skipped), "{url}: {skipped} in {roots:?}");
        }
        assert!(roots.contains(&"items_by_pk"), "{url}: {roots:?}");
        running.stop().await;
    }
}

/// A relationship chain past SQLite's expression-depth limit is refused as an invalid
/// request (`validation-failed`), not reported as an unexpected database failure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chain_too_deep_for_sqlite_is_a_validation_error() {
    let depth = 60;
    let mut query = String::from("{ meetups(limit: 1) { id ");
    for _ in 0..depth {
        query.push_str("venue { meetups(limit: 1) { id ");
    }
    for _ in 0..depth {
        query.push_str("} } ");
    }
    query.push_str("} }");
    let (status, v, _) = crate::common::post(
        crate::common::Server::Sqlite,
        &query,
        serde_json::Value::Null,
    )
    .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(
        v["errors"][0]["extensions"]["code"], "validation-failed",
        "{v}"
    );
    assert!(v.get("data").is_none(), "a request error has no data: {v}");
}
