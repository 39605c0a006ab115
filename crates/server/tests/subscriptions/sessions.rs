//! What a connection's session bounds: a JWT's expiry ends its subscriptions, and
//! `subscription_limit` counts a session's live subscriptions over every
//! connection.

use crate::client::{Client, Event, LEGACY, TRANSPORT_WS};
use crate::*;
use std::time::Duration;

const KEY: &str = "a-subscriptions-secret-of-32-bytes-or-more";
const BY_PK: &str = "subscription ($id: Int!) { items_by_pk(id: $id) { id } }";

fn token(expires_in: Duration) -> String {
    let claims = json!({
        "x-hasura-allowed-roles": ["user"],
        "x-hasura-default-role": "user",
        "x-hasura-user-id": "a",
    });
    common::hs256_token(KEY, expires_in, claims)
}

#[test]
fn an_expiring_jwt_ends_the_subscriptions_then_the_connection() {
    run(async {
        let mut o = options(Db::Sqlite, Duration::from_secs(1));
        o.auth.jwt = Some(json!({"type": "HS256", "key": KEY}).to_string());
        let server = start(o);
        for protocol in [TRANSPORT_WS, LEGACY] {
            let bearer = format!("Bearer {}", token(Duration::from_secs(2)));
            let payload = json!({"headers": {"Authorization": bearer}});
            let mut c = Client::connect(server, protocol, payload).await;
            c.start("mine", BY_PK, json!({"id": 1})).await;
            assert_eq!(c.result("mine").await["data"]["items_by_pk"]["id"], 1);
            // Until the token's end the subscription stays; then an error, then the close.
            let code = c.error_code("mine", Duration::from_secs(6)).await;
            assert_eq!(code, "invalid-jwt", "{protocol}");
            match c.next(Duration::from_secs(5)).await {
                Event::Closed(code, _) => assert_eq!(code, 4403, "{protocol}"),
                other => panic!("{protocol}: {other:?}"),
            }
        }
        // A token that has expired already is refused at connection_init.
        let mut c = Client::open(server, Some(TRANSPORT_WS)).await;
        let bearer = format!("Bearer {}", token(Duration::ZERO));
        tokio::time::sleep(Duration::from_secs(1)).await;
        c.send(
            json!({"type": "connection_init", "payload": {"headers": {"Authorization": bearer}}}),
        )
        .await;
        assert!(matches!(
            c.next(Duration::from_secs(5)).await,
            Event::Closed(4403, _)
        ));
    })
}

#[test]
fn a_roles_subscription_limit_counts_every_connection() {
    run(async {
        let mut o = options(Db::Sqlite, Duration::from_secs(1));
        o.config.api_limits = serde_norway::from_str("subscription_limit: {per_role: {user: 2}}")
            .expect("api_limits");
        let server = start(o);
        let mut one = Client::user(server, TRANSPORT_WS, "a").await;
        let mut two = Client::user(server, TRANSPORT_WS, "a").await;
        one.start("1", BY_PK, json!({"id": 1})).await;
        one.result("1").await;
        two.start("1", BY_PK, json!({"id": 2})).await;
        two.result("1").await;
        two.start("2", BY_PK, json!({"id": 3})).await;
        let code = two.error_code("2", Duration::from_secs(5)).await;
        assert_eq!(code, "subscription-limit-exceeded");
        // Admin is not the role; and a place freed is a place taken.
        let mut admin = Client::admin(server, TRANSPORT_WS).await;
        admin.start("1", BY_PK, json!({"id": 4})).await;
        admin.result("1").await;
        one.stop("1").await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        two.start("3", BY_PK, json!({"id": 3})).await;
        assert_eq!(two.result("3").await["data"]["items_by_pk"]["id"], 3);
    })
}
