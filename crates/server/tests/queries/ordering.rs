//! `order_by`: nullable columns in every direction, several keys, relationship
//! columns and aggregates.

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
async fn order_by_other_aggregates_of_an_array_relationship() {
    let meetups = meetups();
    let max_for = |v: i64| {
        meetups
            .iter()
            .filter(|m| m.venue_id == v)
            .map(|m| m.id)
            .max()
    };
    let mut expected: Vec<(i64, Option<i64>)> =
        venues().iter().map(|v| (v.id, max_for(v.id))).collect();
    // desc puts NULLs (venues without meetups) first, as in Hasura.
    expected.sort_by(|a, b| match (a.1, b.1) {
        (None, None) => a.0.cmp(&b.0),
        (None, Some(_)) => std::cmp::Ordering::Less,
        (Some(_), None) => std::cmp::Ordering::Greater,
        (Some(x), Some(y)) => y.cmp(&x).then(a.0.cmp(&b.0)),
    });
    let expected: Vec<i64> = expected.iter().take(15).map(|(id, _)| *id).collect();
    let d = data(
        "{ venues(order_by: [{meetups_aggregate: {max: {id: desc}}}, {id: asc}], limit: 15) { id } }",
        Value::Null,
    )
    .await;
    assert_eq!(d, json!({ "venues": ids_json(expected) }));
}
