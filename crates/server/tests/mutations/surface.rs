//! The rest of Hasura's surface that clients rely on: declared-but-unused variables,
//! empty and preset-only updates, jsonb operators in `where`, `citext`, composite
//! types, one-to-one relationships through the remote table's key, and
//! `insertion_order: after_parent`.

use crate::*;
use serde_json::json;

#[tokio::test]
async fn unused_variables_are_accepted_unless_strict() {
    let _g = serial().await;
    let query = "query Q($unused: Int, $id: Int!) { venues(where: {id: {_eq: $id}}) { name } }";
    for db in BOTH {
        let d = ok(db, query, json!({"id": 1})).await;
        assert_eq!(d["venues"], json!([{"name": "Hall"}]), "{db:?}");
    }
    let config = grafton_server::load_config(&config_dir().join("grafton.yaml")).expect("config");
    let base = common::start_server(grafton_server::ServeOptions {
        database_url: setup_sqlite(),
        port: 0,
        config,
        strict_graphql: true,
        ..Default::default()
    });
    let (_, v, _) = common::post_to(
        &format!("{base}/v1/graphql"),
        &json!({"query": query, "variables": {"id": 1}}),
    )
    .await;
    assert_eq!(
        v["errors"][0]["extensions"]["code"], "validation-failed",
        "{v}"
    );
    assert!(
        v["errors"][0]["message"]
            .as_str()
            .unwrap_or("")
            .contains("unused"),
        "{v}"
    );
}

#[tokio::test]
async fn empty_and_preset_only_updates_run() {
    let _g = serial().await;
    for db in BOTH {
        let before = checksum(db);
        let d = ok(
            db,
            r#"mutation { update_venues(where: {}, _set: {}) { affected_rows returning { id } } update_venues_by_pk(pk_columns: {id: 1}, _set: {}) { id } }"#,
            json!(null),
        )
        .await;
        assert_eq!(
            d,
            json!({"update_venues": {"affected_rows": 0, "returning": []}, "update_venues_by_pk": null}),
            "{db:?}"
        );
        assert_eq!(checksum(db), before, "{db:?}");
        // The role may change nothing but its presets: an update sets them.
        let (_, v) = post_as(
            db,
            "stamper",
            ("1", "42"),
            r#"mutation { update_projects(where: {code: {_eq: "A1"}}) { affected_rows returning { code updated_by } } }"#,
            json!(null),
        )
        .await;
        assert_eq!(
            v["data"]["update_projects"],
            json!({"affected_rows": 1, "returning": [{"code": "A1", "updated_by": 42}]}),
            "{db:?}: {v}"
        );
        ok(
            db,
            "mutation { update_projects(where: {}, _set: {updated_by: null}) { affected_rows } }",
            json!(null),
        )
        .await;
    }
}

#[tokio::test]
async fn jsonb_operators_filter_on_both_backends() {
    let _g = serial().await;
    for db in BOTH {
        ok(
            db,
            r#"mutation { insert_venues(objects: [
                {name: "k1", extra: {tags: ["a", "b"], open: true}},
                {name: "k2", extra: {tags: ["b"], owner: {id: 1}}},
                {name: "k3", extra: ["a", "c"]}]) { affected_rows } }"#,
            json!(null),
        )
        .await;
        for (filter, names) in [
            (json!({"_contains": {"tags": ["b"]}}), json!(["k1", "k2"])),
            (json!({"_contains": "a"}), json!(["k3"])),
            (
                json!({"_contained_in": {"tags": ["a", "b", "c"], "open": true}}),
                json!(["k1"]),
            ),
            (json!({"_has_key": "owner"}), json!(["k2"])),
            (
                json!({"_has_keys_any": ["open", "owner"]}),
                json!(["k1", "k2"]),
            ),
            (json!({"_has_keys_all": ["tags", "open"]}), json!(["k1"])),
        ] {
            let d = ok(
                db,
                r#"query ($f: jsonb_comparison_exp) { venues(where: {name: {_like: "k%"}, extra: $f}, order_by: {name: asc}) { name } }"#,
                json!({ "f": filter }),
            )
            .await;
            let got: Vec<&serde_json::Value> = d["venues"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|v| &v["name"])
                .collect();
            assert_eq!(json!(got), names, "{db:?}: {filter}");
        }
        // `_cast` compares the text form; `path` selects inside the value.
        let d = ok(
            db,
            r#"{ venues(where: {name: {_like: "k%"}, extra: {_cast: {String: {_ilike: "%OWNER%"}}}}) { name } }"#,
            json!(null),
        )
        .await;
        assert_eq!(d["venues"], json!([{"name": "k2"}]), "{db:?}");
        let d = ok(
            db,
            r#"{ venues(where: {name: {_like: "k%"}}, order_by: {name: asc}) { name first: extra(path: "$.tags[0]") id: extra(path: "owner.id") second: extra(path: "[1]") all: extra(path: "$") } }"#,
            json!(null),
        )
        .await;
        assert_eq!(
            d["venues"],
            json!([
                {"name": "k1", "first": "a", "id": null, "second": null, "all": {"tags": ["a", "b"], "open": true}},
                {"name": "k2", "first": "b", "id": 1, "second": null, "all": {"tags": ["b"], "owner": {"id": 1}}},
                {"name": "k3", "first": null, "id": null, "second": "c", "all": ["a", "c"]}
            ]),
            "{db:?}"
        );
        let (_, v) = post(db, r#"{ venues { extra(path: "$.[") } }"#, json!(null)).await;
        assert_eq!(
            v["errors"][0]["extensions"]["code"], "validation-failed",
            "{db:?}: {v}"
        );
        ok(
            db,
            r#"mutation { delete_venues(where: {name: {_like: "k%"}}) { affected_rows } }"#,
            json!(null),
        )
        .await;
    }
}

#[tokio::test]
async fn citext_compares_case_insensitively_and_composites_are_json() {
    let _g = serial().await;
    let db = Db::Postgres;
    let d = ok(
        db,
        r#"{ a: tags(where: {label: {_eq: "rust"}}) { id label } b: tags(where: {label: {_in: ["GO", "java"]}}) { id } c: tags(where: {label: {_neq: "RUST"}}) { id } }"#,
        json!(null),
    )
    .await;
    assert_eq!(
        d,
        json!({"a": [{"id": 1, "label": "Rust"}], "b": [{"id": 2}], "c": [{"id": 2}]})
    );
    let d = ok(
        db,
        r#"mutation { insert_places_one(object: {id: 1, addr: {street: "Karasuma", zip: "600-8216"}}) { id addr } }"#,
        json!(null),
    )
    .await;
    assert_eq!(
        d["insert_places_one"],
        json!({"id": 1, "addr": {"street": "Karasuma", "zip": "600-8216"}})
    );
    let d = ok(
        db,
        "{ places(where: {addr: {_is_null: false}}) { addr } }",
        json!(null),
    )
    .await;
    assert_eq!(
        d["places"],
        json!([{"addr": {"street": "Karasuma", "zip": "600-8216"}}])
    );
    ok(
        db,
        "mutation { delete_places(where: {}) { affected_rows } }",
        json!(null),
    )
    .await;
}

#[tokio::test]
async fn one_to_one_through_the_remote_key_and_after_parent_inserts() {
    let _g = serial().await;
    for db in BOTH {
        // Both relationships reach the profile whose key points at the user.
        let d = ok(
            db,
            r#"mutation {
                a: insert_users_one(object: {id: 10, org_id: 1, name: "dan", profile: {data: {bio: "first"}}}) { name profile { bio } }
                b: insert_users_one(object: {id: 11, org_id: 1, name: "eve", bio_row: {data: {bio: "second"}}}) { name bio_row { bio } profile { bio } }
            }"#,
            json!(null),
        )
        .await;
        assert_eq!(
            d,
            json!({
                "a": {"name": "dan", "profile": {"bio": "first"}},
                "b": {"name": "eve", "bio_row": {"bio": "second"}, "profile": {"bio": "second"}}
            }),
            "{db:?}"
        );
        let d = ok(
            db,
            "{ profiles(order_by: {user_id: asc}) { user_id bio } }",
            json!(null),
        )
        .await;
        assert_eq!(
            d["profiles"],
            json!([{"user_id": 10, "bio": "first"}, {"user_id": 11, "bio": "second"}]),
            "{db:?}"
        );
        ok(
            db,
            "mutation { delete_profiles(where: {}) { affected_rows } delete_users(where: {id: {_gte: 10}}) { affected_rows } }",
            json!(null),
        )
        .await;
    }
}

#[tokio::test]
async fn a_numeric_string_offset_is_coerced_as_hasura_does() {
    let _g = serial().await;
    for db in BOTH {
        let d = ok(
            db,
            r#"{ venues(order_by: {id: asc}, offset: "1", limit: 1) { id } events(order_by: {id: asc}, offset: " 2 ") { id } }"#,
            json!(null),
        )
        .await;
        assert_eq!(
            d,
            json!({"venues": [{"id": 2}], "events": [{"id": 3}]}),
            "{db:?}"
        );
        let (_, v) = post(db, r#"{ venues(offset: "one") { id } }"#, json!(null)).await;
        assert_eq!(
            v["errors"][0]["extensions"]["code"], "validation-failed",
            "{db:?}: {v}"
        );
    }
}
