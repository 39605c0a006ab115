//! `limit` and `offset`: primary-key order without `order_by`, negative values
//! refused.

use crate::common::*;
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limit_offset_without_order_by_is_primary_key_order() {
    let page = |offset: i64| async move {
        let d = data(
            &format!("{{ venues(limit: 10, offset: {offset}) {{ id }} }}"),
            Value::Null,
        )
        .await;
        ids_of(&d["venues"])
    };
    let first = page(0).await;
    let second = page(10).await;
    assert_eq!(first, (1..=10).collect::<Vec<_>>());
    assert_eq!(second, (11..=20).collect::<Vec<_>>());
    assert!(first.iter().all(|id| !second.contains(id)));
    // With a filter, offset counts filtered rows.
    let d = data(
        "{ venues(where: {id: {_gt: 50}}, limit: 5, offset: 3) { id } }",
        Value::Null,
    )
    .await;
    assert_eq!(ids_of(&d["venues"]), [54, 55, 56, 57, 58]);
    // Past the end: empty; limit 0: empty.
    let d = data(
        "{ a: venues(offset: 1000) { id } b: venues(limit: 0) { id } }",
        Value::Null,
    )
    .await;
    assert_eq!(d, json!({"a": [], "b": []}));
    // Composite primary key order on a link table.
    let d = data(
        "{ meetups_members(limit: 6) { meetup_id member_id } }",
        Value::Null,
    )
    .await;
    let expected: Vec<Value> = meetups_members()
        .iter()
        .take(6)
        .map(|(a, b)| json!({"meetup_id": a, "member_id": b}))
        .collect();
    assert_eq!(d, json!({ "meetups_members": expected }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn negative_limit_or_offset_is_rejected() {
    for query in [
        "{ venues(limit: -1) { id } }",
        "{ venues(offset: -1) { id } }",
        "{ venues_by_pk(id: 1) { meetups(limit: -5) { id } } }",
    ] {
        let v = both(query, Value::Null).await;
        assert_eq!(error_code(&v), "validation-failed", "{query}: {v}");
    }
    // Through variables the plan is cached, so the check runs per request.
    let query = "query ($l: Int, $o: Int) { venues(limit: $l, offset: $o) { id } }";
    let ok = both(query, json!({"l": 1, "o": 2})).await;
    assert_eq!(ok["data"], json!({"venues": [{"id": 3}]}));
    for vars in [json!({"l": -1, "o": 0}), json!({"l": 1, "o": -2})] {
        let v = both(query, vars.clone()).await;
        assert_eq!(error_code(&v), "validation-failed", "{vars}: {v}");
    }
    // A null limit means no limit, on both backends.
    let all = both(query, json!({"l": null, "o": 195})).await;
    assert_eq!(all["data"]["venues"].as_array().map(Vec::len), Some(5));
}
