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

/// Sends a POST whose headers announce a 1,000-byte body and then only its first
/// bytes; the answer's status line and body, if one comes within 3 s (the body
/// timeout is 10 s: an answer in time was not waiting for the body).
async fn without_the_body(url: &str, headers: &str) -> Option<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .expect("host:port");
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let head = format!(
        "POST /v1/graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
         Content-Length: 1000\r\n{headers}\r\n{{\"query\": "
    );
    stream.write_all(head.as_bytes()).await.expect("write");
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = std::time::Duration::from_secs(3);
    while !String::from_utf8_lossy(&answer).contains("}]}") {
        match tokio::time::timeout(deadline, stream.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => answer.extend_from_slice(&buf[..n]),
            _ => return None,
        }
    }
    Some(String::from_utf8_lossy(&answer).into_owned())
}

#[tokio::test]
async fn a_refused_caller_is_answered_without_waiting_for_its_body() {
    run(async {
        let url = start(options(Db::Sqlite));
        let q = "{ nodes_by_pk(id: 1) { id } }";
        for _ in 0..3 {
            let (status, _, body) = as_user(&url, "limited", "7", q).await;
            assert_eq!(status, 200, "{body}");
        }
        let over = format!(
            "x-hasura-admin-secret: {ADMIN_SECRET}\r\nx-hasura-role: limited\r\nx-hasura-user-id: 7\r\n"
        );
        let answer = without_the_body(&url, &over).await;
        let answer = answer.expect("a client over its limit is answered before its body");
        assert!(answer.starts_with("HTTP/1.1 429"), "{answer}");
        assert!(answer.contains("rate-limited"), "{answer}");
        let answer = without_the_body(&url, "x-hasura-admin-secret: wrong\r\n").await;
        let answer = answer.expect("a caller with a wrong secret is answered before its body");
        assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
        // Within its allowance, the server does wait for the body.
        let within = format!(
            "x-hasura-admin-secret: {ADMIN_SECRET}\r\nx-hasura-role: limited\r\nx-hasura-user-id: 8\r\n"
        );
        assert_eq!(without_the_body(&url, &within).await, None);
    })
}

#[tokio::test]
async fn each_operation_of_a_batch_counts_as_a_request() {
    run(async {
        let url = start(options(Db::Sqlite));
        let op = json!({"query": "{ nodes_by_pk(id: 1) { id } }"});
        let batch = || {
            reqwest::Client::new()
                .post(&url)
                .header("x-hasura-admin-secret", ADMIN_SECRET)
                .header("x-hasura-role", "limited")
                .header("x-hasura-user-id", "5")
                .json(&json!([op, op]))
                .send()
        };
        let first: serde_json::Value = batch().await.expect("batch").json().await.expect("JSON");
        assert_eq!(first[0]["data"]["nodes_by_pk"]["id"], 1, "{first}");
        assert_eq!(first[1]["data"]["nodes_by_pk"]["id"], 1, "{first}");
        // 2 of 3 spent: the next batch's first operation fits, its second does not.
        let second: serde_json::Value = batch().await.expect("batch").json().await.expect("JSON");
        assert_eq!(second[0]["data"]["nodes_by_pk"]["id"], 1, "{second}");
        assert_eq!(code(&second[1]), "rate-limited", "{second}");
        // Spent: the whole next batch is refused before its body is read.
        let third = batch().await.expect("batch");
        assert_eq!(third.status().as_u16(), 429);
    })
}
