//! Conformance with real clients: the official GraphQL-over-HTTP server audit
//! (npm `graphql-http`), and subscriptions through `graphql-ws` and Apollo's
//! `subscriptions-transport-ws` (all pinned in `tests/conformance/package.json`),
//! against a real Grafton server on a small SQLite demo database.
//!
//! Needs `node` and `npm` on the PATH; installs the audit's dependencies with
//! `npm ci` in `tests/conformance/` the first time. Fails (never skips) when
//! either tool is missing. Every MUST audit has to pass; SHOULD failures are
//! printed as warnings.

use grafton_demo::DemoOptions;
use grafton_server::{start, ServeOptions};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn conformance_dir() -> PathBuf {
    grafton_testkit::node::conformance_dir()
}

/// Runs a command to completion, panicking with `hint` if it cannot be started.
fn run(cmd: &mut Command, hint: &str) -> Output {
    grafton_testkit::node::run(cmd, hint)
}

fn require_tool(tool: &str) {
    grafton_testkit::node::require_tool(tool)
}

fn ensure_installed(dir: &Path) {
    grafton_testkit::node::ensure_installed(dir)
}

/// A demo database of 50 rows per table, and a server on it (`secret`: its admin
/// secret, if any).
async fn demo_server(name: &str, secret: Option<&str>) -> grafton_server::Running {
    let db = grafton_testkit::sqlite_path(name);
    grafton_demo::create_sqlite(
        &db,
        &DemoOptions {
            rows: 50,
            progress: false,
        },
    )
    .expect("demo database");
    let mut options = ServeOptions {
        database_url: format!("sqlite://{}", db.display()),
        port: 0,
        ..ServeOptions::default()
    };
    options.auth.admin_secret = secret.map(str::to_owned);
    start(&options).await.expect("server starts")
}

/// Runs `node <script> <args>` off the runtime (the script talks to this process's
/// server, so it must not block a worker).
async fn node(script: PathBuf, args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || {
        run(
            Command::new("node").arg(&script).args(&args),
            "node is needed to run the conformance scripts",
        )
    })
    .await
    .expect("node task")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriptions_work_with_graphql_ws_and_subscriptions_transport_ws() {
    let dir = conformance_dir();
    require_tool("node");
    require_tool("npm");
    ensure_installed(&dir);
    let secret = "conformance-secret";
    let server = demo_server("conf-ws", Some(secret)).await;
    let url = format!("ws://{}/v1/graphql", server.addr);
    let out = node(dir.join("ws.mjs"), vec![url, secret.to_owned()]).await;
    server.stop().await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "the WebSocket clients failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graphql_over_http_audit_passes_every_must() {
    let dir = conformance_dir();
    require_tool("node");
    require_tool("npm");
    ensure_installed(&dir);

    let server = demo_server("conf", None).await;
    let out = node(dir.join("audit.mjs"), vec![server.url()]).await;
    server.stop().await;

    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    if !stderr.trim().is_empty() {
        eprintln!("{stderr}");
    }
    assert!(
        out.status.success(),
        "the GraphQL-over-HTTP audit failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
}
