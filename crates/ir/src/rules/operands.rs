//! The operands of rule operators: session variables (bound per request) and
//! literals checked against the column's type, and `_cast`'s text comparisons.

use super::{operator, Op, Operand, Result, RuleReader};
use crate::permissions::{is_session_var, session_array_var, session_var};
use crate::types::BoolExp;
use grafton_catalog::ScalarKind;
use grafton_schema::{CompareOp, TableId};
use grafton_sql::ParamValue;
use serde_json::Value as Json;

impl RuleReader<'_> {
    /// `_cast: {String: {…}}` on a jsonb column: comparisons of its text form.
    pub(super) fn cast(
        &mut self,
        table: TableId,
        column: usize,
        operand: &Json,
        path: &str,
    ) -> Result<BoolExp> {
        let model = self.model;
        let col = &model.table(table).columns[column];
        if col.scalar.is_spatial() {
            return self.spatial_cast(table, column, operand, path);
        }
        if col.scalar != ScalarKind::Jsonb {
            return Err(format!(
                "{path}: _cast applies to jsonb columns, not '{}' of type {}",
                col.name, col.db_type
            ));
        }
        let Json::Object(targets) = operand else {
            return Err(format!("{path}: expected {{String: {{…}}}}"));
        };
        let mut all = Vec::new();
        for (target, ops) in targets {
            let here = format!("{path}.{target}");
            if target != "String" {
                return Err(format!("{here}: jsonb can only be cast to String"));
            }
            let Json::Object(ops) = ops else {
                return Err(format!("{here}: expected an object of operators"));
            };
            for (name, value) in ops {
                let at = format!("{here}.{name}");
                let op = match operator(name) {
                    Some(Op::Value(op, expects))
                        if grafton_schema::ops_for(&ScalarKind::Text, model.backend)
                            .contains(&op) =>
                    {
                        (op, expects)
                    }
                    _ => return Err(format!("{at}: not an operator of String")),
                };
                let value = self.text_value(value, op.1, &at)?;
                all.push(BoolExp::CompareText {
                    column,
                    op: op.0,
                    value,
                });
            }
        }
        Ok(BoolExp::And(all))
    }

    /// `_cast: {geography: {…}}` on a geometry column (and back): the comparisons
    /// of the cast column.
    fn spatial_cast(
        &mut self,
        table: TableId,
        column: usize,
        operand: &Json,
        path: &str,
    ) -> Result<BoolExp> {
        let model = self.model;
        let column_kind = &model.table(table).columns[column].scalar;
        let to = column_kind
            .spatial_counterpart()
            .unwrap_or(ScalarKind::Geometry);
        let name = to.extension_type().unwrap_or("geometry");
        let Json::Object(targets) = operand else {
            return Err(format!("{path}: expected {{{name}: {{…}}}}"));
        };
        let mut all = Vec::new();
        for (target, ops) in targets {
            let here = format!("{path}.{target}");
            if target != name {
                return Err(format!("{here}: this column can only be cast to {name}"));
            }
            let Json::Object(ops) = ops else {
                return Err(format!("{here}: expected an object of operators"));
            };
            let mut inner = Vec::with_capacity(ops.len());
            for (op_name, value) in ops {
                let at = format!("{here}.{op_name}");
                // The cast column's operators, its values of the cast type.
                let offered = |op| grafton_schema::ops_for(&to, model.backend).contains(&op);
                inner.push(match operator(op_name) {
                    Some(Op::Value(op, expects)) if offered(op) => BoolExp::Compare {
                        column,
                        op,
                        value: self.value_of(&to, name, value, expects, &at)?,
                    },
                    Some(Op::DWithin(op)) if offered(op) => {
                        self.d_within_as(&to, column, op, value, &at)?
                    }
                    _ => return Err(format!("{at}: not an operator of {name}")),
                });
            }
            all.push(BoolExp::Cast {
                column,
                to: to.clone(),
                inner: Box::new(BoolExp::And(inner)),
            });
        }
        Ok(BoolExp::And(all))
    }

    /// `_st_d_within: {distance, from, use_spheroid}`: each a literal or a session
    /// variable (a GeoJSON shape in `from`'s).
    pub(super) fn d_within(
        &mut self,
        table: TableId,
        column: usize,
        op: CompareOp,
        operand: &Json,
        path: &str,
    ) -> Result<BoolExp> {
        let kind = self.model.table(table).columns[column].scalar.clone();
        self.d_within_as(&kind, column, op, operand, path)
    }

    /// [`d_within`](Self::d_within) on the column compared as `kind` (its own
    /// type, or a `_cast`'s).
    fn d_within_as(
        &mut self,
        kind: &ScalarKind,
        column: usize,
        op: CompareOp,
        operand: &Json,
        path: &str,
    ) -> Result<BoolExp> {
        let Json::Object(fields) = operand else {
            return Err(format!("{path}: expected {{distance, from}}"));
        };
        let geography = *kind == ScalarKind::Geography;
        if let Some(extra) = fields.keys().find(|k| {
            !(matches!(k.as_str(), "distance" | "from") || geography && *k == "use_spheroid")
        }) {
            return Err(format!("{path}: unexpected key '{extra}'"));
        }
        let part = |name: &str| {
            fields
                .get(name)
                .ok_or_else(|| format!("{path}: missing '{name}'"))
        };
        let from = self.value_of(kind, "a GeoJSON shape", part("from")?, Operand::Same, path)?;
        let distance = self.value_of(
            &ScalarKind::Float,
            "float8",
            part("distance")?,
            Operand::Same,
            path,
        )?;
        let use_spheroid = match fields.get("use_spheroid") {
            Some(v) => {
                Some(self.value_of(&ScalarKind::Boolean, "boolean", v, Operand::Same, path)?)
            }
            None => None,
        };
        Ok(BoolExp::DWithin(Box::new(crate::types::DWithin {
            column,
            three_d: op == CompareOp::St3dDWithin,
            from,
            distance,
            use_spheroid,
        })))
    }

    /// Raster's `_st_intersects_nband_geom: {nband, geommin}` (and `_geom_nband`,
    /// whose band is optional): each a literal or a session variable.
    pub(super) fn nband(
        &mut self,
        column: usize,
        op: CompareOp,
        operand: &Json,
        path: &str,
    ) -> Result<BoolExp> {
        let Json::Object(fields) = operand else {
            return Err(format!("{path}: expected {{nband, geommin}}"));
        };
        if let Some(extra) = (fields.keys()).find(|k| !matches!(k.as_str(), "nband" | "geommin")) {
            return Err(format!("{path}: unexpected key '{extra}'"));
        }
        let geom_first = op == CompareOp::StIntersectsGeomNband;
        let nband = match fields.get("nband") {
            // Optional in `_geom_nband`: null is PostGIS's default, every band.
            Some(Json::Null) | None if geom_first => None,
            Some(v) => Some(self.value_of(&ScalarKind::Int, "integer", v, Operand::Same, path)?),
            None => return Err(format!("{path}: missing 'nband'")),
        };
        let geommin =
            (fields.get("geommin")).ok_or_else(|| format!("{path}: missing 'geommin'"))?;
        let geommin = self.value_of(
            &ScalarKind::Geometry,
            "a GeoJSON shape",
            geommin,
            Operand::Same,
            path,
        )?;
        Ok(BoolExp::Nband(Box::new(crate::types::Nband {
            column,
            geom_first,
            nband,
            geommin,
        })))
    }

    /// An operand of a comparison on text: a session variable or string literals.
    fn text_value(&mut self, json: &Json, expects: Operand, path: &str) -> Result<ParamValue> {
        if let Some(v) = self.session_value(json, expects) {
            return Ok(v);
        }
        let ok = match (expects, json) {
            (Operand::List, Json::Array(items)) => items.iter().all(Json::is_string),
            (Operand::Bool, v) => v.is_boolean(),
            (Operand::List, _) => false,
            (_, v) => v.is_string(),
        };
        if !ok {
            return Err(format!(
                "{path}: expected a string or a session variable, not {json}"
            ));
        }
        Ok(ParamValue::Literal(json.clone()))
    }

    /// A session variable operand, bound per request (a list use binds `name[]`).
    fn session_value(&mut self, json: &Json, expects: Operand) -> Option<ParamValue> {
        let Json::String(s) = json else {
            return None;
        };
        if !is_session_var(s) {
            return None;
        }
        let name = if matches!(expects, Operand::List | Operand::TextList) {
            session_array_var(s)
        } else {
            session_var(s)
        };
        self.session.insert(name.clone());
        Some(ParamValue::Variable(name))
    }

    /// An operand: a session variable (bound per request) or a literal whose JSON
    /// type fits what the operator expects.
    pub(super) fn value(
        &mut self,
        table: TableId,
        column: usize,
        json: &Json,
        expects: Operand,
        path: &str,
    ) -> Result<ParamValue> {
        let col = &self.model.table(table).columns[column];
        self.value_of(&col.scalar, &col.db_type, json, expects, path)
    }

    /// [`value`](Self::value) for a value of `kind` (database type `db_type`).
    pub(super) fn value_of(
        &mut self,
        kind: &ScalarKind,
        db_type: &str,
        json: &Json,
        expects: Operand,
        path: &str,
    ) -> Result<ParamValue> {
        if let Some(v) = self.session_value(json, expects) {
            return Ok(v);
        }
        let ok = match (expects, json) {
            (_, Json::Null) => false,
            (Operand::Same, v) => fits(v, kind),
            (Operand::List, Json::Array(items)) => items.iter().all(|v| fits(v, kind)),
            (Operand::Bool, v) => v.is_boolean(),
            (Operand::Text, v) => v.is_string(),
            (Operand::TextList, Json::Array(items)) => items.iter().all(Json::is_string),
            (Operand::Json, _) => true,
            (Operand::List | Operand::TextList, _) => false,
        };
        if !ok {
            let wanted = match expects {
                Operand::Same => format!("a value of type {db_type}"),
                Operand::List => format!("a list of values of type {db_type}"),
                Operand::Bool => "a boolean".to_owned(),
                Operand::Text => "a string".to_owned(),
                Operand::TextList => "a list of strings".to_owned(),
                Operand::Json => "a JSON value".to_owned(),
            };
            return Err(format!(
                "{path}: expected {wanted} or a session variable, not {json}"
            ));
        }
        Ok(ParamValue::Literal(json.clone()))
    }
}

/// Whether a literal can be a value of a column of `kind` (strings are accepted for
/// every kind the database parses from text; it still checks them on use).
fn fits(v: &Json, kind: &ScalarKind) -> bool {
    match kind {
        ScalarKind::Json | ScalarKind::Jsonb => !v.is_null(),
        // GeoJSON: an object, or its text.
        ScalarKind::Geometry | ScalarKind::Geography => v.is_object() || v.is_string(),
        // A list, or a PostgreSQL array literal.
        ScalarKind::Array(_) => v.is_array() || v.is_string(),
        ScalarKind::Boolean => v.is_boolean(),
        ScalarKind::Int | ScalarKind::BigInt => {
            v.as_i64().is_some() || v.as_str().is_some_and(|s| s.trim().parse::<i64>().is_ok())
        }
        ScalarKind::Float | ScalarKind::Numeric => {
            v.is_number() || v.as_str().is_some_and(|s| s.trim().parse::<f64>().is_ok())
        }
        _ => v.is_string(),
    }
}
