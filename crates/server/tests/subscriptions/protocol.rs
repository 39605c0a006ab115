//! Protocol hygiene: each fault gets the protocol's answer (a close code, an
//! `error` message or `connection_error`), and the server stays up.

use crate::client::{Client, Event, LEGACY, TRANSPORT_WS};
use crate::*;
use std::time::Duration;

fn server() -> &'static Running {
    static SERVER: OnceLock<&'static Running> = OnceLock::new();
    SERVER.get_or_init(|| {
        let mut o = options(Db::Sqlite, Duration::from_secs(1));
        o.http.ws.init_timeout = Duration::from_millis(300);
        o.http.ws.max_operations = 2;
        start(o)
    })
}

/// The close code (and reason) the server ends with.
async fn closed(c: &mut Client) -> (u16, String) {
    match c.next(Duration::from_secs(5)).await {
        Event::Closed(code, reason) => (code, reason),
        other => panic!("expected a close, got {other:?}"),
    }
}

#[test]
fn faults_before_and_during_init_close_with_the_protocols_codes() {
    run(async {
        let s = server();
        // An operation before connection_init.
        let mut c = Client::open(s, Some(TRANSPORT_WS)).await;
        c.start("1", "subscription { items { id } }", json!({}))
            .await;
        assert_eq!(closed(&mut c).await.0, 4401);
        // No connection_init in time.
        let mut c = Client::open(s, Some(TRANSPORT_WS)).await;
        assert_eq!(
            closed(&mut c).await,
            (4408, "Connection initialisation timeout".into())
        );
        // A second connection_init.
        let mut c = Client::admin(s, TRANSPORT_WS).await;
        c.send(json!({"type": "connection_init"})).await;
        assert_eq!(closed(&mut c).await.0, 4429);
        // Not JSON, and an unknown message type.
        let mut c = Client::admin(s, TRANSPORT_WS).await;
        c.send_text("{not json").await;
        assert_eq!(closed(&mut c).await.0, 4400);
        let mut c = Client::admin(s, TRANSPORT_WS).await;
        c.send(json!({"type": "start", "id": "1"})).await;
        assert_eq!(closed(&mut c).await.0, 4400);
        // Wrong credentials.
        let mut c = Client::open(s, Some(TRANSPORT_WS)).await;
        c.send(json!({"type": "connection_init", "payload": {"x-hasura-admin-secret": "wrong"}}))
            .await;
        assert_eq!(closed(&mut c).await.0, 4403);
        let mut c = Client::open(s, Some(LEGACY)).await;
        c.send(json!({"type": "connection_init", "payload": {"headers": {"x-hasura-admin-secret": "wrong"}}}))
            .await;
        match c.next(Duration::from_secs(5)).await {
            Event::Message(m) => assert_eq!(m["type"], "connection_error", "{m}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(closed(&mut c).await.0, 4403);
        // A subprotocol Grafton does not speak: the handshake names none, so the
        // client gives up; none asked for means the legacy protocol.
        assert!(Client::try_open(s, Some("something-else")).await.is_err());
        let c = Client::open(s, None).await;
        assert_eq!(c.protocol, "");
        // The server still answers.
        let mut c = Client::admin(s, TRANSPORT_WS).await;
        c.start(
            "ok",
            "subscription { items_by_pk(id: 4) { label } }",
            json!({}),
        )
        .await;
        assert_eq!(c.result("ok").await["data"]["items_by_pk"]["label"], "four");
    })
}

#[test]
fn bad_operations_get_an_error_and_the_connection_lives_on() {
    run(async {
        let s = server();
        let mut c = Client::admin(s, TRANSPORT_WS).await;
        c.start("a", "subscription { items { nope } }", json!({}))
            .await;
        assert_eq!(
            c.error_code("a", Duration::from_secs(5)).await,
            "validation-failed"
        );
        c.start("b", "subscription {", json!({})).await;
        assert_eq!(
            c.error_code("b", Duration::from_secs(5)).await,
            "parse-failed"
        );
        c.start("c", BY_ID, json!({"id": "x"})).await;
        assert_eq!(
            c.error_code("c", Duration::from_secs(5)).await,
            "validation-failed"
        );
        c.send(json!({"type": "subscribe", "id": "d", "payload": {"query": BY_ID, "variables": {"id": 1}, "operationName": "Nope"}}))
            .await;
        assert_eq!(
            c.error_code("d", Duration::from_secs(5)).await,
            "validation-failed"
        );
        // Two operations at most on this server's connections.
        c.start("e", BY_ID, json!({"id": 1})).await;
        c.result("e").await;
        c.start("f", BY_ID, json!({"id": 2})).await;
        c.result("f").await;
        c.start("g", BY_ID, json!({"id": 3})).await;
        assert_eq!(
            c.error_code("g", Duration::from_secs(5)).await,
            "subscription-limit-exceeded"
        );
        // Completing one makes room.
        c.stop("e").await;
        c.start("g", BY_ID, json!({"id": 3})).await;
        assert_eq!(c.result("g").await["data"]["items_by_pk"]["id"], 3);
        // An id in use closes a graphql-transport-ws connection.
        c.start("g", BY_ID, json!({"id": 4})).await;
        assert_eq!(closed(&mut c).await.0, 4409);
    })
}

const BY_ID: &str = "subscription ($id: Int!) { items_by_pk(id: $id) { id } }";

#[test]
fn sockets_hold_their_place_under_the_connection_cap() {
    run(async {
        let mut o = options(Db::Sqlite, Duration::from_secs(1));
        o.http.connections.max_connections = 2;
        let s = start(o);
        let one = Client::admin(s, TRANSPORT_WS).await;
        let mut two = Client::admin(s, TRANSPORT_WS).await;
        // Past the cap a connection is closed at once: no handshake.
        assert!(Client::try_open(s, Some(TRANSPORT_WS)).await.is_err());
        one.close().await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let mut three = Client::admin(s, TRANSPORT_WS).await;
        three.start("1", BY_ID, json!({"id": 1})).await;
        assert_eq!(three.result("1").await["data"]["items_by_pk"]["id"], 1);
        two.start("1", BY_ID, json!({"id": 2})).await;
        assert_eq!(two.result("1").await["data"]["items_by_pk"]["id"], 2);
    })
}

#[test]
fn a_quiet_legacy_client_stays_connected() {
    run(async {
        let mut o = options(Db::Sqlite, Duration::from_secs(3600));
        o.http.ws.keep_alive = Duration::from_millis(100);
        let s = start(o);
        let mut c = Client::admin(s, LEGACY).await;
        c.start("1", BY_ID, json!({"id": 6})).await;
        c.result("1").await;
        // It sends nothing for twenty keep-alive periods (a legacy client never
        // answers `ka`); its WebSocket answers the server's pings, so it stays.
        assert_eq!(c.next(Duration::from_secs(2)).await, Event::Silent);
        post(
            s,
            "mutation { update_items_by_pk(pk_columns: {id: 6}, _set: {label: \"six\"}) { id } }",
            json!({}),
        )
        .await;
        // Unchanged label: nothing to send, but the socket is still open.
        c.start("2", BY_ID, json!({"id": 5})).await;
        assert_eq!(c.result("2").await["data"]["items_by_pk"]["id"], 5);
    })
}
