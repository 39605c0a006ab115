//! The operators of PostgreSQL extensions' types: PostGIS's `_st_*` (function
//! calls in PostGIS's schema, GeoJSON operands) and ltree's (`@>`, `<@`, `~`, `?`,
//! `@` with operands of ltree's own query types).

use crate::ctx::{extension_schema, extension_type, sql_type, Ctx};
use grafton_catalog::ScalarKind;
use grafton_ir::{DWithin, Nband, Value};
use grafton_schema::{CompareOp, TableId};
use grafton_sql::{BinOp, Expr, Param, SqlType};

impl Ctx<'_> {
    /// `subject op value` for an operator only an extension type has; `None` for
    /// the operators every type shares.
    pub(crate) fn extension_compare(
        &self,
        subject: &Expr,
        kind: &ScalarKind,
        op: CompareOp,
        value: &Value,
    ) -> Option<Expr> {
        let ty = sql_type(self, kind);
        let param = |ty: SqlType, list: bool| {
            Box::new(Expr::Param(Param {
                value: value.clone(),
                ty,
                list,
            }))
        };
        let st = |name: &str| {
            let SqlType::Spatial { schema, .. } = &ty else {
                return Expr::Bool(false);
            };
            Expr::Func {
                schema: schema.clone(),
                name: name.to_owned(),
                args: vec![(None, subject.clone()), (None, *param(ty.clone(), false))],
            }
        };
        let ltree = |op: BinOp, right: Box<Expr>| Expr::Compare {
            left: Box::new(subject.clone()),
            op,
            right,
        };
        let query = |name: &str| extension_type(self, "ltree", name);
        let spatial = kind.lacks_neq();
        Some(match op {
            // PostGIS has `=` but no `<>` (on rasters too).
            CompareOp::Neq if spatial => Expr::Not(Box::new(Expr::Compare {
                left: Box::new(subject.clone()),
                op: BinOp::Eq,
                right: param(ty.clone(), false),
            })),
            CompareOp::Nin if spatial => Expr::Not(Box::new(Expr::InList {
                expr: Box::new(subject.clone()),
                list: Param {
                    value: value.clone(),
                    ty: ty.clone(),
                    list: true,
                },
                negated: false,
            })),
            CompareOp::StContains => st("st_contains"),
            CompareOp::StCrosses => st("st_crosses"),
            CompareOp::StEquals => st("st_equals"),
            CompareOp::StIntersects => st("st_intersects"),
            CompareOp::StOverlaps => st("st_overlaps"),
            CompareOp::StTouches => st("st_touches"),
            CompareOp::StWithin => st("st_within"),
            CompareOp::St3dIntersects => st("st_3dintersects"),
            CompareOp::StIntersectsRast => Expr::Func {
                schema: extension_schema(self, "raster"),
                name: "st_intersects".to_owned(),
                args: vec![(None, subject.clone()), (None, *param(ty.clone(), false))],
            },
            CompareOp::Ancestor => ltree(BinOp::Contains, param(ty.clone(), false)),
            CompareOp::AncestorAny => ltree(BinOp::Contains, param(ty.clone(), true)),
            CompareOp::Descendant => ltree(BinOp::ContainedIn, param(ty.clone(), false)),
            CompareOp::DescendantAny => ltree(BinOp::ContainedIn, param(ty.clone(), true)),
            CompareOp::Matches => ltree(BinOp::Matches, param(query("lquery"), false)),
            CompareOp::MatchesAny => ltree(BinOp::MatchesAny, param(query("lquery"), true)),
            CompareOp::MatchesFulltext => {
                ltree(BinOp::MatchesText, param(query("ltxtquery"), false))
            }
            _ => return None,
        })
    }

    /// `ST_DWithin(column, from, distance[, use_spheroid])`, or `ST_3DDWithin`.
    pub(crate) fn d_within(&self, table: TableId, alias: &str, d: &DWithin) -> Expr {
        let kind = self.compared_kind(table, alias, d.column);
        let ty = sql_type(self, &kind);
        let SqlType::Spatial { schema, geography } = &ty else {
            return Expr::Bool(false);
        };
        let param = |value: &Value, ty: SqlType| {
            Expr::Param(Param {
                value: value.clone(),
                ty,
                list: false,
            })
        };
        let mut args = vec![
            (None, self.column_value(table, alias, d.column)),
            (None, param(&d.from, ty.clone())),
            (None, param(&d.distance, SqlType::Builtin("float8"))),
        ];
        if *geography {
            if let Some(spheroid) = &d.use_spheroid {
                args.push((None, param(spheroid, SqlType::Builtin("bool"))));
            }
        }
        Expr::Func {
            schema: schema.clone(),
            name: if d.three_d {
                "st_3ddwithin"
            } else {
                "st_dwithin"
            }
            .to_owned(),
            args,
        }
    }

    /// `ST_Intersects(raster, nband, geommin)` (`_st_intersects_nband_geom`) or
    /// `ST_Intersects(raster, geommin[, nband])` (`_st_intersects_geom_nband`).
    pub(crate) fn nband(&self, table: TableId, alias: &str, n: &Nband) -> Expr {
        let param = |value: &Value, ty: SqlType| {
            Expr::Param(Param {
                value: value.clone(),
                ty,
                list: false,
            })
        };
        let geometry = SqlType::Spatial {
            schema: extension_schema(self, "geometry"),
            geography: false,
        };
        let geommin = (None, param(&n.geommin, geometry));
        let band = (n.nband.as_ref()).map(|b| (None, param(b, SqlType::Builtin("int4"))));
        let mut args = vec![(None, self.column_value(table, alias, n.column))];
        if n.geom_first {
            args.push(geommin);
            args.extend(band);
        } else {
            args.extend(band);
            args.push(geommin);
        }
        Expr::Func {
            schema: extension_schema(self, "raster"),
            name: "st_intersects".to_owned(),
            args,
        }
    }
}
