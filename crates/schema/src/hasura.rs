//! Hasura metadata import: a `tables.yaml` (a list of table entries) or a metadata
//! directory (`databases/<db>/tables/*.yaml`, one entry per file) becomes Grafton's
//! config — relationships (foreign-key and manual) and the four permission kinds —
//! so a Hasura project moves over without rewriting its rules.

use crate::config::{Columns, Config, CustomRootField};
use serde::Deserialize;
use serde_json::Value;

mod actions_sdl;
mod convert;
mod directory;
mod document;
mod functions;
mod include;
mod merge;
mod project;
pub use directory::read as read_document;
pub use document::to_config;
pub use merge::merge;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Deserialize)]
#[serde(untagged)]
enum TableName {
    Qualified {
        name: String,
        schema: Option<String>,
    },
    Plain(String),
}

impl TableName {
    /// Grafton's config key: `name` in `public`, else `schema.name`.
    fn key(&self) -> String {
        match self {
            TableName::Qualified { name, schema } => match schema.as_deref() {
                None | Some("public") => name.clone(),
                Some(s) => format!("{s}.{name}"),
            },
            TableName::Plain(name) => name.clone(),
        }
    }
}

/// Hasura's export writes `null` for an empty list, map or flag: read as empty.
fn null_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// A table's entry. Every key Hasura writes is named here, so a misspelled one is
/// refused with its file and line instead of taking its permissions with it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    table: TableName,
    #[serde(default, deserialize_with = "null_default")]
    is_enum: bool,
    #[serde(default, deserialize_with = "null_default")]
    configuration: Configuration,
    #[serde(default, deserialize_with = "null_default")]
    object_relationships: Vec<Relationship>,
    #[serde(default, deserialize_with = "null_default")]
    array_relationships: Vec<Relationship>,
    #[serde(default, deserialize_with = "null_default")]
    select_permissions: Vec<Permission>,
    #[serde(default, deserialize_with = "null_default")]
    insert_permissions: Vec<Permission>,
    #[serde(default, deserialize_with = "null_default")]
    update_permissions: Vec<Permission>,
    #[serde(default, deserialize_with = "null_default")]
    delete_permissions: Vec<Permission>,
    #[serde(default, deserialize_with = "null_default")]
    computed_fields: Vec<ComputedField>,
    /// Not served yet: said loudly at load (see [`unserved`]).
    #[serde(default, deserialize_with = "null_default")]
    event_triggers: Vec<Value>,
    #[serde(default, deserialize_with = "null_default")]
    remote_relationships: Vec<Value>,
    #[serde(default)]
    apollo_federation_config: Option<Value>,
}

/// A table's computed field.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ComputedField {
    name: String,
    definition: ComputedDefinition,
    #[serde(default)]
    comment: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ComputedDefinition {
    function: TableName,
    #[serde(default)]
    table_argument: Option<String>,
    #[serde(default)]
    session_argument: Option<String>,
}

/// A table's `configuration`: its GraphQL names.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Configuration {
    custom_name: Option<String>,
    comment: Option<String>,
    #[serde(default, deserialize_with = "null_default")]
    column_config: BTreeMap<String, ColumnNames>,
    /// The older spelling of `column_config.<column>.custom_name`.
    #[serde(default, deserialize_with = "null_default")]
    custom_column_names: BTreeMap<String, String>,
    #[serde(default, deserialize_with = "null_default")]
    custom_root_fields: BTreeMap<String, Option<CustomRootField>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ColumnNames {
    custom_name: Option<String>,
    comment: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Relationship {
    name: String,
    using: Using,
    #[serde(default, rename = "comment")]
    _comment: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Using {
    foreign_key_constraint_on: Option<ForeignKeyOn>,
    manual_configuration: Option<Manual>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ForeignKeyOn {
    Column(String),
    Columns(Vec<String>),
    Remote {
        table: TableName,
        column: Option<String>,
        columns: Option<Vec<String>>,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Manual {
    remote_table: TableName,
    column_mapping: BTreeMap<String, String>,
    /// Hasura's export writes `null` for the default.
    #[serde(default)]
    insertion_order: Option<crate::config::InsertionOrder>,
}

/// A permission entry. Its body's keys are all known: an unknown (or misspelled)
/// one is refused, never skipped, as it may be a rule.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Permission {
    role: String,
    permission: Body,
    #[serde(default, rename = "comment")]
    _comment: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Body {
    #[serde(default)]
    columns: Option<Columns>,
    filter: Option<Value>,
    check: Option<Value>,
    #[serde(default, deserialize_with = "null_default")]
    set: BTreeMap<String, Value>,
    limit: Option<u64>,
    #[serde(default, deserialize_with = "null_default")]
    allow_aggregations: bool,
    #[serde(default, deserialize_with = "null_default")]
    backend_only: bool,
    query_root_fields: Option<Vec<String>>,
    subscription_root_fields: Option<Vec<String>>,
    /// An input validation webhook: not supported, so refused rather than skipped.
    validate_input: Option<Value>,
    /// Scalar computed fields the role may read.
    #[serde(default, deserialize_with = "null_default")]
    computed_fields: Vec<String>,
}

/// Reads Hasura metadata from a `tables.yaml` file or a metadata directory.
pub fn load(path: &Path) -> Result<Config, String> {
    to_config(&directory::read(path)?)
}

#[cfg(test)]
mod tests;
