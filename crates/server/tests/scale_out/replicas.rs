//! Read replicas: queries and subscription polls read on the replica, mutations
//! write on the primary, a replica that goes away costs no failed read, and
//! read-your-writes sends a writer's reads to the primary for its window.

use crate::{blocking, post, serve, standby, FIXTURE};
use grafton_testkit::Cluster;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_go_to_the_replica_and_writes_to_the_primary() {
    let primary = Cluster::start();
    grafton_testkit::psql(&primary.url(), FIXTURE.as_bytes());
    let replica = primary.replica();
    let server = serve(&primary.url(), |o| o.read_replicas = vec![replica.url()]).await;
    let client = reqwest::Client::new();

    assert_eq!(
        standby(&client, &server).await,
        Some(true),
        "a query reads on the replica"
    );
    // A write on a standby fails ("read-only transaction"): it succeeds, so it ran
    // on the primary.
    let (status, body) = post(
        &client,
        &server,
        "mutation { insert_notes_one(object: {id: 100, body: \"new\"}) { id } }",
    )
    .await;
    assert_eq!(
        (status, &body["data"]["insert_notes_one"]["id"]),
        (200, &100.into()),
        "{body}"
    );
    replica.wait_for_replay(&primary);
    let (_, body) = post(&client, &server, "{ notes_by_pk(id: 100) { body } }").await;
    assert_eq!(body["data"]["notes_by_pk"]["body"], "new", "{body}");

    // The replica's state and lag are in /metrics.
    let metrics = client
        .get(format!("http://{}/metrics", server.addr))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    let name = format!("127.0.0.1:{}/postgres", replica.port());
    for series in [
        format!("grafton_replica_up{{replica=\"{name}\"}} 1"),
        format!("grafton_replica_lag_bytes{{replica=\"{name}\"}}"),
        format!("grafton_replica_lag_seconds{{replica=\"{name}\"}}"),
        format!("grafton_replica_reads_total{{replica=\"{name}\"}}"),
    ] {
        assert!(metrics.contains(&series), "{series} missing:\n{metrics}");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_stopped_under_a_read_loop_costs_no_failed_read() {
    let primary = Cluster::start();
    grafton_testkit::psql(&primary.url(), FIXTURE.as_bytes());
    let replica = primary.replica();
    let server = Arc::new(serve(&primary.url(), |o| o.read_replicas = vec![replica.url()]).await);
    let client = reqwest::Client::new();
    assert_eq!(standby(&client, &server).await, Some(true));

    let (ok, failed) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let until = Instant::now() + Duration::from_secs(4);
    let mut loops = Vec::new();
    for _ in 0..4 {
        let (server, client) = (server.clone(), client.clone());
        let (ok, failed) = (ok.clone(), failed.clone());
        loops.push(tokio::spawn(async move {
            while Instant::now() < until {
                let (status, body) =
                    post(&client, &server, "{ notes(limit: 5) { id body } }").await;
                if status == 200
                    && body["data"]["notes"]
                        .as_array()
                        .is_some_and(|n| n.len() == 5)
                {
                    ok.fetch_add(1, Ordering::Relaxed);
                } else {
                    eprintln!("failed read: {status} {body}");
                    failed.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    // A second in, the replica stops (fast shutdown: its sessions are ended).
    tokio::time::sleep(Duration::from_secs(1)).await;
    let replica = blocking(move || {
        replica.stop();
        replica
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        standby(&client, &server).await,
        Some(false),
        "the primary answers meanwhile"
    );
    for l in loops {
        l.await.expect("read loop");
    }
    assert_eq!(failed.load(Ordering::Relaxed), 0, "no read failed");
    assert!(ok.load(Ordering::Relaxed) > 100, "the loop ran");

    // Started again, the health check puts it back.
    let _replica = blocking(move || {
        replica.start_again();
        replica
    })
    .await;
    let deadline = Instant::now() + Duration::from_secs(5);
    while standby(&client, &server).await != Some(true) {
        assert!(
            Instant::now() < deadline,
            "the replica serves again within 5 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_reads_from_the_primary_for_its_window() {
    let primary = Cluster::start();
    grafton_testkit::psql(&primary.url(), FIXTURE.as_bytes());
    let replica = primary.replica();
    let server = serve(&primary.url(), |o| {
        o.read_replicas = vec![replica.url()];
        o.primary_after_write = Some(Duration::from_millis(700));
    })
    .await;
    let client = reqwest::Client::new();
    assert_eq!(standby(&client, &server).await, Some(true));
    let (status, body) = post(
        &client,
        &server,
        "mutation { update_notes_by_pk(pk_columns: {id: 1}, _set: {body: \"edited\"}) { id } }",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    // Read at once: from the primary, so the write is seen whatever the lag.
    assert_eq!(
        standby(&client, &server).await,
        Some(false),
        "the writer reads on the primary"
    );
    let (_, body) = post(&client, &server, "{ notes_by_pk(id: 1) { body } }").await;
    assert_eq!(body["data"]["notes_by_pk"]["body"], "edited", "{body}");
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(
        standby(&client, &server).await,
        Some(true),
        "back on the replica after the window"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriptions_poll_the_replica_and_the_primary_after_a_write() {
    let primary = Cluster::start();
    grafton_testkit::psql(&primary.url(), FIXTURE.as_bytes());
    let replica = primary.replica();
    let server = serve(&primary.url(), |o| {
        o.read_replicas = vec![replica.url()];
        o.primary_after_write = Some(Duration::from_secs(60));
        o.live.interval = Duration::from_secs(3600);
    })
    .await;
    let request = grafton_engine::GraphqlRequest {
        query: "subscription { notes_by_pk(id: 2) { body } }".into(),
        operation_name: None,
        variables: serde_json::Map::new(),
        persisted_hash: None,
    };
    let caller = grafton_engine::Caller::default();
    let (tx, mut answers) = tokio::sync::mpsc::channel::<Box<grafton_engine::Delivery>>(8);
    let sink = grafton_engine::Sink::new(tx);
    let mut next = async || -> (u64, String) {
        let delivery = tokio::time::timeout(Duration::from_secs(5), answers.recv())
            .await
            .expect("an answer within 5 s")
            .expect("the subscriptions live");
        let body: serde_json::Value =
            serde_json::from_str(&delivery.result.expect("no error")).expect("json");
        let text = body["data"]["notes_by_pk"]["body"].as_str().unwrap_or("?");
        (delivery.key, text.to_owned())
    };
    let engine = server.engine.clone();
    let _a = (engine.subscribe(&request, &caller, sink.clone(), 1).await).expect("subscribed");
    assert_eq!(next().await, (1, "note 2".to_owned()));

    // The replica stops replaying; a write behind Grafton's back (no wake-up) reaches
    // only the primary. A new subscriber's first poll reads the replica: the old row.
    grafton_testkit::query_one(&replica.url(), "SELECT pg_wal_replay_pause()");
    grafton_testkit::psql(
        &primary.url(),
        b"UPDATE notes SET body = 'behind' WHERE id = 2;",
    );
    let _b = (engine.subscribe(&request, &caller, sink, 2).await).expect("subscribed");
    assert_eq!(
        next().await,
        (2, "note 2".to_owned()),
        "polled on the replica"
    );

    // A write through Grafton to the table wakes the cohort (the interval is an
    // hour): that poll reads on the primary, so both see the row the replica lacks.
    let (status, body) = post(
        &reqwest::Client::new(),
        &server,
        "mutation { update_notes_by_pk(pk_columns: {id: 3}, _set: {body: \"x\"}) { id } }",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let mut woken = vec![next().await, next().await];
    woken.sort();
    assert_eq!(woken, [(1, "behind".to_owned()), (2, "behind".to_owned())]);
}
