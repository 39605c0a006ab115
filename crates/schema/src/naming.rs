//! Naming conventions as one table: every generated name passes through here, so a
//! convention is a set of case rules and vocabulary, never a second pipeline.

use serde::Serialize;
use std::str::FromStr;

/// A naming convention for the generated schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
pub enum Convention {
    /// Hasura's default: snake_case everything (`venues_by_pk`, `Int_comparison_exp`).
    #[default]
    HasuraDefault,
    /// Hasura's `graphql-default`: camelCase fields and arguments, PascalCase types,
    /// UPPERCASE enum values.
    GraphqlDefault,
    /// Phrag's dialect: `where: {id: {gt: 1}}`, `sort: {id: desc}`.
    Phrag,
}

impl FromStr for Convention {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "hasura-default" => Ok(Self::HasuraDefault),
            "graphql-default" => Ok(Self::GraphqlDefault),
            "phrag" => Ok(Self::Phrag),
            other => Err(format!(
                "unknown naming convention '{other}' (expected hasura-default, graphql-default or phrag)"
            )),
        }
    }
}

/// Arguments of list fields and aggregate counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    /// `where`
    Where,
    /// `order_by`
    OrderBy,
    /// `limit`
    Limit,
    /// `offset`
    Offset,
    /// `distinct_on`
    DistinctOn,
    /// `columns` (of `count`)
    Columns,
    /// `distinct` (of `count`)
    Distinct,
}

/// Boolean combinators of `bool_exp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combinator {
    /// `_and`
    And,
    /// `_or`
    Or,
    /// `_not`
    Not,
}

pub use crate::compare_op::CompareOp;

/// The convention in force, with the rules that derive every name.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Naming {
    /// Which convention.
    pub convention: Convention,
}

impl Naming {
    /// A naming for `convention`.
    pub fn new(convention: Convention) -> Self {
        Self { convention }
    }

    /// A field name (columns, relationships, root fields) from its snake_case form.
    pub fn field(&self, snake: &str) -> String {
        match self.convention {
            Convention::GraphqlDefault => camel_case(snake),
            Convention::HasuraDefault | Convention::Phrag => snake.to_owned(),
        }
    }

    /// A type name from its snake_case form.
    pub fn type_name(&self, snake: &str) -> String {
        match self.convention {
            Convention::GraphqlDefault => pascal_case(snake),
            Convention::HasuraDefault | Convention::Phrag => snake.to_owned(),
        }
    }

    /// An enum value (`asc`, column names in `select_column`).
    pub fn enum_value(&self, snake: &str) -> String {
        match self.convention {
            Convention::GraphqlDefault => snake.to_ascii_uppercase(),
            Convention::HasuraDefault | Convention::Phrag => snake.to_owned(),
        }
    }

    /// An argument name.
    pub fn arg(&self, arg: Arg) -> String {
        let snake = match (self.convention, arg) {
            (Convention::Phrag, Arg::OrderBy) => "sort",
            (_, Arg::Where) => "where",
            (_, Arg::OrderBy) => "order_by",
            (_, Arg::Limit) => "limit",
            (_, Arg::Offset) => "offset",
            (_, Arg::DistinctOn) => "distinct_on",
            (_, Arg::Columns) => "columns",
            (_, Arg::Distinct) => "distinct",
        };
        self.field(snake)
    }

    /// A comparison operator's name.
    pub fn op(&self, op: CompareOp) -> String {
        let hasura = op.hasura_name();
        match self.convention {
            Convention::HasuraDefault => hasura.to_owned(),
            // Hasura keeps the leading underscore and camel-cases the rest (`_isNull`).
            Convention::GraphqlDefault => format!("_{}", camel_case(&hasura[1..])),
            Convention::Phrag => match op {
                CompareOp::Neq => "ne".to_owned(),
                CompareOp::IsNull => "null".to_owned(),
                _ => hasura[1..].to_owned(),
            },
        }
    }

    /// The name of `_cast` (jsonb's comparison as text).
    pub fn cast_op(&self) -> String {
        match self.convention {
            Convention::Phrag => "cast".to_owned(),
            _ => "_cast".to_owned(),
        }
    }

    /// A boolean combinator's name.
    pub fn combinator(&self, c: Combinator) -> String {
        let base = match c {
            Combinator::And => "and",
            Combinator::Or => "or",
            Combinator::Not => "not",
        };
        match self.convention {
            Convention::Phrag => base.to_owned(),
            _ => format!("_{base}"),
        }
    }

    /// The name of the GraphQL scalar for a base (hasura-default) scalar name.
    /// Built-in GraphQL scalars keep their names in every convention.
    pub fn scalar(&self, base: &str) -> String {
        match base {
            "Int" | "Float" | "String" | "Boolean" | "ID" => base.to_owned(),
            other => self.type_name(other),
        }
    }
}

/// `postal_code` → `postalCode`; leading underscores are kept.
pub fn camel_case(snake: &str) -> String {
    let trimmed = snake.trim_start_matches('_');
    let lead = &snake[..snake.len() - trimmed.len()];
    let mut out = String::with_capacity(snake.len());
    out.push_str(lead);
    let mut upper = false;
    for (i, c) in trimmed.chars().enumerate() {
        if c == '_' {
            upper = i > 0;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// `venues_bool_exp` → `VenuesBoolExp`.
pub fn pascal_case(snake: &str) -> String {
    let camel = camel_case(snake);
    let trimmed = camel.trim_start_matches('_');
    let lead = &camel[..camel.len() - trimmed.len()];
    let mut chars = trimmed.chars();
    match chars.next() {
        Some(first) => format!("{lead}{}{}", first.to_uppercase(), chars.as_str()),
        None => camel,
    }
}

/// English plural for relationship names (`article` → `articles`, `category` → `categories`);
/// names already ending in `s` are taken as plural.
pub fn plural(name: &str) -> String {
    if name.ends_with('s') {
        return name.to_owned();
    }
    if name.ends_with('x') || name.ends_with('z') || name.ends_with("ch") || name.ends_with("sh") {
        return format!("{name}es");
    }
    if let Some(stem) = name.strip_suffix('y') {
        if !stem.ends_with(['a', 'e', 'i', 'o', 'u']) && !stem.is_empty() {
            return format!("{stem}ies");
        }
    }
    format!("{name}s")
}

/// Makes a database name a valid GraphQL name: invalid characters become `_`,
/// a leading digit gets a `_` prefix, and the reserved `__` prefix is avoided.
pub fn graphql_safe(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    if out.starts_with("__") {
        out.insert(0, 'x');
    }
    out
}

/// Whether `v` can be a GraphQL enum value as it is (an enum table's key): a name,
/// not `true`, `false` or `null`, and not starting with `__` (GraphQL's own).
pub fn is_enum_value(v: &str) -> bool {
    graphql_safe(v) == v && !matches!(v, "true" | "false" | "null")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases() {
        assert_eq!(camel_case("postal_code"), "postalCode");
        assert_eq!(camel_case("venues_by_pk"), "venuesByPk");
        assert_eq!(camel_case("_is_null"), "_isNull");
        assert_eq!(pascal_case("venues_bool_exp"), "VenuesBoolExp");
        assert_eq!(pascal_case("Int_comparison_exp"), "IntComparisonExp");
    }

    #[test]
    fn plurals() {
        assert_eq!(plural("article"), "articles");
        assert_eq!(plural("meetups"), "meetups");
        assert_eq!(plural("category"), "categories");
        assert_eq!(plural("day"), "days");
        assert_eq!(plural("box"), "boxes");
        assert_eq!(plural("member_follow"), "member_follows");
    }

    #[test]
    fn safe_names() {
        assert_eq!(graphql_safe("my-table"), "my_table");
        assert_eq!(graphql_safe("1st"), "_1st");
        assert_eq!(graphql_safe("__x"), "x__x");
    }
}
