//! Roles Hasura accepts that are not "read and write": `counter` may count its
//! organisation's documents but read no column, `capped` reads one row per list yet
//! counts them all, and `writer` may insert, update and delete its own documents
//! without reading any.

use crate::*;
use serde_json::{json, Value};

const ALICE: (&str, &str) = ("1", "1");

async fn as_role(db: Db, role: &str, query: &str) -> Value {
    let (status, v) = post_as(db, role, ALICE, query, json!(null)).await;
    assert_eq!(status, reqwest::StatusCode::OK, "{db:?} {role}: {v}");
    v
}

fn code(v: &Value) -> &str {
    v["errors"][0]["extensions"]["code"].as_str().unwrap_or("")
}

#[tokio::test]
async fn a_count_only_role_counts_and_reads_nothing() {
    let _g = serial().await;
    for db in BOTH {
        let v = as_role(
            db,
            "counter",
            "{ documents_aggregate { aggregate { count } } }",
        )
        .await;
        assert_eq!(
            v["data"]["documents_aggregate"]["aggregate"]["count"], 3,
            "{db:?}: {v}"
        );
        let v = as_role(
            db,
            "counter",
            "{ documents_aggregate(where: {_not: {_and: []}}) { aggregate { count(distinct: true) } } }",
        )
        .await;
        assert_eq!(
            v["data"]["documents_aggregate"]["aggregate"]["count"], 0,
            "{db:?}: {v}"
        );
        for query in [
            "{ documents { id } }",
            "{ documents_by_pk(id: 1) { id } }",
            "{ documents_aggregate { nodes { id } } }",
            "{ documents_aggregate(where: {id: {_eq: 1}}) { aggregate { count } } }",
            "{ documents_aggregate { aggregate { max { id } } } }",
        ] {
            let v = as_role(db, "counter", query).await;
            assert_eq!(code(&v), "validation-failed", "{db:?}: {query}: {v}");
        }
    }
}

#[tokio::test]
async fn a_role_limit_caps_rows_not_counts() {
    let _g = serial().await;
    for db in BOTH {
        let v = as_role(
            db,
            "capped",
            "{ documents(order_by: {id: asc}) { id } documents_aggregate { aggregate { count } } }",
        )
        .await;
        assert_eq!(
            v["data"],
            json!({"documents": [{"id": 1}], "documents_aggregate": {"aggregate": {"count": 3}}}),
            "{db:?}: {v}"
        );
        // With nodes: the nodes are capped, the count is not.
        let v = as_role(
            db,
            "capped",
            "{ documents_aggregate(order_by: {id: desc}) { aggregate { count } nodes { id } __typename } }",
        )
        .await;
        assert_eq!(
            v["data"]["documents_aggregate"],
            json!({"aggregate": {"count": 3}, "nodes": [{"id": 4}], "__typename": "documents_aggregate"}),
            "{db:?}: {v}"
        );
        // The request's own limit still applies to the aggregate.
        let v = as_role(
            db,
            "capped",
            "{ documents_aggregate(limit: 2) { aggregate { count } nodes { id } } }",
        )
        .await;
        assert_eq!(
            v["data"]["documents_aggregate"]["aggregate"]["count"], 2,
            "{db:?}: {v}"
        );
        assert_eq!(
            v["data"]["documents_aggregate"]["nodes"]
                .as_array()
                .map(Vec::len),
            Some(1),
            "{db:?}: {v}"
        );
    }
}

#[tokio::test]
async fn a_write_only_role_writes_and_reads_nothing() {
    let _g = serial().await;
    for db in BOTH {
        let v = as_role(db, "writer", "{ no_queries_available }").await;
        assert!(v.get("errors").is_none(), "{db:?}: {v}");
        for query in [
            "{ documents { id } }",
            r#"mutation { insert_documents(objects: [{title: "w"}]) { returning { id } } }"#,
            r#"mutation { insert_documents_one(object: {title: "w"}) { id } }"#,
            r#"mutation { delete_documents(where: {id: {_eq: 1}}) { affected_rows } }"#,
            r#"mutation { delete_documents_by_pk(id: 1) { id } }"#,
        ] {
            let v = as_role(db, "writer", query).await;
            assert_eq!(code(&v), "validation-failed", "{db:?}: {query}: {v}");
        }
        let v = as_role(
            db,
            "writer",
            r#"mutation { insert_documents(objects: [{title: "written blind", body: "x"}, {title: "written blind"}]) { affected_rows } }"#,
        )
        .await;
        assert_eq!(
            v["data"]["insert_documents"]["affected_rows"], 2,
            "{db:?}: {v}"
        );
        let d = ok(
            db,
            r#"{ documents(where: {title: {_eq: "written blind"}}) { org_id owner_id } }"#,
            json!(null),
        )
        .await;
        assert_eq!(
            d["documents"],
            json!([{"org_id": 1, "owner_id": 1}, {"org_id": 1, "owner_id": 1}]),
            "{db:?}: presets apply"
        );
        // Updates and deletes reach only its own rows (where: only combinators).
        let v = as_role(
            db,
            "writer",
            r#"mutation { update_documents(where: {}, _set: {body: "blind"}) { affected_rows } }"#,
        )
        .await;
        // Alice owns documents 1, 4, 5 and the two new ones.
        assert_eq!(
            v["data"]["update_documents"]["affected_rows"], 5,
            "{db:?}: {v}"
        );
        let v = as_role(
            db,
            "writer",
            r#"mutation { delete_documents(where: {_not: {_or: []}}) { affected_rows } }"#,
        )
        .await;
        assert_eq!(
            v["data"]["delete_documents"]["affected_rows"], 5,
            "{db:?}: {v}"
        );
        let d = ok(
            db,
            "{ documents_aggregate { aggregate { count } } }",
            json!(null),
        )
        .await;
        assert_eq!(
            d["documents_aggregate"]["aggregate"]["count"], 2,
            "{db:?}: Bob's and Carol's documents remain"
        );
        // Restore the fixture's rows.
        ok(
            db,
            r#"mutation { insert_documents(objects: [
                {id: 1, org_id: 1, owner_id: 1, title: "acme plan", body: "a", secret: "s1"},
                {id: 4, org_id: 1, owner_id: 1, title: "acme extra", body: "d", secret: "s4"},
                {id: 5, org_id: 2, owner_id: 1, title: "cross", body: "e", secret: "s5"}]) { affected_rows } }"#,
            json!(null),
        )
        .await;
    }
}

#[tokio::test]
async fn backend_only_writes_need_the_admin_secret_and_the_header() {
    let _g = serial().await;
    const SECRET: &str = "backend-only-secret";
    for (db, database_url) in [
        (Db::Sqlite, setup_sqlite()),
        (Db::Postgres, setup_postgres()),
    ] {
        let config =
            grafton_server::load_config(&config_dir().join("grafton.yaml")).expect("config");
        let base = common::start_server(grafton_server::ServeOptions {
            database_url,
            port: 0,
            config,
            auth: grafton_auth::AuthConfig {
                admin_secret: Some(SECRET.into()),
                jwt: Some(json!({"type": "HS256", "key": JWT_KEY}).to_string()),
                unauthorized_role: None,
                ..Default::default()
            },
            ..Default::default()
        });
        let url = format!("{base}/v1/graphql");
        let insert = json!({"query": r#"mutation { insert_documents(objects: [{title: "from the backend", org_id: 2}]) { affected_rows } }"#});
        let call = |headers: Vec<(&'static str, String)>| {
            let (url, insert) = (url.clone(), insert.clone());
            async move {
                let h: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
                common::post_with_headers(&url, &h, &insert).await.1
            }
        };
        let role = ("x-hasura-role", "service".to_owned());
        let header = ("x-hasura-use-backend-only-permissions", "true".to_owned());
        // A JWT cannot claim the backend's rights, whatever its claims say.
        let claims = json!({
            "exp": 4_000_000_000u64,
            "https://hasura.io/jwt/claims": {
                "x-hasura-allowed-roles": ["service"],
                "x-hasura-default-role": "service",
                "x-hasura-use-backend-only-permissions": "true"
            }
        });
        let token = sign(&claims);
        let before = checksum(db);
        for headers in [
            vec![("x-hasura-admin-secret", SECRET.to_owned()), role.clone()],
            vec![("authorization", format!("Bearer {token}")), header.clone()],
        ] {
            let v = call(headers).await;
            assert_eq!(code(&v), "validation-failed", "{db:?}: {v}");
        }
        assert_eq!(checksum(db), before, "{db:?}");
        // The same role still reads as any client.
        let (_, v, _) = common::post_with_headers(
            &url,
            &[
                ("x-hasura-admin-secret", SECRET),
                ("x-hasura-role", "service"),
            ],
            &json!({"query": "{ documents(where: {id: {_eq: 3}}) { title } }"}),
        )
        .await;
        assert_eq!(
            v["data"]["documents"],
            json!([{"title": "globex plan"}]),
            "{db:?}: {v}"
        );
        let v = call(vec![
            ("x-hasura-admin-secret", SECRET.to_owned()),
            role.clone(),
            header.clone(),
        ])
        .await;
        assert_eq!(
            v["data"]["insert_documents"]["affected_rows"], 1,
            "{db:?}: {v}"
        );
        ok(
            db,
            r#"mutation { delete_documents(where: {title: {_eq: "from the backend"}}) { affected_rows } }"#,
            json!(null),
        )
        .await;
    }
}

#[tokio::test]
async fn query_root_fields_limit_the_root_not_relationships() {
    let _g = serial().await;
    for db in BOTH {
        for query in ["{ documents { id } }", "{ documents_by_pk(id: 1) { id } }"] {
            let v = as_role(db, "browser", query).await;
            assert_eq!(code(&v), "validation-failed", "{db:?}: {query}: {v}");
        }
        let v = as_role(
            db,
            "browser",
            "{ documents_aggregate { aggregate { count } } organisations { documents(order_by: {id: asc}) { id } } }",
        )
        .await;
        assert_eq!(
            v["data"],
            json!({
                "documents_aggregate": {"aggregate": {"count": 3}},
                "organisations": [{"documents": [{"id": 1}, {"id": 2}, {"id": 4}]}]
            }),
            "{db:?}: {v}"
        );
    }
}

#[test]
fn unsupported_permission_keys_are_reported_never_served() {
    let dir = std::env::temp_dir().join(format!("grafton-validate-input-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("tables.yaml");
    std::fs::write(
        &path,
        r#"- table: {schema: public, name: documents}
  insert_permissions:
    - role: user
      permission:
        columns: [title]
        check: {}
        validate_input: {type: http, definition: {url: "http://127.0.0.1:9/validate"}}
"#,
    )
    .expect("metadata");
    // Left out whole and reported (inconsistent metadata), never served without
    // its validation.
    let config = grafton_schema::hasura::load(&path).expect("metadata loads");
    assert!(!config.tables["documents"].permissions.contains_key("user"));
    let reported: Vec<String> = (config.left_out.iter())
        .map(|i| format!("{}: {}", i.describe(), i.reason))
        .collect();
    assert_eq!(
        reported,
        ["insert permission of role 'user' on documents: its validate_input (an input validation webhook) is not served by Grafton yet"]
    );
    let config: grafton_schema::Config = serde_norway::from_str(
        "tables:\n  documents:\n    permissions:\n      r:\n        select: {columns: [id], query_root_fields: [select, selekt]}\n",
    )
    .expect("config parses");
    let message = engine_error(setup_sqlite(), config);
    assert!(message.contains("'selekt'"), "{message}");
}
