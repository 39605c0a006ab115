//! The README's commands and examples, run from the README's own text wherever a
//! test can (issue 28): its GraphQL operations against the demo, the `grafton`
//! lines of "Using it" in a directory holding `./app.db`, and the "Moving from
//! Hasura" steps on a real Hasura project. Where a line cannot run as written (a
//! server that never exits, a database name), the test says which words it swaps,
//! and fails if the README no longer has them, so the two cannot drift apart.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

fn readme() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    std::fs::read_to_string(path).expect("README.md")
}

/// The fenced blocks in `lang` (```lang), with the line each starts on.
fn blocks(text: &str, lang: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        match (&mut current, line.trim_end()) {
            (None, l) if l == format!("```{lang}") => current = Some((i + 1, String::new())),
            (Some(_), "```") => out.extend(current.take()),
            (Some((_, body)), l) => {
                body.push_str(l);
                body.push('\n');
            }
            _ => {}
        }
    }
    out
}

/// The block in `lang` that contains `needle`.
fn block_with(text: &str, lang: &str, needle: &str) -> String {
    (blocks(text, lang).into_iter())
        .map(|(_, b)| b)
        .find(|b| b.contains(needle))
        .unwrap_or_else(|| panic!("README has no ```{lang} block with {needle}"))
}

/// A directory for one test, removed by the OS's temp cleaning.
fn workdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("grafton-readme-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("work dir");
    dir
}

/// `sh -c script` in `dir`, with this build's `grafton` first on the PATH.
fn shell(dir: &Path, script: &str, env: &[(&str, &str)]) -> (bool, String, String) {
    let bin = Path::new(env!("CARGO_BIN_EXE_grafton"));
    let path = format!(
        "{}:{}",
        bin.parent().expect("bin dir").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env("PATH", path)
        .envs(env.iter().copied())
        .output()
        .expect("sh runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The demo database (a few hundred rows per table) at `path`.
fn demo(path: &Path) {
    let options = grafton_demo::DemoOptions {
        rows: 300,
        progress: false,
    };
    grafton_demo::create_sqlite(path, &options).expect("demo database");
}

/// Replaces `from` by `to` in `text`, which must contain it.
fn swap(text: &str, from: &str, to: &str) -> String {
    assert!(
        text.contains(from),
        "README changed: '{from}' is gone from\n{text}"
    );
    text.replace(from, to)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_graphql_examples_run_on_the_demo() {
    let dir = workdir("graphql");
    let db = dir.join("demo.db");
    demo(&db);
    let server = grafton_server::start(&grafton_server::ServeOptions {
        database_url: db.display().to_string(),
        port: 0,
        ..grafton_server::ServeOptions::default()
    })
    .await
    .expect("server starts");
    let mut ran = 0;
    for (line, block) in blocks(&readme(), "graphql") {
        // Field signatures (`venues(where: …): [venues!]!`) are not operations.
        let first = block.trim_start();
        let operation = ["{", "query", "mutation", "subscription"]
            .iter()
            .any(|k| first.starts_with(k));
        if !operation {
            continue;
        }
        let body: Value = reqwest::Client::new()
            .post(server.url())
            .json(&json!({ "query": block }))
            .send()
            .await
            .expect("answer")
            .json()
            .await
            .expect("json");
        assert!(body.get("errors").is_none(), "README line {line}: {body}");
        assert!(body["data"].is_object(), "README line {line}: {body}");
        ran += 1;
    }
    assert!(ran >= 2, "only {ran} GraphQL examples found");
    server.stop().await;
}

#[test]
fn the_using_it_commands_run_as_written() {
    let dir = workdir("cli");
    demo(&dir.join("app.db"));
    let block = block_with(&readme(), "sh", "grafton schema");
    let mut ran = 0;
    for line in block.lines() {
        // Servers never exit, and the others need a PostgreSQL named mydb.
        let offline = ["grafton schema ", "grafton sql "]
            .iter()
            .any(|c| line.starts_with(c));
        if !offline {
            continue;
        }
        let (ok, stdout, stderr) = shell(&dir, line, &[]);
        assert!(ok, "{line}\n{stderr}");
        if line.contains("> schema.graphql") {
            let sdl = std::fs::read_to_string(dir.join("schema.graphql")).expect("schema.graphql");
            assert!(sdl.contains("type venues"), "{line}: {sdl}");
        } else {
            assert!(stdout.contains("SELECT"), "{line}: {stdout}");
        }
        ran += 1;
    }
    assert_eq!(ran, 2, "the README's schema and sql lines");
}

#[test]
fn the_demo_goes_into_postgres_as_written() {
    let block = block_with(&readme(), "sh", "--postgres-sql");
    let line = (block.lines())
        .find(|l| l.contains("--postgres-sql"))
        .expect("line");
    let url = grafton_testkit::fresh_database("readme_demo");
    // `mydb` is the reader's database: the test's here.
    let line = swap(line, "psql mydb", "psql \"$DB\"");
    let line = swap(&line, "--rows 100000", "--rows 300");
    let (ok, _, stderr) = shell(&workdir("pgdemo"), &line, &[("DB", &url)]);
    assert!(ok, "{line}\n{stderr}");
    assert_eq!(
        grafton_testkit::query_one(&url, "SELECT count(*) FROM venues"),
        "300"
    );
}

#[test]
fn moving_from_hasura_as_written_on_a_real_project() {
    let dir = workdir("hasura");
    let project = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hasura/uwflow/hasura");
    let link = dir.join("hasura");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&project, &link).expect("hasura/ beside the commands");
    let url = grafton_testkit::fresh_database("readme_shop");
    let block = block_with(&readme(), "sh", "--hasura-metadata");
    // The test makes the database (createdb needs the reader's server); `shop` is
    // the test's database; `serve` runs for ever, so `schema` loads the same
    // metadata and prints what would be served.
    let script = swap(&block, "createdb shop\n", "");
    let script = swap(&script, "-d shop", "-d \"$DB\"");
    let script = swap(&script, "postgres:///shop", "\"$DB\"");
    let script = swap(&script, "grafton serve", "grafton schema");
    let script = swap(
        &script,
        " \\\n  --admin-secret \"$HASURA_GRAPHQL_ADMIN_SECRET\"",
        " > served.graphql",
    );
    let (ok, _, stderr) = shell(&dir, &script, &[("DB", &url)]);
    assert!(ok, "{script}\n{stderr}");
    let sdl = std::fs::read_to_string(dir.join("served.graphql")).expect("served.graphql");
    for field in ["course(", "prof(", "aggregate_course_rating("] {
        assert!(
            sdl.contains(field),
            "{field} missing from the served schema"
        );
    }
}
