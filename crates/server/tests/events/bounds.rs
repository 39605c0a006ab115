//! Several instances share the deliveries, each event going to one; a hostile
//! webhook (one that hangs, one that sends far more than is read, one that
//! redirects) costs each delivery its timeout at most, and is tried again.

use crate::{options, psql, Receiver};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::time::{Duration, Instant};

async fn metadata(base: &str, body: Value) -> Value {
    crate::metadata_with_status(base, body).await.1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_deliver_each_event_once() {
    let url = crate::delivery::database("events_two");
    let receiver = Receiver::default();
    let hook = receiver.start().await;
    let a = grafton_server::start(&options(&url)).await.expect("A");
    let b = grafton_server::start(&options(&url)).await.expect("B");
    let create = json!({"type": "pg_create_event_trigger", "args": {
        "name": "article_added", "table": "articles", "webhook": hook, "insert": {"columns": "*"}}});
    let answer = metadata(&format!("http://{}", a.addr), create).await;
    assert_eq!(answer, json!({"message": "success"}));
    // B serves the trigger too (it follows A's change), and both deliver.
    tokio::time::sleep(Duration::from_millis(500)).await;
    psql(
        &url,
        "INSERT INTO articles SELECT g, 1, 't' || g FROM generate_series(100, 299) g".into(),
    );
    let calls = receiver.wait_for(200).await;
    let ids: HashSet<String> = (calls.iter())
        .filter_map(|c| c.body["id"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(ids.len(), 200, "every event delivered");
    assert_eq!(
        calls.len(),
        200,
        "each once: {} calls for {} events",
        calls.len(),
        ids.len()
    );
    let by = psql(
        &url,
        "SELECT count(DISTINCT locked_by) FROM grafton_catalog.event_log".into(),
    );
    eprintln!("instances that delivered: {}", by.trim());
    drop((a, b));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_webhook_costs_its_timeout_and_no_more() {
    use axum::response::IntoResponse;
    // One route hangs, one streams far more than is read, one redirects.
    async fn hang() -> &'static str {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        "late"
    }
    async fn flood() -> axum::response::Response {
        let chunk = bytes_of(64 * 1024);
        let stream =
            futures_util::stream::repeat_with(move || Ok::<_, std::io::Error>(chunk.clone()))
                .take(1 << 16); // 4 GiB, were it all read
        axum::body::Body::from_stream(stream).into_response()
    }
    fn bytes_of(n: usize) -> axum::body::Bytes {
        axum::body::Bytes::from(vec![b'x'; n])
    }
    async fn redirect() -> axum::response::Response {
        (
            axum::http::StatusCode::FOUND,
            [("location", "http://127.0.0.1:9/elsewhere")],
        )
            .into_response()
    }
    use futures_util::StreamExt;
    let app = axum::Router::new()
        .route("/hang", axum::routing::post(hang))
        .route("/flood", axum::routing::post(flood))
        .route("/redirect", axum::routing::post(redirect));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let at = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });

    let url = crate::delivery::database("events_hostile");
    let server = grafton_server::start(&options(&url)).await.expect("starts");
    let base = format!("http://{}", server.addr);
    for (name, path) in [
        ("hangs", "hang"),
        ("floods", "flood"),
        ("redirects", "redirect"),
    ] {
        let create = json!({"type": "pg_create_event_trigger", "args": {
            "name": name, "table": "articles", "webhook": format!("http://{at}/{path}"),
            "insert": {"columns": "*"}, "retry_conf": {"num_retries": 0, "timeout_sec": 1}}});
        assert_eq!(
            metadata(&base, create).await,
            json!({"message": "success"}),
            "{name}"
        );
    }
    let started = Instant::now();
    psql(&url, "INSERT INTO articles VALUES (500, 1, 'x')".into());
    // Each of the three is tried once (no retries) and settles within its timeout:
    // the hang and the redirect dead, the flood (a 200) delivered, read 64 KiB far.
    let settled_sql = "SELECT string_agg(trigger_name || '=' || CASE WHEN delivered THEN \
        'delivered' WHEN dead THEN 'dead' ELSE 'due' END, ',' ORDER BY trigger_name) \
        FROM grafton_catalog.event_log";
    loop {
        let settled = psql(&url, settled_sql.into());
        if settled.trim() == "floods=delivered,hangs=dead,redirects=dead" {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "not settled: {settled}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(6),
        "a hostile webhook held a delivery for {took:?}"
    );
    let logged = psql(
        &url,
        "SELECT max(length(response)) FROM grafton_catalog.event_invocation_logs".into(),
    );
    let longest: usize = logged.trim().parse().unwrap_or(0);
    assert!(longest <= 64 * 1024, "read {longest} bytes of an answer");
    let statuses = psql(&url, "SELECT string_agg(coalesce(status::text, '-'), ',' ORDER BY status) FROM grafton_catalog.event_invocation_logs".into());
    eprintln!(
        "hostile webhooks settled in {took:?}; statuses {}",
        statuses.trim()
    );
}

/// `/metrics` counts the events waiting and the calls under way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_and_in_flight_events_are_counted() {
    let receiver = Receiver {
        delay: Duration::from_millis(1500),
        ..Receiver::default()
    };
    let hook = receiver.start().await;
    let url = crate::delivery::database("events_gauges");
    let mut o = options(&url);
    o.events.http_pool_size = 1;
    o.events.cleanup_interval = Duration::from_millis(100);
    let server = grafton_server::start(&o).await.expect("starts");
    let base = format!("http://{}", server.addr);
    let create = json!({"type": "pg_create_event_trigger", "args": {
        "name": "slow", "table": "articles", "webhook": hook, "insert": {"columns": "*"}}});
    assert_eq!(metadata(&base, create).await, json!({"message": "success"}));
    psql(
        &url,
        "INSERT INTO articles SELECT g, 1, 't' FROM generate_series(600, 602) g".into(),
    );
    let gauge = |text: &str, name: &str| -> i64 {
        let line = text.lines().find(|l| l.starts_with(name));
        line.and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse::<f64>().ok())
            .map_or(-1, |v| v as i64)
    };
    let metrics = || async {
        reqwest::Client::new()
            .get(format!("{base}/metrics"))
            .header("x-hasura-admin-secret", crate::ADMIN_SECRET)
            .send()
            .await
            .expect("metrics")
            .text()
            .await
            .expect("text")
    };
    // One call at a time (the pool), each 1.5 s: while the first is under way,
    // all three wait.
    receiver.wait_for(1).await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    let during = metrics().await;
    assert_eq!(
        gauge(&during, "grafton_events_in_flight{log=\"event_log\"}"),
        1,
        "{during}"
    );
    assert_eq!(
        gauge(&during, "grafton_events_pending{log=\"event_log\"}"),
        3,
        "{during}"
    );
    receiver.wait_for(3).await;
    let started = Instant::now();
    loop {
        let after = metrics().await;
        let (flying, waiting) = (
            gauge(&after, "grafton_events_in_flight{log=\"event_log\"}"),
            gauge(&after, "grafton_events_pending{log=\"event_log\"}"),
        );
        if (flying, waiting) == (0, 0) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "in flight {flying}, waiting {waiting}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A webhook down (connections refused) for a while, then back: every event is
/// delivered, each retried meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_down_for_a_while_then_back_gets_everything() {
    // A port nothing listens on, for now.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let hook = format!("http://127.0.0.1:{port}/hook");
    let url = crate::delivery::database("events_down");
    let server = grafton_server::start(&options(&url)).await.expect("starts");
    let base = format!("http://{}", server.addr);
    let create = json!({"type": "pg_create_event_trigger", "args": {
        "name": "article_added", "table": "articles", "webhook": hook, "insert": {"columns": "*"},
        "retry_conf": {"num_retries": 30, "interval_sec": 1}}});
    assert_eq!(metadata(&base, create).await, json!({"message": "success"}));
    psql(
        &url,
        "INSERT INTO articles SELECT g, 1, 't' FROM generate_series(700, 749) g".into(),
    );
    // Down: every event is tried and fails.
    let tried = "SELECT count(*) FILTER (WHERE tries > 0 AND NOT delivered AND NOT dead)
        FROM grafton_catalog.event_log";
    let started = Instant::now();
    while psql(&url, tried.into()) != "50" {
        assert!(started.elapsed() < Duration::from_secs(15), "not all tried");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Back: everything arrives.
    let receiver = Receiver::default();
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .expect("the webhook's port");
    receiver.start_with(listener).await;
    let calls = receiver.wait_for(50).await;
    let ids: HashSet<String> = (calls.iter())
        .filter_map(|c| c.body["event"]["data"]["new"]["id"].as_i64())
        .map(|id| id.to_string())
        .collect();
    assert_eq!(ids.len(), 50, "delivered {} of 50", ids.len());
    let settled = "SELECT count(*) FILTER (WHERE delivered) FROM grafton_catalog.event_log";
    let started = Instant::now();
    while psql(&url, settled.into()) != "50" {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "not all recorded"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
