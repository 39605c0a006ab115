//! Root fields, relationships, aggregates, and the GraphQL language features
//! (aliases, fragments, directives, variables, operations, introspection).

use crate::common::*;
use serde_json::{json, Value};
use std::collections::HashMap;

fn venue_json(v: &Venue) -> Value {
    json!({
        "id": v.id,
        "name": v.name,
        "postal_code": v.postal_code,
        "prefecture": v.prefecture,
        "city": v.city,
        "street1": v.street1,
        "street2": v.street2,
        "building": v.building,
    })
}

const VENUE_COLUMNS: &str = "id name postal_code prefecture city street1 street2 building";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_pk_hit_and_miss() {
    let all = venues();
    let d = data(
        &format!(
            "{{ hit: venues_by_pk(id: 7) {{ {VENUE_COLUMNS} }} miss: venues_by_pk(id: 100000) {{ id }} }}"
        ),
        Value::Null,
    )
    .await;
    assert_eq!(d, json!({"hit": venue_json(&all[6]), "miss": null}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn composite_primary_key() {
    let d = data(
        r#"{
          hit: shelves_by_pk(aisle: 1, slot: 2) { aisle slot label boxes { id content } }
          miss: shelves_by_pk(aisle: 2, slot: 2) { label }
          link: meetups_members_by_pk(meetup_id: 1, member_id: 8) { meetup_id member_id }
        }"#,
        Value::Null,
    )
    .await;
    let link = meetups_members()
        .contains(&(1, 8))
        .then(|| json!({"meetup_id": 1, "member_id": 8}));
    assert!(link.is_some(), "demo links meetup 1 to member 8");
    assert_eq!(
        d,
        json!({
            "hit": {"aisle": 1, "slot": 2, "label": "A2", "boxes": [{"id": 4, "content": "glue"}]},
            "miss": null,
            "link": link,
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn composite_foreign_key_both_ways() {
    let d = data(
        r#"{
          boxes(order_by: {id: asc}) { id aisle_slot_shelves { aisle slot label } }
          shelves(order_by: [{aisle: asc}, {slot: asc}]) {
            label
            boxes(order_by: {id: desc}) { content }
            boxes_aggregate { aggregate { count } }
          }
        }"#,
        Value::Null,
    )
    .await;
    assert_eq!(
        d,
        json!({
            "boxes": [
                {"id": 1, "aisle_slot_shelves": {"aisle": 1, "slot": 1, "label": "A1"}},
                {"id": 2, "aisle_slot_shelves": {"aisle": 1, "slot": 1, "label": "A1"}},
                {"id": 3, "aisle_slot_shelves": {"aisle": 2, "slot": 1, "label": "B1"}},
                {"id": 4, "aisle_slot_shelves": {"aisle": 1, "slot": 2, "label": "A2"}}
            ],
            "shelves": [
                {"label": "A1", "boxes": [{"content": "screws"}, {"content": "nails"}],
                 "boxes_aggregate": {"aggregate": {"count": 2}}},
                {"label": "A2", "boxes": [{"content": "glue"}],
                 "boxes_aggregate": {"aggregate": {"count": 1}}},
                {"label": "B1", "boxes": [{"content": "bolts"}],
                 "boxes_aggregate": {"aggregate": {"count": 1}}}
            ]
        })
    );
}

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
async fn object_relationship() {
    let venues = venues();
    let expected: Vec<Value> = meetups()
        .iter()
        .take(5)
        .map(|m| {
            let v = &venues[(m.venue_id - 1) as usize];
            json!({"id": m.id, "title": m.title, "start_at": m.start_at, "end_at": m.end_at,
                   "venue": {"id": v.id, "name": v.name}})
        })
        .collect();
    let d = data(
        "{ meetups(limit: 5) { id title start_at end_at venue { id name } } }",
        Value::Null,
    )
    .await;
    assert_eq!(d, json!({ "meetups": expected }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn array_relationship_arguments_apply_per_parent() {
    let meetups = meetups();
    let mut by_venue: HashMap<i64, Vec<i64>> = HashMap::new();
    for m in &meetups {
        by_venue.entry(m.venue_id).or_default().push(m.id);
    }
    // Venues with at least three meetups above id 20, so the limit bites in each.
    let mut busy: Vec<i64> = by_venue
        .iter()
        .filter(|(_, ms)| ms.iter().filter(|&&id| id > 20).count() >= 3)
        .map(|(v, _)| *v)
        .collect();
    busy.sort();
    busy.truncate(3);
    assert!(busy.len() >= 2, "the dataset has busy venues: {busy:?}");
    let expected: Vec<Value> = busy
        .iter()
        .map(|v| {
            let mut ids: Vec<i64> = by_venue[v].iter().copied().filter(|&id| id > 20).collect();
            ids.sort_by(|a, b| b.cmp(a));
            ids.truncate(2);
            json!({"id": v, "meetups": ids_json(ids)})
        })
        .collect();
    let d = data(
        "query ($ids: [Int!]) { venues(where: {id: {_in: $ids}}) { id meetups(where: {id: {_gt: 20}}, order_by: {id: desc}, limit: 2) { id } } }",
        json!({ "ids": busy }),
    )
    .await;
    assert_eq!(d, json!({ "venues": expected }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn self_referencing_relationship() {
    let d = data(
        r#"{
          categories {
            id name
            parent { id name parent { name } }
            categories(order_by: {id: asc}) { id name }
            gadgets { name }
          }
        }"#,
        Value::Null,
    )
    .await;
    assert_eq!(
        d,
        json!({"categories": [
            {"id": 1, "name": "root", "parent": null,
             "categories": [{"id": 2, "name": "tools"}, {"id": 3, "name": "toys"}], "gadgets": []},
            {"id": 2, "name": "tools", "parent": {"id": 1, "name": "root", "parent": null},
             "categories": [{"id": 4, "name": "hammers"}], "gadgets": [{"name": "chisel"}]},
            {"id": 3, "name": "toys", "parent": {"id": 1, "name": "root", "parent": null},
             "categories": [], "gadgets": [{"name": "ball"}, {"name": "drum"}]},
            {"id": 4, "name": "hammers", "parent": {"id": 2, "name": "tools", "parent": {"name": "root"}},
             "categories": [], "gadgets": [{"name": "anvil"}]},
            {"id": 5, "name": "orphan", "parent": null, "categories": [], "gadgets": []}
        ]})
    );
    // Filter through the self-reference.
    let d = data(
        r#"{ categories(where: {parent: {name: {_eq: "root"}}}) { id } }"#,
        Value::Null,
    )
    .await;
    assert_eq!(d, json!({"categories": [{"id": 2}, {"id": 3}]}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn table_without_primary_key() {
    let d = data(
        r#"{
          audit_log(order_by: [{event: asc}, {amount: asc}]) { event amount }
          audit_log_aggregate { aggregate { count sum { amount } } }
        }"#,
        Value::Null,
    )
    .await;
    assert_eq!(
        d,
        json!({
            "audit_log": [
                {"event": "created", "amount": 5},
                {"event": "created", "amount": 10},
                {"event": "deleted", "amount": null}
            ],
            "audit_log_aggregate": {"aggregate": {"count": 3, "sum": {"amount": 15}}}
        })
    );
    // Unordered, all rows still come back.
    let d = data("{ audit_log { event } }", Value::Null).await;
    assert_eq!(d["audit_log"].as_array().map(Vec::len), Some(3));
    // There is no `_by_pk` field without a primary key.
    let v = both(
        "{ audit_log_by_pk(event: \"created\") { event } }",
        Value::Null,
    )
    .await;
    assert_eq!(error_code(&v), "validation-failed", "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn booleans_and_floats_render_identically() {
    let d = data("{ gadgets { id active weight rating } }", Value::Null).await;
    assert_eq!(
        d,
        json!({"gadgets": [
            {"id": 1, "active": true, "weight": 3, "rating": 2.25},
            {"id": 2, "active": false, "weight": 0.5, "rating": null},
            {"id": 3, "active": true, "weight": 2.25, "rating": 0.5},
            {"id": 4, "active": false, "weight": 3, "rating": 3},
            {"id": 5, "active": true, "weight": 0.5, "rating": null}
        ]})
    );
    // The raw text, not only the parsed value, is `true`/`false` and `3`/`0.5`.
    let (_, _, raw) = post(
        Server::Sqlite,
        "{ gadgets_by_pk(id: 4) { active weight } }",
        Value::Null,
    )
    .await;
    assert_eq!(
        raw,
        r#"{"data":{"gadgets_by_pk":{"active":false,"weight":3}}}"#
    );
}

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
async fn full_introspection_query() {
    let mut schemas = Vec::new();
    for server in BACKENDS {
        let (status, v, raw) = post(server, INTROSPECTION_QUERY, Value::Null).await;
        assert_eq!(status, 200, "{server:?}");
        assert!(v.get("errors").is_none(), "{server:?}: {raw}");
        let schema = v["data"]["__schema"].clone();
        assert_eq!(schema["queryType"], json!({"name": "query_root"}));
        let types = schema["types"].as_array().expect("types");
        let names: Vec<&str> = types.iter().filter_map(|t| t["name"].as_str()).collect();
        for wanted in [
            "query_root",
            "venues",
            "venues_bool_exp",
            "venues_order_by",
            "venues_aggregate",
            "Int_comparison_exp",
            "String_comparison_exp",
            "Boolean_comparison_exp",
            "Float_comparison_exp",
            "order_by",
            "__Schema",
        ] {
            assert!(names.contains(&wanted), "{server:?}: type {wanted} missing");
        }
        let root = types
            .iter()
            .find(|t| t["name"] == "query_root")
            .expect("query_root");
        let fields: Vec<&str> = root["fields"]
            .as_array()
            .expect("fields")
            .iter()
            .filter_map(|f| f["name"].as_str())
            .collect();
        for wanted in [
            "venues",
            "venues_by_pk",
            "venues_aggregate",
            "shelves_by_pk",
        ] {
            assert!(
                fields.contains(&wanted),
                "{server:?}: root field {wanted} missing"
            );
        }
        assert!(!fields.contains(&"audit_log_by_pk"));
        schemas.push(schema);
    }
    // The schemas are the same except for the Postgres-only pattern operators
    // (`_similar`, `_regex`… exist only where the database has them).
    let string_ops = |schema: &Value| -> Vec<String> {
        schema["types"]
            .as_array()
            .expect("types")
            .iter()
            .find(|t| t["name"] == "String_comparison_exp")
            .and_then(|t| t["inputFields"].as_array())
            .expect("String_comparison_exp")
            .iter()
            .filter_map(|f| f["name"].as_str().map(str::to_owned))
            .collect()
    };
    let (lite_ops, pg_ops) = (string_ops(&schemas[0]), string_ops(&schemas[1]));
    assert!(!lite_ops.contains(&"_regex".to_owned()), "{lite_ops:?}");
    assert!(pg_ops.contains(&"_regex".to_owned()), "{pg_ops:?}");
    for schema in &mut schemas {
        for t in schema["types"].as_array_mut().expect("types") {
            if t["name"] == "String_comparison_exp" {
                t["inputFields"] = Value::Null;
            }
        }
    }
    assert!(
        schemas[0] == schemas[1],
        "introspection differs beyond String_comparison_exp"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn type_introspection_mixed_with_data() {
    let d = data(
        r#"{ venues(limit: 1) { id } __type(name: "venues") { name kind fields { name } } }"#,
        Value::Null,
    )
    .await;
    assert_eq!(d["venues"], json!([{"id": 1}]));
    assert_eq!(d["__type"]["name"], "venues");
    assert_eq!(d["__type"]["kind"], "OBJECT");
    let fields: Vec<&str> = d["__type"]["fields"]
        .as_array()
        .expect("fields")
        .iter()
        .filter_map(|f| f["name"].as_str())
        .collect();
    assert_eq!(
        fields,
        [
            "id",
            "name",
            "postal_code",
            "prefecture",
            "city",
            "street1",
            "street2",
            "building",
            "meetups",
            "meetups_aggregate"
        ]
    );
    // Keys keep document order even when introspection and data interleave.
    let (_, _, raw) = post(
        Server::Postgres,
        r#"{ a: __typename venues_by_pk(id: 1) { id } b: __type(name: "order_by") { name } }"#,
        Value::Null,
    )
    .await;
    assert_eq!(
        raw,
        r#"{"data":{"a":"query_root","venues_by_pk":{"id":1},"b":{"name":"order_by"}}}"#
    );
}
