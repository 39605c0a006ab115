//! The operands of PostGIS's operators that take more than one value.

use super::Value;

/// The operands of `_st_d_within` and `_st_3d_d_within`.
#[derive(Debug, Clone, PartialEq)]
pub struct DWithin {
    /// The geometry or geography column.
    pub column: usize,
    /// `_st_3d_d_within` (geometry only).
    pub three_d: bool,
    /// The shape distances are measured from (GeoJSON).
    pub from: Value,
    /// The distance: in the column's units for geometry, metres for geography.
    pub distance: Value,
    /// Geography's `use_spheroid` when given (PostGIS's default, true, otherwise).
    pub use_spheroid: Option<Value>,
}

/// The operands of raster's `_st_intersects_nband_geom` (`ST_Intersects(column,
/// nband, geommin)`) and `_st_intersects_geom_nband` (`ST_Intersects(column,
/// geommin, nband)`, the band optional).
#[derive(Debug, Clone, PartialEq)]
pub struct Nband {
    /// The raster column.
    pub column: usize,
    /// `_st_intersects_geom_nband`: the geometry before the band.
    pub geom_first: bool,
    /// The band number (PostGIS's default, every band, when omitted).
    pub nband: Option<Value>,
    /// The geometry (GeoJSON).
    pub geommin: Value,
}
