//! A 200 answer of the auth hook read as Hasura reads it: a JSON object whose
//! `X-Hasura-*` string values are the session, `X-Hasura-Role` required.

use http::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value};

use super::invalid;
use crate::error::AuthError;
use crate::session::{Role, Session, ROLE_VAR, VAR_PREFIX};

const ALLOWED_ROLES: &str = "x-hasura-allowed-roles";

/// The session of a 200 answer, and its `Cache-Control` / `Expires` keys as headers.
/// The client's `x-hasura-role` picks a role only among `X-Hasura-Allowed-Roles`,
/// when the hook lists them; else the hook's `X-Hasura-Role` decides (Hasura).
pub(super) fn session_from_answer(
    answer: Map<String, Value>,
    requested: Option<String>,
) -> Result<(Session, HeaderMap), AuthError> {
    let mut vars = std::collections::BTreeMap::new();
    let mut lifetime = HeaderMap::new();
    let mut allowed: Option<Vec<String>> = None;
    for (name, value) in answer {
        let lower = name.to_ascii_lowercase();
        if lower == "cache-control" || lower == "expires" {
            if let Some(v) = value.as_str().and_then(|v| HeaderValue::from_str(v).ok()) {
                lifetime.insert(
                    HeaderName::from_static(if lower == "expires" {
                        "expires"
                    } else {
                        "cache-control"
                    }),
                    v,
                );
            }
            continue;
        }
        if !lower.starts_with(VAR_PREFIX) {
            continue;
        }
        if lower == ALLOWED_ROLES {
            allowed = Some(match value {
                Value::String(list) => list.split(',').map(|r| r.trim().to_owned()).collect(),
                Value::Array(items) => items
                    .iter()
                    .map(|i| i.as_str().map(str::to_owned))
                    .collect::<Option<_>>()
                    .ok_or_else(|| invalid("X-Hasura-Allowed-Roles is not a list of role names"))?,
                _ => {
                    return Err(invalid(
                        "X-Hasura-Allowed-Roles is not a list of role names",
                    ))
                }
            });
            continue;
        }
        let Value::String(text) = value else {
            return Err(invalid(&format!("{name} is not a string")));
        };
        if vars.insert(lower, text).is_some() {
            return Err(invalid(&format!(
                "{name} appears more than once (in different cases)"
            )));
        }
    }
    let given = vars
        .remove(ROLE_VAR)
        .filter(|r| !r.is_empty())
        .ok_or_else(|| invalid("x-hasura-role not found in session variables"))?;
    let role = match (requested, &allowed) {
        (Some(requested), Some(allowed)) if requested != given && !allowed.contains(&requested) => {
            return Err(AuthError::role_not_allowed(
                "Your requested role is not in allowed roles",
            ))
        }
        (Some(requested), Some(_)) => requested,
        _ => given,
    };
    Ok((Session::new(Role::from_name(&role), vars), lifetime))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jwks::freshness;
    use serde_json::json;
    use std::time::{Duration, SystemTime};

    fn answer(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn answers_become_sessions() {
        let (s, life) = session_from_answer(
            answer(json!({"X-Hasura-Role": "user", "X-Hasura-User-Id": "25", "Cache-Control": "max-age=600", "other": 1})),
            Some("editor".into()),
        )
        .unwrap();
        assert_eq!(
            s.role,
            Role::Named("user".into()),
            "no allowed roles: the header is ignored"
        );
        assert_eq!(s.vars["x-hasura-user-id"], "25");
        assert_eq!(s.vars.len(), 2);
        assert_eq!(
            freshness(&life, SystemTime::now()),
            Some(Duration::from_secs(600))
        );

        let switch =
            answer(json!({"x-hasura-role": "user", "x-hasura-allowed-roles": ["user", "editor"]}));
        let (s, _) = session_from_answer(switch.clone(), Some("editor".into())).unwrap();
        assert_eq!(s.role, Role::Named("editor".into()));
        let e = session_from_answer(switch, Some("admin".into())).unwrap_err();
        assert_eq!(e.status(), 403);
    }

    #[test]
    fn bad_answers_are_the_hooks_fault() {
        for bad in [
            json!({"X-Hasura-User-Id": "1"}),
            json!({"X-Hasura-Role": "user", "X-Hasura-User-Id": 1}),
            json!({"X-Hasura-Role": "user", "x-hasura-allowed-roles": 3}),
            json!({"X-Hasura-Role": "a", "x-hasura-role": "b"}),
        ] {
            let e = session_from_answer(answer(bad.clone()), None).unwrap_err();
            assert_eq!((e.code(), e.status()), ("auth-webhook-error", 500), "{bad}");
        }
    }
}
