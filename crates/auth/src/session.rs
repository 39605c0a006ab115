//! The outcome of authentication: a role and the `x-hasura-*` session variables.

use std::collections::BTreeMap;

use http::HeaderMap;
use serde_json::Value;

/// Hasura's name for the role with full access.
pub const ADMIN_ROLE: &str = "admin";

/// The session variable that holds the role, and the header that asks for one.
pub const ROLE_VAR: &str = "x-hasura-role";

/// The prefix shared by every session variable (and the headers that carry them).
pub const VAR_PREFIX: &str = "x-hasura-";

/// An authenticated request: who it acts as and the variables permissions may read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The role the request acts as.
    pub role: Role,
    /// Session variables by lower-case name (`x-hasura-user-id`, ...), always including
    /// `x-hasura-role` with the role's name.
    pub vars: BTreeMap<String, String>,
    /// A trusted backend's request (admin secret, `x-hasura-use-backend-only-permissions:
    /// true`): the role's `backend_only` permissions apply. Never from a JWT.
    pub backend_only: bool,
    /// When the credentials stop being valid (a JWT's `exp`), if ever.
    pub expires: Option<std::time::SystemTime>,
}

/// The header with which an admin-secret request asks for `backend_only` permissions.
pub const BACKEND_ONLY_HEADER: &str = "x-hasura-use-backend-only-permissions";

/// A role. The role named `admin` is always [`Role::Admin`], as in Hasura, wherever the name
/// comes from (the `x-hasura-role` header of an admin, a JWT's roles, the unauthorized role).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Role {
    /// Full access, no permission checks.
    Admin,
    /// A role whose permissions are configured; never `"admin"`.
    Named(String),
}

impl Role {
    /// The role with this name: [`Role::Admin`] for `"admin"`, else [`Role::Named`].
    pub fn from_name(name: &str) -> Role {
        if name == ADMIN_ROLE {
            Role::Admin
        } else {
            Role::Named(name.to_string())
        }
    }

    /// The role's name (`"admin"` for [`Role::Admin`]).
    pub fn name(&self) -> &str {
        match self {
            Role::Admin => ADMIN_ROLE,
            Role::Named(name) => name,
        }
    }

    /// Whether this is the admin role.
    pub fn is_admin(&self) -> bool {
        matches!(self, Role::Admin)
    }
}

impl Session {
    /// A session for `role` with `vars`, `x-hasura-role` set to the role's name.
    pub(crate) fn new(role: Role, mut vars: BTreeMap<String, String>) -> Session {
        vars.insert(ROLE_VAR.to_string(), role.name().to_string());
        Session {
            role,
            vars,
            backend_only: false,
            expires: None,
        }
    }

    /// The value of a session variable, by name in any case.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }
}

/// The value of a header as text: UTF-8 decoded leniently, as Hasura does.
pub(crate) fn header_text(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
}

/// The role asked for in the `x-hasura-role` header, if any (an empty value asks for none).
pub(crate) fn requested_role(headers: &HeaderMap) -> Option<String> {
    header_text(headers, ROLE_VAR).filter(|role| !role.is_empty())
}

/// Every `x-hasura-*` header but the admin secret ones, as session variables.
pub(crate) fn vars_from_headers(headers: &HeaderMap, skip: &[&str]) -> BTreeMap<String, String> {
    headers
        .keys()
        .map(|name| name.as_str())
        .filter(|name| name.starts_with(VAR_PREFIX) && !skip.contains(name))
        .filter_map(|name| Some((name.to_string(), header_text(headers, name)?)))
        .collect()
}

/// A JSON claim value as a session variable's text: strings as they are, arrays as a
/// PostgreSQL array literal (`{a,b}`), anything else as its JSON text.
pub(crate) fn claim_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Array(items) => pg_array(items),
        other => other.to_string(),
    }
}

fn pg_array(items: &[Value]) -> String {
    let elements: Vec<String> = items
        .iter()
        .map(|item| match item {
            Value::Array(inner) => pg_array(inner),
            Value::Null => "NULL".to_string(),
            Value::String(text) => pg_array_element(text),
            other => pg_array_element(&other.to_string()),
        })
        .collect();
    format!("{{{}}}", elements.join(","))
}

/// One element of an array literal, double-quoted when PostgreSQL's `array_out` would.
fn pg_array_element(text: &str) -> String {
    let needs_quotes = text.is_empty()
        || text.eq_ignore_ascii_case("null")
        || text
            .chars()
            .any(|c| matches!(c, '{' | '}' | ',' | '"' | '\\') || c.is_whitespace());
    if needs_quotes {
        format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn claim_values_as_text() {
        assert_eq!(claim_text(&json!("abc")), "abc");
        assert_eq!(claim_text(&json!(42)), "42");
        assert_eq!(claim_text(&json!(1.5)), "1.5");
        assert_eq!(claim_text(&json!(true)), "true");
        assert_eq!(claim_text(&json!(["a", "b"])), "{a,b}");
        assert_eq!(claim_text(&json!([1, 2, 3])), "{1,2,3}");
        assert_eq!(claim_text(&json!([])), "{}");
        assert_eq!(
            claim_text(&json!(["a b", "c,d", "", "null", "q\"\\", null, [1, 2]])),
            r#"{"a b","c,d","","null","q\"\\",NULL,{1,2}}"#
        );
        assert_eq!(claim_text(&json!({"k": 1})), r#"{"k":1}"#);
    }

    #[test]
    fn admin_role_by_name() {
        assert_eq!(Role::from_name("admin"), Role::Admin);
        assert_eq!(Role::from_name("Admin"), Role::Named("Admin".into()));
        assert_eq!(Role::Admin.name(), "admin");
        assert!(!Role::from_name("user").is_admin());
    }
}
