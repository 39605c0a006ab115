//! The IR of a mutation: its root fields, each a write (or a `VOLATILE`
//! function's call) and what its answer shows.

use super::{BoolExp, Derived, Field, RelId, Rows, TableId, UpdateOperator};

/// A mutation operation: its root fields run in document order, in one transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct Mutation {
    /// Root fields in response order, keyed by response key.
    pub root: Vec<(String, MutationRoot)>,
    /// Parameters each request computes from its variables (a Relay
    /// connection's cursor in a write's answer).
    pub derived: Vec<Derived>,
}

/// A root mutation field.
#[derive(Debug, Clone, PartialEq)]
pub enum MutationRoot {
    /// `__typename` at the root.
    Typename(String),
    /// One write and what to answer about it.
    Write(Write),
    /// `update_t_many`: writes run in order, answered as a list.
    Many(Vec<Write>),
    /// A tracked `VOLATILE` function called in the transaction: its rows (or row).
    Call(Rows),
}

/// One write to one table.
#[derive(Debug, Clone, PartialEq)]
pub struct Write {
    /// The table written.
    pub table: TableId,
    /// What is written.
    pub action: Action,
    /// What the response shows.
    pub output: Output,
}

/// The kind of write.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Insert rows (and their nested rows), optionally upserting.
    Insert {
        /// Rows in input order.
        rows: Vec<InsertRow>,
        /// Upsert behaviour.
        on_conflict: Option<OnConflict>,
    },
    /// Update the rows matching a filter.
    Update {
        /// Rows to update.
        filter: BoolExp,
        /// Column updates, in operator order.
        ops: Vec<ColumnOp>,
    },
    /// Delete the rows matching a filter.
    Delete(BoolExp),
}

/// One column update: `_set`, `_inc`, or a jsonb operator.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnOp {
    /// Column index.
    pub column: usize,
    /// The operator.
    pub op: UpdateOperator,
    /// The operand.
    pub value: serde_json::Value,
}

/// A row to insert, with rows to insert through its relationships.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct InsertRow {
    /// Column values by column index, in input order.
    pub columns: Vec<(usize, serde_json::Value)>,
    /// Object relationships: the parent row is inserted first and its key copied here.
    pub objects: Vec<Nested>,
    /// Array relationships: children are inserted after this row, with its key.
    pub arrays: Vec<Nested>,
}

/// Rows inserted through a relationship.
#[derive(Debug, Clone, PartialEq)]
pub struct Nested {
    /// The relationship.
    pub rel: RelId,
    /// The rows (one for an object relationship).
    pub rows: Vec<InsertRow>,
    /// Upsert behaviour for them.
    pub on_conflict: Option<OnConflict>,
}

/// `on_conflict`: the unique key, the columns to update, and which rows may be updated.
#[derive(Debug, Clone, PartialEq)]
pub struct OnConflict {
    /// The unique key's columns.
    pub columns: Vec<usize>,
    /// Columns to set from the proposed row; empty means do nothing.
    pub update_columns: Vec<usize>,
    /// Only existing rows matching this are updated.
    pub filter: Option<BoolExp>,
}

/// What a mutation field answers.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// `t_mutation_response` fields by response key.
    Response(Vec<(String, ResponseField)>),
    /// `_one` / `_by_pk`: the row (or null), with these fields.
    Single(Vec<(String, Field)>),
}

/// A field of `t_mutation_response`.
#[derive(Debug, Clone, PartialEq)]
pub enum ResponseField {
    /// `__typename`.
    Typename(String),
    /// `affected_rows`.
    AffectedRows,
    /// `returning { … }`.
    Returning(Vec<(String, Field)>),
}
