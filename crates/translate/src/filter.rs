//! `where` → SQL conditions, and the join conditions of relationships.

use crate::ctx::sql_type;
use crate::ctx::Ctx;
use grafton_catalog::{Column, ScalarKind};
use grafton_ir::{BoolExp, Value};
use grafton_schema::{CompareOp, RelId, SchemaModel, TableId};
use grafton_sql::{BinOp, Expr, From, JsonOp, Param, ParamValue, PatternOp, Select, SqlType};

/// A column as GraphQL sees it: one of a type Grafton does not map
/// ([`Column::unmapped`]) is read and compared as text.
pub(crate) fn column_value(model: &SchemaModel, col: &Column, alias: &str) -> Expr {
    let expr = Expr::column(alias, &col.name);
    if col.unmapped(model.backend) {
        Expr::Cast(Box::new(expr), SqlType::Builtin("text"))
    } else {
        expr
    }
}

impl Ctx<'_> {
    /// A column as GraphQL sees it (see [`column_value`]), cast where a `_cast`
    /// says.
    pub(crate) fn column_value(&self, table: TableId, alias: &str, column: usize) -> Expr {
        let value = column_value(self.model, &self.model.table(table).columns[column], alias);
        match &self.cast {
            Some((a, c, to)) if a == alias && *c == column => {
                Expr::Cast(Box::new(value), sql_type(self, to))
            }
            _ => value,
        }
    }

    /// The kind a column is compared as: its own, or a `_cast`'s.
    pub(crate) fn compared_kind(&self, table: TableId, alias: &str, column: usize) -> ScalarKind {
        match &self.cast {
            Some((a, c, to)) if a == alias && *c == column => to.clone(),
            _ => self.model.table(table).columns[column].scalar.clone(),
        }
    }

    /// `child.col = parent.col AND …` for a relationship from `parent_alias` to `child_alias`.
    pub(crate) fn join(&self, rel: RelId, parent_alias: &str, child_alias: &str) -> Expr {
        let r = &self.model.relationships[rel];
        let source = self.model.table(r.source);
        let target = self.model.table(r.target);
        Expr::And(
            r.mapping
                .iter()
                .map(|&(s, t)| Expr::Compare {
                    left: Box::new(Expr::column(child_alias, &target.columns[t].name)),
                    op: BinOp::Eq,
                    right: Box::new(Expr::column(parent_alias, &source.columns[s].name)),
                })
                .collect(),
        )
    }

    /// `FROM target AS alias` for a relationship, with a fresh alias.
    pub(crate) fn rel_from(&mut self, rel: RelId) -> (From, String) {
        let target = self.model.relationships[rel].target;
        self.table_from(target)
    }

    /// A boolean expression over `alias` (a row of `table`).
    pub(crate) fn filter(&mut self, table: TableId, alias: &str, exp: &BoolExp) -> Expr {
        self.filter_in(table, alias, exp, (table, alias))
    }

    /// [`filter`](Self::filter) inside an expression that started at `root` (the
    /// table and alias column comparisons with `root` refer to).
    pub(crate) fn filter_in(
        &mut self,
        table: TableId,
        alias: &str,
        exp: &BoolExp,
        root: (TableId, &str),
    ) -> Expr {
        match exp {
            BoolExp::And(items) => Expr::And(
                items
                    .iter()
                    .map(|e| self.filter_in(table, alias, e, root))
                    .collect(),
            ),
            BoolExp::Or(items) => Expr::Or(
                items
                    .iter()
                    .map(|e| self.filter_in(table, alias, e, root))
                    .collect(),
            ),
            BoolExp::Not(inner) => {
                self.negated = !self.negated;
                let e = self.filter_in(table, alias, inner, root);
                self.negated = !self.negated;
                Expr::Not(Box::new(e))
            }
            BoolExp::Compare { column, op, value } => {
                self.compare(table, alias, *column, *op, value)
            }
            BoolExp::CompareComputed { field, op, value } => {
                self.compare_computed(*field, alias, *op, value)
            }
            BoolExp::ExistsComputed(field, inner) => {
                self.exists_computed(*field, alias, inner, root)
            }
            BoolExp::DWithin(d) => self.d_within(table, alias, d),
            BoolExp::Nband(n) => self.nband(table, alias, n),
            BoolExp::Cast { column, to, inner } => {
                let was = (self.cast).replace((alias.to_owned(), *column, to.clone()));
                let e = self.filter_in(table, alias, inner, root);
                self.cast = was;
                e
            }
            BoolExp::Aggregate(p) => self.aggregate_predicate(alias, p, root),
            BoolExp::CompareText { column, op, value } => {
                let text = Expr::Cast(
                    Box::new(self.column_value(table, alias, *column)),
                    SqlType::Builtin("text"),
                );
                compare_with(text, SqlType::Builtin("text"), *op, value)
            }
            BoolExp::CompareColumns {
                column,
                op,
                other,
                root: from_root,
            } => {
                let (other_table, other_alias) = if *from_root { root } else { (table, alias) };
                let spatial = self.compared_kind(table, alias, *column).lacks_neq();
                let compare = |op| Expr::Compare {
                    left: Box::new(self.column_value(table, alias, *column)),
                    op,
                    right: Box::new(self.column_value(other_table, other_alias, *other)),
                };
                match *op {
                    // PostGIS has `=` but no `<>`.
                    CompareOp::Neq if spatial => Expr::Not(Box::new(compare(BinOp::Eq))),
                    op => compare(bin_op(op)),
                }
            }
            BoolExp::Exists(rel, inner) => {
                if let Some(e) = self.through_enforced_key(*rel, alias, inner) {
                    return e;
                }
                // Rows the role cannot read must not satisfy its filters either.
                let target = self.model.relationships[*rel].target;
                let (from, child, join) = self.related(*rel, alias);
                let cond = self.positive(|cx| cx.filter_in(target, &child, inner, root));
                Expr::Exists(Box::new(Select {
                    from: Some(from),
                    filter: Some(Expr::And(vec![join, cond])),
                    ..Select::default()
                }))
            }
            BoolExp::ExistsIn(other, inner) => {
                let (from, other_alias) = self.table_from(*other);
                let mut conditions = Vec::new();
                if let Some(rule) = self.row_rule(*other, &other_alias) {
                    conditions.push(rule);
                }
                conditions
                    .push(self.positive(|cx| cx.filter_in(*other, &other_alias, inner, root)));
                Expr::Exists(Box::new(Select {
                    from: Some(from),
                    filter: Some(Expr::And(conditions)),
                    ..Select::default()
                }))
            }
        }
    }

    /// `f` translated where only truth counts again (the condition inside an
    /// `EXISTS`, whatever encloses the `EXISTS`).
    fn positive(&mut self, f: impl FnOnce(&mut Self) -> Expr) -> Expr {
        let was = std::mem::replace(&mut self.negated, false);
        let e = f(self);
        self.negated = was;
        e
    }

    /// `EXISTS (SELECT FROM computed(row) AS t WHERE <t's read rule> AND inner)`. Out
    /// of line, as `compare_computed`.
    #[inline(never)]
    fn exists_computed(
        &mut self,
        field: grafton_schema::ComputedId,
        alias: &str,
        inner: &BoolExp,
        root: (TableId, &str),
    ) -> Expr {
        let Some((target, from, child, rule)) = self.computed_rows(field, alias) else {
            return Expr::Bool(false);
        };
        let mut conditions = Vec::new();
        conditions.extend(rule);
        conditions.push(self.positive(|cx| cx.filter_in(target, &child, inner, root)));
        Expr::Exists(Box::new(Select {
            from: Some(from),
            filter: Some(Expr::And(conditions)),
            ..Select::default()
        }))
    }

    /// The rows a set-returning computed field gives for the row `alias`: their
    /// table, `FROM f(row)`, its alias and the role's read rule on them.
    pub(crate) fn computed_rows(
        &mut self,
        field: grafton_schema::ComputedId,
        alias: &str,
    ) -> Option<(TableId, grafton_sql::From, String, Option<Expr>)> {
        let grafton_schema::ComputedReturns::Rows(target) = self.model.computed[field].returns
        else {
            return None;
        };
        let call = self.computed_call(field);
        let row = self.row_value(alias);
        let was = self.parent_row.replace(row);
        let (from, child, _) = self.source(target, None, Some(&call));
        self.parent_row = was;
        let rule = self.row_rule(target, &child);
        Some((target, from, child, rule))
    }

    /// `computed(row) op value`. Out of line: `filter_in` recurses once per nesting
    /// level of a `where`, so its frame stays small.
    #[inline(never)]
    fn compare_computed(
        &self,
        field: grafton_schema::ComputedId,
        alias: &str,
        op: CompareOp,
        value: &Value,
    ) -> Expr {
        let kind = match &self.model.computed[field].returns {
            grafton_schema::ComputedReturns::Scalar(kind) => kind.clone(),
            grafton_schema::ComputedReturns::Rows(_) => ScalarKind::Text,
        };
        let subject = self.computed_value(field, alias);
        if let Some(e) = self.extension_compare(&subject, &kind, op, value) {
            return e;
        }
        compare_with(subject, sql_type(self, &kind), op, value)
    }

    fn compare(
        &self,
        table: TableId,
        alias: &str,
        column: usize,
        op: CompareOp,
        value: &Value,
    ) -> Expr {
        let col = &self.model.table(table).columns[column];
        let subject = self.column_value(table, alias, column);
        let kind = self.compared_kind(table, alias, column);
        if let Some(e) = self.extension_compare(&subject, &kind, op, value) {
            return e;
        }
        // citext compares case-insensitively only against citext: a text parameter
        // would turn `=` into text equality, and a citext[] has no operators with
        // text[] at all.
        let ty = match col.db_type.as_str() {
            "citext" => SqlType::Builtin("citext"),
            "citext[]" => SqlType::Named {
                schema: self.model.catalog.extension_schema("citext[]"),
                name: "_citext".to_owned(),
            },
            _ => sql_type(self, &kind),
        };
        compare_with(subject, ty, op, value)
    }
}

/// `subject op value`, the value bound as `ty` (lists and patterns adjusted).
pub(crate) fn compare_with(subject: Expr, ty: SqlType, op: CompareOp, value: &Value) -> Expr {
    {
        let subject = Box::new(subject);
        let param = |ty: SqlType, list: bool| Param {
            value: value.clone(),
            ty,
            list,
        };
        let binop = |op: BinOp| Expr::Compare {
            left: subject.clone(),
            op,
            right: Box::new(Expr::Param(param(ty.clone(), false))),
        };
        let pattern = |op: PatternOp, negated: bool| Expr::Pattern {
            expr: subject.clone(),
            op,
            negated,
            pattern: Box::new(Expr::Param(param(SqlType::Builtin("text"), false))),
        };
        let json = |op: JsonOp, ty: &'static str, list: bool| Expr::JsonTest {
            expr: subject.clone(),
            op,
            operand: param(SqlType::Builtin(ty), list),
        };
        // An array column's `@>` and `<@` take an array of its own type.
        let array = matches!(&ty, SqlType::Named { name, .. } if name.starts_with('_'));
        let of_array = |op: JsonOp| Expr::JsonTest {
            expr: subject.clone(),
            op,
            operand: param(ty.clone(), false),
        };
        match op {
            CompareOp::Eq
            | CompareOp::Neq
            | CompareOp::Gt
            | CompareOp::Gte
            | CompareOp::Lt
            | CompareOp::Lte => binop(bin_op(op)),
            CompareOp::Contains if array => of_array(JsonOp::Contains),
            CompareOp::ContainedIn if array => of_array(JsonOp::ContainedIn),
            CompareOp::Contains => json(JsonOp::Contains, "jsonb", false),
            CompareOp::ContainedIn => json(JsonOp::ContainedIn, "jsonb", false),
            CompareOp::HasKey => json(JsonOp::HasKey, "text", false),
            CompareOp::HasKeysAny => json(JsonOp::HasKeysAny, "text", true),
            CompareOp::HasKeysAll => json(JsonOp::HasKeysAll, "text", true),
            CompareOp::In | CompareOp::Nin => Expr::InList {
                expr: subject.clone(),
                list: param(ty.clone(), true),
                negated: op == CompareOp::Nin,
            },
            CompareOp::IsNull => match value {
                ParamValue::Literal(serde_json::Value::Bool(b)) => Expr::IsNull {
                    expr: subject.clone(),
                    negated: !b,
                },
                ParamValue::Literal(_) => Expr::Bool(true),
                ParamValue::Variable(_) => Expr::IsNullParam {
                    expr: subject.clone(),
                    param: param(SqlType::Builtin("bool"), false),
                },
            },
            CompareOp::Like => pattern(PatternOp::Like, false),
            CompareOp::Nlike => pattern(PatternOp::Like, true),
            CompareOp::Ilike => pattern(PatternOp::ILike, false),
            CompareOp::Nilike => pattern(PatternOp::ILike, true),
            CompareOp::Similar => pattern(PatternOp::Similar, false),
            CompareOp::Nsimilar => pattern(PatternOp::Similar, true),
            CompareOp::Regex => pattern(PatternOp::Regex, false),
            CompareOp::Nregex => pattern(PatternOp::Regex, true),
            CompareOp::Iregex => pattern(PatternOp::IRegex, false),
            CompareOp::Niregex => pattern(PatternOp::IRegex, true),
            // Extension types' operators (`Ctx::extension_compare`); a computed
            // field of such a type is not offered them.
            _ => Expr::Bool(false),
        }
    }
}

/// The SQL operator of an equality or ordering comparison (`=` for any other).
fn bin_op(op: CompareOp) -> BinOp {
    match op {
        CompareOp::Neq => BinOp::Neq,
        CompareOp::Gt => BinOp::Gt,
        CompareOp::Gte => BinOp::Gte,
        CompareOp::Lt => BinOp::Lt,
        CompareOp::Lte => BinOp::Lte,
        _ => BinOp::Eq,
    }
}
