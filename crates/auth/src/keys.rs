//! Verification keys: one given inline (a secret or a PEM public key / certificate), or a
//! JWKS; each key knows which algorithms it may verify.

use std::str::FromStr;

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, DecodingKeyKind};
use rsa::pkcs1::DecodeRsaPublicKey;
use serde::Deserialize;
use serde_json::Value;

/// A key and what it may verify.
#[derive(Debug)]
pub(crate) struct VerifyKey {
    /// The JWKS `kid`, if any.
    pub kid: Option<String>,
    /// The algorithms a token verified with this key may use.
    pub algorithms: Vec<Algorithm>,
    pub key: DecodingKey,
}

/// The keys a token may be checked against.
#[derive(Debug)]
pub(crate) struct KeySet {
    pub keys: Vec<VerifyKey>,
    /// Whether a token's `kid` selects among the keys (a JWKS), or is ignored (one key
    /// given inline, which Hasura uses whatever `kid` the token names).
    pub by_kid: bool,
}

impl KeySet {
    /// The one key given inline.
    pub fn inline(alg: Algorithm, key: DecodingKey) -> KeySet {
        KeySet {
            keys: vec![VerifyKey {
                kid: None,
                algorithms: vec![alg],
                key,
            }],
            by_kid: false,
        }
    }

    /// The keys a token with this `kid` may be checked against (all of them when the
    /// token names none, or when the set does not select by `kid`).
    pub fn candidates<'a>(&'a self, kid: Option<&'a str>) -> impl Iterator<Item = &'a VerifyKey> {
        self.keys
            .iter()
            .filter(move |key| match (self.by_kid, kid) {
                (true, Some(kid)) => key.kid.as_deref() == Some(kid),
                _ => true,
            })
    }

    /// Whether a token naming `kid` would find a key.
    pub fn knows(&self, kid: Option<&str>) -> bool {
        self.candidates(kid).next().is_some()
    }
}

/// Decodes the `key` of the JWT secret for `alg`, refusing what could never verify a token.
pub(crate) fn inline_key(alg: Algorithm, key: &str) -> Result<DecodingKey, String> {
    let pem = key.as_bytes();
    let is_private = key.contains("PRIVATE KEY-----");
    if is_private && !alg_is_hmac(alg) {
        return Err("the key is a private key; give the public key or a certificate".to_string());
    }
    fn pem_error(kind: &'static str) -> impl Fn(jsonwebtoken::errors::Error) -> String {
        move |e| format!("not a PEM-encoded {kind} public key or X.509 certificate ({e})")
    }
    match alg {
        Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512 => {
            let bytes = hmac_min_bytes(alg);
            if key.len() < bytes {
                return Err(format!(
                    "the secret must be at least {bytes} characters long for {alg:?}"
                ));
            }
            Ok(DecodingKey::from_secret(pem))
        }
        Algorithm::RS256
        | Algorithm::RS384
        | Algorithm::RS512
        | Algorithm::PS256
        | Algorithm::PS384
        | Algorithm::PS512 => {
            let decoded = DecodingKey::from_rsa_pem(pem).map_err(pem_error("RSA"))?;
            let der = der_bytes(&decoded).ok_or("not an RSA public key")?;
            rsa::RsaPublicKey::from_pkcs1_der(der)
                .map_err(|e| format!("not a usable RSA public key ({e})"))?;
            Ok(decoded)
        }
        Algorithm::ES256 | Algorithm::ES384 => {
            let decoded = DecodingKey::from_ec_pem(pem).map_err(pem_error("EC"))?;
            // A SEC1 point: 0x04 + x + y, or 0x02/0x03 + x.
            let (curve, sizes) = match alg {
                Algorithm::ES256 => ("P-256", [65, 33]),
                _ => ("P-384", [97, 49]),
            };
            match der_bytes(&decoded) {
                Some(point) if sizes.contains(&point.len()) => Ok(decoded),
                _ => Err(format!("not a {curve} public key")),
            }
        }
        Algorithm::EdDSA => {
            let decoded = DecodingKey::from_ed_pem(pem).map_err(pem_error("Ed25519"))?;
            match der_bytes(&decoded) {
                Some(point) if point.len() == 32 => Ok(decoded),
                _ => Err("not an Ed25519 public key".to_string()),
            }
        }
    }
}

fn alg_is_hmac(alg: Algorithm) -> bool {
    matches!(alg, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512)
}

/// Hasura's minimum HMAC secret length: as many characters as the hash has bytes.
fn hmac_min_bytes(alg: Algorithm) -> usize {
    match alg {
        Algorithm::HS384 => 48,
        Algorithm::HS512 => 64,
        _ => 32,
    }
}

fn der_bytes(key: &DecodingKey) -> Option<&[u8]> {
    match key.kind() {
        DecodingKeyKind::SecretOrDer(bytes) => Some(bytes),
        DecodingKeyKind::RsaModulusExponent { .. } => None,
    }
}

#[derive(Deserialize)]
struct RawJwkSet {
    keys: Vec<Value>,
}

/// Parses a JWKS document. Keys that cannot verify JWT signatures (encryption keys, unknown
/// key types or curves, malformed members) are skipped; a set left with none is an error.
pub(crate) fn parse_jwks(body: &[u8]) -> Result<KeySet, String> {
    let raw: RawJwkSet = serde_json::from_slice(body)
        .map_err(|e| format!("not a JWKS document (a JSON object with \"keys\"): {e}"))?;
    let total = raw.keys.len();
    let keys: Vec<VerifyKey> = raw.keys.into_iter().filter_map(signing_key).collect();
    if keys.is_empty() {
        return Err(format!(
            "none of its {total} keys can verify JWT signatures"
        ));
    }
    if keys.len() < total {
        tracing::debug!(
            skipped = total - keys.len(),
            "JWKS keys that cannot verify signatures were skipped"
        );
    }
    Ok(KeySet { keys, by_kid: true })
}

fn signing_key(value: Value) -> Option<VerifyKey> {
    let jwk: Jwk = serde_json::from_value(value).ok()?;
    if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
        return None;
    }
    let by_type: &[Algorithm] = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => &[
            Algorithm::RS256,
            Algorithm::RS384,
            Algorithm::RS512,
            Algorithm::PS256,
            Algorithm::PS384,
            Algorithm::PS512,
        ],
        AlgorithmParameters::EllipticCurve(params) => match params.curve {
            EllipticCurve::P256 => &[Algorithm::ES256],
            EllipticCurve::P384 => &[Algorithm::ES384],
            _ => &[],
        },
        AlgorithmParameters::OctetKeyPair(params) => match params.curve {
            EllipticCurve::Ed25519 => &[Algorithm::EdDSA],
            _ => &[],
        },
        AlgorithmParameters::OctetKey(_) => &[Algorithm::HS256, Algorithm::HS384, Algorithm::HS512],
    };
    // A key that names its algorithm verifies that one only, and only if it fits the key.
    let algorithms: Vec<Algorithm> = match jwk.common.key_algorithm {
        None => by_type.to_vec(),
        Some(named) => Algorithm::from_str(&named.to_string())
            .ok()
            .filter(|alg| by_type.contains(alg))
            .into_iter()
            .collect(),
    };
    if algorithms.is_empty() {
        return None;
    }
    let key = DecodingKey::from_jwk(&jwk).ok()?;
    Some(VerifyKey {
        kid: jwk.common.key_id,
        algorithms,
        key,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn skips_keys_that_cannot_sign() {
        let doc = json!({"keys": [
            {"kty": "RSA", "use": "enc", "kid": "enc", "n": "sXch", "e": "AQAB"},
            {"kty": "RSA", "alg": "RSA-OAEP", "kid": "oaep", "n": "sXch", "e": "AQAB"},
            {"kty": "EC", "crv": "P-521", "kid": "p521", "x": "AQ", "y": "AQ"},
            {"kty": "AKP", "kid": "unknown-type"},
            {"kty": "RSA", "alg": "ES256", "kid": "mismatch", "n": "sXch", "e": "AQAB"},
            {"kty": "RSA", "kid": "rsa", "n": "sXch", "e": "AQAB"},
            {"kty": "EC", "crv": "P-256", "alg": "ES256", "kid": "ec", "x": "AQ", "y": "AQ"},
            {"kty": "OKP", "crv": "Ed25519", "kid": "ed", "x": "AQ"}
        ]});
        let set = parse_jwks(doc.to_string().as_bytes()).unwrap();
        let kids: Vec<_> = set.keys.iter().map(|k| k.kid.as_deref().unwrap()).collect();
        assert_eq!(kids, ["rsa", "ec", "ed"]);
        assert_eq!(set.keys[0].algorithms.len(), 6);
        assert_eq!(set.keys[1].algorithms, [Algorithm::ES256]);
        assert_eq!(set.keys[2].algorithms, [Algorithm::EdDSA]);
        assert!(set.knows(Some("ec")) && !set.knows(Some("enc")) && set.knows(None));
    }

    #[test]
    fn refuses_useless_documents() {
        assert!(parse_jwks(b"[]").unwrap_err().contains("not a JWKS"));
        assert!(parse_jwks(br#"{"keys": []}"#)
            .unwrap_err()
            .contains("none of its 0 keys"));
    }

    #[test]
    fn inline_keys_are_checked() {
        assert!(inline_key(Algorithm::HS512, &"x".repeat(63)).is_err());
        assert!(inline_key(Algorithm::HS512, &"x".repeat(64)).is_ok());
        let private = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n";
        assert!(inline_key(Algorithm::RS256, private)
            .unwrap_err()
            .contains("private key"));
        assert!(inline_key(Algorithm::ES256, "junk")
            .unwrap_err()
            .contains("EC"));
        assert!(inline_key(Algorithm::EdDSA, "junk")
            .unwrap_err()
            .contains("Ed25519"));
    }
}
