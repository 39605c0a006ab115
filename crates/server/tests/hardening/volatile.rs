//! A VOLATILE function exposed as a query writes each time it runs, so it runs only
//! where a write may: for roles its permissions name (Hasura would infer every role
//! that may select its table), over POST or a WebSocket's single answer, never over
//! GET (which a cross-site page can trigger with the user's cookies) and never as a
//! subscription field (every poll would write again). PostgreSQL only.

use crate::{post_as, serve, ADMIN_SECRET};
use serde_json::{json, Value};

const FIXTURE: &str = "
CREATE TABLE events (id SERIAL PRIMARY KEY, msg TEXT NOT NULL);
CREATE FUNCTION log_event(msg text) RETURNS SETOF events VOLATILE LANGUAGE sql
  AS $$ INSERT INTO events (msg) VALUES (msg) RETURNING * $$;
";

const CONFIG: &str = r#"
tables:
  events:
    permissions:
      reader: {select: {columns: [id, msg], filter: {}}}
      writer: {select: {columns: [id, msg], filter: {}}}
functions:
  log_event:
    exposed_as: query
    permissions: [{role: writer}]
"#;

/// The names of a root type's fields, as `role` sees them.
async fn root_fields(server: &grafton_server::Running, role: &str, root: &str) -> Vec<Value> {
    let body = post_as(
        server,
        Some(role),
        "1",
        &format!("{{ __schema {{ {root} {{ fields {{ name }} }} }} }}"),
    )
    .await;
    let fields = body["data"]["__schema"][root]["fields"].as_array().cloned();
    fields
        .unwrap_or_default()
        .into_iter()
        .map(|f| f["name"].clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_volatile_query_function_writes_only_over_post_for_its_roles() {
    let postgres = grafton_testkit::fresh_database("hardening_volatile");
    grafton_testkit::psql(&postgres, FIXTURE.as_bytes());
    let server = serve(&postgres, CONFIG).await;
    let call = r#"{ log_event(args: {msg: "x"}) { id } }"#;

    // A role that may only select the table does not get the function.
    assert!(!root_fields(&server, "reader", "queryType")
        .await
        .contains(&json!("log_event")));
    let body = post_as(&server, Some("reader"), "1", call).await;
    assert_eq!(
        body["errors"][0]["extensions"]["code"], "validation-failed",
        "{body}"
    );

    // Its role has it as a query, not as a subscription.
    assert!(root_fields(&server, "writer", "queryType")
        .await
        .contains(&json!("log_event")));
    assert!(!root_fields(&server, "writer", "subscriptionType")
        .await
        .contains(&json!("log_event")));

    // Over GET it is refused before anything runs, through a fragment too.
    for document in [
        call,
        r#"query { ...F } fragment F on query_root { log_event(args: {msg: "y"}) { id } }"#,
    ] {
        let response = reqwest::Client::new()
            .get(server.url())
            .query(&[("query", document)])
            .header("x-hasura-admin-secret", ADMIN_SECRET)
            .header("x-hasura-role", "writer")
            .send()
            .await
            .expect("GET");
        assert_eq!(response.status(), 405);
        let body: Value = response.json().await.expect("JSON");
        assert_eq!(
            body["errors"][0]["extensions"]["code"], "method-not-allowed",
            "{body}"
        );
    }

    // Over POST it runs, once.
    let body = post_as(&server, Some("writer"), "1", call).await;
    assert_eq!(body["data"]["log_event"], json!([{"id": 1}]), "{body}");
    let count = post_as(
        &server,
        None,
        "",
        "{ events_aggregate { aggregate { count } } }",
    )
    .await;
    assert_eq!(
        count["data"]["events_aggregate"]["aggregate"]["count"], 1,
        "{count}"
    );
}
