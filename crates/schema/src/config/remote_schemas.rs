//! Remote schemas (Hasura's `remote_schemas`, the same shape in the config
//! file): another GraphQL service whose root fields are served beside the
//! database's, each request's part for it forwarded to it.

use super::actions::list;
use super::events::HeaderConf;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// One remote schema.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RemoteSchemaConfig {
    /// Its name (in the metadata and in errors).
    pub name: String,
    /// Where it is and how it is called.
    pub definition: RemoteSchemaDefinition,
    /// A comment.
    #[serde(default)]
    pub comment: Option<String>,
    /// Per-role subsets of it (Hasura's remote schema permissions).
    #[serde(
        default,
        deserialize_with = "list",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub permissions: Vec<RemoteSchemaPermission>,
    /// Relationships from its types (not served yet: reported when present).
    #[serde(
        default,
        deserialize_with = "list",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub remote_relationships: Vec<Value>,
}

/// A remote schema's definition.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RemoteSchemaDefinition {
    /// Its URL (`{{ENV}}` templates as Hasura's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The environment variable holding its URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url_from_env: Option<String>,
    /// Headers sent with every call.
    #[serde(
        default,
        deserialize_with = "list",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub headers: Vec<HeaderConf>,
    /// Whether the client's headers are sent on.
    #[serde(default)]
    pub forward_client_headers: bool,
    /// Seconds a call may take (Hasura's default: 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u64>,
    /// Its names as served: a root field namespace, type and field renames.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customization: Option<Customization>,
}

impl RemoteSchemaDefinition {
    /// Seconds a call may take.
    pub fn timeout(&self) -> u64 {
        self.timeout_seconds.unwrap_or(60)
    }
}

/// Hasura's remote schema customization.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Customization {
    /// One root field holding all of its root fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_fields_namespace: Option<String>,
    /// Its types' names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub type_names: Option<TypeNames>,
    /// Its fields' names, per type.
    #[serde(
        default,
        deserialize_with = "list",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub field_names: Vec<FieldNames>,
}

/// How its types are named.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TypeNames {
    /// Put before every type's name (not built-in scalars, not `__` types).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    /// Put after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suffix: Option<String>,
    /// Names given outright (they win over the prefix and suffix).
    #[serde(default)]
    pub mapping: BTreeMap<String, String>,
}

/// How the fields of one of its types are named.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FieldNames {
    /// The type (its remote name).
    pub parent_type: String,
    /// Put before every field's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    /// Put after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suffix: Option<String>,
    /// Names given outright.
    #[serde(default)]
    pub mapping: BTreeMap<String, String>,
}

/// A role's part of a remote schema.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RemoteSchemaPermission {
    /// The role.
    pub role: String,
    /// Its SDL.
    pub definition: RemotePermissionDefinition,
    /// A comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// The SDL of a role's part.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RemotePermissionDefinition {
    /// The SDL: the types and fields the role sees, with `@preset`s.
    pub schema: String,
}
