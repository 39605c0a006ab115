//! Hasura's JWT secret (`HASURA_GRAPHQL_JWT_SECRET`, here `--jwt-secret`), parsed and
//! checked: every mistake is a start-up error, never a surprise on the first request.

use std::path::PathBuf;
use std::str::FromStr;

use jsonwebtoken::{Algorithm, DecodingKey};
use serde::Deserialize;
use serde_json::Value;

use crate::claims_map::{self, ClaimsMap};
use crate::error::ConfigError;
use crate::jsonpath::{self, Step};
use crate::keys;

/// Hasura's default claims namespace.
pub(crate) const DEFAULT_NAMESPACE: &str = "https://hasura.io/jwt/claims";

/// The largest `allowed_skew` accepted (a day): more is a mistake, not clock drift.
const MAX_SKEW_SECS: u64 = 24 * 60 * 60;

/// The JSON exactly as Hasura documents it; unknown keys are refused.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawJwtConfig {
    #[serde(rename = "type")]
    alg: Option<String>,
    key: Option<String>,
    jwk_url: Option<String>,
    claims_namespace: Option<String>,
    claims_namespace_path: Option<String>,
    claims_format: Option<String>,
    audience: Option<OneOrMany>,
    issuer: Option<String>,
    allowed_skew: Option<Value>,
    header: Option<RawHeader>,
    claims_map: Option<Value>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHeader {
    #[serde(rename = "type")]
    kind: String,
    name: Option<String>,
}

/// Where the keys come from.
pub(crate) enum KeySpec {
    /// One key given inline, for one algorithm.
    Inline { alg: Algorithm, key: DecodingKey },
    /// A JWKS fetched over HTTP(S).
    Remote(reqwest::Url),
    /// A JWKS in a local file, read once at start-up.
    File(PathBuf),
}

/// Where the Hasura claims sit in the token's payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ClaimsLocation {
    /// A top-level key of the payload.
    Namespace(String),
    /// A JSON path into the payload.
    Path(Vec<Step>),
    /// Each claim from its own place (`claims_map`).
    Map(ClaimsMap),
}

/// Whether the claims are an object or a string holding one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ClaimsFormat {
    Json,
    StringifiedJson,
}

/// Which request header carries the token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TokenSource {
    /// `Authorization: Bearer <token>`.
    Authorization,
    /// The cookie with this name.
    Cookie(String),
}

/// A checked JWT configuration.
pub(crate) struct JwtConfig {
    pub keys: KeySpec,
    /// With a JWKS, the `type` given alongside `jwk_url`, if any: tokens must use it.
    pub required_alg: Option<Algorithm>,
    pub audience: Option<Vec<String>>,
    pub issuer: Option<String>,
    pub allowed_skew: u64,
    pub claims: ClaimsLocation,
    pub format: ClaimsFormat,
    pub source: TokenSource,
}

/// Parses Hasura's JWT secret JSON.
pub(crate) fn parse(text: &str) -> Result<JwtConfig, ConfigError> {
    let raw: RawJwtConfig =
        serde_json::from_str(text).map_err(|e| ConfigError::JwtJson(e.to_string()))?;
    let bad = |message: &str| ConfigError::Jwt(message.to_string());

    let claims_map = match &raw.claims_map {
        Some(_)
            if raw.claims_namespace.is_some()
                || raw.claims_namespace_path.is_some()
                || raw.claims_format.is_some() =>
        {
            return Err(bad(
                "claims_map replaces claims_namespace, claims_namespace_path and claims_format: give one or the other",
            ))
        }
        Some(map) => Some(claims_map::parse(map)?),
        None => None,
    };

    let alg = raw.alg.as_deref().map(algorithm).transpose()?;
    let (keys, required_alg) = match (raw.key, raw.jwk_url) {
        (Some(_), Some(_)) => return Err(bad("give either key or jwk_url, not both")),
        (None, None) => return Err(bad("give either type and key, or jwk_url")),
        (Some(key), None) => {
            let alg = alg.ok_or_else(|| bad("key needs a type (HS256, RS256, ES256, ...)"))?;
            let key = keys::inline_key(alg, &key).map_err(|reason| ConfigError::Key {
                alg: format!("{alg:?}"),
                reason,
            })?;
            (KeySpec::Inline { alg, key }, None)
        }
        (None, Some(url)) => (jwk_location(&url)?, alg),
    };

    let audience = match raw.audience {
        None => None,
        Some(OneOrMany::One(one)) => Some(vec![one]),
        Some(OneOrMany::Many(many)) if many.is_empty() => {
            return Err(bad("audience must not be an empty list"))
        }
        Some(OneOrMany::Many(many)) => Some(many),
    };

    let allowed_skew = match raw.allowed_skew {
        None => 0,
        Some(value) => skew_seconds(&value)?,
    };

    // claims_namespace_path wins over claims_namespace when both are given.
    let claims = match (raw.claims_namespace_path, raw.claims_namespace) {
        _ if claims_map.is_some() => ClaimsLocation::Map(claims_map.unwrap_or_default()),
        (Some(path), _) => ClaimsLocation::Path(
            jsonpath::parse("claims_namespace_path", &path).map_err(ConfigError::Jwt)?,
        ),
        (None, Some(namespace)) => ClaimsLocation::Namespace(namespace),
        (None, None) => ClaimsLocation::Namespace(DEFAULT_NAMESPACE.to_string()),
    };

    let format = match raw.claims_format.as_deref() {
        None | Some("json") => ClaimsFormat::Json,
        Some("stringified_json") => ClaimsFormat::StringifiedJson,
        Some(_) => {
            return Err(bad(
                "claims_format must be \"json\" or \"stringified_json\"",
            ))
        }
    };

    let source = match raw.header {
        None => TokenSource::Authorization,
        Some(header) if header.kind.eq_ignore_ascii_case("authorization") => {
            if header.name.is_some() {
                return Err(bad("header of type Authorization takes no name"));
            }
            TokenSource::Authorization
        }
        Some(header) if header.kind.eq_ignore_ascii_case("cookie") => match header.name {
            Some(name) if !name.is_empty() => TokenSource::Cookie(name),
            _ => return Err(bad("header of type Cookie needs the cookie's name")),
        },
        Some(_) => return Err(bad("header.type must be \"Authorization\" or \"Cookie\"")),
    };

    Ok(JwtConfig {
        keys,
        required_alg,
        audience,
        issuer: raw.issuer,
        allowed_skew,
        claims,
        format,
        source,
    })
}

/// The algorithm for a `type`, with Hasura's spelling `Ed25519` for EdDSA.
fn algorithm(name: &str) -> Result<Algorithm, ConfigError> {
    match name {
        "Ed25519" => Ok(Algorithm::EdDSA),
        "ES512" => Err(ConfigError::Jwt(
            "type ES512 is not supported (no P-521 verification); use ES256 or ES384".to_string(),
        )),
        _ => Algorithm::from_str(name).map_err(|_| {
            ConfigError::Jwt(format!(
                "unknown type {name:?}; expected one of HS256, HS384, HS512, RS256, RS384, RS512, PS256, PS384, \
                 PS512, ES256, ES384, EdDSA (or Ed25519)"
            ))
        }),
    }
}

/// `jwk_url`: an http(s) URL, a `file://` URL or a plain path.
fn jwk_location(text: &str) -> Result<KeySpec, ConfigError> {
    if text.trim().is_empty() {
        return Err(ConfigError::Jwt("jwk_url must not be empty".to_string()));
    }
    match reqwest::Url::parse(text) {
        Ok(url) if matches!(url.scheme(), "http" | "https") => Ok(KeySpec::Remote(url)),
        Ok(url) if url.scheme() == "file" => url
            .to_file_path()
            .map(KeySpec::File)
            .map_err(|()| ConfigError::Jwt(format!("jwk_url {text:?} is not a usable file path"))),
        Ok(url) => Err(ConfigError::Jwt(format!(
            "jwk_url scheme {:?} is not supported; use https://, http://, file:// or a path",
            url.scheme()
        ))),
        // Not a URL at all: a relative or absolute path.
        Err(_) => Ok(KeySpec::File(PathBuf::from(text))),
    }
}

/// `allowed_skew`: whole seconds (a fraction rounds up).
fn skew_seconds(value: &Value) -> Result<u64, ConfigError> {
    let seconds = value
        .as_f64()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .ok_or_else(|| {
            ConfigError::Jwt("allowed_skew must be a non-negative number of seconds".to_string())
        })?;
    if seconds > MAX_SKEW_SECS as f64 {
        return Err(ConfigError::Jwt(format!(
            "allowed_skew of {seconds} seconds is more than a day"
        )));
    }
    // In range by the check above, so the cast neither truncates nor saturates.
    Ok(seconds.ceil() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> String {
        match parse(text) {
            Ok(_) => panic!("{text} should be refused"),
            Err(e) => e.to_string(),
        }
    }

    const SECRET: &str = "0123456789abcdef0123456789abcdef";

    #[test]
    fn defaults() {
        let config = parse(&format!(r#"{{"type": "HS256", "key": "{SECRET}"}}"#)).unwrap();
        assert!(matches!(
            config.keys,
            KeySpec::Inline {
                alg: Algorithm::HS256,
                ..
            }
        ));
        assert_eq!(
            config.claims,
            ClaimsLocation::Namespace(DEFAULT_NAMESPACE.into())
        );
        assert_eq!(config.format, ClaimsFormat::Json);
        assert_eq!(config.source, TokenSource::Authorization);
        assert_eq!(config.allowed_skew, 0);
        assert!(config.audience.is_none() && config.issuer.is_none());
    }

    #[test]
    fn every_option() {
        let config = parse(
            r#"{"jwk_url": "https://example.com/jwks.json", "type": "RS256",
                "claims_namespace": "ignored", "claims_namespace_path": "$.hasura.claims",
                "claims_format": "stringified_json", "audience": ["a", "b"], "issuer": "me",
                "allowed_skew": 2.5, "header": {"type": "Cookie", "name": "jwt"}}"#,
        )
        .unwrap();
        assert!(
            matches!(config.keys, KeySpec::Remote(ref u) if u.as_str() == "https://example.com/jwks.json")
        );
        assert_eq!(config.required_alg, Some(Algorithm::RS256));
        assert_eq!(
            config.claims,
            ClaimsLocation::Path(vec![Step::Key("hasura".into()), Step::Key("claims".into())])
        );
        assert_eq!(config.format, ClaimsFormat::StringifiedJson);
        assert_eq!(config.audience, Some(vec!["a".into(), "b".into()]));
        assert_eq!(config.issuer.as_deref(), Some("me"));
        assert_eq!(config.allowed_skew, 3);
        assert_eq!(config.source, TokenSource::Cookie("jwt".into()));
    }

    #[test]
    fn jwk_url_forms() {
        let file = parse(r#"{"jwk_url": "file:///etc/jwks.json"}"#).unwrap();
        assert!(matches!(file.keys, KeySpec::File(ref p) if p == &PathBuf::from("/etc/jwks.json")));
        let path = parse(r#"{"jwk_url": "keys/jwks.json"}"#).unwrap();
        assert!(matches!(path.keys, KeySpec::File(ref p) if p == &PathBuf::from("keys/jwks.json")));
        let http = parse(r#"{"jwk_url": "http://127.0.0.1:1/jwks"}"#).unwrap();
        assert!(matches!(http.keys, KeySpec::Remote(_)));
        assert!(error(r#"{"jwk_url": "ftp://x/jwks"}"#).contains("scheme"));
    }

    #[test]
    fn refusals() {
        assert!(error("not json").contains("not valid JSON"));
        assert!(error(r#"{"type": "HS256", "key": "k", "colour": 1}"#)
            .contains("unknown field `colour`"));
        assert!(error(r#"{"claims_namespace": "x"}"#).contains("either type and key, or jwk_url"));
        assert!(error(r#"{"key": "k", "jwk_url": "https://x"}"#).contains("not both"));
        assert!(error(r#"{"key": "k"}"#).contains("needs a type"));
        assert!(error(r#"{"type": "HS257", "key": "k"}"#).contains("unknown type"));
        assert!(error(r#"{"type": "ES512", "key": "k"}"#).contains("ES512 is not supported"));
        assert!(error(r#"{"type": "HS256", "key": "short"}"#).contains("at least 32"));
        assert!(error(r#"{"type": "RS256", "key": "not a pem"}"#).contains("RS256"));
        assert!(
            error(r#"{"jwk_url": "https://x", "claims_format": "yaml"}"#).contains("claims_format")
        );
        assert!(error(r#"{"jwk_url": "https://x", "allowed_skew": -1}"#).contains("allowed_skew"));
        assert!(error(r#"{"jwk_url": "https://x", "allowed_skew": 100000}"#)
            .contains("more than a day"));
        assert!(error(r#"{"jwk_url": "https://x", "audience": []}"#).contains("audience"));
        assert!(
            error(r#"{"jwk_url": "https://x", "header": {"type": "Cookie"}}"#)
                .contains("cookie's name")
        );
        assert!(
            error(r#"{"jwk_url": "https://x", "header": {"type": "Query"}}"#)
                .contains("header.type")
        );
        assert!(
            error(r#"{"jwk_url": "https://x", "claims_namespace_path": "$.a b"}"#)
                .contains("JSON path")
        );
        assert!(error(r#"{"jwk_url": "https://x", "claims_map": {}}"#)
            .contains("x-hasura-allowed-roles is expected"));
        assert!(error(
            r#"{"jwk_url": "https://x", "claims_namespace": "n", "claims_map": {"x-hasura-allowed-roles": ["a"], "x-hasura-default-role": "a"}}"#
        )
        .contains("give one or the other"));
        assert!(error(r#"{"jwk_url": ""}"#).contains("must not be empty"));
    }

    #[test]
    fn ed25519_is_eddsa() {
        let config = parse(r#"{"jwk_url": "https://x", "type": "Ed25519"}"#).unwrap();
        assert_eq!(config.required_alg, Some(Algorithm::EdDSA));
    }
}
