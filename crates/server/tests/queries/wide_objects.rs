//! Objects wider than one JSON-building call allows (PostgreSQL: 50 pairs, SQLite: 60)
//! are built in chunks; the result must keep every key, in order, on both backends.

use grafton_server::{start, ServeOptions};

const COLUMNS: usize = 130;

fn ddl() -> String {
    let cols: Vec<String> = (0..COLUMNS).map(|i| format!("c{i} integer")).collect();
    let vals: Vec<String> = (0..COLUMNS).map(|i| (i * 7).to_string()).collect();
    format!(
        "CREATE TABLE wide (id integer PRIMARY KEY, {}); INSERT INTO wide VALUES (1, {});",
        cols.join(", "),
        vals.join(", ")
    )
}

async fn fetch(url: &str, query: &str) -> String {
    reqwest::Client::new()
        .post(url)
        .json(&serde_json::json!({ "query": query }))
        .send()
        .await
        .expect("request")
        .text()
        .await
        .expect("body")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wide_rows_are_complete_and_identical_on_both_backends() {
    let sqlite = grafton_testkit::sqlite_path("wide");
    rusqlite::Connection::open(&sqlite)
        .expect("open sqlite")
        .execute_batch(&ddl())
        .expect("sqlite ddl");
    let pg = grafton_testkit::fresh_database("wide");
    grafton_testkit::psql(&pg, ddl().as_bytes());

    let fields: Vec<String> = (0..COLUMNS).map(|i| format!("c{i}")).collect();
    // Nested twice so chunked objects also appear inside relationship-free subqueries.
    let query = format!(
        "{{ wide {{ id {f} }} wide_by_pk(id: 1) {{ {f} }} }}",
        f = fields.join(" ")
    );
    let mut bodies = Vec::new();
    for url in [format!("sqlite://{}", sqlite.display()), pg] {
        let server = start(&ServeOptions {
            database_url: url,
            port: 0,
            ..ServeOptions::default()
        })
        .await
        .expect("server starts");
        bodies.push(fetch(&server.url(), &query).await);
        server.stop().await;
    }
    assert_eq!(bodies[0], bodies[1], "SQLite and PostgreSQL differ");
    let value: serde_json::Value = serde_json::from_str(&bodies[0]).expect("json");
    let row = value["data"]["wide_by_pk"].as_object().expect("object");
    let keys: Vec<&String> = row.keys().collect();
    assert_eq!(
        keys,
        fields.iter().collect::<Vec<_>>(),
        "keys in document order"
    );
    assert_eq!(row["c129"], serde_json::json!(129 * 7));
    assert_eq!(value["data"]["wide"][0]["c60"], serde_json::json!(60 * 7));
}
