//! `distinct_on`: with and without a matching `order_by`, nested with an offset.

use crate::common::*;
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn distinct_on_with_matching_order_by() {
    let mut first: Vec<(String, i64)> = Vec::new();
    let mut all = venues();
    all.sort_by(|a, b| a.prefecture.cmp(&b.prefecture).then(a.id.cmp(&b.id)));
    for v in all {
        if first.last().map(|(p, _)| p) != Some(&v.prefecture) {
            first.push((v.prefecture.clone(), v.id));
        }
    }
    let expected: Vec<Value> = first
        .iter()
        .map(|(p, id)| json!({"prefecture": p, "id": id}))
        .collect();
    let data = data(
        "{ venues(distinct_on: [prefecture], order_by: [{prefecture: asc}, {id: asc}]) { prefecture id } }",
        Value::Null,
    )
    .await;
    assert_eq!(data, json!({ "venues": expected }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn distinct_on_mismatching_order_by_is_a_validation_error() {
    let v = both(
        "{ venues(distinct_on: [prefecture], order_by: [{id: asc}]) { prefecture id } }",
        Value::Null,
    )
    .await;
    assert_eq!(error_code(&v), "validation-failed", "{v}");
    assert!(v.get("data").is_none(), "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nested_offset_and_distinct_on() {
    let meetups = meetups();
    let venue = (1..=ROWS as i64)
        .find(|v| meetups.iter().filter(|m| m.venue_id == *v).count() >= 3)
        .expect("a venue with three meetups");
    let mut ids: Vec<i64> = meetups
        .iter()
        .filter(|m| m.venue_id == venue)
        .map(|m| m.id)
        .collect();
    ids.sort();
    let d = data(
        &format!(
            "{{ venues_by_pk(id: {venue}) {{ skipped: meetups(order_by: {{id: asc}}, offset: 1) {{ id }} \
               distinct: meetups(distinct_on: [venue_id], order_by: [{{venue_id: asc}}, {{id: desc}}]) {{ id }} }} }}"
        ),
        Value::Null,
    )
    .await;
    assert_eq!(
        d,
        json!({"venues_by_pk": {
            "skipped": ids_json(ids[1..].to_vec()),
            "distinct": [{"id": ids[ids.len() - 1]}]
        }})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn distinct_on_without_order_by() {
    let d = data(
        "{ gadgets(distinct_on: [active]) { active } categories(distinct_on: parent_id, order_by: {parent_id: asc}) { parent_id } }",
        Value::Null,
    )
    .await;
    let mut actives: Vec<bool> = d["gadgets"]
        .as_array()
        .expect("gadgets")
        .iter()
        .map(|g| g["active"].as_bool().expect("bool"))
        .collect();
    actives.sort();
    assert_eq!(actives, [false, true]);
    assert_eq!(
        d["categories"],
        json!([{"parent_id": 1}, {"parent_id": 2}, {"parent_id": null}])
    );
}
