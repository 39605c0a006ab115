//! An enum table's rows are the values of a GraphQL enum. A value written through
//! Grafton must be one GraphQL can serve (else the schema's next reload would fail
//! for good), and once written it is served as an enum value at once: the schema
//! reloads after a write to an enum table, on every instance (PostgreSQL's change
//! feed). A value a writer outside Grafton adds that cannot be served makes the
//! reload fail, naming it.

use crate::{databases, options, post_as};
use grafton_server::Running;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const FIXTURE: &str = "
CREATE TABLE statuses (value TEXT NOT NULL PRIMARY KEY, comment TEXT);
INSERT INTO statuses VALUES ('draft', NULL), ('published', NULL);
CREATE TABLE docs (id INTEGER NOT NULL PRIMARY KEY, status TEXT NOT NULL REFERENCES statuses (value));
INSERT INTO docs VALUES (1, 'draft');
";

/// `writer` inserts statuses named by its session (a preset).
const CONFIG: &str = "
tables:
  statuses:
    is_enum: true
    permissions:
      writer:
        select: {columns: [value], filter: {}}
        insert: {columns: [value, comment], set: {value: X-Hasura-User-Id}}
";

/// The values of `statuses_enum` as `server` serves them.
async fn values(server: &Running) -> Vec<Value> {
    let body = post_as(
        server,
        None,
        "",
        r#"{ __type(name: "statuses_enum") { enumValues { name } } }"#,
    )
    .await;
    let values = body["data"]["__type"]["enumValues"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    values.into_iter().map(|v| v["name"].clone()).collect()
}

/// Waits (up to 10 s) until `server` serves `value` in the enum.
async fn serves(server: &Running, value: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !values(server).await.contains(&json!(value)) {
        assert!(
            Instant::now() < deadline,
            "'{value}' never became an enum value"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_written_through_grafton_are_checked_and_served_at_once() {
    for url in databases("hardening_enums", FIXTURE) {
        // Strict: a reload that meets an enum table it cannot serve fails whole.
        let strict = grafton_server::ServeOptions {
            strict_metadata: true,
            ..options(&url, CONFIG)
        };
        let server = grafton_server::start(&strict).await.expect("server");
        let other = grafton_server::start(&options(&url, CONFIG))
            .await
            .expect("second instance");
        assert_eq!(values(&server).await, [json!("draft"), json!("published")]);

        // A value GraphQL cannot serve is refused, on insert and on update.
        for write in [
            r#"mutation { insert_statuses_one(object: {value: "in-review"}) { value } }"#,
            r#"mutation { update_statuses(where: {value: {_eq: "draft"}}, _set: {value: "__x"}) { affected_rows } }"#,
        ] {
            let body = post_as(&server, None, "", write).await;
            assert_eq!(
                body["errors"][0]["extensions"]["code"], "validation-failed",
                "{url}: {body}"
            );
            assert!(
                body.to_string()
                    .contains("cannot be a value of the enum table 'statuses'"),
                "{body}"
            );
        }

        // A preset is checked as a written value is.
        let body = post_as(
            &server,
            Some("writer"),
            "bad-id",
            r#"mutation { insert_statuses_one(object: {comment: "mine"}) { value } }"#,
        )
        .await;
        assert_eq!(
            body["errors"][0]["extensions"]["code"], "validation-failed",
            "{url}: {body}"
        );

        // A good one is served as an enum value at once, and on PostgreSQL by the
        // other instance too (its change feed tells it of the write).
        let body = post_as(
            &server,
            None,
            "",
            r#"mutation { insert_statuses_one(object: {value: "archived"}) { value } }"#,
        )
        .await;
        assert_eq!(
            body["data"]["insert_statuses_one"]["value"], "archived",
            "{url}: {body}"
        );
        serves(&server, "archived").await;
        let body = post_as(
            &server,
            None,
            "",
            "mutation { insert_docs_one(object: {id: 2, status: archived}) { status } }",
        )
        .await;
        assert_eq!(
            body["data"]["insert_docs_one"]["status"], "archived",
            "{url}: {body}"
        );
        if url.starts_with("postgres") {
            serves(&other, "archived").await;
        }

        // Outside Grafton nothing checks the value: the (strict) reload that reads it
        // fails and says which, and the schema served stays whole.
        let sql = "INSERT INTO statuses VALUES ('on-hold', NULL);";
        if url.starts_with("postgres") {
            grafton_testkit::psql(&url, sql.as_bytes());
        } else {
            rusqlite::Connection::open(&url)
                .and_then(|c| c.execute_batch(sql))
                .expect("write");
        }
        let (status, text) = crate::reload(&server).await;
        assert_eq!(status, 400);
        assert!(
            text.contains("'on-hold' is not a GraphQL enum value"),
            "{text}"
        );
        assert!(values(&server).await.contains(&json!("archived")));
    }
}
