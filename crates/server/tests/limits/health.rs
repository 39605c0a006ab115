//! `/readyz` follows the database: 200 while it answers, 503 once it is gone;
//! `/healthz` (the process is alive) stays 200.

use grafton_server::{start, ServeOptions};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_turns_503_when_the_database_goes_away() {
    let url = grafton_testkit::fresh_database("health");
    grafton_testkit::psql(
        &url,
        b"CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1);",
    );
    let server = start(&ServeOptions {
        database_url: url.clone(),
        port: 0,
        pool_size: 2,
        ..ServeOptions::default()
    })
    .await
    .expect("server starts");
    let health = format!("http://{}/readyz", server.addr);
    let alive = format!("http://{}/healthz", server.addr);
    let client = reqwest::Client::new();
    let status = client.get(&health).send().await.expect("readyz").status();
    assert_eq!(status, 200);

    // Drop the database under the server (terminating its connections).
    let name = url.rsplit('/').next().expect("database name").to_owned();
    let admin = url.rsplit_once('/').expect("url").0.to_owned() + "/postgres";
    grafton_testkit::psql(
        &admin,
        format!("DROP DATABASE \"{name}\" WITH (FORCE);").as_bytes(),
    );

    let response = client.get(&health).send().await.expect("readyz");
    assert_eq!(response.status(), 503);
    let response = client.get(&alive).send().await.expect("healthz");
    assert_eq!(response.status(), 200);
    let response = client
        .post(server.url())
        .json(&serde_json::json!({"query": "{ t { id } }"}))
        .send()
        .await
        .expect("query");
    let status = response.status();
    let retry_after = response.headers().get("retry-after").cloned();
    let body: serde_json::Value = response.json().await.expect("json error body");
    assert_eq!(status, 503, "{body}");
    assert_eq!(
        body["errors"][0]["extensions"]["code"], "database-unavailable",
        "{body}"
    );
    assert_eq!(
        retry_after.as_ref().and_then(|v| v.to_str().ok()),
        Some("1")
    );
    // Mutations too: every path that needs the database says so.
    let response = client
        .post(server.url())
        .json(&serde_json::json!({"query": "mutation { delete_t(where: {}) { affected_rows } }"}))
        .send()
        .await
        .expect("mutation");
    let status = response.status();
    let body: serde_json::Value = response.json().await.expect("json error body");
    assert_eq!(status, 503, "{body}");
    assert_eq!(
        body["errors"][0]["extensions"]["code"], "database-unavailable",
        "{body}"
    );
    server.stop().await;
}
