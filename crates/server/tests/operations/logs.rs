//! Request logs as JSON lines, request ids, slow-request warnings with their SQL,
//! and `Server-Timing`, from the real binary's stderr.

use crate::lifecycle::{database_with_slow_view, Process};
use crate::{free_port, ADMIN_SECRET};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// The log's JSON lines that carry `request_id == id` (waiting for them a little:
/// stderr is read by another thread).
fn lines_for(process: &Process, id: &str) -> Vec<Value> {
    let started = Instant::now();
    loop {
        let log = process.log();
        let found: Vec<Value> = log
            .lines()
            .map(|l| {
                serde_json::from_str::<Value>(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"))
            })
            .filter(|v| v["request_id"] == id)
            .collect();
        if !found.is_empty() || started.elapsed() > Duration::from_secs(5) {
            return found;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_request_logs_ids_slow_sql_and_server_timing() {
    let url = database_with_slow_view("logs", 0.3);
    let process = Process::serve(
        &url,
        free_port(),
        &[
            "--log-format",
            "json",
            "--log-requests",
            "--slow-request-ms",
            "200",
            "--server-timing",
        ],
    );
    let client = reqwest::Client::new();
    let ask = |id: Option<&'static str>, query: &'static str| {
        let mut request = client
            .post(process.url())
            .header("x-hasura-admin-secret", ADMIN_SECRET)
            .json(&json!({"query": query, "operationName": "Q"}));
        if let Some(id) = id {
            request = request.header("x-request-id", id);
        }
        request.send()
    };

    // A fast query: one info line, its id echoed, its timing in the header.
    let fast = ask(Some("fast-1"), "query Q { items_by_pk(id: 1) { label } }")
        .await
        .expect("request");
    assert_eq!(fast.headers()["x-request-id"], "fast-1");
    let timing = fast.headers()["server-timing"]
        .to_str()
        .expect("ascii")
        .to_owned();
    assert!(
        timing.contains("plan;dur=") && timing.contains("db;dur=") && timing.contains("total;dur="),
        "{timing}"
    );
    let lines = tokio::task::block_in_place(|| lines_for(&process, "fast-1"));
    assert_eq!(lines.len(), 1, "{}", process.log());
    let line = &lines[0];
    assert_eq!(line["level"], "INFO", "{line}");
    assert_eq!(line["target"], "grafton::request", "{line}");
    assert_eq!(line["role"], "admin");
    assert_eq!(line["operation"], "query");
    assert_eq!(line["name"], "Q");
    assert_eq!(line["status"], 200);
    assert_eq!(line["code"], "");
    assert!(line["total_ms"].as_f64().is_some_and(|t| t > 0.0), "{line}");
    assert!(line["db_ms"].as_f64().is_some_and(|t| t > 0.0), "{line}");
    assert!(line.get("sql").is_none(), "{line}");

    // A slow one: a warning with its SQL instead.
    let slow = ask(Some("slow-1"), "query Q { slow { id } }")
        .await
        .expect("request");
    assert_eq!(slow.status(), 200);
    let lines = tokio::task::block_in_place(|| lines_for(&process, "slow-1"));
    assert_eq!(lines.len(), 1, "{}", process.log());
    assert_eq!(lines[0]["level"], "WARN");
    assert_eq!(lines[0]["message"], "slow request");
    assert!(lines[0]["total_ms"].as_f64().is_some_and(|t| t >= 300.0));
    let sql = lines[0]["sql"].as_str().unwrap_or("");
    assert!(sql.contains("\"slow\""), "the SQL names the view: {sql}");

    // No id given: one is made, and the error code is logged.
    let failed = ask(None, "query Q { nope }").await.expect("request");
    let id = failed.headers()["x-request-id"]
        .to_str()
        .expect("ascii")
        .to_owned();
    assert_eq!(id.len(), 32);
    let lines = tokio::task::block_in_place(|| lines_for(&process, &id));
    assert_eq!(lines[0]["code"], "validation-failed", "{}", lines[0]);
    // Refused before authentication: no role to name.
    let refused = client
        .post(process.url())
        .header("x-hasura-admin-secret", "wrong")
        .header("x-request-id", "refused-1")
        .json(&json!({"query": "{ items { id } }"}))
        .send()
        .await
        .expect("request");
    assert_eq!(refused.status(), 401);
    let lines = tokio::task::block_in_place(|| lines_for(&process, "refused-1"));
    assert_eq!(
        (&lines[0]["role"], &lines[0]["code"]),
        (&json!("-"), &json!("access-denied"))
    );
    // Every line on stderr is JSON, the banner included.
    assert!(process
        .log()
        .contains("\"message\":\"Grafton is serving GraphQL at"));
}
