//! The rule language's operator and combinator names, both spellings
//! (`_eq`/`$eq`, `_and`/`$and`), and what each compares against.

use grafton_schema::CompareOp;

/// What an operator compares against.
#[derive(Clone, Copy)]
pub(super) enum Operand {
    /// A value of the column's type.
    Same,
    /// A list of values of the column's type.
    List,
    /// A boolean (`_is_null`).
    Bool,
    /// A string (patterns, `_has_key`).
    Text,
    /// A list of strings (`_has_keys_any`, `_has_keys_all`).
    TextList,
    /// Any JSON value (`_contains`, `_contained_in`).
    Json,
}

/// An operator by either spelling: a comparison with a value, or with another column.
pub(super) enum Op {
    Value(CompareOp, Operand),
    Column(CompareOp),
    /// `_st_d_within` / `_st_3d_d_within`: `{distance, from, use_spheroid}`.
    DWithin(CompareOp),
    /// Raster's `_st_intersects_nband_geom` / `_geom_nband`: `{nband, geommin}`.
    Nband(CompareOp),
    Cast,
}

pub(super) fn operator(name: &str) -> Option<Op> {
    use CompareOp::*;
    let base = name.strip_prefix('_').or_else(|| name.strip_prefix('$'))?;
    Some(match base {
        "eq" => Op::Value(Eq, Operand::Same),
        "ne" | "neq" => Op::Value(Neq, Operand::Same),
        "gt" => Op::Value(Gt, Operand::Same),
        "gte" => Op::Value(Gte, Operand::Same),
        "lt" => Op::Value(Lt, Operand::Same),
        "lte" => Op::Value(Lte, Operand::Same),
        "in" => Op::Value(In, Operand::List),
        "nin" => Op::Value(Nin, Operand::List),
        "is_null" => Op::Value(IsNull, Operand::Bool),
        "like" => Op::Value(Like, Operand::Text),
        "nlike" => Op::Value(Nlike, Operand::Text),
        "ilike" => Op::Value(Ilike, Operand::Text),
        "nilike" => Op::Value(Nilike, Operand::Text),
        "similar" => Op::Value(Similar, Operand::Text),
        "nsimilar" => Op::Value(Nsimilar, Operand::Text),
        "regex" => Op::Value(Regex, Operand::Text),
        "iregex" => Op::Value(Iregex, Operand::Text),
        "nregex" => Op::Value(Nregex, Operand::Text),
        "niregex" => Op::Value(Niregex, Operand::Text),
        "contains" => Op::Value(Contains, Operand::Json),
        "contained_in" => Op::Value(ContainedIn, Operand::Json),
        "has_key" => Op::Value(HasKey, Operand::Text),
        "has_keys_any" => Op::Value(HasKeysAny, Operand::TextList),
        "has_keys_all" => Op::Value(HasKeysAll, Operand::TextList),
        "st_contains" => Op::Value(StContains, Operand::Same),
        "st_crosses" => Op::Value(StCrosses, Operand::Same),
        "st_equals" => Op::Value(StEquals, Operand::Same),
        "st_intersects" => Op::Value(StIntersects, Operand::Same),
        "st_overlaps" => Op::Value(StOverlaps, Operand::Same),
        "st_touches" => Op::Value(StTouches, Operand::Same),
        "st_within" => Op::Value(StWithin, Operand::Same),
        "st_3d_intersects" => Op::Value(St3dIntersects, Operand::Same),
        "st_d_within" => Op::DWithin(StDWithin),
        "st_3d_d_within" => Op::DWithin(St3dDWithin),
        "st_intersects_rast" => Op::Value(StIntersectsRast, Operand::Same),
        "st_intersects_nband_geom" => Op::Nband(StIntersectsNbandGeom),
        "st_intersects_geom_nband" => Op::Nband(StIntersectsGeomNband),
        "ancestor" => Op::Value(Ancestor, Operand::Same),
        "ancestor_any" => Op::Value(AncestorAny, Operand::List),
        "descendant" => Op::Value(Descendant, Operand::Same),
        "descendant_any" => Op::Value(DescendantAny, Operand::List),
        "matches" => Op::Value(Matches, Operand::Text),
        "matches_any" => Op::Value(MatchesAny, Operand::TextList),
        "matches_fulltext" => Op::Value(MatchesFulltext, Operand::Text),
        "ceq" => Op::Column(Eq),
        "cne" | "cneq" => Op::Column(Neq),
        "cgt" => Op::Column(Gt),
        "cgte" => Op::Column(Gte),
        "clt" => Op::Column(Lt),
        "clte" => Op::Column(Lte),
        "cast" => Op::Cast,
        _ => return None,
    })
}

pub(super) fn combinator(key: &str) -> Option<&str> {
    match key {
        "_and" | "$and" => Some("and"),
        "_or" | "$or" => Some("or"),
        "_not" | "$not" => Some("not"),
        "_exists" | "$exists" => Some("exists"),
        _ => None,
    }
}
