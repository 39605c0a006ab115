//! Roles on the multi-tenant fixture: every path that reads or writes rows must keep
//! a role inside its organisation and away from hidden columns. Alice (user 1) and
//! Bob (user 2) are in Acme (org 1); Carol (user 3) in Globex (org 2). Document 5
//! belongs to Globex but is owned by Alice: a cross-tenant row.

use crate::*;
use serde_json::{json, Value};

const ALICE: (&str, &str) = ("1", "1");

/// The same rules twice: `user` in the `_eq` spelling, `user_short` in Hasura's
/// shorthand (`{owner_id: X-Hasura-User-Id}`) and `$` spellings. Every test of a
/// user's reach runs as both, so neither spelling may read or write more.
pub const USER_ROLES: [&str; 2] = ["user", "user_short"];

async fn as_user(db: Db, role: &str, query: &str) -> Value {
    let (status, v) = post_as(db, role, ALICE, query, json!(null)).await;
    assert_eq!(status, reqwest::StatusCode::OK, "{db:?} {role}: {v}");
    v
}

async fn user_data(db: Db, role: &str, query: &str) -> Value {
    let v = as_user(db, role, query).await;
    assert!(v.get("errors").is_none(), "{db:?} {role}: {query}: {v}");
    v["data"].clone()
}

async fn user_invalid(db: Db, role: &str, query: &str) {
    let v = as_user(db, role, query).await;
    assert_eq!(
        v["errors"][0]["extensions"]["code"], "validation-failed",
        "{db:?} {role}: {query}: {v}"
    );
}

fn titles(v: &Value) -> Vec<String> {
    let mut t: Vec<String> = v
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| d["title"].as_str().map(str::to_owned))
        .collect();
    t.sort();
    t
}

#[tokio::test]
async fn lists_by_pk_and_limits_stay_in_the_tenant() {
    let _g = serial().await;
    for (db, role) in BOTH.into_iter().flat_map(|db| USER_ROLES.map(|r| (db, r))) {
        let d = user_data(db, role, "{ documents(order_by: {id: asc}) { id title } }").await;
        // Three Acme documents, but the role's limit is 2.
        assert_eq!(
            d["documents"],
            json!([{"id": 1, "title": "acme plan"}, {"id": 2, "title": "bob notes"}]),
            "{db:?}"
        );
        let d = user_data(
            db,
            role,
            "{ documents(limit: 10, offset: 1, order_by: {id: asc}) { id } }",
        )
        .await;
        assert_eq!(d["documents"], json!([{"id": 2}, {"id": 4}]), "{db:?}");
        let d = user_data(db, role, "{ a: documents_by_pk(id: 3) { id } b: documents_by_pk(id: 5) { id } c: documents_by_pk(id: 4) { id } }").await;
        assert_eq!(d, json!({"a": null, "b": null, "c": {"id": 4}}), "{db:?}");
        // Admin (no role) sees everything.
        let d = ok(
            db,
            "{ documents_aggregate { aggregate { count } } }",
            json!(null),
        )
        .await;
        assert_eq!(d["documents_aggregate"]["aggregate"]["count"], 5, "{db:?}");
    }
}

#[tokio::test]
async fn hidden_columns_do_not_exist_for_the_role() {
    let _g = serial().await;
    for (db, role) in BOTH.into_iter().flat_map(|db| USER_ROLES.map(|r| (db, r))) {
        for query in [
            "{ documents { secret } }",
            r#"{ documents(where: {secret: {_eq: "s1"}}) { id } }"#,
            "{ documents(order_by: {secret: asc}) { id } }",
            "{ users { email } }",
            r#"{ organisations { users(where: {email: {_like: "%"}}) { id } } }"#,
            "{ documents_aggregate { aggregate { count } } }",
            "{ users(order_by: {documents_aggregate: {count: desc}}) { id } }",
            "{ venues { id } }",
        ] {
            user_invalid(db, role, query).await;
        }
        // Introspection agrees.
        let d = user_data(
            db,
            role,
            r#"{ __type(name: "documents") { fields { name } } }"#,
        )
        .await;
        let fields: Vec<&str> = d["__type"]["fields"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f["name"].as_str())
            .collect();
        assert!(
            fields.contains(&"title") && !fields.contains(&"secret"),
            "{db:?}: {fields:?}"
        );
        let d = user_data(
            db,
            role,
            "{ __schema { mutationType { fields { name } } } }",
        )
        .await;
        let roots: Vec<&str> = d["__schema"]["mutationType"]["fields"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f["name"].as_str())
            .collect();
        assert!(
            roots.contains(&"insert_documents_one") && roots.contains(&"delete_documents"),
            "{db:?}: {roots:?}"
        );
        assert!(
            !roots
                .iter()
                .any(|r| r.contains("organisations") || r.contains("venues")),
            "{db:?}: {roots:?}"
        );
        // The manager reads every column and aggregates, still within its organisation.
        let (_, v) = post_as(
            db,
            "manager",
            ALICE,
            "{ documents_aggregate { aggregate { count } nodes { secret } } }",
            json!(null),
        )
        .await;
        assert_eq!(
            v["data"]["documents_aggregate"]["aggregate"]["count"], 3,
            "{db:?}: {v}"
        );
    }
}

#[tokio::test]
async fn relationships_and_filters_through_them_respect_rules() {
    let _g = serial().await;
    for (db, role) in BOTH.into_iter().flat_map(|db| USER_ROLES.map(|r| (db, r))) {
        // Down: an organisation's documents; up: a document's owner.
        let d = user_data(db, role, "{ organisations { name documents { title } } }").await;
        assert_eq!(
            d["organisations"].as_array().map(Vec::len),
            Some(1),
            "{db:?}: {d}"
        );
        // Three Acme documents; the role's limit (2) applies per parent, in key order.
        assert_eq!(
            titles(&d["organisations"][0]["documents"]),
            ["acme plan", "bob notes"],
            "{db:?}"
        );
        // Alice owns document 5 in Globex: following users → documents must not reach it.
        let d = user_data(
            db,
            role,
            "{ users(where: {id: {_eq: 1}}) { documents { title } } }",
        )
        .await;
        assert_eq!(
            titles(&d["users"][0]["documents"]),
            ["acme extra", "acme plan"],
            "{db:?}"
        );
        let d = user_data(
            db,
            role,
            r#"{ users(where: {documents: {title: {_eq: "cross"}}}) { name } }"#,
        )
        .await;
        assert_eq!(
            d["users"],
            json!([]),
            "{db:?}: a filter matched a row the role cannot read"
        );
        let d = ok(
            db,
            r#"{ users(where: {documents: {title: {_eq: "cross"}}}) { name } }"#,
            json!(null),
        )
        .await;
        assert_eq!(d["users"], json!([{"name": "alice"}]), "{db:?}: admin");
        // Sorting by a related row the role cannot see treats it as absent.
        let d = user_data(
            db,
            role,
            "{ documents(order_by: [{owner: {name: desc}}, {id: asc}]) { id owner { name } } }",
        )
        .await;
        assert_eq!(
            d["documents"],
            json!([{"id": 2, "owner": {"name": "bob"}}, {"id": 1, "owner": {"name": "alice"}}]),
            "{db:?}"
        );
    }
}

#[tokio::test]
async fn inserts_get_presets_and_checks() {
    let _g = serial().await;
    for (db, role) in BOTH.into_iter().flat_map(|db| USER_ROLES.map(|r| (db, r))) {
        let d = user_data(
            db,
            role,
            r#"mutation { insert_documents_one(object: {title: "alice new", body: "x"}) { title org_id owner_id } }"#,
        )
        .await;
        assert_eq!(
            d["insert_documents_one"],
            json!({"title": "alice new", "org_id": 1, "owner_id": 1}),
            "{db:?}"
        );
        // Presets cannot be overridden: the columns are not in the role's input type.
        user_invalid(
            db,
            role,
            r#"mutation { insert_documents_one(object: {title: "t", org_id: 2}) { id } }"#,
        )
        .await;
        user_invalid(
            db,
            role,
            r#"mutation { insert_documents_one(object: {title: "t", secret: "x"}) { id } }"#,
        )
        .await;
        // Nested inserts only through relationships to tables the role may insert into.
        user_invalid(db, role, r#"mutation { insert_documents_one(object: {title: "t", owner: {data: {id: 9, org_id: 1, name: "x"}}}) { id } }"#).await;
        // A failing check rolls everything back, earlier rows of the batch included.
        let before = checksum(db);
        let (_, v) = post_as(
            db,
            role,
            ALICE,
            r#"mutation { insert_documents(objects: [{title: "fine"}, {title: "forbidden stuff"}]) { affected_rows } }"#,
            json!(null),
        )
        .await;
        assert_eq!(
            v["errors"][0]["extensions"]["code"], "permission-error",
            "{db:?}: {v}"
        );
        assert!(v["data"].is_null(), "{db:?}: {v}");
        assert_eq!(checksum(db), before, "{db:?}");
        ok(db, r#"mutation { delete_documents(where: {title: {_eq: "alice new"}}) { affected_rows } }"#, json!(null)).await;
    }
}

#[tokio::test]
async fn updates_and_deletes_only_reach_allowed_rows() {
    let _g = serial().await;
    for (db, role) in BOTH.into_iter().flat_map(|db| USER_ROLES.map(|r| (db, r))) {
        // Bob's document: filtered out, nothing happens.
        let d = user_data(db, role, r#"mutation { update_documents(where: {id: {_eq: 2}}, _set: {title: "hacked"}) { affected_rows } }"#).await;
        assert_eq!(d["update_documents"]["affected_rows"], 0, "{db:?}");
        let d = user_data(db, role, r#"mutation { update_documents_by_pk(pk_columns: {id: 1}, _set: {body: "edited"}) { id body } }"#).await;
        assert_eq!(
            d["update_documents_by_pk"],
            json!({"id": 1, "body": "edited"}),
            "{db:?}"
        );
        // Alice's cross-tenant document: hers, but outside the rows the role may read,
        // so `returning` cannot show it.
        let d = user_data(db, role, r#"mutation { update_documents(where: {id: {_eq: 5}}, _set: {body: "e2"}) { affected_rows returning { id } } }"#).await;
        assert_eq!(
            d["update_documents"],
            json!({"affected_rows": 1, "returning": []}),
            "{db:?}"
        );
        // The check holds after the update.
        let before = checksum(db);
        let (_, v) = post_as(db, role, ALICE, r#"mutation { update_documents_by_pk(pk_columns: {id: 1}, _set: {title: "forbidden"}) { id } }"#, json!(null)).await;
        assert_eq!(
            v["errors"][0]["extensions"]["code"], "permission-error",
            "{db:?}: {v}"
        );
        assert_eq!(checksum(db), before, "{db:?}");
        user_invalid(
            db,
            role,
            r#"mutation { update_documents(where: {}, _set: {secret: "x"}) { affected_rows } }"#,
        )
        .await;
        // Upsert: the conflict branch is an update, so Bob's row is left alone.
        let d = user_data(db, role, r#"mutation { insert_documents(objects: [{id: 2, title: "takeover"}], on_conflict: {constraint: documents_pkey, update_columns: [title]}) { affected_rows } }"#).await;
        assert_eq!(d["insert_documents"]["affected_rows"], 0, "{db:?}");
        let d = ok(db, "{ documents_by_pk(id: 2) { title } }", json!(null)).await;
        assert_eq!(d["documents_by_pk"]["title"], "bob notes", "{db:?}");
        // Deletes: Bob's is filtered out.
        let d = user_data(
            db,
            role,
            "mutation { delete_documents(where: {id: {_in: [2, 3]}}) { affected_rows } }",
        )
        .await;
        assert_eq!(d["delete_documents"]["affected_rows"], 0, "{db:?}");
        // The manager updates the secret column across its organisation only.
        let (_, v) = post_as(db, "manager", ALICE, r#"mutation { update_documents(where: {}, _set: {secret: "rotated"}) { affected_rows returning { id } } }"#, json!(null)).await;
        assert_eq!(
            v["data"]["update_documents"]["affected_rows"], 3,
            "{db:?}: {v}"
        );
        let d = ok(
            db,
            "{ documents(where: {secret: {_eq: \"rotated\"}}) { id } }",
            json!(null),
        )
        .await;
        assert_eq!(d["documents"].as_array().map(Vec::len), Some(3), "{db:?}");
        for (id, body, secret) in [
            (1, "a", "s1"),
            (2, "b", "s2"),
            (4, "d", "s4"),
            (5, "e", "s5"),
        ] {
            ok(db, "mutation ($id: Int!, $b: String, $s: String) { update_documents_by_pk(pk_columns: {id: $id}, _set: {body: $b, secret: $s}) { id } }", json!({"id": id, "b": body, "s": secret})).await;
        }
    }
}

#[tokio::test]
async fn unknown_roles_and_missing_session_variables_are_refused() {
    let _g = serial().await;
    for db in BOTH {
        // A role named by no permission has Hasura's empty schema: 200, validation-failed.
        let (status, v) = post_as(db, "nobody", ALICE, "{ documents { id } }", json!(null)).await;
        assert_eq!(status, reqwest::StatusCode::OK, "{db:?}: {v}");
        assert_eq!(
            v["errors"][0]["extensions"]["code"], "validation-failed",
            "{db:?}: {v}"
        );
        let (_, v) = post_as(db, "nobody", ALICE, "{ no_queries_available }", json!(null)).await;
        assert!(v.get("errors").is_none(), "{db:?}: {v}");
        let (_, v) = post_as(
            db,
            "nobody",
            ALICE,
            "mutation { delete_documents(where: {}) { affected_rows } }",
            json!(null),
        )
        .await;
        assert_eq!(
            v["errors"][0]["extensions"]["code"], "validation-failed",
            "{db:?}: {v}"
        );
        let body = json!({"query": "{ documents { id } }"});
        let (_, v, _) =
            common::post_with_headers(url(db), &[("x-hasura-role", "user")], &body).await;
        assert_eq!(
            v["errors"][0]["extensions"]["code"], "access-denied",
            "{db:?}: {v}"
        );
        assert!(
            v["errors"][0]["message"]
                .as_str()
                .unwrap_or("")
                .contains("x-hasura-org-id"),
            "{db:?}: {v}"
        );
        // Mutations too, before anything is written.
        let before = checksum(db);
        let body =
            json!({"query": r#"mutation { delete_documents(where: {}) { affected_rows } }"#});
        let (_, v, _) = common::post_with_headers(
            url(db),
            &[("x-hasura-role", "user"), ("x-hasura-org-id", "1")],
            &body,
        )
        .await;
        assert_eq!(
            v["errors"][0]["extensions"]["code"], "access-denied",
            "{db:?}: {v}"
        );
        assert_eq!(checksum(db), before, "{db:?}");
    }
}

/// A Hasura metadata directory for the same tables: relationship names and a role.
fn hasura_metadata() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("grafton-hasura-{}", std::process::id()));
    let tables = dir.join("databases/default/tables");
    std::fs::create_dir_all(&tables).expect("metadata dir");
    std::fs::write(
        tables.join("tables.yaml"),
        "- \"!include public_documents.yaml\"\n- \"!include public_organisations.yaml\"\n",
    )
    .expect("tables.yaml");
    std::fs::write(
        tables.join("public_documents.yaml"),
        r#"table: {name: documents, schema: public}
object_relationships:
  - name: organisation
    using: {foreign_key_constraint_on: org_id}
select_permissions:
  - role: reader
    permission:
      columns: [id, title]
      filter: {organisation: {id: {_eq: X-Hasura-Org-Id}}}
      computed_fields: []
"#,
    )
    .expect("documents metadata");
    std::fs::write(
        tables.join("public_organisations.yaml"),
        r#"table: {name: organisations, schema: public}
array_relationships:
  - name: docs
    using:
      foreign_key_constraint_on: {column: org_id, table: {name: documents, schema: public}}
select_permissions:
  - role: reader
    permission: {columns: [id, name], filter: {id: {_eq: X-Hasura-Org-Id}}}
"#,
    )
    .expect("organisations metadata");
    dir
}

#[tokio::test]
async fn hasura_metadata_moves_over() {
    let _g = serial().await;
    let config = grafton_schema::hasura::load(&hasura_metadata()).expect("metadata loads");
    for (db, database_url) in [
        (Db::Sqlite, setup_sqlite()),
        (Db::Postgres, setup_postgres()),
    ] {
        let base = common::start_server(grafton_server::ServeOptions {
            database_url,
            port: 0,
            config: config.clone(),
            ..Default::default()
        });
        let body = json!({"query": "{ organisations { name docs(order_by: {id: asc}) { title } } documents(order_by: {id: asc}) { id organisation { name } } }"});
        let headers = [("x-hasura-role", "reader"), ("x-hasura-org-id", "1")];
        let (_, v, _) =
            common::post_with_headers(&format!("{base}/v1/graphql"), &headers, &body).await;
        assert_eq!(
            v["data"],
            json!({
                "organisations": [{"name": "Acme", "docs": [{"title": "acme plan"}, {"title": "bob notes"}, {"title": "acme extra"}]}],
                "documents": [{"id": 1, "organisation": {"name": "Acme"}}, {"id": 2, "organisation": {"name": "Acme"}}, {"id": 4, "organisation": {"name": "Acme"}}]
            }),
            "{db:?}: {v}"
        );
    }
}

const ADMIN_SECRET: &str = "admin-secret-for-tests";

/// An HS256 token with Hasura claims; `exp` relative to now, in seconds.
fn token(org: &str, user: &str, roles: &[&str], exp: i64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let claims = json!({
        "sub": user,
        "iat": now - 10,
        "exp": now + exp,
        "https://hasura.io/jwt/claims": {
            "x-hasura-allowed-roles": roles,
            "x-hasura-default-role": roles[0],
            "x-hasura-user-id": user,
            "x-hasura-org-id": org
        }
    });
    sign(&claims)
}

#[tokio::test]
async fn jwt_sessions_drive_the_rules_and_bad_credentials_never_reach_the_database() {
    let _g = serial().await;
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
                admin_secret: Some(ADMIN_SECRET.into()),
                jwt: Some(json!({"type": "HS256", "key": JWT_KEY}).to_string()),
                unauthorized_role: Some("anonymous".into()),
                ..Default::default()
            },
            ..Default::default()
        });
        let url = format!("{base}/v1/graphql");
        let call = |headers: Vec<(&'static str, String)>, query: &'static str| {
            let url = url.clone();
            async move {
                let h: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
                let (status, v, _) =
                    common::post_with_headers(&url, &h, &json!({"query": query})).await;
                (status, v)
            }
        };
        let bearer = |t: String| ("authorization", format!("Bearer {t}"));
        let alice = token("1", "1", &["user", "manager"], 600);
        // The token's claims are the session; headers cannot override them.
        let (_, v) = call(
            vec![bearer(alice.clone()), ("x-hasura-org-id", "2".into())],
            "{ documents { id } }",
        )
        .await;
        assert_eq!(
            v["data"]["documents"],
            json!([{"id": 1}, {"id": 2}]),
            "{db:?}: {v}"
        );
        let (_, v) = call(
            vec![bearer(alice.clone()), ("x-hasura-role", "manager".into())],
            "{ documents_aggregate { aggregate { count } } }",
        )
        .await;
        assert_eq!(
            v["data"]["documents_aggregate"]["aggregate"]["count"], 3,
            "{db:?}: {v}"
        );
        let carol = token("2", "3", &["user"], 600);
        let (_, v) = call(
            vec![bearer(carol)],
            "{ documents(order_by: {id: asc}) { id } }",
        )
        .await;
        assert_eq!(
            v["data"]["documents"],
            json!([{"id": 3}, {"id": 5}]),
            "{db:?}: {v}"
        );
        // A role outside the token's allowed roles.
        let (status, v) = call(
            vec![bearer(alice.clone()), ("x-hasura-role", "admin".into())],
            "{ documents { id } }",
        )
        .await;
        assert_eq!(
            (
                status.as_u16(),
                v["errors"][0]["extensions"]["code"].clone()
            ),
            (403, json!("access-denied")),
            "{db:?}: {v}"
        );
        // No credentials: the unauthorized role's schema.
        let (_, v) = call(vec![], "{ organisations(order_by: {name: asc}) { name } }").await;
        assert_eq!(
            v["data"]["organisations"],
            json!([{"name": "Acme"}, {"name": "Globex"}]),
            "{db:?}: {v}"
        );
        let (_, v) = call(vec![], "{ documents { id } }").await;
        assert_eq!(
            v["errors"][0]["extensions"]["code"], "validation-failed",
            "{db:?}: {v}"
        );
        // Rejected tokens: expired, tampered, unsigned.
        let expired = token("1", "1", &["user"], -600);
        let mut tampered = alice.clone();
        tampered.pop();
        tampered.push(if alice.ends_with('A') { 'B' } else { 'A' });
        let header = base64_url(r#"{"alg":"none","typ":"JWT"}"#);
        let payload = alice.split('.').nth(1).unwrap_or_default().to_owned();
        let unsigned = format!("{header}.{payload}.");
        for bad in [expired, tampered, unsigned, "not-a-token".to_owned()] {
            let before = checksum(db);
            let (status, v) = call(
                vec![bearer(bad.clone())],
                "mutation { delete_documents(where: {}) { affected_rows } }",
            )
            .await;
            assert_eq!(
                (
                    status.as_u16(),
                    v["errors"][0]["extensions"]["code"].clone()
                ),
                (401, json!("invalid-jwt")),
                "{db:?}: {bad}: {v}"
            );
            assert_eq!(checksum(db), before, "{db:?}");
        }
        // The admin secret: admin, and a wrong one is refused.
        let (_, v) = call(
            vec![("x-hasura-admin-secret", ADMIN_SECRET.into())],
            "{ documents_aggregate { aggregate { count } } }",
        )
        .await;
        assert_eq!(
            v["data"]["documents_aggregate"]["aggregate"]["count"], 5,
            "{db:?}: {v}"
        );
        let (status, v) = call(
            vec![("x-hasura-admin-secret", "wrong".into())],
            "{ documents { id } }",
        )
        .await;
        assert_eq!(
            (
                status.as_u16(),
                v["errors"][0]["extensions"]["code"].clone()
            ),
            (401, json!("access-denied")),
            "{db:?}: {v}"
        );
    }
}

fn base64_url(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text)
}

#[tokio::test]
async fn rules_keep_hasura_spelling_under_other_namings() {
    let _g = serial().await;
    let config = grafton_server::load_config(&config_dir().join("grafton.yaml")).expect("config");
    let base = common::start_server(grafton_server::ServeOptions {
        database_url: setup_sqlite(),
        port: 0,
        config,
        naming: Some(grafton_schema::Convention::GraphqlDefault),
        ..Default::default()
    });
    let body = json!({"query": "{ documents(orderBy: {id: ASC}) { id ownerId } }"});
    let headers = [
        ("x-hasura-role", "user"),
        ("x-hasura-org-id", "1"),
        ("x-hasura-user-id", "1"),
    ];
    let (_, v, _) = common::post_with_headers(&format!("{base}/v1/graphql"), &headers, &body).await;
    assert_eq!(
        v["data"]["documents"],
        json!([{"id": 1, "ownerId": 1}, {"id": 2, "ownerId": 2}]),
        "{v}"
    );
}
