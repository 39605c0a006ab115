//! Rate limits: a client past its allowance gets 429 `rate-limited` with
//! `Retry-After`; clients are keyed by session variables or IP; root fields can
//! each count as a request.

use crate::*;
use serde_json::json;

async fn as_user(
    url: &str,
    role: &str,
    user: &str,
    query: &str,
) -> (u16, Option<u64>, serde_json::Value) {
    let response = reqwest::Client::new()
        .post(url)
        .header("x-hasura-admin-secret", ADMIN_SECRET)
        .header("x-hasura-role", role)
        .header("x-hasura-user-id", user)
        .json(&json!({ "query": query }))
        .send()
        .await
        .expect("request");
    let status = response.status().as_u16();
    let retry = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok());
    (status, retry, response.json().await.expect("JSON body"))
}

#[tokio::test]
async fn a_client_past_its_allowance_gets_429_and_others_do_not() {
    run(async {
        for db in BOTH {
            let url = start(options(db));
            let q = "{ nodes_by_pk(id: 1) { id } }";
            for _ in 0..3 {
                let (status, _, body) = as_user(&url, "limited", "1", q).await;
                assert_eq!(status, 200, "{db:?} {body}");
            }
            let (status, retry, body) = as_user(&url, "limited", "1", q).await;
            assert_eq!(
                (status, code(&body)),
                (429, "rate-limited"),
                "{db:?} {body}"
            );
            // A minute's allowance of 3 comes back one every 20 s.
            assert!(retry.is_some_and(|s| (1..=20).contains(&s)), "{retry:?}");
            // Another user of the same role has an allowance of their own.
            let (status, _, _) = as_user(&url, "limited", "2", q).await;
            assert_eq!(status, 200);
        }
    })
}

#[tokio::test]
async fn root_fields_can_each_count_as_a_request() {
    run(async {
        let url = start(options(Db::Sqlite));
        let three = "{ a: nodes_by_pk(id: 1) { id } b: nodes_by_pk(id: 2) { id } c: nodes_by_pk(id: 3) { id } }";
        let (status, _, body) = as_user(&url, "ops", "1", three).await;
        assert_eq!(status, 200, "{body}");
        // 3 of 4 spent: two more root fields do not fit; one does.
        let two = "{ a: nodes_by_pk(id: 1) { id } b: nodes_by_pk(id: 2) { id } }";
        let (status, _, body) = as_user(&url, "ops", "2", two).await;
        assert_eq!(
            (status, code(&body)),
            (429, "rate-limited"),
            "keyed by IP, not user: {body}"
        );
        let (status, _, _) = as_user(&url, "ops", "1", "{ nodes_by_pk(id: 1) { id } }").await;
        assert_eq!(status, 200);
    })
}
