//! JSON Schemas from the config: a file with transitive `$ref`s (`venues.details`)
//! and an inline schema on a text column (`events.code`).

use crate::*;
use serde_json::json;

const INSERT: &str =
    "mutation ($v: venues_insert_input!) { insert_venues_one(object: $v) { name details } }";

#[tokio::test]
async fn conforming_values_are_written() {
    let _g = serial().await;
    for db in BOTH {
        let details = json!({"address": {"street": "Karasuma", "zip": "600-8216"}, "tags": ["x"]});
        let d = ok(
            db,
            INSERT,
            json!({"v": {"name": "schema-ok", "details": details}}),
        )
        .await;
        assert_eq!(d["insert_venues_one"]["details"], details, "{db:?}");
        let d = ok(
            db,
            r#"mutation { insert_venues_one(object: {name: "schema-ok-2", details: null, events: {data: [{title: "coded", code: "ABC"}]}}) { events { code } } }"#,
            json!(null),
        )
        .await;
        assert_eq!(
            d["insert_venues_one"]["events"],
            json!([{"code": "ABC"}]),
            "{db:?}"
        );
        ok(db, r#"mutation { delete_events(where: {title: {_eq: "coded"}}) { affected_rows } delete_venues(where: {name: {_like: "schema-ok%"}}) { affected_rows } }"#, json!(null)).await;
    }
}

#[tokio::test]
async fn violations_are_rejected_with_a_pointer_before_the_database() {
    let _g = serial().await;
    for db in BOTH {
        let before = checksum(db);
        // Through two $refs: details.json → address.json → common.json#/$defs/zip.
        let e = fails(
            db,
            INSERT,
            json!({"v": {"name": "schema-bad", "details": {"address": {"zip": "6008216"}}}}),
            "validation-failed",
        )
        .await;
        assert_eq!(e["extensions"]["pointer"], "/address/zip", "{db:?}: {e}");
        assert_eq!(
            e["extensions"]["path"], "insert_venues_one.object.details",
            "{db:?}: {e}"
        );
        let e = fails(
            db,
            INSERT,
            json!({"v": {"name": "schema-bad", "details": {"tags": [1]}}}),
            "validation-failed",
        )
        .await;
        assert!(
            e["message"].as_str().unwrap_or("").contains("address"),
            "{db:?}: {e}"
        );
        // In a nested insert, and in an update's _set.
        let e = fails(
            db,
            r#"mutation { insert_venues_one(object: {name: "schema-bad", events: {data: [{title: "t", code: "abc"}]}}) { id } }"#,
            json!(null),
            "validation-failed",
        )
        .await;
        assert_eq!(
            e["extensions"]["path"], "insert_venues_one.object.events.data[0].code",
            "{db:?}: {e}"
        );
        fails(
            db,
            r#"mutation { update_venues_by_pk(pk_columns: {id: 1}, _set: {details: {address: {}}}) { id } }"#,
            json!(null),
            "validation-failed",
        )
        .await;
        assert_eq!(checksum(db), before, "{db:?}");
    }
}

#[tokio::test]
async fn a_broken_schema_stops_start_up() {
    let dir = std::env::temp_dir().join(format!("grafton-bad-schema-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("a.json"), r#"{"$ref": "missing.json"}"#).expect("schema");
    let path = dir.join("grafton.yaml");
    std::fs::write(
        &path,
        "tables:\n  venues:\n    columns:\n      details:\n        json_schema: a.json\n",
    )
    .expect("config");
    let config = grafton_server::load_config(&path).expect("config parses");
    let message = engine_error(setup_sqlite(), config);
    assert!(
        message.contains("missing.json"),
        "start-up error should name the file: {message}"
    );
}
