//! Event triggers on SQLite: SQLite triggers write the log into the same file,
//! in the writing transaction (Grafton's writes with their session and trace,
//! another client's without), and the same delivery, retries, log API and
//! clean-up as PostgreSQL's.

use crate::{metadata_with_status as metadata, Receiver, ADMIN_SECRET};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

fn sqlite_file(name: &'static str) -> std::path::PathBuf {
    let ddl = crate::common::fixture_sql("metadata_api", true);
    let sqlite = crate::common::fixture_sql("metadata_api", false);
    crate::common::own_databases(name, sqlite, ddl).0
}

/// Runs `sql` on the file as another client would.
fn write(file: &std::path::Path, sql: &str) {
    let conn = rusqlite::Connection::open(file).expect("open");
    conn.busy_timeout(Duration::from_secs(5))
        .expect("busy timeout");
    conn.execute_batch(sql).expect("write");
}

/// `sql` through `/v2/query`'s `run_sql`, which must answer `CommandOk`.
async fn run_sql(base: &str, sql: &str) {
    let body = json!({"type": "run_sql", "args": {"sql": sql}});
    let answer: Value = reqwest::Client::new()
        .post(format!("{base}/v2/query"))
        .header("x-hasura-admin-secret", ADMIN_SECRET)
        .json(&body)
        .send()
        .await
        .expect("run_sql")
        .json()
        .await
        .expect("JSON");
    assert_eq!(answer["result_type"], "CommandOk", "{answer}");
}

fn count(file: &std::path::Path, sql: &str) -> i64 {
    let conn = rusqlite::Connection::open(file).expect("open");
    conn.query_row(sql, [], |r| r.get(0)).expect("count")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_writes_reach_the_webhook_and_the_log_is_served_and_cleaned() {
    let file = sqlite_file("events_sqlite");
    let receiver = Receiver::default();
    let hook = receiver.start().await;
    let mut o = crate::options(&file.display().to_string());
    o.events.fetch_interval = Duration::from_millis(100);
    o.events.retention = Duration::from_millis(1500);
    o.events.cleanup_interval = Duration::from_millis(200);
    let server = grafton_server::start(&o).await.expect("starts");
    let base = format!("http://{}", server.addr);
    let create = json!({"type": "pg_create_event_trigger", "args": {
        "name": "author_changes", "table": {"schema": "public", "name": "authors"},
        "webhook": hook, "insert": {"columns": "*"}, "update": {"columns": ["name"]},
        "delete": {"columns": "*"}, "enable_manual": true,
        "retry_conf": {"num_retries": 2, "interval_sec": 1, "timeout_sec": 5}}});
    let (status, answer) = metadata(&base, create).await;
    assert_eq!((status, &answer), (200, &json!({"message": "success"})));

    // Through Grafton: the caller's session and trace.
    let insert = json!({"query": "mutation { insert_authors_one(object: {id: 3, name: \"Edsger\"}) { id } }"});
    let answer: Value = reqwest::Client::new()
        .post(format!("{base}/v1/graphql"))
        .header("x-hasura-admin-secret", ADMIN_SECRET)
        .header("x-hasura-user-id", "7")
        .header(
            "traceparent",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        )
        .json(&insert)
        .send()
        .await
        .expect("mutation")
        .json()
        .await
        .expect("JSON");
    assert_eq!(answer["data"]["insert_authors_one"]["id"], 3, "{answer}");
    let calls = receiver.wait_for(1).await;
    assert_eq!(calls.len(), 1, "{calls:?}");
    let p = &calls[0].body;
    assert_eq!(p["event"]["op"], "INSERT", "{p}");
    assert_eq!(p["event"]["data"]["old"], Value::Null);
    assert_eq!(
        p["event"]["data"]["new"],
        json!({"id": 3, "name": "Edsger", "email": null})
    );
    assert_eq!(
        p["event"]["session_variables"]["x-hasura-user-id"], "7",
        "{p}"
    );
    assert_eq!(
        p["event"]["trace_context"]["trace_id"],
        "4bf92f3577b34da6a3ce929d0e0e4736"
    );
    assert_eq!(p["table"], json!({"schema": "main", "name": "authors"}));
    assert_eq!(p["trigger"], json!({"name": "author_changes"}));
    assert_eq!(p["id"].as_str().map(str::len), Some(36), "{p}");
    assert_eq!(
        count(&file, "SELECT count(*) FROM grafton_catalog_event_session"),
        0,
        "the session row outlived its transaction"
    );

    // Another client: captured without a session. An update of a column the
    // trigger does not watch fires nothing; a watched one, old and new; a
    // rolled-back write nothing.
    write(&file, "INSERT INTO authors VALUES (4, 'Barbara', NULL)");
    write(
        &file,
        "UPDATE authors SET email = 'b@example.com' WHERE id = 4",
    );
    write(&file, "UPDATE authors SET name = 'Barbara L.' WHERE id = 4");
    write(&file, "BEGIN; DELETE FROM authors WHERE id = 4; ROLLBACK;");
    let calls = receiver.wait_for(3).await;
    assert_eq!(calls.len(), 3, "{calls:?}");
    // Claimed together, they may arrive in either order (as Hasura's).
    let of = |op: &str| {
        let call = calls[1..].iter().find(|c| c.body["event"]["op"] == op);
        call.map(|c| c.body.clone()).unwrap_or_default()
    };
    assert_eq!(of("INSERT")["event"]["session_variables"], Value::Null);
    assert_eq!(of("UPDATE")["event"]["data"]["old"]["name"], "Barbara");
    assert_eq!(of("UPDATE")["event"]["data"]["new"]["name"], "Barbara L.");

    // A failed delivery is tried again.
    receiver.answers.lock().expect("answers").push((503, None));
    write(&file, "DELETE FROM authors WHERE id = 4");
    let calls = receiver.wait_for(5).await;
    assert_eq!(calls.len(), 5, "{calls:?}");
    assert_eq!(calls[3].body["id"], calls[4].body["id"]);
    assert_eq!(calls[4].body["delivery_info"]["current_retry"], 1);

    // The log through the metadata API.
    let invoke = json!({"type": "pg_invoke_event_trigger", "args": {
        "name": "author_changes", "payload": {"id": 1}}});
    let (_, invoked) = metadata(&base, invoke).await;
    let id = invoked["event_id"].as_str().unwrap_or_default().to_owned();
    assert_eq!(id.len(), 36, "{invoked}");
    let calls = receiver.wait_for(6).await;
    assert_eq!(calls[5].body["event"]["op"], "MANUAL");
    let (_, logs) = metadata(
        &base,
        json!({"type": "pg_get_event_logs", "args": {"name": "author_changes"}}),
    )
    .await;
    assert_eq!(logs.as_array().map(Vec::len), Some(5), "{logs}");
    let by_id = json!({"type": "pg_get_event_by_id", "args": {"event_id": id}});
    let (_, event) = metadata(&base, by_id).await;
    assert_eq!(event["event"]["payload"]["op"], "MANUAL", "{event}");
    assert_eq!(event["invocations"][0]["status"], 200, "{event}");
    let redeliver = json!({"type": "pg_redeliver_event", "args": {"event_id": id}});
    assert_eq!(metadata(&base, redeliver).await.1["message"], "success");
    assert_eq!(receiver.wait_for(7).await.len(), 7);
    // Cron triggers and scheduled events are PostgreSQL's: said so.
    let one_off = json!({"type": "create_scheduled_event", "args": {
        "webhook": hook, "schedule_at": "2030-01-01T00:00:00Z"}});
    let (status, refused) = metadata(&base, one_off).await;
    assert_eq!(
        (status, &refused["code"]),
        (400, &json!("not-supported")),
        "{refused}"
    );

    // Cleaned up once past the retention.
    let started = Instant::now();
    loop {
        let left = count(&file, "SELECT count(*) FROM grafton_catalog_event_log")
            + count(
                &file,
                "SELECT count(*) FROM grafton_catalog_event_invocation_logs",
            );
        if left == 0 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{left} rows left"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Deleted: its SQLite triggers go too.
    let delete = json!({"type": "pg_delete_event_trigger", "args": {"name": "author_changes"}});
    assert_eq!(metadata(&base, delete).await.1["message"], "success");
    let triggers =
        "SELECT count(*) FROM sqlite_schema WHERE type = 'trigger' AND name LIKE 'grafton_event_%'";
    assert_eq!(count(&file, triggers), 0);
}

/// Values keep their JSON types in SQLite payloads (booleans, JSON, blobs as
/// `\x…` text, an infinite real as null), on tables of every width, and an
/// empty `payload` list is an empty object.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_payloads_keep_their_types() {
    let file = sqlite_file("events_sqlite_types");
    let receiver = Receiver::default();
    let hook = receiver.start().await;
    let mut o = crate::options(&file.display().to_string());
    o.events.fetch_interval = Duration::from_millis(100);
    let server = grafton_server::start(&o).await.expect("starts");
    let base = format!("http://{}", server.addr);
    let wide: Vec<String> = (0..70).map(|i| format!("c{i} integer")).collect();
    let ddl = format!(
        "CREATE TABLE things (id integer PRIMARY KEY, flag boolean, doc json, raw blob, r real);
         CREATE TABLE wide (id integer PRIMARY KEY, {}, late boolean)",
        wide.join(", ")
    );
    run_sql(&base, &ddl).await;
    let setup = json!({"type": "bulk", "args": [
        {"type": "pg_create_event_trigger", "args": {"name": "thing_added", "table": "things",
            "webhook": hook, "insert": {"columns": "*"}}},
        {"type": "pg_create_event_trigger", "args": {"name": "thing_touched", "table": "things",
            "webhook": hook, "update": {"columns": "*", "payload": []}}},
        {"type": "pg_create_event_trigger", "args": {"name": "wide_added", "table": "wide",
            "webhook": hook, "insert": {"columns": "*"}}}]});
    let (status, answer) = metadata(&base, setup).await;
    assert_eq!(status, 200, "{answer}");
    write(
        &file,
        "INSERT INTO things VALUES (1, 1, '{\"k\": [1, 2]}', x'00ff', 1e308 * 10);
         UPDATE things SET flag = 0 WHERE id = 1;
         INSERT INTO wide (id, c0, c69, late) VALUES (1, 5, 6, 1);",
    );
    let calls = receiver.wait_for(3).await;
    assert_eq!(calls.len(), 3, "{calls:?}");
    let of = |name: &str| {
        let call = calls.iter().find(|c| c.body["trigger"]["name"] == name);
        call.map(|c| c.body["event"]["data"].clone())
            .unwrap_or_default()
    };
    assert_eq!(
        of("thing_added")["new"],
        json!({"id": 1, "flag": true, "doc": {"k": [1, 2]}, "raw": "\\x00ff", "r": null})
    );
    assert_eq!(of("thing_touched"), json!({"old": {}, "new": {}}));
    let row = &of("wide_added")["new"];
    assert_eq!(row.as_object().map(|o| o.len()), Some(72), "{row}");
    assert_eq!(
        (row["c0"].clone(), row["c69"].clone(), row["late"].clone()),
        (json!(5), json!(6), json!(true))
    );
}

/// Migrations on a triggered SQLite table: a column dropped through `run_sql`
/// (SQLite refuses it while a trigger names the column: Grafton's are lifted
/// for the SQL and put back), and a table rebuilt by another tool (which drops
/// the triggers with it: Grafton sees the schema change and reinstalls them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_migrations_keep_the_capture() {
    let file = sqlite_file("events_sqlite_migrations");
    let receiver = Receiver::default();
    let hook = receiver.start().await;
    let mut o = crate::options(&file.display().to_string());
    o.events.fetch_interval = Duration::from_millis(100);
    let server = grafton_server::start(&o).await.expect("starts");
    let base = format!("http://{}", server.addr);
    let create = json!({"type": "pg_create_event_trigger", "args": {
        "name": "author_added", "table": "authors", "webhook": hook, "insert": {"columns": "*"}}});
    assert_eq!(metadata(&base, create).await.1["message"], "success");

    run_sql(&base, "ALTER TABLE authors DROP COLUMN email").await;
    write(&file, "INSERT INTO authors VALUES (10, 'Ken')");
    let calls = receiver.wait_for(1).await;
    assert_eq!(calls.len(), 1, "the drop stopped the capture");
    assert_eq!(
        calls[0].body["event"]["data"]["new"],
        json!({"id": 10, "name": "Ken"})
    );

    // Rebuilt by another tool, as SQLite's documentation does it.
    write(
        &file,
        "PRAGMA foreign_keys = OFF;
         BEGIN;
         CREATE TABLE authors_new (id integer NOT NULL PRIMARY KEY, name text NOT NULL, born integer);
         INSERT INTO authors_new (id, name) SELECT id, name FROM authors;
         DROP TABLE authors;
         ALTER TABLE authors_new RENAME TO authors;
         COMMIT;",
    );
    let installed =
        "SELECT count(*) FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = 'authors'";
    let started = Instant::now();
    while count(&file, installed) == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "not reinstalled"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The reinstall follows the reload, which sees the new column.
    let started = Instant::now();
    loop {
        write(
            &file,
            "DELETE FROM authors WHERE id = 11; INSERT INTO authors VALUES (11, 'Dennis', 1941)",
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
        let calls = receiver.received();
        let last = calls.last().map(|c| c.body["event"]["data"]["new"].clone());
        if last == Some(json!({"id": 11, "name": "Dennis", "born": 1941})) {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(15), "{last:?}");
    }
    // Once more, long after the loop's first look: seen by the schema's version.
    tokio::time::sleep(Duration::from_millis(500)).await;
    write(
        &file,
        "PRAGMA foreign_keys = OFF;
         BEGIN;
         CREATE TABLE authors_new (id integer NOT NULL PRIMARY KEY, name text NOT NULL,
           born integer, died integer);
         INSERT INTO authors_new (id, name, born) SELECT id, name, born FROM authors;
         DROP TABLE authors;
         ALTER TABLE authors_new RENAME TO authors;
         COMMIT;",
    );
    let started = Instant::now();
    loop {
        write(&file, "DELETE FROM authors WHERE id = 12; INSERT INTO authors VALUES (12, 'Grace', 1906, 1992)");
        tokio::time::sleep(Duration::from_millis(300)).await;
        let calls = receiver.received();
        let last = calls.last().map(|c| c.body["event"]["data"]["new"].clone());
        if last == Some(json!({"id": 12, "name": "Grace", "born": 1906, "died": 1992})) {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(15), "{last:?}");
    }
}
