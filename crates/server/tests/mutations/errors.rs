//! Rejected writes: each constraint kind, invalid values, and that nothing is written.

use crate::*;
use serde_json::json;

async fn rejected(db: Db, query: &str, code: &str) -> serde_json::Value {
    let before = checksum(db);
    let e = fails(db, query, json!(null), code).await;
    assert_eq!(
        checksum(db),
        before,
        "{db:?}: a rejected write changed the data: {query}"
    );
    e
}

#[tokio::test]
async fn unique_violation_names_constraint_and_columns() {
    let _g = serial().await;
    for db in BOTH {
        let e = rejected(
            db,
            r#"mutation { insert_venues(objects: [{name: "fresh"}, {name: "Hall"}]) { affected_rows } }"#,
            "constraint-violation",
        )
        .await;
        assert_eq!(
            e["extensions"]["constraint"], "venues_name_key",
            "{db:?}: {e}"
        );
        assert_eq!(e["extensions"]["columns"], json!(["name"]), "{db:?}: {e}");
        let e = rejected(
            db,
            r#"mutation { update_venues_by_pk(pk_columns: {id: 2}, _set: {name: "Hall"}) { id } }"#,
            "constraint-violation",
        )
        .await;
        assert_eq!(
            e["extensions"]["constraint"], "venues_name_key",
            "{db:?}: {e}"
        );
        let e = rejected(
            db,
            r#"mutation { insert_venues_one(object: {id: 1, name: "other"}) { id } }"#,
            "constraint-violation",
        )
        .await;
        assert_eq!(e["extensions"]["constraint"], "venues_pkey", "{db:?}: {e}");
    }
}

#[tokio::test]
async fn foreign_key_not_null_and_check_violations() {
    let _g = serial().await;
    for db in BOTH {
        let e = rejected(
            db,
            r#"mutation { insert_events_one(object: {title: "orphan", venue_id: 424242}) { id } }"#,
            "constraint-violation",
        )
        .await;
        if db == Db::Postgres {
            assert_eq!(e["extensions"]["constraint"], "events_venue_id_fkey", "{e}");
            assert_eq!(e["extensions"]["columns"], json!(["venue_id"]), "{e}");
        }
        // Deleting a referenced row is refused too.
        rejected(
            db,
            "mutation { delete_venues_by_pk(id: 1) { id } }",
            "constraint-violation",
        )
        .await;
        let e = rejected(
            db,
            r#"mutation { insert_events_one(object: {title: null}) { id } }"#,
            "constraint-violation",
        )
        .await;
        assert_eq!(e["extensions"]["columns"], json!(["title"]), "{db:?}: {e}");
        let e = rejected(
            db,
            r#"mutation { update_venues(where: {}, _inc: {capacity: -1000}) { affected_rows } }"#,
            "constraint-violation",
        )
        .await;
        assert_eq!(
            e["extensions"]["constraint"], "capacity_non_negative",
            "{db:?}: {e}"
        );
    }
}

#[tokio::test]
async fn invalid_values_are_data_exceptions() {
    let _g = serial().await;
    for db in BOTH {
        let e = rejected(
            db,
            r#"mutation { insert_events_one(object: {title: "t", ticket: "not-a-uuid"}) { id } }"#,
            "data-exception",
        )
        .await;
        assert!(
            e["message"].as_str().unwrap_or("").contains("uuid"),
            "{db:?}: {e}"
        );
        rejected(
            db,
            r#"mutation { update_events(where: {id: {_eq: 1}}, _set: {ticket: "{a0eebc99-9c0b}"}) { affected_rows } }"#,
            "data-exception",
        )
        .await;
        // Accepted forms of the same type.
        let d = ok(
            db,
            r#"mutation { insert_events_one(object: {title: "typed", ticket: "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"}) { ticket } }"#,
            json!(null),
        )
        .await;
        assert_eq!(
            d["insert_events_one"],
            json!({"ticket": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"}),
            "{db:?}"
        );
        ok(
            db,
            r#"mutation { delete_events(where: {title: {_eq: "typed"}}) { affected_rows } }"#,
            json!(null),
        )
        .await;
    }
}

#[tokio::test]
async fn postgres_bigint_enum_and_smallint_range() {
    let _g = serial().await;
    let db = Db::Postgres;
    // SQLite declares BIGINT as an integer affinity, exposed as Int: GraphQL checks it.
    rejected(
        db,
        r#"mutation { insert_events_one(object: {title: "t", seats: "99999999999999999999"}) { id } }"#,
        "data-exception",
    )
    .await;
    rejected(
        db,
        r#"mutation { update_events(where: {id: {_eq: 1}}, _set: {seats: "many"}) { affected_rows } }"#,
        "data-exception",
    )
    .await;
    // An enum value outside the type is refused by GraphQL validation, before the database.
    fails(
        db,
        "mutation ($m: mood) { insert_moods_one(object: {id: 1, mood: $m}) { id } }",
        json!({"m": "angry"}),
        "validation-failed",
    )
    .await;
    rejected(
        db,
        "mutation { insert_moods_one(object: {id: 1, mood: happy, level: 40000}) { id } }",
        "data-exception",
    )
    .await;
    let d = ok(
        db,
        "mutation { insert_moods_one(object: {id: 1, mood: sad, level: 3}) { mood level } }",
        json!(null),
    )
    .await;
    assert_eq!(d["insert_moods_one"], json!({"mood": "sad", "level": 3}));
    ok(
        db,
        "mutation { delete_moods(where: {}) { affected_rows } }",
        json!(null),
    )
    .await;
}

#[tokio::test]
async fn invalid_mutations_are_validation_errors() {
    let _g = serial().await;
    for db in BOTH {
        for query in [
            r#"mutation { insert_venues_one(object: {nope: 1}) { id } }"#,
            r#"mutation { update_venues(where: {}) { affected_rows } }"#,
            r#"mutation { update_venues(where: {}, _set: {capacity: 1}, _inc: {capacity: 1}) { affected_rows } }"#,
            r#"mutation { insert_venues_one(object: {name: "x"}, on_conflict: {constraint: nope, update_columns: []}) { id } }"#,
            r#"mutation { insert_events_one(object: {title: "x", venue_id: 1, venue: {data: {name: "y"}}}) { id } }"#,
            r#"mutation { delete_venues { affected_rows } }"#,
        ] {
            let before = checksum(db);
            let (_, v) = post(db, query, json!(null)).await;
            assert_eq!(
                v["errors"][0]["extensions"]["code"], "validation-failed",
                "{db:?}: {query}: {v}"
            );
            assert_eq!(checksum(db), before, "{db:?}: {query}");
        }
    }
}
