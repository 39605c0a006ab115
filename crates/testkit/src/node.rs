//! Node.js for the tests that run real JavaScript clients and servers: the
//! packages of `tests/conformance/package.json` (graphql-js, graphql-http,
//! graphql-ws, …), installed there with `npm ci` the first time. Fails (never
//! skips) when `node` or `npm` is missing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `tests/conformance` at the repository root.
pub fn conformance_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/conformance")
        .canonicalize()
        .expect("tests/conformance exists at the repository root")
}

/// Runs a command to completion, panicking with `hint` if it cannot be started.
pub fn run(cmd: &mut Command, hint: &str) -> Output {
    match cmd.output() {
        Ok(out) => out,
        Err(e) => panic!("cannot run {cmd:?}: {e}. {hint}"),
    }
}

/// Fails when `tool` (node, npm) cannot run.
pub fn require_tool(tool: &str) {
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
const PACKAGES: [&str; 5] = [
    "graphql",
    "graphql-http",
    "graphql-ws",
    "subscriptions-transport-ws",
    "ws",
];

/// Installs the packages into `tests/conformance/node_modules` when one is missing.
/// One test at a time: two `npm ci` in one directory race (each first deletes
/// `node_modules`), which failed a clean CI run with ENOENT.
pub fn ensure_installed(dir: &Path) {
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
