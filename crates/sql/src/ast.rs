//! The SQL AST. Only the shapes Grafton generates; operators are closed enums.

use serde::Serialize;

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
}

/// One entry of a select list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum SelectItem {
    /// `expr AS "alias"`.
    Expr(Expr, String),
    /// `"alias".*`.
    AllFrom(String),
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
    /// `(SELECT …) AS "alias"`.
    Subquery {
        /// The inner query.
        select: Box<Select>,
        /// Alias used by column references.
        alias: String,
    },
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

/// A bind parameter's origin: a request variable or a literal from the document.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum ParamValue {
    /// The value of a GraphQL variable, looked up at execution time.
    Variable(String),
    /// A value written in the document (or inlined from a variable).
    Literal(serde_json::Value),
}

/// The SQL type a parameter is bound as (a cast on PostgreSQL; affinity hints on SQLite).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub enum SqlType {
    /// A built-in type name such as `int4`, `text`, `timestamptz`.
    Builtin(&'static str),
    /// A user-defined type (Postgres enum), schema-qualified.
    Named {
        /// Type schema.
        schema: String,
        /// Type name.
        name: String,
    },
}

/// A bind parameter: its value source, its type, and whether it is a list (for `_in`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Param {
    /// Where the value comes from.
    pub value: ParamValue,
    /// The type to bind it as.
    pub ty: SqlType,
    /// True for a list of values (`= ANY($n)` / `IN (SELECT value FROM json_each(?n))`).
    pub list: bool,
}

/// Binary comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum BinOp {
    /// `=`
    Eq,
    /// `<>`
    Neq,
    /// `>`
    Gt,
    /// `>=`
    Gte,
    /// `<`
    Lt,
    /// `<=`
    Lte,
}

/// Pattern-matching operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum PatternOp {
    /// `LIKE` (case-sensitive)
    Like,
    /// `ILIKE` (case-insensitive LIKE)
    ILike,
    /// `SIMILAR TO` (Postgres only)
    Similar,
    /// `~` (Postgres only)
    Regex,
    /// `~*` (Postgres only)
    IRegex,
}

/// Aggregate functions over one column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum AggFunc {
    /// `sum`
    Sum,
    /// `avg` (always a float)
    Avg,
    /// `min`
    Min,
    /// `max`
    Max,
    /// `stddev` (sample)
    Stddev,
    /// `stddev_pop`
    StddevPop,
    /// `stddev_samp`
    StddevSamp,
    /// `var_pop`
    VarPop,
    /// `var_samp`
    VarSamp,
    /// `variance` (sample)
    Variance,
}

impl AggFunc {
    /// True for the functions whose result is always a float.
    pub fn is_statistical(self) -> bool {
        !matches!(self, Self::Sum | Self::Min | Self::Max)
    }
}

/// How a value is turned into JSON where backends disagree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum JsonKind {
    /// Plain value (numbers, strings).
    Plain,
    /// A boolean column: SQLite stores 0/1, JSON wants true/false.
    Boolean,
    /// A float: SQLite prints `2.0` where Postgres prints `2`; normalised to match.
    Float,
    /// A json/jsonb column: embedded as JSON, not as a string.
    Json,
}

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
    /// `EXISTS (select)`.
    Exists(Box<Select>),
    /// A scalar subquery `(select)`.
    Subquery(Box<Select>),
    /// A JSON object built by the database from ordered key/value pairs.
    JsonObject(Vec<(String, Expr)>),
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
    /// `expr::type` (Postgres) / `CAST(expr AS TEXT)` (SQLite).
    Cast(Box<Expr>, SqlType),
    /// `(expr IS NULL) = param`: an `_is_null` whose truth comes from a variable.
    IsNullParam {
        /// Subject.
        expr: Box<Expr>,
        /// A boolean parameter.
        param: Param,
    },
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
