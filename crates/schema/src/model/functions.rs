//! Tracked SQL functions as the schema serves them.

use super::TableId;
use grafton_catalog::ScalarKind;

/// Index into [`SchemaModel::functions`](super::SchemaModel::functions).
pub type FunctionId = usize;

/// A tracked function: a root field whose rows come from calling it.
#[derive(Debug, Clone)]
pub struct FunctionInfo {
    /// Index into `Catalog::functions`.
    pub catalog_index: usize,
    /// The table whose rows it returns (its select permission applies to them).
    pub table: TableId,
    /// `RETURNS t`: one row (an object or null), not a list.
    pub single: bool,
    /// A mutation root field (run in a write transaction on the primary).
    pub mutation: bool,
    /// VOLATILE: it may write, so it is called only by roles its permissions name,
    /// never as a subscription field, never over GET.
    pub volatile: bool,
    /// Its root field's name.
    pub field: String,
    /// Its `_aggregate` root field's name, when the role has it.
    pub aggregate: Option<String>,
    /// The `args` input type's name, when it has arguments a caller passes.
    pub args_type: Option<String>,
    /// The arguments a caller passes: GraphQL field name and argument position.
    pub args: Vec<(String, usize)>,
    /// The argument that receives the session variables (as `json`), by position.
    pub session_arg: Option<usize>,
    /// Whether the role may call it (it has the field).
    pub visible: bool,
    /// The root field's description, and its `_aggregate` field's.
    pub descriptions: [String; 2],
}

/// Index into [`SchemaModel::computed`](super::SchemaModel::computed).
pub type ComputedId = usize;

/// A computed field: a function of a table's row, served as a field of its type.
#[derive(Debug, Clone)]
pub struct ComputedField {
    /// Its field name (as configured: no naming convention applies, as in Hasura).
    pub name: String,
    /// The table it is a field of.
    pub table: TableId,
    /// Index into `Catalog::functions`.
    pub catalog_index: usize,
    /// The argument that takes the row, by position.
    pub row_arg: usize,
    /// The argument that receives the session variables, by position.
    pub session_arg: Option<usize>,
    /// The arguments a caller passes: GraphQL field name and position.
    pub args: Vec<(String, usize)>,
    /// The `args` input type (`<field>_<table>_args`), when there are arguments.
    pub args_type: Option<String>,
    /// Whether `args` is required (an argument without a default).
    pub args_required: bool,
    /// What it returns.
    pub returns: ComputedReturns,
    /// Its description.
    pub description: Option<String>,
}

/// What a computed field returns.
#[derive(Debug, Clone, PartialEq)]
pub enum ComputedReturns {
    /// One value of this kind (nullable).
    Scalar(ScalarKind),
    /// Rows of this table, under its select permission.
    Rows(TableId),
}
