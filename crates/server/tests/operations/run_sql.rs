//! `POST /v2/query` `run_sql` (issue 31): SQL run as written, in one transaction,
//! answered as Hasura answers (`TuplesOk` with text cells, `CommandOk`), the schema
//! reloaded after it, a failure a `postgres-error` that keeps nothing. Both backends.

use crate::metadata_api::{authors_database, metadata_with, query_as, store_options};
use crate::{Db, ADMIN_SECRET, BOTH};
use serde_json::{json, Value};

async fn run_sql(base: &str, headers: &[(&str, &str)], args: Value) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .post(format!("{base}/v2/query"))
        .json(&json!({"type": "run_sql", "args": args}));
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let response = request.send().await.expect("run_sql");
    let status = response.status().as_u16();
    (status, response.json().await.expect("JSON"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_sql_answers_as_hasura_and_keeps_nothing_it_failed() {
    for db in BOTH {
        let url = authors_database("run_sql", db);
        let server = grafton_server::start(&store_options(url))
            .await
            .expect("starts");
        let base = format!("http://{}", server.addr);
        let admin = [("x-hasura-admin-secret", ADMIN_SECRET)];

        let (status, body) = run_sql(
            &base,
            &admin,
            json!({"sql": "SELECT id, email FROM authors ORDER BY id"}),
        )
        .await;
        assert_eq!(status, 200, "{db:?}: {body}");
        assert_eq!(
            body,
            json!({"result_type": "TuplesOk",
            "result": [["id", "email"], ["1", "ada@example.com"], ["2", "NULL"]]}),
            "{db:?}"
        );

        // DDL, then the schema reloaded: the new table is served at once.
        let ddl = "CREATE TABLE tags (id INTEGER PRIMARY KEY, label TEXT); INSERT INTO tags VALUES (1, 'x')";
        let (status, body) = run_sql(&base, &admin, json!({"sql": ddl})).await;
        assert_eq!(
            (status, body),
            (200, json!({"result_type": "CommandOk", "result": null})),
            "{db:?}"
        );
        let tags = query_as(&base, &admin, "{ tags { id label } }").await;
        assert_eq!(
            tags["data"],
            json!({"tags": [{"id": 1, "label": "x"}]}),
            "{db:?}: {tags}"
        );

        // A failing statement keeps nothing of the ones before it.
        let failing = "INSERT INTO tags VALUES (2, 'y'); INSERT INTO no_such_table VALUES (1)";
        let (status, body) = run_sql(&base, &admin, json!({"sql": failing})).await;
        assert_eq!(
            (status, body["code"].as_str()),
            (400, Some("postgres-error")),
            "{db:?}: {body}"
        );
        assert_eq!(body["error"], "query execution failed", "{db:?}");
        assert!(
            body["internal"]["error"]["message"]
                .as_str()
                .unwrap_or("")
                .contains("no_such_table"),
            "{db:?}: {body}"
        );
        let (_, count) = run_sql(&base, &admin, json!({"sql": "SELECT count(*) FROM tags"})).await;
        assert_eq!(count["result"][1][0], "1", "{db:?}: {count}");

        // read_only: a write in it is refused, and nothing is kept.
        let (status, body) = run_sql(
            &base,
            &admin,
            json!({"sql": "DELETE FROM tags", "read_only": true}),
        )
        .await;
        assert_eq!(
            (status, body["code"].as_str()),
            (400, Some("postgres-error")),
            "{db:?}: {body}"
        );
        let (_, count) = run_sql(&base, &admin, json!({"sql": "SELECT count(*) FROM tags"})).await;
        assert_eq!(
            count["result"][1][0], "1",
            "{db:?}: read_only kept a write: {count}"
        );

        // Not past a COMMIT in the SQL either.
        let sneaky = "COMMIT; DELETE FROM tags";
        let (status, _) = run_sql(&base, &admin, json!({"sql": sneaky, "read_only": true})).await;
        let (_, count) = run_sql(&base, &admin, json!({"sql": "SELECT count(*) FROM tags"})).await;
        assert_eq!(
            count["result"][1][0], "1",
            "{db:?}: read_only past a COMMIT ({status}): {count}"
        );

        // What the SQL does to its session ends with it: the next request's
        // connection is not that one.
        if db == Db::Postgres {
            let (status, body) = run_sql(
                &base,
                &admin,
                json!({"sql": "SET search_path TO pg_catalog; SET ROLE NONE"}),
            )
            .await;
            assert_eq!(status, 200, "{body}");
            for _ in 0..12 {
                let answer = query_as(&base, &admin, "{ tags { id } }").await;
                assert!(
                    answer["data"]["tags"].is_array(),
                    "a session setting leaked: {answer}"
                );
            }
        }

        // Admin only, a known source only.
        let user = [
            ("x-hasura-admin-secret", ADMIN_SECRET),
            ("x-hasura-role", "user"),
        ];
        let (status, body) = run_sql(&base, &user, json!({"sql": "SELECT 1"})).await;
        assert_eq!(
            (status, body["code"].as_str()),
            (400, Some("access-denied")),
            "{db:?}: {body}"
        );
        let (status, body) =
            run_sql(&base, &admin, json!({"sql": "SELECT 1", "source": "other"})).await;
        assert_eq!(
            (status, body["code"].as_str()),
            (400, Some("not-exists")),
            "{db:?}: {body}"
        );
        let (status, body) = metadata_with(
            &base,
            &admin,
            json!({"type": "run_sql", "args": {"sql": "SELECT 1"}}),
        )
        .await;
        assert_eq!(
            (status, body["code"].as_str()),
            (400, Some("parse-failed")),
            "{db:?}: run_sql is not a metadata command: {body}"
        );
    }
}
