//! Streaming subscriptions: every row past the cursor once, in cursor order, in
//! batches, also while rows are being inserted.

use crate::client::{Client, Event, TRANSPORT_WS};
use crate::*;
use std::time::{Duration, Instant};

const STREAM: &str = "subscription { items_stream(batch_size: 2, cursor: {initial_value: {id: 0}, ordering: ASC}) { id owner } }";

/// The ids of one streamed batch of `id`.
fn batch_ids(m: &Value, id: &str) -> Vec<i64> {
    assert_eq!(
        (m["type"].as_str(), m["id"].as_str()),
        (Some("next"), Some(id)),
        "{m}"
    );
    m["payload"]["data"]["items_stream"]
        .as_array()
        .unwrap_or_else(|| panic!("no rows: {m}"))
        .iter()
        .map(|r| {
            // Only the fields asked for: the cursor's hidden field is gone.
            assert_eq!(r.as_object().map(|o| o.len()), Some(2), "{r}");
            r["id"].as_i64().expect("id")
        })
        .collect()
}

#[test]
fn a_stream_delivers_every_row_once_in_order_while_rows_arrive() {
    run(async {
        for db in BOTH {
            let server = start(options(db, Duration::from_millis(200)));
            let mut c = Client::admin(server, TRANSPORT_WS).await;
            c.start("s", STREAM, json!({})).await;
            // One writer inserts 30 rows through Grafton while the stream reads.
            let writer = tokio::spawn(async move {
                for id in 100..130 {
                    let body = post(
                        server,
                        "mutation ($id: Int!) { insert_items_one(object: {id: $id, owner: \"z\", label: \"streamed\"}) { id } }",
                        json!({"id": id}),
                    )
                    .await;
                    assert_eq!(body["data"]["insert_items_one"]["id"], id, "{body}");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            });
            let expected: Vec<i64> = (1..=6).chain(100..130).collect();
            let mut seen = Vec::new();
            let deadline = Instant::now() + Duration::from_secs(20);
            while seen.len() < expected.len() && Instant::now() < deadline {
                if let Event::Message(m) = c.next(Duration::from_secs(5)).await {
                    let ids = batch_ids(&m, "s");
                    assert!(!ids.is_empty() && ids.len() <= 2, "{db:?}: batch {ids:?}");
                    seen.extend(ids);
                }
            }
            writer.await.expect("writer");
            assert_eq!(seen, expected, "{db:?}");
            // Nothing comes twice.
            assert_eq!(
                c.next(Duration::from_secs(1)).await,
                Event::Silent,
                "{db:?}"
            );

            // A variable's initial value, and a descending cursor.
            c.start(
                "d",
                "subscription ($from: Int!) { items_stream(batch_size: 10, cursor: {initial_value: {id: $from}, ordering: DESC}, where: {owner: {_eq: \"a\"}}) { id owner } }",
                json!({"from": 4}),
            )
            .await;
            match c.next(Duration::from_secs(5)).await {
                Event::Message(m) => assert_eq!(batch_ids(&m, "d"), [3, 2, 1], "{db:?}"),
                other => panic!("{db:?}: {other:?}"),
            }
            c.close().await;
            post(
                server,
                "mutation { delete_items(where: {id: {_gte: 100}}) { affected_rows } }",
                json!({}),
            )
            .await;
        }
    })
}

#[test]
fn a_stream_takes_exactly_one_cursor() {
    run(async {
        let server = start(options(Db::Sqlite, Duration::from_secs(1)));
        let mut c = Client::admin(server, TRANSPORT_WS).await;
        c.start(
            "x",
            "subscription { items_stream(batch_size: 1, cursor: [{initial_value: {id: 0}}, {initial_value: {label: \"a\"}}]) { id } }",
            json!({}),
        )
        .await;
        let code = c.error_code("x", Duration::from_secs(5)).await;
        assert_eq!(code, "not-supported");
    })
}
