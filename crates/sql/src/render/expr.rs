//! Expressions: operators, functions, `AND`/`OR` lists in bounded groups, and
//! `LIKE`/regex patterns per dialect.

use super::*;

impl Renderer {
    // Each arm with locals of its own calls a function: `expr` recurses as deep as
    // the query nests, so its stack frame stays small.
    pub(super) fn expr(&mut self, e: &Expr) {
        match e {
            Expr::Column { table, column } => self.column(table, column),
            Expr::Param(p) => self.param(p),
            Expr::ReadText(inner) => self.read_text(inner),
            Expr::Written { column, value, ty } => self.written(column, value, ty),
            Expr::ColumnUpdate {
                column,
                op,
                operand,
            } => self.column_update(column, *op, operand),
            Expr::RowIdOrder(alias) => {
                self.ident(&format!("{alias}_k"));
                self.push(match self.dialect {
                    Dialect::Postgres => ".\"n\"",
                    Dialect::Sqlite => ".\"key\"",
                });
            }
            Expr::RowJson(alias) => {
                self.push("to_json(");
                self.ident(alias);
                self.push(")");
            }
            Expr::RowIdIn { alias, ids } => self.identity_in(alias, ids),
            Expr::Least(value, cap) => match self.dialect {
                // LEAST skips NULLs; SQLite's min() would return NULL.
                Dialect::Postgres => {
                    self.push("LEAST(");
                    self.expr(value);
                    let _ = write!(self.sql, ", {cap})");
                }
                Dialect::Sqlite => {
                    self.push("min(coalesce(");
                    self.expr(value);
                    let _ = write!(self.sql, ", {cap}), {cap})");
                }
            },
            Expr::Str(s) => self.string(s),
            Expr::Int(i) => {
                let _ = write!(self.sql, "{i}");
            }
            Expr::Bool(true) => self.push("TRUE"),
            Expr::Bool(false) => self.push("FALSE"),
            Expr::Null => self.push("NULL"),
            Expr::Compare { left, op, right } => {
                self.push("(");
                self.expr(left);
                self.push(match op {
                    BinOp::Eq => " = ",
                    BinOp::Neq => " <> ",
                    BinOp::Gt => " > ",
                    BinOp::Gte => " >= ",
                    BinOp::Lt => " < ",
                    BinOp::Lte => " <= ",
                    BinOp::Contains => " @> ",
                    BinOp::ContainedIn => " <@ ",
                    BinOp::Matches => " ~ ",
                    BinOp::MatchesAny => " ? ",
                    BinOp::MatchesText => " @ ",
                });
                self.expr(right);
                self.push(")");
            }
            Expr::Pattern {
                expr,
                op,
                negated,
                pattern,
            } => self.pattern(expr, *op, *negated, pattern),
            Expr::InList {
                expr,
                list,
                negated,
            } => {
                self.push("(");
                self.expr(expr);
                match self.dialect {
                    Dialect::Postgres => {
                        self.push(if *negated { " <> ALL(" } else { " = ANY(" });
                        self.param(list);
                        self.push(")");
                    }
                    Dialect::Sqlite => {
                        self.push(if *negated { " NOT IN" } else { " IN" });
                        self.push(" (SELECT value FROM json_each(");
                        self.param(list);
                        self.push("))");
                    }
                }
                self.push(")");
            }
            Expr::JsonTest { expr, op, operand } => self.json_test(expr, *op, operand),
            Expr::JsonAt { expr, path } => self.json_at(expr, path),
            Expr::IsNull { expr, negated } => {
                self.push("(");
                self.expr(expr);
                self.push(if *negated {
                    " IS NOT NULL)"
                } else {
                    " IS NULL)"
                });
            }
            Expr::IsNullParam { expr, param } => {
                self.push("((");
                self.expr(expr);
                self.push(" IS NULL) = ");
                self.param(param);
                self.push(")");
            }
            Expr::And(items) => self.junction(items, " AND ", "TRUE"),
            Expr::Or(items) => self.junction(items, " OR ", "FALSE"),
            Expr::Not(inner) => {
                self.push("(NOT ");
                self.expr(inner);
                self.push(")");
            }
            Expr::Func { schema, name, args } => self.func(schema, name, args),
            Expr::RowRef(alias) => self.ident(alias),
            Expr::CaseWhen { when, then } => {
                self.push("CASE WHEN ");
                self.expr(when);
                self.push(" THEN ");
                self.expr(then);
                self.push(" END");
            }
            Expr::NotTrue(inner) => {
                self.push("(");
                self.expr(inner);
                self.push(" IS NOT TRUE)");
            }
            Expr::Exists(s) => {
                self.push("EXISTS (");
                self.select(s);
                self.push(")");
            }
            Expr::Subquery(s) => {
                self.push("(");
                self.select(s);
                self.push(")");
            }
            Expr::JsonSubquery(s) => match self.dialect {
                Dialect::Postgres => match ordered_list(s) {
                    // A list: `ARRAY(SELECT … ORDER BY …)` keeps its rows' order with no
                    // sort of its own, since the planner sees them arrive sorted from the
                    // subquery; `json_agg(… ORDER BY …)` sorts them again inside the
                    // aggregate (PostgreSQL 15: 15% of a `venues` page, docs/performance.md).
                    Some((element, order_by, from)) => {
                        self.push("array_to_json(ARRAY(SELECT ");
                        match element {
                            Expr::RowObject { alias, .. } => self.ident(alias),
                            other => self.json_element(other),
                        }
                        self.push(" FROM ");
                        self.from(from);
                        if let Expr::RowObject { alias, pairs } = element {
                            self.push(", LATERAL ");
                            self.record(alias, pairs);
                        }
                        if !order_by.is_empty() {
                            self.push(" ORDER BY ");
                            self.order_items(order_by);
                        }
                        self.push("))");
                    }
                    None => {
                        self.push("(");
                        self.select(s);
                        self.push(")");
                    }
                },
                Dialect::Sqlite => {
                    // Subquery results lose SQLite's JSON subtype; json() restores it.
                    self.push("json((");
                    self.select(s);
                    self.push("))");
                }
            },
            Expr::JsonObject(pairs) | Expr::RowObject { pairs, .. } => self.json_object(pairs),
            Expr::JsonArray(items) => self.json_array(items),
            Expr::Base64(inner) => self.base64(inner),
            Expr::FirstBy { expr, order_by } => self.first_by(expr, order_by),
            Expr::ToJson(inner, kind) => self.json_value(inner, *kind),
            Expr::JsonAgg { expr, order_by } => {
                match self.dialect {
                    Dialect::Postgres => {
                        self.padded = true;
                        self.push("coalesce(json_agg(")
                    }
                    Dialect::Sqlite => self.push("json_group_array(json("),
                }
                self.json_element(expr);
                if self.dialect == Dialect::Sqlite {
                    self.push(")");
                }
                if !order_by.is_empty() {
                    self.push(" ORDER BY ");
                    self.order_items(order_by);
                }
                match self.dialect {
                    Dialect::Postgres => self.push("), '[]')"),
                    // json_group_array already yields [] for no rows.
                    Dialect::Sqlite => self.push(")"),
                }
            }
            Expr::Cast(inner, ty) => match self.dialect {
                Dialect::Postgres => {
                    self.push("(");
                    self.expr(inner);
                    self.push(")::");
                    self.sql_type(ty);
                }
                Dialect::Sqlite => {
                    self.push("CAST(");
                    self.expr(inner);
                    self.push(" AS TEXT)");
                }
            },
            Expr::CountStar => self.push("count(*)"),
            Expr::Count { columns, distinct } => self.count(columns, *distinct),
            Expr::Agg(func, inner) => self.agg(*func, inner),
        }
    }

    pub(super) fn junction(&mut self, items: &[Expr], sep: &str, empty: &str) {
        match items {
            [] => self.push(empty),
            [one] => self.expr(one),
            _ if items.len() > JUNCTION_FANOUT => {
                // `a OR b OR c …` parses as a left-deep tree, and SQLite refuses trees
                // deeper than 1000; nesting groups keeps the depth logarithmic.
                self.push("(");
                for (i, group) in items
                    .chunks(items.len().div_ceil(JUNCTION_FANOUT))
                    .enumerate()
                {
                    if i > 0 {
                        self.push(sep);
                    }
                    self.junction(group, sep, empty);
                }
                self.push(")");
            }
            _ => {
                self.push("(");
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.push(sep);
                    }
                    self.expr(item);
                }
                self.push(")");
            }
        }
    }

    pub(super) fn pattern(&mut self, expr: &Expr, op: PatternOp, negated: bool, pattern: &Expr) {
        self.push("(");
        let sqlite = self.dialect == Dialect::Sqlite;
        if sqlite && op == PatternOp::ILike {
            self.push("lower(");
            self.expr(expr);
            self.push(")");
        } else {
            self.expr(expr);
        }
        let not = if negated { " NOT" } else { "" };
        match (op, self.dialect) {
            (PatternOp::Like, _) | (PatternOp::ILike, Dialect::Sqlite) => {
                let _ = write!(self.sql, "{not} LIKE ");
            }
            (PatternOp::ILike, Dialect::Postgres) => {
                let _ = write!(self.sql, "{not} ILIKE ");
            }
            (PatternOp::Similar, _) => {
                let _ = write!(self.sql, "{not} SIMILAR TO ");
            }
            (PatternOp::Regex | PatternOp::IRegex, Dialect::Sqlite) => {
                let _ = write!(self.sql, "{not} REGEXP ");
            }
            (PatternOp::Regex, Dialect::Postgres) => {
                self.push(if negated { " !~ " } else { " ~ " });
            }
            (PatternOp::IRegex, Dialect::Postgres) => {
                self.push(if negated { " !~* " } else { " ~* " });
            }
        }
        self.bare_params = sqlite && matches!(op, PatternOp::Like);
        if sqlite && op == PatternOp::ILike {
            self.push("lower(");
            self.expr(pattern);
            self.push(")");
        } else {
            self.expr(pattern);
        }
        self.bare_params = false;
        if sqlite && matches!(op, PatternOp::Like | PatternOp::ILike) {
            // Postgres escapes LIKE patterns with backslash by default; SQLite needs it said.
            self.push(" ESCAPE '\\'");
        }
        self.push(")");
    }
}

impl Renderer {
    /// An element of a JSON array: a [`Expr::RowJson`] row as itself, since the
    /// aggregate or `array_to_json` around it makes the JSON object (cheaper than
    /// building one per row), anything else as an expression.
    fn json_element(&mut self, e: &Expr) {
        match e {
            Expr::RowJson(alias) => self.ident(alias),
            other => self.expr(other),
        }
    }

    /// `"alias"."column"`, or as [`Renderer::renamed`] says.
    fn column(&mut self, table: &str, column: &str) {
        match &self.renamed {
            Some((alias, None)) if alias == table => {}
            Some((alias, Some(name))) if alias == table => {
                let name = name.clone();
                self.ident(&name);
                self.push(".");
            }
            _ => {
                self.ident(table);
                self.push(".");
            }
        }
        self.ident(column);
    }

    fn read_text(&mut self, inner: &Expr) {
        match self.dialect {
            Dialect::Postgres => {
                self.push("(");
                self.expr(inner);
                self.push(")::");
                self.sql_type(&SqlType::Builtin("text"));
            }
            Dialect::Sqlite => self.expr(inner),
        }
    }

    fn written(&mut self, column: &str, value: &serde_json::Value, ty: &SqlType) {
        match self.dialect {
            // GeoJSON is not what json_populate_record can read into a PostGIS
            // column: the value is its own parameter (see `write::written`).
            Dialect::Postgres if matches!(ty, SqlType::Spatial { .. }) => self.param(&Param {
                value: ParamValue::Literal(value.clone()),
                ty: ty.clone(),
                list: false,
            }),
            Dialect::Postgres => {
                self.push("\"_r\".");
                self.ident(column);
            }
            Dialect::Sqlite => self.param(&Param {
                value: ParamValue::Literal(value.clone()),
                ty: SqlType::Stored(Box::new(ty.clone())),
                list: false,
            }),
        }
    }
}

/// A list's shape, `SELECT json_agg(element ORDER BY …) FROM (subquery)` and nothing
/// else: its element, order and source.
fn ordered_list(s: &Select) -> Option<(&Expr, &[OrderItem], &From)> {
    match (s.items.as_slice(), &s.from) {
        (
            [SelectItem::Expr(Expr::JsonAgg { expr, order_by }, _)],
            Some(from @ From::Subquery { .. }),
        ) if s.filter.is_none()
            && s.order_by.is_empty()
            && s.limit.is_none()
            && s.offset.is_none()
            && s.distinct_on.is_empty()
            && !s.lock =>
        {
            Some((expr, order_by, from))
        }
        _ => None,
    }
}
