//! Closed enums of the operators and functions Grafton emits.

use serde::Serialize;

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
    /// `@>` (ltree: is an ancestor of)
    Contains,
    /// `<@` (ltree: is a descendant of)
    ContainedIn,
    /// `~` (ltree: matches an lquery)
    Matches,
    /// `?` (ltree: matches any lquery of an array)
    MatchesAny,
    /// `@` (ltree: matches an ltxtquery)
    MatchesText,
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

/// jsonb containment and key tests (`_contains`, `_has_key`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum JsonOp {
    /// `@>`: the value contains the operand.
    Contains,
    /// `<@`: the operand contains the value.
    ContainedIn,
    /// `?`: a top-level key (or string element) exists.
    HasKey,
    /// `?|`: any of these keys exists (a list operand).
    HasKeysAny,
    /// `?&`: all of these keys exist (a list operand).
    HasKeysAll,
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
    /// `bool_and` (SQLite: `min` of its 0s and 1s), for aggregate predicates
    BoolAnd,
    /// `bool_or` (SQLite: `max`), for aggregate predicates
    BoolOr,
}

impl AggFunc {
    /// True for the functions whose result is always a float.
    pub fn is_statistical(self) -> bool {
        !matches!(
            self,
            Self::Sum | Self::Min | Self::Max | Self::BoolAnd | Self::BoolOr
        )
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
