//! Relationships both ways: object and array, composite and self-referencing keys,
//! chains, link tables, two keys to one table, nullable ones in filters and ordering.

use crate::common::*;
use serde_json::{json, Value};
use std::collections::HashMap;

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
async fn deep_relationship_chain() {
    // venue → meetups → venue → meetups → … eight levels down.
    let meetups = meetups();
    let venue = meetups[0].venue_id;
    let mut at_venue: Vec<i64> = meetups
        .iter()
        .filter(|m| m.venue_id == venue)
        .map(|m| m.id)
        .collect();
    at_venue.sort();
    let first = at_venue[0];
    let mut selection = String::from("id");
    let mut expected = json!({"id": venue});
    for _ in 0..4 {
        selection =
            format!("id meetups(limit: 1, order_by: {{id: asc}}) {{ id venue {{ {selection} }} }}");
        expected = json!({"id": venue, "meetups": [{"id": first, "venue": expected}]});
    }
    let d = data(
        &format!("{{ venues_by_pk(id: {venue}) {{ {selection} }} }}"),
        Value::Null,
    )
    .await;
    assert_eq!(d, json!({ "venues_by_pk": expected }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_level_nesting_with_link_table() {
    let links = meetups_members();
    let members = members();
    let d = data(
        "{ venues(where: {id: {_lte: 3}}) { id meetups(order_by: {id: asc}) { id meetups_members(order_by: {member_id: asc}) { member { id email } } } } }",
        Value::Null,
    )
    .await;
    let all_meetups = meetups();
    let expected: Vec<Value> = (1..=3)
        .map(|v| {
            let ms: Vec<Value> = all_meetups
                .iter()
                .filter(|m| m.venue_id == v)
                .map(|m| {
                    let mm: Vec<Value> = links
                        .iter()
                        .filter(|(meetup, _)| *meetup == m.id)
                        .map(|(_, member)| {
                            let e = &members[(*member - 1) as usize].email;
                            json!({"member": {"id": member, "email": e}})
                        })
                        .collect();
                    json!({"id": m.id, "meetups_members": mm})
                })
                .collect();
            json!({"id": v, "meetups": ms})
        })
        .collect();
    assert_eq!(d, json!({ "venues": expected }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_foreign_keys_to_the_same_table() {
    let follows: Vec<(i64, i64)> = grafton_demo::Table::MemberFollow
        .rows(ROWS)
        .map(|r| match (&r[0], &r[1]) {
            (grafton_demo::Value::Int(a), grafton_demo::Value::Int(b)) => (*a, *b),
            other => panic!("{other:?}"),
        })
        .collect();
    let member = 7;
    let following: Vec<Value> = follows
        .iter()
        .filter(|(by, _)| *by == member)
        .map(|(_, m)| json!({"member_id": m}))
        .collect();
    let followers: Vec<Value> = follows
        .iter()
        .filter(|(_, m)| *m == member)
        .map(|(by, _)| json!({"created_by": by}))
        .collect();
    let d = data(
        "query ($m: Int!) { members_by_pk(id: $m) {
            member_follows_by_created_by(order_by: {member_id: asc}) { member_id }
            member_follows_by_member_id(order_by: {created_by: asc}) { created_by }
        } }",
        json!({ "m": member }),
    )
    .await;
    assert!(!following.is_empty());
    assert_eq!(
        d,
        json!({"members_by_pk": {
            "member_follows_by_created_by": following,
            "member_follows_by_member_id": followers
        }})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nullable_object_relationship_in_filters_and_order() {
    let d = data(
        r#"{
          uncategorised: gadgets(where: {_not: {category: {}}}) { id }
          categorised: gadgets(where: {category: {}}) { id }
          by_category: gadgets(order_by: [{category: {name: asc}}, {id: asc}]) { id }
          by_category_desc: gadgets(order_by: [{category: {name: desc}}, {id: asc}]) { id }
          by_grandparent: gadgets(order_by: [{category: {parent: {name: desc_nulls_last}}}, {id: desc}]) { id }
        }"#,
        Value::Null,
    )
    .await;
    // anvil→hammers(→tools), ball→toys(→root), chisel→tools(→root), drum→toys(→root), easel→none
    assert_eq!(
        d,
        json!({
            "uncategorised": [{"id": 5}],
            "categorised": [{"id": 1}, {"id": 2}, {"id": 3}, {"id": 4}],
            "by_category": [{"id": 1}, {"id": 3}, {"id": 2}, {"id": 4}, {"id": 5}],
            "by_category_desc": [{"id": 5}, {"id": 2}, {"id": 4}, {"id": 3}, {"id": 1}],
            "by_grandparent": [{"id": 1}, {"id": 4}, {"id": 3}, {"id": 2}, {"id": 5}]
        })
    );
}
