//! Traces received by a real OpenTelemetry Collector (built from the Go module
//! proxy by `tests/otlp/install.sh`, writing what it receives to a file): the
//! request's span continues the caller's `traceparent`, and parse/validate, plan,
//! the database and the response are its children.

use crate::lifecycle::Process;
use crate::{free_port, own_database, Db, ADMIN_SECRET};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A running collector, killed when dropped.
struct Collector {
    child: Child,
    spans: PathBuf,
    /// Its OTLP/HTTP address.
    http: String,
    _dir: tempfile::TempDir,
}

impl Drop for Collector {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Collector {
    fn start() -> Self {
        let install = Command::new("bash")
            .arg(repo().join("tests/otlp/install.sh"))
            .output()
            .expect("tests/otlp/install.sh runs (needs Go and the Go module proxy)");
        assert!(
            install.status.success(),
            "tests/otlp/install.sh failed:\n{}",
            String::from_utf8_lossy(&install.stderr)
        );
        let bin = String::from_utf8_lossy(&install.stdout).trim().to_owned();
        let dir = tempfile::tempdir().expect("tempdir");
        let spans = dir.path().join("spans.jsonl");
        let log = dir.path().join("collector.log");
        let child = Command::new(&bin)
            .arg("--config")
            .arg(repo().join("tests/otlp/collector.yaml"))
            .env("OTLP_SPANS_FILE", &spans)
            .env("OTLP_GRPC_PORT", "0")
            .env("OTLP_HTTP_PORT", "0")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("log file"))
            .spawn()
            .expect("the collector starts");
        let started = Instant::now();
        let http = loop {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            if text.contains("Everything is ready") {
                let endpoint = text
                    .lines()
                    .filter(|l| l.contains("Starting HTTP server"))
                    .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                    .find_map(|v| v["endpoint"].as_str().map(str::to_owned));
                break endpoint.unwrap_or_else(|| panic!("no HTTP endpoint in\n{text}"));
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the collector did not start:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        Self {
            child,
            spans,
            http,
            _dir: dir,
        }
    }

    /// Every span received so far.
    fn spans(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.spans).unwrap_or_default();
        let mut out = Vec::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let v: Value = serde_json::from_str(line).expect("OTLP JSON line");
            for rs in v["resourceSpans"].as_array().into_iter().flatten() {
                for ss in rs["scopeSpans"].as_array().into_iter().flatten() {
                    out.extend(ss["spans"].as_array().into_iter().flatten().cloned());
                }
            }
        }
        out
    }
}

fn attribute<'a>(span: &'a Value, key: &str) -> Option<&'a Value> {
    span["attributes"]
        .as_array()?
        .iter()
        .find(|a| a["key"] == key)
        .map(|a| &a["value"])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_reach_a_real_collector_under_the_callers_trace() {
    let collector = tokio::task::spawn_blocking(Collector::start)
        .await
        .expect("collector task");
    let url = own_database("traces", Db::Sqlite);
    let endpoint = format!("http://{}", collector.http);
    let mut process = tokio::task::block_in_place(|| {
        Process::serve(
            &url,
            free_port(),
            &[
                "--otlp-endpoint",
                &endpoint,
                "--otlp-include-sql",
                "--otlp-sampling-ratio",
                "1",
            ],
        )
    });
    let trace = "0af7651916cd43dd8448eb211c80319c";
    let caller_span = "b7ad6b7169203331";
    let unsampled = "1bf7651916cd43dd8448eb211c80319d";
    let written = "2cf7651916cd43dd8448eb211c80319e";
    let client = reqwest::Client::new();
    let mutation: Value = client
        .post(process.url())
        .header("x-hasura-admin-secret", ADMIN_SECRET)
        .header("traceparent", format!("00-{written}-{caller_span}-01"))
        .json(&json!({"query": "mutation Relabel { update_items(where: {id: {_eq: 2}}, _set: {label: \"deux\"}) { affected_rows } }"}))
        .send()
        .await
        .expect("mutation")
        .json()
        .await
        .expect("JSON");
    assert_eq!(
        mutation,
        json!({"data": {"update_items": {"affected_rows": 1}}})
    );
    for (trace_id, flags) in [(trace, "01"), (unsampled, "00")] {
        let answer: Value = client
            .post(process.url())
            .header("x-hasura-admin-secret", ADMIN_SECRET)
            .header(
                "traceparent",
                format!("00-{trace_id}-{caller_span}-{flags}"),
            )
            .json(&json!({"query": "query Items { items(order_by: {id: asc}) { id } }"}))
            .send()
            .await
            .expect("request")
            .json()
            .await
            .expect("JSON");
        assert_eq!(answer, json!({"data": {"items": [{"id": 1}, {"id": 2}]}}));
    }
    // Stopping sends what the exporter still holds.
    process.signal("TERM");
    let status = tokio::task::block_in_place(|| process.exit(Duration::from_secs(15)));
    assert!(status.success(), "{}", process.log());

    let spans = collector.spans();
    // The caller that did not sample left no span at all: none of its trace, and
    // no stray root either.
    let stray: Vec<&Value> = spans
        .iter()
        .filter(|s| s["traceId"] != trace && s["traceId"] != written)
        .collect();
    assert!(
        stray.is_empty(),
        "spans outside the sampled traces: {stray:#?}"
    );
    assert!(spans.iter().all(|s| s["traceId"] != unsampled));
    let ours: Vec<&Value> = spans.iter().filter(|s| s["traceId"] == trace).collect();
    let named = |name: &str| {
        ours.iter()
            .find(|s| s["name"] == name)
            .copied()
            .unwrap_or_else(|| panic!("no span {name} among {ours:#?}\n{}", process.log()))
    };
    let request = named("query Items");
    assert_eq!(request["parentSpanId"], caller_span, "{request}");
    assert_eq!(request["kind"], 2, "a server span");
    assert_eq!(
        attribute(request, "graphql.operation.name"),
        Some(&json!({"stringValue": "Items"}))
    );
    assert_eq!(
        attribute(request, "http.response.status_code"),
        Some(&json!({"intValue": "200"}))
    );
    for child in [
        "graphql.parse_validate",
        "graphql.plan",
        "db.query",
        "graphql.response",
    ] {
        let span = named(child);
        assert_eq!(span["parentSpanId"], request["spanId"], "{child}: {span}");
    }
    let db = named("db.query");
    assert_eq!(db["kind"], 3, "a client span");
    assert_eq!(
        attribute(db, "db.system.name"),
        Some(&json!({"stringValue": "sqlite"}))
    );
    let sql = attribute(db, "db.query.text")
        .and_then(|v| v["stringValue"].as_str())
        .unwrap_or("");
    assert!(sql.contains("\"items\""), "{sql}");

    // A mutation: its transaction, and each of its statements under it.
    let mutation: Vec<&Value> = spans.iter().filter(|s| s["traceId"] == written).collect();
    let find = |name: &str| -> Vec<&Value> {
        mutation
            .iter()
            .filter(|s| s["name"] == name)
            .copied()
            .collect()
    };
    let request = *find("mutation Relabel")
        .first()
        .expect("the mutation's span");
    let transaction = *find("db.transaction")
        .first()
        .expect("its transaction's span");
    assert_eq!(transaction["parentSpanId"], request["spanId"]);
    let statements = find("db.statement");
    assert!(!statements.is_empty(), "{mutation:#?}");
    for s in statements {
        assert_eq!(s["parentSpanId"], transaction["spanId"], "{s}");
        let sql = attribute(s, "db.query.text").and_then(|v| v["stringValue"].as_str());
        assert!(sql.is_some_and(|q| q.contains("\"items\"")), "{s}");
    }
}
