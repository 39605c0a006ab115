//! `api_limits`, in the shape of Hasura's `api_limits.yaml` (so a Hasura project's
//! metadata moves over unchanged), plus Grafton's own keys beside Hasura's.
//! Plain data: the engine resolves it per role and enforces it.

use serde::Deserialize;
use std::collections::BTreeMap;

/// The limits on what one request (or one client) may ask of the server.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiLimits {
    /// Turns every limit here off (the server's own safety rails stay).
    #[serde(default)]
    pub disabled: bool,
    /// Deepest nesting of selections (fragments expanded; a root field is depth 1).
    #[serde(default)]
    pub depth_limit: Option<Limit<u64>>,
    /// Most fields in one operation (fragments expanded, aliases counted).
    #[serde(default)]
    pub node_limit: Option<Limit<u64>>,
    /// Most operations in one batched request (a JSON array body).
    #[serde(default)]
    pub batch_limit: Option<Limit<u64>>,
    /// Seconds a request's database work may take.
    #[serde(default)]
    pub time_limit: Option<Limit<f64>>,
    /// Requests per minute, per client.
    #[serde(default)]
    pub rate_limit: Option<Limit<RateLimit>>,
    /// Grafton: the most root fields in one operation.
    #[serde(default)]
    pub root_field_limit: Option<Limit<u64>>,
    /// Grafton: the largest estimated cost (rows the operation may produce, see
    /// docs/limits.md).
    #[serde(default)]
    pub cost_limit: Option<Limit<u64>>,
    /// Grafton: the largest response, in bytes.
    #[serde(default)]
    pub max_response_bytes: Option<Limit<u64>>,
    /// Grafton: requests running at once (more wait briefly in a short queue, then
    /// are refused as `overloaded`).
    #[serde(default)]
    pub max_concurrent: Option<Limit<u64>>,
    /// Grafton: live subscriptions of a role at once, over every connection.
    #[serde(default)]
    pub subscription_limit: Option<Limit<u64>>,
}

/// One limit: a value for every role, and overrides by role. The admin role is
/// exempt unless `per_role` names `admin`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limit<T> {
    /// For every role without an override.
    #[serde(default = "none")]
    pub global: Option<T>,
    /// By role name.
    #[serde(default = "BTreeMap::new")]
    pub per_role: BTreeMap<String, T>,
}

/// `None` without asking `T: Default`, which `#[serde(default)]` on a generic field would.
fn none<T>() -> Option<T> {
    None
}

/// The role name under which `per_role` sets a limit for admin requests.
pub const ADMIN_ROLE: &str = "admin";

impl<T: Clone> Limit<T> {
    /// The value for `role` (`None`: admin, only limited when named in `per_role`).
    pub fn for_role(&self, role: Option<&str>) -> Option<T> {
        match role {
            None => self.per_role.get(ADMIN_ROLE).cloned(),
            Some(r) => self.per_role.get(r).or(self.global.as_ref()).cloned(),
        }
    }
}

/// Hasura's rate limit: `max_reqs_per_min`, counted per `unique_params` (the
/// client's IP, or a list of session variables; absent: one count for the role).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateLimit {
    /// Requests allowed per minute.
    pub max_reqs_per_min: u64,
    /// What one client is.
    #[serde(default)]
    pub unique_params: Option<UniqueParams>,
    /// Grafton: count each root field as one request (a 9-field document costs 9),
    /// as WSO2's operation-based throttling does. Default: one per request.
    #[serde(default)]
    pub per_root_field: bool,
}

/// Who counts as one client for a rate limit.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum UniqueParams {
    /// `IP`: the client's address.
    Ip(IpKeyword),
    /// Session variables, e.g. `[x-hasura-user-id]`.
    SessionVariables(Vec<String>),
}

/// The `IP` keyword of `unique_params`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum IpKeyword {
    /// The client's IP address.
    #[serde(rename = "IP", alias = "ip")]
    Ip,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_hasura_shape_and_resolves_roles() {
        let yaml = r#"
disabled: false
depth_limit: { global: 10, per_role: { user: 6 } }
node_limit: { global: 200, per_role: {} }
batch_limit: { global: 10 }
time_limit: { global: 10, per_role: { user: 3 } }
rate_limit:
  global: { max_reqs_per_min: 6000, unique_params: IP }
  per_role: { user: { max_reqs_per_min: 600, unique_params: [x-hasura-user-id] } }
cost_limit: { per_role: { admin: 100000 } }
"#;
        let limits: ApiLimits = serde_norway::from_str(yaml).expect("valid limits");
        let depth = limits.depth_limit.expect("depth");
        assert_eq!(depth.for_role(Some("user")), Some(6));
        assert_eq!(depth.for_role(Some("other")), Some(10));
        assert_eq!(depth.for_role(None), None, "admin is exempt");
        assert_eq!(
            limits.cost_limit.expect("cost").for_role(None),
            Some(100000)
        );
        let rate = limits.rate_limit.expect("rate");
        assert_eq!(
            rate.global.expect("global").unique_params,
            Some(UniqueParams::Ip(IpKeyword::Ip))
        );
        assert_eq!(
            rate.per_role["user"].unique_params,
            Some(UniqueParams::SessionVariables(vec![
                "x-hasura-user-id".into()
            ]))
        );
    }

    #[test]
    fn unknown_keys_are_refused() {
        let err = serde_norway::from_str::<ApiLimits>("depth_limt: {global: 1}")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("depth_limt"), "{err}");
    }
}
