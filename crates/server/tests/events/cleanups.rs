//! A trigger's own clean-up (Hasura's `cleanup_config`): it runs on its schedule
//! instead of the default retention, pauses and resumes through the metadata
//! API, and `cleanup_event_trigger_logs` runs one now.

use crate::{metadata_with_status as metadata, options, psql, Receiver};
use serde_json::json;
use std::time::{Duration, Instant};

/// Waits until `sql` answers `want` (at most 15 s).
async fn until(url: &str, sql: &str, want: &str) -> String {
    let started = Instant::now();
    loop {
        let got = psql(url, sql.into());
        if got == want || started.elapsed() > Duration::from_secs(15) {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_triggers_own_cleanup_runs_on_its_schedule_and_pauses() {
    let url = crate::delivery::database("events_own_cleanup");
    let receiver = Receiver::default();
    let hook = receiver.start().await;
    let mut o = options(&url);
    o.events.retention = Duration::from_millis(500);
    o.events.cleanup_interval = Duration::from_millis(200);
    let server = grafton_server::start(&o).await.expect("starts");
    let base = format!("http://{}", server.addr);
    let own = json!({"type": "pg_create_event_trigger", "args": {
        "name": "author_added", "table": "authors", "webhook": hook, "insert": {"columns": "*"},
        "cleanup_config": {"schedule": "* * * * * *", "clear_older_than": 0,
                           "clean_invocation_logs": true, "paused": true}}});
    let made = metadata(&base, own).await.1;
    assert_eq!(made["message"], "success", "{made}");
    let default = json!({"type": "pg_create_event_trigger", "args": {
        "name": "article_added", "table": "articles", "webhook": hook, "insert": {"columns": "*"}}});
    assert_eq!(metadata(&base, default).await.1["message"], "success");
    // The log is created with half-full pages (claims and outcomes prune in place).
    let options =
        "SELECT reloptions FROM pg_class WHERE oid = 'grafton_catalog.event_log'::regclass";
    assert_eq!(psql(&url, options.into()), "{fillfactor=50}");
    // A schedule that does not parse is refused.
    let bad = json!({"type": "pg_create_event_trigger", "args": {
        "name": "bad_cleanup", "table": "authors", "webhook": hook, "insert": {"columns": "*"},
        "cleanup_config": {"schedule": "whenever", "clear_older_than": 1}}});
    let (status, refused) = metadata(&base, bad).await;
    assert_eq!(status, 400, "{refused}");

    psql(
        &url,
        "INSERT INTO authors VALUES (20, 'a', NULL), (21, 'b', NULL)".into(),
    );
    psql(&url, "INSERT INTO articles VALUES (30, 1, 'x')".into());
    assert_eq!(receiver.wait_for(3).await.len(), 3);
    let count = |trigger: &str| {
        format!(
            "SELECT (SELECT count(*) FROM grafton_catalog.event_log WHERE trigger_name = '{trigger}')
               || ':' || (SELECT count(*) FROM grafton_catalog.event_invocation_logs
                          WHERE trigger_name = '{trigger}')"
        )
    };
    // The default retention cleans the trigger without a cleanup_config; the
    // paused one keeps its events.
    assert_eq!(until(&url, &count("article_added"), "0:0").await, "0:0");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        psql(&url, count("author_added")),
        "2:2",
        "a paused clean-up ran"
    );

    // Hasura's pause of a trigger without a cleanup_config is refused.
    let pause_default = json!({"type": "pause_event_trigger_cleanups", "args": {
        "event_triggers": [{"source_name": "default", "event_triggers": ["article_added"]}]}});
    let (status, refused) = metadata(&base, pause_default).await;
    assert_eq!(
        (status, &refused["code"]),
        (400, &json!("not-exists")),
        "{refused}"
    );

    // Resumed: its schedule (every second) deletes its events and their logs.
    let resume = json!({"type": "resume_event_trigger_cleanups", "args": {
        "event_triggers": [{"source_name": "default", "event_triggers": ["author_added"]}]}});
    assert_eq!(metadata(&base, resume).await.1["message"], "success");
    let (_, exported) = metadata(&base, json!({"type": "export_metadata", "args": {}})).await;
    let text = exported.to_string();
    assert!(text.contains("\"paused\":false"), "{exported}");
    assert_eq!(until(&url, &count("author_added"), "0:0").await, "0:0");

    // Paused again (every trigger of the source), then cleaned by hand: the
    // events go, their logs stay (clean_invocation_logs false).
    let pause = json!({"type": "pause_event_trigger_cleanups", "args": {
        "event_triggers": {"sources": "*"}}});
    assert_eq!(metadata(&base, pause).await.1["message"], "success");
    psql(&url, "INSERT INTO authors VALUES (22, 'c', NULL)".into());
    assert_eq!(receiver.wait_for(4).await.len(), 4);
    assert_eq!(until(&url, &count("author_added"), "1:1").await, "1:1");
    let now = json!({"type": "cleanup_event_trigger_logs", "args": {
        "event_trigger_name": "author_added", "clear_older_than": 0, "batch_size": 1}});
    let (status, answer) = metadata(&base, now).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer,
        json!({"deleted_event_logs": 1, "deleted_event_invocation_logs": 0})
    );
    assert_eq!(psql(&url, count("author_added")), "0:1");
    let unknown = json!({"type": "cleanup_event_trigger_logs", "args": {
        "event_trigger_name": "nope", "clear_older_than": 0}});
    let (status, refused) = metadata(&base, unknown).await;
    assert_eq!((status, &refused["code"]), (400, &json!("not-exists")));
}
