//! `where` → SQL conditions, and the join conditions of relationships.

use crate::select::Ctx;
use grafton_catalog::{Backend, Column, ScalarKind};
use grafton_ir::{BoolExp, Value};
use grafton_schema::{CompareOp, RelId, TableId};
use grafton_sql::{BinOp, Expr, From, Param, ParamValue, PatternOp, Select, SqlType};

/// A column as GraphQL sees it. On Postgres a column of a type Grafton does not map
/// (tsvector, arrays…) is exposed as `String`, so it is read and compared as text.
/// An empty `alias` leaves the column unqualified (a `RETURNING` clause).
pub(crate) fn column_value(backend: Backend, col: &Column, alias: &str) -> Expr {
    let expr = if alias.is_empty() {
        Expr::Bare(col.name.clone())
    } else {
        Expr::column(alias, &col.name)
    };
    let unmapped = backend == Backend::Postgres
        && col.scalar == ScalarKind::Text
        && !matches!(
            col.db_type.as_str(),
            "text" | "varchar" | "bpchar" | "name" | "citext"
        );
    if unmapped {
        Expr::Cast(Box::new(expr), SqlType::Builtin("text"))
    } else {
        expr
    }
}

/// The bind type of a column kind (a cast on Postgres).
pub(crate) fn sql_type(ctx: &Ctx, kind: &ScalarKind) -> SqlType {
    match (kind.postgres_type(), kind) {
        (Some(name), _) => SqlType::Builtin(name),
        (None, ScalarKind::Enum(i)) => {
            let e = &ctx.model.catalog.enums[*i];
            SqlType::Named {
                schema: e.schema.clone(),
                name: e.name.clone(),
            }
        }
        (None, _) => SqlType::Builtin("text"),
    }
}

impl Ctx<'_> {
    /// A column as GraphQL sees it (see [`column_value`]).
    pub(crate) fn column_value(&self, table: TableId, alias: &str, column: usize) -> Expr {
        column_value(
            self.model.backend,
            &self.model.table(table).columns[column],
            alias,
        )
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

    /// `FROM table AS alias` with a fresh alias.
    pub(crate) fn table_from(&mut self, table: TableId) -> (From, String) {
        let alias = self.alias("_t");
        let t = self.model.table(table);
        (
            From::Table {
                schema: self.schema_of(t),
                name: t.name.clone(),
                alias: alias.clone(),
            },
            alias,
        )
    }

    /// A boolean expression over `alias` (a row of `table`).
    pub(crate) fn filter(&mut self, table: TableId, alias: &str, exp: &BoolExp) -> Expr {
        match exp {
            BoolExp::And(items) => {
                Expr::And(items.iter().map(|e| self.filter(table, alias, e)).collect())
            }
            BoolExp::Or(items) => {
                Expr::Or(items.iter().map(|e| self.filter(table, alias, e)).collect())
            }
            BoolExp::Not(inner) => Expr::Not(Box::new(self.filter(table, alias, inner))),
            BoolExp::Compare { column, op, value } => {
                self.compare(table, alias, *column, *op, value)
            }
            BoolExp::Exists(rel, inner) => {
                // Rows the role cannot read must not satisfy its filters either.
                let target = self.model.relationships[*rel].target;
                let (from, child, join) = self.related(*rel, alias);
                let cond = self.filter(target, &child, inner);
                Expr::Exists(Box::new(Select {
                    from: Some(from),
                    filter: Some(Expr::And(vec![join, cond])),
                    ..Select::default()
                }))
            }
        }
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
        let subject = Box::new(self.column_value(table, alias, column));
        let ty = sql_type(self, &col.scalar);
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
        match op {
            CompareOp::Eq => binop(BinOp::Eq),
            CompareOp::Neq => binop(BinOp::Neq),
            CompareOp::Gt => binop(BinOp::Gt),
            CompareOp::Gte => binop(BinOp::Gte),
            CompareOp::Lt => binop(BinOp::Lt),
            CompareOp::Lte => binop(BinOp::Lte),
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
        }
    }
}
