//! PostgreSQL types SQLite does not have: enums, uuid, timestamptz, jsonb, numeric,
//! bigint, interval, arrays (lists, as Hasura 2.29+ serves them), and types Grafton
//! does not map (exposed as String, read as text).

use crate::client;

use grafton_server::{start, ServeOptions};

use serde_json::{json, Value};

const FIXTURE: &str = include_str!("../fixtures/sql/postgres_types.postgres.sql");

async fn post(url: &str, query: &str, variables: Value) -> Value {
    reqwest::Client::new()
        .post(url)
        .json(&json!({ "query": query, "variables": variables }))
        .send()
        .await
        .expect("request")
        .json()
        .await
        .expect("json body")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_types_round_trip_and_filter() {
    let url = grafton_testkit::fresh_database("types");
    grafton_testkit::psql(&url, FIXTURE.as_bytes());
    let server = start(&ServeOptions {
        database_url: url,
        port: 0,
        ..ServeOptions::default()
    })
    .await
    .expect("server starts");
    let endpoint = server.url();

    let v = post(
        &endpoint,
        "{ things(order_by: {id: asc}) { id m u ts d j js n b iv tv arr } }",
        Value::Null,
    )
    .await;
    assert_eq!(
        v["data"]["things"][0],
        json!({"id": 1, "m": "happy", "u": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
               "ts": "2024-01-02T03:04:05+00:00", "d": "2024-01-02", "j": {"a": [1, 2]},
               "js": {"x": 1}, "n": 12.50, "b": true, "iv": "1 day 02:00:00",
               "tv": "'cat' 'fat'", "arr": ["a", "b"]}),
        "{v}"
    );

    let v = post(
        &endpoint,
        r#"query ($u: uuid, $moods: [mood!]) {
            a: things(where: {m: {_eq: happy}}) { id }
            b: things(where: {m: {_in: $moods}}) { id }
            c: things(where: {u: {_eq: $u}}) { id }
            d: things(where: {ts: {_gt: "2024-01-01T00:00:00Z"}}) { id }
            e: things(where: {n: {_gte: 1}}) { id }
            f: things(where: {j: {_eq: {a: [1, 2]}}}) { id }
            g: things(where: {iv: {_gt: "1 day"}}) { id }
            h: things(where: {tv: {_eq: "'cat' 'fat'"}}) { id }
            i: things(where: {arr: {_eq: "{a,b}"}}) { id }
            k: things(where: {b: {_eq: false}}) { id }
        }"#,
        json!({"u": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "moods": ["sad", "meh"]}),
    )
    .await;
    let one = json!([{"id": 1}]);
    let two = json!([{"id": 2}]);
    for (key, expected) in [
        ("a", &one),
        ("b", &two),
        ("c", &one),
        ("d", &one),
        ("e", &one),
        ("f", &one),
        ("g", &one),
        ("h", &one),
        ("i", &one),
        ("k", &two),
    ] {
        assert_eq!(&v["data"][key], expected, "{key}: {v}");
    }

    let v = post(
        &endpoint,
        "{ things_aggregate { aggregate { sum { id n } avg { n } max { m ts tv } } } }",
        Value::Null,
    )
    .await;
    assert_eq!(
        v["data"]["things_aggregate"]["aggregate"],
        json!({"sum": {"id": 3, "n": 12.75}, "avg": {"n": 6.375},
               "max": {"m": "sad", "ts": "2024-01-02T03:04:05+00:00", "tv": "'cat' 'fat'"}}),
        "{v}"
    );

    // A bad value for the column's type is the database's to reject: data-exception.
    let v = post(
        &endpoint,
        "{ things(where: {u: {_eq: \"not-a-uuid\"}}) { id } }",
        Value::Null,
    )
    .await;
    assert_eq!(
        v["errors"][0]["extensions"]["code"], "data-exception",
        "{v}"
    );
    // An enum value that does not exist is a validation error, before the database.
    let v = post(
        &endpoint,
        "{ things(where: {m: {_eq: angry}}) { id } }",
        Value::Null,
    )
    .await;
    assert_eq!(
        v["errors"][0]["extensions"]["code"], "validation-failed",
        "{v}"
    );
    // bigint arguments accept strings and numbers.
    let v = post(
        &endpoint,
        "query ($id: bigint!) { things_by_pk(id: $id) { id } }",
        json!({"id": "2"}),
    )
    .await;
    assert_eq!(v["data"]["things_by_pk"], json!({"id": 2}), "{v}");
    server.stop().await;
}

/// Array columns are Hasura's (2.29 and later): `[String!]` in and out, a JSON
/// array in answers, a list or a PostgreSQL array literal in inputs, and
/// `String_array_comparison_exp` with `_contains` and `_contained_in`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn array_columns_are_lists() {
    let url = grafton_testkit::fresh_database("types_arrays");
    grafton_testkit::psql(
        &url,
        b"CREATE TABLE apps (id int PRIMARY KEY, tags text[], scores int[] NOT NULL DEFAULT '{}', ids uuid[]);
          INSERT INTO apps VALUES (1, '{web,ios}', '{3,1}', NULL), (2, '{android}', '{}', NULL);",
    );
    let server = start(&ServeOptions {
        database_url: url.clone(),
        port: 0,
        ..ServeOptions::default()
    })
    .await
    .expect("server starts");
    let endpoint = server.url();
    let v = post(
        &endpoint,
        r#"{ apps: __type(name: "apps") { fields { name type { kind name ofType { kind name ofType { kind name ofType { name } } } } } }
             cmp: __type(name: "String_array_comparison_exp") { inputFields { name type { kind ofType { kind ofType { name } } } } } }"#,
        Value::Null,
    )
    .await;
    let field = |name: &str| {
        (v["data"]["apps"]["fields"].as_array().into_iter().flatten())
            .find(|f| f["name"] == name)
            .map(|f| f["type"].clone())
            .unwrap_or_default()
    };
    assert_eq!(
        field("tags"),
        json!({"kind": "LIST", "name": null, "ofType": {"kind": "NON_NULL", "name": null, "ofType": {"kind": "SCALAR", "name": "String", "ofType": null}}}),
        "{v}"
    );
    assert_eq!(field("scores")["kind"], "NON_NULL", "{v}");
    let ops: Vec<&str> = (v["data"]["cmp"]["inputFields"]
        .as_array()
        .into_iter()
        .flatten())
    .filter_map(|f| f["name"].as_str())
    .collect();
    for op in ["_eq", "_neq", "_contains", "_contained_in", "_is_null"] {
        assert!(ops.contains(&op), "{op}: {v}");
    }

    let v = post(
        &endpoint,
        r#"query ($t: [String!]) {
            a: apps(where: {tags: {_contains: ["web"]}}) { id }
            b: apps(where: {tags: {_contained_in: ["android", "web", "ios"]}}, order_by: {id: asc}) { id }
            c: apps(where: {tags: {_eq: $t}}) { id }
            d: apps(where: {tags: {_eq: "{web,ios}"}}) { id }
            e: apps(where: {scores: {_contains: [1]}}) { id scores }
        }"#,
        json!({"t": ["android"]}),
    )
    .await;
    assert_eq!(
        v["data"],
        json!({"a": [{"id": 1}], "b": [{"id": 1}, {"id": 2}], "c": [{"id": 2}],
               "d": [{"id": 1}], "e": [{"id": 1, "scores": [3, 1]}]}),
        "{v}"
    );

    // Inputs: a list (literal or variable) or an array literal; elements that need
    // quoting stay whole.
    let v = post(
        &endpoint,
        r#"mutation ($ids: [uuid!]) {
            insert_apps(objects: [
              {id: 3, tags: ["a,b", "quote\"d", "{x}"], ids: $ids},
              {id: 4, tags: "{x,y}", scores: [7]}
            ]) { returning { id tags scores ids } }
            update_apps_by_pk(pk_columns: {id: 2}, _set: {tags: ["tv"]}) { tags }
        }"#,
        json!({"ids": ["a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"]}),
    )
    .await;
    assert_eq!(
        v["data"],
        json!({"insert_apps": {"returning": [
                  {"id": 3, "tags": ["a,b", "quote\"d", "{x}"], "scores": [], "ids": ["a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"]},
                  {"id": 4, "tags": ["x", "y"], "scores": [7], "ids": null}]},
               "update_apps_by_pk": {"tags": ["tv"]}}),
        "{v}"
    );
    let stored = grafton_testkit::psql(
        &url,
        b"SELECT tags[1] || '|' || tags[2] || '|' || tags[3] FROM apps WHERE id = 3",
    );
    assert_eq!(stored.trim(), "a,b|quote\"d|{x}");
    // A literal PostgreSQL cannot read is a data error, not a partial write.
    let v = post(
        &endpoint,
        r#"mutation { insert_apps_one(object: {id: 5, tags: "{unclosed"}) { id } }"#,
        Value::Null,
    )
    .await;
    assert_eq!(
        v["errors"][0]["extensions"]["code"], "data-exception",
        "{v}"
    );
    let count = grafton_testkit::psql(&url, b"SELECT count(*) FROM apps");
    assert_eq!(count.trim(), "4");

    // A live query with an array variable: its value reaches the shared statement
    // of the multiplexed poll as the same literal.
    let mut ws = client::Client::connect(&server, client::TRANSPORT_WS, json!({})).await;
    ws.start(
        "1",
        "subscription($t: [String!]) { apps(where: {tags: {_contains: $t}}, order_by: {id: asc}) { id } }",
        json!({"t": ["x"]}),
    )
    .await;
    assert_eq!(ws.result("1").await, json!({"data": {"apps": [{"id": 4}]}}));
    ws.close().await;
    server.stop().await;
}
