//! A verified token's Hasura claims made a session: the role it may act as, and
//! its `x-hasura-*` session variables.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{ALLOWED_ROLES, DEFAULT_ROLE};
use crate::error::AuthError;
use crate::session::{claim_text, Role, Session, ROLE_VAR, VAR_PREFIX};

/// The role and session variables from the Hasura claims.
pub(super) fn session_from_claims(
    claims: Map<String, Value>,
    requested: Option<String>,
) -> Result<Session, AuthError> {
    let allowed = role_list(claims.get(ALLOWED_ROLES))?;
    let default = match claims.get(DEFAULT_ROLE) {
        None => return Err(claim_missing(DEFAULT_ROLE)),
        Some(Value::String(role)) if !role.is_empty() => role.clone(),
        Some(_) => {
            return Err(AuthError::invalid_jwt(format!(
                "invalid {DEFAULT_ROLE}; should be a single role name"
            )))
        }
    };
    let role = match requested {
        Some(requested) if !allowed.contains(&requested) => {
            return Err(AuthError::role_not_allowed(
                "Your requested role is not in allowed roles",
            ))
        }
        Some(requested) => requested,
        None if !allowed.contains(&default) => {
            return Err(AuthError::role_not_allowed(format!(
                "the token's {DEFAULT_ROLE} is not in its {ALLOWED_ROLES}"
            )))
        }
        None => default,
    };
    let vars: BTreeMap<String, String> = claims
        .iter()
        .filter(|(name, _)| ![ALLOWED_ROLES, DEFAULT_ROLE, ROLE_VAR].contains(&name.as_str()))
        .map(|(name, value)| (name.clone(), claim_text(value)))
        .collect();
    Ok(Session::new(Role::from_name(&role), vars))
}

fn role_list(value: Option<&Value>) -> Result<Vec<String>, AuthError> {
    let invalid = || {
        AuthError::invalid_jwt(format!(
            "invalid {ALLOWED_ROLES}; should be a list of roles"
        ))
    };
    let items = value.ok_or_else(|| claim_missing(ALLOWED_ROLES))?;
    let items = items.as_array().ok_or_else(invalid)?;
    items
        .iter()
        .map(|item| match item {
            Value::String(role) if !role.is_empty() => Ok(role.clone()),
            _ => Err(invalid()),
        })
        .collect()
}

fn claim_missing(claim: &str) -> AuthError {
    AuthError::invalid_jwt(format!("JWT claim does not contain {claim}"))
}

/// The `x-hasura-*` claims, named in lower case. A claim given twice in different
/// cases is refused: taking either would let the token's last spelling decide.
pub(super) fn hasura_members(object: Map<String, Value>) -> Result<Map<String, Value>, AuthError> {
    let mut members = Map::new();
    for (name, value) in object {
        let name = name.to_ascii_lowercase();
        if !name.starts_with(VAR_PREFIX) {
            continue;
        }
        if members.insert(name.clone(), value).is_some() {
            return Err(AuthError::invalid_jwt(format!(
                "the claim '{name}' appears more than once (in different cases)"
            )));
        }
    }
    Ok(members)
}
