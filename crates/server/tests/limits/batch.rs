//! Batches: a JSON array body runs each operation in turn and answers an array in
//! the same order; `batch_limit` bounds its length.

use crate::*;
use serde_json::{json, Value};

async fn post_batch(url: &str, role: &str, batch: Value) -> (u16, Value) {
    post_json(url, Some(role), &batch).await
}

#[tokio::test]
async fn a_batch_answers_each_operation_in_order_up_to_its_limit() {
    run(async {
        for db in BOTH {
            let url = url(db);
            let op = |id: u32| json!({"query": "query($id: Int!) { nodes_by_pk(id: $id) { id } }", "variables": {"id": id}});
            let (status, body) =
                post_batch(url, "user", json!([op(1), {"query": "{ nope }"}, op(3)])).await;
            assert_eq!(status, 200);
            assert_eq!(body[0]["data"]["nodes_by_pk"]["id"], 1, "{db:?} {body}");
            assert_eq!(
                code(&body[1]),
                "validation-failed",
                "one bad element fails alone"
            );
            assert_eq!(body[2]["data"]["nodes_by_pk"]["id"], 3);
            // batch_limit: 3 for user; 4 is refused whole, before any runs.
            let (status, body) = post_batch(url, "user", json!([op(1), op(2), op(3), op(4)])).await;
            assert_eq!(
                (status, code(&body)),
                (200, "batch-limit-exceeded"),
                "{db:?} {body}"
            );
            // Counted as a batch, though refused before any of it ran.
            let metrics = crate::common::metrics_text(url, ADMIN_SECRET).await;
            assert!(
                metrics.contains(
                    r#"grafton_requests_total{code="batch-limit-exceeded",name="",operation="batch","#
                ),
                "{db:?} {metrics}"
            );
            let (_, body) = post_batch(url, "user", json!([])).await;
            assert_eq!(code(&body), "parse-failed", "{body}");
        }
    })
}
