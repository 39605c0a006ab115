//! jsonb tests and paths: PostgreSQL's operators, SQLite's registered functions of
//! the same meaning (the executor registers `grafton_jsonb_*` on every connection)
//! and its `->` operator.

use super::{Dialect, Renderer};
use crate::ast::{Expr, JsonOp, JsonStep, Param, ParamValue, SqlType};

impl Renderer {
    pub(super) fn json_test(&mut self, expr: &Expr, op: JsonOp, operand: &Param) {
        match self.dialect {
            Dialect::Postgres => {
                self.push("(");
                self.expr(expr);
                self.push(match op {
                    JsonOp::Contains => " @> ",
                    JsonOp::ContainedIn => " <@ ",
                    JsonOp::HasKey => " ? ",
                    JsonOp::HasKeysAny => " ?| ",
                    JsonOp::HasKeysAll => " ?& ",
                });
                self.param(operand);
                self.push(")");
            }
            Dialect::Sqlite => {
                let (function, swapped) = match op {
                    JsonOp::Contains => ("grafton_jsonb_contains", false),
                    JsonOp::ContainedIn => ("grafton_jsonb_contains", true),
                    JsonOp::HasKey => ("grafton_jsonb_has_key", false),
                    JsonOp::HasKeysAny => ("grafton_jsonb_has_keys_any", false),
                    JsonOp::HasKeysAll => ("grafton_jsonb_has_keys_all", false),
                };
                self.push(function);
                self.push("(");
                if swapped {
                    self.param(operand);
                    self.push(", ");
                    self.expr(expr);
                } else {
                    self.expr(expr);
                    self.push(", ");
                    self.param(operand);
                }
                self.push(")");
            }
        }
    }
}

impl Renderer {
    pub(super) fn json_at(&mut self, expr: &Expr, path: &[JsonStep]) {
        self.push("(");
        self.expr(expr);
        self.push(match self.dialect {
            Dialect::Postgres => " #> ",
            Dialect::Sqlite => " -> ",
        });
        let path = self.json_path(path);
        self.param(&path);
        self.push(")");
    }

    /// A JSON path as the dialect's operator takes it: a text array for
    /// PostgreSQL's `#>`, a JSON path (`$."a"[0]`, `[#-1]` from the end) for
    /// SQLite's `->`.
    fn json_path(&self, path: &[JsonStep]) -> Param {
        let literal = |value: serde_json::Value, list: bool| Param {
            value: ParamValue::Literal(value),
            ty: SqlType::Builtin("text"),
            list,
        };
        match self.dialect {
            Dialect::Postgres => literal(
                serde_json::Value::Array(
                    path.iter()
                        .map(|s| match s {
                            JsonStep::Key(k) => serde_json::Value::String(k.clone()),
                            JsonStep::Index(i) => serde_json::Value::String(i.to_string()),
                        })
                        .collect(),
                ),
                true,
            ),
            Dialect::Sqlite => {
                let mut text = String::from("$");
                for s in path {
                    match s {
                        JsonStep::Key(k) => {
                            text.push_str(".\"");
                            text.push_str(&k.replace('"', "\\\""));
                            text.push('"');
                        }
                        JsonStep::Index(i) if *i < 0 => text.push_str(&format!("[#{i}]")),
                        JsonStep::Index(i) => text.push_str(&format!("[{i}]")),
                    }
                }
                literal(serde_json::Value::String(text), false)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ast::*;
    use crate::render::{render, Dialect};

    fn test(op: JsonOp, list: bool) -> Select {
        Select {
            filter: Some(Expr::JsonTest {
                expr: Box::new(Expr::column("t", "doc")),
                op,
                operand: Param {
                    value: ParamValue::Literal(serde_json::json!(["a"])),
                    ty: SqlType::Builtin(if list { "text" } else { "jsonb" }),
                    list,
                },
            }),
            ..Select::default()
        }
    }

    #[test]
    fn operators_per_dialect() {
        let pg = render(&test(JsonOp::HasKeysAll, true), Dialect::Postgres);
        assert!(
            pg.sql.contains(r#"("t"."doc" ?& $1::"text"[])"#),
            "{}",
            pg.sql
        );
        let pg = render(&test(JsonOp::ContainedIn, false), Dialect::Postgres);
        assert!(
            pg.sql.contains(r#"("t"."doc" <@ $1::"jsonb")"#),
            "{}",
            pg.sql
        );
        let lite = render(&test(JsonOp::ContainedIn, false), Dialect::Sqlite);
        assert!(
            lite.sql
                .contains(r#"grafton_jsonb_contains(+?1, "t"."doc")"#),
            "{}",
            lite.sql
        );
    }
}
