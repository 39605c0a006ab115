//! The optional YAML configuration: relationship renames and manual relationships.

use serde::Deserialize;
use std::collections::BTreeMap;

mod actions;
mod cron;
mod database;
pub use database::DatabaseConfig;
mod events;
mod functions;
mod remote_relationships;
mod remote_schemas;
mod root_affixes;
pub use actions::{
    ActionArgument, ActionConfig, ActionDefinition, ActionKind, ActionOperation, ActionPermission,
    ActionRelationship, CustomEnum, CustomEnumValue, CustomField, CustomInputObject, CustomObject,
    CustomScalar, CustomTypes,
};
pub use cron::{CronTriggerConfig, ScheduleRetryConf};
pub use events::template_vars;
pub use events::{
    AllColumns, CleanupConfig, Columns as EventColumns, EventDefinition, EventTriggerConfig,
    HeaderConf, OperationSpec, RetryConf,
};
pub use functions::{
    ComputedFieldConfig, ExposedAs, FunctionConfig, FunctionPermission, FunctionRootFields,
};
pub use remote_relationships::{RemoteFieldStep, RemoteRelationshipConfig};
pub use remote_schemas::{
    Customization, FieldNames, RemotePermissionDefinition, RemoteSchemaConfig,
    RemoteSchemaDefinition, RemoteSchemaPermission, TypeNames,
};
pub use root_affixes::RootFieldAffixes;
use std::path::PathBuf;

/// Top-level configuration file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Per-table settings, keyed by `name` or `schema.name`.
    #[serde(default)]
    pub tables: BTreeMap<String, TableConfig>,
    /// Limits per request and per client (Hasura's `api_limits` shape).
    #[serde(default)]
    pub api_limits: crate::api_limits::ApiLimits,
    /// When any collection is listed, every role but admin may run only the
    /// documents listed (Hasura's allow list).
    #[serde(default)]
    pub allow_list: Vec<crate::trusted::AllowedCollection>,
    /// The allow list applies even when it lists nothing (then only admin runs
    /// documents): `--enable-allowlist`, Hasura's `HASURA_GRAPHQL_ENABLE_ALLOWLIST`.
    #[serde(skip)]
    pub enforce_allow_list: bool,
    /// Roles for which introspection is off.
    #[serde(default)]
    pub graphql_schema_introspection: crate::trusted::Introspection,
    /// Where reads may go besides the primary (read replicas).
    #[serde(default)]
    pub database: DatabaseConfig,
    /// Roles made of other roles (Hasura's `inherited_roles`): each reads what any of
    /// its roles reads, by role name.
    #[serde(default)]
    pub inherited_roles: BTreeMap<String, Vec<String>>,
    /// Tracked SQL functions (PostgreSQL), keyed by `name` or `schema.name`.
    #[serde(default)]
    pub functions: BTreeMap<String, FunctionConfig>,
    /// Whether a query function is callable by every role that may read what it
    /// returns (Hasura's `--infer-function-permissions`, default true); when false,
    /// a role also needs the function's `permissions`.
    #[serde(default)]
    pub infer_function_permissions: Option<bool>,
    /// Cron triggers (Hasura's `cron_triggers`): webhooks called on a schedule.
    #[serde(default)]
    pub cron_triggers: Vec<CronTriggerConfig>,
    /// Actions (Hasura's `actions`): root fields answered by an HTTP handler.
    #[serde(default)]
    pub actions: Vec<ActionConfig>,
    /// The types actions are written in (Hasura's `custom_types`).
    #[serde(default)]
    pub custom_types: CustomTypes,
    /// Remote schemas (Hasura's `remote_schemas`): other GraphQL services'
    /// root fields served beside the database's.
    #[serde(default)]
    pub remote_schemas: Vec<RemoteSchemaConfig>,
    /// What each remote schema's introspection gave (by its name), filled by
    /// the engine before a build; not metadata.
    #[serde(skip)]
    pub remotes_introspected:
        std::collections::BTreeMap<String, Result<crate::remote::RemoteViews, String>>,
    /// Hasura's `--enable-remote-schema-permissions`: a remote without
    /// permissions is admin's only (else every role's). A remote with
    /// permissions is each permitted role's part whatever this says.
    #[serde(skip)]
    pub remote_schema_permissions: bool,
    /// Whether every table, view and foreign key of the exposed schemas is served
    /// (`true`: the default without Hasura metadata), or only the tables listed
    /// under `tables` and the relationships the config names (`false`: the default
    /// with Hasura metadata, which serves what it tracks and nothing else).
    #[serde(default)]
    pub auto_track: Option<bool>,
    /// A Hasura source's `customization.root_fields` prefix and suffix, put around
    /// every root field name (custom ones too), as Hasura does. Never read from a
    /// config file.
    #[serde(skip)]
    pub root_fields: RootFieldAffixes,
    /// The naming convention a Hasura source's `customization.naming_convention`
    /// asks for; `--naming` wins. Never read from a config file.
    #[serde(skip)]
    pub naming: Option<crate::naming::Convention>,
    /// What the metadata names that Grafton does not serve yet (event triggers,
    /// actions, …): reported as inconsistent metadata, never dropped in silence.
    /// Filled by the Hasura import, never read from a config file.
    #[serde(skip)]
    pub left_out: Vec<crate::inconsistent::Inconsistency>,
    /// Serve a database with no tables (a placeholder query field, as Hasura does)
    /// rather than refuse to start: set when metadata can still come through the
    /// API. Never read from a config file.
    #[serde(skip)]
    pub serve_empty: bool,
    /// The directory relative paths in the config (JSON Schema files) start from:
    /// the config file's directory, set by whoever loads it.
    #[serde(skip)]
    pub base_dir: PathBuf,
}

/// Settings for one table or view.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableConfig {
    /// The name the table's types and root fields are made from, instead of the
    /// table's own (Hasura's `configuration.custom_name`).
    #[serde(default)]
    pub custom_name: Option<String>,
    /// An enum table (Hasura's `is_enum`): its key's values become a GraphQL enum,
    /// the type of every column that references the key.
    #[serde(default)]
    pub is_enum: bool,
    /// The description of its GraphQL type, instead of the database's comment
    /// (Hasura's `configuration.comment`).
    #[serde(default)]
    pub comment: Option<String>,
    /// Names (and descriptions) for its root fields, by Hasura's keys: `select`,
    /// `select_by_pk`, `select_aggregate`, `select_stream`, `insert`, `insert_one`,
    /// `update`, `update_by_pk`, `update_many`, `delete`, `delete_by_pk`.
    #[serde(default)]
    pub custom_root_fields: BTreeMap<String, Option<CustomRootField>>,
    /// A primary key for a view or a key-less table, so it gets `_by_pk` and default order.
    #[serde(default)]
    pub primary_key: Vec<String>,
    /// Renames generated relationships: `{generated_name: new_name}`.
    #[serde(default)]
    pub rename_relationships: BTreeMap<String, String>,
    /// Relationships the database does not declare (views have no foreign keys).
    #[serde(default)]
    pub relationships: BTreeMap<String, ManualRelationship>,
    /// Names for the relationships Grafton derives from foreign keys, by the key's
    /// columns: `{name: {type: object, columns: [org_id]}}` or, for the array side,
    /// `{name: {type: array, table: documents, columns: [owner_id]}}`.
    #[serde(default)]
    pub foreign_key_relationships: BTreeMap<String, ForeignKeyRelationship>,
    /// Per-column settings, keyed by the column's database name.
    #[serde(default)]
    pub columns: BTreeMap<String, ColumnConfig>,
    /// What each role may do with this table, keyed by role name.
    #[serde(default)]
    pub permissions: BTreeMap<String, Permissions>,
    /// Computed fields by name (Hasura's `computed_fields`; PostgreSQL).
    #[serde(default)]
    pub computed_fields: BTreeMap<String, ComputedFieldConfig>,
    /// Event triggers by name (Hasura's `event_triggers`).
    #[serde(default)]
    pub event_triggers: BTreeMap<String, EventTriggerConfig>,
    /// Relationships to remote schemas' fields by name (Hasura's
    /// `remote_relationships`, each its `definition`).
    #[serde(default)]
    pub remote_relationships: BTreeMap<String, RemoteRelationshipConfig>,
}

/// One role's permissions on one table. A role sees a table only with `select`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Permissions {
    /// Reading rows.
    pub select: Option<SelectPermission>,
    /// Inserting rows.
    pub insert: Option<InsertPermission>,
    /// Updating rows.
    pub update: Option<UpdatePermission>,
    /// Deleting rows.
    pub delete: Option<DeletePermission>,
}

/// Columns a permission covers: a list of database column names, or `"*"` for all.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Columns {
    /// `"*"`: every column.
    All(String),
    /// These columns.
    Some(Vec<String>),
}

impl Default for Columns {
    fn default() -> Self {
        Columns::Some(Vec::new())
    }
}

/// `select`: which columns, which rows, how many, and whether aggregates.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelectPermission {
    /// Columns the role may read (and filter and sort on).
    #[serde(default)]
    pub columns: Columns,
    /// A `bool_exp` every row read must satisfy; values may be session variables.
    #[serde(default)]
    pub filter: Option<serde_json::Value>,
    /// The most rows one list may return.
    pub limit: Option<u64>,
    /// Whether `_aggregate` fields (and ordering by aggregates) exist for the role.
    #[serde(default)]
    pub allow_aggregations: bool,
    /// Which root fields the table has for the role: `select`, `select_by_pk`,
    /// `select_aggregate` (Hasura's `query_root_fields`; absent: all of them). The
    /// table stays reachable through relationships either way.
    #[serde(default)]
    pub query_root_fields: Option<Vec<String>>,
    /// Hasura's `subscription_root_fields`: read, and checked, for the subscriptions
    /// to come; Grafton serves no subscription field yet.
    #[serde(default)]
    pub subscription_root_fields: Option<Vec<String>>,
    /// The scalar computed fields the role may read (and filter and sort on).
    #[serde(default)]
    pub computed_fields: Vec<String>,
    /// Columns shown only on the rows where a condition holds, NULL elsewhere: what
    /// an inherited role's permission carries for a column only some of its roles
    /// may read (see `inherited.rs`). Never read from a file.
    #[serde(skip)]
    pub redact: BTreeMap<String, serde_json::Value>,
}

/// `insert`: which columns, a check every new row must pass, and column presets.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InsertPermission {
    /// Columns the role may set.
    #[serde(default)]
    pub columns: Columns,
    /// A `bool_exp` every inserted row must satisfy, checked in the same transaction.
    #[serde(default)]
    pub check: Option<serde_json::Value>,
    /// Values forced on every inserted row (literals or session variables).
    #[serde(default)]
    pub set: BTreeMap<String, serde_json::Value>,
    /// Only for trusted backends: requests with the admin secret and
    /// `x-hasura-use-backend-only-permissions: true` (Hasura's `backend_only`).
    #[serde(default)]
    pub backend_only: bool,
}

/// `update`: which columns, which rows, a check on the result, and presets.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpdatePermission {
    /// Columns the role may change.
    #[serde(default)]
    pub columns: Columns,
    /// A `bool_exp` rows must satisfy to be updated.
    #[serde(default)]
    pub filter: Option<serde_json::Value>,
    /// A `bool_exp` every updated row must satisfy afterwards.
    #[serde(default)]
    pub check: Option<serde_json::Value>,
    /// Values forced on every update.
    #[serde(default)]
    pub set: BTreeMap<String, serde_json::Value>,
    /// Only for trusted backends: requests with the admin secret and
    /// `x-hasura-use-backend-only-permissions: true` (Hasura's `backend_only`).
    #[serde(default)]
    pub backend_only: bool,
}

/// `delete`: which rows.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeletePermission {
    /// A `bool_exp` rows must satisfy to be deleted.
    #[serde(default)]
    pub filter: Option<serde_json::Value>,
    /// Only for trusted backends: requests with the admin secret and
    /// `x-hasura-use-backend-only-permissions: true` (Hasura's `backend_only`).
    #[serde(default)]
    pub backend_only: bool,
}

/// A custom root field, in either of Hasura's spellings: its name, or its name and
/// description (either may be left out).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum CustomRootField {
    /// `select: writers`
    Name(String),
    /// `select: {name: writers, comment: All the writers}`
    Full {
        /// The field's name (the default's when absent).
        #[serde(default)]
        name: Option<String>,
        /// The field's description.
        #[serde(default)]
        comment: Option<String>,
    },
}

/// Settings for one column.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ColumnConfig {
    /// A JSON Schema every written value must match: a file path (relative to the
    /// config file; it may `$ref` other files) or the schema itself, inline.
    pub json_schema: Option<JsonSchemaConfig>,
    /// The column's GraphQL field name, used as written (Hasura's
    /// `column_config.<column>.custom_name`).
    #[serde(default)]
    pub custom_name: Option<String>,
    /// The field's description, instead of the database's comment (Hasura's
    /// `column_config.<column>.comment`).
    #[serde(default)]
    pub comment: Option<String>,
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
    /// For an object relationship: whether a nested insert writes the target row
    /// `before_parent` (the default: this row copies its key) or `after_parent` (the
    /// target copies this row's columns), as Hasura's `insertion_order`.
    #[serde(default)]
    pub insertion_order: InsertionOrder,
}

/// Hasura's `insertion_order` of a manual object relationship.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InsertionOrder {
    /// The related row first; this row copies its key.
    #[default]
    BeforeParent,
    /// This row first; the related row copies its columns.
    AfterParent,
}

/// A relationship from a foreign key, named by the key's columns.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForeignKeyRelationship {
    /// `object`: this table's key columns (or, with `table`, another table's key to
    /// this one, a one-to-one); `array`: another table's key to this one.
    #[serde(rename = "type")]
    pub kind: ManualKind,
    /// The table holding the key, when it is not this one.
    pub table: Option<String>,
    /// The key's columns.
    pub columns: Vec<String>,
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

#[cfg(test)]
mod tests;
