//! The closed set of comparison operators, with Hasura's spelling of each.

use serde::Serialize;

/// Comparison operators of `<Type>_comparison_exp`. Closed: each renders to one SQL shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum CompareOp {
    /// `_eq`
    Eq,
    /// `_neq`
    Neq,
    /// `_gt`
    Gt,
    /// `_gte`
    Gte,
    /// `_lt`
    Lt,
    /// `_lte`
    Lte,
    /// `_in`
    In,
    /// `_nin`
    Nin,
    /// `_is_null`
    IsNull,
    /// `_like`
    Like,
    /// `_nlike`
    Nlike,
    /// `_ilike`
    Ilike,
    /// `_nilike`
    Nilike,
    /// `_similar`
    Similar,
    /// `_nsimilar`
    Nsimilar,
    /// `_regex`
    Regex,
    /// `_iregex`
    Iregex,
    /// `_nregex`
    Nregex,
    /// `_niregex`
    Niregex,
    /// `_contains` (jsonb: the column contains the operand, `@>`)
    Contains,
    /// `_contained_in` (jsonb: the operand contains the column, `<@`)
    ContainedIn,
    /// `_has_key` (jsonb: a top-level key or string element exists, `?`)
    HasKey,
    /// `_has_keys_any` (jsonb: any of these keys exists, `?|`)
    HasKeysAny,
    /// `_has_keys_all` (jsonb: all of these keys exist, `?&`)
    HasKeysAll,
    /// `_st_contains` (PostGIS `ST_Contains(column, value)`)
    StContains,
    /// `_st_crosses`
    StCrosses,
    /// `_st_equals`
    StEquals,
    /// `_st_intersects`
    StIntersects,
    /// `_st_overlaps`
    StOverlaps,
    /// `_st_touches`
    StTouches,
    /// `_st_within`
    StWithin,
    /// `_st_3d_intersects`
    St3dIntersects,
    /// `_st_d_within` (`ST_DWithin(column, from, distance[, use_spheroid])`)
    StDWithin,
    /// `_st_3d_d_within` (`ST_3DDWithin(column, from, distance)`)
    St3dDWithin,
    /// `_st_intersects_rast` (raster: `ST_Intersects(column, raster)`)
    StIntersectsRast,
    /// `_st_intersects_nband_geom` (raster: `ST_Intersects(column, nband, geommin)`)
    StIntersectsNbandGeom,
    /// `_st_intersects_geom_nband` (raster: `ST_Intersects(column, geommin, nband)`)
    StIntersectsGeomNband,
    /// `_ancestor` (ltree: the column is an ancestor of the value, `@>`)
    Ancestor,
    /// `_ancestor_any` (ltree: of any of the values)
    AncestorAny,
    /// `_descendant` (ltree: the column is a descendant of the value, `<@`)
    Descendant,
    /// `_descendant_any` (ltree: of any of the values)
    DescendantAny,
    /// `_matches` (ltree: matches an lquery, `~`)
    Matches,
    /// `_matches_any` (ltree: matches any of these lqueries, `?`)
    MatchesAny,
    /// `_matches_fulltext` (ltree: matches an ltxtquery, `@`)
    MatchesFulltext,
}

impl CompareOp {
    /// Every operator.
    pub const ALL: [CompareOp; 44] = {
        use CompareOp::*;
        [
            Eq,
            Neq,
            Gt,
            Gte,
            Lt,
            Lte,
            In,
            Nin,
            IsNull,
            Like,
            Nlike,
            Ilike,
            Nilike,
            Similar,
            Nsimilar,
            Regex,
            Iregex,
            Nregex,
            Niregex,
            Contains,
            ContainedIn,
            HasKey,
            HasKeysAny,
            HasKeysAll,
            StContains,
            StCrosses,
            StEquals,
            StIntersects,
            StOverlaps,
            StTouches,
            StWithin,
            St3dIntersects,
            StDWithin,
            St3dDWithin,
            StIntersectsRast,
            StIntersectsNbandGeom,
            StIntersectsGeomNband,
            Ancestor,
            AncestorAny,
            Descendant,
            DescendantAny,
            Matches,
            MatchesAny,
            MatchesFulltext,
        ]
    };

    /// Hasura's spelling, before any case rule.
    pub fn hasura_name(self) -> &'static str {
        match self {
            Self::Eq => "_eq",
            Self::Neq => "_neq",
            Self::Gt => "_gt",
            Self::Gte => "_gte",
            Self::Lt => "_lt",
            Self::Lte => "_lte",
            Self::In => "_in",
            Self::Nin => "_nin",
            Self::IsNull => "_is_null",
            Self::Like => "_like",
            Self::Nlike => "_nlike",
            Self::Ilike => "_ilike",
            Self::Nilike => "_nilike",
            Self::Similar => "_similar",
            Self::Nsimilar => "_nsimilar",
            Self::Regex => "_regex",
            Self::Iregex => "_iregex",
            Self::Nregex => "_nregex",
            Self::Niregex => "_niregex",
            Self::Contains => "_contains",
            Self::ContainedIn => "_contained_in",
            Self::HasKey => "_has_key",
            Self::HasKeysAny => "_has_keys_any",
            Self::HasKeysAll => "_has_keys_all",
            Self::StContains => "_st_contains",
            Self::StCrosses => "_st_crosses",
            Self::StEquals => "_st_equals",
            Self::StIntersects => "_st_intersects",
            Self::StOverlaps => "_st_overlaps",
            Self::StTouches => "_st_touches",
            Self::StWithin => "_st_within",
            Self::St3dIntersects => "_st_3d_intersects",
            Self::StDWithin => "_st_d_within",
            Self::St3dDWithin => "_st_3d_d_within",
            Self::StIntersectsRast => "_st_intersects_rast",
            Self::StIntersectsNbandGeom => "_st_intersects_nband_geom",
            Self::StIntersectsGeomNband => "_st_intersects_geom_nband",
            Self::Ancestor => "_ancestor",
            Self::AncestorAny => "_ancestor_any",
            Self::Descendant => "_descendant",
            Self::DescendantAny => "_descendant_any",
            Self::Matches => "_matches",
            Self::MatchesAny => "_matches_any",
            Self::MatchesFulltext => "_matches_fulltext",
        }
    }
}
