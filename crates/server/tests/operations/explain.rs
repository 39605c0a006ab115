//! `POST /v1/graphql/explain` (issue 31): each root field of a query, planned for
//! the role and session given, with its SQL and the database's plan of it; admin
//! only; queries only. Both backends.

use crate::metadata_api::{authors_database, store_options};
use crate::{ADMIN_SECRET, BOTH};
use serde_json::{json, Value};

async fn explain(base: &str, headers: &[(&str, &str)], body: Value) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .post(format!("{base}/v1/graphql/explain"))
        .json(&body);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let response = request.send().await.expect("explain");
    let status = response.status().as_u16();
    (status, response.json().await.expect("JSON"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_root_field_is_explained_for_the_role_given() {
    for db in BOTH {
        let url = authors_database("explain", db);
        let server = grafton_server::start(&store_options(url))
            .await
            .expect("starts");
        let base = format!("http://{}", server.addr);
        let admin = [("x-hasura-admin-secret", ADMIN_SECRET)];
        let permission = json!({"type": "pg_create_select_permission", "args": {"table": "authors",
            "role": "user", "permission": {"columns": ["id"], "filter": {"id": {"_eq": "X-Hasura-User-Id"}}}}});
        let (status, body) = crate::metadata_api::metadata(&base, permission).await;
        assert_eq!(status, 200, "{db:?}: {body}");

        let query = json!({"query": "query ($n: Int) { authors(limit: $n) { id name } a: articles { title } __typename }",
            "variables": {"n": 1}});
        let (status, body) = explain(&base, &admin, json!({"query": query})).await;
        assert_eq!(status, 200, "{db:?}: {body}");
        let fields: Vec<&str> = (body.as_array().into_iter().flatten())
            .filter_map(|f| f["field"].as_str())
            .collect();
        assert_eq!(fields, ["authors", "a"], "{db:?}: {body}");
        for f in body.as_array().into_iter().flatten() {
            assert!(
                f["sql"].as_str().is_some_and(|s| s.contains("SELECT")),
                "{db:?}: {f}"
            );
            let plan = f["plan"].as_array().expect("plan lines");
            assert!(
                !plan.is_empty() && plan.iter().all(Value::is_string),
                "{db:?}: {f}"
            );
        }
        assert!(
            body[0]["sql"].as_str().unwrap_or("").contains("authors"),
            "{db:?}: {body}"
        );
        assert!(
            body[1]["sql"].as_str().unwrap_or("").contains("articles"),
            "{db:?}: {body}"
        );

        // For a role: its rule is in the SQL; what it may not read is refused.
        let user = json!({"x-hasura-role": "user", "X-Hasura-User-Id": "2"});
        let query = json!({"query": "{ authors { id } }"});
        let (status, body) = explain(&base, &admin, json!({"query": query, "user": user})).await;
        assert_eq!(status, 200, "{db:?}: {body}");
        let sql = body[0]["sql"].as_str().unwrap_or("");
        assert!(
            sql.contains("WHERE"),
            "{db:?}: the role's rule is not in {sql}"
        );
        let query = json!({"query": "{ authors { name } }"});
        let (status, body) = explain(&base, &admin, json!({"query": query, "user": user})).await;
        assert_eq!(
            (status, body["code"].as_str()),
            (400, Some("validation-failed")),
            "{db:?}: {body}"
        );

        // Queries only; admin only.
        let mutation = json!({"query": "mutation { delete_authors(where: {}) { affected_rows } }"});
        let (status, body) = explain(&base, &admin, json!({"query": mutation})).await;
        assert_eq!(
            (status, body["code"].as_str()),
            (400, Some("validation-failed")),
            "{db:?}: {body}"
        );
        let role = [
            ("x-hasura-admin-secret", ADMIN_SECRET),
            ("x-hasura-role", "user"),
        ];
        let (status, body) = explain(
            &base,
            &role,
            json!({"query": {"query": "{ authors { id } }"}}),
        )
        .await;
        assert_eq!(
            (status, body["code"].as_str()),
            (400, Some("access-denied")),
            "{db:?}: {body}"
        );
    }
}
