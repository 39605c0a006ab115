//! `_aggregate` fields: every function on exact data, arguments, empty sets,
//! statistics on tiny sets, distinct counts, `nodes` with relationships.

use crate::common::*;
use serde_json::{json, Value};
use std::collections::HashMap;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aggregate_functions_on_exact_data() {
    let d = data(
        r#"{
          gadgets_aggregate {
            aggregate {
              count
              rated: count(columns: [rating])
              distinct_weights: count(columns: [weight], distinct: true)
              distinct_ratings: count(columns: [rating], distinct: true)
              sum { qty weight rating }
              avg { qty }
              min { qty weight rating name }
              max { qty weight rating name }
              stddev { qty }
              stddev_samp { qty }
              var_samp { qty }
              variance { qty }
            }
            nodes { id }
          }
        }"#,
        Value::Null,
    )
    .await;
    assert_eq!(
        d,
        json!({"gadgets_aggregate": {
            "aggregate": {
                "count": 5,
                "rated": 3,
                "distinct_weights": 3,
                "distinct_ratings": 3,
                "sum": {"qty": 15, "weight": 9.25, "rating": 5.75},
                "avg": {"qty": 3},
                "min": {"qty": 1, "weight": 0.5, "rating": 0.5, "name": "anvil"},
                "max": {"qty": 5, "weight": 3, "rating": 3, "name": "easel"},
                "stddev": {"qty": 2},
                "stddev_samp": {"qty": 2},
                "var_samp": {"qty": 4},
                "variance": {"qty": 4}
            },
            "nodes": [{"id": 1}, {"id": 2}, {"id": 3}, {"id": 4}, {"id": 5}]
        }})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aggregate_with_arguments_and_empty_set() {
    let d = data(
        r#"{
          some: gadgets_aggregate(where: {active: {_eq: true}}, order_by: {id: desc}, limit: 2) {
            aggregate { count sum { qty } }
            nodes { id name }
          }
          none: gadgets_aggregate(where: {id: {_gt: 100}}) {
            aggregate { count sum { qty } avg { qty } max { name } }
            nodes { id }
          }
        }"#,
        Value::Null,
    )
    .await;
    assert_eq!(
        d,
        json!({
            "some": {
                "aggregate": {"count": 2, "sum": {"qty": 4}},
                "nodes": [{"id": 5, "name": "easel"}, {"id": 3, "name": "chisel"}]
            },
            "none": {
                "aggregate": {"count": 0, "sum": {"qty": null}, "avg": {"qty": null}, "max": {"name": null}},
                "nodes": []
            }
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn venue_counts_match_the_dataset() {
    let all = venues();
    let tokyo = all.iter().filter(|v| v.prefecture == "Tokyo").count();
    let no_building = all.iter().filter(|v| v.building.is_none()).count();
    let d = data(
        r#"{
          all: venues_aggregate { aggregate { count } }
          tokyo: venues_aggregate(where: {prefecture: {_eq: "Tokyo"}}) { aggregate { count } }
          buildings: venues_aggregate { aggregate { count(columns: [building]) } }
          prefectures: venues_aggregate { aggregate { count(columns: [prefecture], distinct: true) } }
        }"#,
        Value::Null,
    )
    .await;
    let prefectures: std::collections::HashSet<&str> =
        all.iter().map(|v| v.prefecture.as_str()).collect();
    assert_eq!(
        d,
        json!({
            "all": {"aggregate": {"count": ROWS}},
            "tokyo": {"aggregate": {"count": tokyo}},
            "buildings": {"aggregate": {"count": all.len() - no_building}},
            "prefectures": {"aggregate": {"count": prefectures.len()}}
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn array_relationship_aggregate() {
    let mut counts: HashMap<i64, i64> = HashMap::new();
    for m in meetups() {
        *counts.entry(m.venue_id).or_default() += 1;
    }
    let expected: Vec<Value> = (1..=8)
        .map(|id| {
            json!({"id": id, "meetups_aggregate": {"aggregate": {"count": counts.get(&id).copied().unwrap_or(0)}}})
        })
        .collect();
    let d = data(
        "{ venues(where: {id: {_lte: 8}}) { id meetups_aggregate { aggregate { count } } } }",
        Value::Null,
    )
    .await;
    assert_eq!(d, json!({ "venues": expected }));
    // Nested under an object relationship, with its own filter.
    let d = data(
        "{ meetups_by_pk(id: 1) { venue { meetups_aggregate(where: {id: {_gt: 0}}) { aggregate { count } } } } }",
        Value::Null,
    )
    .await;
    let venue_id = meetups()[0].venue_id;
    assert_eq!(
        d,
        json!({"meetups_by_pk": {"venue": {"meetups_aggregate": {"aggregate": {"count": counts[&venue_id]}}}}})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typename_in_aggregates() {
    let d = data(
        r#"{
          venues_aggregate(where: {id: {_eq: 1}}) {
            __typename
            aggregate { __typename count sum { __typename id } }
            nodes { __typename id }
          }
        }"#,
        Value::Null,
    )
    .await;
    assert_eq!(
        d,
        json!({"venues_aggregate": {
            "__typename": "venues_aggregate",
            "aggregate": {
                "__typename": "venues_aggregate_fields", "count": 1,
                "sum": {"__typename": "venues_sum_fields", "id": 1}
            },
            "nodes": [{"__typename": "venues", "id": 1}]
        }})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statistics_on_one_row_and_population_variants() {
    let d = data(
        r#"{
          one: gadgets_aggregate(where: {id: {_eq: 1}}) {
            aggregate { stddev { qty } stddev_samp { qty } var_samp { qty } variance { qty }
                        stddev_pop { qty } var_pop { qty } avg { qty weight } }
          }
          all: gadgets_aggregate {
            aggregate { var_pop { qty } avg { weight rating } }
          }
        }"#,
        Value::Null,
    )
    .await;
    assert_eq!(
        d,
        json!({
            "one": {"aggregate": {
                "stddev": {"qty": null}, "stddev_samp": {"qty": null},
                "var_samp": {"qty": null}, "variance": {"qty": null},
                "stddev_pop": {"qty": 0}, "var_pop": {"qty": 0},
                "avg": {"qty": 1, "weight": 3}
            }},
            // qty: 1 5 1 5 3 → population variance 16/5; rating: avg of 2.25, 0.5, 3.
            "all": {"aggregate": {"var_pop": {"qty": 3.2}, "avg": {"weight": 1.85, "rating": 1.9166666666666667}}}
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn count_distinct_over_several_columns() {
    let d = data(
        "{ gadgets_aggregate { aggregate { pairs: count(columns: [active, qty], distinct: true) all: count(columns: [active, qty]) } } }",
        Value::Null,
    )
    .await;
    // (true,1) (false,5) (true,1) (false,5) (true,3)
    assert_eq!(
        d,
        json!({"gadgets_aggregate": {"aggregate": {"pairs": 3, "all": 5}}})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aggregate_nodes_with_relationships() {
    let d = data(
        r#"{ categories_aggregate(where: {id: {_lte: 3}}) {
              aggregate { count }
              nodes { name parent { name } gadgets_aggregate { aggregate { count } } gadgets(order_by: {id: asc}) { id } }
        } }"#,
        Value::Null,
    )
    .await;
    assert_eq!(
        d,
        json!({"categories_aggregate": {
            "aggregate": {"count": 3},
            "nodes": [
                {"name": "root", "parent": null, "gadgets_aggregate": {"aggregate": {"count": 0}}, "gadgets": []},
                {"name": "tools", "parent": {"name": "root"}, "gadgets_aggregate": {"aggregate": {"count": 1}}, "gadgets": [{"id": 3}]},
                {"name": "toys", "parent": {"name": "root"}, "gadgets_aggregate": {"aggregate": {"count": 2}}, "gadgets": [{"id": 2}, {"id": 4}]}
            ]
        }})
    );
}
