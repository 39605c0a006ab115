//! CORS from real pages in headless Chromium (`tests/console/cors.mjs`): a page on
//! one origin calls Grafton on another, by `fetch` (preflighted) and by WebSocket.
//! The browser, not a header assertion, decides: an allowed origin reads the
//! answer, a refused one cannot, under the default, a `--cors-domain` list with a
//! wildcard, and `--disable-cors`.

use crate::console::{chromium, ensure_installed};
use crate::{free_port, own_database, Db};
use grafton_server::cors::CorsPolicy;
use grafton_server::ServeOptions;
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

async fn serve(url: &str, cors: CorsPolicy) -> grafton_server::Running {
    let mut options = ServeOptions {
        database_url: url.to_owned(),
        port: 0,
        ..ServeOptions::default()
    };
    options.http.cors = cors;
    grafton_server::start(&options)
        .await
        .expect("server starts")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browsers_call_from_allowed_origins_only() {
    let url = own_database("cors_browser", Db::Sqlite);
    let port = free_port();
    let open = serve(&url, CorsPolicy::AllowAll).await;
    let listed = serve(
        &url,
        CorsPolicy::parse(&format!(
            "http://*.foo.test:{port}, http://exact.test:{port}"
        ))
        .expect("list"),
    )
    .await;
    let disabled = serve(
        &url,
        CorsPolicy::Disabled {
            ws_read_cookie: false,
        },
    )
    .await;
    let page = |host: &str| format!("http://{host}:{port}");
    let graphql = |s: &grafton_server::Running| s.url();
    // (page, server, fetch allowed, WebSocket opens)
    let cases = [
        (page("anything.test"), graphql(&open), true, true),
        (page("app.foo.test"), graphql(&listed), true, true),
        (page("exact.test"), graphql(&listed), true, true),
        (page("evil.test"), graphql(&listed), false, false),
        (page("a.b.foo.test"), graphql(&listed), false, false),
        // Disabled: no CORS headers, so the browser refuses the fetch; the
        // upgrade is not checked (as Hasura), but no cookie is read on it.
        (page("anything.test"), graphql(&disabled), false, true),
    ];
    let input: Vec<Value> = cases
        .iter()
        .map(|(page, graphql, _, _)| json!({"page": page, "graphql": graphql}))
        .collect();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/console");
    let browser = chromium();
    let input = Value::from(input).to_string();
    let out = tokio::task::spawn_blocking(move || {
        ensure_installed(&dir);
        Command::new("node")
            .arg(dir.join("cors.mjs"))
            .arg(browser)
            .arg(port.to_string())
            .arg(input)
            .output()
            .expect("node runs cors.mjs")
    })
    .await
    .expect("browser task");
    assert!(
        out.status.success(),
        "cors.mjs failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let results: Vec<Value> = serde_json::from_slice(&out.stdout).expect("JSON results");
    for ((page, graphql, fetches, opens), result) in cases.iter().zip(&results) {
        let fetch = result["fetch"].as_str().unwrap_or("");
        if *fetches {
            assert!(
                fetch.starts_with("200 ") && fetch.contains(r#"{"id":2}"#),
                "{page} → {graphql}: {fetch}"
            );
        } else {
            assert!(fetch.starts_with("blocked"), "{page} → {graphql}: {fetch}");
        }
        let ws = if *opens { "open" } else { "error" };
        assert_eq!(result["ws"], ws, "{page} → {graphql}: {result}");
    }
    assert_eq!(results.len(), cases.len());
    for server in [open, listed, disabled] {
        server.stop().await;
    }
}
