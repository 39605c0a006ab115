//! Actions (Hasura's `actions` and `custom_types`, the same shape in the config
//! file): custom queries and mutations answered by an HTTP handler, and the types
//! their arguments and answers are written in.

use super::events::HeaderConf;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One action.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ActionConfig {
    /// Its name: the root field's.
    pub name: String,
    /// What it takes, answers and calls.
    pub definition: ActionDefinition,
    /// The roles that may call it (admin always may).
    #[serde(
        default,
        deserialize_with = "list",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub permissions: Vec<ActionPermission>,
    /// A comment: the field's description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// An action's definition.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ActionDefinition {
    /// The handler's URL (`{{ENV}}` templates as Hasura's).
    pub handler: String,
    /// The GraphQL type it answers (`LoginResponse`, `[Item!]!`, `String`).
    pub output_type: String,
    /// Its arguments.
    #[serde(
        default,
        deserialize_with = "list",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub arguments: Vec<ActionArgument>,
    /// A query or a mutation (Hasura's default: mutation).
    #[serde(default, rename = "type")]
    pub operation: ActionOperation,
    /// Answered at once (synchronous) or later (asynchronous). Hasura's
    /// exports write `kind: ""` for a query action: synchronous.
    #[serde(default, deserialize_with = "kind")]
    pub kind: ActionKind,
    /// Headers sent to the handler.
    #[serde(
        default,
        deserialize_with = "list",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub headers: Vec<HeaderConf>,
    /// Whether the client's headers are sent on to the handler.
    #[serde(default)]
    pub forward_client_headers: bool,
    /// Seconds the handler may take (Hasura's default: 30).
    #[serde(default = "thirty")]
    pub timeout: u64,
    /// Request and response transforms: not served yet (the action is then left
    /// out, and reported).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_transform: Option<serde_json::Value>,
    /// See `request_transform`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_transform: Option<serde_json::Value>,
}

fn thirty() -> u64 {
    30
}

fn kind<'de, D: serde::Deserializer<'de>>(d: D) -> Result<ActionKind, D::Error> {
    match Option::<String>::deserialize(d)?.as_deref() {
        None | Some("") | Some("synchronous") => Ok(ActionKind::Synchronous),
        Some("asynchronous") => Ok(ActionKind::Asynchronous),
        Some(other) => Err(serde::de::Error::custom(format!(
            "kind '{other}': expected synchronous or asynchronous"
        ))),
    }
}

/// One argument of an action.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ActionArgument {
    /// Its name.
    pub name: String,
    /// Its GraphQL type (`String!`, `[ItemInput!]`).
    #[serde(rename = "type")]
    pub ty: String,
    /// Its description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// Whether an action is a query or a mutation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ActionOperation {
    /// A `query_root` field.
    Query,
    /// A `mutation_root` field.
    #[default]
    Mutation,
}

/// When an action's handler answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ActionKind {
    /// In the request.
    #[default]
    Synchronous,
    /// Later: the mutation answers an id.
    Asynchronous,
}

/// A role allowed to call an action.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ActionPermission {
    /// The role.
    pub role: String,
    /// A comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// The types actions are written in (Hasura's `custom_types`).
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CustomTypes {
    /// Input objects (arguments).
    #[serde(
        default,
        deserialize_with = "list",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub input_objects: Vec<CustomInputObject>,
    /// Object types (answers).
    #[serde(
        default,
        deserialize_with = "list",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub objects: Vec<CustomObject>,
    /// Scalars: any JSON value.
    #[serde(
        default,
        deserialize_with = "list",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub scalars: Vec<CustomScalar>,
    /// Enums.
    #[serde(
        default,
        deserialize_with = "list",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub enums: Vec<CustomEnum>,
}

impl CustomTypes {
    /// Whether it declares nothing.
    pub fn is_empty(&self) -> bool {
        self.input_objects.is_empty()
            && self.objects.is_empty()
            && self.scalars.is_empty()
            && self.enums.is_empty()
    }
}

/// A field of a custom object or input object.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CustomField {
    /// Its name.
    pub name: String,
    /// Its GraphQL type.
    #[serde(rename = "type")]
    pub ty: String,
    /// Its description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Arguments, which an object's field may not have (Hasura's rule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<serde_json::Value>,
}

/// A custom input object.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CustomInputObject {
    /// Its name.
    pub name: String,
    /// Its description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its fields.
    pub fields: Vec<CustomField>,
}

/// A custom object type.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CustomObject {
    /// Its name.
    pub name: String,
    /// Its description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its fields.
    pub fields: Vec<CustomField>,
    /// Relationships from its fields to tables.
    #[serde(
        default,
        deserialize_with = "list",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub relationships: Vec<ActionRelationship>,
}

/// A relationship from a custom object to a table (Hasura's, on `custom_types`).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ActionRelationship {
    /// The field's name.
    pub name: String,
    /// `object` (one row or null) or `array` (rows).
    #[serde(rename = "type")]
    pub kind: String,
    /// The table: `{schema, name}` or a name.
    pub remote_table: serde_json::Value,
    /// The object's field → the table's column.
    pub field_mapping: BTreeMap<String, String>,
    /// The source (Grafton serves one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// A custom scalar.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CustomScalar {
    /// Its name.
    pub name: String,
    /// Its description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A custom enum.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CustomEnum {
    /// Its name.
    pub name: String,
    /// Its description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its values.
    pub values: Vec<CustomEnumValue>,
}

/// One value of a custom enum.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CustomEnumValue {
    /// The value.
    pub value: String,
    /// Its description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether it is deprecated.
    #[serde(default, deserialize_with = "flag")]
    pub is_deprecated: bool,
}

/// A flag Hasura's exports may write as `null`.
fn flag<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Ok(Option::<bool>::deserialize(d)?.unwrap_or(false))
}

/// A list Hasura's older exports may write as `null`.
/// A list that may be `null` (read as empty), as Hasura's exports write them.
pub(super) fn list<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(Option::<Vec<T>>::deserialize(d)?.unwrap_or_default())
}
