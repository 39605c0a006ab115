//! The state every part of translation shares: [`Ctx`] (the model, the role's
//! rules, alias numbering) and the small helpers each part needs (the SQL type
//! of a scalar, how a value becomes JSON, a JSON path as a parameter). Every
//! translating module depends on this one and on no sibling, so the order of
//! reading is one way.

use grafton_catalog::ScalarKind;
use grafton_ir::permissions::RoleRules;
use grafton_schema::SchemaModel;
use grafton_sql::{Expr, JsonKind, SqlType};

/// Translation state: the model and a counter for unique table aliases.
pub(crate) struct Ctx<'a> {
    pub(crate) model: &'a SchemaModel,
    /// The role's row rules (`None`: admin).
    pub(crate) rules: Option<&'a RoleRules>,
    /// True while translating a rule itself: rules are conditions the operator wrote,
    /// not reads by the role, so the role's rules on related tables do not apply.
    pub(crate) trusted: bool,
    /// True inside an odd number of `NOT`s, where NULL and false differ.
    pub(crate) negated: bool,
    pub(crate) next_alias: usize,
    /// Aliases of subqueries that carry their table's whole row as [`ROW_KEY`]
    /// (for computed fields) rather than being the table itself.
    pub(crate) wrapped: std::collections::HashSet<String>,
    /// The row a computed field's function call takes (its rows' source).
    pub(crate) parent_row: Option<Expr>,
    /// A column read as another type while a `_cast` is translated: its alias,
    /// its index and the type.
    pub(crate) cast: Option<(String, usize, ScalarKind)>,
    /// Set once a SQL function (a tracked function, a computed field) is called:
    /// what it reads is not known, so a cached answer of it depends on every write.
    pub(crate) calls: std::cell::Cell<bool>,
}

/// The column under which a subquery carries its table's whole row.
pub(crate) const ROW_KEY: &str = "__grafton_row";

/// Prefix of the names under which an inner query projects its sort keys.
pub(crate) const ORDER_KEY: &str = "__grafton_o";

/// The written rows to read again, as [`grafton_sql::From::RowIds`] takes them.
pub(crate) use grafton_sql::Identities;

/// How a column's value becomes JSON.
pub(crate) fn json_kind(kind: &ScalarKind) -> JsonKind {
    match kind {
        ScalarKind::Boolean => JsonKind::Boolean,
        ScalarKind::Float | ScalarKind::Numeric => JsonKind::Float,
        ScalarKind::Json | ScalarKind::Jsonb => JsonKind::Json,
        // PostgreSQL prints a jsonb[]'s elements as jsonb prints them, padded.
        ScalarKind::Array(of) if matches!(**of, ScalarKind::Json | ScalarKind::Jsonb) => {
            JsonKind::Json
        }
        _ => JsonKind::Plain,
    }
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(model: &'a SchemaModel, rules: Option<&'a RoleRules>) -> Self {
        Ctx {
            model,
            rules,
            trusted: false,
            negated: false,
            next_alias: 0,
            wrapped: std::collections::HashSet::new(),
            parent_row: None,
            cast: None,
            calls: std::cell::Cell::new(false),
        }
    }
}

/// The bind type of a column kind (a cast on Postgres).
pub(crate) fn sql_type(ctx: &Ctx, kind: &ScalarKind) -> SqlType {
    match (kind.postgres_type(), kind) {
        (Some(name), _) => SqlType::Builtin(name),
        (None, ScalarKind::Enum(i)) if ctx.model.catalog.enums[*i].from_table.is_some() => {
            SqlType::Builtin("text")
        }
        (None, ScalarKind::Enum(i)) => {
            let e = &ctx.model.catalog.enums[*i];
            SqlType::Named {
                schema: e.schema.clone(),
                name: e.name.clone(),
            }
        }
        // `text[]` is `pg_catalog._text`: a value (a list, or an array literal) is
        // bound as its literal's text and cast to it.
        (None, ScalarKind::Array(_)) => match kind.postgres_array_type() {
            Some(name) => SqlType::Named {
                schema: "pg_catalog".to_owned(),
                name,
            },
            None => SqlType::Builtin("text"),
        },
        (None, ScalarKind::Geometry | ScalarKind::Geography) => SqlType::Spatial {
            schema: extension_schema(ctx, "geometry"),
            geography: *kind == ScalarKind::Geography,
        },
        (None, ScalarKind::Ltree) => extension_type(ctx, "ltree", "ltree"),
        // Hex WKB text, which raster's input function reads.
        (None, ScalarKind::Raster) => extension_type(ctx, "raster", "raster"),
        (None, _) => SqlType::Builtin("text"),
    }
}

/// The schema an extension's types and functions live in.
pub(crate) fn extension_schema(ctx: &Ctx, type_name: &str) -> String {
    ctx.model.catalog.extension_schema(type_name)
}

/// A type of the extension that made `of` (`lquery` beside `ltree`).
pub(crate) fn extension_type(ctx: &Ctx, of: &str, name: &str) -> SqlType {
    SqlType::Named {
        schema: extension_schema(ctx, of),
        name: name.to_owned(),
    }
}

/// A value of `kind` as the response carries it: a PostGIS value as GeoJSON with
/// its CRS (`ST_AsGeoJSON(value, 15, 4)`, Hasura's digits and options), anything
/// else as [`json_kind`] says.
pub(crate) fn output_value(ctx: &Ctx, kind: &ScalarKind, value: Expr) -> Expr {
    if !kind.is_spatial() {
        return Expr::ToJson(Box::new(value), json_kind(kind));
    }
    let geojson = Expr::Func {
        schema: extension_schema(ctx, "geometry"),
        name: "st_asgeojson".to_owned(),
        args: vec![(None, value), (None, Expr::Int(15)), (None, Expr::Int(4))],
    };
    Expr::ToJson(
        Box::new(Expr::Cast(Box::new(geojson), SqlType::Builtin("json"))),
        JsonKind::Json,
    )
}
