//! The optional YAML configuration: relationship renames and manual relationships.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Top-level configuration file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Per-table settings, keyed by `name` or `schema.name`.
    #[serde(default)]
    pub tables: BTreeMap<String, TableConfig>,
    /// The directory relative paths in the config (JSON Schema files) start from:
    /// the config file's directory, set by whoever loads it.
    #[serde(skip)]
    pub base_dir: PathBuf,
}

/// Settings for one table or view.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableConfig {
    /// A primary key for a view or a key-less table, so it gets `_by_pk` and default order.
    #[serde(default)]
    pub primary_key: Vec<String>,
    /// Renames generated relationships: `{generated_name: new_name}`.
    #[serde(default)]
    pub rename_relationships: BTreeMap<String, String>,
    /// Relationships the database does not declare (views have no foreign keys).
    #[serde(default)]
    pub relationships: BTreeMap<String, ManualRelationship>,
    /// Per-column settings, keyed by the column's database name.
    #[serde(default)]
    pub columns: BTreeMap<String, ColumnConfig>,
}

/// Settings for one column.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ColumnConfig {
    /// A JSON Schema every written value must match: a file path (relative to the
    /// config file; it may `$ref` other files) or the schema itself, inline.
    pub json_schema: Option<JsonSchemaConfig>,
}

/// Where a column's JSON Schema comes from.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum JsonSchemaConfig {
    /// A schema file.
    Path(String),
    /// A self-contained schema written in the config.
    Inline(serde_json::Value),
}

/// A relationship declared in the config.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManualRelationship {
    /// `object` (at most one target row) or `array` (many).
    #[serde(rename = "type")]
    pub kind: ManualKind,
    /// Target table, `name` or `schema.name`.
    pub table: String,
    /// Column mapping `{this_table_column: target_column}`.
    pub columns: BTreeMap<String, String>,
}

/// Kind of a manual relationship.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ManualKind {
    /// Many-to-one or one-to-one.
    Object,
    /// One-to-many.
    Array,
}
