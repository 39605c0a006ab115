//! The schema model: the generated GraphQL schema plus the maps from its names back
//! to tables, columns and relationships, which the IR builder walks.

use crate::naming::{CompareOp, Naming};
use apollo_compiler::validation::Valid;
use apollo_compiler::Schema;
use grafton_catalog::{Backend, Catalog, ScalarKind};
use grafton_sql::{AggFunc, Direction, Nulls};
use std::collections::HashMap;

mod access;
mod actions;
mod functions;
mod remote_rels;
mod roots;
pub use access::{RootFieldSet, SelectAccess, TableAccess};
pub use actions::ActionRel;
pub use functions::{ComputedField, ComputedId, ComputedReturns, FunctionId, FunctionInfo};
pub use remote_rels::{RemoteRel, RemoteRelId, RemoteStep, RemoteTypeRel};
pub use roots::{RootKind, RootNames};

/// Index into [`SchemaModel::tables`].
pub type TableId = usize;
/// Index into [`SchemaModel::relationships`].
pub type RelId = usize;

/// One exposed table or view.
#[derive(Debug, Clone)]
pub struct TableInfo {
    /// Index into `Catalog::tables`.
    pub catalog_index: usize,
    /// Base GraphQL name (`venues`; `other_schema_venues` outside the default schema).
    pub base_name: String,
    /// GraphQL object type name.
    pub type_name: String,
    /// Primary key as column indices (from the database or the config).
    pub primary_key: Vec<usize>,
    /// GraphQL field name of each catalog column, by column index.
    pub column_fields: Vec<String>,
    /// Fields of the object type by GraphQL name.
    pub fields: HashMap<String, TableField>,
    /// Whether the role may write the table at all (base tables; views that take
    /// writes and have a key).
    pub mutable: bool,
    /// Unique keys usable as an upsert's conflict target, by `t_constraint` value:
    /// the primary key and each unique constraint or index, as column indices.
    pub constraints: HashMap<String, Vec<usize>>,
    /// Its root fields' names (and custom descriptions).
    pub roots: RootNames,
}

/// What a field of a table's object type (or its bool_exp / order_by) stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableField {
    /// A column, by index.
    Column(usize),
    /// An object relationship.
    Object(RelId),
    /// An array relationship.
    Array(RelId),
    /// The `<array>_aggregate` field of an array relationship.
    ArrayAggregate(RelId),
    /// The `<array>_connection` field of an array relationship (the Relay API).
    ArrayConnection(RelId),
    /// A computed field.
    Computed(ComputedId),
    /// The `<field>_aggregate` of a computed field returning rows.
    ComputedAggregate(ComputedId),
    /// A remote relationship (not a filter or order key).
    Remote(RemoteRelId),
}

/// Object (many-to-one) or array (one-to-many).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelKind {
    /// At most one target row.
    Object,
    /// Any number of target rows.
    Array,
}

/// A relationship between two exposed tables.
#[derive(Debug, Clone)]
pub struct Relationship {
    /// GraphQL field name.
    pub name: String,
    /// Object or array.
    pub kind: RelKind,
    /// Table the field is on.
    pub source: TableId,
    /// Table the field points to.
    pub target: TableId,
    /// `(source column, target column)` pairs, by column index.
    pub mapping: Vec<(usize, usize)>,
    /// An object relationship whose target holds the key (a foreign key on the remote
    /// table, or Hasura's `insertion_order: after_parent`): a nested insert writes this
    /// row first and copies its columns into the target, as an array relationship does.
    pub after_parent: bool,
    /// An object relationship over a foreign key the database enforces (see
    /// `ForeignKey::enforced`): a row whose key columns are all set has its target.
    pub enforced: bool,
}

/// What a root query field does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootField {
    /// `t(where, order_by, limit, offset, distinct_on)`.
    List(TableId),
    /// `t_by_pk(<pk columns>)`.
    ByPk(TableId),
    /// `t_aggregate(…)`.
    Aggregate(TableId),
    /// `t_stream(batch_size, cursor, where)`: subscriptions only.
    Stream(TableId),
    /// A tracked function's rows: `f(args:, where, order_by, limit, offset, distinct_on)`.
    Function(FunctionId),
    /// `f_aggregate(args:, …)`.
    FunctionAggregate(FunctionId),
    /// A query action: the index of [`SchemaModel::actions`].
    Action(usize),
    /// A remote schema's query field: the index of [`SchemaModel::remote_schemas`].
    Remote(usize),
    /// `t_connection(first, last, after, before, where, order_by, distinct_on)`:
    /// the Relay API's pages of a table with a primary key.
    Connection(TableId),
    /// `node(id:)`: the Relay API's one row by its global id.
    Node,
    /// `f_connection(args:, first, …)`: the Relay API's pages of a `SETOF`
    /// function's rows.
    FunctionConnection(FunctionId),
}

/// What a root mutation field does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MutationField {
    /// `insert_t(objects:, on_conflict:)`.
    Insert(TableId),
    /// `insert_t_one(object:, on_conflict:)`.
    InsertOne(TableId),
    /// `update_t(where:, _set:, _inc:, …)`.
    Update(TableId),
    /// `update_t_by_pk(pk_columns:, _set:, _inc:, …)`.
    UpdateByPk(TableId),
    /// `update_t_many(updates:)`.
    UpdateMany(TableId),
    /// `delete_t(where:)`.
    Delete(TableId),
    /// `delete_t_by_pk(<pk columns>)`.
    DeleteByPk(TableId),
    /// A tracked `VOLATILE` function's rows.
    Function(FunctionId),
    /// A mutation action: the index of [`SchemaModel::actions`].
    Action(usize),
    /// A remote schema's mutation field: the index of
    /// [`SchemaModel::remote_schemas`].
    Remote(usize),
}

/// The update operators, in the order Hasura applies them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UpdateOperator {
    /// `_set`: assign.
    Set,
    /// `_inc`: add (numeric columns).
    Inc,
    /// `_append`: jsonb `||` on the right.
    Append,
    /// `_prepend`: jsonb `||` on the left.
    Prepend,
    /// `_delete_key`: jsonb `- text`.
    DeleteKey,
    /// `_delete_elem`: jsonb `- int`.
    DeleteElem,
    /// `_delete_at_path`: jsonb `#- text[]`.
    DeleteAtPath,
}

impl UpdateOperator {
    /// All operators, with Hasura's argument names before any case rule.
    pub const ALL: [(UpdateOperator, &'static str); 7] = [
        (UpdateOperator::Set, "_set"),
        (UpdateOperator::Inc, "_inc"),
        (UpdateOperator::Append, "_append"),
        (UpdateOperator::Prepend, "_prepend"),
        (UpdateOperator::DeleteKey, "_delete_key"),
        (UpdateOperator::DeleteElem, "_delete_elem"),
        (UpdateOperator::DeleteAtPath, "_delete_at_path"),
    ];
}

/// Names of mutation arguments and fields under the naming convention.
#[derive(Debug, Clone)]
pub struct MutationNames {
    /// `objects` of `insert_t`.
    pub objects: String,
    /// `object` of `insert_t_one`.
    pub object: String,
    /// `on_conflict`.
    pub on_conflict: String,
    /// `constraint` of `t_on_conflict`.
    pub constraint: String,
    /// `update_columns` of `t_on_conflict`.
    pub update_columns: String,
    /// `data` of relationship insert inputs.
    pub data: String,
    /// `pk_columns` of `update_t_by_pk`.
    pub pk_columns: String,
    /// `updates` of `update_t_many`.
    pub updates: String,
    /// `affected_rows` of `t_mutation_response`.
    pub affected_rows: String,
    /// `returning` of `t_mutation_response`.
    pub returning: String,
    /// Update operator arguments (`_set`, `_inc`, …) by name.
    pub operators: HashMap<String, UpdateOperator>,
}

/// What a generated input type stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputKind {
    /// `t_bool_exp`.
    BoolExp(TableId),
    /// `t_order_by`.
    OrderBy(TableId),
    /// `t_aggregate_order_by`.
    AggregateOrderBy(TableId),
    /// `t_sum_order_by` and friends.
    AggregateFuncOrderBy(TableId, AggFunc),
    /// `<Scalar>_comparison_exp`.
    Comparison(ScalarKind),
}

/// The generated schema and everything needed to interpret operations against it.
#[derive(Debug)]
pub struct SchemaModel {
    /// Which database the schema was built from.
    pub backend: Backend,
    /// The introspected catalog.
    pub catalog: Catalog,
    /// The naming convention in force.
    pub naming: Naming,
    /// Exposed tables.
    pub tables: Vec<TableInfo>,
    /// All relationships.
    pub relationships: Vec<Relationship>,
    /// Tracked functions (the same ids in every role's model).
    pub functions: Vec<FunctionInfo>,
    /// Computed fields (the same ids in every role's model).
    pub computed: Vec<ComputedField>,
    /// Root query fields by name.
    pub root_fields: HashMap<String, RootField>,
    /// Root mutation fields by name.
    pub mutation_fields: HashMap<String, MutationField>,
    /// Mutation argument and field names.
    pub mutation_names: MutationNames,
    /// Input types by name.
    pub input_types: HashMap<String, InputKind>,
    /// Comparison operators by GraphQL name.
    pub ops: HashMap<String, CompareOp>,
    /// The name of jsonb's `_cast` operator under the naming in force.
    pub cast_op: String,
    /// `order_by` enum values by GraphQL name.
    pub order_values: HashMap<String, (Direction, Option<Nulls>)>,
    /// Aggregate function fields by GraphQL name (`sum`, `stddev_pop`…).
    pub agg_funcs: HashMap<String, AggFunc>,
    /// Names of the `_and`, `_or`, `_not` combinators.
    pub combinators: [String; 3],
    /// Argument names in force.
    pub args: ArgNames,
    /// The validated schema (for document validation and introspection).
    pub schema: Valid<Schema>,
    /// The schema as SDL text.
    pub sdl: String,
    /// The role this schema is for (`None`: admin).
    pub role: Option<String>,
    /// What the role may do with each table, by table id.
    pub access: Vec<TableAccess>,
    /// Compiled JSON Schemas of columns, by `(table, column index)`.
    pub validators: HashMap<(TableId, usize), grafton_validate::ColumnSchema>,
    /// Non-fatal problems found while building (unmapped types, name clashes).
    pub warnings: Vec<String>,
    /// Whether this is the Relay API's schema (`/v1beta1/relay`): connections, the
    /// `Node` interface, and each table's `id` the global id.
    pub relay: bool,
    /// The actions the role may call: the root fields answered by a handler.
    pub actions: Vec<crate::config::ActionConfig>,
    /// The relationships from custom objects to tables the role may follow.
    pub action_relationships: Vec<ActionRel>,
    /// The remote schemas the role sees, with what their introspection gave.
    pub remote_schemas: Vec<ServedRemote>,
    /// The relationships from tables to remote schemas' fields the role sees.
    pub remote_relationships: Vec<RemoteRel>,
    /// The relationships from remote schemas' types to other remote schemas.
    pub remote_type_remote_rels: Vec<RemoteTypeRel>,
}

/// A remote schema served: its metadata and its types as served.
#[derive(Debug, Clone)]
pub struct ServedRemote {
    /// Its metadata.
    pub config: crate::config::RemoteSchemaConfig,
    /// Its introspection, with its customization applied.
    pub introspected: std::sync::Arc<crate::remote::RemoteIntrospected>,
}

/// Argument names under the naming convention.
#[derive(Debug, Clone)]
pub struct ArgNames {
    /// `where`
    pub where_: String,
    /// `order_by`
    pub order_by: String,
    /// `limit`
    pub limit: String,
    /// `offset`
    pub offset: String,
    /// `distinct_on`
    pub distinct_on: String,
    /// `columns` of `count`
    pub columns: String,
    /// `distinct` of `count`
    pub distinct: String,
    /// `batch_size` of `t_stream`
    pub batch_size: String,
    /// `cursor` of `t_stream`
    pub cursor: String,
    /// `initial_value` of a stream cursor
    pub initial_value: String,
    /// `ordering` of a stream cursor
    pub ordering: String,
}

impl SchemaModel {
    /// The SQL dialect of the model's database.
    pub fn dialect(&self) -> grafton_sql::Dialect {
        match self.backend {
            grafton_catalog::Backend::Postgres => grafton_sql::Dialect::Postgres,
            grafton_catalog::Backend::Sqlite => grafton_sql::Dialect::Sqlite,
        }
    }

    /// The catalog table behind an exposed table.
    pub fn table(&self, id: TableId) -> &grafton_catalog::Table {
        &self.catalog.tables[self.tables[id].catalog_index]
    }

    /// The table a config key (`name` or `schema.name`) names.
    pub fn table_by_config_key(&self, key: &str) -> Option<TableId> {
        let default_schema = match self.backend {
            grafton_catalog::Backend::Postgres => "public",
            grafton_catalog::Backend::Sqlite => "main",
        };
        let (schema, name) = key.split_once('.').unwrap_or((default_schema, key));
        self.tables.iter().position(|t| {
            let c = &self.catalog.tables[t.catalog_index];
            c.schema == schema && c.name == name
        })
    }

    /// Looks up any column (readable or not) by its GraphQL name: for write inputs,
    /// whose columns the role's schema has already limited.
    pub fn column_by_name(&self, id: TableId, field: &str) -> Option<usize> {
        self.tables[id]
            .column_fields
            .iter()
            .position(|n| n == field)
    }

    /// Whether a table is a Relay `Node` (it has a primary key, of values a global
    /// id can carry): its object type has the global `id` and it has a connection.
    pub fn is_node(&self, id: TableId) -> bool {
        self.relay && identifies(self.table(id), &self.tables[id].primary_key)
    }

    /// Looks up a column by GraphQL field name.
    pub fn column_by_field(&self, id: TableId, field: &str) -> Option<usize> {
        match self.tables[id].fields.get(field) {
            Some(TableField::Column(c)) => Some(*c),
            _ => None,
        }
    }
}

/// Whether `key` (column indices of `table`) can name a row in a Relay global id:
/// there is one, and no PostGIS value in it (it would be written into the id as
/// its binary text, which GeoJSON input cannot read back).
pub fn identifies(table: &grafton_catalog::Table, key: &[usize]) -> bool {
    let readable = |&c: &usize| {
        let kind = &table.columns[c].scalar;
        !kind.is_spatial() && *kind != grafton_catalog::ScalarKind::Raster
    };
    !key.is_empty() && key.iter().all(readable)
}
