//! Large and deep documents: nested `_and` up to the parser's limit, nested variables
//! up to the JSON guard, long `_in` and `_or` lists.

use crate::common::*;
use serde_json::{json, Value};

fn nested_and(depth: usize) -> String {
    let mut s = String::from("{id: {_eq: 1}}");
    for _ in 0..depth {
        s = format!("{{_and: [{s}]}}");
    }
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deeply_nested_and() {
    // As deep as the parser allows is planned and answered (each worker thread
    // has the main thread's stack: WORKER_STACK_BYTES)…
    let query = format!("{{ venues(where: {}) {{ id }} }}", nested_and(248));
    let d = data(&query, Value::Null).await;
    assert_eq!(d, json!({"venues": [{"id": 1}]}));
    // …and deeper is the parser's clear refusal.
    let query = format!("{{ venues(where: {}) {{ id }} }}", nested_and(249));
    let (status, v, _) = post(Server::Sqlite, &query, Value::Null).await;
    assert_eq!(status, 400, "{v}");
    assert_eq!(error_code(&v), "parse-failed", "{v}");
    assert!(v.to_string().contains("recursion limit"), "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nested_variables_work_up_to_the_json_depth_guard() {
    let nested = |depth: usize| {
        let mut w = json!({"id": {"_eq": 2}});
        for _ in 0..depth {
            w = json!({ "_and": [w] });
        }
        w
    };
    let query = "query ($w: venues_bool_exp) { venues(where: $w) { id } }";
    // 50 levels of `_and` (100 JSON levels) are fine…
    let d = data(query, json!({ "w": nested(50) })).await;
    assert_eq!(d, json!({"venues": [{"id": 2}]}));
    // …while a body nested beyond serde_json's 128-level guard is refused up front
    // with a clear 400, never a stack overflow.
    let (status, v, _) = post(Server::Sqlite, query, json!({ "w": nested(200) })).await;
    assert_eq!(status, 400);
    assert_eq!(error_code(&v), "invalid-json", "{v}");
    assert!(v.to_string().contains("recursion limit"), "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn very_long_in_lists() {
    // More values than SQLite's bind-parameter limit (32766) and Postgres's (65535).
    for n in [1_000_i64, 40_000, 70_000] {
        let ids: Vec<i64> = (1..=n).map(|i| i * 3).collect();
        let d = data(
            "query ($ids: [Int!]) { venues_aggregate(where: {id: {_in: $ids}}) { aggregate { count } } }",
            json!({ "ids": ids }),
        )
        .await;
        assert_eq!(
            d,
            json!({"venues_aggregate": {"aggregate": {"count": ROWS / 3}}}),
            "{n} ids"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_or_and_lists_up_to_500_items() {
    for n in [2_i64, 100, 500] {
        let any: Vec<Value> = (0..n).map(|i| json!({"id": {"_eq": i * 2}})).collect();
        let all: Vec<Value> = (0..n).map(|i| json!({"id": {"_neq": i * 2}})).collect();
        let d = data(
            "query ($any: [venues_bool_exp!], $all: [venues_bool_exp!]) {
                any: venues_aggregate(where: {_or: $any}) { aggregate { count } }
                all: venues_aggregate(where: {_and: $all}) { aggregate { count } }
            }",
            json!({"any": any, "all": all}),
        )
        .await;
        let evens = (0..n)
            .filter(|i| (1..=ROWS as i64).contains(&(i * 2)))
            .count();
        assert_eq!(
            d,
            json!({"any": {"aggregate": {"count": evens}}, "all": {"aggregate": {"count": ROWS as usize - evens}}}),
            "{n} items"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_or_and_lists_over_1000_items() {
    for n in [1_100_i64, 5_000] {
        let any: Vec<Value> = (0..n).map(|i| json!({"id": {"_eq": i * 2}})).collect();
        let all: Vec<Value> = (0..n).map(|i| json!({"id": {"_neq": i * 2}})).collect();
        let d = data(
            "query ($any: [venues_bool_exp!], $all: [venues_bool_exp!]) {
                any: venues_aggregate(where: {_or: $any}) { aggregate { count } }
                all: venues_aggregate(where: {_and: $all}) { aggregate { count } }
            }",
            json!({"any": any, "all": all}),
        )
        .await;
        assert_eq!(
            d,
            json!({"any": {"aggregate": {"count": ROWS / 2}}, "all": {"aggregate": {"count": ROWS / 2}}}),
            "{n} items"
        );
    }
}
