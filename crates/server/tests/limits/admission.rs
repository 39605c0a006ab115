//! Admission control: heavy queries never hold every connection, so cheap ones keep
//! answering; a full gate queues a request only while its expected wait is short, and
//! otherwise refuses it at once with 503 `overloaded`.

use crate::*;
use serde_json::json;
use std::time::{Duration, Instant};

/// Sends `query` as `role` and returns (status, code, Retry-After).
async fn attempt(
    url: String,
    role: Option<&'static str>,
    query: &'static str,
) -> (u16, String, Option<String>) {
    let client = reqwest::Client::new();
    let mut request = client
        .post(&url)
        .header("x-hasura-admin-secret", ADMIN_SECRET)
        .json(&json!({ "query": query }));
    if let Some(role) = role {
        request = request.header("x-hasura-role", role);
    }
    let response = request.send().await.expect("request");
    let status = response.status().as_u16();
    let retry = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body: serde_json::Value = response.json().await.expect("JSON body");
    (status, code(&body).to_owned(), retry)
}

#[tokio::test]
async fn cheap_queries_keep_answering_while_heavy_ones_fill_their_lane() {
    run(async {
        for db in BOTH {
            // 5 connections: the heavy lane holds 4; one connection is always left
            // for cheap requests. Heavy requests run 3 s at most.
            let mut o = options(db);
            o.pool_size = 5;
            // The lanes as counted here on any machine (no cap from its cores).
            o.query_concurrency = Some(5);
            o.limits.request_timeout = Duration::from_secs(3);
            let url = start(o);
            let heavy: Vec<_> = (0..10)
                .map(|_| tokio::spawn(attempt(url.clone(), None, "{ slow { id } }")))
                .collect();
            tokio::time::sleep(Duration::from_millis(300)).await;
            for i in 1..=20 {
                let started = Instant::now();
                let q = format!("{{ nodes_by_pk(id: {i}) {{ id }} }}");
                let (status, body) = post(&url, None, &q, json!({})).await;
                assert_eq!(status, 200, "{db:?}: {body}");
                assert_eq!(data(body)["nodes_by_pk"]["id"], i);
                assert!(
                    started.elapsed() < Duration::from_secs(1),
                    "{db:?}: a cheap query waited {:?} behind heavy ones",
                    started.elapsed()
                );
            }
            let mut codes = Vec::new();
            for h in heavy {
                let (status, code, retry) = h.await.expect("task");
                if code == "overloaded" {
                    assert_eq!((status, retry.as_deref()), (503, Some("1")), "{db:?}");
                }
                codes.push(code);
            }
            let count = |c: &str| codes.iter().filter(|x| *x == c).count();
            // 4 ran into their time limit; 6 waited their 2 s in the queue and were
            // refused as overloaded.
            assert_eq!(
                (count("timeout"), count("overloaded")),
                (4, 6),
                "{db:?}: {codes:?}"
            );
            // The lane now knows a place is held about 3 s: of a second wave, the first
            // two waiters expect 0.75 and 1.5 s and queue; on SQLite the rest would
            // wait over 2 s and are refused at once instead of after their 2 s. On
            // PostgreSQL the second and later ride in the first waiter's batch (one
            // statement for all of them, multiplexed): they need no place of their
            // own, so they wait with it, and share its refusal after its 2 s.
            let wave: Vec<_> = (0..10)
                .map(|_| {
                    let url = url.clone();
                    tokio::spawn(async move {
                        let started = Instant::now();
                        let (_, code, _) = attempt(url, None, "{ slow { id } }").await;
                        (code, started.elapsed())
                    })
                })
                .collect();
            let mut quick = 0;
            let mut codes = Vec::new();
            for w in wave {
                let (code, took) = w.await.expect("task");
                if code == "overloaded" && took < Duration::from_millis(1000) {
                    quick += 1;
                }
                codes.push(code);
            }
            let count = |c: &str| codes.iter().filter(|x| *x == c).count();
            let refused_at_once = match db {
                Db::Sqlite => 4,
                _ => 0,
            };
            assert_eq!(
                (count("timeout"), count("overloaded"), quick),
                (4, 6, refused_at_once),
                "{db:?}: {codes:?}"
            );
        }
    })
}

#[tokio::test]
async fn a_longer_queue_timeout_lets_heavy_queries_wait_their_turn() {
    run(async {
        // As above, but --queue-timeout 4: the 4 requests past the heavy lane's 4
        // places wait the 3 s its holders run, get in, and run into their own time
        // limit; none is refused (with the default 2 s, they were).
        let mut o = options(Db::Sqlite);
        o.pool_size = 5;
        o.limits.request_timeout = Duration::from_secs(3);
        o.limits.queue_timeout = Duration::from_secs(4);
        let url = start(o);
        let heavy: Vec<_> = (0..8)
            .map(|_| tokio::spawn(attempt(url.clone(), None, "{ slow { id } }")))
            .collect();
        let mut codes = Vec::new();
        for h in heavy {
            codes.push(h.await.expect("task").1);
        }
        assert!(codes.iter().all(|c| c == "timeout"), "{codes:?}");
    })
}

#[tokio::test]
async fn max_concurrent_gates_a_role() {
    run(async {
        let url = start(options(Db::Sqlite));
        // solo: one at a time; its statements end after 3 s, so the second request
        // waits its 2 s in the queue and is refused.
        let tries: Vec<_> = (0..2)
            .map(|_| {
                tokio::spawn(attempt(
                    url.clone(),
                    Some("solo"),
                    "{ slow(limit: 1) { id } }",
                ))
            })
            .collect();
        let mut codes = Vec::new();
        for t in tries {
            codes.push(t.await.expect("task").1);
        }
        codes.sort();
        assert_eq!(codes, ["overloaded", "timeout"]);
        // A mutation waits at the same gate: behind solo's slow query it is refused
        // before it writes anything.
        let slow = tokio::spawn(attempt(
            url.clone(),
            Some("solo"),
            "{ slow(limit: 1) { id } }",
        ));
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let write = attempt(
            url.clone(),
            Some("solo"),
            "mutation { insert_sleepy(objects: [{id: 4242}]) { affected_rows } }",
        )
        .await;
        assert_eq!(write.1, "overloaded", "{write:?}");
        assert_eq!(slow.await.expect("task").1, "timeout");
        let (_, body) = post(&url, None, "{ sleepy_by_pk(id: 4242) { id } }", json!({})).await;
        assert_eq!(data(body)["sleepy_by_pk"], serde_json::Value::Null);
        // Other roles are not held by solo's gate.
        let (_, body) = post(
            &url,
            Some("user"),
            "{ nodes_by_pk(id: 1) { id } }",
            json!({}),
        )
        .await;
        data(body);
    })
}
