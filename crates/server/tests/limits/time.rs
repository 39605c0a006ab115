//! Time: a role's `time_limit` stops its statement in the database; a client that
//! hangs up has its statement cancelled too; the connection goes back idle.

use crate::*;
use serde_json::json;
use std::time::{Duration, Instant};

/// Statements of the test database still running `pg_sleep`.
fn sleeping(url: &str) -> usize {
    let name = url.rsplit('/').next().unwrap_or_default();
    let out = grafton_testkit::psql(
        url,
        format!(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = '{name}' AND state = 'active' AND query LIKE '%slow%' AND pid <> pg_backend_pid();"
        )
        .as_bytes(),
    );
    out.lines()
        .filter_map(|l| l.trim().parse().ok())
        .next()
        .unwrap_or(usize::MAX)
}

/// Waits up to `secs` for no statement of the test database to be sleeping.
async fn until_none_sleeping(url: &str, secs: u64) -> bool {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < deadline {
        let u = url.to_owned();
        if tokio::task::spawn_blocking(move || sleeping(&u))
            .await
            .unwrap_or(usize::MAX)
            == 0
        {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

#[tokio::test]
async fn time_limit_cancels_the_statement_and_the_pool_stays_usable() {
    run(async {
        for db in BOTH {
            // One connection: if the cancelled statement held it, the next query would wait.
            let mut o = options(db);
            o.pool_size = 1;
            let url = start(o);
            let started = Instant::now();
            let (status, body) =
                post(&url, Some("hasty"), "{ slow(limit: 1) { id } }", json!({})).await;
            let took = started.elapsed();
            assert_eq!((status, code(&body)), (200, "timeout"), "{db:?} {body}");
            assert!(body["errors"][0]["message"]
                .as_str()
                .unwrap_or("")
                .contains("time limit"));
            assert!(
                took < Duration::from_secs(5),
                "{db:?}: answered after {took:?}"
            );
            if db == Db::Postgres {
                assert!(
                    until_none_sleeping(&database_url(db), 5).await,
                    "the statement still runs in PostgreSQL"
                );
            }
            let started = Instant::now();
            let (_, body) = post(
                &url,
                Some("user"),
                "{ nodes_by_pk(id: 2) { id } }",
                json!({}),
            )
            .await;
            assert_eq!(data(body)["nodes_by_pk"]["id"], 2, "{db:?}");
            assert!(
                started.elapsed() < Duration::from_secs(3),
                "{db:?}: the pool was held"
            );
        }
    })
}

#[tokio::test]
async fn a_client_that_hangs_up_has_its_statement_cancelled() {
    run(async {
        for db in BOTH {
            let mut o = options(db);
            o.pool_size = 1;
            let url = start(o);
            // Admin has no time limit but the server's (60 s): the client gives up first.
            let client = reqwest::Client::builder()
                .timeout(Duration::from_millis(500))
                .build()
                .expect("client");
            let sent = client
                .post(&url)
                .header("x-hasura-admin-secret", ADMIN_SECRET)
                .json(&json!({"query": "{ slow(limit: 1) { id } }"}))
                .send()
                .await;
            assert!(sent.is_err(), "the client should have timed out");
            if db == Db::Postgres {
                assert!(
                    until_none_sleeping(&database_url(db), 5).await,
                    "the abandoned statement still runs in PostgreSQL"
                );
            }
            let started = Instant::now();
            let (_, body) = post(&url, None, "{ nodes_by_pk(id: 3) { id } }", json!({})).await;
            assert_eq!(data(body)["nodes_by_pk"]["id"], 3, "{db:?}");
            assert!(
                started.elapsed() < Duration::from_secs(3),
                "{db:?}: the next query waited {:?} behind the abandoned one",
                started.elapsed()
            );
        }
    })
}

#[tokio::test]
async fn the_request_timeout_holds_for_admin() {
    run(async {
        let mut o = options(Db::Sqlite);
        o.limits.request_timeout = Duration::from_millis(800);
        let url = start(o);
        let (_, body) = post(&url, None, "{ slow(limit: 1) { id } }", json!({})).await;
        assert_eq!(code(&body), "timeout", "{body}");
    })
}
