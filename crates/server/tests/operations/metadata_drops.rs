//! Drops through the metadata API (issue 31): what a drop would leave dangling (a
//! relationship to an untracked table, a permission reading through a dropped
//! relationship) is a `dependency-error`, or with `cascade` dropped too; and
//! `drop_inconsistent_metadata` drops what is not served. On both backends.

use crate::metadata_api::{authors_database, exported, metadata, query_as, store_options};
use crate::{ADMIN_SECRET, BOTH};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drops_say_what_depends_on_them_and_cascade_takes_it() {
    for db in BOTH {
        let url = authors_database("metadata_drops", db);
        let server = grafton_server::start(&store_options(url))
            .await
            .expect("starts");
        let base = format!("http://{}", server.addr);
        let setup = json!({"type": "bulk", "args": [
            {"type": "clear_metadata", "args": {}},
            {"type": "pg_track_table", "args": {"table": "authors"}},
            {"type": "pg_track_table", "args": {"table": "articles"}},
            {"type": "pg_create_object_relationship", "args": {"table": "articles", "name": "author",
                "using": {"foreign_key_constraint_on": "author_id"}}},
            {"type": "pg_create_select_permission", "args": {"table": "articles", "role": "user",
                "permission": {"columns": ["id", "title"], "filter": {"author": {"name": {"_eq": "Ada"}}}}}},
            {"type": "pg_create_select_permission", "args": {"table": "authors", "role": "user",
                "permission": {"columns": ["id", "name"], "filter": {}}}},
        ]});
        let (status, body) = metadata(&base, setup).await;
        assert_eq!(status, 200, "{db:?}: {body}");
        // Renamed: the permission that reads through it follows the new name.
        let rename = json!({"type": "pg_rename_relationship",
            "args": {"table": "articles", "name": "author", "new_name": "writer"}});
        let (status, body) = metadata(&base, rename).await;
        assert_eq!(status, 200, "{db:?}: {body}");
        let (_, doc) = exported(&base).await;
        let articles = &doc["sources"][0]["tables"][1];
        assert_eq!(articles["table"]["name"], "articles", "{db:?}: {doc}");
        assert_eq!(
            articles["select_permissions"][0]["permission"]["filter"],
            json!({"writer": {"name": {"_eq": "Ada"}}}),
            "{db:?}"
        );
        let version = exported(&base).await.0;

        // The permission reads through the relationship: dropping it is refused.
        let drop_rel = json!({"type": "pg_drop_relationship",
            "args": {"table": "articles", "relationship": "writer"}});
        let (status, body) = metadata(&base, drop_rel).await;
        assert_eq!(
            (status, body["code"].as_str()),
            (400, Some("dependency-error")),
            "{db:?}: {body}"
        );
        let error = body["error"].as_str().unwrap_or_default();
        assert!(
            error.contains("permission articles.user.select"),
            "{db:?}: {error}"
        );
        // The object relationship over a foreign-key column depends on authors.
        let untrack = json!({"type": "pg_untrack_table", "args": {"table": "authors"}});
        let (status, body) = metadata(&base, untrack).await;
        assert_eq!(
            (status, body["code"].as_str()),
            (400, Some("dependency-error")),
            "{db:?}: {body}"
        );
        let error = body["error"].as_str().unwrap_or_default();
        assert!(
            error.contains("relationship articles.writer"),
            "{db:?}: {error}"
        );
        assert_eq!(
            exported(&base).await.0,
            version,
            "{db:?}: a refused drop changed something"
        );

        // A cascade takes what depended on the drop, never what the same bulk adds
        // that cannot be served: that is refused, and nothing of the bulk is kept.
        let bulk = json!({"type": "bulk", "args": [
            {"type": "pg_create_select_permission", "args": {"table": "articles", "role": "editor",
                "permission": {"columns": ["no_such_column"], "filter": {}}}},
            {"type": "pg_untrack_table", "args": {"table": "authors", "cascade": true}},
        ]});
        let (status, body) = metadata(&base, bulk).await;
        assert_eq!(
            (status, body["code"].as_str()),
            (400, Some("invalid-configuration")),
            "{db:?}: {body}"
        );
        assert_eq!(
            exported(&base).await.0,
            version,
            "{db:?}: a refused bulk changed something"
        );

        // With cascade: the relationship goes, and the permission reading through it.
        let untrack =
            json!({"type": "pg_untrack_table", "args": {"table": "authors", "cascade": true}});
        let (status, body) = metadata(&base, untrack).await;
        assert_eq!(status, 200, "{db:?}: {body}");
        let (_, doc) = exported(&base).await;
        assert_eq!(
            doc["sources"][0]["tables"],
            json!([{"table": {"schema": "public", "name": "articles"}}]),
            "{db:?}"
        );
        let user = [
            ("x-hasura-admin-secret", ADMIN_SECRET),
            ("x-hasura-role", "user"),
        ];
        let answer = query_as(&base, &user, "{ articles { id } }").await;
        assert!(
            answer["errors"].is_array(),
            "{db:?}: the user still reads articles: {answer}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inconsistent_metadata_is_dropped_on_request() {
    for db in BOTH {
        let url = authors_database("metadata_inconsistent", db);
        let server = grafton_server::start(&store_options(url))
            .await
            .expect("starts");
        let base = format!("http://{}", server.addr);
        let (_, mut doc) = exported(&base).await;
        let tables = doc["sources"][0]["tables"].as_array_mut().expect("tables");
        tables.push(json!({"table": {"schema": "public", "name": "ghost"}}));
        let replace = json!({"type": "replace_metadata", "version": 2,
            "args": {"allow_inconsistent_metadata": true, "metadata": doc}});
        let (status, body) = metadata(&base, replace).await;
        assert_eq!(status, 200, "{db:?}: {body}");
        assert_eq!(body["is_consistent"], false, "{db:?}: {body}");
        assert_eq!(
            body["inconsistent_objects"][0]["type"], "table",
            "{db:?}: {body}"
        );

        let (status, body) = metadata(
            &base,
            json!({"type": "drop_inconsistent_metadata", "args": {}}),
        )
        .await;
        assert_eq!(
            (status, body),
            (200, json!({"message": "success"})),
            "{db:?}"
        );
        let (_, body) = metadata(
            &base,
            json!({"type": "get_inconsistent_metadata", "args": {}}),
        )
        .await;
        assert_eq!(body["is_consistent"], true, "{db:?}: {body}");
        let (_, doc) = exported(&base).await;
        let names: Vec<&str> = (doc["sources"][0]["tables"].as_array().into_iter().flatten())
            .filter_map(|t| t["table"]["name"].as_str())
            .collect();
        assert_eq!(names, ["articles", "authors"], "{db:?}");

        // Malformed envelopes and sources are refused by name.
        let bad = [
            (
                json!({"type": "clear_metadata", "resource_version": "3", "args": {}}),
                "parse-failed",
            ),
            (
                json!({"type": "pg_track_table", "args": {"source": "analytics", "table": "authors"}}),
                "not-exists",
            ),
            (
                json!({"type": "pg_track_table", "args": {}}),
                "parse-failed",
            ),
        ];
        for (body, code) in bad {
            let (status, answer) = metadata(&base, body.clone()).await;
            assert_eq!(
                (status, answer["code"].as_str()),
                (400, Some(code)),
                "{db:?}: {body} → {answer}"
            );
        }
    }
}
