//! The console in a real headless browser (Debian's Chromium, driven by
//! puppeteer-core from `tests/console/console.mjs`): the page loads with every
//! request outside the server refused, runs a query typed into its editor with the
//! admin secret typed into its headers editor, shows the result, and its docs and
//! explorer list the schema's root fields.

use crate::{own_database, Db, ADMIN_SECRET};
use grafton_server::ServeOptions;
use std::path::{Path, PathBuf};
use std::process::Command;

pub(crate) fn chromium() -> PathBuf {
    let found = ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .map(|name| Path::new("/usr/bin").join(name))
        .find(|p| p.is_file());
    found.unwrap_or_else(|| {
        panic!("the console test needs Chromium: apt-get install chromium (.ci/run installs it)")
    })
}

/// `npm ci` in `tests/console` when puppeteer-core is missing. One at a time: the
/// console and CORS tests run in parallel, and two `npm ci` in one directory
/// remove each other's files.
pub(crate) fn ensure_installed(dir: &Path) {
    static INSTALLING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = INSTALLING.lock().unwrap_or_else(|p| p.into_inner());
    if dir.join("node_modules/puppeteer-core").is_dir() {
        return;
    }
    let out = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund"])
        .current_dir(dir)
        .output()
        .expect("npm is needed for the console test (Node.js 18 or newer)");
    assert!(
        out.status.success(),
        "npm ci in {} failed:\n{}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_runs_a_query_and_lists_the_schema_offline() {
    let url = own_database("console", Db::Sqlite);
    let mut options = ServeOptions {
        database_url: url,
        port: 0,
        ..ServeOptions::default()
    };
    options.http.console = true;
    options.auth.admin_secret = Some(ADMIN_SECRET.into());
    let server = grafton_server::start(&options)
        .await
        .expect("server starts");
    let base = format!("http://{}", server.addr);

    // `/` leads to the console; the page carries no secret.
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let root = client.get(format!("{base}/")).send().await.expect("GET /");
    assert_eq!(root.status(), 303);
    assert_eq!(root.headers()["location"], "/console");
    let page = client
        .get(server.console_url())
        .send()
        .await
        .expect("page")
        .text()
        .await
        .expect("text");
    assert!(!page.contains(ADMIN_SECRET));

    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/console");
    let browser = chromium();
    let out = tokio::task::spawn_blocking(move || {
        ensure_installed(&dir);
        Command::new("node")
            .arg(dir.join("console.mjs"))
            .arg(&base)
            .arg(ADMIN_SECRET)
            .arg(browser)
            .args(["--query", "{ items(order_by: {id: asc}) { id label } }"])
            .args(["--expect", "\"label\": \"two\""])
            .args(["--doc-field", "items", "--doc-field", "items_by_pk"])
            .output()
            .expect("node runs console.mjs")
    })
    .await
    .expect("browser task");
    assert!(
        out.status.success(),
        "console.mjs failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_is_off_unless_enabled() {
    let url = own_database("console_off", Db::Sqlite);
    let server = grafton_server::start(&ServeOptions {
        database_url: url,
        port: 0,
        ..ServeOptions::default()
    })
    .await
    .expect("server starts");
    for path in ["/", "/console", "/console/graphiql.js"] {
        let response = reqwest::get(format!("http://{}{path}", server.addr))
            .await
            .expect("request");
        assert_eq!(response.status(), 404, "{path}");
        if path == "/console" {
            let body = response.text().await.unwrap_or_default();
            assert!(body.contains("--enable-console"), "{body}");
        }
    }
    server.stop().await;
}
