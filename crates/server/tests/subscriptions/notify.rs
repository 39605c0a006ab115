//! PostgreSQL's change feed: a write through one instance wakes the live queries of
//! another at once, and so does an external write once `grafton live-triggers`'
//! SQL is installed. The interval is an hour, so only a notification can explain
//! the result.

use crate::client::{Client, TRANSPORT_WS};
use crate::*;
use std::time::Duration;

const BY_PK: &str = "subscription ($id: Int!) { items_by_pk(id: $id) { id label } }";

#[test]
fn a_write_through_another_instance_arrives() {
    run(async {
        let a = start(options(Db::Postgres, Duration::from_secs(3600)));
        let b = start(options(Db::Postgres, Duration::from_secs(3600)));
        let mut c = Client::admin(a, TRANSPORT_WS).await;
        c.start("1", BY_PK, json!({"id": 4})).await;
        assert_eq!(c.result("1").await["data"]["items_by_pk"]["label"], "four");
        // A's feed listens by now (after connecting it wakes every cohort once, which
        // could otherwise deliver the write below without any notification).
        tokio::time::sleep(Duration::from_secs(1)).await;
        // B announces its writes once its feed listens: write until A's subscriber
        // hears (the first write may come before B's feed is up).
        let mut heard = None;
        for attempt in 0..10 {
            let label = format!("from-b-{attempt}");
            let written = post(
                b,
                "mutation ($l: String!) { update_items_by_pk(pk_columns: {id: 4}, _set: {label: $l}) { id } }",
                json!({"l": label}),
            )
            .await;
            assert_eq!(written["data"]["update_items_by_pk"]["id"], 4, "{written}");
            if let crate::client::Event::Message(m) = c.next(Duration::from_secs(1)).await {
                heard = Some(m["payload"]["data"]["items_by_pk"]["label"].clone());
                break;
            }
        }
        let heard = heard.expect("instance A never heard instance B's write");
        assert!(
            heard.as_str().is_some_and(|l| l.starts_with("from-b-")),
            "{heard}"
        );
        // Both feeds listen now: each write through B reaches A's subscriber in well
        // under 100 ms (the median of five, from B's answer to A's message).
        let mut delays = Vec::new();
        for n in 0..5 {
            let label = format!("timed-{n}");
            let written = post(
                b,
                "mutation ($l: String!) { update_items_by_pk(pk_columns: {id: 4}, _set: {label: $l}) { id } }",
                json!({"l": label}),
            )
            .await;
            let sent = std::time::Instant::now();
            assert_eq!(written["data"]["update_items_by_pk"]["id"], 4, "{written}");
            match c.next(Duration::from_secs(2)).await {
                crate::client::Event::Message(m) => {
                    assert_eq!(m["payload"]["data"]["items_by_pk"]["label"], label.as_str());
                }
                other => panic!("write {n} never arrived: {other:?}"),
            }
            delays.push(sent.elapsed());
        }
        delays.sort();
        eprintln!("B's writes reached A's subscriber after {delays:?}");
        assert!(delays[2] < Duration::from_millis(100), "{delays:?}");
        post(
            b,
            "mutation { update_items_by_pk(pk_columns: {id: 4}, _set: {label: \"four\"}) { id } }",
            json!({}),
        )
        .await;
    })
}

#[test]
fn an_external_write_arrives_at_once_with_the_triggers() {
    // The SQL comes from the binary, as a user would get it.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_grafton"))
        .args(["live-triggers", "--database-url"])
        .arg(database_url(Db::Postgres))
        .output()
        .expect("grafton live-triggers");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sql = String::from_utf8(out.stdout).expect("UTF-8");
    assert!(
        sql.contains("CREATE TRIGGER grafton_notify_change"),
        "{sql}"
    );
    grafton_testkit::psql(&database_url(Db::Postgres), sql.as_bytes());
    run(async {
        let server = start(options(Db::Postgres, Duration::from_secs(3600)));
        let mut c = Client::admin(server, TRANSPORT_WS).await;
        c.start("1", BY_PK, json!({"id": 5})).await;
        assert_eq!(c.result("1").await["data"]["items_by_pk"]["label"], "five");
        tokio::time::sleep(Duration::from_secs(1)).await;
        write_directly(
            Db::Postgres,
            "UPDATE items SET label = 'external five' WHERE id = 5;",
        );
        let changed = c.result("1").await;
        assert_eq!(changed["data"]["items_by_pk"]["label"], "external five");
        write_directly(
            Db::Postgres,
            "UPDATE items SET label = 'five' WHERE id = 5;",
        );
    })
}
