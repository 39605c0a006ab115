//! The metadata API's functions, computed fields, inherited roles, API limits,
//! query collections and allow list (issue 31), each kept and served at once, and
//! refused with Hasura's codes. Functions on PostgreSQL; the rest on both backends.

use crate::metadata_api::{authors_database, exported, metadata, query_as, store_options};
use crate::{Db, ADMIN_SECRET, BOTH};
use serde_json::json;

const ADMIN: [(&str, &str); 1] = [("x-hasura-admin-secret", ADMIN_SECRET)];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn functions_and_computed_fields_change_through_the_api() {
    let url = authors_database("metadata_functions", Db::Postgres);
    let server = grafton_server::start(&store_options(url))
        .await
        .expect("starts");
    let base = format!("http://{}", server.addr);
    let steps = json!({"type": "bulk", "args": [
        {"type": "pg_track_function", "args": {"function": {"schema": "public", "name": "search_authors"}}},
        {"type": "pg_add_computed_field", "args": {"table": "authors", "name": "label",
            "definition": {"function": "author_label"}}},
        {"type": "pg_create_select_permission", "args": {"table": "authors", "role": "user",
            "permission": {"columns": ["id"], "computed_fields": ["label"], "filter": {}}}},
        {"type": "pg_create_function_permission", "args": {"function": "search_authors", "role": "user"}},
    ]});
    let (status, body) = metadata(&base, steps).await;
    assert_eq!(status, 200, "{body}");
    let found = query_as(
        &base,
        &ADMIN,
        r#"{ search_authors(args: {q: "ad"}) { id label } }"#,
    )
    .await;
    assert_eq!(
        found["data"],
        json!({"search_authors": [{"id": 1, "label": "Ada <ada@example.com>"}]}),
        "{found}"
    );

    let refused = [
        (
            json!({"type": "pg_track_function", "args": {"function": "search_authors"}}),
            "already-tracked",
        ),
        (
            json!({"type": "pg_track_function", "args": {"function": "no_such_function"}}),
            "invalid-configuration",
        ),
        (
            json!({"type": "pg_create_function_permission", "args": {"function": "search_authors", "role": "user"}}),
            "already-exists",
        ),
        (
            json!({"type": "pg_drop_computed_field", "args": {"table": "authors", "name": "nope"}}),
            "not-exists",
        ),
        // The role's permission reads the computed field.
        (
            json!({"type": "pg_drop_computed_field", "args": {"table": "authors", "name": "label"}}),
            "dependency-error",
        ),
        (
            json!({"type": "pg_untrack_function", "args": {"function": "nope"}}),
            "not-exists",
        ),
    ];
    for (body, code) in refused {
        let (status, answer) = metadata(&base, body.clone()).await;
        assert_eq!(
            (status, answer["code"].as_str()),
            (400, Some(code)),
            "{body} → {answer}"
        );
    }
    let (status, body) = metadata(
        &base,
        json!({"type": "pg_drop_computed_field",
        "args": {"table": "authors", "name": "label", "cascade": true}}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = metadata(
        &base,
        json!({"type": "pg_untrack_function", "args": {"function": "search_authors"}}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (_, doc) = exported(&base).await;
    assert!(
        doc["sources"][0]
            .get("functions")
            .is_none_or(|f| f == &json!([])),
        "{doc}"
    );
    let gone = query_as(
        &base,
        &ADMIN,
        r#"{ search_authors(args: {q: "a"}) { id } }"#,
    )
    .await;
    assert!(gone["errors"].is_array(), "{gone}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn roles_limits_collections_and_the_allow_list_change_through_the_api() {
    for db in BOTH {
        let url = authors_database("metadata_project", db);
        let server = grafton_server::start(&store_options(url))
            .await
            .expect("starts");
        let base = format!("http://{}", server.addr);
        let steps = json!({"type": "bulk", "args": [
            {"type": "pg_create_select_permission", "args": {"table": "authors", "role": "reader",
                "permission": {"columns": ["id"], "filter": {}}}},
            {"type": "pg_create_select_permission", "args": {"table": "articles", "role": "writer",
                "permission": {"columns": ["id"], "filter": {}}}},
            {"type": "add_inherited_role", "args": {"role_name": "staff", "role_set": ["reader", "writer"]}},
            {"type": "set_api_limits", "args": {"depth_limit": {"global": 2}}},
            {"type": "create_query_collection", "args": {"name": "allowed",
                "definition": {"queries": [{"name": "ids", "query": "query ids { authors { id } }"}]}}},
            {"type": "add_collection_to_allowlist", "args": {"collection": "allowed"}},
        ]});
        let (status, body) = metadata(&base, steps).await;
        assert_eq!(status, 200, "{db:?}: {body}");
        let staff = [
            ("x-hasura-admin-secret", ADMIN_SECRET),
            ("x-hasura-role", "staff"),
        ];
        let allowed = query_as(&base, &staff, "query ids { authors { id } }").await;
        assert_eq!(
            allowed["data"]["authors"].as_array().map(Vec::len),
            Some(2),
            "{db:?}: {allowed}"
        );
        let not_listed = query_as(&base, &staff, "{ articles { id } }").await;
        assert!(
            not_listed["errors"].is_array(),
            "{db:?}: the allow list let it through: {not_listed}"
        );
        let (_, doc) = exported(&base).await;
        assert_eq!(
            doc["api_limits"],
            json!({"depth_limit": {"global": 2}}),
            "{db:?}"
        );

        let (status, body) = metadata(
            &base,
            json!({"type": "add_collection_to_allowlist", "args": {"collection": "allowed"}}),
        )
        .await;
        assert_eq!(status, 200, "{db:?}: {body}");
        assert!(
            body["message"]
                .as_str()
                .unwrap_or("")
                .contains("already exists in the allowlist"),
            "{db:?}: {body}"
        );
        let refused = [
            (
                json!({"type": "drop_query_collection", "args": {"collection": "allowed", "cascade": false}}),
                "dependency-error",
            ),
            (
                json!({"type": "create_query_collection", "args": {"name": "allowed", "definition": {"queries": []}}}),
                "already-exists",
            ),
            (
                json!({"type": "add_query_to_collection", "args": {"collection_name": "allowed", "query_name": "ids", "query": "{ authors { id } }"}}),
                "already-exists",
            ),
            (
                json!({"type": "add_query_to_collection", "args": {"collection_name": "allowed", "query_name": "bad", "query": "{ authors {"}}),
                "parse-failed",
            ),
            (
                json!({"type": "add_collection_to_allowlist", "args": {"collection": "allowed", "scope": {"global": false, "roles": []}}}),
                "parse-failed",
            ),
            (
                json!({"type": "drop_inherited_role", "args": {"role_name": "nope"}}),
                "not-exists",
            ),
            (
                json!({"type": "add_inherited_role", "args": {"role_name": "loop", "role_set": ["loop"]}}),
                "invalid-params",
            ),
            (
                json!({"type": "set_api_limits", "args": {"depth_limit": {"glob": 1}}}),
                "parse-failed",
            ),
        ];
        for (body, code) in refused {
            let (status, answer) = metadata(&base, body.clone()).await;
            assert_eq!(
                (status, answer["code"].as_str()),
                (400, Some(code)),
                "{db:?}: {body} → {answer}"
            );
        }
        let steps = json!({"type": "bulk", "args": [
            {"type": "add_query_to_collection", "args": {"collection_name": "allowed", "query_name": "articles", "query": "{ articles { id } }"}},
            {"type": "remove_api_limits", "args": {}},
        ]});
        let (status, body) = metadata(&base, steps).await;
        assert_eq!(status, 200, "{db:?}: {body}");
        let listed_now = query_as(&base, &staff, "{ articles { id } }").await;
        assert_eq!(
            listed_now["data"]["articles"].as_array().map(Vec::len),
            Some(3),
            "{db:?}: {listed_now}"
        );
        let (status, body) = metadata(&base, json!({"type": "drop_query_collection", "args": {"collection": "allowed", "cascade": true}})).await;
        assert_eq!(status, 200, "{db:?}: {body}");
        let (_, doc) = exported(&base).await;
        assert!(
            doc.get("allowlist").is_none_or(|a| a == &json!([])),
            "{db:?}: {doc}"
        );
        assert!(doc.get("api_limits").is_none(), "{db:?}: {doc}");
    }
}

/// The commands that set one thing: a table's names and enum flag, comments, an
/// allow-list entry's scope; each kept as Hasura keeps it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn setters_change_one_thing_each() {
    let url = authors_database("metadata_setters", Db::Sqlite);
    let server = grafton_server::start(&store_options(url))
        .await
        .expect("starts");
    let base = format!("http://{}", server.addr);
    let steps = json!({"type": "bulk", "args": [
        {"type": "pg_set_table_customization", "args": {"table": "authors",
            "configuration": {"custom_name": "writers", "column_config": {"name": {"custom_name": "fullName"}}}}},
        // The relationship is there already: the empty store tracks every foreign key.
        {"type": "pg_set_relationship_comment", "args": {"table": "articles", "name": "author", "comment": "who wrote it"}},
        {"type": "pg_create_select_permission", "args": {"table": "articles", "role": "user",
            "permission": {"columns": ["id"], "filter": {}}}},
        {"type": "pg_set_permission_comment", "args": {"table": "articles", "role": "user",
            "permission": "select", "comment": "everyone's"}},
        {"type": "create_query_collection", "args": {"name": "c",
            "definition": {"queries": [{"name": "q", "query": "{ articles { id } }"}]}}},
        {"type": "add_collection_to_allowlist", "args": {"collection": "c"}},
        {"type": "update_scope_of_collection_in_allowlist", "args": {"collection": "c",
            "scope": {"global": false, "roles": ["user"]}}},
    ]});
    let (status, body) = metadata(&base, steps).await;
    assert_eq!(status, 200, "{body}");
    let renamed = query_as(
        &base,
        &ADMIN,
        "{ writers(order_by: {id: asc}) { fullName } }",
    )
    .await;
    assert_eq!(
        renamed["data"]["writers"][0],
        json!({"fullName": "Ada"}),
        "{renamed}"
    );
    let (_, doc) = exported(&base).await;
    let tables = &doc["sources"][0]["tables"];
    let articles = (tables.as_array().into_iter().flatten())
        .find(|t| t["table"]["name"] == "articles")
        .expect("articles");
    assert_eq!(
        articles["object_relationships"][0]["comment"],
        "who wrote it"
    );
    assert_eq!(articles["select_permissions"][0]["comment"], "everyone's");
    assert_eq!(
        doc["allowlist"],
        json!([{"collection": "c", "scope": {"global": false, "roles": ["user"]}}])
    );
    // An enum flag on a table that is not an enum is refused by the build.
    let (status, body) = metadata(
        &base,
        json!({"type": "pg_set_table_is_enum",
        "args": {"table": "articles", "is_enum": true}}),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("invalid-configuration")),
        "{body}"
    );
}
