//! Tracked SQL functions in the config (Hasura's `functions.yaml` entries).

use super::CustomRootField;
use serde::Deserialize;

/// A tracked function (PostgreSQL): one returning a table's rows becomes a root
/// field, with the table's select permission on what it returns.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FunctionConfig {
    /// `query` or `mutation`; absent: a `VOLATILE` function is a mutation, any other
    /// a query (Hasura's `exposed_as`).
    #[serde(default)]
    pub exposed_as: Option<ExposedAs>,
    /// The argument (of type `json`) that receives the caller's session variables.
    #[serde(default)]
    pub session_argument: Option<String>,
    /// The root field's name instead of the function's (also the base of the
    /// `_aggregate` field and the `_args` type).
    #[serde(default)]
    pub custom_name: Option<String>,
    /// Names for the `function` and `function_aggregate` root fields.
    #[serde(default)]
    pub custom_root_fields: FunctionRootFields,
    /// The root field's description instead of the function's comment.
    #[serde(default)]
    pub comment: Option<String>,
    /// Roles that may call it besides what is inferred (Hasura's function
    /// permissions: needed for mutations and for any `VOLATILE` function, and for
    /// queries when function permissions are not inferred).
    #[serde(default)]
    pub permissions: Vec<FunctionPermission>,
}

/// Whether a tracked function is a query or a mutation root field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExposedAs {
    /// A query root field (and a subscription one, unless `VOLATILE`).
    Query,
    /// A mutation root field.
    Mutation,
}

/// Hasura's function `custom_root_fields`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FunctionRootFields {
    /// The function's own root field.
    #[serde(default)]
    pub function: Option<CustomRootField>,
    /// Its `_aggregate` twin.
    #[serde(default)]
    pub function_aggregate: Option<CustomRootField>,
}

/// One role allowed to call a function.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FunctionPermission {
    /// The role.
    pub role: String,
}

/// A computed field (PostgreSQL): a function of the table's row, served as a field
/// of the table's type (Hasura's `computed_fields`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComputedFieldConfig {
    /// The function: `name` or `schema.name`.
    pub function: String,
    /// The argument that takes the row (default: the first).
    #[serde(default)]
    pub table_argument: Option<String>,
    /// The argument (`json` or `jsonb`) that receives the session variables.
    #[serde(default)]
    pub session_argument: Option<String>,
    /// The field's description instead of the function's comment.
    #[serde(default)]
    pub comment: Option<String>,
}
