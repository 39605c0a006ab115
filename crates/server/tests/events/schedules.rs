//! Cron triggers and one-off scheduled events: each instant fires once across
//! instances, in Hasura's payload; a failed call is tried again; a firing past
//! its tolerance is dead, never sent; the metadata API shows and removes them,
//! with Hasura's args and answers.

use crate::{options, Receiver};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::time::{Duration, Instant};

async fn metadata(base: &str, body: Value) -> (u16, Value) {
    crate::metadata_with_status(base, body).await
}

/// Waits until `check` holds of the metadata answer to `body` (at most 15 s).
async fn until(base: &str, body: Value, check: impl Fn(&Value) -> bool) -> Value {
    let started = Instant::now();
    loop {
        let (_, answer) = metadata(base, body.clone()).await;
        if check(&answer) || started.elapsed() > Duration::from_secs(15) {
            return answer;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cron_trigger_fires_each_instant_once_across_two_instances() {
    let url = crate::delivery::database("events_cron");
    let receiver = Receiver::default();
    let hook = receiver.start().await;
    let a = grafton_server::start(&options(&url)).await.expect("A");
    let b = grafton_server::start(&options(&url)).await.expect("B");
    let (base_a, base_b) = (format!("http://{}", a.addr), format!("http://{}", b.addr));

    // A schedule that does not parse is refused, and nothing is kept.
    let bad = json!({"type": "create_cron_trigger", "args": {
        "name": "nightly", "webhook": hook, "schedule": "every night", "include_in_metadata": true}});
    let (status, answer) = metadata(&base_a, bad).await;
    assert_eq!(status, 400, "{answer}");
    assert!(
        answer["error"]
            .as_str()
            .unwrap_or("")
            .contains("every night"),
        "{answer}"
    );

    let create = json!({"type": "create_cron_trigger", "args": {
        "name": "tick", "webhook": hook, "schedule": "*/2 * * * * *",
        "payload": {"job": "sync"}, "comment": "every two seconds",
        "headers": [{"name": "x-job-secret", "value": "s3"}],
        "retry_conf": {"num_retries": 0, "timeout_seconds": 5},
        "include_in_metadata": true}});
    let (status, answer) = metadata(&base_a, create.clone()).await;
    assert_eq!((status, &answer), (200, &json!({"message": "success"})));
    let (status, again) = metadata(&base_a, create).await;
    assert_eq!(status, 400, "{again}");
    assert_eq!(again["code"], "already-exists", "{again}");

    // Both instances serve it (B follows A's change) and share its firings.
    let listed = until(
        &base_b,
        json!({"type": "get_cron_triggers", "args": {}}),
        |a| a["cron_triggers"][0]["name"] == "tick",
    )
    .await;
    assert_eq!(listed["cron_triggers"][0]["schedule"], "*/2 * * * * *");
    let calls = receiver.wait_for(3).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let calls = receiver.received().len().max(calls.len());
    let received = receiver.received();
    assert!(calls >= 3, "fired {calls} times in ~7 s");
    let instants: HashSet<String> = (received.iter())
        .map(|c| c.body["scheduled_time"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(
        instants.len(),
        received.len(),
        "each instant fires once: {received:?}"
    );
    // And none is missed between the first and the last.
    let mut times: Vec<chrono::DateTime<chrono::Utc>> =
        instants.iter().filter_map(|t| t.parse().ok()).collect();
    times.sort();
    for pair in times.windows(2) {
        assert_eq!((pair[1] - pair[0]).num_seconds(), 2, "a gap: {times:?}");
    }
    let p = &received[0].body;
    assert_eq!(p["name"], "tick", "{p}");
    assert_eq!(p["payload"], json!({"job": "sync"}), "{p}");
    assert_eq!(p["comment"], "every two seconds", "{p}");
    assert_eq!(p["id"].as_str().map(str::len), Some(36), "{p}");
    let at = p["scheduled_time"].as_str().unwrap_or("");
    let secs: u32 = at.get(17..19).and_then(|s| s.parse().ok()).unwrap_or(1);
    assert!(
        at.len() == 20 && at.ends_with('Z') && secs.is_multiple_of(2),
        "on an even second, as Hasura writes it: {at}"
    );
    assert!(p.get("created_at").is_none(), "a cron body has none: {p}");
    let header = received[0].headers.get("x-job-secret");
    assert_eq!(header.and_then(|v| v.to_str().ok()), Some("s3"));

    // Its firings, delivered and ahead, as Hasura lists them.
    let events = json!({"type": "get_scheduled_events", "args": {
        "type": "cron", "trigger_name": "tick", "status": ["delivered"], "get_rows_count": true}});
    let (_, delivered) = metadata(&base_a, events).await;
    assert!(delivered["count"].as_u64().unwrap_or(0) >= 3, "{delivered}");
    assert_eq!(delivered["events"][0]["status"], "delivered", "{delivered}");
    assert_eq!(delivered["events"][0]["trigger_name"], "tick");
    let ahead = json!({"type": "get_scheduled_events", "args": {
        "type": "cron", "trigger_name": "tick", "status": ["scheduled"], "get_rows_count": true}});
    let (_, scheduled) = metadata(&base_a, ahead).await;
    assert!(
        scheduled["count"].as_u64().unwrap_or(0) >= 50,
        "firings are written ahead: {scheduled}"
    );
    let invocations = json!({"type": "get_scheduled_event_invocations", "args": {
        "type": "cron", "trigger_name": "tick"}});
    let (_, logs) = metadata(&base_a, invocations).await;
    let first = &logs["invocations"][0];
    assert_eq!(first["status"], 200, "{logs}");
    assert!(
        !first.to_string().contains("s3"),
        "no header value in the logs: {first}"
    );

    let unknown =
        json!({"type": "get_scheduled_events", "args": {"type": "cron", "trigger_name": "nope"}});
    let (status, unknown) = metadata(&base_a, unknown).await;
    assert_eq!(
        (status, &unknown["code"]),
        (400, &json!("not-exists")),
        "{unknown}"
    );

    // One kept out of the export (include_in_metadata: false) is still served,
    // listed, and kept when the exported metadata replaces the stored one.
    let hidden = json!({"type": "create_cron_trigger", "args": {
        "name": "yearly", "webhook": hook, "schedule": "0 0 1 1 *", "include_in_metadata": false}});
    assert_eq!(metadata(&base_a, hidden).await.1["message"], "success");
    let (_, exported) = metadata(&base_a, json!({"type": "export_metadata", "args": {}})).await;
    let names: Vec<&str> = (exported["cron_triggers"].as_array().into_iter().flatten())
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(names, ["tick"], "{exported}");
    let replace = json!({"type": "replace_metadata", "args": exported});
    assert_eq!(metadata(&base_a, replace).await.1["message"], "success");
    let (_, listed) = metadata(&base_a, json!({"type": "get_cron_triggers", "args": {}})).await;
    assert_eq!(
        listed["cron_triggers"].as_array().map(Vec::len),
        Some(2),
        "{listed}"
    );

    // Deleted: its waiting firings go, and it fires no more.
    let delete = json!({"type": "delete_cron_trigger", "args": {"name": "tick"}});
    assert_eq!(
        metadata(&base_a, delete.clone()).await.1["message"],
        "success"
    );
    let (status, missing) = metadata(&base_a, delete).await;
    assert_eq!((status, &missing["code"]), (400, &json!("not-exists")));
    let waiting = "SELECT count(*) FROM grafton_catalog.scheduled_events
        WHERE trigger_name = 'tick' AND NOT delivered AND NOT dead";
    let started = Instant::now();
    while crate::psql(&url, waiting.into()) != "0" {
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "its firings stay"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let before = receiver.received().len();
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        receiver.received().len(),
        before,
        "fired after its deletion"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_off_event_fires_is_retried_and_a_stale_one_is_dead() {
    let url = crate::delivery::database("events_one_off");
    let receiver = Receiver::default();
    receiver.answers.lock().expect("answers").push((503, None));
    let hook = receiver.start().await;
    let server = grafton_server::start(&options(&url)).await.expect("starts");
    let base = format!("http://{}", server.addr);

    let soon = (chrono::Utc::now() + chrono::Duration::seconds(1)).to_rfc3339();
    let create = json!({"type": "create_scheduled_event", "args": {
        "webhook": hook, "schedule_at": soon, "payload": {"order": 42},
        "retry_conf": {"num_retries": 1, "retry_interval_seconds": 1}, "comment": "reminder"}});
    let (status, answer) = metadata(&base, create).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["message"], "success");
    let id = answer["event_id"].as_str().unwrap_or_default().to_owned();
    assert_eq!(id.len(), 36, "{answer}");

    // Answered 503 first, then 200: two calls, one id.
    let calls = receiver.wait_for(2).await;
    assert_eq!(calls.len(), 2, "{calls:?}");
    for call in &calls {
        let p = &call.body;
        assert_eq!(p["id"], id.as_str(), "{p}");
        assert_eq!(p["payload"], json!({"order": 42}), "{p}");
        assert_eq!(p["comment"], "reminder", "{p}");
        assert!(p["scheduled_time"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z')));
        assert!(
            p["created_at"].as_str().is_some_and(|t| t.ends_with('Z')),
            "{p}"
        );
        assert!(p.get("name").is_none(), "a one-off body has none: {p}");
    }
    let events = json!({"type": "get_scheduled_events", "args": {"type": "one_off"}});
    let listed = until(&base, events, |a| a["events"][0]["status"] == "delivered").await;
    let event = &listed["events"][0];
    assert_eq!(event["status"], "delivered", "{listed}");
    assert_eq!(event["tries"], 2, "{listed}");
    assert_eq!(event["webhook_conf"], hook.as_str(), "{listed}");
    let logs = json!({"type": "get_scheduled_event_invocations", "args": {
        "type": "one_off", "event_id": id, "get_rows_count": true}});
    let (_, logs) = metadata(&base, logs).await;
    assert_eq!(logs["count"], 2, "{logs}");
    assert_eq!(
        logs["invocations"][0]["status"], 200,
        "newest first: {logs}"
    );
    assert_eq!(logs["invocations"][1]["status"], 503, "{logs}");

    // An hour late with a minute's tolerance: dead, never sent.
    let stale = (chrono::Utc::now() - chrono::Duration::hours(1)).to_rfc3339();
    let create = json!({"type": "create_scheduled_event", "args": {
        "webhook": hook, "schedule_at": stale, "retry_conf": {"tolerance_seconds": 60}}});
    let (_, answer) = metadata(&base, create).await;
    let stale_id = answer["event_id"].as_str().unwrap_or_default().to_owned();
    let dead =
        json!({"type": "get_scheduled_events", "args": {"type": "one_off", "status": ["dead"]}});
    let dead = until(&base, dead, |a| a["events"][0]["id"] == stale_id.as_str()).await;
    assert_eq!(dead["events"][0]["id"], stale_id.as_str(), "{dead}");
    let sent = receiver.received();
    assert!(
        sent.iter().all(|c| c.body["id"] != stale_id.as_str()),
        "a stale event was sent"
    );

    // One far ahead is deleted before it fires; then it does not exist.
    let later = (chrono::Utc::now() + chrono::Duration::hours(1)).to_rfc3339();
    let create =
        json!({"type": "create_scheduled_event", "args": {"webhook": hook, "schedule_at": later}});
    let (_, answer) = metadata(&base, create).await;
    let later_id = answer["event_id"].clone();
    let delete = json!({"type": "delete_scheduled_event", "args": {"type": "one_off", "event_id": later_id}});
    assert_eq!(
        metadata(&base, delete.clone()).await.1["message"],
        "success"
    );
    let ahead = json!({"type": "get_scheduled_events", "args": {"type": "one_off", "status": ["scheduled"]}});
    let (_, ahead) = metadata(&base, ahead).await;
    assert_eq!(ahead["events"], json!([]), "deleted: {ahead}");
    // As Hasura's, deleting it again answers success.
    assert_eq!(metadata(&base, delete).await.1["message"], "success");

    // A time without its offset is refused, precisely.
    let create = json!({"type": "create_scheduled_event", "args": {"webhook": hook, "schedule_at": "tomorrow"}});
    let (status, refused) = metadata(&base, create).await;
    assert_eq!((status, &refused["code"]), (400, &json!("parse-failed")));
}

/// A waiting cron firing deleted by hand is not written again (Hasura's way to
/// skip one run); a changed schedule replaces the waiting firings.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_firing_stays_deleted_and_a_new_schedule_replaces_the_old() {
    let url = crate::delivery::database("events_cron_edit");
    let receiver = Receiver::default();
    let hook = receiver.start().await;
    let server = grafton_server::start(&options(&url)).await.expect("starts");
    let base = format!("http://{}", server.addr);
    let create = |schedule: &str, replace: bool| {
        json!({"type": "create_cron_trigger", "args": {
            "name": "hourly", "webhook": hook, "schedule": schedule,
            "include_in_metadata": true, "replace": replace}})
    };
    // replace: true for a trigger that is not there is Hasura's not-exists.
    let (status, refused) = metadata(&base, create("0 * * * *", true)).await;
    assert_eq!(
        (status, &refused["code"]),
        (400, &json!("not-exists")),
        "{refused}"
    );
    assert_eq!(
        metadata(&base, create("0 * * * *", false)).await.1["message"],
        "success"
    );
    let upcoming = json!({"type": "get_scheduled_events", "args": {
        "type": "cron", "trigger_name": "hourly", "limit": 1}});
    let first = until(&base, upcoming, |a| a["events"][0]["id"].is_string()).await;
    let first = &first["events"][0];
    let (id, at) = (first["id"].clone(), first["scheduled_time"].clone());
    let delete =
        json!({"type": "delete_scheduled_event", "args": {"type": "cron", "event_id": id}});
    assert_eq!(metadata(&base, delete).await.1["message"], "success");
    // Another change writes firings again: the deleted one is not among them.
    let other = json!({"type": "create_cron_trigger", "args": {
        "name": "other", "webhook": hook, "schedule": "0 0 * * *", "include_in_metadata": true}});
    assert_eq!(metadata(&base, other).await.1["message"], "success");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let sql = format!(
        "SELECT count(*) FROM grafton_catalog.scheduled_events
         WHERE trigger_name = 'hourly' AND scheduled_time = '{}'::timestamptz",
        at.as_str().unwrap_or_default()
    );
    assert_eq!(crate::psql(&url, sql), "0", "the deleted firing came back");
    let waiting = "SELECT count(*) FROM grafton_catalog.scheduled_events
        WHERE trigger_name = 'hourly' AND NOT delivered AND NOT dead";
    let n: u32 = crate::psql(&url, waiting.into()).parse().unwrap_or(0);
    assert!(n >= 100, "topped up: {n}");

    // A new schedule: the waiting firings are the new schedule's only.
    assert_eq!(
        metadata(&base, create("30 * * * *", true)).await.1["message"],
        "success"
    );
    let wrong = "SELECT count(*) FILTER (WHERE extract(minute FROM scheduled_time) <> 30)
        || ':' || count(*) FROM grafton_catalog.scheduled_events
        WHERE trigger_name = 'hourly' AND NOT delivered AND NOT dead";
    let started = Instant::now();
    loop {
        let got = crate::psql(&url, wrong.into());
        let (bad, all) = got.split_once(':').unwrap_or(("?", "0"));
        if bad == "0" && all.parse::<u32>().unwrap_or(0) >= 100 {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(15), "{got}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// With no cron trigger and no event trigger, a one-off event is delivered by
/// an instance that was idle when it was created (the creator gone), and
/// cleaned up after the retention.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_off_events_alone_are_delivered_by_any_instance_and_cleaned_up() {
    let url = crate::delivery::database("events_one_off_alone");
    let receiver = Receiver::default();
    let hook = receiver.start().await;
    let mut o = options(&url);
    o.events.retention = Duration::from_millis(500);
    o.events.cleanup_interval = Duration::from_millis(200);
    let idle = grafton_server::start(&o).await.expect("B");
    let creator = grafton_server::start(&o).await.expect("A");
    let base = format!("http://{}", creator.addr);
    let soon = (chrono::Utc::now() + chrono::Duration::seconds(3)).to_rfc3339();
    let create =
        json!({"type": "create_scheduled_event", "args": {"webhook": hook, "schedule_at": soon}});
    let (_, answer) = metadata(&base, create).await;
    let id = answer["event_id"].clone();
    creator.stop().await;
    let calls = receiver.wait_for(1).await;
    let started = Instant::now();
    while receiver.received().is_empty() && started.elapsed() < Duration::from_secs(20) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let calls = if calls.is_empty() {
        receiver.received()
    } else {
        calls
    };
    assert_eq!(calls.len(), 1, "the idle instance delivered nothing");
    assert_eq!(calls[0].body["id"], id);
    let left = "SELECT count(*) || ':' || (SELECT count(*) FROM grafton_catalog.scheduled_event_invocation_logs)
        FROM grafton_catalog.scheduled_events";
    let started = Instant::now();
    loop {
        let got = crate::psql(&url, left.into());
        if got == "0:0" {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "not cleaned up: {got}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(idle);
}
