//! Tables as root fields: `_by_pk`, composite keys, no key at all, wide selections,
//! reserved words and odd identifiers.

use crate::common::*;
use serde_json::{json, Value};

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
async fn wide_selections() {
    // More fields than one json_object/json_build_object call takes.
    let n = 130;
    let fields: String = (0..n).map(|i| format!("f{i}: id ")).collect();
    let d = data(
        &format!("{{ venues_by_pk(id: 9) {{ {fields} }} venues(limit: 2) {{ {fields} }} }}"),
        Value::Null,
    )
    .await;
    let object = |id: i64| Value::Object((0..n).map(|i| (format!("f{i}"), json!(id))).collect());
    assert_eq!(
        d,
        json!({"venues_by_pk": object(9), "venues": [object(1), object(2)]})
    );
    // Many root fields.
    let roots: String = (0..n)
        .map(|i| format!("r{i}: venues_by_pk(id: {}) {{ id }} ", i % 50 + 1))
        .collect();
    let d = data(&format!("{{ {roots} }}"), Value::Null).await;
    let expected: serde_json::Map<String, Value> = (0..n)
        .map(|i| (format!("r{i}"), json!({"id": i % 50 + 1})))
        .collect();
    assert_eq!(d, Value::Object(expected));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reserved_words_and_odd_identifiers() {
    let d = data(
        r#"{
          order(order_by: {group: desc}) { group Select two_words }
          order_by_pk(group: 1) { two_words }
          order_aggregate(where: {Select: {_is_null: true}}) { aggregate { count max { group } } }
        }"#,
        Value::Null,
    )
    .await;
    assert_eq!(
        d,
        json!({
            "order": [
                {"group": 2, "Select": null, "two_words": "it's"},
                {"group": 1, "Select": "a", "two_words": "b"}
            ],
            "order_by_pk": {"two_words": "b"},
            "order_aggregate": {"aggregate": {"count": 1, "max": {"group": 2}}}
        })
    );
}
