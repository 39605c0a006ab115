//! `/metrics`: who may read it, and its counters and gauges after known requests,
//! read back with a Prometheus text-format parser.

use crate::{free_port, own_database, Db, ADMIN_SECRET};
use grafton_server::ServeOptions;
use serde_json::{json, Value};
use std::collections::HashMap;

/// `user` may read `items`, one request a minute.
const CONFIG: &str = "
api_limits:
  rate_limit: {per_role: {user: {max_reqs_per_min: 1}}}
tables:
  items:
    permissions:
      user:
        select: {columns: [id, label], filter: {}}
";

fn options(url: String) -> ServeOptions {
    let mut o = ServeOptions {
        database_url: url,
        port: 0,
        config: serde_norway::from_str(CONFIG).expect("config"),
        ..ServeOptions::default()
    };
    o.auth.admin_secret = Some(ADMIN_SECRET.into());
    o.auth.unauthorized_role = Some("user".into());
    o
}

/// Every sample, keyed by `name{label="value",…}` with labels in sorted order.
fn scrape(text: &str) -> HashMap<String, f64> {
    let lines = text.lines().map(|l| Ok(l.to_owned()));
    let parsed = prometheus_parse::Scrape::parse(lines).expect("Prometheus text format");
    parsed
        .samples
        .into_iter()
        .map(|s| {
            let mut labels: Vec<(String, String)> = s
                .labels
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            labels.sort();
            let labels: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
            let value = match s.value {
                prometheus_parse::Value::Counter(v)
                | prometheus_parse::Value::Gauge(v)
                | prometheus_parse::Value::Untyped(v) => v,
                prometheus_parse::Value::Histogram(_) | prometheus_parse::Value::Summary(_) => -1.0,
            };
            (format!("{}{{{}}}", s.metric, labels.join(",")), value)
        })
        .collect()
}

async fn metrics(base: &str, auth: Option<&str>) -> (u16, String) {
    let mut request = reqwest::Client::new().get(format!("{base}/metrics"));
    if let Some(auth) = auth {
        request = request.header("authorization", auth);
    }
    let response = request.send().await.expect("metrics");
    let status = response.status().as_u16();
    if status == 200 {
        assert_eq!(
            response.headers()["content-type"],
            "text/plain; version=0.0.4; charset=utf-8"
        );
    }
    (status, response.text().await.expect("text"))
}

async fn post(url: &str, secret: bool, body: Value) -> u16 {
    let mut request = reqwest::Client::new().post(url).json(&body);
    if secret {
        request = request.header("x-hasura-admin-secret", ADMIN_SECRET);
    }
    request.send().await.expect("request").status().as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_known_requests() {
    for db in [Db::Sqlite, Db::Postgres] {
        let server = grafton_server::start(&options(own_database("metrics", db)))
            .await
            .expect("server starts");
        let base = format!("http://{}", server.addr);
        let url = server.url();
        // Admin only: not without credentials, not for a role.
        assert_eq!(
            metrics(&base, None).await.0,
            403,
            "{db:?}: the unauthorized role"
        );
        assert_eq!(metrics(&base, Some("Bearer wrong")).await.0, 403, "{db:?}");
        let wrong = reqwest::Client::new()
            .get(format!("{base}/metrics"))
            .header("x-hasura-admin-secret", "wrong")
            .send()
            .await
            .expect("metrics");
        assert_eq!(wrong.status(), 401, "{db:?}");
        let bearer = format!("Bearer {ADMIN_SECRET}");

        let items = json!({"query": "query Items { items(order_by: {id: asc}) { id } }", "operationName": "Items"});
        for _ in 0..3 {
            assert_eq!(post(&url, true, items.clone()).await, 200);
        }
        assert_eq!(post(&url, true, json!({"query": "{ nope }"})).await, 200);
        let insert = json!({"query": "mutation Add { insert_items_one(object: {id: 9, label: \"nine\"}) { id } }"});
        assert_eq!(post(&url, true, insert).await, 200);
        // The role's one request a minute, then a refusal.
        assert_eq!(
            post(&url, false, json!({"query": "{ items { id } }"})).await,
            200
        );
        assert_eq!(
            post(&url, false, json!({"query": "{ items { id } }"})).await,
            429
        );

        let (status, text) = metrics(&base, Some(&bearer)).await;
        assert_eq!(status, 200, "{db:?}: {text}");
        let m = scrape(&text);
        let get = |key: &str| {
            *m.get(key)
                .unwrap_or_else(|| panic!("{db:?}: no sample {key} in\n{text}"))
        };
        let req = |op: &str, name: &str, status: u16, code: &str| {
            get(&format!("grafton_requests_total{{code=\"{code}\",name=\"{name}\",operation=\"{op}\",status=\"{status}\",transport=\"http\"}}"))
        };
        assert_eq!(req("query", "Items", 200, ""), 3.0);
        assert_eq!(req("", "", 200, "validation-failed"), 1.0);
        assert_eq!(req("mutation", "Add", 200, ""), 1.0);
        assert_eq!(req("query", "", 200, ""), 1.0);
        assert_eq!(req("", "", 429, "rate-limited"), 1.0);
        assert_eq!(get("grafton_rejections_total{code=\"rate-limited\"}"), 1.0);
        assert_eq!(
            get("grafton_request_duration_seconds_count{operation=\"query\",transport=\"http\"}"),
            4.0
        );
        assert_eq!(
            get("grafton_database_duration_seconds_count{operation=\"query\"}"),
            4.0
        );
        assert_eq!(
            get("grafton_database_duration_seconds_count{operation=\"mutation\"}"),
            1.0
        );
        // `Items` three times: parsed once, then found (role `user` has its own cache).
        assert_eq!(
            get("grafton_cache_lookups_total{cache=\"document\",result=\"hit\"}"),
            2.0
        );
        assert_eq!(
            get("grafton_cache_lookups_total{cache=\"plan\",result=\"hit\"}"),
            2.0
        );
        assert!(get("grafton_cache_lookups_total{cache=\"document\",result=\"miss\"}") >= 4.0);
        assert_eq!(get("grafton_pool_connections{state=\"max\"}"), 10.0);
        assert!(get("grafton_pool_connections{state=\"open\"}") >= 1.0);
        assert_eq!(get("grafton_pool_connections{state=\"waiting\"}"), 0.0);
        assert!(get("process_resident_memory_bytes{}") > 1e6);
        assert!(m.contains_key("process_cpu_seconds_total{}"));
        assert_eq!(
            get(&format!(
                "grafton_build_info{{version=\"{}\"}}",
                env!("CARGO_PKG_VERSION")
            )),
            1.0
        );

        // A live query: its socket, its subscription and its cohort, and its polls.
        let socket = crate::subscribed(&server).await;
        let m = scrape(&metrics(&base, Some(&bearer)).await.1);
        assert_eq!(m["grafton_websocket_connections{}"], 1.0, "{db:?}");
        assert_eq!(
            m["grafton_live_queries{kind=\"subscriptions\"}"], 1.0,
            "{db:?}"
        );
        assert_eq!(m["grafton_live_queries{kind=\"cohorts\"}"], 1.0, "{db:?}");
        assert!(
            m["grafton_live_poll_duration_seconds_count{}"] >= 1.0,
            "{db:?}"
        );
        assert_eq!(
            m["grafton_requests_total{code=\"\",name=\"\",operation=\"subscription\",status=\"200\",transport=\"ws\"}"],
            1.0
        );
        drop(socket);
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_addr_serves_them_apart_without_credentials() {
    let mut o = options(own_database("metrics_addr", Db::Sqlite));
    o.metrics_addr = Some("127.0.0.1:0".into());
    let server = grafton_server::start(&o).await.expect("server starts");
    let apart = server.metrics_addr.expect("a metrics address");
    let (status, text) = metrics(&format!("http://{apart}"), None).await;
    assert_eq!(status, 200);
    assert!(text.contains("grafton_requests_total") || text.contains("grafton_build_info"));
    let main = metrics(
        &format!("http://{}", server.addr),
        Some(&format!("Bearer {ADMIN_SECRET}")),
    )
    .await;
    assert_eq!(main.0, 404, "not on the main port as well");
    server.stop().await;

    let mut off = options(own_database("metrics_off", Db::Sqlite));
    off.metrics = false;
    let server = grafton_server::start(&off).await.expect("server starts");
    let main = metrics(
        &format!("http://{}", server.addr),
        Some(&format!("Bearer {ADMIN_SECRET}")),
    )
    .await;
    assert_eq!(main.0, 404);
    server.stop().await;
}

/// The soft open-files limit of a running process, from /proc.
fn soft_file_limit(pid: u32) -> u64 {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).expect("/proc limits");
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .expect("Max open files");
    line.split_whitespace()
        .nth(3)
        .expect("soft")
        .parse()
        .expect("a number")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_connection_cap_follows_the_file_limit_and_refusals_are_counted_and_logged() {
    use crate::lifecycle::Process;
    let url = own_database("metrics_cap", Db::Sqlite);
    let bearer = format!("Bearer {ADMIN_SECRET}");

    // Default flags: the cap is what the (raised) open-files limit leaves.
    let process = Process::serve(&url, free_port(), &[]);
    let soft = soft_file_limit(process.pid());
    let (_, text) = metrics(&process.base, Some(&bearer)).await;
    let expected = grafton_server::file_limit::default_max_connections(soft, 10);
    assert_eq!(
        scrape(&text)["grafton_connections_max{}"],
        expected as f64,
        "soft limit {soft}"
    );
    assert!(
        expected > 1024 || soft < 1100,
        "soft limit {soft}, cap {expected}"
    );
    drop(process);

    // A cap of 2, both places held by silent sockets: the third is closed at once,
    // counted and logged.
    let port = free_port();
    let process = Process::serve(
        &url,
        port,
        &["--max-connections", "2", "--header-timeout", "2"],
    );
    let held = [
        std::net::TcpStream::connect(("127.0.0.1", port)).expect("first"),
        std::net::TcpStream::connect(("127.0.0.1", port)).expect("second"),
    ];
    std::thread::sleep(std::time::Duration::from_millis(200));
    let mut third = std::net::TcpStream::connect(("127.0.0.1", port)).expect("third");
    third
        .set_read_timeout(Some(std::time::Duration::from_secs(1)))
        .expect("timeout");
    let mut buf = [0u8; 16];
    let read = std::io::Read::read(&mut third, &mut buf);
    assert!(
        matches!(read, Ok(0) | Err(_)),
        "the third connection was served: {read:?}"
    );
    drop(held);
    // The held sockets end at the header deadline; then a scrape gets a place.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let text = loop {
        if let Ok(response) = reqwest::Client::new()
            .get(format!("{}/metrics", process.base))
            .header("authorization", &bearer)
            .send()
            .await
        {
            break response.text().await.expect("text");
        }
        assert!(std::time::Instant::now() < deadline, "no place freed");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    let samples = scrape(&text);
    assert!(
        samples["grafton_connections_refused_total{}"] >= 1.0,
        "{text}"
    );
    assert_eq!(samples["grafton_connections_max{}"], 2.0);
    assert!(samples["grafton_connections_open{}"] >= 1.0);
    // The log is written by a background writer and read by a thread: on a
    // busy machine the line may come a little after the count.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let mut log = process.log();
    while !log.contains("--max-connections (2) are open") && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
        log = process.log();
    }
    assert!(log.contains("--max-connections (2) are open"), "{log}");
}
