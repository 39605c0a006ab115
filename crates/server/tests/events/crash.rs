//! `grafton serve` killed (SIGKILL) in the middle of deliveries, then another
//! started: every event is still delivered (at least once; the duplicates are
//! counted), nothing lost.

use crate::{Receiver, ADMIN_SECRET};
use serde_json::json;
use std::collections::HashSet;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port()
}

/// The real binary, serving on `port`, once it answers.
async fn serve(url: &str, port: u16) -> Child {
    let child = Command::new(env!("CARGO_BIN_EXE_grafton"))
        .args(["serve", "--database-url", url, "--port", &port.to_string()])
        .args([
            "--admin-secret",
            ADMIN_SECRET,
            "--events-claim-timeout",
            "3",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("grafton runs");
    let started = Instant::now();
    while reqwest::get(format!("http://127.0.0.1:{port}/healthz"))
        .await
        .is_err()
    {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "grafton did not start"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    child
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_instances_events_are_delivered_by_the_next() {
    let url = crate::delivery::database("events_crash");
    // A slow webhook, so deliveries are in flight when the instance dies.
    let receiver = Receiver {
        delay: Duration::from_millis(200),
        ..Receiver::default()
    };
    let hook = receiver.start().await;
    let port = free_port();
    let mut first = serve(&url, port).await;
    let create = json!({"type": "pg_create_event_trigger", "args": {
        "name": "article_added", "table": "articles", "webhook": hook, "insert": {"columns": "*"},
        "retry_conf": {"num_retries": 3, "interval_sec": 1, "timeout_sec": 5}}});
    let answer: serde_json::Value = reqwest::Client::new()
        .post(format!("http://127.0.0.1:{port}/v1/metadata"))
        .header("x-hasura-admin-secret", ADMIN_SECRET)
        .json(&create)
        .send()
        .await
        .expect("metadata")
        .json()
        .await
        .expect("JSON");
    assert_eq!(answer, json!({"message": "success"}));
    let u = url.clone();
    std::thread::spawn(move || {
        let sql = b"INSERT INTO articles SELECT g, 1, 't' || g FROM generate_series(1000, 1199) g";
        grafton_testkit::psql(&u, sql)
    })
    .join()
    .expect("psql");
    assert!(
        !receiver.wait_for(5).await.is_empty(),
        "nothing delivered before the kill"
    );
    first.kill().expect("SIGKILL");
    let _ = first.wait();
    let at_kill = receiver.received().len();

    let mut second = serve(&url, free_port()).await;
    // Every event delivered by the log's own account: those the killed instance
    // held are claimed again once its claims expire (3 s here), and sent again.
    let started = Instant::now();
    loop {
        let u = url.clone();
        let delivered = std::thread::spawn(move || {
            let sql = b"SELECT count(*) FROM grafton_catalog.event_log WHERE delivered";
            grafton_testkit::psql(&u, sql)
        })
        .join()
        .expect("psql");
        if delivered.trim() == "200" {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "events lost: {} of 200 delivered",
            delivered.trim()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let ids: HashSet<String> = (receiver.received().iter())
        .filter_map(|c| c.body["id"].as_str().map(str::to_owned))
        .collect();
    let _ = second.kill();
    let _ = second.wait();
    let calls = receiver.received().len();
    assert_eq!(
        ids.len(),
        200,
        "events lost: {} of 200 delivered",
        ids.len()
    );
    eprintln!(
        "killed after {at_kill} calls; all 200 events delivered in {calls} calls ({} duplicates)",
        calls - ids.len()
    );
}
