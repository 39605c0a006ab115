//! Updates (`_set`, `_inc`, jsonb operators, by primary key, many) and deletes.

use crate::*;
use serde_json::json;

#[tokio::test]
async fn update_set_and_inc_with_returning() {
    let _g = serial().await;
    for db in BOTH {
        let d = ok(
            db,
            r#"mutation ($city: String) {
                update_venues(where: {id: {_in: [1, 2]}}, _set: {city: $city}, _inc: {visits: 2}) {
                    affected_rows returning { id city visits events_aggregate { aggregate { count } } }
                }
            }"#,
            json!({"city": "Tokyo"}),
        )
        .await;
        let mut rows = d["update_venues"]["returning"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        rows.sort_by_key(|r| r["id"].as_i64());
        assert_eq!(d["update_venues"]["affected_rows"], 2, "{db:?}");
        assert_eq!(
            rows,
            vec![
                json!({"id": 1, "city": "Tokyo", "visits": 2, "events_aggregate": {"aggregate": {"count": 2}}}),
                json!({"id": 2, "city": "Tokyo", "visits": 2, "events_aggregate": {"aggregate": {"count": 1}}})
            ],
            "{db:?}"
        );
        let d = ok(
            db,
            r#"mutation { update_venues_by_pk(pk_columns: {id: 1}, _set: {city: "Kyoto"}, _inc: {visits: -2}) { id city visits } }"#,
            json!(null),
        )
        .await;
        assert_eq!(
            d["update_venues_by_pk"],
            json!({"id": 1, "city": "Kyoto", "visits": 0}),
            "{db:?}"
        );
        let d = ok(
            db,
            r#"mutation { update_venues_by_pk(pk_columns: {id: 424242}, _set: {city: "x"}) { id } }"#,
            json!(null),
        )
        .await;
        assert_eq!(d["update_venues_by_pk"], json!(null), "{db:?}");
        ok(db, r#"mutation { update_venues(where: {id: {_eq: 2}}, _set: {city: "Osaka"}, _inc: {visits: -2}) { affected_rows } }"#, json!(null)).await;
    }
}

#[tokio::test]
async fn update_many_runs_each_update_in_order() {
    let _g = serial().await;
    for db in BOTH {
        let d = ok(
            db,
            r#"mutation { update_counters_many(updates: [
                {where: {id: {_eq: 1}}, _inc: {n: 5}},
                {where: {n: {_gte: 5}}, _set: {n: 1}},
                {where: {id: {_eq: 99}}, _set: {n: 3}}
            ]) { affected_rows returning { id n } } }"#,
            json!(null),
        )
        .await;
        assert_eq!(
            d["update_counters_many"],
            json!([
                {"affected_rows": 1, "returning": [{"id": 1, "n": 5}]},
                {"affected_rows": 1, "returning": [{"id": 1, "n": 1}]},
                {"affected_rows": 0, "returning": []}
            ]),
            "{db:?}"
        );
        ok(
            db,
            "mutation { update_counters(where: {}, _set: {n: 0}) { affected_rows } }",
            json!(null),
        )
        .await;
    }
}

#[tokio::test]
async fn jsonb_operators_match_postgres_on_both_backends() {
    let _g = serial().await;
    for db in BOTH {
        ok(
            db,
            r#"mutation { insert_venues_one(object: {name: "json-venue", details: {address: {zip: "600-8216"}, tags: ["a", "b"]}}) { id } }"#,
            json!(null),
        )
        .await;
        // details has a JSON Schema, so its jsonb operators are not offered.
        let (_, v) = post(
            db,
            r#"mutation { update_venues(where: {name: {_eq: "json-venue"}}, _append: {details: {x: 1}}) { affected_rows } }"#,
            json!(null),
        )
        .await;
        assert_eq!(
            v["errors"][0]["extensions"]["code"], "validation-failed",
            "{db:?}: {v}"
        );
        let update = |op: &str, value: &str| {
            format!(
                r#"mutation {{ update_venues(where: {{name: {{_eq: "json-venue"}}}}, {op}: {{extra: {value}}}) {{ returning {{ extra }} }} }}"#
            )
        };
        let steps = [
            (
                "_set",
                r#"{a: 1, b: [1, 2, 3], c: {d: "e"}}"#,
                json!({"a": 1, "b": [1, 2, 3], "c": {"d": "e"}}),
            ),
            (
                "_append",
                "{d: true, a: 2}",
                json!({"a": 2, "b": [1, 2, 3], "c": {"d": "e"}, "d": true}),
            ),
            (
                "_delete_key",
                r#""d""#,
                json!({"a": 2, "b": [1, 2, 3], "c": {"d": "e"}}),
            ),
            (
                "_delete_at_path",
                r#"["b", "-1"]"#,
                json!({"a": 2, "b": [1, 2], "c": {"d": "e"}}),
            ),
            (
                "_delete_at_path",
                r#"["c", "d"]"#,
                json!({"a": 2, "b": [1, 2], "c": {}}),
            ),
            ("_set", "[1, 2, 3]", json!([1, 2, 3])),
            ("_prepend", "[0]", json!([0, 1, 2, 3])),
            ("_append", "4", json!([0, 1, 2, 3, 4])),
            ("_delete_elem", "-1", json!([0, 1, 2, 3])),
            ("_delete_elem", "0", json!([1, 2, 3])),
        ];
        for (op, value, expected) in steps {
            let d = ok(db, &update(op, value), json!(null)).await;
            assert_eq!(
                d["update_venues"]["returning"][0]["extra"], expected,
                "{db:?}: {op} {value}"
            );
        }
        // Postgres's errors: an integer index into an object.
        ok(db, &update("_set", "{a: 1}"), json!(null)).await;
        fails(
            db,
            &update("_delete_elem", "0"),
            json!(null),
            "data-exception",
        )
        .await;
        ok(
            db,
            r#"mutation { delete_venues(where: {name: {_eq: "json-venue"}}) { affected_rows } }"#,
            json!(null),
        )
        .await;
    }
}

#[tokio::test]
async fn delete_returns_the_rows_as_they_were() {
    let _g = serial().await;
    for db in BOTH {
        ok(
            db,
            r#"mutation { insert_venues_one(object: {name: "gone-venue", events: {data: [{title: "gone-1"}]}}) { id } }"#,
            json!(null),
        )
        .await;
        let d = ok(
            db,
            r#"mutation { delete_events(where: {title: {_eq: "gone-1"}}) { affected_rows returning { title venue { name } } } }"#,
            json!(null),
        )
        .await;
        assert_eq!(
            d["delete_events"],
            json!({"affected_rows": 1, "returning": [{"title": "gone-1", "venue": {"name": "gone-venue"}}]}),
            "{db:?}"
        );
        let d = ok(
            db,
            r#"{ venues(where: {name: {_eq: "gone-venue"}}) { id } }"#,
            json!(null),
        )
        .await;
        let id = d["venues"][0]["id"].clone();
        let d = ok(
            db,
            "mutation ($id: Int!) { delete_venues_by_pk(id: $id) { name events_aggregate { aggregate { count } } } again: delete_venues_by_pk(id: $id) { name } }",
            json!({"id": id}),
        )
        .await;
        assert_eq!(
            d,
            json!({"delete_venues_by_pk": {"name": "gone-venue", "events_aggregate": {"aggregate": {"count": 0}}}, "again": null}),
            "{db:?}"
        );
        let d = ok(
            db,
            r#"mutation { delete_venues(where: {name: {_eq: "never-there"}}) { affected_rows } }"#,
            json!(null),
        )
        .await;
        assert_eq!(d["delete_venues"]["affected_rows"], 0, "{db:?}");
    }
}

#[tokio::test]
async fn mutations_over_get_are_refused() {
    let _g = serial().await;
    for db in BOTH {
        let before = checksum(db);
        let response = common::client()
            .get(url(db))
            .query(&[(
                "query",
                "mutation { delete_events(where: {}) { affected_rows } }",
            )])
            .send()
            .await
            .expect("GET");
        assert_eq!(
            response.status(),
            reqwest::StatusCode::METHOD_NOT_ALLOWED,
            "{db:?}"
        );
        assert_eq!(checksum(db), before, "{db:?}");
    }
}
