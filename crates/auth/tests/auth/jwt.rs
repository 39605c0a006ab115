//! JWT mode with inline keys: algorithms, claims, options, and every rejection.

use grafton_auth::{AuthConfig, AuthErrorKind, Authenticator, Role};
use jsonwebtoken::{Algorithm, EncodingKey};
use serde_json::{json, Value};

use crate::common::*;

/// An HS256 authenticator with `secret` and these other JWT secret options.
async fn hs256_auth(secret: &str, options: Value) -> Authenticator {
    let mut config = json!({"type": "HS256", "key": secret});
    config
        .as_object_mut()
        .unwrap()
        .extend(options.as_object().unwrap().clone());
    jwt_auth(config).await
}

async fn hs256() -> (String, Authenticator) {
    let secret = random_secret();
    let auth = hs256_auth(&secret, json!({})).await;
    (secret, auth)
}

#[tokio::test]
async fn hs256_claims_become_the_session() {
    let (secret, auth) = hs256().await;
    let mut claims = claims();
    claims[NS] = json!({
        "X-Hasura-Allowed-Roles": ["user", "editor"],
        "X-Hasura-Default-Role": "user",
        "X-Hasura-User-Id": "42",
        "x-hasura-org-id": 7,
        "x-hasura-is-owner": true,
        "x-hasura-team-ids": ["a", "b"],
        "x-hasura-scores": [1, 2],
        "x-hasura-role": "ignored: the role is chosen, not claimed",
        "not-hasura": "dropped"
    });
    let session = accepts_hs(&auth, &secret, &claims).await;
    assert_eq!(session.role, Role::Named("user".into()));
    let vars: Vec<(&str, &str)> = session
        .vars
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        vars,
        [
            ("x-hasura-is-owner", "true"),
            ("x-hasura-org-id", "7"),
            ("x-hasura-role", "user"),
            ("x-hasura-scores", "{1,2}"),
            ("x-hasura-team-ids", "{a,b}"),
            ("x-hasura-user-id", "42"),
        ]
    );
}

#[tokio::test]
async fn hs512() {
    let secret = format!("{}{}", random_secret(), random_secret());
    let auth = jwt_auth(json!({"type": "HS512", "key": secret})).await;
    let token = sign_secret(Algorithm::HS512, &secret, &claims());
    assert_eq!(
        ok(&auth, &bearer(&token)).await.var("x-hasura-user-id"),
        Some("42")
    );
}

/// A request with `token` asking for `role`.
fn as_role(token: &str, role: &str) -> http::HeaderMap {
    let mut request = bearer(token);
    request.insert("x-hasura-role", role.parse().unwrap());
    request
}

#[tokio::test]
async fn requested_role_among_allowed_roles() {
    let (secret, auth) = hs256().await;
    let session = ok(&auth, &as_role(&sign_hs(&secret, &claims()), "editor")).await;
    assert_eq!(session.role, Role::Named("editor".into()));
    assert_eq!(session.var("x-hasura-role"), Some("editor"));
}

#[tokio::test]
async fn requested_role_outside_allowed_roles_is_forbidden() {
    let (secret, auth) = hs256().await;
    let error = err(&auth, &as_role(&sign_hs(&secret, &claims()), "admin")).await;
    assert_eq!(error.kind, AuthErrorKind::RoleNotAllowed);
    assert_eq!((error.code(), error.status()), ("access-denied", 403));
    assert!(error.message.contains("not in allowed roles"));
}

#[tokio::test]
async fn default_role_outside_allowed_roles_is_forbidden() {
    let (secret, auth) = hs256().await;
    let mut claims = claims();
    claims[NS]["x-hasura-default-role"] = json!("manager");
    let error = err(&auth, &bearer(&sign_hs(&secret, &claims))).await;
    assert_eq!((error.code(), error.status()), ("access-denied", 403));
}

#[tokio::test]
async fn admin_role_from_a_token_is_admin() {
    let (secret, auth) = hs256().await;
    let mut claims = claims();
    claims[NS]["x-hasura-allowed-roles"] = json!(["admin"]);
    claims[NS]["x-hasura-default-role"] = json!("admin");
    assert_eq!(accepts_hs(&auth, &secret, &claims).await.role, Role::Admin);
}

/// With the JWT secret `config`, a token signed by `key` with `alg` (and a `kid` that an
/// inline key ignores) is accepted, as the token's default role.
async fn accepts(config: Value, alg: Algorithm, key: &EncodingKey) -> Authenticator {
    let auth = jwt_auth(config).await;
    let token = sign(alg, key, Some("any-kid"), &claims());
    let session = ok(&auth, &bearer(&token)).await;
    assert_eq!(session.role, Role::Named("user".into()));
    assert_eq!(session.var("x-hasura-user-id"), Some("42"));
    auth
}

/// A self-signed X.509 certificate for `key`, as PEM.
fn certificate(key: &rcgen::KeyPair) -> String {
    let params = rcgen::CertificateParams::new(vec!["grafton.test".into()]).unwrap();
    params.self_signed(key).unwrap().pem()
}

#[tokio::test]
async fn rs256_with_a_pem_public_key() {
    let config = json!({"type": "RS256", "key": RSA.public_pem});
    let auth = accepts(config, Algorithm::RS256, &RSA.encoding()).await;
    // Signed by another RSA key: bad signature.
    let forged = sign(Algorithm::RS256, &RSA_OTHER.encoding(), None, &claims());
    rejects(&auth, &forged, "invalid signature").await;
}

#[tokio::test]
async fn rs512_with_an_x509_certificate() {
    let pkcs8 = &RSA.private_pkcs8_pem;
    let key = rcgen::KeyPair::from_pem_and_sign_algo(pkcs8, &rcgen::PKCS_RSA_SHA256).unwrap();
    let config = json!({"type": "RS512", "key": certificate(&key)});
    accepts(config, Algorithm::RS512, &RSA.encoding()).await;
}

#[tokio::test]
async fn es256_with_a_pem_public_key_and_a_certificate() {
    let keys = es256_keys("k");
    let config = json!({"type": "ES256", "key": keys.public_pem});
    accepts(config, Algorithm::ES256, &keys.encoding).await;

    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let encoding = EncodingKey::from_ec_pem(key.serialize_pem().as_bytes()).unwrap();
    let config = json!({"type": "ES256", "key": certificate(&key)});
    accepts(config, Algorithm::ES256, &encoding).await;
}

#[tokio::test]
async fn es384() {
    let keys = es384_keys("p384");
    let config = json!({"type": "ES384", "key": keys.public_pem});
    accepts(config, Algorithm::ES384, &keys.encoding).await;
    // A P-384 key cannot be configured for ES256.
    let refused = Authenticator::new(AuthConfig {
        jwt: Some(json!({"type": "ES256", "key": keys.public_pem}).to_string()),
        ..Default::default()
    })
    .await;
    assert!(refused
        .unwrap_err()
        .to_string()
        .contains("not a P-256 public key"));
}

#[tokio::test]
async fn eddsa_under_both_names() {
    let keys = ed25519_keys("k");
    for name in ["EdDSA", "Ed25519"] {
        let config = json!({"type": name, "key": keys.public_pem});
        accepts(config, Algorithm::EdDSA, &keys.encoding).await;
    }
}

#[tokio::test]
async fn rejects_alg_none() {
    let (_, auth) = hs256().await;
    let header = b64(br#"{"alg":"none","typ":"JWT"}"#);
    let payload = b64(claims().to_string().as_bytes());
    rejects(&auth, &format!("{header}.{payload}."), "alg \"none\"").await;
    let header = b64(br#"{"alg":"None"}"#);
    rejects(&auth, &format!("{header}.{payload}."), "alg \"none\"").await;
}

#[tokio::test]
async fn rejects_hs_rs_key_confusion() {
    // An HS256 token whose "secret" is the RSA public key the server is configured with.
    let auth = jwt_auth(json!({"type": "RS256", "key": RSA.public_pem})).await;
    let token = sign_secret(Algorithm::HS256, &RSA.public_pem, &claims());
    rejects(&auth, &token, "HS256").await;
}

#[tokio::test]
async fn rejects_another_algorithm_than_configured() {
    let (secret, auth) = hs256().await;
    let token = sign_secret(Algorithm::HS384, &secret, &claims());
    rejects(&auth, &token, "not the one its key is for").await;
}

#[tokio::test]
async fn rejects_bad_signature() {
    let (_, auth) = hs256().await;
    rejects_hs(&auth, &random_secret(), &claims(), "invalid signature").await;
    // A valid token with its signature altered.
    let (secret, auth) = hs256().await;
    let token = sign_hs(&secret, &claims());
    let (message, signature) = token.rsplit_once('.').unwrap();
    let flipped = if signature.starts_with('A') { "B" } else { "A" };
    let altered = format!("{message}.{flipped}{}", &signature[1..]);
    rejects(&auth, &altered, "invalid signature").await;
}

/// An HS256 token with the registered claim `name` set to `value` is refused with `needle`.
async fn rejects_with_claim(name: &str, value: Value, needle: &str) {
    let (secret, auth) = hs256().await;
    let mut claims = claims();
    claims[name] = value;
    rejects(&auth, &sign_hs(&secret, &claims), needle).await;
}

#[tokio::test]
async fn rejects_expired() {
    rejects_with_claim("exp", json!(now() - 10), "expired").await;
}

#[tokio::test]
async fn rejects_not_yet_valid() {
    rejects_with_claim("nbf", json!(now() + 60), "not valid yet (nbf)").await;
}

#[tokio::test]
async fn rejects_issued_in_the_future() {
    rejects_with_claim("iat", json!(now() + 60), "issued in the future").await;
}

#[tokio::test]
async fn rejects_malformed_time_claims() {
    rejects_with_claim("exp", json!("tomorrow"), "exp claim is malformed").await;
    rejects_with_claim("iat", json!("yesterday"), "iat claim is not a number").await;
}

#[tokio::test]
async fn accepts_a_token_without_exp_or_iat() {
    // Hasura requires neither.
    let (secret, auth) = hs256().await;
    accepts_hs(&auth, &secret, &without(claims(), &["exp", "iat"])).await;
}

#[tokio::test]
async fn issuer() {
    let secret = random_secret();
    let auth = hs256_auth(&secret, json!({"issuer": "https://issuer.test"})).await;
    let mut claims = claims();
    claims["iss"] = json!("https://issuer.test");
    accepts_hs(&auth, &secret, &claims).await;
    claims["iss"] = json!("https://evil.test");
    rejects_hs(&auth, &secret, &claims, "issuer (iss)").await;
    // As Hasura documents: a token without iss matches a config with one.
    accepts_hs(&auth, &secret, &without(claims, &["iss"])).await;
}

#[tokio::test]
async fn audience_string_and_list() {
    let secret = random_secret();
    let single = hs256_auth(&secret, json!({"audience": "app-1"})).await;
    let list = hs256_auth(&secret, json!({"audience": ["app-1", "app-2"]})).await;
    let mut claims = claims();
    claims["aud"] = json!("app-1");
    accepts_hs(&single, &secret, &claims).await;
    claims["aud"] = json!(["other", "app-2"]);
    accepts_hs(&list, &secret, &claims).await;
    rejects_hs(&single, &secret, &claims, "audience (aud)").await;
    claims["aud"] = json!("app-3");
    rejects_hs(&list, &secret, &claims, "audience (aud)").await;
    rejects_hs(&single, &secret, &without(claims, &["aud"]), "no aud claim").await;
}

#[tokio::test]
async fn audience_is_ignored_when_not_configured() {
    let (secret, auth) = hs256().await;
    let mut claims = claims();
    claims["aud"] = json!("some-app");
    accepts_hs(&auth, &secret, &claims).await;
}

#[tokio::test]
async fn allowed_skew() {
    let secret = random_secret();
    let lenient = hs256_auth(&secret, json!({"allowed_skew": 60})).await;
    let strict = hs256_auth(&secret, json!({})).await;
    let mut late = claims();
    late["exp"] = json!(now() - 30);
    accepts_hs(&lenient, &secret, &late).await;
    rejects_hs(&strict, &secret, &late, "expired").await;
    let mut early = claims();
    early["nbf"] = json!(now() + 30);
    early["iat"] = json!(now() + 30);
    accepts_hs(&lenient, &secret, &early).await;
    rejects_hs(&strict, &secret, &early, "nbf").await;
    let mut too_late = claims();
    too_late["exp"] = json!(now() - 120);
    rejects_hs(&lenient, &secret, &too_late, "expired").await;
}

#[tokio::test]
async fn rejects_malformed_tokens() {
    let (secret, auth) = hs256().await;
    rejects(&auth, "abc", "three parts").await;
    rejects(&auth, "a.b", "three parts").await;
    rejects(&auth, "a.b.c.d", "three parts").await;
    rejects(&auth, "!!!.e30.sig", "header is not base64url").await;
    rejects(
        &auth,
        &format!("{}.e30.sig", b64(b"{not json")),
        "header is not JSON",
    )
    .await;
    rejects(
        &auth,
        &format!("{}.e30.sig", b64(b"{\"typ\":\"JWT\"}")),
        "no alg",
    )
    .await;
    rejects(
        &auth,
        &format!("{}.e30.sig", b64(b"{\"alg\":\"XX999\"}")),
        "not supported",
    )
    .await;
    let header = b64(br#"{"alg":"HS256","typ":"JWT"}"#);
    rejects(
        &auth,
        &sign_raw_hs(&secret, &header, "%%%"),
        "not base64url",
    )
    .await;
    rejects(
        &auth,
        &sign_raw_hs(&secret, &header, &b64(b"{oops")),
        "not a JSON object",
    )
    .await;
    rejects(
        &auth,
        &sign_raw_hs(&secret, &header, &b64(b"[1,2]")),
        "not a JSON object",
    )
    .await;
}

#[tokio::test]
async fn rejects_a_malformed_authorization_header() {
    let (secret, auth) = hs256().await;
    let token = sign_hs(&secret, &claims());
    for value in [
        format!("Basic {token}"),
        token.clone(),
        "Bearer".into(),
        format!("Bearer {token} x"),
    ] {
        let error = err(&auth, &headers(&[("authorization", &value)])).await;
        assert_eq!((error.code(), error.status()), ("invalid-jwt", 401));
        assert!(error.message.contains("Malformed Authorization header"));
    }
    // The scheme is case-insensitive.
    ok(
        &auth,
        &headers(&[("authorization", &format!("bearer {token}"))]),
    )
    .await;
}

#[tokio::test]
async fn rejects_missing_or_invalid_hasura_claims() {
    let (secret, auth) = hs256().await;
    let cases: [(&str, Value, &str); 6] = [
        (
            "namespace",
            Value::Null,
            "claims key: 'https://hasura.io/jwt/claims' not found",
        ),
        ("namespace", json!("a string"), "not a JSON object"),
        (
            "x-hasura-allowed-roles",
            Value::Null,
            "does not contain x-hasura-allowed-roles",
        ),
        (
            "x-hasura-allowed-roles",
            json!("user"),
            "invalid x-hasura-allowed-roles",
        ),
        (
            "x-hasura-default-role",
            Value::Null,
            "does not contain x-hasura-default-role",
        ),
        (
            "x-hasura-default-role",
            json!(["user"]),
            "invalid x-hasura-default-role",
        ),
    ];
    for (field, value, needle) in cases {
        let mut claims = claims();
        let target = if field == "namespace" {
            claims.as_object_mut().unwrap()
        } else {
            claims[NS].as_object_mut().unwrap()
        };
        let name = if field == "namespace" { NS } else { field };
        if value.is_null() {
            target.remove(name);
        } else {
            target.insert(name.to_string(), value);
        }
        rejects(&auth, &sign_hs(&secret, &claims), needle).await;
    }
    let mut claims = claims();
    claims[NS]["x-hasura-allowed-roles"] = json!(["user", 3]);
    rejects_hs(&auth, &secret, &claims, "invalid x-hasura-allowed-roles").await;
}

#[tokio::test]
async fn token_from_a_cookie() {
    let secret = random_secret();
    let auth = hs256_auth(
        &secret,
        json!({"header": {"type": "Cookie", "name": "hasura_jwt"}}),
    )
    .await;
    let token = sign_hs(&secret, &claims());
    let session = ok(
        &auth,
        &headers(&[(
            "cookie",
            &format!("theme=dark; hasura_jwt={token}; other=1"),
        )]),
    )
    .await;
    assert_eq!(session.var("x-hasura-user-id"), Some("42"));
    // Split cookie headers (as HTTP/2 sends them) work too.
    let session = ok(
        &auth,
        &headers(&[
            ("cookie", "theme=dark"),
            ("cookie", &format!("hasura_jwt={token}")),
        ]),
    )
    .await;
    assert_eq!(session.role, Role::Named("user".into()));
    // The Authorization header is not looked at.
    let error = err(&auth, &bearer(&token)).await;
    assert_eq!(error.kind, AuthErrorKind::AccessDenied);
    assert!(error.message.contains("hasura_jwt"));
    let error = err(
        &auth,
        &headers(&[("cookie", &format!("hasura_jwt={}", sign_hs("x", &claims())))]),
    )
    .await;
    assert_eq!(error.kind, AuthErrorKind::InvalidJwt);
}

#[tokio::test]
async fn explicit_authorization_header_type() {
    let secret = random_secret();
    let auth = hs256_auth(&secret, json!({"header": {"type": "Authorization"}})).await;
    ok(&auth, &bearer(&sign_hs(&secret, &claims()))).await;
}

#[tokio::test]
async fn custom_claims_namespace() {
    let secret = random_secret();
    let auth = hs256_auth(&secret, json!({"claims_namespace": "https://x.test/c"})).await;
    let mut claims = claims();
    let hasura = claims.as_object_mut().unwrap().remove(NS).unwrap();
    claims["https://x.test/c"] = hasura;
    accepts_hs(&auth, &secret, &claims).await;
    claims.as_object_mut().unwrap().remove("https://x.test/c");
    rejects_hs(
        &auth,
        &secret,
        &claims,
        "claims key: 'https://x.test/c' not found",
    )
    .await;
}

#[tokio::test]
async fn claims_namespace_path() {
    let secret = random_secret();
    let nested = hs256_auth(&secret, json!({"claims_namespace_path": "$.hasura.claims"})).await;
    let root = hs256_auth(&secret, json!({"claims_namespace_path": "$"})).await;
    let hasura = claims()[NS].clone();
    let token = sign_hs(&secret, &json!({"sub": "1", "hasura": {"claims": hasura}}));
    assert_eq!(
        ok(&nested, &bearer(&token)).await.var("x-hasura-user-id"),
        Some("42")
    );
    rejects(&root, &token, "does not contain x-hasura-allowed-roles").await;

    let mut flat = hasura.clone();
    flat["sub"] = json!("1");
    let token = sign_hs(&secret, &flat);
    let session = ok(&root, &bearer(&token)).await;
    assert_eq!(session.var("x-hasura-user-id"), Some("42"));
    assert!(session.var("sub").is_none());
    let needle = "claims not found at claims_namespace_path: '$['hasura']['claims']'";
    rejects(&nested, &token, needle).await;
}

#[tokio::test]
async fn stringified_json_claims() {
    let secret = random_secret();
    let auth = hs256_auth(&secret, json!({"claims_format": "stringified_json"})).await;
    let mut claims = claims();
    claims[NS] = json!(claims[NS].to_string());
    accepts_hs(&auth, &secret, &claims).await;
    claims[NS] = json!({"x-hasura-default-role": "user"});
    rejects_hs(&auth, &secret, &claims, "stringified_json").await;
    claims[NS] = json!("{not json");
    rejects_hs(&auth, &secret, &claims, "stringified_json").await;
}

/// A claim given twice in different cases (hardening review, issue 27): neither
/// spelling may win silently, whichever the token lists last.
#[tokio::test]
async fn a_claim_given_twice_in_different_cases_is_refused() {
    let (secret, auth) = hs256().await;
    for (first, second) in [
        ("x-hasura-user-id", "X-Hasura-User-Id"),
        ("X-HASURA-USER-ID", "x-hasura-user-id"),
    ] {
        let mut claims = claims();
        claims[NS][first] = json!("1");
        claims[NS][second] = json!("2");
        rejects_hs(&auth, &secret, &claims, "appears more than once").await;
    }
}
