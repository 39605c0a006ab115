//! JSON objects (chunked under each dialect's argument cap), JSON values and
//! aggregates.

use super::*;

impl Renderer {
    pub(super) fn json_object(&mut self, pairs: &[(String, Expr)]) {
        match self.dialect {
            Dialect::Postgres => self.pg_json_object(pairs),
            Dialect::Sqlite => self.sqlite_json_object(pairs),
        }
    }

    pub(super) fn pairs(&mut self, pairs: &[(String, Expr)]) {
        self.comma_list(pairs, |r, (k, v)| {
            r.string(k);
            r.push(", ");
            r.expr(v);
        });
    }

    /// Wider objects than one call allows are built per chunk and joined as text:
    /// `{a…}` `{b…}` → `{a…, b…}`, keeping key order and evaluating each value once.
    pub(super) fn pg_json_object(&mut self, pairs: &[(String, Expr)]) {
        self.padded = true;
        if pairs.len() <= PG_MAX_PAIRS {
            self.push("json_build_object(");
            self.pairs(pairs);
            self.push(")");
            return;
        }
        let chunks: Vec<&[(String, Expr)]> = pairs.chunks(PG_MAX_PAIRS).collect();
        let last = chunks.len() - 1;
        self.push("(");
        for (i, chunk) in chunks.iter().enumerate() {
            if i > 0 {
                self.push(" || ', ' || ");
            }
            // Drop the closing brace of all but the last chunk, the opening of all but the first.
            let (open, close) = match (i == 0, i == last) {
                (true, _) => ("left(", "::text, -1)"),
                (false, true) => ("right(", "::text, -1)"),
                (false, false) => ("substr(left(", "::text, -1), 2)"),
            };
            self.push(open);
            self.push("json_build_object(");
            self.pairs(chunk);
            self.push(")");
            self.push(close);
        }
        self.push(")::json");
    }

    /// SQLite caps arguments per call; further keys are appended with `json_insert`,
    /// which adds them at the end, in order.
    pub(super) fn sqlite_json_object(&mut self, pairs: &[(String, Expr)]) {
        let chunks: Vec<&[(String, Expr)]> = if pairs.is_empty() {
            vec![pairs]
        } else {
            pairs.chunks(SQLITE_MAX_PAIRS).collect()
        };
        for _ in 1..chunks.len() {
            self.push("json_insert(");
        }
        self.push("json_object(");
        self.pairs(chunks[0]);
        self.push(")");
        for chunk in &chunks[1..] {
            for (k, v) in chunk.iter() {
                self.push(", ");
                // Keys are GraphQL names, but escape as a JSON path key regardless.
                self.string(&format!("$.\"{}\"", k.replace('"', "\\\"")));
                self.push(", ");
                self.expr(v);
            }
            self.push(")");
        }
    }

    pub(super) fn json_array(&mut self, items: &[Expr]) {
        self.padded |= self.dialect == Dialect::Postgres;
        self.push(match self.dialect {
            Dialect::Postgres => "json_build_array(",
            Dialect::Sqlite => "json_array(",
        });
        self.comma_list(items, |r, e| r.expr(e));
        self.push(")");
    }

    /// PostgreSQL's `encode` breaks lines every 76 characters: they are dropped
    /// (Hasura's cursors and ids have none). SQLite's is the executor's function.
    pub(super) fn base64(&mut self, json: &Expr) {
        match self.dialect {
            Dialect::Postgres => {
                // The JSON becomes a string: its padding is not the answer's.
                let padded = self.padded;
                self.push("replace(encode(convert_to(");
                // The JSON's text, written as `json_build_…(…)::text` writes it:
                // concatenated, a third cheaper than building and printing it.
                let mut text = JsonText::default();
                match text.add(json) {
                    true => text.render(self),
                    false => {
                        self.push("(");
                        self.expr(json);
                        self.push(")::text");
                    }
                }
                self.push(", 'UTF8'), 'base64'), E'\\n', '')");
                self.padded = padded;
            }
            Dialect::Sqlite => {
                self.push("grafton_base64(");
                self.expr(json);
                self.push(")");
            }
        }
    }

    pub(super) fn first_by(&mut self, expr: &Expr, order_by: &[OrderItem]) {
        let open = match self.dialect {
            Dialect::Postgres => "(array_agg(",
            Dialect::Sqlite => "(json_group_array(",
        };
        self.push(open);
        self.expr(expr);
        if !order_by.is_empty() {
            self.push(" ORDER BY ");
            self.order_items(order_by);
        }
        self.push(match self.dialect {
            Dialect::Postgres => "))[1]",
            Dialect::Sqlite => ") ->> '$[0]')",
        });
    }

    pub(super) fn json_value(&mut self, inner: &Expr, kind: JsonKind) {
        match (self.dialect, kind) {
            // json as stored, jsonb as PostgreSQL prints it (`{"a": 1}`).
            (Dialect::Postgres, JsonKind::Json) => {
                self.padded = true;
                self.expr(inner);
            }
            (Dialect::Postgres, _) | (Dialect::Sqlite, JsonKind::Plain) => self.expr(inner),
            (Dialect::Sqlite, JsonKind::Boolean) => {
                self.push("CASE WHEN ");
                self.expr(inner);
                self.push(" IS NULL THEN NULL WHEN ");
                self.expr(inner);
                self.push(" THEN json('true') ELSE json('false') END");
            }
            (Dialect::Sqlite, JsonKind::Float) => {
                // Integral floats print as `2`, as Postgres prints float8; the
                // executor registers this function on every connection.
                self.push("grafton_float(");
                self.expr(inner);
                self.push(")");
            }
            (Dialect::Sqlite, JsonKind::Json) => {
                self.push("json(");
                self.expr(inner);
                self.push(")");
            }
        }
    }

    pub(super) fn count(&mut self, columns: &[Expr], distinct: bool) {
        match columns {
            [] => self.push("count(*)"),
            [one] => {
                self.push(if distinct {
                    "count(DISTINCT "
                } else {
                    "count("
                });
                self.expr(one);
                self.push(")");
            }
            many => {
                if distinct {
                    self.push(match self.dialect {
                        Dialect::Postgres => "count(DISTINCT ROW(",
                        Dialect::Sqlite => "count(DISTINCT json_array(",
                    });
                    self.comma_list(many, |r, e| r.expr(e));
                    self.push("))");
                } else {
                    self.push("count(*)");
                }
                self.push(" FILTER (WHERE ");
                for (i, c) in many.iter().enumerate() {
                    if i > 0 {
                        self.push(" AND ");
                    }
                    self.expr(c);
                    self.push(" IS NOT NULL");
                }
                self.push(")");
            }
        }
    }

    pub(super) fn agg(&mut self, func: AggFunc, inner: &Expr) {
        let name = match (self.dialect, func) {
            (_, AggFunc::Sum) => "sum",
            (_, AggFunc::Min) => "min",
            (_, AggFunc::Max) => "max",
            (_, AggFunc::Avg) => "avg",
            (Dialect::Postgres, AggFunc::Stddev) => "stddev",
            (Dialect::Postgres, AggFunc::StddevPop) => "stddev_pop",
            (Dialect::Postgres, AggFunc::StddevSamp) => "stddev_samp",
            (Dialect::Postgres, AggFunc::VarPop) => "var_pop",
            (Dialect::Postgres, AggFunc::VarSamp) => "var_samp",
            (Dialect::Postgres, AggFunc::Variance) => "variance",
            (Dialect::Postgres, AggFunc::BoolAnd) => "bool_and",
            (Dialect::Postgres, AggFunc::BoolOr) => "bool_or",
            // SQLite's booleans are 0 and 1: all true is a minimum of 1.
            (Dialect::Sqlite, AggFunc::BoolAnd) => "min",
            (Dialect::Sqlite, AggFunc::BoolOr) => "max",
            // SQLite has none of these built in; the executor registers them.
            (Dialect::Sqlite, AggFunc::Stddev | AggFunc::StddevSamp) => "grafton_stddev_samp",
            (Dialect::Sqlite, AggFunc::StddevPop) => "grafton_stddev_pop",
            (Dialect::Sqlite, AggFunc::VarPop) => "grafton_var_pop",
            (Dialect::Sqlite, AggFunc::VarSamp | AggFunc::Variance) => "grafton_var_samp",
        };
        self.push(name);
        self.push("(");
        self.expr(inner);
        self.push(")");
        if self.dialect == Dialect::Postgres && func.is_statistical() {
            // numeric results would print as 2.5000000000000000; GraphQL says Float.
            self.push("::float8");
        }
    }
}

/// A JSON object or array of values, as PostgreSQL's `json_build_object` and
/// `json_build_array` print it (`{"k" : v, …}`, `[v, …]`): constant text where
/// the engine wrote the value, `to_json(v)::text` (`null` for NULL) elsewhere.
#[derive(Default)]
struct JsonText<'e> {
    parts: Vec<TextPart<'e>>,
}

enum TextPart<'e> {
    Constant(String),
    Value(&'e Expr),
}

impl<'e> JsonText<'e> {
    fn constant(&mut self, s: &str) {
        match self.parts.last_mut() {
            Some(TextPart::Constant(c)) => c.push_str(s),
            _ => self.parts.push(TextPart::Constant(s.to_owned())),
        }
    }

    /// Adds `e`'s text; false where it is not a JSON object, array or value
    /// this can print.
    fn add(&mut self, e: &'e Expr) -> bool {
        match e {
            Expr::JsonObject(pairs) => {
                self.constant("{");
                for (i, (k, v)) in pairs.iter().enumerate() {
                    let sep = if i == 0 { "" } else { ", " };
                    self.constant(&format!("{sep}{} : ", serde_json::Value::from(k.as_str())));
                    if !self.add(v) {
                        return false;
                    }
                }
                self.constant("}");
            }
            Expr::JsonArray(items) => {
                self.constant("[");
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        self.constant(", ");
                    }
                    if !self.add(v) {
                        return false;
                    }
                }
                self.constant("]");
            }
            Expr::Int(i) => self.constant(&i.to_string()),
            Expr::Str(s) => self.constant(&serde_json::Value::from(s.as_str()).to_string()),
            Expr::Column { .. } | Expr::Subquery(_) | Expr::Func { .. } | Expr::Cast(..) => {
                self.parts.push(TextPart::Value(e))
            }
            _ => return false,
        }
        true
    }

    fn render(&self, r: &mut Renderer) {
        for (i, part) in self.parts.iter().enumerate() {
            if i > 0 {
                r.push(" || ");
            }
            match part {
                TextPart::Constant(c) => r.string(c),
                TextPart::Value(e) => {
                    r.push("coalesce(to_json(");
                    r.expr(e);
                    r.push(")::text, 'null')");
                }
            }
        }
    }
}
