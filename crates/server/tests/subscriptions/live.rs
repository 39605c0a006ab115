//! Live queries: the first result, refresh after a write through Grafton (the
//! interval set far away, so only the change can explain the message), refresh
//! after an external write (within an interval), silence when nothing changed,
//! tenants, and cohorts that end with their subscribers.

use crate::client::{Client, Event, LEGACY, TRANSPORT_WS};
use crate::*;
use std::time::{Duration, Instant};

const BY_PK: &str = "subscription ($id: Int!) { items_by_pk(id: $id) { id label } }";

#[test]
fn a_write_through_grafton_reaches_subscribers_and_others_hear_nothing() {
    run(async {
        for db in BOTH {
            for protocol in [TRANSPORT_WS, LEGACY] {
                // An hour between polls: only the write can trigger the next one.
                let server = start(options(db, Duration::from_secs(3600)));
                let mut c = Client::admin(server, protocol).await;
                c.start("1", BY_PK, json!({"id": 1})).await;
                let first = c.result("1").await;
                assert_eq!(first["data"]["items_by_pk"]["id"], 1, "{db:?} {protocol}");
                let label = format!("{protocol}-{db:?}");
                let written = post(
                    server,
                    "mutation ($l: String!) { update_items_by_pk(pk_columns: {id: 1}, _set: {label: $l}) { id } }",
                    json!({"l": label}),
                )
                .await;
                assert_eq!(written["data"]["update_items_by_pk"]["id"], 1, "{written}");
                let changed = c.result("1").await;
                assert_eq!(changed["data"]["items_by_pk"]["label"], label.as_str());
                // A write to another row of the table makes the cohort poll; this
                // subscriber's answer is unchanged, so it hears nothing.
                post(
                    server,
                    "mutation { update_items_by_pk(pk_columns: {id: 2}, _set: {label: \"two\"}) { id } }",
                    json!({}),
                )
                .await;
                assert_eq!(
                    c.next(Duration::from_secs(1)).await,
                    Event::Silent,
                    "{db:?} {protocol}"
                );
                c.close().await;
            }
        }
    })
}

#[test]
fn an_external_write_arrives_within_an_interval() {
    run(async {
        for db in BOTH {
            let server = start(options(db, Duration::from_millis(300)));
            let mut c = Client::admin(server, TRANSPORT_WS).await;
            c.start("s", BY_PK, json!({"id": 3})).await;
            assert_eq!(c.result("s").await["data"]["items_by_pk"]["label"], "three");
            let started = Instant::now();
            let label = format!("external-{db:?}");
            write_directly(
                db,
                &format!("UPDATE items SET label = '{label}' WHERE id = 3;"),
            );
            let changed = c.result("s").await;
            assert_eq!(changed["data"]["items_by_pk"]["label"], label.as_str());
            assert!(started.elapsed() < Duration::from_secs(5));
            write_directly(db, "UPDATE items SET label = 'three' WHERE id = 3;");
            c.close().await;
        }
    })
}

#[test]
fn tenants_see_only_their_own_rows() {
    run(async {
        for db in BOTH {
            let server = start(options(db, Duration::from_millis(300)));
            let query = "subscription { items(order_by: {id: asc}) { id owner } }";
            let mut a = Client::user(server, TRANSPORT_WS, "a").await;
            let mut b = Client::user(server, LEGACY, "b").await;
            a.start("x", query, json!({})).await;
            b.start("x", query, json!({})).await;
            let ids = |v: Value| -> Vec<i64> {
                v["data"]["items"]
                    .as_array()
                    .expect("rows")
                    .iter()
                    .map(|r| r["id"].as_i64().expect("id"))
                    .collect()
            };
            assert_eq!(ids(a.result("x").await), [1, 2, 3, 4], "{db:?}");
            assert_eq!(ids(b.result("x").await), [5, 6], "{db:?}");
            // One cohort, both subscribers: the same plan for one role.
            assert_eq!(server.engine.live_counts(), (1, 2), "{db:?}");
            // A hidden column is not in the role's subscription schema.
            a.start("y", "subscription { items { secret } }", json!({}))
                .await;
            let code = a.error_code("y", Duration::from_secs(5)).await;
            assert_eq!(code, "validation-failed");
            a.close().await;
            b.close().await;
        }
    })
}

#[test]
fn a_cohort_ends_with_its_last_subscriber() {
    run(async {
        let server = start(options(Db::Sqlite, Duration::from_millis(200)));
        let mut one = Client::admin(server, TRANSPORT_WS).await;
        let mut two = Client::admin(server, TRANSPORT_WS).await;
        one.start("1", BY_PK, json!({"id": 1})).await;
        two.start("1", BY_PK, json!({"id": 2})).await;
        one.result("1").await;
        two.result("1").await;
        assert_eq!(server.engine.live_counts(), (1, 2));
        one.stop("1").await;
        assert!(until(|| server.engine.live_counts() == (1, 1)).await);
        two.close().await;
        assert!(until(|| server.engine.live_counts() == (0, 0)).await);
    })
}

#[test]
fn queries_and_mutations_run_once_over_the_socket() {
    run(async {
        let server = start(options(Db::Sqlite, Duration::from_secs(1)));
        for protocol in [TRANSPORT_WS, LEGACY] {
            let mut c = Client::admin(server, protocol).await;
            c.start("q", "{ items_by_pk(id: 5) { label } }", json!({}))
                .await;
            assert_eq!(c.result("q").await["data"]["items_by_pk"]["label"], "five");
            match c.next(Duration::from_secs(5)).await {
                Event::Message(m) => assert_eq!(
                    (m["type"].as_str(), m["id"].as_str()),
                    (Some("complete"), Some("q"))
                ),
                other => panic!("{other:?}"),
            }
            c.start(
                "m",
                "mutation { update_items(where: {id: {_eq: 6}}, _set: {label: \"six\"}) { affected_rows } }",
                json!({}),
            )
            .await;
            assert_eq!(
                c.result("m").await["data"]["update_items"]["affected_rows"],
                1
            );
            c.close().await;
        }
    })
}

#[test]
fn a_subscription_over_http_is_refused() {
    run(async {
        let server = start(options(Db::Sqlite, Duration::from_secs(1)));
        let body = post(server, "subscription { items { id } }", json!({})).await;
        assert_eq!(
            body["errors"][0]["extensions"]["code"], "validation-failed",
            "{body}"
        );
        let message = body["errors"][0]["message"].as_str().unwrap_or("");
        assert!(message.contains("WebSocket"), "{message}");
    })
}

/// Waits up to 5 s for `check` to hold.
async fn until(check: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[test]
fn a_subscriber_whose_values_fail_does_not_fail_its_batch() {
    run(async {
        // PostgreSQL checks a regular expression only when it runs it.
        let server = start(options(Db::Postgres, Duration::from_millis(300)));
        let query = "subscription ($re: String!) { items(where: {label: {_regex: $re}}, order_by: {id: asc}) { id } }";
        let mut bad = Client::admin(server, TRANSPORT_WS).await;
        let mut good = Client::admin(server, TRANSPORT_WS).await;
        bad.start("1", query, json!({"re": "("})).await;
        good.start("1", query, json!({"re": "^f"})).await;
        let rows = good.result("1").await;
        assert_eq!(
            rows["data"]["items"],
            json!([{"id": 4}, {"id": 5}]),
            "{rows}"
        );
        let failed = bad.result("1").await;
        assert_eq!(
            failed["errors"][0]["extensions"]["code"], "data-exception",
            "{failed}"
        );
        // A write makes the cohort poll both in one batch: the good subscriber
        // still gets its change, not the bad one's error.
        let rename = "mutation ($l: String!) { update_items_by_pk(pk_columns: {id: 4}, _set: {label: $l}) { id } }";
        post(server, rename, json!({"l": "renamed"})).await;
        let rows = good.result("1").await;
        assert_eq!(rows["data"]["items"], json!([{"id": 5}]), "{rows}");
        post(server, rename, json!({"l": "four"})).await;
    })
}

/// A delivery the transport drops unsent (a reload replaced its plan before it was
/// written) says where its subscription was before it: resubscribing from there
/// sends the same answer again, where resubscribing from the subscription's own
/// state (which counts it as sent) sends nothing until the data changes.
#[test]
fn a_delivery_dropped_unsent_is_sent_again_after_resubscribing() {
    run(async {
        let server = start(options(Db::Sqlite, Duration::from_millis(100)));
        let request = grafton_engine::GraphqlRequest {
            query: BY_PK.into(),
            operation_name: None,
            // A row no test writes (other tests here write 1 to 6, and stream 100 on).
            variables: json!({"id": 99}).as_object().cloned().unwrap_or_default(),
            persisted_hash: None,
        };
        let caller = grafton_engine::Caller::default();
        let (tx, mut rx) = tokio::sync::mpsc::channel::<Box<grafton_engine::Delivery>>(8);
        let sink = grafton_engine::Sink::new(tx);
        let next = async |rx: &mut tokio::sync::mpsc::Receiver<_>| {
            tokio::time::timeout(Duration::from_secs(5), rx.recv())
                .await
                .expect("an answer within 5 s")
                .expect("the channel is open")
        };
        let engine = &server.engine;
        let first = engine.subscribe(&request, &caller, sink.clone(), 1).await;
        let first = first.expect("subscribed");
        let dropped: Box<grafton_engine::Delivery> = next(&mut rx).await;
        let body = dropped.result.clone().expect("an answer");
        assert_eq!(body, r#"{"data":{"items_by_pk":null}}"#);
        let before = dropped
            .before
            .clone()
            .expect("a live answer says where it was");
        let resume = first.resume();
        drop(first);

        let counted = engine.resubscribe(&request, &caller, sink.clone(), 2, resume);
        let counted = counted.await.expect("resubscribed");
        let quiet = tokio::time::timeout(Duration::from_millis(600), rx.recv()).await;
        assert!(
            quiet.is_err(),
            "an answer counted as sent is not sent again: {:?}",
            quiet.map(|d| d.map(|d| (d.key, d.result.clone().ok())))
        );
        drop(counted);

        let rewound = engine.resubscribe(&request, &caller, sink, 3, before);
        let _rewound = rewound.await.expect("resubscribed");
        let again = next(&mut rx).await;
        assert_eq!((again.key, again.result.clone().ok()), (3, Some(body)));
    })
}
