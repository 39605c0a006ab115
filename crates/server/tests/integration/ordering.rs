//! `order_by`, `limit`/`offset` and `distinct_on`.

use crate::common::*;
use serde_json::{json, Value};
use std::cmp::Ordering;
use std::collections::HashMap;

/// Orders optional values with NULLs first or last, ascending or descending.
fn cmp_opt(a: &Option<String>, b: &Option<String>, desc: bool, nulls_first: bool) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) if nulls_first => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) if nulls_first => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        (Some(x), Some(y)) if desc => y.cmp(x),
        (Some(x), Some(y)) => x.cmp(y),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nullable_column_all_directions() {
    // (enum value, descending, nulls first): Hasura's `asc` is NULLS LAST, `desc` NULLS FIRST.
    let cases = [
        ("asc", false, false),
        ("desc", true, true),
        ("asc_nulls_first", false, true),
        ("asc_nulls_last", false, false),
        ("desc_nulls_first", true, true),
        ("desc_nulls_last", true, false),
    ];
    for (value, desc, nulls_first) in cases {
        let mut expected = venues();
        expected.sort_by(|a, b| {
            cmp_opt(&a.building, &b.building, desc, nulls_first).then(a.id.cmp(&b.id))
        });
        let expected: Vec<Value> = expected
            .iter()
            .map(|v| json!({"id": v.id, "building": v.building}))
            .collect();
        let query = format!(
            "{{ venues(order_by: [{{building: {value}}}, {{id: asc}}]) {{ id building }} }}"
        );
        let data = data(&query, Value::Null).await;
        assert_eq!(
            data,
            json!({ "venues": expected }),
            "order_by building: {value}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multiple_keys() {
    let mut expected = venues();
    expected.sort_by(|a, b| a.prefecture.cmp(&b.prefecture).then(b.id.cmp(&a.id)));
    let expected: Vec<Value> = expected
        .iter()
        .take(30)
        .map(|v| json!({"prefecture": v.prefecture, "id": v.id}))
        .collect();
    let data = data(
        "{ venues(order_by: [{prefecture: asc}, {id: desc}], limit: 30) { prefecture id } }",
        Value::Null,
    )
    .await;
    assert_eq!(data, json!({ "venues": expected }));
    // Two keys in one object are applied in the order written.
    let data2 = crate::common::data(
        "{ venues(order_by: {prefecture: asc, id: desc}, limit: 30) { prefecture id } }",
        Value::Null,
    )
    .await;
    assert_eq!(data2, data);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn object_relationship_column() {
    let names: HashMap<i64, String> = venues().into_iter().map(|v| (v.id, v.name)).collect();
    let mut expected = meetups();
    expected.sort_by(|a, b| {
        names[&b.venue_id]
            .cmp(&names[&a.venue_id])
            .then(a.id.cmp(&b.id))
    });
    let expected: Vec<Value> = expected
        .iter()
        .take(15)
        .map(|m| json!({"id": m.id, "venue": {"name": names[&m.venue_id]}}))
        .collect();
    let data = data(
        "{ meetups(order_by: [{venue: {name: desc}}, {id: asc}], limit: 15) { id venue { name } } }",
        Value::Null,
    )
    .await;
    assert_eq!(data, json!({ "meetups": expected }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn array_aggregate_count() {
    let mut counts: HashMap<i64, i64> = HashMap::new();
    for m in meetups() {
        *counts.entry(m.venue_id).or_default() += 1;
    }
    let mut expected: Vec<(i64, i64)> = venues()
        .iter()
        .map(|v| (v.id, counts.get(&v.id).copied().unwrap_or(0)))
        .collect();
    expected.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    assert!(expected[0].1 >= 3, "some venue hosts several meetups");
    let expected: Vec<Value> = expected
        .iter()
        .take(12)
        .map(|(id, n)| json!({"id": id, "meetups_aggregate": {"aggregate": {"count": n}}}))
        .collect();
    let data = data(
        "{ venues(order_by: [{meetups_aggregate: {count: desc}}, {id: asc}], limit: 12) \
           { id meetups_aggregate { aggregate { count } } } }",
        Value::Null,
    )
    .await;
    assert_eq!(data, json!({ "venues": expected }));
}

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
