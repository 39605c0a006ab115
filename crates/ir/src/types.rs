//! IR data types.

use grafton_schema::{CompareOp, RelId, TableId};
use grafton_sql::{AggFunc, Direction, Nulls};
use std::collections::BTreeSet;

mod connection;
mod mutation;
mod spatial;
pub use connection::*;
pub use mutation::*;
pub use spatial::*;

/// A leaf value: a variable reference or a literal, bound as a parameter later.
pub use grafton_sql::ParamValue as Value;

/// Update operators (`_set`, `_inc`, the jsonb ones).
pub use grafton_schema::UpdateOperator;

/// A query operation.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    /// Root fields in response order, keyed by response key.
    pub root: Vec<(String, Root)>,
    /// Variables whose values shaped this IR (inlined); part of any plan cache key.
    pub shape_vars: BTreeSet<String>,
    /// Variables used as `limit`/`offset`: each request's value must be ≥ 0.
    pub non_negative_vars: BTreeSet<String>,
    /// A streaming subscription's cursor (its root field is the stream's rows).
    pub stream: Option<Stream>,
    /// Parameters each request computes from its variables (Relay cursors' and
    /// global ids' parts).
    pub derived: Vec<Derived>,
}

/// Where a stream's cursor starts; its current value is the variable
/// `STREAM_CURSOR_VAR`, which the engine sets per subscriber.
#[derive(Debug, Clone, PartialEq)]
pub struct Stream {
    /// The `initial_value` as written (a literal or a variable).
    pub initial: Value,
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
    /// A Relay `_connection` field.
    Connection(Box<Connection>),
    /// An action: answered by its handler, not the database.
    Action(ActionRoot),
    /// A remote schema's root field: answered by the remote.
    Remote(RemoteRoot),
}

/// A remote schema's root field.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteRoot {
    /// Its index in the model's `remote_schemas`.
    pub remote: usize,
    /// The document's fields under its response key.
    pub fields: Vec<apollo_compiler::Node<apollo_compiler::executable::Field>>,
}

/// An action's root field.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionRoot {
    /// Its index in the model's `actions`.
    pub action: usize,
    /// The document's fields under its response key (their selections merge).
    pub fields: Vec<apollo_compiler::Node<apollo_compiler::executable::Field>>,
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
    /// A tracked function whose result the rows are, instead of the whole table.
    pub call: Option<Call>,
}

/// The name of the variable holding the caller's session variables as one JSON
/// object (a function's `session_argument`). Not a GraphQL name (it has a `-`), so
/// no request variable can take it; the engine fills it.
pub const SESSION_JSON_VAR: &str = "hasura-session";

/// A call of a tracked function or a computed field's function.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The function, by index into the catalog's functions.
    pub function: usize,
    /// The arguments passed, by position, in order (omitted ones take their
    /// default); the session argument's value is [`SESSION_JSON_VAR`].
    pub args: Vec<(usize, Value)>,
    /// The session argument's position (its value is a `json`/`jsonb` parameter).
    pub session_arg: Option<usize>,
    /// A computed field's row argument: the row it is a field of.
    pub row_arg: Option<usize>,
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
    /// The JSON at a path inside a json/jsonb column (`details(path: "$.a[0]")`);
    /// null where the path leads nowhere.
    JsonPath(usize, Vec<PathStep>),
    /// `__typename`.
    Typename(String),
    /// An object relationship.
    Object(RelId, Rows),
    /// An array relationship.
    Array(RelId, Rows),
    /// An array relationship's aggregate.
    Aggregate(RelId, Aggregate),
    /// An array relationship's Relay connection.
    Connection(RelId, Box<Connection>),
    /// The Relay global id of the row (`id` of a `Node`).
    NodeId,
    /// A scalar computed field: its function called with the row; a json/jsonb
    /// one's `path` (empty: the whole value).
    Computed(grafton_schema::ComputedId, Call, Vec<PathStep>),
    /// A computed field returning rows of a table (`Rows::args.call` has the row).
    ComputedRows(Rows),
    /// The `_aggregate` of a computed field returning rows (`args.call` has the
    /// row).
    ComputedAggregate(Aggregate),
    /// A remote relationship: the statement answers the row's columns it
    /// reads, the engine the remote's field (one call for every row).
    Remote(RemoteJoin),
}

/// A remote relationship's field in a selection.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteJoin {
    /// The relationship, by index into the model's `remote_relationships`.
    pub rel: grafton_schema::RemoteRelId,
    /// The row's columns it reads: `(database name, column index)`.
    pub columns: Vec<(String, usize)>,
    /// The document's fields under its response key.
    pub fields: Vec<apollo_compiler::Node<apollo_compiler::executable::Field>>,
}

/// One step of a JSON path: an object key or an array index.
#[derive(Debug, Clone, PartialEq)]
pub enum PathStep {
    /// `.key` or `["key"]`.
    Key(String),
    /// `[n]`.
    Index(i64),
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
    /// The aggregate of a scalar computed field without arguments.
    Computed(grafton_schema::ComputedId),
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
    /// `column op other`, two columns of the row, or with `root` a column of the row
    /// the rule started from (Hasura's `_ceq`, `_cgt`… in permission rules).
    CompareColumns {
        /// Column index.
        column: usize,
        /// Operator (an ordering or equality one).
        op: CompareOp,
        /// The other column's index.
        other: usize,
        /// `other` is a column of the rule's root table, not of this row.
        root: bool,
    },
    /// Some row of an unrelated table satisfies the expression (`_exists`).
    ExistsIn(TableId, Box<BoolExp>),
    /// Some row a set-returning computed field (without arguments) gives for the
    /// row satisfies the expression.
    ExistsComputed(grafton_schema::ComputedId, Box<BoolExp>),
    /// `computed_field(row) op value`: a scalar computed field without arguments.
    CompareComputed {
        /// The computed field.
        field: grafton_schema::ComputedId,
        /// Operator.
        op: CompareOp,
        /// Operand.
        value: Value,
    },
    /// `ST_DWithin(column, from, distance[, use_spheroid])` (`_st_d_within`,
    /// `_st_3d_d_within`): boxed, as its three operands would make every
    /// expression larger.
    DWithin(Box<DWithin>),
    /// `ST_Intersects` of a raster column with a band's geometry
    /// (`_st_intersects_nband_geom`, `_st_intersects_geom_nband`).
    Nband(Box<Nband>),
    /// An aggregate of the related rows of an array relationship compared
    /// (`articles_aggregate: {count: {predicate: {_gt: 2}}}`).
    Aggregate(Box<AggregatePredicate>),
    /// The expression with `column` cast to `to` (`_cast: {geography: {…}}` on a
    /// geometry column, and back): its comparisons on the column are the cast's.
    Cast {
        /// The column cast.
        column: usize,
        /// The type it is cast to.
        to: grafton_catalog::ScalarKind,
        /// Comparisons of the cast column.
        inner: Box<BoolExp>,
    },
    /// `column::text op value`: a jsonb column compared as its text (`_cast: {String: …}`).
    CompareText {
        /// Column index.
        column: usize,
        /// A comparison `String_comparison_exp` offers.
        op: CompareOp,
        /// Operand.
        value: Value,
    },
}

/// `<rel>_aggregate: {count | bool_and | bool_or: {arguments, distinct, filter,
/// predicate}}` in a boolean expression.
#[derive(Debug, Clone, PartialEq)]
pub struct AggregatePredicate {
    /// The array relationship whose rows are aggregated.
    pub rel: RelId,
    /// What is aggregated.
    pub func: PredicateFunc,
    /// Only the related rows this holds for.
    pub filter: Option<BoolExp>,
    /// The comparisons the aggregate must pass (all of them).
    pub predicate: Vec<(CompareOp, Value)>,
}

/// The aggregate an [`AggregatePredicate`] compares.
#[derive(Debug, Clone, PartialEq)]
pub enum PredicateFunc {
    /// `count`: of rows, or (with columns) of rows where they are not null.
    Count {
        /// The `arguments` columns (empty: every row).
        columns: Vec<usize>,
        /// Distinct values only.
        distinct: bool,
    },
    /// `bool_and` of a boolean column.
    BoolAnd(usize),
    /// `bool_or` of a boolean column.
    BoolOr(usize),
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
    /// An aggregate of a column (or scalar computed field) of related rows.
    ArrayAggregate(RelId, AggFunc, Aggregated),
    /// A scalar computed field without arguments.
    Computed(grafton_schema::ComputedId),
    /// The number of rows a set-returning computed field (without arguments)
    /// gives.
    ComputedCount(grafton_schema::ComputedId),
    /// An aggregate of a column (or scalar computed field) of those rows.
    ComputedAggregate(grafton_schema::ComputedId, AggFunc, Aggregated),
}

/// What an aggregate order key aggregates over the rows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Aggregated {
    /// A column, by index.
    Column(usize),
    /// A scalar computed field without arguments.
    Computed(grafton_schema::ComputedId),
}
