//! Time: a role's `time_limit` stops its statement in the database; a client that
//! hangs up has its statement cancelled too; the connection goes back idle.

use crate::*;
use serde_json::json;
use std::time::{Duration, Instant};

/// Options for a server whose PostgreSQL sessions are named `app`, so a test sees
/// only its own statements (tests share the database and run at once).
fn named(db: Db, app: &str) -> grafton_server::ServeOptions {
    let mut o = options(db);
    if db == Db::Postgres {
        o.database_url = format!("{}?application_name={app}", o.database_url);
    }
    o
}

/// `app`'s statements still sleeping in `pg_sleep`.
fn sleeping(app: &str) -> usize {
    let out = grafton_testkit::psql(
        &database_url(Db::Postgres),
        format!(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = '{app}' AND wait_event = 'PgSleep';"
        )
        .as_bytes(),
    );
    out.lines()
        .filter_map(|l| l.trim().parse().ok())
        .next()
        .unwrap_or(usize::MAX)
}

/// Waits up to `secs` for none of `app`'s statements to be sleeping.
async fn until_none_sleeping(app: &str, secs: u64) -> bool {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < deadline {
        let a = app.to_owned();
        if tokio::task::spawn_blocking(move || sleeping(&a))
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
            let mut o = named(db, "time_limit");
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
                    until_none_sleeping("time_limit", 5).await,
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
            let mut o = named(db, "hang_up");
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
                    until_none_sleeping("hang_up", 5).await,
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

#[tokio::test]
async fn a_mutation_whose_client_hangs_up_is_cancelled_and_rolled_back() {
    run(async {
        let db = Db::Postgres;
        let url = start(named(db, "mutation_hang_up"));
        let client = reqwest::Client::builder()
            .timeout(Duration::from_millis(500))
            .build()
            .expect("client");
        // One statement (no transaction), then two (a transaction).
        for mutation in [
            "mutation { insert_sleepy_one(object: {id: 1}) { id } }",
            "mutation { a: insert_sleepy_one(object: {id: 2}) { id } b: insert_sleepy_one(object: {id: 3}) { id } }",
        ] {
            let sent = client
                .post(&url)
                .header("x-hasura-admin-secret", ADMIN_SECRET)
                .json(&json!({ "query": mutation }))
                .send()
                .await;
            assert!(sent.is_err(), "the client should have timed out");
            assert!(
                until_none_sleeping("mutation_hang_up", 5).await,
                "the abandoned mutation still runs: {mutation}"
            );
        }
        let (_, body) = post(
            &url,
            None,
            "{ sleepy_aggregate { aggregate { count } } }",
            json!({}),
        )
        .await;
        assert_eq!(
            data(body)["sleepy_aggregate"]["aggregate"]["count"],
            0,
            "nothing was written"
        );
    })
}

/// How many `sleepy` rows have an id in `ids`, read as admin.
async fn sleepy_rows(url: &str, ids: &[i64]) -> Value {
    let (_, body) = post(
        url,
        None,
        "query ($ids: [Int!]) { sleepy_aggregate(where: {id: {_in: $ids}}) { aggregate { count } } }",
        json!({ "ids": ids }),
    )
    .await;
    data(body)["sleepy_aggregate"]["aggregate"]["count"].clone()
}

#[tokio::test]
async fn a_mutation_stops_at_its_time_limit_and_writes_nothing() {
    run(async {
        for db in BOTH {
            let url = start(named(db, "mutation_time_limit"));
            // One statement (no transaction on PostgreSQL), then two (a transaction).
            for mutation in [
                "mutation { insert_sleepy_one(object: {id: 10}) { id } }",
                "mutation { a: insert_sleepy_one(object: {id: 11}) { id } b: insert_sleepy_one(object: {id: 12}) { id } }",
            ] {
                let started = Instant::now();
                let (status, body) = post(&url, Some("hasty"), mutation, json!({})).await;
                let took = started.elapsed();
                assert_eq!((status, code(&body)), (200, "timeout"), "{db:?} {mutation}: {body}");
                assert!(
                    took < Duration::from_secs(5),
                    "{db:?} {mutation}: answered after {took:?}"
                );
                if db == Db::Postgres {
                    assert!(
                        until_none_sleeping("mutation_time_limit", 5).await,
                        "the mutation still runs in PostgreSQL: {mutation}"
                    );
                }
            }
            assert_eq!(sleepy_rows(&url, &[10, 11, 12]).await, 0, "{db:?}: written");
        }
    })
}

#[tokio::test]
async fn a_write_waits_for_sqlites_writer_no_longer_than_its_time_limit() {
    run(async {
        let url = start(options(Db::Sqlite));
        // Admin's insert holds the writer (counting in its trigger) until its client
        // hangs up after 4 s.
        let holder = {
            let url = url.clone();
            tokio::spawn(async move {
                reqwest::Client::builder()
                    .timeout(Duration::from_secs(4))
                    .build()
                    .expect("client")
                    .post(&url)
                    .header("x-hasura-admin-secret", ADMIN_SECRET)
                    .json(&json!({"query": "mutation { insert_sleepy_one(object: {id: 20}) { id } }"}))
                    .send()
                    .await
            })
        };
        tokio::time::sleep(Duration::from_millis(500)).await;
        let started = Instant::now();
        let (status, body) = post(
            &url,
            Some("hasty"),
            "mutation { insert_sleepy_one(object: {id: 21}) { id } }",
            json!({}),
        )
        .await;
        let took = started.elapsed();
        assert_eq!((status, code(&body)), (503, "overloaded"), "{body}");
        assert!(took < Duration::from_secs(3), "answered after {took:?}");
        assert!(
            holder.await.expect("task").is_err(),
            "the holder should time out"
        );
        assert_eq!(sleepy_rows(&url, &[20, 21]).await, 0, "written");
    })
}
