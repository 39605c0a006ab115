//! The GraphQL language: `__typename`, aliases, fragments, `@skip`/`@include`,
//! variables and their defaults, several root fields, operation names.

use crate::common::*;
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typename_at_root_and_nested() {
    // Meetup 1 is the first meetup of its venue.
    let venue = meetups()[0].venue_id;
    let first_meetup = 1;
    let d = data(
        &r#"{
          __typename
          venues(where: {id: {_eq: VENUE}}) { __typename id meetups(limit: 1, order_by: {id: asc}) { __typename id venue { __typename } } }
          venues_by_pk(id: 2) { t: __typename }
          categories_by_pk(id: 4) { parent { __typename } }
        }"#
        .replace("VENUE", &venue.to_string()),
        Value::Null,
    )
    .await;
    assert_eq!(
        d,
        json!({
            "__typename": "query_root",
            "venues": [{"__typename": "venues", "id": venue, "meetups": [
                {"__typename": "meetups", "id": first_meetup, "venue": {"__typename": "venues"}}
            ]}],
            "venues_by_pk": {"t": "venues"},
            "categories_by_pk": {"parent": {"__typename": "categories"}}
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aliases_including_the_same_field_twice() {
    let meetups = meetups();
    let mut at_venue: Vec<i64> = meetups
        .iter()
        .filter(|m| m.venue_id == meetups[0].venue_id)
        .map(|m| m.id)
        .collect();
    at_venue.sort();
    let venue = meetups[0].venue_id;
    let all = venues();
    let d = data(
        r#"query ($v: Int!) {
          a: venues_by_pk(id: 1) { id }
          b: venues_by_pk(id: 2) { ident: id n: name }
          first: venues(limit: 1, order_by: {id: asc}) { id }
          last: venues(limit: 1, order_by: {id: desc}) { id }
          venues_by_pk(id: $v) {
            early: meetups(order_by: {id: asc}, limit: 1) { id }
            late: meetups(order_by: {id: desc}, limit: 1) { id }
            meetups(order_by: {id: asc}) { id }
            total: meetups_aggregate { aggregate { n: count } }
          }
        }"#,
        json!({ "v": venue }),
    )
    .await;
    assert_eq!(
        d,
        json!({
            "a": {"id": 1},
            "b": {"ident": 2, "n": all[1].name},
            "first": [{"id": 1}],
            "last": [{"id": ROWS}],
            "venues_by_pk": {
                "early": [{"id": at_venue[0]}],
                "late": [{"id": at_venue[at_venue.len() - 1]}],
                "meetups": ids_json(at_venue.clone()),
                "total": {"aggregate": {"n": at_venue.len()}}
            }
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn named_and_inline_fragments() {
    let all = venues();
    let d = data(
        r#"
        query {
          ...Roots
          venues_by_pk(id: 3) {
            ...Basic
            ... on venues { prefecture }
            ... { city }
          }
        }
        fragment Roots on query_root { venues(limit: 2) { ...Basic } }
        fragment Basic on venues { id ...Name }
        fragment Name on venues { name }
        "#,
        Value::Null,
    )
    .await;
    assert_eq!(
        d,
        json!({
            "venues": [{"id": 1, "name": all[0].name}, {"id": 2, "name": all[1].name}],
            "venues_by_pk": {"id": 3, "name": all[2].name, "prefecture": all[2].prefecture, "city": all[2].city}
        })
    );
    // Fields merged from a fragment and the selection, in first-occurrence order.
    let d = data(
        "{ venues_by_pk(id: 1) { name ...F id } } fragment F on venues { id city }",
        Value::Null,
    )
    .await;
    assert_eq!(
        d,
        json!({"venues_by_pk": {"name": all[0].name, "id": 1, "city": all[0].city}})
    );
    // Hasura's `select_query_nested_fragment`: a fragment on a related (nested)
    // type inside another, beside an inline fragment; the same answer as written out.
    let nested = data(
        r#"query {
          venues(limit: 2, order_by: {id: asc}, where: {meetups: {}}) { ...V ... on venues { name } }
        }
        fragment V on venues { id meetups(limit: 2, order_by: {id: asc}) { ...M } }
        fragment M on meetups { title id venue { ... on venues { id } } }"#,
        Value::Null,
    )
    .await;
    let plain = data(
        "{ venues(limit: 2, order_by: {id: asc}, where: {meetups: {}}) { id \
         meetups(limit: 2, order_by: {id: asc}) { title id venue { id } } name } }",
        Value::Null,
    )
    .await;
    assert_eq!(nested, plain);
    assert!(
        plain["venues"][0]["meetups"][0]["title"].is_string(),
        "{plain}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skip_and_include_with_variables() {
    let all = venues();
    let query = r#"query ($withName: Boolean!, $skipCity: Boolean!) {
        venues_by_pk(id: 1) { id name @include(if: $withName) city @skip(if: $skipCity) }
        venues(limit: 1) @skip(if: $skipCity) { id }
    }"#;
    for (with_name, skip_city) in [(true, true), (true, false), (false, true), (false, false)] {
        let d = data(query, json!({"withName": with_name, "skipCity": skip_city})).await;
        let mut venue = serde_json::Map::new();
        venue.insert("id".into(), json!(1));
        if with_name {
            venue.insert("name".into(), json!(all[0].name));
        }
        if !skip_city {
            venue.insert("city".into(), json!(all[0].city));
        }
        let mut expected = json!({ "venues_by_pk": venue });
        if !skip_city {
            expected["venues"] = json!([{"id": 1}]);
        }
        assert_eq!(d, expected, "withName={with_name} skipCity={skip_city}");
    }
    // Literal arguments, and both directives on one field (included only if both allow).
    let d = data(
        "{ venues_by_pk(id: 1) { id @skip(if: false) name @include(if: false) city @include(if: true) @skip(if: true) } }",
        Value::Null,
    )
    .await;
    assert_eq!(d, json!({"venues_by_pk": {"id": 1}}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn variables_with_defaults() {
    let query = "query ($id: Int = 3, $n: Int = 2, $w: venues_bool_exp = {id: {_gt: 197}}) {
        venues_by_pk(id: $id) { id }
        venues(limit: $n) { id }
        filtered: venues(where: $w) { id }
    }";
    let d = data(query, json!({})).await;
    assert_eq!(
        d,
        json!({"venues_by_pk": {"id": 3}, "venues": [{"id": 1}, {"id": 2}],
               "filtered": [{"id": 198}, {"id": 199}, {"id": 200}]})
    );
    let d = data(query, json!({"id": 5, "w": {"id": {"_eq": 9}}})).await;
    assert_eq!(
        d,
        json!({"venues_by_pk": {"id": 5}, "venues": [{"id": 1}, {"id": 2}], "filtered": [{"id": 9}]})
    );
    // An explicit null overrides the default: no limit at all.
    let d = data(query, json!({"n": null})).await;
    assert_eq!(d["venues"].as_array().map(Vec::len), Some(ROWS as usize));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_root_fields() {
    let d = data(
        r#"{
          venues_by_pk(id: 1) { id }
          meetups(limit: 1) { id }
          members(where: {id: {_eq: 2}}) { id }
          groups_aggregate { aggregate { count } }
          gadgets_by_pk(id: 5) { name }
          categories(where: {id: {_eq: 5}}) { name }
          shelves_aggregate { aggregate { count } }
          boxes(limit: 1) { content }
          audit_log_aggregate { aggregate { count } }
        }"#,
        Value::Null,
    )
    .await;
    assert_eq!(
        d,
        json!({
            "venues_by_pk": {"id": 1},
            "meetups": [{"id": 1}],
            "members": [{"id": 2}],
            "groups_aggregate": {"aggregate": {"count": ROWS}},
            "gadgets_by_pk": {"name": "easel"},
            "categories": [{"name": "orphan"}],
            "shelves_aggregate": {"aggregate": {"count": 3}},
            "boxes": [{"content": "nails"}],
            "audit_log_aggregate": {"aggregate": {"count": 3}}
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operation_name_selects_the_operation() {
    let document = "query A { venues_by_pk(id: 1) { id } }
                    query B($id: Int!) { meetups_by_pk(id: $id) { id } }
                    query C { __typename }";
    let v = both_body(json!({"query": document, "operationName": "A"})).await;
    assert_eq!(v, json!({"data": {"venues_by_pk": {"id": 1}}}));
    let v =
        both_body(json!({"query": document, "operationName": "B", "variables": {"id": 4}})).await;
    assert_eq!(v, json!({"data": {"meetups_by_pk": {"id": 4}}}));
    let v = both_body(json!({"query": document, "operationName": "C"})).await;
    assert_eq!(v, json!({"data": {"__typename": "query_root"}}));
    // Several operations and no name: a request error.
    let v = both_body(json!({"query": document})).await;
    assert_eq!(error_code(&v), "validation-failed", "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_response_key_merges_selections() {
    let all = venues();
    let d = data(
        "{ venues_by_pk(id: 1) { id meetups(order_by: {id: asc}, limit: 1) { id } meetups(order_by: {id: asc}, limit: 1) { title } name } }",
        Value::Null,
    )
    .await;
    let first = meetups()
        .into_iter()
        .filter(|m| m.venue_id == 1)
        .min_by_key(|m| m.id);
    let meetups = match first {
        Some(m) => json!([{"id": m.id, "title": m.title}]),
        None => json!([]),
    };
    assert_eq!(
        d,
        json!({"venues_by_pk": {"id": 1, "meetups": meetups, "name": all[0].name}})
    );
    // Same key with different arguments cannot be merged: a validation error.
    let v = both(
        "{ a: venues_by_pk(id: 1) { id } a: venues_by_pk(id: 2) { id } }",
        Value::Null,
    )
    .await;
    assert_eq!(error_code(&v), "validation-failed", "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extra_undeclared_variables_are_ignored() {
    let d = data(
        "query ($id: Int!) { venues_by_pk(id: $id) { id } }",
        json!({"id": 4, "unused": {"deep": [1, 2]}, "other": null}),
    )
    .await;
    assert_eq!(d, json!({"venues_by_pk": {"id": 4}}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn float_and_boolean_variables() {
    let d = data(
        "query ($w: Float!, $a: Boolean!) { gadgets(where: {weight: {_eq: $w}, active: {_eq: $a}}) { id } }",
        json!({"w": 3, "a": true}),
    )
    .await;
    assert_eq!(d, json!({"gadgets": [{"id": 1}]}));
    let d = data(
        "query ($w: [Float!]) { gadgets(where: {rating: {_in: $w}}) { id } }",
        json!({"w": [2.25, 3.0]}),
    )
    .await;
    assert_eq!(d, json!({"gadgets": [{"id": 1}, {"id": 4}]}));
    // An Int out of 32-bit range is not an Int.
    let v = both(
        "query ($id: Int!) { venues_by_pk(id: $id) { id } }",
        json!({"id": 99_999_999_999_i64}),
    )
    .await;
    assert_eq!(error_code(&v), "validation-failed", "{v}");
}
