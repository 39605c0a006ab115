//! Hasura's `claims_map`: each session variable taken from anywhere in the token's
//! payload by a JSON path (with an optional default), or given as a literal. How
//! Auth0, Firebase, Cognito and Clerk tokens, whose claims Hasura does not shape,
//! become sessions.

use serde_json::{Map, Value};

use crate::error::{AuthError, ConfigError};
use crate::jsonpath::{self, Step};
use crate::session::VAR_PREFIX;

const ALLOWED_ROLES: &str = "x-hasura-allowed-roles";
const DEFAULT_ROLE: &str = "x-hasura-default-role";

/// Where each session variable comes from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct ClaimsMap(Vec<(String, Source)>);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Source {
    /// The same value for every token.
    Literal(Value),
    /// The value at a path of the payload, else the default.
    Path {
        steps: Vec<Step>,
        text: String,
        default: Option<Value>,
    },
}

/// Parses `claims_map` (an object of session variable → literal or
/// `{"path": …, "default": …}`). The two role claims are required.
pub(crate) fn parse(value: &Value) -> Result<ClaimsMap, ConfigError> {
    let bad = |message: String| ConfigError::Jwt(message);
    let object = value
        .as_object()
        .ok_or_else(|| bad("claims_map must be an object".into()))?;
    let mut entries = Vec::new();
    for (name, spec) in object {
        let name = name.to_ascii_lowercase();
        if !name.starts_with(VAR_PREFIX) {
            return Err(bad(format!(
                "claims_map key {name:?} is not a session variable (x-hasura-…)"
            )));
        }
        if entries.iter().any(|(n, _)| *n == name) {
            return Err(bad(format!(
                "claims_map names {name:?} twice (in different cases)"
            )));
        }
        let source = match spec {
            Value::Object(path) => {
                let text = match path.get("path") {
                    Some(Value::String(text)) => text.clone(),
                    _ => {
                        return Err(bad(format!(
                            "claims_map.{name}: an object needs a \"path\" (a JSON path string)"
                        )))
                    }
                };
                if let Some(unknown) = path
                    .keys()
                    .find(|k| !["path", "default"].contains(&k.as_str()))
                {
                    return Err(bad(format!("claims_map.{name}: unknown key {unknown:?}")));
                }
                let default = path.get("default").cloned();
                if let Some(default) = &default {
                    check_shape(&name, default)
                        .map_err(|why| bad(format!("claims_map.{name}.default {why}")))?;
                }
                let steps = jsonpath::parse(&format!("claims_map.{name}.path"), &text)
                    .map_err(ConfigError::Jwt)?;
                Source::Path {
                    steps,
                    text,
                    default,
                }
            }
            literal => {
                check_shape(&name, literal)
                    .map_err(|why| bad(format!("claims_map.{name} {why}")))?;
                Source::Literal(literal.clone())
            }
        };
        entries.push((name, source));
    }
    for required in [ALLOWED_ROLES, DEFAULT_ROLE] {
        if !entries.iter().any(|(n, _)| n == required) {
            return Err(bad(format!(
                "claims_map: {required} is expected but not found"
            )));
        }
    }
    Ok(ClaimsMap(entries))
}

/// A literal or default must already be what the variable holds.
fn check_shape(name: &str, value: &Value) -> Result<(), &'static str> {
    let roles = |v: &Value| {
        v.as_array()
            .is_some_and(|a| a.iter().all(|r| r.as_str().is_some_and(|r| !r.is_empty())))
    };
    match name {
        ALLOWED_ROLES if roles(value) => Ok(()),
        ALLOWED_ROLES => Err("must be a list of role names"),
        _ if value.as_str().is_some() => Ok(()),
        _ => Err("must be a string"),
    }
}

impl ClaimsMap {
    /// The session claims of a verified token's `payload`.
    pub(crate) fn claims(&self, payload: &Value) -> Result<Map<String, Value>, AuthError> {
        let mut claims = Map::new();
        for (name, source) in &self.0 {
            let value = match source {
                Source::Literal(value) => value.clone(),
                Source::Path {
                    steps,
                    text,
                    default,
                } => match jsonpath::lookup(payload, steps).or(default.as_ref()) {
                    Some(value) => value.clone(),
                    None if name == ALLOWED_ROLES || name == DEFAULT_ROLE => {
                        return Err(AuthError::invalid_jwt(format!(
                            "JWT claim does not contain {name} (claims_map path {text})"
                        )))
                    }
                    None => {
                        return Err(AuthError::invalid_jwt(format!(
                            "JWT claim from claims_map, {name} not found (path {text})"
                        )))
                    }
                },
            };
            claims.insert(name.clone(), value);
        }
        Ok(claims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The three examples of Hasura's JWT documentation ("claims_map").
    #[test]
    fn hasuras_examples() {
        let payload = json!({"sub": "1234567890", "name": "John Doe", "admin": true,
            "iat": 1516239022, "user": {"id": "ujdh739kd"},
            "hasura": {"all_roles": ["user", "editor"]}});
        let paths = parse(&json!({
            "x-hasura-allowed-roles": {"path": "$.hasura.all_roles"},
            "x-hasura-default-role": {"path": "$.hasura.all_roles[0]"},
            "x-hasura-user-id": {"path": "$.user.id"}
        }))
        .unwrap();
        let claims = paths.claims(&payload).unwrap();
        assert_eq!(claims["x-hasura-allowed-roles"], json!(["user", "editor"]));
        assert_eq!(claims["x-hasura-default-role"], "user");
        assert_eq!(claims["x-hasura-user-id"], "ujdh739kd");

        let mut without_user = payload.clone();
        without_user.as_object_mut().unwrap().remove("user");
        let e = paths.claims(&without_user).unwrap_err();
        assert!(e.message.contains("x-hasura-user-id not found"), "{e}");
        let defaults = parse(&json!({
            "x-hasura-allowed-roles": {"path": "$.hasura.all_roles"},
            "x-hasura-default-role": {"path": "$.hasura.all_roles[0]"},
            "x-hasura-user-id": {"path": "$.user.id", "default": "ujdh739kd"}
        }))
        .unwrap();
        assert_eq!(
            defaults.claims(&without_user).unwrap()["x-hasura-user-id"],
            "ujdh739kd"
        );

        let literals = parse(&json!({
            "x-hasura-allowed-roles": ["user", "editor"],
            "x-hasura-default-role": "user",
            "x-hasura-user-id": {"path": "$.user.id"}
        }))
        .unwrap();
        let claims = literals.claims(&payload).unwrap();
        assert_eq!(claims["x-hasura-allowed-roles"], json!(["user", "editor"]));
        assert_eq!(claims["x-hasura-user-id"], "ujdh739kd");
        let e = literals.claims(&json!({})).unwrap_err();
        assert!(e.message.contains("x-hasura-user-id"), "{e}");
    }

    #[test]
    fn refusals() {
        let error = |v: Value| parse(&v).unwrap_err().to_string();
        assert!(error(json!({"x-hasura-default-role": "user"}))
            .contains("x-hasura-allowed-roles is expected but not found"));
        assert!(error(json!({"x-hasura-allowed-roles": ["a"]}))
            .contains("x-hasura-default-role is expected"));
        assert!(
            error(json!({"x-hasura-allowed-roles": "a", "x-hasura-default-role": "a"}))
                .contains("list of role names")
        );
        assert!(error(
            json!({"x-hasura-allowed-roles": ["a"], "x-hasura-default-role": "a",
            "user-id": "1"})
        )
        .contains("not a session variable"));
        assert!(error(
            json!({"x-hasura-allowed-roles": ["a"], "x-hasura-default-role": {"default": "a"}})
        )
        .contains("needs a \"path\""));
        assert!(error(
            json!({"x-hasura-allowed-roles": ["a"], "x-hasura-default-role": {"path": "$.a b"}})
        )
        .contains("claims_map.x-hasura-default-role.path"));
        assert!(error(json!({"x-hasura-allowed-roles": ["a"], "x-hasura-default-role": {"path": "$.r", "colour": 1}}))
            .contains("unknown key"));
        assert!(error(
            json!({"x-hasura-allowed-roles": ["a"], "x-hasura-default-role": "a",
            "X-Hasura-Org": "1", "x-hasura-org": "2"})
        )
        .contains("twice"));
    }
}
