//! Boolean expressions (`where`, and the rule language's conditions).

use super::Builder;
use crate::input::Input;
use crate::types::*;
use crate::IrError;
use grafton_schema::{CompareOp, InputKind, TableField, TableId};

impl<'a> Builder<'a> {
    pub(crate) fn bool_exp(
        &mut self,
        table: TableId,
        value: Input<'a>,
    ) -> Result<BoolExp, IrError> {
        let model = self.model;
        let [and, or, not] = &model.combinators;
        let mut all = Vec::new();
        for (key, v) in self.vars.object(value) {
            if key == and || key == or {
                let mut items = Vec::new();
                for item in self.vars.list(v) {
                    items.push(self.bool_exp(table, item)?);
                }
                // A null `_and`/`_or` is absent, not an empty (and for `_or`, false) list.
                if self.vars.deref(v).is_none() {
                    continue;
                }
                all.push(if key == and {
                    BoolExp::And(items)
                } else {
                    BoolExp::Or(items)
                });
                continue;
            }
            if key == not {
                if self.vars.deref(v).is_some() {
                    all.push(BoolExp::Not(Box::new(self.bool_exp(table, v)?)));
                }
                continue;
            }
            let info = &model.tables[table];
            match info.fields.get(key) {
                Some(TableField::Column(c)) => self.column_ops(table, *c, None, v, &mut all)?,
                Some(TableField::Computed(id)) if model.computed[*id].args.is_empty() => {
                    match model.computed[*id].returns {
                        grafton_schema::ComputedReturns::Scalar(_) => {
                            self.compare_computed(*id, v, &mut all)?
                        }
                        grafton_schema::ComputedReturns::Rows(target) => {
                            if self.vars.deref(v).is_some() {
                                let inner = self.bool_exp(target, v)?;
                                all.push(BoolExp::ExistsComputed(*id, Box::new(inner)));
                            }
                        }
                    }
                }
                Some(TableField::ArrayAggregate(r)) => {
                    self.aggregate_predicates(*r, v, &mut all)?
                }
                Some(TableField::Object(r)) | Some(TableField::Array(r)) => {
                    if self.vars.deref(v).is_some() {
                        let target = model.relationships[*r].target;
                        let inner = self.bool_exp(target, v)?;
                        all.push(BoolExp::Exists(*r, Box::new(inner)));
                    }
                }
                _ => {
                    return Err(IrError::Validation(format!(
                        "field '{key}' not found in type: '{}'",
                        model
                            .input_types
                            .iter()
                            .find(|(_, k)| **k == InputKind::BoolExp(table))
                            .map(|(n, _)| n.as_str())
                            .unwrap_or("bool_exp")
                    )))
                }
            }
        }
        Ok(match all.len() {
            1 => all.pop().unwrap_or(BoolExp::And(Vec::new())),
            _ => BoolExp::And(all),
        })
    }

    /// A column's `{op: value, …}`, into `all`.
    #[inline(never)]
    fn column_ops(
        &mut self,
        table: TableId,
        column: usize,
        cast: Option<&grafton_catalog::ScalarKind>,
        v: Input<'a>,
        all: &mut Vec<BoolExp>,
    ) -> Result<(), IrError> {
        let model = self.model;
        let kind = cast.unwrap_or(&model.table(table).columns[column].scalar);
        for (op_name, operand) in self.vars.object(v) {
            if op_name == model.cast_op {
                // `_cast: {geography: {…}}` on geometry (and back): the column
                // cast, compared as the other type.
                if let Some(to) = kind.spatial_counterpart() {
                    for (_, inner) in self.vars.object(operand) {
                        let mut cast = Vec::new();
                        self.column_ops(table, column, Some(&to), inner, &mut cast)?;
                        all.push(BoolExp::Cast {
                            column,
                            to: to.clone(),
                            inner: Box::new(BoolExp::And(cast)),
                        });
                    }
                    continue;
                }
                // `_cast: {String: {…}}`: the column compared as text.
                for (_, inner) in self.vars.object(operand) {
                    for (name, value) in self.vars.object(inner) {
                        let op = *model.ops.get(name).ok_or_else(|| {
                            IrError::Validation(format!("unknown operator '{name}'"))
                        })?;
                        if let Some(value) = self.vars.leaf(value) {
                            all.push(BoolExp::CompareText { column, op, value });
                        }
                    }
                }
                continue;
            }
            let op = *model
                .ops
                .get(op_name)
                .ok_or_else(|| IrError::Validation(format!("unknown operator '{op_name}'")))?;
            if matches!(op, CompareOp::StDWithin | CompareOp::St3dDWithin) {
                if let Some(d) = self.d_within(column, op, operand) {
                    all.push(BoolExp::DWithin(Box::new(d)));
                }
                continue;
            }
            if matches!(
                op,
                CompareOp::StIntersectsNbandGeom | CompareOp::StIntersectsGeomNband
            ) {
                if let Some(n) = self.nband(column, op, operand) {
                    all.push(BoolExp::Nband(Box::new(n)));
                }
                continue;
            }
            if let Some(value) = self.vars.leaf(operand) {
                all.push(BoolExp::Compare { column, op, value });
            }
        }
        Ok(())
    }

    /// `_st_intersects_nband_geom: {nband, geommin}` and its twin: each field a
    /// value or a variable of its own (`None`: the operand is null).
    fn nband(&mut self, column: usize, op: CompareOp, v: Input<'a>) -> Option<Nband> {
        let (mut nband, mut geommin) = (None, None);
        for (name, field) in self.vars.object(v) {
            match name {
                "nband" => nband = self.vars.leaf(field),
                "geommin" => geommin = self.vars.leaf(field),
                _ => {}
            }
        }
        Some(Nband {
            column,
            geom_first: op == CompareOp::StIntersectsGeomNband,
            nband,
            // Validation has required it; a variable left out is null.
            geommin: geommin.unwrap_or(Value::Literal(serde_json::Value::Null)),
        })
        .filter(|_| self.vars.deref(v).is_some())
    }

    /// `_st_d_within: {distance, from, use_spheroid}`: each field a value or a
    /// variable of its own (`None`: the operand is null, so no condition).
    fn d_within(&mut self, column: usize, op: CompareOp, v: Input<'a>) -> Option<DWithin> {
        let (mut from, mut distance, mut use_spheroid) = (None, None, None);
        for (name, field) in self.vars.object(v) {
            match name {
                "from" => from = self.vars.leaf(field),
                "distance" => distance = self.vars.leaf(field),
                "use_spheroid" | "useSpheroid" => use_spheroid = self.vars.leaf(field),
                _ => {}
            }
        }
        Some(DWithin {
            column,
            three_d: op == CompareOp::St3dDWithin,
            // Validation has required both; a variable left out is null.
            from: from.unwrap_or(Value::Literal(serde_json::Value::Null)),
            distance: distance.unwrap_or(Value::Literal(serde_json::Value::Null)),
            use_spheroid,
        })
        .filter(|_| self.vars.deref(v).is_some())
    }

    /// `computed_field: {op: value, …}`. Out of line: `bool_exp` recurses once per
    /// nesting level of a `where`, so its frame stays small.
    #[inline(never)]
    fn compare_computed(
        &mut self,
        field: grafton_schema::ComputedId,
        v: Input<'a>,
        all: &mut Vec<BoolExp>,
    ) -> Result<(), IrError> {
        for (op_name, operand) in self.vars.object(v) {
            let op = *self
                .model
                .ops
                .get(op_name)
                .ok_or_else(|| IrError::Validation(format!("unknown operator '{op_name}'")))?;
            if matches!(
                op,
                CompareOp::StDWithin
                    | CompareOp::St3dDWithin
                    | CompareOp::StIntersectsNbandGeom
                    | CompareOp::StIntersectsGeomNband
            ) {
                return Err(IrError::Validation(format!(
                    "'{op_name}' is not offered on a computed field"
                )));
            }
            if let Some(value) = self.vars.leaf(operand) {
                all.push(BoolExp::CompareComputed { field, op, value });
            }
        }
        Ok(())
    }
}
