//! GraphQL-over-HTTP conformance: runs the official server audit from the npm
//! package `graphql-http` (pinned in `tests/conformance/package.json`) against a
//! real Grafton server on a small SQLite demo database.
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

/// Installs `graphql-http` into `tests/conformance/node_modules` when missing.
fn ensure_installed(dir: &Path) {
    if dir.join("node_modules/graphql-http").is_dir() {
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
    assert!(
        dir.join("node_modules/graphql-http").is_dir(),
        "`npm {sub}` succeeded but node_modules/graphql-http is still missing in {}",
        dir.display()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graphql_over_http_audit_passes_every_must() {
    let dir = conformance_dir();
    require_tool("node");
    require_tool("npm");
    ensure_installed(&dir);

    let db = grafton_testkit::sqlite_path("conf");
    grafton_demo::create_sqlite(
        &db,
        &DemoOptions {
            rows: 50,
            progress: false,
        },
    )
    .expect("demo database");
    let server = start(&ServeOptions {
        database_url: format!("sqlite://{}", db.display()),
        port: 0,
        ..ServeOptions::default()
    })
    .await
    .expect("server starts");
    let url = server.url();

    // The audit talks to this process's server, so it must not block a runtime worker.
    let script = dir.join("audit.mjs");
    let out = tokio::task::spawn_blocking(move || {
        run(
            Command::new("node").arg(&script).arg(&url),
            "node is needed to run the GraphQL-over-HTTP audit",
        )
    })
    .await
    .expect("audit task");
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
