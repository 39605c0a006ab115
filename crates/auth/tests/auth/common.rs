//! Shared test helpers: keys generated per run, token signing, a local JWKS server.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use grafton_auth::{AuthConfig, AuthError, AuthErrorKind, Authenticator, Session};
use http::HeaderMap;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use rand::RngCore;
use serde_json::{json, Value};

pub const NS: &str = "https://hasura.io/jwt/claims";

/// Request headers from name/value pairs.
pub fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        map.append(
            http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            http::HeaderValue::from_str(value).unwrap(),
        );
    }
    map
}

pub fn bearer(token: &str) -> HeaderMap {
    headers(&[("authorization", &format!("Bearer {token}"))])
}

pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

pub fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// A random HMAC secret, 64 hex characters.
pub fn random_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub async fn authenticator(config: AuthConfig) -> Authenticator {
    Authenticator::new(config).await.expect("valid auth config")
}

/// An authenticator in JWT mode with this JWT secret JSON (and an admin secret, as Hasura
/// requires).
pub async fn jwt_auth(jwt: Value) -> Authenticator {
    authenticator(AuthConfig {
        admin_secret: Some("admin-secret".into()),
        jwt: Some(jwt.to_string()),
        unauthorized_role: None,
        ..Default::default()
    })
    .await
}

/// Standard claims: valid for five minutes, roles `user` (default) and `editor`.
pub fn claims() -> Value {
    json!({
        "sub": "1234567890",
        "iat": now(),
        "exp": now() + 300,
        NS: {
            "x-hasura-allowed-roles": ["user", "editor"],
            "x-hasura-default-role": "user",
            "x-hasura-user-id": "42"
        }
    })
}

/// `claims` without the named top-level members.
pub fn without(mut claims: Value, names: &[&str]) -> Value {
    for name in names {
        claims.as_object_mut().unwrap().remove(*name);
    }
    claims
}

pub fn sign(alg: Algorithm, key: &EncodingKey, kid: Option<&str>, claims: &Value) -> String {
    let mut header = Header::new(alg);
    header.kid = kid.map(str::to_string);
    jsonwebtoken::encode(&header, claims, key).unwrap()
}

/// A token signed with an HMAC `secret` (or anything used as one) by `alg`.
pub fn sign_secret(alg: Algorithm, secret: &str, claims: &Value) -> String {
    sign(
        alg,
        &EncodingKey::from_secret(secret.as_bytes()),
        None,
        claims,
    )
}

pub fn sign_hs(secret: &str, claims: &Value) -> String {
    sign_secret(Algorithm::HS256, secret, claims)
}

/// A token from raw header and payload parts, with a valid HS256 signature over them.
pub fn sign_raw_hs(secret: &str, header_part: &str, payload_part: &str) -> String {
    let message = format!("{header_part}.{payload_part}");
    let signature = jsonwebtoken::crypto::sign(
        message.as_bytes(),
        &EncodingKey::from_secret(secret.as_bytes()),
        Algorithm::HS256,
    )
    .unwrap();
    format!("{message}.{signature}")
}

pub async fn ok(auth: &Authenticator, headers: &HeaderMap) -> Session {
    match auth.authenticate(headers).await {
        Ok(session) => session,
        Err(e) => panic!("expected a session, got {e:?}"),
    }
}

pub async fn err(auth: &Authenticator, headers: &HeaderMap) -> AuthError {
    match auth.authenticate(headers).await {
        Ok(session) => panic!("expected a rejection, got {session:?}"),
        Err(e) => e,
    }
}

/// Asserts `token` is refused as `invalid-jwt` (401) with a message containing `needle`
/// and not the token.
pub async fn rejects(auth: &Authenticator, token: &str, needle: &str) {
    let error = err(auth, &bearer(token)).await;
    assert_eq!(error.kind, AuthErrorKind::InvalidJwt, "{error:?}");
    assert_eq!((error.code(), error.status()), ("invalid-jwt", 401));
    assert!(
        error.message.contains(needle),
        "message {:?} should contain {needle:?}",
        error.message
    );
    let signature = token.rsplit('.').next().unwrap_or(token);
    assert!(
        signature.len() < 8 || !error.message.contains(signature),
        "the message echoes the token"
    );
}

/// The session for an HS256 token with `claims`, signed with `secret`.
pub async fn accepts_hs(auth: &Authenticator, secret: &str, claims: &Value) -> Session {
    ok(auth, &bearer(&sign_hs(secret, claims))).await
}

/// Asserts an HS256 token with `claims`, signed with `secret`, is refused (see [`rejects`]).
pub async fn rejects_hs(auth: &Authenticator, secret: &str, claims: &Value, needle: &str) {
    rejects(auth, &sign_hs(secret, claims), needle).await;
}

pub struct RsaKeys {
    pub private_pkcs1_pem: String,
    pub private_pkcs8_pem: String,
    pub public_pem: String,
    pub n: String,
    pub e: String,
}

impl RsaKeys {
    pub fn encoding(&self) -> EncodingKey {
        EncodingKey::from_rsa_pem(self.private_pkcs1_pem.as_bytes()).unwrap()
    }

    pub fn jwk(&self, kid: &str, alg: Option<&str>) -> Value {
        let mut jwk = json!({"kty": "RSA", "use": "sig", "kid": kid, "n": self.n, "e": self.e});
        if let Some(alg) = alg {
            jwk["alg"] = json!(alg);
        }
        jwk
    }
}

fn rsa_keys() -> RsaKeys {
    use rsa::pkcs1::EncodeRsaPrivateKey;
    use rsa::pkcs8::{EncodePrivateKey, EncodePublicKey, LineEnding};
    use rsa::traits::PublicKeyParts;
    let private = rsa::RsaPrivateKey::new(&mut rand::rngs::OsRng, 2048).unwrap();
    let public = private.to_public_key();
    RsaKeys {
        private_pkcs1_pem: private.to_pkcs1_pem(LineEnding::LF).unwrap().to_string(),
        private_pkcs8_pem: private.to_pkcs8_pem(LineEnding::LF).unwrap().to_string(),
        public_pem: public.to_public_key_pem(LineEnding::LF).unwrap(),
        n: b64(&public.n().to_bytes_be()),
        e: b64(&public.e().to_bytes_be()),
    }
}

/// Two RSA keys, generated once per test run.
pub static RSA: LazyLock<RsaKeys> = LazyLock::new(rsa_keys);
pub static RSA_OTHER: LazyLock<RsaKeys> = LazyLock::new(rsa_keys);

pub struct EcKeys {
    pub encoding: EncodingKey,
    pub public_pem: String,
    pub jwk: Value,
}

/// Defines a function making a fresh key pair on one curve, from that curve's crate.
macro_rules! ec_keys {
    ($name:ident, $curve:ident, $crv:literal) => {
        pub fn $name(kid: &str) -> EcKeys {
            use $curve::elliptic_curve::sec1::ToEncodedPoint;
            use $curve::pkcs8::{EncodePrivateKey, EncodePublicKey, LineEnding::LF};
            let secret = $curve::SecretKey::random(&mut rand::rngs::OsRng);
            let point = secret.public_key().to_encoded_point(false);
            let private_pem = secret.to_pkcs8_pem(LF).unwrap();
            EcKeys {
                encoding: EncodingKey::from_ec_pem(private_pem.as_bytes()).unwrap(),
                public_pem: secret.public_key().to_public_key_pem(LF).unwrap(),
                jwk: json!({"kty": "EC", "crv": $crv, "kid": kid,
                            "x": b64(point.x().unwrap()), "y": b64(point.y().unwrap())}),
            }
        }
    };
}

ec_keys!(es256_keys, p256, "P-256");
ec_keys!(es384_keys, p384, "P-384");

pub fn ed25519_keys(kid: &str) -> EcKeys {
    use ed25519_dalek::pkcs8::spki::der::pem::LineEnding;
    use ed25519_dalek::pkcs8::{EncodePrivateKey, EncodePublicKey};
    let signing = ed25519_dalek::SigningKey::generate(&mut rand::rngs::OsRng);
    EcKeys {
        encoding: EncodingKey::from_ed_pem(
            signing.to_pkcs8_pem(LineEnding::LF).unwrap().as_bytes(),
        )
        .unwrap(),
        public_pem: signing
            .verifying_key()
            .to_public_key_pem(LineEnding::LF)
            .unwrap(),
        jwk: json!({"kty": "OKP", "crv": "Ed25519", "kid": kid,
                    "x": b64(signing.verifying_key().as_bytes())}),
    }
}

/// What the local JWKS server answers.
struct Served {
    body: Value,
    cache_control: Option<String>,
    status: StatusCode,
    delay: Duration,
}

/// A JWKS endpoint on 127.0.0.1 that counts its fetches.
pub struct JwksServer {
    pub url: String,
    fetches: Arc<AtomicUsize>,
    served: Arc<Mutex<Served>>,
}

impl JwksServer {
    pub async fn start(body: Value, cache_control: Option<&str>) -> JwksServer {
        let fetches = Arc::new(AtomicUsize::new(0));
        let served = Arc::new(Mutex::new(Served {
            body,
            cache_control: cache_control.map(str::to_string),
            status: StatusCode::OK,
            delay: Duration::ZERO,
        }));
        let app = Router::new()
            .route("/jwks.json", get(serve))
            .with_state((fetches.clone(), served.clone()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/jwks.json", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        JwksServer {
            url,
            fetches,
            served,
        }
    }

    pub fn fetches(&self) -> usize {
        self.fetches.load(Ordering::SeqCst)
    }

    pub fn set_body(&self, body: Value) {
        self.served.lock().unwrap().body = body;
    }

    pub fn set_status(&self, status: u16) {
        self.served.lock().unwrap().status = StatusCode::from_u16(status).unwrap();
    }

    pub fn set_delay(&self, delay: Duration) {
        self.served.lock().unwrap().delay = delay;
    }
}

type ServerState = (Arc<AtomicUsize>, Arc<Mutex<Served>>);

async fn serve(State((fetches, served)): State<ServerState>) -> Response {
    fetches.fetch_add(1, Ordering::SeqCst);
    let (body, cache_control, status, delay) = {
        let served = served.lock().unwrap();
        (
            served.body.to_string(),
            served.cache_control.clone(),
            served.status,
            served.delay,
        )
    };
    tokio::time::sleep(delay).await;
    let mut response = (status, body).into_response();
    if let Some(value) = cache_control {
        response
            .headers_mut()
            .insert("cache-control", HeaderValue::from_str(&value).unwrap());
    }
    response
}
