//! The SQL AST. Only the shapes Grafton generates; operators are closed enums.

use serde::Serialize;

mod ops;
mod param;
mod write;
pub use ops::*;
pub use param::*;
pub use write::*;

/// A `SELECT` statement or subquery.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Select {
    /// `DISTINCT ON (…)` expressions (emulated with a window on SQLite).
    pub distinct_on: Vec<Expr>,
    /// The select list.
    pub items: Vec<SelectItem>,
    /// The `FROM` source, if any.
    pub from: Option<From>,
    /// The `WHERE` condition.
    pub filter: Option<Expr>,
    /// `ORDER BY` items.
    pub order_by: Vec<OrderItem>,
    /// `LIMIT` expression.
    pub limit: Option<Expr>,
    /// `OFFSET` expression.
    pub offset: Option<Expr>,
    /// `FOR UPDATE` of the `FROM` table (Postgres; SQLite's writer lock already serialises).
    pub lock: bool,
}

/// One entry of a select list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum SelectItem {
    /// `expr AS "alias"`.
    Expr(Expr, String),
    /// `"alias".*`.
    AllFrom(String),
    /// The physical identity of the row aliased so, as a write returns it
    /// ([`Returning::Identity`]), each value under its own name.
    Identity(String),
}

/// A `FROM` source.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum From {
    /// `"schema"."name" AS "alias"` (schema omitted when `None`).
    Table {
        /// Schema, or `None` for SQLite's main database.
        schema: Option<String>,
        /// Table name.
        name: String,
        /// Alias used by column references.
        alias: String,
    },
    /// A table joined to a list of row identities, in list order: the rows a write
    /// just returned (see [`Identities`]).
    RowIds {
        /// The table and its alias.
        table: TableRef,
        /// The rows' identities.
        ids: Identities,
    },
    /// `"schema"."function"(a, "name" => b) AS "alias"`: a function's rows, its
    /// arguments by position, then (`Some(name)`) by name.
    Call {
        /// Schema.
        schema: String,
        /// Function name.
        name: String,
        /// Arguments in order.
        args: Vec<(Option<String>, Expr)>,
        /// Alias used by column references.
        alias: String,
    },
    /// `(SELECT …) AS "alias"`.
    Subquery {
        /// The inner query.
        select: Box<Select>,
        /// Alias used by column references.
        alias: String,
    },
}

impl From {
    /// The alias its columns are read through.
    pub fn alias(&self) -> &str {
        match self {
            Self::Table { alias, .. } | Self::Call { alias, .. } | Self::Subquery { alias, .. } => {
                alias
            }
            Self::RowIds { table, .. } => &table.alias,
        }
    }
}

/// An `ORDER BY` item.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OrderItem {
    /// What to sort by.
    pub expr: Expr,
    /// Ascending or descending.
    pub direction: Direction,
    /// Where NULLs go; `None` when the expression cannot be NULL (lets indexes serve the order).
    pub nulls: Option<Nulls>,
}

/// Sort direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Direction {
    /// `ASC`
    Asc,
    /// `DESC`
    Desc,
}

/// NULL placement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Nulls {
    /// `NULLS FIRST`
    First,
    /// `NULLS LAST`
    Last,
}

// Filters recurse as deep as a document nests, holding `Expr`s in every frame: a
// larger `Expr` cost a deeply nested `_and` its place under a 2 MiB worker stack
// (debug build). Box a new variant's payload rather than grow it.
const _: () = assert!(std::mem::size_of::<Expr>() <= 144);

/// Expressions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Expr {
    /// `"table"."column"`.
    Column {
        /// Table alias.
        table: String,
        /// Column name.
        column: String,
    },
    /// A bind parameter.
    Param(Param),
    /// An escaped string literal.
    Str(String),
    /// An integer literal produced by the engine (never from a request).
    Int(i64),
    /// `TRUE` / `FALSE`.
    Bool(bool),
    /// `NULL`.
    Null,
    /// `left op right`.
    Compare {
        /// Left operand.
        left: Box<Expr>,
        /// Operator.
        op: BinOp,
        /// Right operand.
        right: Box<Expr>,
    },
    /// `expr [NOT] op pattern`.
    Pattern {
        /// Subject.
        expr: Box<Expr>,
        /// Operator.
        op: PatternOp,
        /// Negated form.
        negated: bool,
        /// Pattern (usually a parameter).
        pattern: Box<Expr>,
    },
    /// `expr [NOT] IN (list parameter)`.
    InList {
        /// Subject.
        expr: Box<Expr>,
        /// A list parameter.
        list: Param,
        /// `NOT IN`.
        negated: bool,
    },
    /// A jsonb test of `expr` against a parameter.
    JsonTest {
        /// Subject (a jsonb value).
        expr: Box<Expr>,
        /// The test.
        op: JsonOp,
        /// The operand: JSON, a key, or a list of keys.
        operand: Param,
    },
    /// The JSON inside a json/jsonb value at a path (NULL where there is none):
    /// `expr #> $n` with a text-array parameter on PostgreSQL, `expr -> ?n` with a
    /// SQLite JSON path (`$.a[0]`) parameter on SQLite.
    JsonAt {
        /// The json/jsonb value.
        expr: Box<Expr>,
        /// The path: bound as a text array for PostgreSQL's `#>`, a JSON path
        /// (`$."a"[0]`, `[#-1]` from the end) for SQLite's `->`.
        path: Vec<JsonStep>,
    },
    /// `expr IS [NOT] NULL`.
    IsNull {
        /// Subject.
        expr: Box<Expr>,
        /// `IS NOT NULL`.
        negated: bool,
    },
    /// Conjunction; empty is `TRUE`.
    And(Vec<Expr>),
    /// Disjunction; empty is `FALSE`.
    Or(Vec<Expr>),
    /// `NOT (expr)`.
    Not(Box<Expr>),
    /// `(expr) IS NOT TRUE`: false or NULL.
    NotTrue(Box<Expr>),
    /// `EXISTS (select)`.
    Exists(Box<Select>),
    /// A scalar subquery `(select)`.
    Subquery(Box<Select>),
    /// A JSON object built by the database from ordered key/value pairs.
    JsonObject(Vec<(String, Expr)>),
    /// A row's JSON object, each value computed from the row (PostgreSQL). As a
    /// `SELECT`'s item or a list's element it is a record: `to_json` of a `LATERAL`
    /// subquery's row, whose columns are the keys, which PostgreSQL prints compact
    /// and builds as cheaply as `json_build_object`. Elsewhere it is a
    /// [`Expr::JsonObject`]. Its values are per row: an aggregate of the select's
    /// rows among them would be computed inside the `LATERAL` subquery instead.
    RowObject {
        /// The alias of the record's subquery.
        alias: String,
        /// Keys (PostgreSQL column names: at most 63 bytes) and values.
        pairs: Vec<(String, Expr)>,
    },
    /// A value converted to JSON (see [`JsonKind`]).
    ToJson(Box<Expr>, JsonKind),
    /// A scalar subquery whose result is JSON text (re-tagged as JSON on SQLite).
    JsonSubquery(Box<Select>),
    /// `coalesce(json_agg(expr ORDER BY …), '[]')`.
    JsonAgg {
        /// The element (already JSON).
        expr: Box<Expr>,
        /// Aggregate ordering.
        order_by: Vec<OrderItem>,
    },
    /// `count(*)`.
    CountStar,
    /// `count([DISTINCT] cols)`, counting rows where every column is non-NULL.
    Count {
        /// Columns counted.
        columns: Vec<Expr>,
        /// Count distinct combinations.
        distinct: bool,
    },
    /// An aggregate over one expression.
    Agg(AggFunc, Box<Expr>),
    /// `"alias"."column" + param`, or another arithmetic/JSON update of a column.
    ColumnUpdate {
        /// The column's current value.
        column: Box<Expr>,
        /// What is done to it.
        op: UpdateOp,
        /// The operand.
        operand: Box<Expr>,
    },
    /// The smaller of a (possibly NULL: no limit) value and a cap: a role's row limit.
    Least(Box<Expr>, i64),
    /// The position of a row in a [`From::RowIds`] list, for ordering.
    RowIdOrder(String),
    /// A subquery's whole row as a JSON object, its columns' names as the keys
    /// (PostgreSQL): the row itself where an enclosing `array_to_json(ARRAY(…))` or
    /// `json_agg` turns it into JSON, `to_json(row)` elsewhere.
    RowJson(String),
    /// The row (aliased) is one of these identities (see [`From::RowIds`]).
    RowIdIn {
        /// Table alias.
        alias: String,
        /// The rows' identities.
        ids: Identities,
    },
    /// A value as the executor reads it from a write's rows: PostgreSQL sends it as
    /// text (every such value is read as text), SQLite as it is.
    ReadText(Box<Expr>),
    /// A value written to `column` of an `UPDATE`'s table, converted to the column's
    /// type as an insert converts it: PostgreSQL reads it from the statement's one
    /// JSON record (`"_r"."column"`, see [`Update`]); SQLite binds it as
    /// [`SqlType::Stored`].
    Written {
        /// The column written.
        column: String,
        /// The value (boxed: `Expr` stays small, and deep filters recurse over it).
        value: Box<serde_json::Value>,
        /// The column's type.
        ty: SqlType,
    },
    /// `expr::type` (Postgres) / `CAST(expr AS TEXT)` (SQLite).
    Cast(Box<Expr>, SqlType),
    /// `"schema"."function"(a, "name" => b)`: a function's value (a computed field).
    Func {
        /// Schema.
        schema: String,
        /// Function name.
        name: String,
        /// Arguments in order: by position, then (`Some(name)`) by name.
        args: Vec<(Option<String>, Expr)>,
    },
    /// A table alias as a value: the whole row (a computed field's argument).
    RowRef(String),
    /// `CASE WHEN when THEN then END`: `then` where `when` holds, NULL elsewhere (a
    /// column an inherited role sees only on some rows).
    CaseWhen {
        /// The condition.
        when: Box<Expr>,
        /// The value where it holds.
        then: Box<Expr>,
    },
    /// A JSON array built by the database from values (`json_build_array`).
    JsonArray(Vec<Expr>),
    /// The standard base64 (no line breaks) of a JSON value's text: a Relay
    /// cursor or global id.
    Base64(Box<Expr>),
    /// An aggregate: the value of `expr` on the first row in `order_by`'s order
    /// (NULL over no rows).
    FirstBy {
        /// The value.
        expr: Box<Expr>,
        /// The order.
        order_by: Vec<OrderItem>,
    },
    /// `(expr IS NULL) = param`: an `_is_null` whose truth comes from a variable.
    IsNullParam {
        /// Subject.
        expr: Box<Expr>,
        /// A boolean parameter.
        param: Param,
    },
}

/// An update of a column from its current value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum UpdateOp {
    /// `col + x`
    Inc,
    /// jsonb `col || x`
    Append,
    /// jsonb `x || col`
    Prepend,
    /// jsonb `col - key`
    DeleteKey,
    /// jsonb `col - index`
    DeleteElem,
    /// jsonb `col #- path`
    DeleteAtPath,
}

impl Expr {
    /// A column reference.
    pub fn column(table: &str, column: &str) -> Self {
        Expr::Column {
            table: table.to_owned(),
            column: column.to_owned(),
        }
    }
}
