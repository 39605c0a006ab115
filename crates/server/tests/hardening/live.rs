//! Live queries under hostile conditions: a permission revoked while subscriptions
//! are open (they are planned again under the new one, or end with its error), one
//! user holding a role's whole `subscription_limit`, and clients that never read
//! their answers (held under the process's live-query memory budget).

use crate::client::{Client, Event, LEGACY, TRANSPORT_WS};
use crate::{databases, options, DOCUMENTS};
use grafton_server::ConfigSources;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::time::Duration;

const GRANTED: &str = r#"
tables:
  documents:
    permissions:
      user:
        select: {columns: [id, title, secret], filter: {owner: {_eq: X-Hasura-User-Id}}}
"#;

/// `secret` revoked and the rows narrowed to one.
const REVOKED: &str = r#"
tables:
  documents:
    permissions:
      user:
        select: {columns: [id, title], filter: {_and: [{owner: {_eq: X-Hasura-User-Id}}, {id: {_eq: 1}}]}}
"#;

async fn reload(server: &grafton_server::Running) {
    let (status, body) = crate::reload(server).await;
    assert_eq!(status, 200, "{body}");
}

/// The next message of each of `n` operations, by id (in whichever order they come).
async fn messages(c: &mut Client, protocol: &str, n: usize) -> HashMap<String, Value> {
    let mut seen = HashMap::new();
    while seen.len() < n {
        let m = match c.next(Duration::from_secs(10)).await {
            Event::Message(m) => m,
            other => panic!("{protocol}: {other:?}"),
        };
        seen.insert(m["id"].as_str().unwrap_or("").to_owned(), m);
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_replans_open_subscriptions_under_the_new_permissions() {
    for url in databases("hardening_live_reload", DOCUMENTS) {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("grafton.yaml");
        std::fs::write(&path, GRANTED).expect("config");
        let sources = ConfigSources {
            config: Some(path.clone()),
            ..ConfigSources::default()
        };
        let mut o = options(&url, GRANTED);
        o.config = sources.load().expect("config");
        o.sources = Some(sources);
        let server = grafton_server::start(&o).await.expect("server");
        for protocol in [TRANSPORT_WS, LEGACY] {
            std::fs::write(&path, GRANTED).expect("config");
            reload(&server).await;
            let mut c = Client::user(&server, protocol, "a").await;
            c.start(
                "secret",
                "subscription { documents(order_by: {id: asc}) { id title secret } }",
                json!({}),
            )
            .await;
            c.start(
                "titles",
                "subscription { documents(order_by: {id: asc}) { id title } }",
                json!({}),
            )
            .await;
            // A stream, and a query whose answer the revocation leaves as it is.
            c.start("stream", "subscription { documents_stream(batch_size: 10, cursor: {initial_value: {id: 0}}) { id } }", json!({})).await;
            c.start(
                "same",
                "subscription { documents(where: {id: {_eq: 1}}) { id title } }",
                json!({}),
            )
            .await;
            let first = messages(&mut c, protocol, 4).await;
            assert_eq!(
                first["secret"]["payload"]["data"]["documents"][1]["secret"], "s2",
                "{protocol}: {first:?}"
            );

            std::fs::write(&path, REVOKED).expect("config");
            reload(&server).await;
            // The subscription reading `secret` ends with the validation error; the
            // other answers again under the narrowed rows; nothing old comes after.
            let seen = messages(&mut c, protocol, 2).await;
            assert_eq!(seen["secret"]["type"], "error", "{protocol}: {seen:?}");
            assert_eq!(
                seen["secret"]["payload"][0]["extensions"]["code"],
                "validation-failed"
            );
            assert_eq!(
                seen["titles"]["payload"]["data"]["documents"],
                json!([{"id": 1, "title": "one"}]),
                "{protocol}"
            );
            // And nothing more: no answer planned before the reload arrives late, the
            // unchanged answer is not sent again, and the stream goes on from its
            // cursor (past rows 1 and 2) instead of sending row 1 again.
            assert_eq!(
                c.next(Duration::from_millis(1500)).await,
                Event::Silent,
                "{protocol}"
            );
            c.close().await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscription_limit_counts_each_session_of_a_role_apart() {
    let [sqlite, _] = databases("hardening_live_sessions", DOCUMENTS);
    let mut o = options(&sqlite, GRANTED);
    o.config.api_limits =
        serde_norway::from_str("subscription_limit: {per_role: {user: 2}}").expect("limits");
    let server = grafton_server::start(&o).await.expect("server");
    let query = "subscription { documents { id } }";
    let mut a = Client::user(&server, TRANSPORT_WS, "a").await;
    a.start("1", query, json!({})).await;
    a.result("1").await;
    a.start("2", query, json!({})).await;
    a.result("2").await;
    a.start("3", query, json!({})).await;
    assert_eq!(
        a.error_code("3", Duration::from_secs(5)).await,
        "subscription-limit-exceeded"
    );
    // Another user of the role has a quota of its own, on any connection.
    let mut b = Client::user(&server, TRANSPORT_WS, "b").await;
    for id in ["1", "2"] {
        b.start(id, query, json!({})).await;
        assert_eq!(
            b.result(id).await["data"]["documents"],
            json!([{"id": 3}, {"id": 4}])
        );
    }
    b.start("3", query, json!({})).await;
    assert_eq!(
        b.error_code("3", Duration::from_secs(5)).await,
        "subscription-limit-exceeded"
    );
}

/// Rows of about 100 kB each, so a few answers pass the kernel's socket buffers.
const BLOBS: &str = "
CREATE TABLE blobs (id INTEGER NOT NULL PRIMARY KEY, body TEXT NOT NULL);
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_that_never_read_are_held_under_the_memory_budget() {
    let rows: String = (1..=20)
        .map(|i| {
            format!(
                "INSERT INTO blobs VALUES ({i}, '{}');\n",
                "x".repeat(100_000)
            )
        })
        .collect();
    let [sqlite, _] = databases("hardening_live_memory", &format!("{BLOBS}{rows}"));
    let mut o = options(&sqlite, "{}");
    let budget = 4_000_000;
    o.live.max_bytes = budget;
    // A connection that takes no message for this long is dropped.
    o.http.ws.keep_alive = Duration::from_secs(3);
    let server = grafton_server::start(&o).await.expect("server");
    // One connection asks for 100 answers of 2 MB and never reads them.
    let mut hog = Client::admin(&server, TRANSPORT_WS).await;
    for i in 0..100 {
        let query = format!(
            "subscription {{ blobs(where: {{id: {{_gt: {}}}}}) {{ id body }} }}",
            i % 3
        );
        hog.start(&i.to_string(), &query, json!({})).await;
    }
    let mut peak = 0;
    for _ in 0..30 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let queued = server.engine.live_queued_bytes();
        assert!(
            queued <= budget,
            "{queued} bytes queued, over the budget of {budget}"
        );
        peak = peak.max(queued);
    }
    assert!(
        peak > budget / 2,
        "the budget was never approached ({peak} bytes): the test proves nothing"
    );
    // The hog's subscriptions whose answers did not fit ended (their errors queued
    // behind the answers it does not read).
    let (_, live) = server.engine.live_counts();
    assert!(
        live < 100,
        "{live} of the hog's 100 subscriptions still live"
    );
    // A client that reads, and so holds nothing, is never ended for the hog's bytes:
    // its answer comes as soon as there is room (at the latest when the server drops
    // the hog, which takes no message for the keep-alive period).
    let mut reader = Client::admin(&server, TRANSPORT_WS).await;
    reader
        .start("r", "subscription { blobs { id body } }", json!({}))
        .await;
    let answer = reader.result_within("r", Duration::from_secs(20)).await;
    assert_eq!(answer["data"]["blobs"].as_array().map(Vec::len), Some(20));
    drop(hog);
    reader
        .start(
            "small",
            "subscription { blobs(limit: 1) { id } }",
            json!({}),
        )
        .await;
    assert_eq!(
        reader.result("small").await["data"]["blobs"],
        json!([{"id": 1}])
    );
    assert!(server.engine.live_queued_bytes() <= budget);
}
