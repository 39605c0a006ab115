//! Atomic increments and no lost inserts under concurrent clients.

use crate::*;
use serde_json::json;

const CLIENTS: usize = 50;
const INCREMENTS: usize = 100;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_increments_are_atomic() {
    let _g = serial().await;
    for db in BOTH {
        ok(
            db,
            "mutation { update_counters_by_pk(pk_columns: {id: 1}, _set: {n: 0}) { n } }",
            json!(null),
        )
        .await;
        let mut tasks = Vec::new();
        for _ in 0..CLIENTS {
            tasks.push(tokio::spawn(async move {
                for _ in 0..INCREMENTS {
                    let (status, v) = post(
                        db,
                        "mutation { update_counters_by_pk(pk_columns: {id: 1}, _inc: {n: 1}) { n } }",
                        json!(null),
                    )
                    .await;
                    assert!(status.is_success() && v.get("errors").is_none(), "{db:?}: {v}");
                }
            }));
        }
        for t in tasks {
            t.await.expect("client task");
        }
        let d = ok(db, "{ counters_by_pk(id: 1) { n } }", json!(null)).await;
        assert_eq!(
            d["counters_by_pk"]["n"],
            json!(CLIENTS * INCREMENTS),
            "{db:?}"
        );
        ok(
            db,
            "mutation { update_counters_by_pk(pk_columns: {id: 1}, _set: {n: 0}) { n } }",
            json!(null),
        )
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_inserts_lose_no_acknowledged_row() {
    let _g = serial().await;
    for db in BOTH {
        let mut tasks = Vec::new();
        for client in 0..20 {
            tasks.push(tokio::spawn(async move {
                let mut acknowledged = Vec::new();
                for i in 0..20 {
                    let title = format!("concurrent-{client}-{i}");
                    let (_, v) = post(
                        db,
                        "mutation ($t: String!) { insert_events_one(object: {title: $t}) { id title } }",
                        json!({"t": title}),
                    )
                    .await;
                    if v["data"]["insert_events_one"]["title"] == title {
                        acknowledged.push(v["data"]["insert_events_one"]["id"].clone());
                    }
                }
                acknowledged
            }));
        }
        let mut ids = Vec::new();
        for t in tasks {
            ids.extend(t.await.expect("client task"));
        }
        assert_eq!(
            ids.len(),
            400,
            "{db:?}: every insert should be acknowledged"
        );
        let d = ok(
            db,
            r#"{ events(where: {title: {_like: "concurrent-%"}}) { id } }"#,
            json!(null),
        )
        .await;
        let mut stored: Vec<i64> = d["events"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["id"].as_i64())
            .collect();
        let mut acked: Vec<i64> = ids.iter().filter_map(|v| v.as_i64()).collect();
        stored.sort_unstable();
        acked.sort_unstable();
        assert_eq!(stored, acked, "{db:?}");
        ok(db, r#"mutation { delete_events(where: {title: {_like: "concurrent-%"}}) { affected_rows } }"#, json!(null)).await;
    }
}
