//! Start-up failures are one clear line, not a panic or a multi-line dump.

use grafton_server::ServeOptions;
use std::time::Duration;

async fn start_error(database_url: String) -> String {
    let options = ServeOptions {
        database_url: database_url.clone(),
        port: 0,
        ..Default::default()
    };
    let result = tokio::time::timeout(Duration::from_secs(60), grafton_server::start(&options))
        .await
        .unwrap_or_else(|_| panic!("start({database_url}) did not fail within 60 s"));
    match result {
        Ok(running) => {
            let addr = running.addr;
            running.stop().await;
            panic!("start({database_url}) succeeded (listening on {addr})")
        }
        Err(e) => e.to_string(),
    }
}

fn assert_one_line(message: &str) {
    assert!(!message.trim().is_empty(), "empty error message");
    assert!(
        !message.contains('\n') && !message.contains('\r'),
        "the error is not a single line: {message:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_postgres_is_a_one_line_error() {
    // Port 1 on localhost: connection refused.
    let message = start_error("postgres://grafton@127.0.0.1:1/nowhere".to_owned()).await;
    assert_one_line(&message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_sqlite_file_is_a_one_line_error() {
    let dir = grafton_testkit::sqlite_path("missing");
    let in_missing_dir = dir.with_extension("d").join("absent.db");
    let message = start_error(in_missing_dir.display().to_string()).await;
    assert_one_line(&message);

    let absent = grafton_testkit::sqlite_path("absent");
    let message = start_error(absent.display().to_string()).await;
    assert_one_line(&message);
    assert!(
        !absent.exists(),
        "starting on a missing SQLite file must not create it: {}",
        absent.display()
    );
    let message = start_error(format!("sqlite://{}", absent.display())).await;
    assert_one_line(&message);
}
