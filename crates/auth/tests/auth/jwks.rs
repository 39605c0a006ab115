//! JWKS: served by a local HTTP server (caching, refetching, failures) or read from a file.

use std::sync::Arc;
use std::time::Duration;

use grafton_auth::{AuthConfig, Authenticator, ConfigError, Role};
use jsonwebtoken::{Algorithm, EncodingKey};
use serde_json::json;

use crate::common::*;

fn rs256(kid: &str) -> String {
    sign(Algorithm::RS256, &RSA.encoding(), Some(kid), &claims())
}

#[tokio::test]
async fn keys_are_cached_for_max_age_then_refetched() {
    let server = JwksServer::start(
        json!({"keys": [RSA.jwk("k1", Some("RS256"))]}),
        Some("public, max-age=1"),
    )
    .await;
    let auth = jwt_auth(json!({"jwk_url": server.url})).await;
    assert_eq!(server.fetches(), 1, "fetched once at start-up");
    for _ in 0..5 {
        assert_eq!(
            ok(&auth, &bearer(&rs256("k1"))).await.role,
            Role::Named("user".into())
        );
    }
    assert_eq!(server.fetches(), 1, "fresh keys are not refetched");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    ok(&auth, &bearer(&rs256("k1"))).await;
    assert_eq!(server.fetches(), 2, "stale keys are refetched");
    ok(&auth, &bearer(&rs256("k1"))).await;
    assert_eq!(server.fetches(), 2);
}

#[tokio::test]
async fn keys_without_cache_headers_are_kept() {
    let server = JwksServer::start(json!({"keys": [RSA.jwk("k1", None)]}), None).await;
    let auth = jwt_auth(json!({"jwk_url": server.url})).await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    for _ in 0..3 {
        ok(&auth, &bearer(&rs256("k1"))).await;
    }
    assert_eq!(server.fetches(), 1);
}

#[tokio::test]
async fn unknown_kid_refetches_at_most_once_per_interval() {
    let server =
        JwksServer::start(json!({"keys": [RSA.jwk("k1", None)]}), Some("max-age=3600")).await;
    let auth = jwt_auth(json!({"jwk_url": server.url})).await;
    assert_eq!(server.fetches(), 1);
    // The provider rotates: k2 is published; a token naming it triggers a refetch.
    server.set_body(json!({"keys": [RSA.jwk("k1", None), RSA_OTHER.jwk("k2", None)]}));
    let token = sign(
        Algorithm::RS256,
        &RSA_OTHER.encoding(),
        Some("k2"),
        &claims(),
    );
    ok(&auth, &bearer(&token)).await;
    assert_eq!(server.fetches(), 2);
    // Made-up kids right after cannot make us fetch again.
    for kid in ["k3", "k4", "k5"] {
        rejects(&auth, &rs256(kid), "no key in the JWKS has the token's kid").await;
    }
    assert_eq!(server.fetches(), 2);
    // Known kids still verify without a fetch.
    ok(&auth, &bearer(&rs256("k1"))).await;
    assert_eq!(server.fetches(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_share_one_fetch() {
    let server =
        JwksServer::start(json!({"keys": [RSA.jwk("k1", None)]}), Some("max-age=3600")).await;
    server.set_status(503);
    let auth = Arc::new(jwt_auth(json!({"jwk_url": server.url})).await);
    assert_eq!(server.fetches(), 1, "the start-up fetch failed");
    server.set_status(200);
    server.set_delay(Duration::from_millis(300));
    // Past the back-off after a failure with no keys.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let token = rs256("k1");
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let auth = auth.clone();
            let request = bearer(&token);
            tokio::spawn(async move { auth.authenticate(&request).await })
        })
        .collect();
    for task in tasks {
        assert!(task.await.unwrap().is_ok());
    }
    assert_eq!(server.fetches(), 2, "twenty requests, one fetch");
}

#[tokio::test]
async fn stale_keys_survive_a_failed_refetch() {
    let server = JwksServer::start(json!({"keys": [RSA.jwk("k1", None)]}), Some("max-age=1")).await;
    let auth = jwt_auth(json!({"jwk_url": server.url})).await;
    server.set_status(500);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    ok(&auth, &bearer(&rs256("k1"))).await;
    assert_eq!(server.fetches(), 2);
    // Not retried at once after the failure.
    ok(&auth, &bearer(&rs256("k1"))).await;
    assert_eq!(server.fetches(), 2);
}

#[tokio::test]
async fn unreachable_jwks_at_start_up_is_not_fatal() {
    // A port nothing listens on.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/jwks.json", listener.local_addr().unwrap());
    drop(listener);
    let auth = jwt_auth(json!({"jwk_url": url})).await;
    rejects(&auth, &rs256("k1"), "JWKS").await;
}

#[tokio::test]
async fn jwks_errors_with_no_cached_keys_are_invalid_jwt() {
    let server = JwksServer::start(json!({"not": "a jwks"}), None).await;
    let auth = jwt_auth(json!({"jwk_url": server.url})).await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    rejects(
        &auth,
        &rs256("k1"),
        "signing keys (JWKS) could not be fetched",
    )
    .await;
    assert_eq!(server.fetches(), 2);
    // Once the endpoint is fixed, the next request after the back-off succeeds.
    server.set_body(json!({"keys": [RSA.jwk("k1", None)]}));
    tokio::time::sleep(Duration::from_millis(1100)).await;
    ok(&auth, &bearer(&rs256("k1"))).await;
}

#[tokio::test]
async fn a_key_verifies_only_its_algorithm() {
    let server = JwksServer::start(json!({"keys": [RSA.jwk("k1", Some("RS256"))]}), None).await;
    let auth = jwt_auth(json!({"jwk_url": server.url})).await;
    let rs384 = sign(Algorithm::RS384, &RSA.encoding(), Some("k1"), &claims());
    rejects(&auth, &rs384, "not the one its key is for").await;
    // Without alg, an RSA key takes RS* and PS* but never HS* (key confusion).
    let server = JwksServer::start(json!({"keys": [RSA.jwk("k1", None)]}), None).await;
    let auth = jwt_auth(json!({"jwk_url": server.url})).await;
    ok(
        &auth,
        &bearer(&sign(
            Algorithm::PS256,
            &RSA.encoding(),
            Some("k1"),
            &claims(),
        )),
    )
    .await;
    let confused = sign(
        Algorithm::HS256,
        &EncodingKey::from_secret(RSA.n.as_bytes()),
        Some("k1"),
        &claims(),
    );
    rejects(&auth, &confused, "HS256").await;
}

#[tokio::test]
async fn type_with_jwk_url_restricts_the_algorithm() {
    let server = JwksServer::start(json!({"keys": [RSA.jwk("k1", None)]}), None).await;
    let auth = jwt_auth(json!({"jwk_url": server.url, "type": "RS512"})).await;
    rejects(&auth, &rs256("k1"), "only RS512 is accepted").await;
    ok(
        &auth,
        &bearer(&sign(
            Algorithm::RS512,
            &RSA.encoding(),
            Some("k1"),
            &claims(),
        )),
    )
    .await;
}

#[tokio::test]
async fn a_token_without_kid_tries_every_key() {
    let ec = es256_keys("ec");
    let ed = ed25519_keys("ed");
    let server = JwksServer::start(
        json!({"keys": [RSA.jwk("rsa", None), ec.jwk, ed.jwk]}),
        None,
    )
    .await;
    let auth = jwt_auth(json!({"jwk_url": server.url})).await;
    ok(
        &auth,
        &bearer(&sign(Algorithm::RS256, &RSA.encoding(), None, &claims())),
    )
    .await;
    ok(
        &auth,
        &bearer(&sign(Algorithm::ES256, &ec.encoding, None, &claims())),
    )
    .await;
    ok(
        &auth,
        &bearer(&sign(Algorithm::EdDSA, &ed.encoding, Some("ed"), &claims())),
    )
    .await;
    // Named kid, wrong key type for its algorithm.
    rejects(
        &auth,
        &sign(Algorithm::ES256, &ec.encoding, Some("ed"), &claims()),
        "not the one its key is for",
    )
    .await;
    let forged = sign(Algorithm::RS256, &RSA_OTHER.encoding(), None, &claims());
    rejects(&auth, &forged, "invalid signature").await;
}

#[tokio::test]
async fn local_jwks_file_by_path_and_file_url() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("jwks.json");
    let es384 = es384_keys("p384");
    std::fs::write(
        &path,
        json!({"keys": [RSA.jwk("k1", None), es384.jwk]}).to_string(),
    )
    .unwrap();
    let by_path = jwt_auth(json!({"jwk_url": path.display().to_string()})).await;
    ok(&by_path, &bearer(&rs256("k1"))).await;
    ok(
        &by_path,
        &bearer(&sign(Algorithm::ES384, &es384.encoding, None, &claims())),
    )
    .await;
    let by_url = jwt_auth(json!({"jwk_url": format!("file://{}", path.display())})).await;
    ok(&by_url, &bearer(&rs256("k1"))).await;
    rejects(
        &by_url,
        &rs256("k9"),
        "no key in the JWKS has the token's kid",
    )
    .await;
}

#[tokio::test]
async fn bad_local_jwks_file_is_a_start_up_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.json");
    let broken = dir.path().join("broken.json");
    std::fs::write(
        &broken,
        "{\"keys\": [{\"kty\": \"RSA\", \"use\": \"enc\", \"n\": \"AQ\", \"e\": \"AQAB\"}]}",
    )
    .unwrap();
    for path in [missing, broken] {
        let result = Authenticator::new(AuthConfig {
            jwt: Some(json!({"jwk_url": path.display().to_string()}).to_string()),
            ..AuthConfig::default()
        })
        .await;
        assert!(
            matches!(result, Err(ConfigError::JwksFile { .. })),
            "{result:?}"
        );
    }
}
