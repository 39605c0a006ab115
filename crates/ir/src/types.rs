//! IR data types.

use grafton_schema::{CompareOp, RelId, TableId};
use grafton_sql::{AggFunc, Direction, Nulls};
use std::collections::BTreeSet;

/// A leaf value: a variable reference or a literal, bound as a parameter later.
pub use grafton_sql::ParamValue as Value;

/// A query operation.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    /// Root fields in response order, keyed by response key.
    pub root: Vec<(String, Root)>,
    /// Variables whose values shaped this IR (inlined); part of any plan cache key.
    pub shape_vars: BTreeSet<String>,
    /// Variables used as `limit`/`offset`: each request's value must be ≥ 0.
    pub non_negative_vars: BTreeSet<String>,
}

/// A root field.
#[derive(Debug, Clone, PartialEq)]
pub enum Root {
    /// `__typename` at the root.
    Typename(String),
    /// `__schema` / `__type`: answered from the schema, not the database.
    Introspection,
    /// A list or `_by_pk` field.
    Rows(Rows),
    /// A `_aggregate` field.
    Aggregate(Aggregate),
}

/// Rows of one table.
#[derive(Debug, Clone, PartialEq)]
pub struct Rows {
    /// The table.
    pub table: TableId,
    /// Filtering, ordering, pagination.
    pub args: Args,
    /// Selected fields by response key.
    pub fields: Vec<(String, Field)>,
    /// True for `_by_pk` and object relationships: one object or null, not a list.
    pub single: bool,
}

/// Arguments of a list.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Args {
    /// `where`.
    pub filter: Option<BoolExp>,
    /// `order_by`.
    pub order_by: Vec<OrderBy>,
    /// `limit`.
    pub limit: Option<Value>,
    /// `offset`.
    pub offset: Option<Value>,
    /// `distinct_on` column indices.
    pub distinct_on: Vec<usize>,
}

impl Args {
    /// True when the document asked for a page (`limit` or `offset`).
    pub fn paginated(&self) -> bool {
        self.limit.is_some() || self.offset.is_some()
    }
}

/// A field of a table's object type.
#[derive(Debug, Clone, PartialEq)]
pub enum Field {
    /// A column by index.
    Column(usize),
    /// `__typename`.
    Typename(String),
    /// An object relationship.
    Object(RelId, Rows),
    /// An array relationship.
    Array(RelId, Rows),
    /// An array relationship's aggregate.
    Aggregate(RelId, Aggregate),
}

/// A `_aggregate` selection.
#[derive(Debug, Clone, PartialEq)]
pub struct Aggregate {
    /// The table aggregated.
    pub table: TableId,
    /// Rows taken into the aggregate.
    pub args: Args,
    /// `aggregate`, `nodes`, `__typename` by response key.
    pub fields: Vec<(String, AggregateField)>,
}

/// A field of `t_aggregate`.
#[derive(Debug, Clone, PartialEq)]
pub enum AggregateField {
    /// `__typename`.
    Typename(String),
    /// `aggregate { … }`.
    Aggregate(Vec<(String, AggregateValue)>),
    /// `nodes { … }`.
    Nodes(Vec<(String, Field)>),
}

/// A field of `t_aggregate_fields`.
#[derive(Debug, Clone, PartialEq)]
pub enum AggregateValue {
    /// `__typename`.
    Typename(String),
    /// `count(columns:, distinct:)`.
    Count {
        /// Columns that must be non-null (and distinct, with `distinct`).
        columns: Vec<usize>,
        /// Count distinct values.
        distinct: bool,
    },
    /// `sum { … }`, `avg { … }`, …
    Func(AggFunc, Vec<(String, FuncField)>),
}

/// A field of `t_sum_fields` and friends.
#[derive(Debug, Clone, PartialEq)]
pub enum FuncField {
    /// `__typename`.
    Typename(String),
    /// The aggregate of a column.
    Column(usize),
}

/// A boolean expression over a table's rows.
#[derive(Debug, Clone, PartialEq)]
pub enum BoolExp {
    /// All must hold (empty: true).
    And(Vec<BoolExp>),
    /// Any must hold (empty: false).
    Or(Vec<BoolExp>),
    /// Negation.
    Not(Box<BoolExp>),
    /// `column op value`.
    Compare {
        /// Column index.
        column: usize,
        /// Operator.
        op: CompareOp,
        /// Operand (a list for `_in`/`_nin`, a boolean for `_is_null`).
        value: Value,
    },
    /// Some related row satisfies the expression.
    Exists(RelId, Box<BoolExp>),
}

/// One `order_by` key.
#[derive(Debug, Clone, PartialEq)]
pub struct OrderBy {
    /// What is sorted on.
    pub target: OrderTarget,
    /// Direction.
    pub direction: Direction,
    /// NULL placement as requested.
    pub nulls: Option<Nulls>,
}

/// What an `order_by` key sorts on.
#[derive(Debug, Clone, PartialEq)]
pub enum OrderTarget {
    /// A column of the table.
    Column(usize),
    /// Something of the row an object relationship points to.
    Object(RelId, Box<OrderTarget>),
    /// The number of related rows of an array relationship.
    ArrayCount(RelId),
    /// An aggregate of a column of related rows.
    ArrayAggregate(RelId, AggFunc, usize),
}
