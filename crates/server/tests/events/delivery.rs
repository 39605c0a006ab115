//! Every write a trigger covers reaches its webhook once, in Hasura's payload.

use crate::{Receiver, ADMIN_SECRET};
use serde_json::{json, Value};
use std::time::Duration;

pub fn database(name: &'static str) -> String {
    let ddl = crate::common::fixture_sql("metadata_api", true);
    let sqlite = crate::common::fixture_sql("metadata_api", false);
    crate::common::own_databases(name, sqlite, ddl).1
}

pub(crate) async fn post(base: &str, path: &str, headers: &[(&str, &str)], body: Value) -> Value {
    let mut request = reqwest::Client::new()
        .post(format!("{base}{path}"))
        .json(&body);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    request
        .send()
        .await
        .expect("request")
        .json()
        .await
        .expect("JSON")
}

pub(crate) const ADMIN: [(&str, &str); 1] = [("x-hasura-admin-secret", ADMIN_SECRET)];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_reach_the_webhook_in_hasuras_payload() {
    let url = database("events_delivery");
    let receiver = Receiver::default();
    let hook = receiver.start().await;
    let o = crate::options(&url);
    let server = grafton_server::start(&o).await.expect("starts");
    let base = format!("http://{}", server.addr);
    let create = json!({"type": "pg_create_event_trigger", "args": {
        "name": "author_changes", "table": {"schema": "public", "name": "authors"},
        "webhook": hook, "insert": {"columns": "*"}, "update": {"columns": ["name"]},
        "delete": {"columns": "*"},
        "retry_conf": {"num_retries": 2, "interval_sec": 1, "timeout_sec": 5},
        "headers": [{"name": "x-secret", "value": "s3"}]}});
    let answer = post(&base, "/v1/metadata", &ADMIN, create).await;
    assert_eq!(answer, json!({"message": "success"}));

    // Through Grafton, with the caller's session.
    let session = [
        ("x-hasura-admin-secret", ADMIN_SECRET),
        ("x-hasura-role", "admin"),
        ("x-hasura-user-id", "7"),
        (
            "traceparent",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ),
    ];
    let insert = json!({"query": "mutation { insert_authors_one(object: {id: 3, name: \"Edsger\"}) { id } }"});
    let answer = post(&base, "/v1/graphql", &session, insert).await;
    assert_eq!(answer["data"]["insert_authors_one"]["id"], 3, "{answer}");
    let calls = receiver.wait_for(1).await;
    if calls.is_empty() {
        let u = url.clone();
        let state = std::thread::spawn(move || {
            grafton_testkit::psql(&u, b"SELECT (SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'grafton%'), (SELECT count(*) FROM grafton_catalog.event_log), (SELECT string_agg(locked_by || ':' || tries || ':' || dead, ',') FROM grafton_catalog.event_log)")
        }).join().expect("psql");
        panic!("nothing delivered; triggers, events: {state}");
    }
    assert_eq!(calls.len(), 1, "{calls:?}");
    let p = &calls[0].body;
    assert_eq!(p["event"]["op"], "INSERT");
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
        p["event"]["session_variables"]["x-hasura-role"], "admin",
        "{p}"
    );
    // The mutation's trace continues in the event (Hasura's trace_context).
    assert_eq!(
        p["event"]["trace_context"],
        json!({"trace_id": "4bf92f3577b34da6a3ce929d0e0e4736",
               "span_id": "00f067aa0ba902b7", "sampling_state": "1"}),
        "{p}"
    );
    assert_eq!(p["trigger"], json!({"name": "author_changes"}));
    assert_eq!(p["table"], json!({"schema": "public", "name": "authors"}));
    assert_eq!(
        p["delivery_info"],
        json!({"max_retries": 2, "current_retry": 0})
    );
    assert_eq!(p["id"].as_str().map(str::len), Some(36), "a uuid: {p}");
    assert!(
        p["created_at"].as_str().is_some_and(|c| c.ends_with('Z')),
        "{p}"
    );
    assert_eq!(
        calls[0]
            .headers
            .get("x-secret")
            .and_then(|v| v.to_str().ok()),
        Some("s3")
    );

    // From psql: captured too, without a session. An update of a column the
    // trigger does not watch fires nothing; one it watches does, old and new.
    let psql = |sql: &'static str| {
        let url = url.clone();
        std::thread::spawn(move || grafton_testkit::psql(&url, sql.as_bytes()))
            .join()
            .expect("psql");
    };
    psql("INSERT INTO authors VALUES (4, 'Barbara', NULL)");
    psql("UPDATE authors SET email = 'b@example.com' WHERE id = 4");
    psql("UPDATE authors SET name = 'Barbara L.' WHERE id = 4");
    let calls = receiver.wait_for(3).await;
    assert_eq!(calls.len(), 3, "{calls:?}");
    // Deliveries run at once: the two from psql may arrive in either order.
    let op = |op: &str| {
        (calls[1..].iter())
            .find(|c| c.body["event"]["op"] == op)
            .unwrap_or_else(|| panic!("no {op} delivered: {calls:?}"))
    };
    let (insert, update) = (op("INSERT"), op("UPDATE"));
    assert_eq!(insert.body["event"]["session_variables"], Value::Null);
    assert_eq!(insert.body["event"]["trace_context"], Value::Null);
    assert_eq!(update.body["event"]["data"]["old"]["name"], "Barbara");
    assert_eq!(update.body["event"]["data"]["new"]["name"], "Barbara L.");

    // A mutation that fails delivers nothing: the event never committed.
    let failing = json!({"query": "mutation { insert_authors(objects: [{id: 5, name: \"x\"}, {id: 5, name: \"y\"}]) { affected_rows } }"});
    let answer = post(&base, "/v1/graphql", &session, failing).await;
    assert!(answer["errors"].is_array(), "{answer}");

    // A webhook that fails, then answers: tried again after its Retry-After.
    receiver
        .answers
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push((503, Some(1)));
    psql("DELETE FROM authors WHERE id = 4");
    let calls = receiver.wait_for(5).await;
    assert_eq!(calls.len(), 5, "{calls:?}");
    assert_eq!(calls[3].body["event"]["op"], "DELETE");
    assert_eq!(calls[4].body["delivery_info"]["current_retry"], 1);
    assert_eq!(calls[3].body["id"], calls[4].body["id"]);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        receiver.received().len(),
        5,
        "nothing more (the failed insert fired nothing)"
    );
    // Counted in /metrics, and the header's value is in neither it nor the logs.
    let metrics = reqwest::Client::new()
        .get(format!("{base}/metrics"))
        .header("x-hasura-admin-secret", ADMIN_SECRET)
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    assert!(
        metrics.contains("grafton_event_deliveries_total{result=\"delivered\"} 4"),
        "{metrics}"
    );
    assert!(
        metrics.contains("grafton_event_deliveries_total{result=\"retried\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("grafton_event_delivery_seconds_count{trigger=\"author_changes\"} 4"),
        "{metrics}"
    );
    assert!(!metrics.contains("s3"), "a header value in /metrics");
    let u = url.clone();
    let leaked = std::thread::spawn(move || {
        grafton_testkit::psql(&u, b"SELECT count(*) FROM grafton_catalog.event_invocation_logs WHERE request::text LIKE '%s3%'")
    })
    .join()
    .expect("psql");
    assert_eq!(leaked.trim(), "0", "a header value in the invocation logs");

    // Without a traceparent, the event still has a trace: fresh ids, as Hasura's.
    let untraced = [("x-hasura-admin-secret", ADMIN_SECRET)];
    let update = json!({"query": "mutation { update_authors_by_pk(pk_columns: {id: 3}, _set: {name: \"E. W.\"}) { id } }"});
    let answer = post(&base, "/v1/graphql", &untraced, update).await;
    assert_eq!(answer["data"]["update_authors_by_pk"]["id"], 3, "{answer}");
    let calls = receiver.wait_for(6).await;
    let trace = &calls[5].body["event"]["trace_context"];
    let hex = |v: &Value, n: usize| {
        v.as_str()
            .is_some_and(|s| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit()))
    };
    assert!(
        hex(&trace["trace_id"], 32) && hex(&trace["span_id"], 16),
        "{trace}"
    );
    assert!(trace.get("sampling_state").is_none(), "{trace}");
    let logs = std::thread::spawn(move || {
        grafton_testkit::psql(
            &url,
            b"SELECT count(*) FROM grafton_catalog.event_invocation_logs WHERE status = 503",
        )
    })
    .join()
    .expect("psql");
    assert_eq!(logs.trim(), "1");
}

/// Delivered and dead events, and invocation logs, are deleted once older than
/// the retention; an event still due stays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_is_cleaned_up_and_what_is_due_stays() {
    let url = database("events_cleanup");
    let receiver = Receiver::default();
    let hook = receiver.start().await;
    let mut o = crate::options(&url);
    o.events.retention = Duration::from_millis(500);
    o.events.cleanup_interval = Duration::from_millis(200);
    let server = grafton_server::start(&o).await.expect("starts");
    let base = format!("http://{}", server.addr);
    let create = json!({"type": "pg_create_event_trigger", "args": {
        "name": "article_added", "table": "articles", "webhook": hook,
        "insert": {"columns": "*"}, "retry_conf": {"num_retries": 5, "interval_sec": 3600}}});
    assert_eq!(
        post(&base, "/v1/metadata", &ADMIN, create).await,
        json!({"message": "success"})
    );
    // The second event's webhook fails: it stays due (for an hour).
    receiver
        .answers
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .extend([(200, None), (500, None)]);
    let count = |sql: &'static str| {
        let url = url.clone();
        std::thread::spawn(move || grafton_testkit::psql(&url, sql.as_bytes()))
            .join()
            .expect("psql")
            .trim()
            .to_owned()
    };
    count("INSERT INTO articles VALUES (10, 1, 'a')");
    assert_eq!(receiver.wait_for(1).await.len(), 1);
    count("INSERT INTO articles VALUES (11, 1, 'b')");
    assert_eq!(receiver.wait_for(2).await.len(), 2);
    // Scheduled events too: one delivered now, one an hour ahead.
    for at in [
        chrono::Utc::now(),
        chrono::Utc::now() + chrono::Duration::hours(1),
    ] {
        let create = json!({"type": "create_scheduled_event", "args": {
            "webhook": hook, "schedule_at": at.to_rfc3339()}});
        let answer = post(&base, "/v1/metadata", &ADMIN, create).await;
        assert_eq!(answer["message"], "success", "{answer}");
    }
    assert_eq!(receiver.wait_for(3).await.len(), 3);
    let started = std::time::Instant::now();
    loop {
        let left = count("SELECT count(*) FROM grafton_catalog.event_log");
        let logs = count("SELECT count(*) FROM grafton_catalog.event_invocation_logs");
        let scheduled = count("SELECT count(*) FROM grafton_catalog.scheduled_events");
        let scheduled_logs =
            count("SELECT count(*) FROM grafton_catalog.scheduled_event_invocation_logs");
        if left == "1" && logs == "0" && scheduled == "1" && scheduled_logs == "0" {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "not cleaned up: {left} events, {logs} logs, {scheduled} scheduled, {scheduled_logs} logs"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let due = count("SELECT delivered::text || ':' || dead::text FROM grafton_catalog.event_log");
    assert_eq!(due, "false:false", "the event still due was deleted");
    let ahead =
        count("SELECT (scheduled_time > now())::text FROM grafton_catalog.scheduled_events");
    assert_eq!(ahead, "true", "the scheduled event ahead was deleted");
}

/// Another database role that may write the table fires its trigger too: the
/// trigger's function writes the log as Grafton's own user.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_roles_writes_fire_too() {
    let url = database("events_other_role");
    let receiver = Receiver::default();
    let hook = receiver.start().await;
    let o = crate::options(&url);
    let server = grafton_server::start(&o).await.expect("starts");
    let base = format!("http://{}", server.addr);
    let create = json!({"type": "pg_create_event_trigger", "args": {
        "name": "article_added", "table": "articles", "webhook": hook, "insert": {"columns": "*"}}});
    assert_eq!(
        post(&base, "/v1/metadata", &ADMIN, create).await,
        json!({"message": "success"})
    );
    let script = b"DO $r$ BEGIN CREATE ROLE events_app_writer;
        EXCEPTION WHEN duplicate_object THEN NULL; END $r$;
        GRANT USAGE ON SCHEMA public TO events_app_writer;
        GRANT INSERT ON articles TO events_app_writer;
        SET ROLE events_app_writer;
        INSERT INTO articles VALUES (900, 1, 'by another role');";
    std::thread::spawn(move || grafton_testkit::psql(&url, script))
        .join()
        .expect("psql");
    let calls = receiver.wait_for(1).await;
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(
        calls[0].body["event"]["data"]["new"]["title"],
        "by another role"
    );
}

/// A manual invocation and a redelivery through the metadata API, and the event
/// log read back through it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invoked_redelivered_and_read_back() {
    let url = database("events_api");
    let receiver = Receiver::default();
    let hook = receiver.start().await;
    let o = crate::options(&url);
    let server = grafton_server::start(&o).await.expect("starts");
    let base = format!("http://{}", server.addr);
    let meta = |body: Value| post(&base, "/v1/metadata", &ADMIN, body);
    let create = json!({"type": "bulk", "args": [
        {"type": "pg_create_event_trigger", "args": {"name": "by_hand", "table": "authors",
            "webhook": hook, "enable_manual": true}},
        {"type": "pg_create_event_trigger", "args": {"name": "on_insert", "table": "articles",
            "webhook": hook, "insert": {"columns": "*"}}},
    ]});
    assert!(meta(create).await.is_array());
    let invoked = meta(json!({"type": "pg_invoke_event_trigger",
        "args": {"name": "by_hand", "payload": {"id": 1, "name": "Ada"}}}))
    .await;
    let id = invoked["event_id"]
        .as_str()
        .expect("an event id")
        .to_owned();
    let calls = receiver.wait_for(1).await;
    assert_eq!(calls[0].body["event"]["op"], "MANUAL");
    assert_eq!(
        calls[0].body["event"]["data"]["new"],
        json!({"id": 1, "name": "Ada"})
    );
    assert_eq!(calls[0].body["id"], id.as_str());
    // Read back: delivered, one invocation.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let logs = meta(json!({"type": "pg_get_event_logs", "args": {"name": "by_hand"}})).await;
    assert_eq!(logs[0]["id"], id.as_str(), "{logs}");
    assert_eq!(logs[0]["delivered"], true, "{logs}");
    let invocations =
        meta(json!({"type": "pg_get_event_invocation_logs", "args": {"name": "by_hand"}})).await;
    assert_eq!(
        invocations.as_array().map(Vec::len),
        Some(1),
        "{invocations}"
    );
    assert_eq!(invocations[0]["status"], 200, "{invocations}");
    // Redelivered: sent again.
    let answer = meta(json!({"type": "pg_redeliver_event", "args": {"event_id": id}})).await;
    assert_eq!(answer, json!({"message": "success"}));
    assert_eq!(receiver.wait_for(2).await.len(), 2);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let one = meta(json!({"type": "pg_get_event_by_id", "args": {"event_id": id}})).await;
    assert_eq!(one["event"]["id"], id.as_str(), "{one}");
    assert_eq!(
        one["invocations"].as_array().map(Vec::len),
        Some(2),
        "{one}"
    );
    // Refused: a trigger without manual mode, an event that does not exist.
    let refused = meta(json!({"type": "pg_invoke_event_trigger",
        "args": {"name": "on_insert", "payload": {}}}))
    .await;
    assert_eq!(refused["code"], "not-supported", "{refused}");
    let refused = meta(json!({"type": "pg_redeliver_event",
        "args": {"event_id": "00000000-0000-0000-0000-000000000000"}}))
    .await;
    assert_eq!(refused["code"], "not-exists", "{refused}");
}

/// A JWT caller's session (its role and claims) is the event's
/// `session_variables`, as Hasura's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jwt_callers_session_reaches_the_event() {
    const KEY: &str = "an-hs256-key-of-at-least-32-bytes!!";
    let url = database("events_jwt");
    let receiver = Receiver::default();
    let hook = receiver.start().await;
    let mut o = crate::options(&url);
    o.auth.jwt = Some(json!({"type": "HS256", "key": KEY}).to_string());
    let server = grafton_server::start(&o).await.expect("starts");
    let base = format!("http://{}", server.addr);
    let setup = json!({"type": "bulk", "args": [
        {"type": "pg_create_insert_permission", "args": {"table": "authors", "role": "user",
            "permission": {"check": {}, "columns": ["id", "name"]}}},
        {"type": "pg_create_select_permission", "args": {"table": "authors", "role": "user",
            "permission": {"filter": {}, "columns": ["id", "name"]}}},
        {"type": "pg_create_event_trigger", "args": {"name": "author_added", "table": "authors",
            "webhook": hook, "insert": {"columns": "*"}}}]});
    let (status, answer) = crate::metadata_with_status(&base, setup).await;
    assert_eq!(status, 200, "{answer}");
    let claims = json!({"x-hasura-allowed-roles": ["user"], "x-hasura-default-role": "user",
        "x-hasura-user-id": "42", "x-hasura-org": "acme"});
    let token = crate::common::hs256_token(KEY, Duration::from_secs(60), claims);
    let bearer = format!("Bearer {token}");
    let insert =
        json!({"query": "mutation { insert_authors_one(object: {id: 9, name: \"Jo\"}) { id } }"});
    let answer = post(
        &base,
        "/v1/graphql",
        &[("authorization", bearer.as_str())],
        insert,
    )
    .await;
    assert_eq!(answer["data"]["insert_authors_one"]["id"], 9, "{answer}");
    let calls = receiver.wait_for(1).await;
    assert_eq!(calls.len(), 1);
    let session = &calls[0].body["event"]["session_variables"];
    assert_eq!(session["x-hasura-role"], "user", "{session}");
    assert_eq!(session["x-hasura-user-id"], "42", "{session}");
    assert_eq!(session["x-hasura-org"], "acme", "{session}");
    assert!(
        session.get("x-hasura-allowed-roles").is_none(),
        "as Hasura's, the role list is not a session variable: {session}"
    );
}
