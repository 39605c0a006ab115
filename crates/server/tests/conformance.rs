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
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/conformance")
        .canonicalize()
        .expect("tests/conformance exists at the repository root")
}

/// Runs a command to completion, panicking with `hint` if it cannot be started.
fn run(cmd: &mut Command, hint: &str) -> Output {
    match cmd.output() {
        Ok(out) => out,
        Err(e) => panic!("cannot run {cmd:?}: {e}. {hint}"),
    }
}

fn require_tool(tool: &str) {
    let out = run(
        Command::new(tool).arg("--version"),
        "The GraphQL-over-HTTP conformance test needs Node.js (node and npm) on the PATH: \
         install Node.js 18 or newer (e.g. apt-get install nodejs npm)",
    );
    assert!(
        out.status.success(),
        "`{tool} --version` failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The npm packages the scripts import.
const PACKAGES: [&str; 4] = [
    "graphql-http",
    "graphql-ws",
    "subscriptions-transport-ws",
    "ws",
];

/// Installs the packages into `tests/conformance/node_modules` when one is missing.
/// One test at a time: two `npm ci` in one directory race (each first deletes
/// `node_modules`), which failed a clean CI run with ENOENT.
fn ensure_installed(dir: &Path) {
    static INSTALL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    let missing = |p: &&str| !dir.join("node_modules").join(p).is_dir();
    if !PACKAGES.iter().any(missing) {
        return;
    }
    let sub = if dir.join("package-lock.json").is_file() {
        "ci"
    } else {
        "install"
    };
    let out = run(
        Command::new("npm")
            .args([sub, "--no-audit", "--no-fund"])
            .current_dir(dir),
        "npm is needed to install graphql-http for the conformance test",
    );
    assert!(
        out.status.success(),
        "`npm {sub}` in {} failed ({}):\n{}\n{}",
        dir.display(),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if let Some(p) = PACKAGES.iter().find(|p| missing(p)) {
        panic!(
            "`npm {sub}` succeeded but node_modules/{p} is still missing in {}",
            dir.display()
        );
    }
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
