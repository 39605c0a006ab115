//! Health, readiness, version, signals and restarts, on the real `grafton` binary.

use crate::{free_port, migrate, own_database, post, Db, ADMIN_SECRET};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A `grafton serve` process, killed when dropped.
pub(crate) struct Process {
    child: Child,
    pub(crate) base: String,
    /// Everything it wrote to stderr, for failure messages.
    log: Arc<Mutex<String>>,
}

impl Process {
    /// Starts `grafton serve` on `port` and waits until it serves.
    pub(crate) fn serve(database_url: &str, port: u16, extra: &[&str]) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_grafton"));
        command
            .args(["serve", "--database-url", database_url, "--port"])
            .arg(port.to_string())
            .args(["--admin-secret", ADMIN_SECRET])
            .args(extra)
            .env("GRAFTON_LOG", "info");
        Self::start(command, port)
    }

    /// Runs `command` (a `grafton serve` listening on 127.0.0.1:`port`) and waits
    /// until it serves.
    pub(crate) fn start(mut command: Command, port: u16) -> Self {
        let mut child = command
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("grafton starts");
        let stderr = child.stderr.take().expect("stderr");
        let log = Arc::new(Mutex::new(String::new()));
        let (ready_tx, ready) = std::sync::mpsc::channel();
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.contains("is serving GraphQL at") {
                    let _ = ready_tx.send(());
                }
                let mut log = sink.lock().unwrap_or_else(|p| p.into_inner());
                log.push_str(&line);
                log.push('\n');
            }
        });
        let process = Self {
            child,
            base: format!("http://127.0.0.1:{port}"),
            log,
        };
        if ready.recv_timeout(Duration::from_secs(30)).is_err() {
            panic!("grafton did not start:\n{}", process.log());
        }
        process
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    pub(crate) fn url(&self) -> String {
        format!("{}/v1/graphql", self.base)
    }

    pub(crate) fn log(&self) -> String {
        self.log.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub(crate) fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([format!("-{name}"), self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(status.success(), "kill -{name}");
    }

    /// Waits for the process to exit; its status.
    pub(crate) fn exit(&mut self, within: Duration) -> std::process::ExitStatus {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            if started.elapsed() > within {
                panic!("grafton still running after {within:?}:\n{}", self.log());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `items` plus `slow`, a view that takes `seconds` to read.
pub(crate) fn database_with_slow_view(name: &'static str, seconds: f64) -> String {
    let url = own_database(name, Db::Postgres);
    migrate(
        Db::Postgres,
        &url,
        &format!("CREATE VIEW slow AS SELECT 1 AS id, pg_sleep({seconds})::text AS z;"),
    );
    url
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_readiness_and_version() {
    let url = own_database("lifecycle_health", Db::Sqlite);
    let process = Process::serve(&url, free_port(), &[]);
    let client = reqwest::Client::new();
    let get = |path: &str| client.get(format!("{}{path}", process.base)).send();
    let healthz = get("/healthz").await.expect("healthz");
    assert_eq!(healthz.status(), 200);
    let readyz = get("/readyz").await.expect("readyz");
    assert_eq!(readyz.status(), 200);
    let version: Value = get("/v1/version")
        .await
        .expect("version")
        .json()
        .await
        .expect("JSON");
    assert_eq!(version, json!({"version": env!("CARGO_PKG_VERSION")}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_the_request_in_flight_finish_then_exits() {
    let url = database_with_slow_view("lifecycle_sigterm", 1.5);
    let mut process = Process::serve(&url, free_port(), &[]);
    let graphql = process.url();
    let in_flight = tokio::spawn(async move { post(&graphql, "{ slow { id } }").await });
    tokio::time::sleep(Duration::from_millis(400)).await;
    let signalled = Instant::now();
    process.signal("TERM");
    // The port closes at once: new clients go elsewhere.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let refused = reqwest::Client::new()
        .get(format!("{}/healthz", process.base))
        .send()
        .await;
    assert!(
        refused.as_ref().is_err_and(|e| e.is_connect()),
        "a stopping server accepts no new connection: {refused:?}"
    );
    let answer = in_flight.await.expect("request task");
    assert_eq!(answer, json!({"data": {"slow": [{"id": 1}]}}));
    let status = tokio::task::block_in_place(|| process.exit(Duration::from_secs(10)));
    assert!(status.success(), "{status}:\n{}", process.log());
    assert!(
        signalled.elapsed() >= Duration::from_millis(900),
        "exited before the request in flight was answered"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_reloads_the_schema() {
    let url = own_database("lifecycle_sighup", Db::Sqlite);
    let process = Process::serve(&url, free_port(), &[]);
    migrate(
        Db::Sqlite,
        &url,
        "CREATE TABLE added (id INTEGER PRIMARY KEY); INSERT INTO added VALUES (5);",
    );
    let before = post(&process.url(), "{ added { id } }").await;
    assert_eq!(
        before["errors"][0]["extensions"]["code"],
        "validation-failed"
    );
    process.signal("HUP");
    let started = Instant::now();
    let answer = loop {
        let body = post(&process.url(), "{ added { id } }").await;
        if body.get("data").is_some() || started.elapsed() > Duration::from_secs(10) {
            break body;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(
        answer,
        json!({"data": {"added": [{"id": 5}]}}),
        "{}",
        process.log()
    );
    // The reload is logged once the new schema is in place: a request may be
    // answered by it a moment before the line is written.
    let logged = Instant::now();
    while !process.log().contains("schema reloaded") && logged.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        process.log().contains("schema reloaded"),
        "{}",
        process.log()
    );
}

/// What a load balancer with health checks does: send each request to an instance
/// whose `/readyz` answered 200 at the last check (every 100 ms), round-robin.
struct Balancer {
    ready: Vec<std::sync::atomic::AtomicBool>,
    next: AtomicUsize,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_request_fails_while_an_instance_restarts_behind_a_second() {
    let url = own_database("lifecycle_restart", Db::Postgres);
    let ports = [free_port(), free_port()];
    let delay = ["--shutdown-delay", "1"];
    let mut a = Process::serve(&url, ports[0], &delay);
    let _b = Process::serve(&url, ports[1], &delay);
    let balancer = Arc::new(Balancer {
        ready: vec![true.into(), true.into()],
        next: AtomicUsize::new(0),
    });
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let checks = {
        let (balancer, stop) = (balancer.clone(), stop.clone());
        tokio::spawn(async move {
            let client = reqwest::Client::builder()
                .timeout(Duration::from_millis(500))
                .build()
                .expect("client");
            while !stop.load(Ordering::Relaxed) {
                for (i, port) in ports.iter().enumerate() {
                    let ok = client
                        .get(format!("http://127.0.0.1:{port}/readyz"))
                        .send()
                        .await
                        .is_ok_and(|r| r.status() == 200);
                    balancer.ready[i].store(ok, Ordering::Relaxed);
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
    };
    let served = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
    let failures = Arc::new(Mutex::new(Vec::<String>::new()));
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let (balancer, stop) = (balancer.clone(), stop.clone());
            let (served, failures) = (served.clone(), failures.clone());
            tokio::spawn(async move {
                let client = reqwest::Client::new();
                while !stop.load(Ordering::Relaxed) {
                    let n = balancer.next.fetch_add(1, Ordering::Relaxed);
                    let Some(i) = (0..2)
                        .map(|k| (n + k) % 2)
                        .find(|&i| balancer.ready[i].load(Ordering::Relaxed))
                    else {
                        failures.lock().unwrap().push("no instance ready".into());
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    };
                    let answer = client
                        .post(format!("http://127.0.0.1:{}/v1/graphql", ports[i]))
                        .header("x-hasura-admin-secret", ADMIN_SECRET)
                        .json(&json!({"query": "{ items_by_pk(id: 2) { label } }"}))
                        .send()
                        .await;
                    let body = match answer {
                        Ok(r) => r.json::<Value>().await.map_err(|e| e.to_string()),
                        Err(e) => Err(e.to_string()),
                    };
                    match body {
                        Ok(b) if b == json!({"data": {"items_by_pk": {"label": "two"}}}) => {
                            served[i].fetch_add(1, Ordering::Relaxed);
                        }
                        other => failures.lock().unwrap().push(format!("{i}: {other:?}")),
                    }
                }
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = served[0].load(Ordering::Relaxed);
    a.signal("TERM");
    let status = tokio::task::block_in_place(|| a.exit(Duration::from_secs(10)));
    assert!(status.success(), "{status}:\n{}", a.log());
    let during = served[0].load(Ordering::Relaxed);
    let restarted = tokio::task::block_in_place(|| Process::serve(&url, ports[0], &delay));
    tokio::time::sleep(Duration::from_millis(700)).await;
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.await.expect("worker");
    }
    checks.await.expect("health checks");
    let after = served[0].load(Ordering::Relaxed);
    let failures = failures.lock().unwrap().clone();
    assert!(
        failures.is_empty(),
        "{} failed: {failures:?}",
        failures.len()
    );
    assert!(before > 0, "the first instance served before its restart");
    assert!(after > during, "the restarted instance served again");
    assert!(served[1].load(Ordering::Relaxed) > 0);
    drop(restarted);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_closes_websockets_with_going_away() {
    use futures_util::StreamExt;
    use tokio_tungstenite::tungstenite::{protocol::frame::coding::CloseCode, Message};
    let url = own_database("lifecycle_ws", Db::Sqlite);
    let server = grafton_server::start(&grafton_server::ServeOptions {
        database_url: url,
        port: 0,
        ..grafton_server::ServeOptions::default()
    })
    .await
    .expect("server starts");
    let mut socket = crate::subscribed(&server).await;
    let stopping = tokio::spawn(server.stop());
    let close = loop {
        match tokio::time::timeout(Duration::from_secs(10), socket.next()).await {
            Ok(Some(Ok(Message::Close(frame)))) => break frame,
            Ok(Some(Ok(_))) => continue,
            other => panic!("no close frame: {other:?}"),
        }
    };
    assert_eq!(close.map(|f| f.code), Some(CloseCode::Away));
    tokio::time::timeout(Duration::from_secs(10), stopping)
        .await
        .expect("the server stops")
        .expect("stop task");
}
