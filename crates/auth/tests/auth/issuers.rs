//! Several JWT secrets told apart by issuer (`HASURA_GRAPHQL_JWT_SECRETS`), and
//! `claims_map` with the tokens of Hasura's documentation.

use grafton_auth::{AuthConfig, AuthErrorKind, Authenticator, Role};
use jsonwebtoken::{Algorithm, EncodingKey};
use serde_json::{json, Value};

use crate::common::*;

async fn two_issuers(a: &str, b: &str, b_header: Value) -> Authenticator {
    authenticator(AuthConfig {
        admin_secret: Some("admin-secret".into()),
        jwt_secrets: vec![
            json!({"type": "HS256", "key": a, "issuer": "https://a.example"}).to_string(),
            json!({"type": "HS512", "key": b, "issuer": "https://b.example", "header": b_header})
                .to_string(),
        ],
        ..Default::default()
    })
    .await
}

fn issued_by(iss: &str, user: &str) -> Value {
    let mut c = claims();
    c["iss"] = json!(iss);
    c[NS]["x-hasura-user-id"] = json!(user);
    c
}

#[tokio::test]
async fn each_issuers_token_is_checked_by_its_own_secret() {
    let (a, b) = (random_secret(), random_secret());
    let auth = two_issuers(&a, &b, json!({"type": "Authorization"})).await;
    let from_a = sign_hs(&a, &issued_by("https://a.example", "1"));
    let session = ok(&auth, &bearer(&from_a)).await;
    assert_eq!(session.role, Role::Named("user".into()));
    assert_eq!(session.vars["x-hasura-user-id"], "1");
    let from_b = sign_secret(Algorithm::HS512, &b, &issued_by("https://b.example", "2"));
    assert_eq!(
        ok(&auth, &bearer(&from_b)).await.vars["x-hasura-user-id"],
        "2"
    );

    // A third issuer, even signed with a known key, is refused.
    let from_c = sign_hs(&a, &issued_by("https://c.example", "3"));
    let e = err(&auth, &bearer(&from_c)).await;
    assert_eq!(e.kind, AuthErrorKind::InvalidJwt);
    assert!(e.message.contains("JWTNotInIssuer"), "{e}");
    // B's issuer with A's key: checked by B's secret, which it fails.
    let forged = sign_secret(Algorithm::HS512, &a, &issued_by("https://b.example", "4"));
    let e = err(&auth, &bearer(&forged)).await;
    assert!(e.message.contains("invalid signature"), "{e}");
    // No iss: both secrets would take it, which Hasura refuses.
    let anonymous = sign_hs(&a, &claims());
    let e = err(&auth, &bearer(&anonymous)).await;
    assert!(e.message.contains("Multiple JWTs found"), "{e}");
    // No token at all.
    let e = err(&auth, &headers(&[])).await;
    assert_eq!(e.kind, AuthErrorKind::AccessDenied);
    assert!(e.message.contains("'Authorization' or 'Cookie'"), "{e}");
}

#[tokio::test]
async fn a_secret_reads_its_token_where_its_header_says() {
    let (a, b) = (random_secret(), random_secret());
    let auth = two_issuers(&a, &b, json!({"type": "Cookie", "name": "session"})).await;
    let from_b = sign_secret(Algorithm::HS512, &b, &issued_by("https://b.example", "7"));
    let cookie = headers(&[("cookie", &format!("theme=dark; session={from_b}"))]);
    assert_eq!(ok(&auth, &cookie).await.vars["x-hasura-user-id"], "7");
    // In the Authorization header, B's token reaches only A's secret: wrong issuer.
    let e = err(&auth, &bearer(&from_b)).await;
    assert!(e.message.contains("JWTNotInIssuer"), "{e}");
}

#[tokio::test]
async fn a_secret_is_still_checked_whole() {
    // A refused secret among several stops start-up, naming what is wrong.
    let refused = Authenticator::new(AuthConfig {
        jwt_secrets: vec![
            json!({"type": "HS256", "key": random_secret(), "issuer": "a"}).to_string(),
            json!({"type": "HS256", "key": "short", "issuer": "b"}).to_string(),
        ],
        ..Default::default()
    })
    .await;
    assert!(refused.unwrap_err().to_string().contains("at least 32"));
}

/// Hasura's claims_map examples, signed here (the documentation's use an RS512 key
/// whose private half is not published).
#[tokio::test]
async fn claims_map_from_hasuras_documentation() {
    let secret = random_secret();
    let payload = json!({"sub": "1234567890", "name": "John Doe", "admin": true,
        "iat": 1516239022, "user": {"id": "ujdh739kd"},
        "hasura": {"all_roles": ["user", "editor"]}});
    let by_path = jwt_auth(json!({"type": "HS256", "key": secret, "claims_map": {
        "x-hasura-allowed-roles": {"path": "$.hasura.all_roles"},
        "x-hasura-default-role": {"path": "$.hasura.all_roles[0]"},
        "x-hasura-user-id": {"path": "$.user.id"}
    }}))
    .await;
    let token = sign_hs(&secret, &payload);
    let session = ok(&by_path, &bearer(&token)).await;
    assert_eq!(session.role, Role::Named("user".into()));
    assert_eq!(session.vars["x-hasura-user-id"], "ujdh739kd");
    // The role header picks among the mapped allowed roles.
    let mut as_editor = bearer(&token);
    as_editor.insert("x-hasura-role", "editor".parse().unwrap());
    assert_eq!(
        ok(&by_path, &as_editor).await.role,
        Role::Named("editor".into())
    );
    let mut as_admin = bearer(&token);
    as_admin.insert("x-hasura-role", "admin".parse().unwrap());
    assert_eq!(
        err(&by_path, &as_admin).await.kind,
        AuthErrorKind::RoleNotAllowed
    );

    let mut no_user = payload.clone();
    no_user.as_object_mut().unwrap().remove("user");
    let e = err(&by_path, &bearer(&sign_hs(&secret, &no_user))).await;
    assert!(
        e.message
            .contains("JWT claim from claims_map, x-hasura-user-id not found"),
        "{e}"
    );
    let with_default = jwt_auth(json!({"type": "HS256", "key": secret, "claims_map": {
        "x-hasura-allowed-roles": {"path": "$.hasura.all_roles"},
        "x-hasura-default-role": {"path": "$.hasura.all_roles[0]"},
        "x-hasura-user-id": {"path": "$.user.id", "default": "ujdh739kd"}
    }}))
    .await;
    let session = ok(&with_default, &bearer(&sign_hs(&secret, &no_user))).await;
    assert_eq!(session.vars["x-hasura-user-id"], "ujdh739kd");

    let literal = jwt_auth(json!({"type": "HS256", "key": secret, "claims_map": {
        "x-hasura-allowed-roles": ["user", "editor"],
        "x-hasura-default-role": "user",
        "x-hasura-user-id": {"path": "$.user.id"}
    }}))
    .await;
    let mut plain = payload.clone();
    plain.as_object_mut().unwrap().remove("hasura");
    let session = ok(&literal, &bearer(&sign_hs(&secret, &plain))).await;
    assert_eq!(session.role, Role::Named("user".into()));
    assert_eq!(session.vars["x-hasura-user-id"], "ujdh739kd");
    // The signature still decides: a mapped token signed with another key is refused.
    let forged = sign(
        Algorithm::HS256,
        &EncodingKey::from_secret(random_secret().as_bytes()),
        None,
        &plain,
    );
    assert_eq!(
        err(&literal, &bearer(&forged)).await.kind,
        AuthErrorKind::InvalidJwt
    );
}

/// The signed example token of Hasura's JWT documentation, verbatim, with its secret.
#[tokio::test]
async fn hasuras_documented_token() {
    let auth =
        jwt_auth(json!({"type": "HS256", "key": "ultra-secret-very-secret-super-secret-key"}))
            .await;
    let token = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiYWRtaW4iOnRydWUsImlhdCI6MTUxNjIzOTAyMiwiaHR0cHM6Ly9oYXN1cmEuaW8vand0L2NsYWltcyI6eyJ4LWhhc3VyYS1kZWZhdWx0LXJvbGUiOiJ1c2VyIiwieC1oYXN1cmEtYWxsb3dlZC1yb2xlcyI6WyJ1c2VyIiwiYWRtaW4iXSwieC1oYXN1cmEtdXNlci1pZCI6IjEyMyIsIngtaGFzdXJhLW9yZy1pZCI6IjQ1NiIsIngtaGFzdXJhLWN1c3RvbSI6ImN1c3RvbS12YWx1ZSJ9fQ.07mlUOhH3Oigz_Yyil8EC579Ht6PbZ1yr8fYJfhQ4NE";
    let session = ok(&auth, &bearer(token)).await;
    assert_eq!(session.role, Role::Named("user".into()));
    assert_eq!(session.vars["x-hasura-user-id"], "123");
    assert_eq!(session.vars["x-hasura-org-id"], "456");
    assert_eq!(session.vars["x-hasura-custom"], "custom-value");
}
