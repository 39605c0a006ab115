//! Dev mode, the admin secret, the unauthorized role, and start-up refusals.

use grafton_auth::{AuthConfig, AuthErrorKind, Authenticator, Role};
use serde_json::json;

use crate::common::*;

fn secret_only(unauthorized_role: Option<&str>) -> AuthConfig {
    AuthConfig {
        admin_secret: Some("s3cret".into()),
        jwt: None,
        unauthorized_role: unauthorized_role.map(str::to_string),
        ..Default::default()
    }
}

#[test]
fn authenticator_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Authenticator>();
}

#[tokio::test]
async fn dev_mode_every_request_is_admin() {
    let auth = authenticator(AuthConfig::default()).await;
    assert!(auth.dev_mode());
    let session = ok(&auth, &headers(&[])).await;
    assert_eq!(session.role, Role::Admin);
    assert_eq!(session.vars.len(), 1);
    assert_eq!(session.var("x-hasura-role"), Some("admin"));
    // A stray admin secret header does not matter in dev mode.
    let session = ok(&auth, &headers(&[("x-hasura-admin-secret", "anything")])).await;
    assert_eq!(session.role, Role::Admin);
    assert!(!session.vars.contains_key("x-hasura-admin-secret"));
}

#[tokio::test]
async fn dev_mode_honours_role_and_session_headers() {
    let auth = authenticator(AuthConfig::default()).await;
    let session = ok(
        &auth,
        &headers(&[
            ("X-Hasura-Role", "user"),
            ("X-Hasura-User-Id", "7"),
            ("x-other", "ignored"),
        ]),
    )
    .await;
    assert_eq!(session.role, Role::Named("user".into()));
    assert_eq!(session.var("x-hasura-user-id"), Some("7"));
    assert_eq!(session.var("X-HASURA-ROLE"), Some("user"));
    assert_eq!(session.vars.len(), 2);
}

/// The right secret in `header` makes a request admin, with no other session variable.
async fn admin_via(header: &str) {
    let auth = authenticator(secret_only(None)).await;
    assert!(!auth.dev_mode());
    let session = ok(&auth, &headers(&[(header, "s3cret")])).await;
    assert_eq!(session.role, Role::Admin);
    assert!(session.vars.keys().all(|k| k == "x-hasura-role"));
}

#[tokio::test]
async fn admin_secret_right_via_hasura_header() {
    admin_via("x-hasura-admin-secret").await;
}

#[tokio::test]
async fn admin_secret_right_via_grafton_header() {
    admin_via("X-Grafton-Admin-Secret").await;
}

#[tokio::test]
async fn admin_secret_via_hasura_deprecated_access_key() {
    admin_via("x-hasura-access-key").await;
}

#[tokio::test]
async fn admin_secret_wrong_is_denied() {
    let auth = authenticator(secret_only(Some("anonymous"))).await;
    for (header, value) in [
        ("x-hasura-admin-secret", "wrong"),
        ("x-grafton-admin-secret", "s3cret-but-longer"),
        ("x-hasura-admin-secret", "s3cre"),
        ("x-hasura-admin-secret", ""),
    ] {
        let error = err(&auth, &headers(&[(header, value)])).await;
        assert_eq!(error.kind, AuthErrorKind::AccessDenied);
        assert_eq!((error.code(), error.status()), ("access-denied", 401));
        assert!(error.message.contains("invalid x-hasura-admin-secret"));
        assert!(!error.message.contains(value) || value.is_empty());
    }
}

#[tokio::test]
async fn admin_secret_wrong_is_denied_even_with_jwt() {
    let secret = random_secret();
    let auth = jwt_auth(json!({"type": "HS256", "key": secret})).await;
    let mut request = bearer(&sign_hs(&secret, &claims()));
    request.insert("x-hasura-admin-secret", "wrong".parse().unwrap());
    let error = err(&auth, &request).await;
    assert_eq!((error.code(), error.status()), ("access-denied", 401));
    // The right secret makes the request admin, whatever the token says.
    let mut request = bearer("not-a-token");
    request.insert("x-hasura-admin-secret", "admin-secret".parse().unwrap());
    assert_eq!(ok(&auth, &request).await.role, Role::Admin);
}

#[tokio::test]
async fn admin_acting_as_a_role_with_session_variables() {
    let auth = authenticator(secret_only(None)).await;
    let session = ok(
        &auth,
        &headers(&[
            ("x-hasura-admin-secret", "s3cret"),
            ("x-hasura-role", "editor"),
            ("x-hasura-user-id", "42"),
            ("x-hasura-org-id", "7"),
        ]),
    )
    .await;
    assert_eq!(session.role, Role::Named("editor".into()));
    assert_eq!(
        session.vars,
        [
            ("x-hasura-org-id", "7"),
            ("x-hasura-role", "editor"),
            ("x-hasura-user-id", "42"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    );
    // Asking for the role named admin is admin.
    let session = ok(
        &auth,
        &headers(&[
            ("x-hasura-admin-secret", "s3cret"),
            ("x-hasura-role", "admin"),
        ]),
    )
    .await;
    assert_eq!(session.role, Role::Admin);
}

#[tokio::test]
async fn secret_only_without_header_is_denied() {
    let auth = authenticator(secret_only(None)).await;
    let error = err(&auth, &headers(&[("x-hasura-role", "user")])).await;
    assert_eq!((error.code(), error.status()), ("access-denied", 401));
    assert!(error.message.contains("required, but not found"));
}

#[tokio::test]
async fn secret_only_unauthorized_role() {
    let auth = authenticator(secret_only(Some("anonymous"))).await;
    let session = ok(
        &auth,
        &headers(&[("x-hasura-role", "editor"), ("x-hasura-user-id", "1")]),
    )
    .await;
    assert_eq!(session.role, Role::Named("anonymous".into()));
    // No session variables from the headers of an unauthenticated request.
    assert_eq!(session.vars.len(), 1);
    assert_eq!(session.var("x-hasura-role"), Some("anonymous"));
}

#[tokio::test]
async fn jwt_without_token_unauthorized_role_or_denied() {
    let secret = random_secret();
    let jwt = json!({"type": "HS256", "key": secret}).to_string();
    let with_role = authenticator(AuthConfig {
        admin_secret: Some("admin-secret".into()),
        jwt: Some(jwt.clone()),
        unauthorized_role: Some("guest".into()),
        ..Default::default()
    })
    .await;
    let session = ok(&with_role, &headers(&[("x-hasura-user-id", "1")])).await;
    assert_eq!(session.role, Role::Named("guest".into()));
    assert_eq!(session.vars.len(), 1);

    let without = jwt_auth(json!({"type": "HS256", "key": secret})).await;
    let error = err(&without, &headers(&[])).await;
    assert_eq!((error.code(), error.status()), ("access-denied", 401));
    assert!(error.message.contains("Missing Authorization header"));
}

#[tokio::test]
async fn jwt_without_admin_secret_works() {
    let secret = random_secret();
    let auth = authenticator(AuthConfig {
        admin_secret: None,
        jwt: Some(json!({"type": "HS256", "key": secret}).to_string()),
        unauthorized_role: None,
        ..Default::default()
    })
    .await;
    assert!(!auth.dev_mode());
    assert_eq!(
        ok(&auth, &bearer(&sign_hs(&secret, &claims()))).await.role,
        Role::Named("user".into())
    );
    // With no secret configured, no admin secret header can be right.
    let error = err(&auth, &headers(&[("x-hasura-admin-secret", "")])).await;
    assert_eq!(error.kind, AuthErrorKind::AccessDenied);
}

#[tokio::test]
async fn start_up_refusals() {
    let jwt = |text: &str| Some(text.to_string());
    let cases = [
        (
            AuthConfig {
                admin_secret: Some(String::new()),
                ..AuthConfig::default()
            },
            "admin secret must not be empty",
        ),
        (
            AuthConfig {
                unauthorized_role: Some("anonymous".into()),
                ..AuthConfig::default()
            },
            "needs an admin secret or a JWT secret",
        ),
        (
            AuthConfig {
                admin_secret: Some("x".into()),
                unauthorized_role: Some(String::new()),
                ..AuthConfig::default()
            },
            "unauthorized role must not be empty",
        ),
        (
            AuthConfig {
                jwt: jwt(r#"{"type": "HS256", "key": "short-secret"}"#),
                ..AuthConfig::default()
            },
            "at least 32",
        ),
        (
            AuthConfig {
                jwt: jwt(r#"{"type": "HS256", "key": "k", "extra": true}"#),
                ..AuthConfig::default()
            },
            "unknown field `extra`",
        ),
    ];
    for (config, needle) in cases {
        let message = match Authenticator::new(config).await {
            Ok(_) => panic!("a config should be refused with {needle:?}"),
            Err(e) => e.to_string(),
        };
        assert!(
            message.contains(needle),
            "{message:?} should contain {needle:?}"
        );
        assert!(!message.contains("short-secret"));
    }
}

#[test]
fn config_debug_hides_secrets() {
    let config = AuthConfig {
        admin_secret: Some("s3cret".into()),
        jwt: Some("{\"key\": \"hidden\"}".into()),
        unauthorized_role: Some("anonymous".into()),
        ..Default::default()
    };
    let shown = format!("{config:?}");
    assert!(!shown.contains("s3cret") && !shown.contains("hidden"));
    assert!(shown.contains("anonymous"));
}

#[tokio::test]
async fn an_auth_hook_is_refused_beside_what_hasura_refuses() {
    let hook = || Some(grafton_auth::AuthHook::new("http://127.0.0.1:9/hook"));
    let refused = |config: AuthConfig| async move {
        Authenticator::new(config).await.unwrap_err().to_string()
    };
    let without_secret = refused(AuthConfig {
        auth_hook: hook(),
        ..AuthConfig::default()
    })
    .await;
    assert!(
        without_secret.contains("needs an admin secret"),
        "{without_secret}"
    );
    let with_jwt = refused(AuthConfig {
        admin_secret: Some("s".into()),
        jwt: Some(json!({"type": "HS256", "key": random_secret()}).to_string()),
        auth_hook: hook(),
        ..AuthConfig::default()
    })
    .await;
    assert!(with_jwt.contains("cannot both be set"), "{with_jwt}");
    let with_role = refused(AuthConfig {
        admin_secret: Some("s".into()),
        unauthorized_role: Some("anonymous".into()),
        auth_hook: hook(),
        ..AuthConfig::default()
    })
    .await;
    assert!(with_role.contains("--unauthorized-role"), "{with_role}");
    let not_http = refused(AuthConfig {
        admin_secret: Some("s".into()),
        auth_hook: Some(grafton_auth::AuthHook::new("file:///etc/passwd")),
        ..AuthConfig::default()
    })
    .await;
    assert!(not_http.contains("http:// or https://"), "{not_http}");
    let fine = Authenticator::new(AuthConfig {
        admin_secret: Some("s".into()),
        auth_hook: hook(),
        ..AuthConfig::default()
    })
    .await
    .expect("a hook with an admin secret");
    assert!(!fine.dev_mode());
}
