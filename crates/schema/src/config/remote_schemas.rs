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
    /// Relationships from its types (Hasura's shape: `[{type_name,
    /// relationships: [{name, definition}]}]`); those to a table are served
    /// (see [`RemoteSchemaConfig::table_relationships`]).
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

impl RemoteSchemaConfig {
    /// Its types' relationships to tables (`to_source`), each as a custom
    /// object's relationship: `(the remote's type name, the relationship)`;
    /// and those it cannot serve: `(type.name, why)`.
    #[allow(clippy::type_complexity)]
    pub fn table_relationships(
        &self,
    ) -> (
        Vec<(String, super::actions::ActionRelationship)>,
        Vec<(String, String)>,
    ) {
        let (mut out, mut bad) = (Vec::new(), Vec::new());
        for (ty, name, rel) in self.type_relationships().filter(|(_, _, r)| !to_remote(r)) {
            match table_relationship(name, rel.get("definition")) {
                Ok(r) => out.push((ty.to_owned(), r)),
                Err(why) => bad.push((format!("{ty}.{name}"), why)),
            }
        }
        (out, bad)
    }

    /// Its types' relationships: `(type name, name, relationship)`.
    fn type_relationships(&self) -> impl Iterator<Item = (&str, &str, &Value)> {
        self.remote_relationships.iter().flat_map(|group| {
            let ty = (group.get("type_name").and_then(Value::as_str)).unwrap_or("?");
            let list = group.get("relationships").and_then(Value::as_array);
            list.into_iter().flatten().map(move |rel| {
                let name = rel.get("name").and_then(Value::as_str).unwrap_or("?");
                (ty, name, rel)
            })
        })
    }
}

impl RemoteSchemaConfig {
    /// Its types' relationships to other remote schemas (`to_remote_schema`):
    /// `(the remote's type name, the field's name, the relationship)`; and
    /// those it cannot serve: `(type.name, why)`.
    #[allow(clippy::type_complexity)]
    pub fn remote_relationships_to_remotes(
        &self,
    ) -> (
        Vec<(String, String, super::RemoteRelationshipConfig)>,
        Vec<(String, String)>,
    ) {
        let (mut out, mut bad) = (Vec::new(), Vec::new());
        for (ty, name, rel) in self.type_relationships().filter(|(_, _, r)| to_remote(r)) {
            let definition = rel.get("definition").cloned().unwrap_or_default();
            match super::RemoteRelationshipConfig::try_from(definition) {
                Ok(r) => out.push((ty.to_owned(), name.to_owned(), r)),
                Err(why) => bad.push((format!("{ty}.{name}"), why)),
            }
        }
        (out, bad)
    }
}

/// Whether relationship `rel` is to another remote schema.
fn to_remote(rel: &Value) -> bool {
    (rel.get("definition")).is_some_and(|d| d.get("to_remote_schema").is_some())
}

/// A remote type's relationship `definition` to a table, read as a custom
/// object's; or why it cannot be served.
fn table_relationship(
    name: &str,
    definition: Option<&Value>,
) -> Result<super::actions::ActionRelationship, String> {
    let Some(d) = definition.and_then(|d| d.get("to_source")) else {
        return Err("a remote schema's relationship is to_source or to_remote_schema".into());
    };
    let text = |key: &str| d.get(key).and_then(Value::as_str).map(str::to_owned);
    let field_mapping = match d.get("field_mapping") {
        Some(Value::Object(m)) => (m.iter())
            .map(|(k, v)| match v {
                Value::String(c) => Ok((k.clone(), c.clone())),
                _ => Err("field_mapping maps each field to a column's name".to_owned()),
            })
            .collect::<Result<_, _>>()?,
        _ => return Err("key \"field_mapping\" not found".into()),
    };
    Ok(super::actions::ActionRelationship {
        name: name.to_owned(),
        kind: text("relationship_type").ok_or("key \"relationship_type\" not found")?,
        remote_table: d.get("table").cloned().ok_or("key \"table\" not found")?,
        field_mapping,
        source: text("source"),
    })
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
