//! Inserts, upserts and nested inserts.

use crate::*;
use serde_json::json;

#[tokio::test]
async fn batch_insert_returns_rows_with_relationships_and_aggregates() {
    let _g = serial().await;
    for db in BOTH {
        let d = ok(
            db,
            r#"mutation ($objects: [venues_insert_input!]!) {
                insert_venues(objects: $objects) {
                    affected_rows
                    returning { name city visits events_aggregate { aggregate { count } } }
                }
            }"#,
            json!({"objects": [
                {"name": "batch-a", "city": "Nara"},
                {"name": "batch-b"},
                {"name": "batch-c", "city": "Kobe", "capacity": 3}
            ]}),
        )
        .await;
        assert_eq!(
            d,
            json!({"insert_venues": {"affected_rows": 3, "returning": [
                {"name": "batch-a", "city": "Nara", "visits": 0, "events_aggregate": {"aggregate": {"count": 0}}},
                {"name": "batch-b", "city": null, "visits": 0, "events_aggregate": {"aggregate": {"count": 0}}},
                {"name": "batch-c", "city": "Kobe", "visits": 0, "events_aggregate": {"aggregate": {"count": 0}}}
            ]}}),
            "{db:?}"
        );
        // They are really there, and readable by a query.
        let d = ok(
            db,
            r#"{ venues(where: {name: {_like: "batch-%"}}, order_by: {name: asc}) { name } }"#,
            json!(null),
        )
        .await;
        assert_eq!(d["venues"].as_array().map(Vec::len), Some(3), "{db:?}");
        ok(
            db,
            r#"mutation { delete_venues(where: {name: {_like: "batch-%"}}) { affected_rows } }"#,
            json!(null),
        )
        .await;
    }
}

#[tokio::test]
async fn insert_one_with_object_relationship_in_returning() {
    let _g = serial().await;
    for db in BOTH {
        let d = ok(
            db,
            r#"mutation { insert_events_one(object: {title: "solo", venue_id: 2}) { title venue { name } } }"#,
            json!(null),
        )
        .await;
        assert_eq!(
            d,
            json!({"insert_events_one": {"title": "solo", "venue": {"name": "Loft"}}}),
            "{db:?}"
        );
        ok(
            db,
            r#"mutation { delete_events(where: {title: {_eq: "solo"}}) { affected_rows } }"#,
            json!(null),
        )
        .await;
    }
}

#[tokio::test]
async fn upsert_on_primary_key_and_unique_constraint() {
    let _g = serial().await;
    for db in BOTH {
        // Primary key: updates only the listed columns.
        let d = ok(
            db,
            r#"mutation { insert_venues_one(
                object: {id: 2, name: "Loft", city: "Sakai", capacity: 999},
                on_conflict: {constraint: venues_pkey, update_columns: [city]}
            ) { id name city capacity } }"#,
            json!(null),
        )
        .await;
        assert_eq!(
            d["insert_venues_one"],
            json!({"id": 2, "name": "Loft", "city": "Sakai", "capacity": 20}),
            "{db:?}"
        );
        // Unique constraint on name.
        let d = ok(
            db,
            r#"mutation { insert_venues(
                objects: [{name: "Loft", city: "Osaka"}, {name: "upsert-new", city: "Uji"}],
                on_conflict: {constraint: venues_name_key, update_columns: [city]}
            ) { affected_rows returning { name city } } }"#,
            json!(null),
        )
        .await;
        assert_eq!(
            d["insert_venues"],
            json!({"affected_rows": 2, "returning": [{"name": "Loft", "city": "Osaka"}, {"name": "upsert-new", "city": "Uji"}]}),
            "{db:?}"
        );
        // Empty update_columns: do nothing on conflict.
        let d = ok(
            db,
            r#"mutation { insert_venues(objects: [{name: "Loft", city: "nowhere"}],
                on_conflict: {constraint: venues_name_key, update_columns: []}) { affected_rows returning { id } } }"#,
            json!(null),
        )
        .await;
        assert_eq!(
            d["insert_venues"],
            json!({"affected_rows": 0, "returning": []}),
            "{db:?}"
        );
        // `where` limits which existing rows the update branch may change.
        let d = ok(
            db,
            r#"mutation { insert_venues(objects: [{name: "Loft", city: "blocked"}],
                on_conflict: {constraint: venues_name_key, update_columns: [city], where: {capacity: {_gt: 50}}}) { affected_rows } }"#,
            json!(null),
        )
        .await;
        assert_eq!(d["insert_venues"]["affected_rows"], 0, "{db:?}");
        let d = ok(db, "{ venues_by_pk(id: 2) { city } }", json!(null)).await;
        assert_eq!(d["venues_by_pk"]["city"], "Osaka", "{db:?}");
        ok(
            db,
            r#"mutation { delete_venues(where: {name: {_eq: "upsert-new"}}) { affected_rows } }"#,
            json!(null),
        )
        .await;
    }
}

#[tokio::test]
async fn nested_inserts_fill_foreign_keys_both_ways() {
    let _g = serial().await;
    for db in BOTH {
        // Array relationship: the venue first, then its events with venue_id filled in.
        let d = ok(
            db,
            r#"mutation { insert_venues_one(object: {
                name: "nested-hall",
                events: {data: [{title: "nested-1"}, {title: "nested-2"}]}
            }) { name events(order_by: {title: asc}) { title venue { name } } } }"#,
            json!(null),
        )
        .await;
        assert_eq!(
            d["insert_venues_one"],
            json!({"name": "nested-hall", "events": [
                {"title": "nested-1", "venue": {"name": "nested-hall"}},
                {"title": "nested-2", "venue": {"name": "nested-hall"}}
            ]}),
            "{db:?}"
        );
        // Object relationship: the venue first, its key copied into the event.
        let d = ok(
            db,
            r#"mutation { insert_events(objects: [
                {title: "nested-3", venue: {data: {name: "nested-room"}}},
                {title: "nested-4", venue: {data: {name: "Hall", city: "ignored"}, on_conflict: {constraint: venues_name_key, update_columns: [name]}}}
            ]) { affected_rows returning { title venue { name city } } } }"#,
            json!(null),
        )
        .await;
        assert_eq!(
            d["insert_events"],
            json!({"affected_rows": 4, "returning": [
                {"title": "nested-3", "venue": {"name": "nested-room", "city": null}},
                {"title": "nested-4", "venue": {"name": "Hall", "city": "Kyoto"}}
            ]}),
            "{db:?}"
        );
        ok(db, r#"mutation { delete_events(where: {title: {_like: "nested-%"}}) { affected_rows } delete_venues(where: {name: {_like: "nested-%"}}) { affected_rows } }"#, json!(null)).await;
    }
}

#[tokio::test]
async fn nested_insert_rolls_back_when_a_child_fails() {
    let _g = serial().await;
    for db in BOTH {
        let before = checksum(db);
        // The second event has no title (NOT NULL): nothing of this request may stay.
        let e = fails(
            db,
            r#"mutation { insert_venues_one(object: {
                name: "doomed", events: {data: [{title: "fine"}, {title: null}]}
            }) { id } }"#,
            json!(null),
            "constraint-violation",
        )
        .await;
        assert_eq!(e["extensions"]["columns"], json!(["title"]), "{db:?}: {e}");
        assert_eq!(
            checksum(db),
            before,
            "{db:?}: the failed nested insert left rows behind"
        );
    }
}

#[tokio::test]
async fn a_failing_second_field_rolls_back_the_first() {
    let _g = serial().await;
    for db in BOTH {
        let before = checksum(db);
        fails(
            db,
            r#"mutation {
                a: update_counters_by_pk(pk_columns: {id: 2}, _inc: {n: 7}) { n }
                b: insert_venues_one(object: {name: "dup", capacity: -1}) { id }
            }"#,
            json!(null),
            "constraint-violation",
        )
        .await;
        assert_eq!(
            checksum(db),
            before,
            "{db:?}: the first field's write survived"
        );
        let d = ok(db, "{ counters_by_pk(id: 2) { n } }", json!(null)).await;
        assert_eq!(d["counters_by_pk"]["n"], 0, "{db:?}");
    }
}

#[tokio::test]
async fn fields_run_in_document_order_and_see_earlier_writes() {
    let _g = serial().await;
    for db in BOTH {
        let d = ok(
            db,
            r#"mutation {
                first: insert_venues_one(object: {name: "order-1", capacity: 1}) { name }
                second: update_venues(where: {name: {_eq: "order-1"}}, _inc: {capacity: 10}) { returning { capacity } }
                __typename
                third: delete_venues(where: {name: {_eq: "order-1"}}) { affected_rows returning { capacity } }
            }"#,
            json!(null),
        )
        .await;
        assert_eq!(
            d,
            json!({
                "first": {"name": "order-1"},
                "second": {"returning": [{"capacity": 11}]},
                "__typename": "mutation_root",
                "third": {"affected_rows": 1, "returning": [{"capacity": 11}]}
            }),
            "{db:?}"
        );
    }
}
