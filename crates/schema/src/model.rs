//! The schema model: the generated GraphQL schema plus the maps from its names back
//! to tables, columns and relationships, which the IR builder walks.

use crate::naming::{CompareOp, Naming};
use apollo_compiler::validation::Valid;
use apollo_compiler::Schema;
use grafton_catalog::{Backend, Catalog, ScalarKind};
use grafton_sql::{AggFunc, Direction, Nulls};
use std::collections::HashMap;

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
    /// Root query fields by name.
    pub root_fields: HashMap<String, RootField>,
    /// Input types by name.
    pub input_types: HashMap<String, InputKind>,
    /// Comparison operators by GraphQL name.
    pub ops: HashMap<String, CompareOp>,
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
    /// Non-fatal problems found while building (unmapped types, name clashes).
    pub warnings: Vec<String>,
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
}

impl SchemaModel {
    /// The catalog table behind an exposed table.
    pub fn table(&self, id: TableId) -> &grafton_catalog::Table {
        &self.catalog.tables[self.tables[id].catalog_index]
    }

    /// Looks up a column by GraphQL field name.
    pub fn column_by_field(&self, id: TableId, field: &str) -> Option<usize> {
        match self.tables[id].fields.get(field) {
            Some(TableField::Column(c)) => Some(*c),
            _ => None,
        }
    }
}
