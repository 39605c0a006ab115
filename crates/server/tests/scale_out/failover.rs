//! PostgreSQL restarting under load: while it is down every request gets
//! `database-unavailable` (503, `Retry-After`) at once, none hangs and the server
//! lives on; once it accepts connections again Grafton serves within 2 s, with no
//! error from the pooled connections the restart killed; a mutation cut off by
//! the restart is reported unavailable and left nothing behind.

use crate::{blocking, post, serve, FIXTURE};
use grafton_testkit::Cluster;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_under_a_read_loop_is_unavailable_then_recovers_within_two_seconds() {
    let cluster = Cluster::start();
    grafton_testkit::psql(&cluster.url(), FIXTURE.as_bytes());
    let server = Arc::new(serve(&cluster.url(), |_| {}).await);
    let client = reqwest::Client::new();
    let query = "{ notes(limit: 3) { id } }";
    // Every pooled connection is open (and about to be killed).
    let warm: Vec<_> = (0..8).map(|_| post(&client, &server, query)).collect();
    for (status, body) in futures_util::future::join_all(warm).await {
        assert_eq!(status, 200, "{body}");
    }

    let cluster = blocking(move || {
        cluster.stop();
        cluster
    })
    .await;
    for _ in 0..5 {
        let started = Instant::now();
        let response = client
            .post(server.url())
            .timeout(Duration::from_secs(10))
            .json(&serde_json::json!({ "query": query }))
            .send()
            .await
            .expect("an answer, not a hang");
        let status = response.status().as_u16();
        let retry_after = response.headers().get("retry-after").cloned();
        let body: serde_json::Value = response.json().await.expect("json");
        assert_eq!(status, 503, "{body}");
        assert_eq!(
            body["errors"][0]["extensions"]["code"],
            "database-unavailable"
        );
        assert!(retry_after.is_some(), "Retry-After is set");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "refused at once: {:?}",
            started.elapsed()
        );
    }
    let ready = client
        .get(format!("http://{}/readyz", server.addr))
        .send()
        .await
        .expect("readyz");
    assert_eq!(ready.status(), 503);

    let cluster = blocking(move || {
        cluster.start_again();
        cluster
    })
    .await;
    // `start_again` returns once the database accepts connections.
    let back = Instant::now();
    loop {
        let (status, body) = post(&client, &server, query).await;
        if status == 200 {
            break;
        }
        assert_eq!(
            body["errors"][0]["extensions"]["code"], "database-unavailable",
            "{body}"
        );
        assert!(
            back.elapsed() < Duration::from_secs(2),
            "serving again within 2 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let recovery = back.elapsed();
    eprintln!("recovered {recovery:?} after the database accepted connections");
    // No dead pooled connection leaks an error afterwards, to reads or writes.
    let reads: Vec<_> = (0..16).map(|_| post(&client, &server, query)).collect();
    for (status, body) in futures_util::future::join_all(reads).await {
        assert_eq!(status, 200, "{body}");
    }
    for id in 200..208 {
        let (status, body) = post(
            &client,
            &server,
            &format!("mutation {{ insert_notes_one(object: {{id: {id}, body: \"x\"}}) {{ id }} }}"),
        )
        .await;
        assert_eq!(status, 200, "{body}");
    }
    drop(cluster);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mutation_cut_off_by_a_restart_is_unavailable_and_left_nothing() {
    let cluster = Cluster::start();
    grafton_testkit::psql(&cluster.url(), FIXTURE.as_bytes());
    // Inserts take a second in the database, so the restart falls inside one.
    grafton_testkit::psql(
        &cluster.url(),
        b"CREATE FUNCTION slow() RETURNS trigger LANGUAGE plpgsql AS
            $$ BEGIN PERFORM pg_sleep(1); RETURN NEW; END $$;
          CREATE TRIGGER slow BEFORE INSERT ON notes FOR EACH ROW EXECUTE FUNCTION slow();",
    );
    let server = Arc::new(serve(&cluster.url(), |_| {}).await);
    let client = reqwest::Client::new();
    let insert = {
        let (server, client) = (server.clone(), client.clone());
        tokio::spawn(async move {
            post(
                &client,
                &server,
                "mutation { insert_notes(objects: [{id: 300, body: \"a\"}, {id: 301, body: \"b\"}]) { affected_rows } }",
            )
            .await
        })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let cluster = blocking(move || {
        cluster.stop();
        cluster.start_again();
        cluster
    })
    .await;
    let (status, body) = insert.await.expect("the mutation's answer");
    assert_eq!(status, 503, "{body}");
    assert_eq!(
        body["errors"][0]["extensions"]["code"], "database-unavailable",
        "{body}"
    );
    let rows =
        grafton_testkit::query_one(&cluster.url(), "SELECT count(*) FROM notes WHERE id >= 300");
    assert_eq!(rows, "0", "the cut-off transaction was rolled back");
}
