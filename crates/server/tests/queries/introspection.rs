//! Introspection: the full query, `__type` beside data, directives and variables in
//! it.

use crate::common::*;
use serde_json::{json, Value};

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn introspection_with_directives_and_variables() {
    let query = r#"query ($n: String!, $s: Boolean!) {
        __schema @skip(if: $s) { queryType { name } }
        __type(name: $n) { name }
        venues_by_pk(id: 1) { id }
    }"#;
    for (n, s) in [("venues", true), ("meetups", false), ("nope", true)] {
        let d = data(query, json!({"n": n, "s": s})).await;
        let ty = if n == "nope" {
            Value::Null
        } else {
            json!({"name": n})
        };
        let expected = if s {
            json!({"__type": ty, "venues_by_pk": {"id": 1}})
        } else {
            json!({"__schema": {"queryType": {"name": "query_root"}}, "__type": ty, "venues_by_pk": {"id": 1}})
        };
        assert_eq!(d, expected, "n={n} s={s}");
    }
}
